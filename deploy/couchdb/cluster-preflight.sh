#!/bin/sh
# Runs before the nodes of docker-compose.yml's `cluster` profile: both cluster secrets must be set.
# Compose cannot require them itself without stopping the default profile as well (it interpolates
# every service before it applies profiles), so the profile checks them here. Values are never echoed.
set -u

missing=0
if [ -z "${COUCHDB_ERLANG_COOKIE:-}" ]; then
  echo 'COUCHDB_ERLANG_COOKIE is not set: the nodes join only with one shared Erlang cookie (for example: openssl rand -hex 32).' >&2
  missing=1
fi
if [ -z "${COUCHDB_SECRET:-}" ]; then
  echo 'COUCHDB_SECRET is not set: it makes a session cookie of one node good on the others (for example: openssl rand -hex 32).' >&2
  missing=1
fi
if [ "$missing" -ne 0 ]; then
  echo 'Set both, and keep them for as long as the volumes live (README, "Running on a CouchDB cluster").' >&2
  exit 1
fi
echo 'cluster secrets set'
