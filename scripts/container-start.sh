#!/bin/sh
# The container image's command (decision 0077): node with V8's heap limit sized to the container's
# memory limit (dist/server/heapLimit.js, src/config/runtime.ts), so the heap and what the process
# holds beside it fit in it, unless NODE_OPTIONS sets a heap limit of its own (dashes or underscores,
# as V8 reads both). It runs the service, or the bundle named first with the arguments after it (the
# backup command, the print agent). `exec`: node takes the shell's place, gets `docker stop`'s SIGTERM
# as PID 1, and drains (src/main.ts).
set -eu
bundle=${1:-dist/server/main.js}
if [ "$#" -gt 0 ]; then shift; fi
case "${NODE_OPTIONS:-}" in
  *--max-old-space-size* | *--max_old_space_size*) exec node "$bundle" "$@" ;;
esac
heap_mb=$(node dist/server/heapLimit.js)
exec node --max-old-space-size="$heap_mb" "$bundle" "$@"
