#!/bin/bash
# The main job: from a fresh machine to a running demo cloud drive.
# Installs what is needed, builds, starts a local S3 server on 127.0.0.1:9000 (moto; GEODRIVE_DEMO_PORT
# moves it; GEODRIVE_DEMO_S3=ceph for Ceph RGW on 7480), starts the GeoDrive service, creates and mounts the drive "demo" with
# policies/examples/demo.yaml, and walks one file through write -> upload -> stub -> recall.
# The drive stays mounted at $DEMO/mnt afterwards; `bash scripts/demo.sh stop` takes it all down.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DEMO=${GEODRIVE_DEMO_DIR:-/tmp/geodrive-demo}
export GEODRIVE_HOME=$DEMO/home GEODRIVE_SOCKET=$DEMO/geodrive.sock

stop() {
  if [ -f "$DEMO/service.pid" ] && kill -0 "$(cat "$DEMO/service.pid")" 2>/dev/null; then
    kill "$(cat "$DEMO/service.pid")"; for _ in $(seq 50); do kill -0 "$(cat "$DEMO/service.pid")" 2>/dev/null || break; sleep 0.2; done
  fi
  fusermount3 -u -z "$DEMO/mnt" 2>/dev/null || true
  bash scripts/s3/stop-moto.sh "$DEMO/moto.pid" 2>/dev/null || true
  [ "${GEODRIVE_DEMO_S3:-moto}" = ceph ] && bash scripts/s3/stop-ceph-s3.sh || true
  echo "demo stopped (data left in $DEMO)"
}
if [ "${1:-}" = stop ]; then stop; exit 0; fi

bash scripts/install-deps.sh
bash scripts/build.sh
stop >/dev/null 2>&1 || true
rm -rf "$DEMO"; mkdir -p "$DEMO/cache" "$DEMO/mnt" "$DEMO/home"

if [ "${GEODRIVE_DEMO_S3:-moto}" = ceph ]; then
  bash scripts/s3/start-ceph-s3.sh
  ENDPOINT=http://127.0.0.1:${S3_PORT:-7480}; AK=${S3_ACCESS_KEY:-test}; SK=${S3_SECRET_KEY:-testsecret}
else
  PORT=${GEODRIVE_DEMO_PORT:-9000}
  bash scripts/s3/start-moto.sh "$PORT" "$DEMO/moto.pid"
  ENDPOINT=http://127.0.0.1:$PORT; AK=demo; SK=demo-secret-key
fi
python3 - "$ENDPOINT" "$AK" "$SK" <<'PY'
import sys, boto3
s3 = boto3.client("s3", endpoint_url=sys.argv[1], aws_access_key_id=sys.argv[2], aws_secret_access_key=sys.argv[3], region_name="us-east-1")
try: s3.create_bucket(Bucket="demo")
except s3.exceptions.BucketAlreadyOwnedByYou: pass
PY

nohup .artifacts/service/GeoDrive.Service --socket "$GEODRIVE_SOCKET" --home "$GEODRIVE_HOME" > "$DEMO/service.log" 2>&1 &
echo $! > "$DEMO/service.pid"
for _ in $(seq 100); do [ -S "$GEODRIVE_SOCKET" ] && break; sleep 0.1; done

S3_ACCESS_KEY=$AK S3_SECRET_KEY=$SK bash scripts/gdpwsh -NoProfile -File samples/demo/demo.ps1 \
  -Endpoint "$ENDPOINT" -CachePath "$DEMO/cache" -MountPath "$DEMO/mnt" -PolicyPath "$ROOT/policies/examples/demo.yaml"
echo
echo "The drive 'demo' stays mounted at $DEMO/mnt (cache $DEMO/cache, service log $DEMO/service.log)."
echo "Try: GEODRIVE_SOCKET=$GEODRIVE_SOCKET bash scripts/gdpwsh -Command 'Import-Module ./GeoDrive.psd1; Get-CloudFile -Drive demo'"
echo "Stop it all with: bash scripts/demo.sh stop"
