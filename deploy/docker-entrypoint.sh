#!/bin/sh
# Entrypoint of the benchfleet image: `scheduler …`, `worker-webshop …` or `worker-osworld …` runs
# that app (as PID 1, so it receives SIGTERM itself and shuts down gracefully); anything else is
# run as a command.
set -eu

# Secrets mounted as files (compose secrets, Kubernetes secret volumes): NAME_FILE=/path sets NAME.
for name in DATABASE_URL REDIS_URL LLM_API_KEY; do
  eval "file=\${${name}_FILE:-}"
  if [ -n "$file" ]; then
    value=$(cat "$file")
    export "$name=$value"
    unset "${name}_FILE"
  fi
done

home=${BENCHFLEET_HOME:-/app}
case "${1:-}" in
  scheduler | worker-webshop | worker-osworld)
    app=$1
    shift
    exec node "$home/apps/$app/bin/$app.js" "$@"
    ;;
  '')
    echo 'usage: IMAGE scheduler|worker-webshop|worker-osworld [arguments]' >&2
    exit 2
    ;;
  *)
    exec "$@"
    ;;
esac
