#!/usr/bin/env bash
# `npm run test:e2e`: the kiosk's and the office's end-to-end suites in headless Chromium, against the
# built service (rebuilt first where a source is newer). `--part K/N` runs the K-th of N shares of the
# files (in name order, every N-th from the K-th): CI runs two shares beside two different steps
# (decision 0048). Any other argument goes to mocha (`--grep`, say).
set -euo pipefail
cd "$(dirname "$0")/.."

part=''
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --part) part=${2:-}; shift 2 ;;
    --part=*) part=${1#--part=}; shift ;;
    *) args+=("$1"); shift ;;
  esac
done

mapfile -t files < <(find test/e2e -name '*.e2e.ts' | LC_ALL=C sort)
if [ -n "$part" ]; then
  if ! [[ "$part" =~ ^([1-9][0-9]*)/([1-9][0-9]*)$ ]] || [ "${BASH_REMATCH[1]}" -gt "${BASH_REMATCH[2]}" ]; then
    echo "test-e2e: --part wants K/N with 1 <= K <= N, got '$part'" >&2
    exit 2
  fi
  k=${BASH_REMATCH[1]} n=${BASH_REMATCH[2]}
  share=()
  for i in "${!files[@]}"; do
    if [ $((i % n)) -eq $((k - 1)) ]; then share+=("${files[$i]}"); fi
  done
  files=("${share[@]}")
  echo "test-e2e: part $k of $n: ${files[*]}"
fi

npx tsx scripts/buildIfStale.ts
exec npx mocha --no-config --node-option import=tsx --extension ts --timeout 180000 "${args[@]}" "${files[@]}"
