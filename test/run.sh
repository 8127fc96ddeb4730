#!/usr/bin/env bash
# The README's test command: starts the real local stack, runs every test (unit and real), stops the
# stack if this run started it.
set -euo pipefail
cd "$(dirname "$0")/.."
# Stop at the end only a stack this run started (test/stack/session.ts): a stack that was already
# running (the quick start's, another shell's) is left as it was found, also in CI.
session=$(mktemp)
cleanup() {
  npm run --silent stack -- down --session "$session" || true
  rm -f "$session"
}
trap cleanup EXIT
npm run --silent stack -- up --session "$session"
out=$(mktemp)
status=0
# The tests' temporary files go to a directory of this run, which must be empty again at the end.
# tsx's compile cache (<tmp>/tsx-<uid>) is shared with other runs through a link: not a leftover.
tmp_root=${TMPDIR:-/tmp}
tests_tmp=$(mktemp -d "$tmp_root/ibs-tests-XXXXXX")
tsx_cache="tsx-$(id -u)"
mkdir -p "$tmp_root/$tsx_cache"
ln -s "$tmp_root/$tsx_cache" "$tests_tmp/$tsx_cache"
# AVA runs in a session of its own with its output in a file, shown as it grows: a process a test
# left behind cannot hold the run open through a pipe. Past the time limit, what is still running
# is listed and the run is stopped (so a hang ends with a clue, inside CI's budget).
limit=${IBS_TEST_TIME_LIMIT:-70m}
TMPDIR=$tests_tmp setsid npx ava "$@" >"$out" 2>&1 &
ava_pid=$!
watch=0
timeout "$limit" tail -n +1 -f --pid="$ava_pid" "$out" || watch=$?
if [ "$watch" = 124 ]; then
  echo "---- the tests ran past $limit and are stopped; what was still running: ----"
  ps -eo pid,ppid,etimes,args --forest | tail -n 80
  kill -TERM -- "-$ava_pid" 2>/dev/null || true
fi
wait "$ava_pid" || status=$?
leftovers=$(find "$tests_tmp" -mindepth 1 -maxdepth 1 ! -name "$tsx_cache" -printf '  %f\n' | sort)
rm -rf "$tests_tmp"
if [ -n "$leftovers" ]; then
  echo "---- the tests left these in their temporary directory (each test removes what it makes) ----"
  echo "$leftovers"
  status=1
fi
# What went wrong, again at the end (ava prints it where it happened, often far above the end):
# each failure, uncaught exception, unhandled rejection or timeout, up to the next passing test.
problems='^ +(✘|Uncaught exception|Unhandled rejection|Timed out)'
if grep -qE "$problems" "$out"; then
  echo "---- what went wrong (repeated from above) ----"
  awk -v start="$problems" '$0 ~ start { on = 1 } /^ +✔/ { on = 0 } on' "$out"
fi
# One plain closing line: "N passed, N failed, N crashed" (a test file crashed by an uncaught
# exception or unhandled rejection loses its unfinished tests: never a pass).
passed=$(grep -cE '^ +✔' "$out" || true)
failed=$(grep -oE '^ +[0-9]+ tests? failed' "$out" | grep -oE '[0-9]+' | tail -1 || true)
crashed=$(grep -cE '^ +(Uncaught exception|Unhandled rejection) in ' "$out" || true)
rm -f "$out"
echo "${passed:-0} passed, ${failed:-0} failed, ${crashed:-0} crashed"
exit "$status"
