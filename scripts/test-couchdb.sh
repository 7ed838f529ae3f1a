#!/usr/bin/env bash
# npm run test:couchdb [-- --nodes N] [-- --all-suites | --not-cluster-suites | --fault-suites | --no-fault-suites]
# [-- mocha arguments]: the suites that have a
# CouchDB variant, on a real Apache CouchDB (decision 0023). The server is the one COUCHDB_TEST_URL
# names, or else one started here from the launcher in shared/couchdb beside the checkout
# (COUCHDB_LAUNCHER overrides where), on free loopback ports, and stopped on every exit: success,
# failure or Ctrl-C. On one node every suite runs (.mocharc.couchdb.json); on a cluster only those
# whose behaviour differs there (.mocharc.couchdb-cluster.json, each one's reason in decision 0048),
# unless --all-suites. --not-cluster-suites, on one node, leaves out the cluster's suites: CI runs
# those on three nodes, so that each suite runs once (decision 0048). On a cluster, --fault-suites runs
# only the cluster's suites that kill, stop or freeze nodes under load and time what they see (the
# list below), --no-fault-suites the others: to run either share alone (CI runs both together on one
# cluster; decision 0048 says why).
set -euo pipefail
cd "$(dirname "$0")/.."

nodes=${COUCHDB_TEST_NODES:-1}
all_suites=0
not_cluster=0
faults='' # '', only or none
mocha_args=()
# The cluster's fault rows (each in .mocharc.couchdb-cluster.json; test/lint/suiteLists.test.ts checks).
fault_suites=(
  test/stress/storeOutage.stress.ts
  test/stress/twoInstances.stress.ts
  test/couchdb/casSplit.couchdb.ts
  test/couchdb/eventSplit.couchdb.ts
)
while [ $# -gt 0 ]; do
  case $1 in
    --nodes) nodes=${2:?--nodes needs a number}; shift 2 ;;
    --nodes=*) nodes=${1#*=}; shift ;;
    --all-suites) all_suites=1; shift ;;
    --not-cluster-suites) not_cluster=1; shift ;;
    --fault-suites) faults=only; shift ;;
    --no-fault-suites) faults=none; shift ;;
    *) mocha_args+=("$1"); shift ;;
  esac
done
[[ $nodes =~ ^[1-9]$ ]] || { echo "test:couchdb: --nodes must be 1 to 9, not $nodes" >&2; exit 2; }
faults_need_cluster() {
  echo "test:couchdb: --fault-suites and --no-fault-suites share the cluster's suites: they need --nodes 2 or more" >&2
  exit 2
}
if [ -n "$faults" ] && [ -z "${COUCHDB_TEST_URL:-}" ] && [ "$nodes" -lt 2 ]; then faults_need_cluster; fi

find_launcher() {
  if [ -n "${COUCHDB_LAUNCHER:-}" ]; then echo "$COUCHDB_LAUNCHER"; return; fi
  local up
  for up in .. ../.. ../../..; do
    if [ -f "$up/shared/couchdb/couchdb" ]; then (cd "$up/shared/couchdb" && echo "$PWD/couchdb"); return; fi
  done
  return 1
}

# The first of `count` consecutive ports that nothing on 127.0.0.1 listens on, below the kernel's
# range of ephemeral ports: the fault rows kill a node and start it again on its port, and a port in
# that range may meanwhile be the source port of any outgoing connection (a three-node run failed so:
# eaddrinuse on node 3's restart, port 39098, ephemeral range 32768-60999).
free_ports() {
  local count=$1 base k busy low=32768 ignored
  if [ -r /proc/sys/net/ipv4/ip_local_port_range ]; then read -r low ignored </proc/sys/net/ipv4/ip_local_port_range; fi
  local top=$((low - count - 1))
  if [ "$top" -lt 11000 ]; then top=40000; fi
  for base in $(shuf -i "10000-$top" -n 50); do
    busy=0
    for ((k = 0; k < count; k++)); do
      if (exec 3<>"/dev/tcp/127.0.0.1/$((base + k))") 2>/dev/null; then busy=1; break; fi
    done
    if [ "$busy" = 0 ]; then echo "$base"; return; fi
  done
  return 1
}

if [ -n "${COUCHDB_TEST_URL:-}" ]; then
  echo "test:couchdb: on the CouchDB that COUCHDB_TEST_URL names (${COUCHDB_TEST_NODE_URLS:+several nodes; }its databases are deleted as tests go)" >&2
  export COUCHDB_TEST_NODE_URLS=${COUCHDB_TEST_NODE_URLS:-$COUCHDB_TEST_URL}
  if [ -z "${COUCHDB_TEST_DIR:-}" ]; then
    # Fault rows kill, freeze and restart nodes: only a server this run controls.
    echo "test:couchdb: no COUCHDB_TEST_DIR, so the fault rows (they stop nodes) are left out" >&2
    export COUCHDB_TEST_NO_FAULTS=1
  fi
else
  launcher=$(find_launcher) || {
    echo "test:couchdb: no CouchDB: set COUCHDB_TEST_URL, or COUCHDB_LAUNCHER to shared/couchdb/couchdb" >&2
    exit 2
  }
  dir=$(mktemp -d "${TMPDIR:-/tmp}/chamada-couchdb.XXXXXX")
  cleanup() {
    local rc=$?
    bash "$launcher" stop --dir "$dir" >/dev/null 2>&1 || true
    if [ "$rc" = 0 ]; then rm -rf "$dir"; else echo "test:couchdb: CouchDB logs kept in $dir" >&2; fi
    exit "$rc"
  }
  trap cleanup EXIT
  trap 'exit 130' INT TERM
  port=$(free_ports "$nodes") || { echo "test:couchdb: no $nodes free ports on 127.0.0.1" >&2; exit 1; }
  COUCHDB_LOG_LEVEL=${COUCHDB_LOG_LEVEL:-warning} bash "$launcher" start --nodes "$nodes" --port "$port" --dir "$dir" >/dev/null
  set -a
  # shellcheck source=/dev/null
  . "$dir/env"
  set +a
  export COUCHDB_TEST_URL=$COUCHDB_URL COUCHDB_TEST_NODE_URLS=$COUCHDB_NODE_URLS
  export COUCHDB_TEST_DIR=$dir COUCHDB_TEST_LAUNCHER=$launcher
  unset COUCHDB_URL COUCHDB_NODE_URLS
fi

config=.mocharc.couchdb.json
# Counted from the URLs, which also holds for a server COUCHDB_TEST_URL names.
read -r -a node_urls <<<"$COUCHDB_TEST_NODE_URLS"
if [ "${#node_urls[@]}" -gt 1 ] && [ "$all_suites" = 0 ]; then config=.mocharc.couchdb-cluster.json; fi
mapfile -t cluster_suites < <(node -e 'for (const s of require("./.mocharc.couchdb-cluster.json").spec) console.log(s)')
if [ "$not_cluster" = 1 ]; then
  for suite in "${cluster_suites[@]}"; do mocha_args+=(--ignore "$suite"); done
fi
if [ -n "$faults" ]; then
  if [ "$config" != .mocharc.couchdb-cluster.json ]; then faults_need_cluster; fi
  is_fault() { local f; for f in "${fault_suites[@]}"; do [ "$f" = "$1" ] && return 0; done; return 1; }
  for suite in "${cluster_suites[@]}"; do
    if { [ "$faults" = only ] && ! is_fault "$suite"; } || { [ "$faults" = none ] && is_fault "$suite"; }; then
      mocha_args+=(--ignore "$suite")
    fi
  done
fi
npx mocha --config "$config" "${mocha_args[@]}"
