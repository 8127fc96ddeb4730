#!/usr/bin/env bash
# What the quick start and `.ci/run` put on this machine, measured now (du of each path), with the
# machine it was measured on: docs/operations.md quotes its output. Run it after `npm run stack -- up`
# for the stack dir after up, or after `bash .ci/run` for the full run. Reads only; changes nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
stack_dir=${IBS_STACK_DIR:-/tmp/ibs-stack}
npm_cache=$(npm config get cache 2>/dev/null || echo "$HOME/.npm")

paths=(
  "/var/cache/ibs-apt|trixie and i386 packages downloaded by .ci/install.sh"
  "/opt/ibs-docker|trixie's dockerd and buildx, extracted"
  "/opt/ibs-helm|Helm, extracted from its npm package"
  "/opt/ibs-node|Node.js and npm, when the machine had none new enough"
  "/var/cache/ibs-container-base|debootstrap base of the container-image test"
  "$stack_dir|the local stack (dockerd images, BuildKit cache, registries, git servers)"
  "$PWD/node_modules|npm ci"
  "$npm_cache|npm's cache"
  "$PWD/dist|npm run build"
)

# 1 MB = 10^6 bytes, as du --block-size=1MB counts them.
size_mb() { du -s --block-size=1MB "$1" 2>/dev/null | cut -f1; }

. /etc/os-release 2>/dev/null || PRETTY_NAME=unknown
echo "machine: $(nproc)-core ${PRETTY_NAME:-unknown}, $(awk '/MemTotal/ {printf "%.1f GB RAM", $2 / 1e6}' /proc/meminfo)"
echo "measured: $(date -u +%Y-%m-%dT%H:%MZ)"
total=0
for entry in "${paths[@]}"; do
  path=${entry%%|*}
  what=${entry#*|}
  if [ -e "$path" ]; then
    mb=$(size_mb "$path")
    total=$((total + mb))
    printf '%8s MB  %s  (%s)\n' "$mb" "$path" "$what"
  else
    printf '%8s     %s  (%s)\n' absent "$path" "$what"
  fi
done
printf '%8s MB  in all\n' "$total"
echo "the root filesystem holds $(df --block-size=1MB --output=used / | tail -1 | tr -d ' ') MB now (compare with a reading before the install)"
