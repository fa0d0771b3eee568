#!/usr/bin/env bash
# Installs and starts what RUNTIME=compose needs where it is missing: a Docker
# engine (Debian's docker.io), Compose v1 (Debian's docker-compose), debootstrap
# for the local base image, and Compose v2 built from the Go module proxy as a
# Docker CLI plugin (no registry or GitHub download is needed). Idempotent;
# needs root and apt. Used by .ci/run; docs/runtimes.md says when to run it yourself.
set -Eeuo pipefail
COMPOSE_V2_VERSION=${COMPOSE_V2_VERSION:-2.29.7}
PLUGIN_DIR=/usr/local/lib/docker/cli-plugins
say() { echo "install-docker: $*" >&2; }

missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v docker-compose >/dev/null || missing+=(docker-compose)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if ((${#missing[@]})); then
  say "apt-get install ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null \
    || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null; }
fi

if ! docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
  say "starting dockerd (log: /var/log/chainperf-dockerd.log)"
  nohup dockerd >/var/log/chainperf-dockerd.log 2>&1 &
  for _ in $(seq 1 60); do
    docker version --format '{{.Server.Version}}' >/dev/null 2>&1 && break
    sleep 1
  done
  docker version --format '{{.Server.Version}}' >/dev/null 2>&1 || { say "dockerd did not start; see /var/log/chainperf-dockerd.log"; exit 1; }
fi
say "Docker engine $(docker version --format '{{.Server.Version}}')"

if [[ ! -x $PLUGIN_DIR/docker-compose ]] && command -v go >/dev/null; then
  say "building Compose v2 ${COMPOSE_V2_VERSION} from the Go module proxy (about 3 minutes, once)"
  tmp=$(mktemp -d)
  if GOBIN=$tmp GOFLAGS=-trimpath go install \
      -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=v${COMPOSE_V2_VERSION}" \
      "github.com/docker/compose/v2/cmd@v${COMPOSE_V2_VERSION}" >&2; then
    mkdir -p "$PLUGIN_DIR"
    install -m 0755 "$tmp/cmd" "$PLUGIN_DIR/docker-compose"
  else
    say "Compose v2 did not build; Compose v1 (docker-compose) will be used"
  fi
  rm -rf "$tmp"
fi
docker compose version 2>/dev/null | sed 's/^/install-docker: /' >&2 || true
docker-compose version --short 2>/dev/null | sed 's/^/install-docker: Compose v1 /' >&2 || true
