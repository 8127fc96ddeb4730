#!/usr/bin/env bash
# The README's test command: starts the real local stack, runs every test (unit and real), stops the
# stack if this run started it.
set -euo pipefail
cd "$(dirname "$0")/.."
# The system temporary directory (/tmp, and TMPDIR as it was before the run), listed before anything
# of the run starts: whatever the run leaves there is a leftover (each test and each build removes
# what it makes), except the stack's own state directory, tsx's shared compile cache and this
# script's own files. IBS_TMP_IGNORE: space-separated name patterns of entries that other processes
# of the machine make meanwhile (the run cannot tell who made an entry).
sys_tmps=(/tmp)
if [ -n "${TMPDIR:-}" ] && [ "$(realpath -m "$TMPDIR")" != /tmp ]; then sys_tmps+=("$(realpath -m "$TMPDIR")"); fi
stack_dir=$(realpath -m "${IBS_STACK_DIR:-/tmp/ibs-stack}")
tmp_listing() {
  local dir
  for dir in "${sys_tmps[@]}"; do
    # An entry removed while it is listed is no leftover: find's complaint about it is not a failure.
    if [ -d "$dir" ]; then find "$dir" -mindepth 1 -maxdepth 1 -printf '%p\n' 2>/dev/null || true; fi
  done | sort
}
tmp_before=$(tmp_listing)
# Stop at the end only a stack this run started (test/stack/session.ts): a stack that was already
# running (the quick start's, another shell's) is left as it was found, also in CI.
session=$(mktemp)
# A run stopped by a signal (SIGTERM, Ctrl-C) stops its tests, still checks and reports, and fails:
# `interrupted` names why. Before the tests start it ends at once, with a closing line too.
interrupted=
ava_pid=
on_signal() {
  interrupted="$1"
  if [ -z "$ava_pid" ]; then
    echo "interrupted by $1 before the tests started: none passed; every test counts as failed"
    exit 130
  fi
  kill -TERM -- "-$ava_pid" 2>/dev/null || true
}
trap 'on_signal SIGTERM' TERM
trap 'on_signal SIGINT' INT
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
# Who made a leftover: each new entry of the system temporary directory is noted when first seen,
# with how far the test output had come, so that the tests reported around that moment can be named.
tmp_seen=$(mktemp)
tmp_new() { comm -13 <(printf '%s\n' "$tmp_before") <(tmp_listing); }
(
  # Once more after the tests ended: what appeared since the last look is noted too.
  running=1
  while [ -n "$running" ]; do
    kill -0 "$ava_pid" 2>/dev/null || running=
    lines=$(wc -l <"$out")
    tmp_new | while IFS= read -r entry; do
      grep -qxF -e "$entry" <(cut -f2 "$tmp_seen") || printf '%s\t%s\n' "$lines" "$entry" >>"$tmp_seen"
    done
    if [ -n "$running" ]; then sleep 1; fi
  done
) &
tmp_watch_pid=$!
# The output is shown by a background tail that this shell waits for: a signal's trap runs at once
# (a foreground command would hold it back until the tests end).
timeout "$limit" tail -n +1 -f --pid="$ava_pid" "$out" &
tail_pid=$!
watch=0
wait "$tail_pid" || watch=$?
while kill -0 "$tail_pid" 2>/dev/null; do
  watch=0
  wait "$tail_pid" || watch=$?
done
if [ "$watch" = 124 ]; then
  interrupted="the time limit of $limit"
  echo "---- the tests ran past $limit and are stopped; what was still running: ----"
  ps -eo pid,ppid,etimes,args --forest | tail -n 80
  kill -TERM -- "-$ava_pid" 2>/dev/null || true
fi
# Waited for again while a signal's trap interrupts the wait and the tests are still stopping.
while :; do
  ava_status=0
  wait "$ava_pid" || ava_status=$?
  kill -0 "$ava_pid" 2>/dev/null || break
done
[ "$ava_status" = 0 ] || status=$ava_status
wait "$tmp_watch_pid" || true
leftovers=$(find "$tests_tmp" -mindepth 1 -maxdepth 1 ! -name "$tsx_cache" -printf '  %f\n' | sort)
# What a leftover holds tells what wrote it after its test removed it.
leftover_contents=$(find "$tests_tmp" -mindepth 2 -maxdepth 4 ! -path "$tests_tmp/$tsx_cache/*" -printf '    %P\n' 2>/dev/null | sort | head -40)
rm -rf "$tests_tmp"
if [ -n "$leftovers" ]; then
  echo "---- the tests left these in their temporary directory (each test removes what it makes) ----"
  echo "$leftovers"
  echo "  holding:"
  echo "$leftover_contents"
  status=1
fi
# The run's own leftovers in the system temporary directory (see tmp_listing above).
own_files=("$session" "$out" "$tmp_seen" "$tests_tmp" "$(dirname "$tests_tmp")/$tsx_cache")
tmp_leftovers=$(tmp_new | while IFS= read -r entry; do
  resolved=$(realpath -m "$entry")
  case "$resolved" in "$stack_dir" | "$stack_dir"/*) continue ;; esac
  for own in "${own_files[@]}"; do [ "$resolved" = "$(realpath -m "$own")" ] && continue 2; done
  for pattern in ${IBS_TMP_IGNORE:-}; do
    # shellcheck disable=SC2254 # a pattern on purpose
    case "${entry##*/}" in $pattern) continue 2 ;; esac
  done
  printf '%s\n' "$entry"
done)
if [ -n "$tmp_leftovers" ]; then
  echo "---- the run left these in the system temporary directory (nothing of a test or build may) ----"
  results='^ +(✔|✘)'
  while IFS= read -r entry; do
    echo "  $entry"
    seen=$(awk -F '\t' -v e="$entry" '$2 == e { print $1; exit }' "$tmp_seen")
    if [ -n "$seen" ]; then
      before=$(head -n "$seen" "$out" | grep -E "$results" | tail -n 2 | sed 's/^ */      /' || true)
      after=$(tail -n "+$((seen + 1))" "$out" | grep -E "$results" | head -n 3 | sed 's/^ */      /' || true)
      echo "    first seen after:"
      echo "${before:-      (no test reported yet)}"
      echo "    made by one of the tests running then, reported next:"
      echo "${after:-      (none: made at the end of the run)}"
    fi
    mentions=$(grep -F -- "${entry##*/}" "$out" | head -n 3 | sed 's/^ */      /' || true)
    if [ -n "$mentions" ]; then
      echo "    named in the test output:"
      echo "$mentions"
    fi
  done <<<"$tmp_leftovers"
  status=1
fi
rm -f "$tmp_seen"
# What went wrong, again at the end (ava prints it where it happened, often far above the end):
# each failure, uncaught exception, unhandled rejection or timeout, up to the next passing test.
problems='^ +(✘|Uncaught exception|Unhandled rejection|Timed out)'
if grep -qE "$problems" "$out"; then
  echo "---- what went wrong (repeated from above) ----"
  awk -v start="$problems" '$0 ~ start { on = 1 } /^ +✔/ { on = 0 } on' "$out"
fi
# One plain closing line: "N passed, N failed, N crashed" (a test file crashed by an uncaught
# exception or unhandled rejection loses its unfinished tests: never a pass). The failures are the
# tests reported failing (ava's own count when it got to print one, which a stopped ava never does).
# A run that failed never says `0 failed`: an interrupted one says so and counts every test that
# had not passed as failed; one that failed for another reason names it.
passed=$(grep -cE '^ +✔' "$out" || true)
failed=$(grep -cE '^ +✘' "$out" || true)
summary=$(grep -oE '^ +[0-9]+ tests? failed' "$out" | grep -oE '[0-9]+' | tail -1 || true)
if [ -n "$summary" ] && [ "$summary" -gt "${failed:-0}" ]; then failed=$summary; fi
crashed=$(grep -cE '^ +(Uncaught exception|Unhandled rejection) in ' "$out" || true)
rm -f "$out"
counts="${passed:-0} passed, ${failed:-0} failed, ${crashed:-0} crashed"
if [ -n "$interrupted" ]; then
  [ "$status" = 0 ] && status=1
  echo "interrupted by $interrupted: ${passed:-0} passed; every other test counts as failed" \
    "(${failed:-0} reported failing, ${crashed:-0} crashed, the rest stopped or never run)"
elif [ "$status" != 0 ] && [ "${failed:-0}" = 0 ]; then
  echo "${passed:-0} passed, none reported failing, ${crashed:-0} crashed, and the run FAILED" \
    "(exit $status: see above)"
else
  echo "$counts"
fi
exit "$status"
