#!/bin/bash
# Writes through the mount (issue 13): a measurement, not a test. On the tests' Ceph RGW (127.0.0.1:7480, started if
# needed) it runs the real service with one FUSE-mounted drive whose files settle for an hour (nothing goes up while it
# measures), and times WRITES write(2) calls of each block size into one file three folders down through the mount, against
# the same calls into a file beside the drive's cache (the disk the cache is on, no FUSE). What an application writing a
# file pays.
#   bash tests/bench/writes.sh [writes=20000] [block sizes in KB="4 128"] [rounds=2]
# Prints, per round and block size, the microseconds per write through the mount and straight, and the service's CPU
# per write (utime + stime from /proc). GEODRIVE_SERVICE_DIR runs another build (an A/B). Cleans up after itself.
set -euo pipefail
cd "$(dirname "$0")/../.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
writes=${1:-20000} blocks=${2:-"4 128"} rounds=${3:-2}
source tests/bench/lib.sh
probe_on_tests_rgw
endpoint=http://127.0.0.1:$rgw
probe_workspace writes
trap 'probe_stop' EXIT
cat > "$work/policy.yaml" <<YAML
apiVersion: geodrive/v1
kind: CloudDrivePolicy
metadata: { name: writes }
spec:
  stubbing: { enabled: true, accessWait: 30d }
  upload: { settle: 1h }
YAML
probe_start
mkdir -p "$work/mnt/projects/2026/scans"
timed_writes() {
  python3 - "$1" "$writes" "$2" <<'PY'
import os, sys, time
path, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) * 1024
block = os.urandom(size)
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
start = time.perf_counter()
for _ in range(n):
    os.write(fd, block)
took = time.perf_counter() - start
os.close(fd)
os.unlink(path)
print(f"{took * 1e6 / n:.1f}")
PY
}
echo "$writes writes per block size, $(nproc) cores; service: ${GEODRIVE_SERVICE_DIR:-.artifacts/service}"
for round in $(seq "$rounds"); do
  for kb in $blocks; do
    ticks=$(cpu_ticks)
    mounted=$(timed_writes "$work/mnt/projects/2026/scans/w.bin" "$kb")
    cpu=$(( $(cpu_ticks) - ticks ))
    straight=$(timed_writes "$work/straight.bin" "$kb")
    python3 -c "print(f'round $round, {$kb:>4} KB writes: {$mounted:7.1f} us each through the mount, {$straight:6.1f} us straight; service CPU {$cpu * 1e4 / $writes:5.1f} us each')"
  done
done
