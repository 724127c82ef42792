#!/bin/sh
# Entrypoint of the local redis:7-bookworm (see the Dockerfile): options alone mean redis-server;
# redis-server runs as redis, as PID 1, listening on every interface of the container.
set -eu

case "${1:-}" in -*) set -- redis-server "$@" ;; esac
if [ "${1:-}" != redis-server ]; then exec "$@"; fi

if [ "$(id -u)" = 0 ]; then
  chown -R redis:redis .
  exec setpriv --reuid=redis --regid=redis --init-groups "$0" "$@"
fi
shift
case "${1:-}" in
  *.conf) exec redis-server "$@" ;;
  # Debian's build binds to loopback only without a file; a container is reached from outside.
  *) exec redis-server --bind '* -::*' --protected-mode no "$@" ;;
esac
