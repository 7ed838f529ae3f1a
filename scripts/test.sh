#!/usr/bin/env bash
# `npm test`: the static checks (typecheck, then the lint) and every mocha suite, side by side.
# The checks are single-threaded for most of their time and the mocha workers leave part of a core
# idle while their tests wait on timers and child processes, so running them together saves the
# checks' wall time (decision 0048). A failed check still stops the run at once: its output is
# printed and mocha is stopped, as when the checks ran first. The checks' output is kept apart and
# printed whole, so that it never interleaves with the suites'.
set -uo pipefail
cd "$(dirname "$0")/.."

checks_log=$(mktemp)
checks_rc_file=$(mktemp)
cleanup() { rm -f "$checks_log" "$checks_rc_file"; }
trap cleanup EXIT

(
  rc=0
  { npm run -s typecheck && npm run -s lint; } >"$checks_log" 2>&1 || rc=$?
  echo "$rc" >"$checks_rc_file"
) &
checks_pid=$!

set -m # mocha in its own process group, so that a failed check stops it with its workers
npm run -s test:unit "$@" &
unit_pid=$!
set +m

# Whichever ends first: a failed check ends the run without waiting for the suites.
while kill -0 "$checks_pid" 2>/dev/null && kill -0 "$unit_pid" 2>/dev/null; do sleep 1; done
if ! kill -0 "$checks_pid" 2>/dev/null; then
  wait "$checks_pid"
  if [ "$(cat "$checks_rc_file")" != 0 ]; then
    kill -TERM -- "-$unit_pid" 2>/dev/null
    wait "$unit_pid" 2>/dev/null
    echo "--- typecheck and lint (failed; the mocha suites were stopped) ---"
    cat "$checks_log"
    exit 1
  fi
fi
wait "$unit_pid"
unit_rc=$?
wait "$checks_pid" 2>/dev/null
checks_rc=$(cat "$checks_rc_file")
echo "--- typecheck and lint (ran beside the suites) ---"
cat "$checks_log"
if [ "$checks_rc" != 0 ]; then exit 1; fi
exit "$unit_rc"
