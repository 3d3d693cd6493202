#!/bin/bash
# Ceph RGW on 127.0.0.1 for the tests and the demo: the real S3 server, run from the project's own script.
# Stop the daemons started by start-ceph-s3.sh, by PID (SIGTERM, then SIGKILL after 30 s).
# The OSD (memstore) saves its data to $CEPH_S3_DIR/osd.0 on a clean stop. --wipe also deletes the dir.
# --if-unused leaves it running (exit 3) while a test run uses it: test processes hold a shared lock on
# $D.users for as long as they run (GeoDrive.TestSupport CephS3Fixture); the demo stops Ceph this way.
D=${CEPH_S3_DIR:-/tmp/geodrive-ceph}
if [ "${1:-}" = "--if-unused" ]; then
  # Under the start lock, so a test starting now waits for the stop and then starts the cluster again.
  exec 9>"$D.lock"; flock -w 300 9 || { echo "timeout waiting for start-ceph-s3.sh ($D.lock)" >&2; exit 1; }
  exec 8>"$D.users"
  if ! flock -n -x 8; then echo "Ceph in $D is in use by a test run (it holds $D.users): left running"; exit 3; fi
fi
clean=1 stopped=0
for n in client.rgw mgr.x osd.0 mon.a; do
  f="$D/run/$n.pid"; [ -f "$f" ] || continue
  p=$(cat "$f")
  if kill -0 "$p" 2>/dev/null && grep -qE 'ceph|radosgw' "/proc/$p/comm" 2>/dev/null; then
    kill -TERM "$p"
    for _ in $(seq 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$p" 2>/dev/null && { echo "$n ($p) did not stop, SIGKILL" >&2; kill -KILL "$p"; clean=0; }
    stopped=1
  else
    clean=0   # a pid file without its daemon: it was killed or crashed, its data was not saved
  fi
  rm -f "$f"
done
# start-ceph-s3.sh reuses the cluster only after a clean stop (the OSD saved its memstore).
if [ "${1:-}" = "--wipe" ]; then rm -rf "$D"; elif [ "$clean" = 1 ] && [ "$stopped" = 1 ] && [ -f "$D/created" ]; then touch "$D/stopped-clean"; fi
exit 0
