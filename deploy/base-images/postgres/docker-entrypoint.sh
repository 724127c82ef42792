#!/bin/sh
# Entrypoint of the local postgres:15-bookworm (see the Dockerfile): as root it reads the password
# secret and prepares PGDATA, then runs itself again as postgres; as postgres it makes the cluster
# on first start (user, password, database, authentication) and runs the server as PID 1.
set -eu

if [ "${1:-}" != postgres ]; then exec "$@"; fi

# NAME_FILE=/path sets NAME, as the official image does for compose and Kubernetes secrets.
if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then
  POSTGRES_PASSWORD=$(cat "$POSTGRES_PASSWORD_FILE")
  export POSTGRES_PASSWORD
  unset POSTGRES_PASSWORD_FILE
fi

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 0700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

user=${POSTGRES_USER:-postgres}
database=${POSTGRES_DB:-$user}
auth=${POSTGRES_HOST_AUTH_METHOD:-}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$auth" != trust ]; then
    echo "postgres: set POSTGRES_PASSWORD (or POSTGRES_PASSWORD_FILE), or POSTGRES_HOST_AUTH_METHOD=trust" >&2
    exit 2
  fi
  pwfile=$(mktemp)
  printf '%s\n' "${POSTGRES_PASSWORD:-}" >"$pwfile"
  initdb --username="$user" --pwfile="$pwfile" --encoding=UTF8 --locale=C.UTF-8 \
    --auth-local=trust --auth-host="${auth:-scram-sha-256}" >/dev/null
  rm -f "$pwfile"
  printf 'host all all all %s\n' "${auth:-scram-sha-256}" >>"$PGDATA/pg_hba.conf"
  if [ "$database" != postgres ]; then
    # No TCP and a private socket while the database is made: neither a client nor pg_isready
    # (a health check) sees the half-made cluster.
    socket=$(mktemp -d)
    pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -c unix_socket_directories=$socket" -w start >/dev/null
    psql -v ON_ERROR_STOP=1 --host="$socket" --username="$user" --dbname=postgres -q \
      -c "CREATE DATABASE \"$database\"" >/dev/null
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    rmdir "$socket"
  fi
  echo "postgres: made the cluster in $PGDATA (user $user, database $database)"
fi
exec "$@" -c listen_addresses='*'
