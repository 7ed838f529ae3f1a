#!/bin/sh
# One-shot set-up of the three-node CouchDB cluster of docker-compose.yml (profile `cluster`), as
# CouchDB's documentation describes it: enable_cluster on the coordinating node and, through it, on
# each other node; add_node for each; finish_cluster. Safe to run again: a finished cluster is left
# alone. Credentials come from the environment and are never echoed.
set -eu

: "${COUCHDB_USER:?}" "${COUCHDB_PASSWORD:?}"
COORDINATOR=${COORDINATOR:-couchdb-1.chamada}
OTHERS=${OTHERS:-couchdb-2.chamada couchdb-3.chamada}
NODE_COUNT=${NODE_COUNT:-3}

api() { # METHOD HOST PATH [JSON]
  if [ $# -ge 4 ]; then
    curl -fsS -u "$COUCHDB_USER:$COUCHDB_PASSWORD" -X "$1" -H 'Content-Type: application/json' \
      --data "$4" "http://$2:5984$3"
  else
    curl -fsS -u "$COUCHDB_USER:$COUCHDB_PASSWORD" -X "$1" "http://$2:5984$3"
  fi
}

# JSON strings for the credentials, so a quote or backslash in them cannot break the bodies.
json_string() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g; s/^/"/; s/$/"/'; }
USER_JSON=$(json_string "$COUCHDB_USER")
PASSWORD_JSON=$(json_string "$COUCHDB_PASSWORD")

for host in $COORDINATOR $OTHERS; do
  tries=0
  until curl -fsS "http://$host:5984/_up" >/dev/null 2>&1; do
    tries=$((tries + 1))
    [ "$tries" -le 60 ] || { echo "cluster-setup: $host did not come up" >&2; exit 1; }
    sleep 2
  done
done

# A node that has just come up may still refuse the set-up API for a moment: ask until it answers.
tries=0
until state=$(api GET "$COORDINATOR" /_cluster_setup); do
  tries=$((tries + 1))
  [ "$tries" -le 30 ] || { echo "cluster-setup: $COORDINATOR does not answer /_cluster_setup" >&2; exit 1; }
  sleep 2
done
case $state in
  *'"cluster_finished"'*) echo "cluster-setup: the cluster is already set up"; exit 0 ;;
esac

api POST "$COORDINATOR" /_cluster_setup "{\"action\":\"enable_cluster\",\"bind_address\":\"0.0.0.0\",\"username\":$USER_JSON,\"password\":$PASSWORD_JSON,\"node_count\":\"$NODE_COUNT\"}" >/dev/null
for host in $OTHERS; do
  api POST "$COORDINATOR" /_cluster_setup "{\"action\":\"enable_cluster\",\"bind_address\":\"0.0.0.0\",\"username\":$USER_JSON,\"password\":$PASSWORD_JSON,\"port\":5984,\"node_count\":\"$NODE_COUNT\",\"remote_node\":\"$host\",\"remote_current_user\":$USER_JSON,\"remote_current_password\":$PASSWORD_JSON}" >/dev/null
  api POST "$COORDINATOR" /_cluster_setup "{\"action\":\"add_node\",\"host\":\"$host\",\"port\":5984,\"username\":$USER_JSON,\"password\":$PASSWORD_JSON}" >/dev/null
done
api POST "$COORDINATOR" /_cluster_setup '{"action":"finish_cluster"}' >/dev/null

# Every node must list all three in cluster_nodes before the app starts writing.
for host in $COORDINATOR $OTHERS; do
  members=$(api GET "$host" /_membership)
  for node in $COORDINATOR $OTHERS; do
    echo "$members" | grep -q "couchdb@$node" || { echo "cluster-setup: $host does not list $node" >&2; exit 1; }
  done
done
echo "cluster-setup: cluster of $NODE_COUNT nodes finished"
