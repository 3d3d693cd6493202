#!/bin/bash
# Memory probe (issue 13: "peak RSS ≤ 200 MB while moving a 1 GiB file; flat RSS over a 100,000-file upload").
# A measurement, not a test. On a fresh Ceph RGW of its own (port 7490, wiped at the end, as run.sh does) it runs
# the real service with one FUSE-mounted drive and measures the service's memory (/proc/PID/status):
#   1. a 1 GiB file written through the mount and uploaded (multipart): peak RSS (VmHWM, reset before);
#   2. that file stubbed, then recalled through the control API: peak RSS; the bytes checked;
#   3. 100,000 files of 1 KB written through the mount (100 folders of 1,000) and uploaded as they close:
#      RSS sampled every 2 s against the files uploaded so far, until every one is in the bucket;
#   4. a scan of every one's size, as `ls -l` or a backup agent makes it (find -printf %s: lookups, no opens):
#      RSS and the kernel's FUSE inodes after it.
#   bash tests/bench/memory.sh            # FILES=100000 FILE_KB=1 BIG_MB=1024 by default
# Prints a Markdown table and writes tests/bench/results/memory/{memory.md,rss.csv,rss.png}.
set -euo pipefail
cd "$(dirname "$0")/../.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
files=${FILES:-100000}
file_kb=${FILE_KB:-1}
big_mb=${BIG_MB:-1024}
out=tests/bench/results/memory
mkdir -p "$out"

source tests/bench/lib.sh
bench_ceph_start $((12 * 1024 * 1024 * 1024))
command -v gnuplot >/dev/null || { DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends gnuplot-nox >/dev/null; }
probe_workspace memory
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

cat > "$work/policy.yaml" <<EOF
apiVersion: geodrive/v1
kind: CloudDrivePolicy
metadata: { name: memory-probe }
spec:
  stubbing: { enabled: true, accessWait: 30d }
  upload: { settle: 0s }
  transfer: { uploadThreads: 16, restoreThreads: 16, multipart: { threshold: 64MiB, partSize: 16MiB, uploadThreads: 4, restoreThreads: 4 } }
EOF

cleanup() {
  probe_stop
  bash scripts/s3/stop-ceph-s3.sh --wipe >/dev/null 2>&1 || true
}
trap cleanup EXIT
probe_start

kib() { awk -v k="^$1:" '$0 ~ k { print $2 }' "/proc/$pid/status"; }
mib() { echo $(( $1 / 1024 )); }
status_field() { api "http://geodrive/v1/drives/probe/status" | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
# Polled, not awaited: the service has no event for "the bucket holds everything"; a probe may poll.
wait_uploaded() {
  while [ "$(status_field uploadedFiles)" -lt "$1" ] || [ "$(status_field uploadQueue)" -ne 0 ]; do sleep 0.5; done
}
rss_start=$(kib VmRSS)

# 1. A large file written through the mount and uploaded in parts.
echo 5 >"/proc/$pid/clear_refs"
t0=$(now)
dd if=/dev/urandom of="$work/mnt/big.bin" bs=1M count="$big_mb" status=none
tw=$(now)
wait_uploaded 1
t1=$(now)
hwm_upload=$(kib VmHWM)
# What the upload's hash pass costs (docs/decisions/0015-hash-before-sending.md): SHA-256 over the same cache file
# in 1 MiB reads, from the page cache as the service's pass finds a file just written (OpenSSL, as .NET's on Linux).
hash_s=$(python3 - "$work/cache/big.bin" <<'PY'
import hashlib, sys, time
t = time.perf_counter()
h = hashlib.sha256()
with open(sys.argv[1], "rb", buffering=0) as f:
    while chunk := f.read(1 << 20):
        h.update(chunk)
print(f"{time.perf_counter() - t:.2f}")
PY
)
expected=$(sha256sum <"$work/cache/big.bin" | cut -d' ' -f1)
stub big.bin

# 2. The same file recalled through the control API (Invoke-CloudRecall's route).
echo 5 >"/proc/$pid/clear_refs"
t2=$(now)
api -X POST http://geodrive/v1/drives/probe/files/recall -d '{"paths":["big.bin"],"literal":true}' >/dev/null
t3=$(now)
hwm_recall=$(kib VmHWM)
actual=$(sha256sum <"$work/cache/big.bin" | cut -d' ' -f1)
[ "$actual" = "$expected" ] || { echo "recalled bytes differ" >&2; exit 1; }
rm -f "$work/mnt/big.bin"

# 3. Many small files, uploaded as they close; RSS against files uploaded.
echo "seconds,files_written,files_uploaded,rss_mib" >"$out/rss.csv"
echo 5 >"/proc/$pid/clear_refs"
rss_before_small=$(kib VmRSS)
# The kernel's FUSE inodes (every FUSE mount on the machine): one per name the kernel holds, and libfuse a node for each.
fuse_inodes() { awk '$1 == "fuse_inode" { print $2 }' /proc/slabinfo; }
inodes_before=$(fuse_inodes)
base=$(status_field uploadedFiles)
progress=$work/written
echo 0 >"$progress"
t4=$(now)
python3 - "$work/mnt" "$files" "$file_kb" "$progress" <<'EOF' &
import os, sys
root, files, kb, progress = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
payload = os.urandom(kb * 1024)
for i in range(files):
    folder = os.path.join(root, f"d{i // 1000:03d}")
    if i % 1000 == 0:
        os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"f{i % 1000:03d}.bin"), "wb") as f:
        f.write(payload[:len(payload) - (i % 97)])
    if i % 500 == 499:
        with open(progress + ".tmp", "w") as p:
            p.write(str(i + 1))
        os.replace(progress + ".tmp", progress)
with open(progress, "w") as p:
    p.write(str(files))
EOF
writer=$!
while :; do
  uploaded=$(( $(status_field uploadedFiles) - base ))
  echo "$(secs "$t4" "$(now)"),$(cat "$progress"),$uploaded,$(mib "$(kib VmRSS)")" >>"$out/rss.csv"
  [ "$uploaded" -ge "$files" ] && break
  sleep 2
done
wait "$writer"
t5=$(now)
hwm_small=$(kib VmHWM)
rss_end=$(kib VmRSS)
inodes_end=$(fuse_inodes)

# 4. Every file's size asked for through the mount: the kernel looks up each name it no longer holds.
t6=$(now)
scanned=$(find "$work/mnt" -type f -printf '%s\n' | wc -l)
t7=$(now)
[ "$scanned" -eq "$files" ] || { echo "the scan found $scanned files, not $files" >&2; exit 1; }
rss_scan=$(kib VmRSS)
inodes_scan=$(fuse_inodes)

# RSS once a tenth, half and all of the files were uploaded (the first sample at or past each mark).
rss_at() { awk -F, -v n="$1" 'NR > 1 && $3 >= n { print $4; exit }' "$out/rss.csv"; }
r10=$(rss_at $((files / 10))); r50=$(rss_at $((files / 2))); r100=$(rss_at "$files")
# The RSS's slope from a tenth to all of the files (least squares over every sample): steadier than two samples of a
# collector's saw-tooth.
slope=$(awk -F, -v from=$((files / 10)) 'NR > 1 && $3 >= from { n++; sx += $3; sy += $4; sxx += $3 * $3; sxy += $3 * $4 }
  END { d = n * sxx - sx * sx; if (n < 2 || d == 0) print "–"; else printf "%.3f", (n * sxy - sx * sy) / d * 1024 * 1000 }' "$out/rss.csv")
gnuplot <<EOF
set terminal pngcairo size 900,500
set output "$out/rss.png"
set datafile separator ","
set title "GeoDrive service RSS while uploading $files files of $file_kb KB (written through the mount)"
set xlabel "files uploaded"
set ylabel "RSS (MiB)"
set yrange [0:*]
set key off
plot "$out/rss.csv" using 3:4 skip 1 with lines lw 2
EOF

{
  echo "| measure | value |"
  echo "|---|---|"
  echo "| service RSS when the drive was up (nothing moved yet) | $(mib "$rss_start") MiB |"
  echo "| ${big_mb} MiB file written through the mount (dd bs=1M) and uploaded (16 MiB parts, 4 threads): peak RSS (VmHWM) | **$(mib "$hwm_upload") MiB**, $(secs "$t0" "$t1") s |"
  echo "| that file: written in; in the bucket after the last write; a SHA-256 pass over it from the page cache | $(secs "$t0" "$tw") s; $(secs "$tw" "$t1") s; $hash_s s |"
  echo "| that file recalled through the control API (4 ranged GETs at a time): peak RSS | **$(mib "$hwm_recall") MiB**, $(secs "$t2" "$t3") s, bytes identical |"
  echo "| $files files of ${file_kb} KB written through the mount and uploaded as they closed | $(secs "$t4" "$t5") s ($(awk -v n="$files" -v a="$t4" -v b="$t5" 'BEGIN { printf "%.0f", n / (b - a) }') files/s) |"
  echo "| RSS before them, and once 10 % / 50 % / 100 % were uploaded | $(mib "$rss_before_small") → $r10 / $r50 / $r100 MiB |"
  echo "| peak RSS over those uploads (VmHWM); RSS at the end | $(mib "$hwm_small") MiB; $(mib "$rss_end") MiB |"
  echo "| RSS at 100 % ÷ RSS at 10 % | $(awk -v a="$r100" -v b="$r10" 'BEGIN { printf "%.2f", a / b }') |"
  echo "| RSS's slope from 10 % to 100 % (least squares over the samples) | $slope KiB per 1,000 files |"
  echo "| the kernel's FUSE inodes (/proc/slabinfo, every FUSE mount) before them; at the end | $inodes_before; $inodes_end |"
  echo "| then every file's size asked for through the mount (find -printf %s): time; RSS after; the kernel's FUSE inodes after | $(secs "$t6" "$t7") s; $(mib "$rss_scan") MiB; $inodes_scan |"
} | tee "$out/table.md"
