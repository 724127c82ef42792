#!/bin/sh
# Entrypoint of the benchfleet image: an app of the workspace (`scheduler …`, `worker-webshop …`,
# `worker-osworld …`, any `worker-<benchmark> …`: the list is workspace-apps.mjs's) or another
# workspace bin (`dashboard …`) runs as PID 1, so it receives SIGTERM itself and shuts down
# gracefully; anything else is run as a command.
set -eu

# Secrets mounted as files (compose secrets, Kubernetes secret volumes): NAME_FILE=/path sets NAME.
for name in DATABASE_URL REDIS_URL LLM_API_KEY DASHBOARD_TOKEN; do
  eval "file=\${${name}_FILE:-}"
  if [ -n "$file" ]; then
    value=$(cat "$file")
    export "$name=$value"
    unset "${name}_FILE"
  fi
done

home=${BENCHFLEET_HOME:-/app}
if [ -z "${1:-}" ]; then
  apps=$(node "$home/workspace-apps.mjs" | paste -sd '|' -)
  echo "usage: IMAGE $apps [arguments]" >&2
  exit 2
fi
if bin=$(node "$home/workspace-apps.mjs" --bin "$1"); then
  shift
  exec node "$bin" "$@"
fi
exec "$@"
