#!/bin/bash
# Full sync probe (issue 14, item 5: "a whole drive rebuilt on a new host ... measure it on 100,000 objects"):
# a measurement, not a test. On a fresh Ceph RGW of its own (port 7490, wiped at the end, as memory.sh does) it
# puts OBJECTS objects of 1 KB straight into a bucket (FOLDERS folders, each with a subfolder holding half of its
# files), then makes a drive over that bucket (the real service, mounted) and times Sync-CloudDrive's route
# (POST /v1/drives/probe/sync) until every stub and folder is made; then checks the counts and reads one file.
#   bash tests/bench/full-sync.sh            # OBJECTS=100000 FOLDERS=100 by default
# Prints a Markdown table; tests/bench/results/full-sync.md keeps a run.
set -euo pipefail
cd "$(dirname "$0")/../.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
objects=${OBJECTS:-100000}
folders=${FOLDERS:-100}

source tests/bench/lib.sh
bench_ceph_start $((8 * 1024 * 1024 * 1024))
probe_workspace fullsync
cat > "$work/policy.yaml" <<EOF
apiVersion: geodrive/v1
kind: CloudDrivePolicy
metadata: { name: full-sync-probe }
spec:
  stubbing: { enabled: true, accessWait: 30d }
EOF
cleanup() {
  probe_stop
  bash scripts/s3/stop-ceph-s3.sh --wipe >/dev/null 2>&1 || true
}
trap cleanup EXIT
s3 -X PUT "$endpoint/$bucket" >/dev/null

# The tree another host left: folder i holds half its files, its subfolder "sub" the other half.
t0=$(now)
python3 - "$endpoint" "$ak" "$sk" "$bucket" "$objects" "$folders" <<'PY'
import sys, boto3, concurrent.futures
endpoint, ak, sk, bucket, objects, folders = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ak, aws_secret_access_key=sk, region_name="us-east-1")
body = b"x" * 1024
def key(i):
    folder, n = i % folders, i // folders
    return f"f{folder:03d}/" + ("sub/" if n % 2 else "") + f"file{n:05d}.bin"
with concurrent.futures.ThreadPoolExecutor(32) as pool:
    list(pool.map(lambda i: s3.put_object(Bucket=bucket, Key=key(i), Body=body), range(objects)))
PY
t1=$(now)
probe_start
t2=$(now)
result=$(api -X POST http://geodrive/v1/drives/probe/sync -d '{"path":""}')
t3=$(now)
stubs=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['stubsMade'])" "$result")
listed=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['folders'])" "$result")
made=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['foldersMade'])" "$result")
on_disk=$(find "$work/cache" -path "$work/cache/.geodrive" -prune -o -type f -print | wc -l)
cmp <(printf 'x%.0s' $(seq 1024)) "$work/mnt/f000/sub/file00001.bin" >/dev/null
rss=$(awk '/^VmHWM:/ { print int($2 / 1024) }' "/proc/$pid/status")
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
rate=$(awk -v n="$stubs" -v a="$t2" -v b="$t3" 'BEGIN { printf "%.0f", n / (b - a) }')
mkdir -p tests/bench/results
{
  echo "| measure | value |"
  echo "|---|---|"
  echo "| objects put straight into the bucket (1 KB, 32 threads), in $folders folders each with a subfolder | $objects in $(secs "$t0" "$t1") s |"
  echo "| Sync-CloudDrive of the whole drive (POST /v1/drives/probe/sync) | **$(secs "$t2" "$t3") s**, $rate stubs/s |"
  echo "| folders listed; folders made; stubs made; stub files in the cache | $listed; $made; $stubs; $on_disk |"
  echo "| service peak RSS (VmHWM) | $rss MiB |"
  echo "| a stub read through the mount after it | bytes identical |"
} | tee tests/bench/results/full-sync.md
[ "$stubs" -eq "$objects" ] && [ "$on_disk" -eq "$objects" ] || { echo "expected $objects stubs" >&2; exit 1; }
