#!/usr/bin/env bash
# Makes sure a Docker engine answers, for the tests, the benches and CI: an engine that answers is
# used as it is (DOCKER_HOST or the default socket); otherwise, as root, Debian's docker.io is
# installed when dockerd is missing and dockerd is started in the background (it keeps running after
# this script, like the machine's Postgres and Redis; its log is /var/log/benchfleet-dockerd.log).
#
#   deploy/base-images/ensure-docker-engine.sh        exit 0: an engine answers
#                                                     exit 3: none can be had here (one line why)
#                                                     exit 1: installing or starting it failed
#
# Docker Compose: Debian's docker-compose (1.29) is installed beside it when no `docker compose`
# plugin answers. No image registry is needed for any of this.
set -euo pipefail

START_TIMEOUT_S="${BENCHFLEET_DOCKERD_START_TIMEOUT_S:-90}"

say() { printf '[docker-engine] %s\n' "$*" >&2; }
cannot() { printf 'ensure-docker-engine: %s\n' "$*" >&2; exit 3; }
fail() { printf 'ensure-docker-engine: %s\n' "$*" >&2; exit 1; }

answers() { command -v docker >/dev/null && timeout 20 docker info >/dev/null 2>&1; }
has_compose() { timeout 20 docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null; }

apt_install() {
  say "installing Debian's $* (apt-get; a minute or two)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1 \
    || { DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null; } \
    || fail "apt-get install $* failed: run it yourself, then again"
}

ensure_compose() {
  has_compose && return 0
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && apt_install docker-compose
  return 0
}

if answers; then
  ensure_compose
  exit 0
fi
[ -z "${DOCKER_HOST:-}" ] || cannot "DOCKER_HOST=$DOCKER_HOST does not answer: start that engine or unset DOCKER_HOST"
[ "$(id -u)" = 0 ] || cannot "no Docker engine answers and only root may start one here: start dockerd (or set DOCKER_HOST)"

# One starter at a time: parallel test files may all ask at once.
lock_dir=/var/lock
[ -w "$lock_dir" ] || lock_dir="${TMPDIR:-/tmp}"
exec 9>"$lock_dir/benchfleet-docker-engine.lock"
flock 9
if answers; then
  ensure_compose
  exit 0
fi

if ! command -v dockerd >/dev/null; then
  command -v apt-get >/dev/null || cannot "no dockerd and no apt-get to install Debian's docker.io"
  apt_install docker.io
fi
command -v docker >/dev/null || fail "docker.io installed no docker command"
ensure_compose

if ! pgrep -x dockerd >/dev/null; then
  say "starting dockerd (log: /var/log/benchfleet-dockerd.log)"
  mkdir -p /var/log
  setsid nohup dockerd >>/var/log/benchfleet-dockerd.log 2>&1 </dev/null &
fi
for _ in $(seq 1 "$START_TIMEOUT_S"); do
  answers && exit 0
  sleep 1
done
fail "dockerd did not answer within ${START_TIMEOUT_S} s; the last lines of /var/log/benchfleet-dockerd.log: $(tail -n 3 /var/log/benchfleet-dockerd.log 2>/dev/null | tr '\n' ' ')"
