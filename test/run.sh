#!/usr/bin/env bash
# The README's test command: starts the real local stack, runs every test (unit and real), stops the stack.
set -euo pipefail
cd "$(dirname "$0")/.."
started_here=0
if ! npm run --silent stack -- status >/dev/null 2>&1; then
  started_here=1
fi
cleanup() {
  if [ "$started_here" = 1 ] || [ "${CI:-}" = true ]; then
    npm run --silent stack -- down || true
  fi
}
trap cleanup EXIT
npm run --silent stack -- up
npx ava "$@"
