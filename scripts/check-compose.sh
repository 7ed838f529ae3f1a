#!/usr/bin/env bash
# npm run test:compose: docker-compose.yml as the README uses it, for every profile, with no Docker
# engine (`config` interpolates and validates the file and starts nothing). Uses `docker compose`
# when the client has it, else Debian's `docker-compose`.
#
# Compose interpolates every service before it applies profiles, so a variable one profile requires
# must not be required by `${VAR:?…}` at all: it stopped every other profile (issue #42). The cluster's
# secrets are checked at `up` by deploy/couchdb/cluster-preflight.sh instead, which is run here too.
set -euo pipefail
cd "$(dirname "$0")/.."

if docker compose version >/dev/null 2>&1; then
  compose=(docker compose)
elif command -v docker-compose >/dev/null; then
  compose=(docker-compose)
else
  echo "test:compose: needs 'docker compose' or Debian's docker-compose package" >&2
  exit 2
fi

# Only the variables a check names reach Compose: one set in this shell by chance must not hide a
# missing one. (Compose v2 keeps its own configuration under HOME.)
clean() { env -i PATH="$PATH" HOME="${HOME:-/tmp}" "$@"; }

# What the README sets for the single node; the cluster adds its two secrets.
readme=(COUCHDB_USER=chamada COUCHDB_PASSWORD=change-me JWT_SECRET=0123456789abcdef0123456789abcdef0123456789
  SECURITY_CONTACTS=mailto:security@example.org,mailto:dpo@example.org)
cluster=(COUCHDB_ERLANG_COOKIE=0123456789abcdef COUCHDB_SECRET=fedcba9876543210)

failures=0
ok() { echo "ok    $1"; }
fail() {
  echo "FAIL  $1" >&2
  [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/      /' >&2
  failures=$((failures + 1))
}

# valid "what" [VAR=value…] -- [compose arguments…]
valid() {
  local what=$1 out
  shift
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  if out=$(clean "${vars[@]}" "${compose[@]}" "$@" config -q 2>&1); then ok "$what"; else fail "$what" "$out"; fi
}

# refused "what" "must name" [VAR=value…] -- [compose arguments…]: fails, and its message names the variable.
refused() {
  local what=$1 name=$2 out
  shift 2
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  if out=$(clean "${vars[@]}" "${compose[@]}" "$@" config -q 2>&1); then
    fail "$what (Compose accepted it)"
  elif ! grep -q -- "$name" <<<"$out"; then
    fail "$what (the message does not name $name)" "$out"
  else
    ok "$what"
  fi
}

echo "${compose[*]}: $("${compose[@]}" version --short 2>/dev/null || "${compose[@]}" version | head -n 1)"

valid 'default profile, with the README variables and no cluster secrets' "${readme[@]}" --
valid 'default profile, more app instances' "${readme[@]}" APP_REPLICAS=3 APP_PORTS=8080-8082 --
valid 'profile cluster, with its secrets' "${readme[@]}" "${cluster[@]}" -- --profile cluster
valid 'profile backup' "${readme[@]}" -- --profile backup
valid 'profiles cluster and backup together' "${readme[@]}" "${cluster[@]}" COUCHDB_HOST=couchdb-1.chamada \
  -- --profile cluster --profile backup

# Each variable every profile needs is still required, by name, before anything starts.
for i in "${!readme[@]}"; do
  name=${readme[$i]%%=*}
  rest=("${readme[@]:0:$i}" "${readme[@]:$((i + 1))}")
  refused "default profile without $name" "$name" "${rest[@]}" --
done

# The cluster's secrets: refused by the profile's preflight, each by name, before any node starts.
preflight() { clean "$@" sh deploy/couchdb/cluster-preflight.sh 2>&1; }
if out=$(preflight "${cluster[@]}"); then ok 'cluster preflight, both secrets set'; else fail 'cluster preflight, both secrets set' "$out"; fi
for i in "${!cluster[@]}"; do
  name=${cluster[$i]%%=*}
  rest=("${cluster[@]:0:$i}" "${cluster[@]:$((i + 1))}")
  if out=$(preflight "${rest[@]}"); then
    fail "cluster preflight without $name (it passed)"
  elif ! grep -q -- "$name is not set" <<<"$out"; then
    fail "cluster preflight without $name (the message does not name it)" "$out"
  else
    ok "cluster preflight without $name"
  fi
done

if [ "$failures" -ne 0 ]; then
  echo "test:compose: $failures check(s) failed" >&2
  exit 1
fi
