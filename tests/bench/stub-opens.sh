#!/bin/bash
# Opening stubs a user has not touched lately (issue 13): a measurement, not a test. On the tests' Ceph RGW (127.0.0.1:7480,
# started if needed) it runs the real service with one FUSE-mounted drive whose updateWait is 2 s, writes FILES files of
# 10 KB through the mount, uploads and stubs them, waits past updateWait (so each open is due its check of the bucket,
# as every stub is after a restart or once stubbed longer ago than updateWait), then opens them one after another and
# reads a byte of each. Once straight to the RGW, once through a delay line adding DELAY_MS to each way of every request.
#   bash tests/bench/stub-opens.sh [files=100] [delay-ms=10]
# Prints the median, 10th and 90th percentile of an open, in ms, for each. Cleans up after itself.
set -euo pipefail
cd "$(dirname "$0")/../.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
files=${1:-100} delay=${2:-10}
source tests/bench/lib.sh
probe_behind_delay_line "$delay"

run() {
  endpoint=$1
  probe_workspace stub-opens
  cat > "$work/policy.yaml" <<YAML
apiVersion: geodrive/v1
kind: CloudDrivePolicy
metadata: { name: stub-opens }
spec:
  stubbing: { enabled: true, accessWait: 30d }
  upload: { settle: 0s, updateWait: 2s }
YAML
  probe_start
  mkdir "$work/mnt/old"
  for i in $(seq -w 1 "$files"); do head -c 10240 /dev/urandom > "$work/mnt/old/f$i.bin"; done
  until api "http://geodrive/v1/drives/probe" | grep -q "\"cachedCount\":$files,"; do sleep 0.2; done
  stubbed=$(api -X POST http://geodrive/v1/drives/probe/files/stub -d '{"paths":["old/*"]}' | grep -o '"succeeded":true' | wc -l)
  [ "$stubbed" = "$files" ] || { echo "stubbed $stubbed of $files files" >&2; exit 1; }
  ls "$work/mnt/old" >/dev/null
  sleep 3
  python3 - "$work/mnt/old" "$2" <<'PY'
import os, sys, time
folder, label = sys.argv[1], sys.argv[2]
times = []
for name in sorted(os.listdir(folder)):
    start = time.perf_counter()
    with open(os.path.join(folder, name), 'rb') as f:
        f.read(1)
    times.append((time.perf_counter() - start) * 1000)
times.sort()
n = len(times)
print(f"{label:<34} {n} opens: median {times[n // 2]:6.1f} ms, p10 {times[n // 10]:6.1f}, p90 {times[n * 9 // 10]:6.1f}")
PY
  probe_stop
  work=
}
run "http://127.0.0.1:$rgw" "straight to the RGW"
run "http://127.0.0.1:$line" "+$((2 * delay)) ms a round trip"
