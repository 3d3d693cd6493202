#!/bin/bash
# Streaming recall probe (issue 4): a measurement, not a test. On the tests' Ceph RGW (127.0.0.1:7480,
# started if needed) it runs the real service with one FUSE-mounted drive, writes a file of SIZE_MB
# (512) through the mount, uploads and stubs it, then times
#   1. a full recall of the stub through the control API (Invoke-CloudRecall's route), with the
#      service's peak RSS (VmHWM, reset just before via /proc/PID/clear_refs) while it runs;
#   2. the first 1 MiB read through the mount from the stub (dd bs=1M count=1), and the file's state then;
#   3. reading the whole stub through the mount (sha256sum), checked against the written bytes;
#   4. reading it again, Cached: what the mount itself costs.
#   bash tests/bench/streaming-recall.sh            # SIZE_MB=512 PART=16MiB THREADS=4 by default
# Prints a Markdown table; tests/bench/results/streaming-recall.md keeps a run. Cleans up after itself.
set -euo pipefail
cd "$(dirname "$0")/../.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
size_mb=${SIZE_MB:-512}
part=${PART:-16MiB}
threads=${THREADS:-4}
endpoint=http://127.0.0.1:${S3_PORT:-7480}
ak=${S3_ACCESS_KEY:-test}
sk=${S3_SECRET_KEY:-testsecret}

bash scripts/s3/start-ceph-s3.sh >/dev/null
source tests/bench/lib.sh
probe_service_build
probe_workspace streaming

cat > "$work/policy.yaml" <<EOF
apiVersion: geodrive/v1
kind: CloudDrivePolicy
metadata: { name: streaming-recall-probe }
spec:
  stubbing: { enabled: true, accessWait: 30d }
  upload: { settle: 1h }
  transfer: { restoreThreads: 8, multipart: { threshold: 64MiB, partSize: $part, uploadThreads: 4, restoreThreads: $threads } }
EOF

cleanup() {
  probe_stop
  s3 -X DELETE "$endpoint/$bucket/big.bin" >/dev/null 2>&1 || true
  s3 -X DELETE "$endpoint/$bucket" >/dev/null 2>&1 || true
}
trap cleanup EXIT
probe_start
state() { getfattr --only-values -n user.geodrive.state "$work/mnt/big.bin" 2>/dev/null || echo "?"; }

dd if=/dev/urandom of="$work/mnt/big.bin" bs=1M count="$size_mb" status=none
expected=$(sha256sum <"$work/mnt/big.bin" | cut -d' ' -f1)
api -X POST http://geodrive/v1/drives/probe/files/upload -d '{"paths":["big.bin"],"literal":true}' >/dev/null
stub big.bin

# Warm-up (not timed): one streamed recall, so neither figure pays the service's first-use costs (JIT, connections).
dd if="$work/mnt/big.bin" of=/dev/null bs=1M count=1 status=none
for _ in $(seq 1200); do [ "$(state)" = Cached ] && break; sleep 0.05; done
stub big.bin

# 2. A full recall through the control API, peak RSS of the service meanwhile.
rss_before=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
echo 5 >"/proc/$pid/clear_refs"
t3=$(now); api -X POST http://geodrive/v1/drives/probe/files/recall -d '{"paths":["big.bin"],"literal":true}' >/dev/null; t4=$(now)
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
recalled_state=$(state)
stub big.bin

# 1. The first 1 MiB of the stub through the mount.
t0=$(now); dd if="$work/mnt/big.bin" of=/dev/null bs=1M count=1 status=none; t1=$(now)
first_state=$(state)
for _ in $(seq 1200); do [ "$(state)" = Cached ] && break; sleep 0.05; done
t2=$(now)
stub big.bin

# 3. Reading the whole stub through the mount.
t5=$(now); actual=$(sha256sum <"$work/mnt/big.bin" | cut -d' ' -f1); t6=$(now)

# 4. The same file read again through the mount, now Cached: what the mount itself costs.
t7=$(now); sha256sum <"$work/mnt/big.bin" >/dev/null; t8=$(now)

secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
first=$(secs "$t0" "$t1"); full=$(secs "$t3" "$t4")
echo "| measure | value |"
echo "|---|---|"
echo "| file | ${size_mb} MiB, part $part, multipart.restoreThreads $threads, Ceph RGW at $endpoint |"
echo "| first 1 MiB of the stub through the mount (dd bs=1M count=1) | $first s (state then: $first_state) |"
echo "| that open until the file was Cached (background recall, polled every 50 ms) | $(secs "$t0" "$t2") s |"
echo "| full recall through the control API (Invoke-CloudRecall route) | $full s ($(awk -v s="$size_mb" -v t="$full" 'BEGIN { printf "%.0f", s / t }') MiB/s; state then: $recalled_state) |"
echo "| first 1 MiB / full recall | $(awk -v a="$first" -v b="$full" 'BEGIN { printf "%.1f %%", 100 * a / b }') |"
echo "| service peak RSS during the full recall (VmHWM, reset before) | $((hwm / 1024)) MiB (RSS before: $((rss_before / 1024)) MiB) |"
echo "| whole stub read through the mount (sha256sum) | $(secs "$t5" "$t6") s, bytes $([ "$actual" = "$expected" ] && echo identical || echo DIFFERENT) |"
echo "| the same file read again through the mount, Cached (sha256sum) | $(secs "$t7" "$t8") s |"
[ "$actual" = "$expected" ]
