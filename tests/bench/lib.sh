# Shared by the bench probes (memory.sh, streaming-recall.sh, full-sync.sh, stub-opens.sh, rewrites.sh): the real service
# with one FUSE-mounted drive named "probe", on a bucket of its own. Sourced, not run. Set endpoint, ak and sk first, then:
#   probe_workspace NAME      a work folder ($work: cache, mnt, home; $sock) and a bucket name ($bucket)
#   (write the drive's policy to $work/policy.yaml)
#   probe_start               makes the bucket, starts the service ($pid), adds the drive, mounted at $work/mnt
#   probe_stop                removes the drive, stops the service, unmounts, removes $work (call it from a trap)
# and the helpers s3, api, now, stub PATH; bench_ceph_start BYTES starts the benchmark's own Ceph RGW first;
# probe_behind_delay_line MS uses the tests' RGW, straight and through a delay line.
# The service is .artifacts/service's, or GEODRIVE_SERVICE_DIR's (a build of another commit, for an A/B); probe_service_build
# publishes this checkout's into .artifacts/service first (a no-op when nothing changed) unless GEODRIVE_SERVICE_DIR is set.

# A fresh Ceph RGW of the benchmark's own (port BENCH_S3_PORT, 7490; BENCH_CEPH_DIR) holding up to $1 bytes, after the
# packages are installed and the service is built; sets endpoint, ak and sk. stop-ceph-s3.sh --wipe removes it.
bench_ceph_start() {
  bash scripts/install-deps.sh >/dev/null
  bash scripts/build.sh >/dev/null
  export CEPH_S3_DIR=${BENCH_CEPH_DIR:-/tmp/geodrive-bench-ceph} S3_PORT=${BENCH_S3_PORT:-7490} MEMSTORE_BYTES=$1
  export MON_PORT_V2=$((S3_PORT - 4180)) MON_PORT_V1=$((14289 - S3_PORT))
  bash scripts/s3/start-ceph-s3.sh --fresh >/dev/null
  endpoint=http://127.0.0.1:$S3_PORT
  ak=${S3_ACCESS_KEY:-test}
  sk=${S3_SECRET_KEY:-testsecret}
}

probe_service_build() {
  [ -n "${GEODRIVE_SERVICE_DIR:-}" ] || dotnet publish engine/src/GeoDrive.Service -c Release -o .artifacts/service -nologo -v q >/dev/null
}

# The tests' Ceph RGW (started if needed) at port $rgw, and this checkout's service built. Sets ak, sk and rgw.
probe_on_tests_rgw() {
  ak=${S3_ACCESS_KEY:-test}
  sk=${S3_SECRET_KEY:-testsecret}
  rgw=${S3_PORT:-7480}
  bash scripts/s3/start-ceph-s3.sh >/dev/null
  probe_service_build
}

# probe_on_tests_rgw, and the RGW also at $line through a delay line adding $1 ms each way of every request
# (delay-line.py: this kernel has no sch_netem); the delay line and a probe drive still up taken down at exit.
# Sets ak, sk, rgw, line and work.
probe_behind_delay_line() {
  probe_on_tests_rgw
  line=${DELAY_LINE_PORT:-7483}
  python3 tests/bench/delay-line.py "$line" "$rgw" "$1" & delay_pid=$!
  work=
  trap '[ -n "$work" ] && probe_stop; kill $delay_pid 2>/dev/null || true' EXIT
}

s3() { curl -sSf --aws-sigv4 "aws:amz:us-east-1:s3" --user "$ak:$sk" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@"; }
api() { curl -sSf --unix-socket "$sock" -H 'Content-Type: application/json' "$@"; }
now() { date +%s.%N; }

probe_workspace() {
  work=$(mktemp -d "/tmp/geodrive-$1.XXXXXX")
  mkdir -p "$work/cache" "$work/mnt" "$work/home"
  sock=$work/gd.sock
  bucket=$1-$(date +%s)
  pid=
}

probe_start() {
  s3 -X PUT "$endpoint/$bucket" >/dev/null
  dotnet "${GEODRIVE_SERVICE_DIR:-.artifacts/service}/GeoDrive.Service.dll" --socket "$sock" --home "$work/home" --tick 1s >"$work/service.log" 2>&1 &
  pid=$!
  for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.1; done
  api -X POST http://geodrive/v1/drives -d "{\"name\":\"probe\",\"cachePath\":\"$work/cache\",\"mountPath\":\"$work/mnt\",\"endpoint\":\"$endpoint\",\"bucket\":\"$bucket\",\"accessKey\":\"$ak\",\"secretKey\":\"$sk\",\"policyPaths\":[\"$work/policy.yaml\"]}" >/dev/null
}

# The probe drive's service's CPU so far, in clock ticks (utime + stime).
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }

probe_stop() {
  api -X DELETE "http://geodrive/v1/drives/probe" >/dev/null 2>&1 || true
  [ -n "$pid" ] && { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
  umount -l "$work/mnt" 2>/dev/null || true
  rm -rf "$work"
}

# The mount reports a close a moment after close(2) returns, and an open file is never stubbed: asked again a while.
stub() {
  for _ in $(seq 100); do
    api -X POST http://geodrive/v1/drives/probe/files/stub -d "{\"paths\":[\"$1\"],\"literal\":true}" | grep -q '"succeeded":true' && return 0
    sleep 0.1
  done
  echo "could not stub $1" >&2; return 1
}
