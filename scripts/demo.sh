#!/bin/bash
# The main job: from a fresh machine to a running demo cloud drive.
# Installs what is needed, builds, starts a local S3 server: Ceph RGW on 127.0.0.1:7480 (scripts/s3/start-ceph-s3.sh,
# the one the tests use; key test, secret testsecret), or with GEODRIVE_DEMO_S3=moto the quicker moto mock on
# 127.0.0.1:9000 (GEODRIVE_DEMO_PORT moves it; key demo, secret demo-secret-key). Then starts the GeoDrive service,
# creates and mounts the drive "demo" on the bucket "demo" (GEODRIVE_DEMO_BUCKET; emptied first, as the cache is)
# with policies/examples/demo.yaml, and walks one file through write -> upload -> stub -> recall.
# The drive stays mounted at $DEMO/mnt afterwards; `bash scripts/demo.sh stop` takes it all down, Ceph only if the
# demo started it and no test run holds it (docs/decisions/0024-demo-on-ceph.md).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DEMO=${GEODRIVE_DEMO_DIR:-/tmp/geodrive-demo}
S3_KIND=${GEODRIVE_DEMO_S3:-ceph}
BUCKET=${GEODRIVE_DEMO_BUCKET:-demo}
export GEODRIVE_HOME=$DEMO/home GEODRIVE_SOCKET=$DEMO/geodrive.sock

stop_drive() {
  if [ -f "$DEMO/service.pid" ] && kill -0 "$(cat "$DEMO/service.pid")" 2>/dev/null; then
    kill "$(cat "$DEMO/service.pid")"; for _ in $(seq 50); do kill -0 "$(cat "$DEMO/service.pid")" 2>/dev/null || break; sleep 0.2; done
  fi
  fusermount3 -u -z "$DEMO/mnt" 2>/dev/null || true
  bash scripts/s3/stop-moto.sh "$DEMO/moto.pid" 2>/dev/null || true
}
stop() {
  stop_drive
  # Ceph is shared with the tests: stopped only if this demo started it, and then not while a test run uses it.
  if [ -f "$DEMO/ceph.started" ]; then bash scripts/s3/stop-ceph-s3.sh --if-unused && rm -f "$DEMO/ceph.started"
  elif [ "$S3_KIND" = ceph ]; then echo "Ceph RGW left running: the demo did not start it (bash scripts/s3/stop-ceph-s3.sh stops it)"; fi
  echo "demo stopped (data left in $DEMO)"
}
if [ "${1:-}" = stop ]; then stop; exit 0; fi
case $S3_KIND in ceph|moto) ;; *) echo "error: GEODRIVE_DEMO_S3 is '$S3_KIND'; use ceph (the default) or moto" >&2; exit 2 ;; esac

bash scripts/install-deps.sh
# Ceph starts while the build runs: creating a cluster is mostly waiting for its daemons (~15 s).
ceph_log=$(mktemp); ceph_pid=; trap 'rm -f "$ceph_log"' EXIT
if [ "$S3_KIND" = ceph ]; then bash scripts/s3/start-ceph-s3.sh >"$ceph_log" 2>&1 & ceph_pid=$!; fi
bash scripts/build.sh
stop_drive >/dev/null 2>&1 || true
ceph_was_started=0; [ -f "$DEMO/ceph.started" ] && ceph_was_started=1
rm -rf "$DEMO"; mkdir -p "$DEMO/cache" "$DEMO/mnt" "$DEMO/home"
[ "$ceph_was_started" = 1 ] && touch "$DEMO/ceph.started"

if [ "$S3_KIND" = ceph ]; then
  if ! wait "$ceph_pid"; then cat "$ceph_log" >&2; echo "error: Ceph RGW did not start (log above; CEPH_S3_DIR=${CEPH_S3_DIR:-/tmp/geodrive-ceph})" >&2; exit 1; fi
  if grep -q "already running" "$ceph_log"; then how="already running"; else how="started"; fi
  echo "Ceph RGW on http://127.0.0.1:${S3_PORT:-7480}: $how (CEPH_S3_DIR=${CEPH_S3_DIR:-/tmp/geodrive-ceph})"
  # Remembered so that `demo.sh stop` stops only a cluster the demo brought up (or one a demo before it did).
  [ "$how" = started ] && touch "$DEMO/ceph.started"
  ENDPOINT=http://127.0.0.1:${S3_PORT:-7480}; AK=${S3_ACCESS_KEY:-test}; SK=${S3_SECRET_KEY:-testsecret}
else
  PORT=${GEODRIVE_DEMO_PORT:-9000}
  bash scripts/s3/start-moto.sh "$PORT" "$DEMO/moto.pid"
  ENDPOINT=http://127.0.0.1:$PORT; AK=demo; SK=demo-secret-key
fi
# The demo starts from an empty bucket as it does from an empty cache (Ceph keeps its data across runs);
# versioning on, as the README advises, so that Get-CloudFileVersion and Restore-CloudFile work on the demo drive.
S3_SECRET_KEY=$SK python3 - "$ENDPOINT" "$AK" "$BUCKET" <<'PY'
import os, sys, boto3
s3 = boto3.resource("s3", endpoint_url=sys.argv[1], aws_access_key_id=sys.argv[2], aws_secret_access_key=os.environ["S3_SECRET_KEY"], region_name="us-east-1")
bucket = s3.Bucket(sys.argv[3])
try: bucket.create()
except s3.meta.client.exceptions.BucketAlreadyOwnedByYou: bucket.object_versions.delete()
bucket.Versioning().enable()
PY

nohup .artifacts/service/GeoDrive.Service --socket "$GEODRIVE_SOCKET" --home "$GEODRIVE_HOME" > "$DEMO/service.log" 2>&1 &
echo $! > "$DEMO/service.pid"
for _ in $(seq 100); do [ -S "$GEODRIVE_SOCKET" ] && break; sleep 0.1; done

S3_ACCESS_KEY=$AK S3_SECRET_KEY=$SK bash scripts/gdpwsh -NoProfile -File samples/demo/demo.ps1 -Bucket "$BUCKET" \
  -Endpoint "$ENDPOINT" -CachePath "$DEMO/cache" -MountPath "$DEMO/mnt" -PolicyPath "$ROOT/policies/examples/demo.yaml"
echo
echo "The drive 'demo' stays mounted at $DEMO/mnt (cache $DEMO/cache, service log $DEMO/service.log); bucket '$BUCKET' at $ENDPOINT."
echo "Try: GEODRIVE_SOCKET=$GEODRIVE_SOCKET bash scripts/gdpwsh -Command 'Import-Module ./GeoDrive.psd1; Get-CloudFile -Drive demo'"
echo "Stop it all with: bash scripts/demo.sh stop"
