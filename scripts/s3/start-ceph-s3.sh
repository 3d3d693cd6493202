#!/bin/bash
# Ceph RGW on 127.0.0.1 for the tests and the demo: the real S3 server, run from the project's own script.
# Start a single-node Ceph (mon + 1 memstore OSD [+ mgr] + radosgw) bound to 127.0.0.1.
# Everything lives under $CEPH_S3_DIR (default /tmp/geodrive-ceph); nothing in /etc/ceph or /var/lib/ceph.
#   start-ceph-s3.sh           reuse an existing cluster dir if present (memstore is saved on clean stop), else create
#   start-ceph-s3.sh --fresh   wipe and re-create
# Env: S3_PORT (7480) S3_ACCESS_KEY (test) S3_SECRET_KEY (testsecret) MEMSTORE_BYTES (8 GiB) WITH_MGR (0)
# Needs: apt-get install ceph-mon ceph-osd radosgw ceph-common [ceph-mgr]
set -euo pipefail
D=${CEPH_S3_DIR:-/tmp/geodrive-ceph}
PORT=${S3_PORT:-7480}; AK=${S3_ACCESS_KEY:-test}; SK=${S3_SECRET_KEY:-testsecret}
MON_V2=${MON_PORT_V2:-3300}; MON_V1=${MON_PORT_V1:-6789}
C="$D/ceph.conf"; ceph() { command ceph -c "$C" --connect-timeout 20 "$@"; }
alive() { [ -f "$D/run/$1.pid" ] && kill -0 "$(cat "$D/run/$1.pid")" 2>/dev/null; }
wait_for() { local t=$1; shift; for _ in $(seq $((t * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
             echo "timeout waiting for: $*" >&2; return 1; }

# Test assemblies run in parallel and each may start the cluster: one start at a time (the lock lives
# beside $D because --fresh deletes $D); the second caller then finds it running.
# The daemons started below must not inherit the lock (9>&-), or it would be held for their lifetime.
exec 9>"$D.lock"; flock -w 300 9 || { echo "timeout waiting for another start-ceph-s3.sh ($D.lock)" >&2; exit 1; }
if [ "${1:-}" = "--fresh" ]; then "$(dirname "$0")/stop-ceph-s3.sh" || true; rm -rf "$D"; fi
# A running cluster whose in-memory OSD flagged itself full holds every PUT for ever (seen after a day of
# test runs and profiling: "1 full osd(s)"; and once on a fresh cluster with little in it, the OSD log
# saying "full status failsafe engaged ... now -2147483648% full", an overflowed ratio): re-create it.
if alive client.rgw && timeout 20 /usr/bin/ceph -c "$C" --connect-timeout 10 health 2>/dev/null | grep -q "full osd"; then
  echo "the Ceph cluster in $D is full (its memstore OSD): re-creating it" >&2
  "$(dirname "$0")/stop-ceph-s3.sh" || true; rm -rf "$D"
fi
if alive client.rgw && curl -fs "http://127.0.0.1:$PORT/" >/dev/null; then echo "already running: http://127.0.0.1:$PORT"; exit 0; fi
# Reuse a cluster only after a clean stop (stop-ceph-s3.sh leaves "stopped-clean"). A killed OSD has not
# saved its memstore and would hang the next start (seen in CI: the session's daemons are killed when it
# ends), so a cluster that was running and did not stop cleanly is re-created.
if [ -f "$D/created" ] && [ ! -f "$D/stopped-clean" ]; then
  echo "the Ceph cluster in $D did not stop cleanly (killed?): re-creating it" >&2
  "$(dirname "$0")/stop-ceph-s3.sh" || true; rm -rf "$D"
fi
rm -f "$D/stopped-clean"

NEW=0
if [ ! -f "$D/created" ]; then
  NEW=1; rm -rf "$D"; mkdir -p "$D"/{run,log,crash,mon.a,osd.0,mgr.x,rgw}
  FSID=$(uuidgen); OSD_UUID=$(uuidgen); echo "$OSD_UUID" > "$D/osd.uuid"
  cat > "$C" <<EOF
[global]
fsid = $FSID
mon host = [v2:127.0.0.1:$MON_V2,v1:127.0.0.1:$MON_V1]
public addr = 127.0.0.1
cluster addr = 127.0.0.1
public network = 127.0.0.0/8
ms bind ipv6 = false
keyring = $D/keyring
run dir = $D/run
crash dir = $D/crash
pid file = $D/run/\$name.pid
admin socket = $D/run/\$name.asok
log file = $D/log/\$name.log
mon cluster log file = $D/log/cluster.log
log to stderr = false
err to stderr = true
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon max pg per osd = 1000
mon warn on pool no redundancy = false
mon warn on insecure global id reclaim allowed = false
auth allow insecure global id reclaim = false
[mon]
mon data = $D/mon.\$id
mon data avail warn = 2
mon data avail crit = 1
[mgr]
mgr data = $D/mgr.\$id
[osd]
osd data = $D/osd.\$id
osd objectstore = memstore
# fast shutdown skips ObjectStore::umount -> memstore would not save its data on stop
osd fast shutdown = false
memstore device bytes = ${MEMSTORE_BYTES:-8589934592}
osd class dir = /usr/lib/x86_64-linux-gnu/rados-classes
[client.rgw]
rgw data = $D/rgw
rgw frontends = beast endpoint=127.0.0.1:$PORT tcp_nodelay=1
rgw thread pool size = ${RGW_THREADS:-64}
rgw dns name = localhost
rgw enable usage log = false
debug rgw = 0/0
# deleted/overwritten tail objects are only freed by GC (default: after 2 h) -> keep RAM bounded
rgw gc obj min wait = 60
rgw gc processor period = 60
EOF
  KR="$D/keyring"
  ceph-authtool "$KR" --create-keyring --gen-key -n mon. --cap mon 'allow *' >/dev/null
  ceph-authtool "$KR" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' --cap mds 'allow *' >/dev/null
  ceph-authtool "$KR" --gen-key -n osd.0 --cap mon 'allow profile osd' --cap osd 'allow *' --cap mgr 'allow profile osd' >/dev/null
  ceph-authtool "$KR" --gen-key -n mgr.x --cap mon 'allow profile mgr' --cap osd 'allow *' --cap mds 'allow *' >/dev/null
  ceph-authtool "$KR" --gen-key -n client.rgw --cap mon 'allow rw' --cap osd 'allow rwx' --cap mgr 'allow rw' >/dev/null
  monmaptool --create --clobber --fsid "$FSID" --addv a "[v2:127.0.0.1:$MON_V2,v1:127.0.0.1:$MON_V1]" "$D/monmap" >/dev/null
  ceph-mon -c "$C" -i a --mkfs --monmap "$D/monmap" --keyring "$KR"
fi

alive mon.a || ceph-mon -c "$C" -i a 2>>"$D/log/stderr.log" 9>&-
wait_for 30 ceph mon stat

if [ "$NEW" = 1 ]; then
  OSD_UUID=$(cat "$D/osd.uuid")
  ceph osd new "$OSD_UUID" 0 >/dev/null
  ceph-osd -c "$C" -i 0 --mkfs --osd-uuid "$OSD_UUID" 2>"$D/log/osd-mkfs.err"
fi
alive osd.0 || ceph-osd -c "$C" -i 0 2>>"$D/log/stderr.log" 9>&-
if [ "${WITH_MGR:-0}" = 1 ]; then alive mgr.x || ceph-mgr -c "$C" -i x 9>&-; fi
wait_for 60 sh -c "ceph -c '$C' osd dump 2>/dev/null | grep -q '^osd.0 up'"

if [ "$NEW" = 1 ]; then
  radosgw-admin -c "$C" user create --uid=test --display-name=test --access-key="$AK" --secret-key="$SK" >/dev/null
fi
alive client.rgw || radosgw -c "$C" -n client.rgw 2>>"$D/log/stderr.log" 9>&-
wait_for 60 curl -fs "http://127.0.0.1:$PORT/"
touch "$D/created"
echo "ceph s3 up: http://127.0.0.1:$PORT access=$AK secret=$SK (conf $C)"
