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
# One run at a time makes the cache; what an interrupted run left half-made is removed first (no
# other run can be making it while this one holds the lock). Mounts debootstrap may have left in
# it are detached, and removal never leaves its file system.
exec 9>"$CACHE/.lock"
flock 9
remove_work() {
  local dir
  for dir in "$@"; do
    [ -e "$dir" ] || continue
    { findmnt -rn -o TARGET | grep -F "$dir/" || true; } | sort -r | while IFS= read -r mounted; do
      umount -l "$mounted" || true
    done
    rm -rf --one-file-system "$dir"
  done
}
stale=("$CACHE"/rootfs.* "$ROOTFS_TAR.partial")
if [ -e "${stale[0]}" ] || [ -e "${stale[1]}" ]; then log "removing what an interrupted run left in the cache"; fi
remove_work "${stale[@]}"
if [ ! -s "$ROOTFS_TAR" ]; then
  log "debootstrap bookworm ($PACKAGES) into the cache"
  work=$(mktemp -d "$CACHE/rootfs.XXXXXX")
  trap 'remove_work "$work" "$ROOTFS_TAR.partial"' EXIT
  debootstrap --variant=minbase --include="$PACKAGES" bookworm "$work" "$MIRROR" >&2
  # Trim what a container never needs.
  rm -rf "$work"/var/cache/apt/archives/*.deb "$work"/var/lib/apt/lists/* "$work"/usr/share/doc/* \
    "$work"/usr/share/man/* "$work"/usr/share/locale/*
  tar -C "$work" --numeric-owner -cf "$ROOTFS_TAR.partial" .
  mv "$ROOTFS_TAR.partial" "$ROOTFS_TAR"
  remove_work "$work"
  trap - EXIT
fi
flock -u 9

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
