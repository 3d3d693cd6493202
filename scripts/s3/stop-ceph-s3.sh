#!/bin/bash
# GeoDrive's copy of the team recipe in ../shared/s3 (kept here so a machine without ../shared works).
# Stop the daemons started by start-ceph-s3.sh, by PID (SIGTERM, then SIGKILL after 30 s).
# The OSD (memstore) saves its data to $CEPH_S3_DIR/osd.0 on a clean stop. --wipe also deletes the dir.
D=${CEPH_S3_DIR:-/tmp/geodrive-ceph}
for n in client.rgw mgr.x osd.0 mon.a; do
  f="$D/run/$n.pid"; [ -f "$f" ] || continue
  p=$(cat "$f")
  if kill -0 "$p" 2>/dev/null && grep -qE 'ceph|radosgw' "/proc/$p/comm" 2>/dev/null; then
    kill -TERM "$p"
    for _ in $(seq 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$p" 2>/dev/null && { echo "$n ($p) did not stop, SIGKILL" >&2; kill -KILL "$p"; }
  fi
  rm -f "$f"
done
[ "${1:-}" = "--wipe" ] && rm -rf "$D"
exit 0
