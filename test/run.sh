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
out=$(mktemp)
status=0
npx ava "$@" 2>&1 | tee "$out" || status=$?
# One plain closing line: "N passed, N failed".
passed=$(grep -cE '^ +✔' "$out" || true)
failed=$(grep -oE '^ +[0-9]+ tests? failed' "$out" | grep -oE '[0-9]+' | tail -1 || true)
rm -f "$out"
echo "${passed:-0} passed, ${failed:-0} failed"
exit "$status"
