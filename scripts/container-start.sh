#!/bin/sh
# The container image's command (decision 0077): V8's heap limit sized to the container's memory limit
# (dist/server/heapLimit.js, src/config/runtime.ts), so the heap and what the process holds beside it
# fit in it, unless NODE_OPTIONS sets a heap limit of its own. `exec`: node takes the shell's place,
# gets `docker stop`'s SIGTERM as PID 1, and drains (src/main.ts).
set -eu
# V8 reads its flags with dashes or underscores alike.
case " ${NODE_OPTIONS:-} " in
  *" --max-old-space-size="* | *" --max_old_space_size="*) exec node dist/server/main.js ;;
esac
heap_mb=$(node dist/server/heapLimit.js)
exec node --max-old-space-size="$heap_mb" dist/server/main.js
