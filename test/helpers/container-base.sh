#!/usr/bin/env bash
# Makes a local stand-in for the Dockerfile's Node.js base image without Docker Hub:
# a minimal Debian bookworm rootfs (debootstrap) with git, openssh-client, tini and CA
# certificates, plus this machine's Node.js (node + npm) and docker CLI + buildx plugin.
#
#   test/helpers/container-base.sh OUT.tar
#
# The debootstrap rootfs is cached under $IBS_BASE_CACHE (default /var/cache/ibs-container-base),
# so CI pays for it once (a few minutes). OUT.tar is a plain rootfs tarball for `docker import`.
set -euo pipefail

OUT=${1:?usage: container-base.sh OUT.tar}
CACHE=${IBS_BASE_CACHE:-/var/cache/ibs-container-base}
MIRROR=${IBS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
ROOTFS_TAR=$CACHE/bookworm-minbase.tar
PACKAGES=git,openssh-client,tini,ca-certificates

log() { printf '[container-base] %s\n' "$*" >&2; }

mkdir -p "$CACHE"
if [ ! -s "$ROOTFS_TAR" ]; then
  log "debootstrap bookworm ($PACKAGES) into the cache"
  work=$(mktemp -d "$CACHE/rootfs.XXXXXX")
  debootstrap --variant=minbase --include="$PACKAGES" bookworm "$work" "$MIRROR" >&2
  # Trim what a container never needs.
  rm -rf "$work"/var/cache/apt/archives/*.deb "$work"/var/lib/apt/lists/* "$work"/usr/share/doc/* \
    "$work"/usr/share/man/* "$work"/usr/share/locale/*
  tar -C "$work" --numeric-owner -cf "$ROOTFS_TAR.partial" .
  mv "$ROOTFS_TAR.partial" "$ROOTFS_TAR"
  rm -rf "$work"
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
tar -C "$stage" --numeric-owner -xf "$ROOTFS_TAR"

# Node.js (the machine's own binary and npm), where the official node images keep them.
node_bin=$(command -v node)
install -D -m 755 "$node_bin" "$stage/usr/local/bin/node"
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
mkdir -p "$stage/usr/local/lib/node_modules"
cp -a "$npm_dir" "$stage/usr/local/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$stage/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$stage/usr/local/bin/npx"

# This machine's CA bundle and npm settings, so `npm ci` in the Dockerfile's build stage works
# behind the same egress (proxy CAs) as the host; the official node image needs none of this.
if [ -s /etc/ssl/certs/ca-certificates.crt ]; then
  cp /etc/ssl/certs/ca-certificates.crt "$stage/etc/ssl/certs/ca-certificates.crt"
  mkdir -p "$stage/usr/local/etc"
  printf 'cafile=/etc/ssl/certs/ca-certificates.crt\naudit=false\nfund=false\nupdate-notifier=false\n' \
    >"$stage/usr/local/etc/npmrc"
fi

# docker CLI and the buildx plugin (where the official docker:cli image keeps them).
docker_bin=$(command -v docker)
buildx_bin=""
for p in /usr/local/lib/docker/cli-plugins/docker-buildx /usr/libexec/docker/cli-plugins/docker-buildx \
  /opt/ibs-docker/bin/docker-buildx; do
  if [ -x "$p" ]; then buildx_bin=$(readlink -f "$p"); break; fi
done
[ -n "$buildx_bin" ] || { log "no docker-buildx plugin found"; exit 1; }
install -D -m 755 "$(readlink -f "$docker_bin")" "$stage/usr/local/bin/docker"
install -D -m 755 "$buildx_bin" "$stage/usr/local/libexec/docker/cli-plugins/docker-buildx"

tar -C "$stage" --numeric-owner -cf "$OUT" .
log "wrote $OUT ($(du -h "$OUT" | cut -f1))"
