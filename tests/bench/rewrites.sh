#!/bin/bash
# Changed files going up (issue 13): a measurement, not a test. On the tests' Ceph RGW (127.0.0.1:7480, started if
# needed) it runs the real service with one FUSE-mounted drive (settle 0s, 16 upload threads), writes FILES files of
# 10 KB through the mount and waits until they are all in the bucket, then writes new bytes over every one of them (16
# writers) and times until the bucket holds every new version: what an edit of files the drive uploaded before costs.
# Once straight to the RGW, once through a delay line adding DELAY_MS to each way of every request.
#   bash tests/bench/rewrites.sh [files=300] [delay-ms=10] [rounds=2]
# Prints, per run and round, the time until the last rewrite was in the bucket, the rewrites per second, and the
# service's CPU per rewrite (utime + stime from /proc). Cleans up after itself.
set -euo pipefail
cd "$(dirname "$0")/../.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
files=${1:-300} delay=${2:-10} rounds=${3:-2}
source tests/bench/lib.sh
probe_behind_delay_line "$delay"

# Writes every file with 16 writers (new random bytes each time), then waits until the drive reports them all Cached.
write_all() {
  python3 - "$work/mnt/files" "$files" <<'PY'
import os, sys
from concurrent.futures import ThreadPoolExecutor
folder, n = sys.argv[1], int(sys.argv[2])
os.makedirs(folder, exist_ok=True)
def write(i):
    with open(os.path.join(folder, f"f{i:05}.bin"), "wb") as f:
        f.write(os.urandom(10240))
with ThreadPoolExecutor(16) as pool:
    list(pool.map(write, range(n)))
PY
  until api "http://geodrive/v1/drives/probe" | grep -q "\"cachedCount\":$files,"; do sleep 0.02; done
}

run() {
  endpoint=$1
  probe_workspace rewrites
  cat > "$work/policy.yaml" <<YAML
apiVersion: geodrive/v1
kind: CloudDrivePolicy
metadata: { name: rewrites }
spec:
  stubbing: { enabled: true, accessWait: 30d }
  upload: { settle: 0s }
  transfer: { uploadThreads: 16 }
YAML
  probe_start
  write_all
  for round in $(seq "$rounds"); do
    ticks=$(cpu_ticks) start=$(now)
    write_all
    python3 -c "import sys; t = $(now) - $start; n = $files; cpu = ($(cpu_ticks) - $ticks) * 10 / n
print(f'{sys.argv[1]:<26} round $round: {n} rewrites in the bucket after {t * 1000:7.0f} ms, {n / t:5.0f}/s, service CPU {cpu:.2f} ms each')" "$2"
  done
  probe_stop
  work=
}
run "http://127.0.0.1:$rgw" "straight to the RGW"
run "http://127.0.0.1:$line" "+$((2 * delay)) ms a round trip"
