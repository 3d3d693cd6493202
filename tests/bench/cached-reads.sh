#!/bin/bash
# What FUSE passthrough could give at most (issue 13): reads of files whose bytes are local, through the mount
# (each read a round trip to the service, which reads the cache file) against the same cache files read
# straight, as a passthrough open would have the kernel do. Both from a cold page cache, with the same readers.
# Uses the demo's drive (scripts/demo.sh; its S3 server is not asked: the files are local and stay so).
#   bash tests/bench/cached-reads.sh [files=300] [size-KB=1024] [readers=16]
# Prints one line per way: seconds, files/s, MB/s and the CPU seconds of the service and of the whole machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
files=${1:-300} kb=${2:-1024} readers=${3:-16}
demo=/tmp/geodrive-demo
bash scripts/demo.sh >/dev/null
trap 'bash scripts/demo.sh stop >/dev/null 2>&1 || true' EXIT
mnt=$demo/mnt/cached-reads cache=$demo/cache/cached-reads
mkdir -p "$mnt"
for i in $(seq -w 1 "$files"); do head -c $((kb * 1024)) /dev/urandom > "$mnt/f$i.bin"; done
sync
service=$(pgrep -f "GeoDrive.Service --socket $demo" | head -1)
# Uploaded first, so that no upload runs beside the reads (the demo's policy settles in 2 s).
export GEODRIVE_SOCKET=$demo/geodrive.sock
until bash scripts/gdpwsh -NoProfile -Command "Import-Module ./GeoDrive.psd1; Get-CloudFile -Drive demo -Path 'cached-reads/**' | ForEach-Object { \$_.State }" \
    | sort | uniq -c | tee /dev/stderr | grep -qx " *$files Cached"; do sleep 2; done

cpu_of() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
machine() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
measure() {
  local way=$1 folder=$2
  echo 3 > /proc/sys/vm/drop_caches
  local s0 m0 t0 t1
  s0=$(cpu_of "$service") m0=$(machine) t0=$(date +%s.%N)
  ls "$folder"/*.bin | xargs -P "$readers" -n 8 cat > /dev/null
  t1=$(date +%s.%N)
  awk -v way="$way" -v t="$t1" -v t0="$t0" -v n="$files" -v kb="$kb" -v hz="$(getconf CLK_TCK)" \
      -v s="$(( $(cpu_of "$service") - s0 ))" -v m="$(( $(machine) - m0 ))" \
      'BEGIN { t -= t0; printf "%-12s %6.2f s %8.1f files/s %8.1f MB/s  service CPU %5.2f s  machine CPU %5.2f s\n", way, t, n / t, n * kb * 1024 / 1e6 / t, s / hz, m / hz }'
}
echo "$files files of $kb KB, $readers readers, cold page cache each time ($(nproc) cores)"
for round in 1 2; do
  measure "through FUSE" "$mnt"
  measure "cache file" "$cache"
done
