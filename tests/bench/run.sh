#!/bin/bash
# The transfer benchmark in one command (issue 4). Generates the datasets, starts a real S3 server
# (Ceph RGW, its own instance on port 7490; BENCH_S3=moto for a quick look), builds the service and
# the harness, and measures GeoDrive, rclone and a raw AWSSDK.S3 client on that server in one run.
#   bash tests/bench/run.sh [--scale smoke|medium|full] [--threads 8,16,64] [--multipart-threads 2,4] [--rounds 3]
#   bash tests/bench/run.sh --probe latency [--round-trips 1,20] [--clients rclone-mount,geodrive]
#                           [--workloads upload,restore,mixed-50-50,mixed-20-80,mixed-80-20] [--clients raw-sdk,rclone,rclone-mount,geodrive] [--datasets 10KB,100KB]
# Writes tests/bench/results/<scale>/: results.md (the table), results.csv, run.log, a .png per workload.
set -euo pipefail
cd "$(dirname "$0")/../.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
scale=medium probe="" rounds=1
for ((i = 1; i <= $#; i++)); do
  [ "${!i}" = --scale ] && { j=$((i + 1)); scale=${!j}; }
  [ "${!i}" = --probe ] && { j=$((i + 1)); probe=${!j}; }
  [ "${!i}" = --rounds ] && { j=$((i + 1)); rounds=${!j}; }
done
out=tests/bench/results/${probe:-$scale}
mkdir -p "$out"

bash scripts/install-deps.sh
command -v gnuplot >/dev/null || { DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends gnuplot-nox >/dev/null; }
bash scripts/build.sh >/dev/null
dotnet build tests/bench/GeoDrive.Bench -c Release -o .artifacts/bench -nologo -v q -clp:ErrorsOnly

# The benchmark's files (the datasets, GeoDrive's cache, rclone's VFS cache, downloads, the mounts) live on a journaled
# ext4 volume of its own, a loop file made fresh per run, as a deployed cache would. This machine's root file system has
# no journal, and ext4 without one checks each free inode it considers at a create for a recent delete
# (recently_deleted, reading the inode table): that took half of the service's CPU per 10 KB upload, and every client
# that creates files paid it (tests/bench/README.md). With --work DIR the run uses DIR as it is.
work="" volume="" stop_s3=true
for ((i = 1; i <= $#; i++)); do [ "${!i}" = --work ] && { j=$((i + 1)); work=${!j}; }; done
if [ -z "$work" ]; then
  work=/tmp/geodrive-bench volume=/tmp/geodrive-bench-volume.img
  if mountpoint -q "$work"; then umount -l "$work"; fi
  rm -rf "$work" "$volume" && mkdir -p "$work"
  truncate -s 24G "$volume" && mkfs.ext4 -q -F -m 0 "$volume" && mount -o loop,discard "$volume" "$work"
fi
cleanup() {
  eval "$stop_s3"
  if [ -n "$volume" ]; then umount -l "$work" 2>/dev/null || true; rm -f "$volume"; fi
}
trap cleanup EXIT

# One dataset and one client at a time, each on a fresh server: the memstore OSD fills up over a whole full-scale run
# (seen: "1 full osd" during the second dataset, which then hangs every PUT), as deleted objects are not
# given back at once. The parts' CSVs are joined into one table and one plot per workload at the end.
datasets=$(dotnet .artifacts/bench/GeoDrive.Bench.dll --list-datasets "$@")
# A probe (--probe latency) is one part of its own, on one server.
[ -n "$probe" ] && datasets=$probe
# --rounds N measures every dataset N times; round r takes the clients in turn starting one client further on (the
# harness's --list-clients), and the report gives medians over the rounds (tests/bench/README.md).
[ -n "$probe" ] && rounds=1
# Each client gets its own fresh server too: on one server the clients that went last found it slower (probably the
# memstore holding the earlier clients' deleted objects), and that moved a large file's ratio from 0.52 to 2.76 between two
# rounds of one build. A probe measures its clients side by side on one server.
clients_in_turn() { if [ -n "$probe" ]; then echo all; else dotnet .artifacts/bench/GeoDrive.Bench.dll --list-clients "$@"; fi; }
started=$(date -u)
parts=()
rm -f "$out/failed-parts.log"
for round in $(seq 1 "$rounds"); do
for dataset in $datasets; do
for client in $(clients_in_turn "$@" --round "$round"); do
  part=$out/parts/$dataset
  [ "$rounds" -gt 1 ] && part=$part-round$round
  [ "$client" != all ] && part=$part-$client
  rm -rf "$part" && mkdir -p "$part"
  if [ "${BENCH_S3:-ceph}" = moto ]; then
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    bash scripts/s3/start-moto.sh "$port" /tmp/geodrive-bench-moto.pid >/dev/null
    stop_s3="bash scripts/s3/stop-moto.sh /tmp/geodrive-bench-moto.pid"
    endpoint=http://127.0.0.1:$port; export S3_ACCESS_KEY=bench S3_SECRET_KEY=bench-secret
  else
    # Its own cluster, fresh, apart from the tests' one on 7480.
    # BENCH_S3_PORT and BENCH_CEPH_DIR let two benchmarks run side by side (each wipes its own cluster).
    export CEPH_S3_DIR=${BENCH_CEPH_DIR:-/tmp/geodrive-bench-ceph} S3_PORT=${BENCH_S3_PORT:-7490} MEMSTORE_BYTES=$((12 * 1024 * 1024 * 1024))
    export MON_PORT_V2=$((S3_PORT - 4180)) MON_PORT_V1=$((14289 - S3_PORT))
    bash scripts/s3/start-ceph-s3.sh --fresh >/dev/null
    stop_s3="bash scripts/s3/stop-ceph-s3.sh --wipe >/dev/null 2>&1 || true"
    endpoint=http://127.0.0.1:$S3_PORT; export S3_ACCESS_KEY=${S3_ACCESS_KEY:-test} S3_SECRET_KEY=${S3_SECRET_KEY:-testsecret}
  fi
  { echo "command: bash tests/bench/run.sh $*"; echo "server: ${BENCH_S3:-ceph} at $endpoint"; date -u; } > "$part/run.log"
  only=(); [ "$client" != all ] && only=(--clients "$client")
  # A part that stops (the memstore OSD has held every PUT now and then: the harness gives up after 2 min) is left out
  # of the table, said so in run.log, and the run goes on with the next part on a fresh server.
  if ! dotnet .artifacts/bench/GeoDrive.Bench.dll --endpoint "$endpoint" --service .artifacts/service/GeoDrive.Service.dll --work "$work" "$@" --datasets "$dataset" "${only[@]}" --round "$round" --out "$part" | tee -a "$part/run.log"; then
    echo "part $dataset (round $round, ${client/all/every client}) stopped: left out of the table (its run.log says why)" | tee -a "$out/failed-parts.log"
  fi
  if [ "${BENCH_S3:-ceph}" = moto ]; then bash scripts/s3/stop-moto.sh /tmp/geodrive-bench-moto.pid; else bash scripts/s3/stop-ceph-s3.sh --wipe >/dev/null 2>&1 || true; fi
  [ -f "$part/results.csv" ] && parts+=("$part/results.csv")
done
done
done
if [ -n "$probe" ]; then
  cp "$out/parts/$probe/$probe.md" "$out/$probe.md"
  { echo "command: bash tests/bench/run.sh $*"; echo "server: ${BENCH_S3:-ceph}"; echo "started: $started"; echo "finished: $(date -u)"; echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"; } > "$out/run.log"
  cat "$out/$probe.md" >> "$out/run.log"
  exit 0
fi
{ echo "command: bash tests/bench/run.sh $*"; echo "server: ${BENCH_S3:-ceph}, a fresh one per dataset, client and round"; echo "started: $started"; echo "finished: $(date -u)"; echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"; echo "files on: $work, $(findmnt -no FSTYPE,SOURCE -T "$work" | xargs)${volume:+ (a journaled loop volume)}"; } > "$out/run.log"
[ -f "$out/failed-parts.log" ] && cat "$out/failed-parts.log" >> "$out/run.log"
[ ${#parts[@]} -gt 0 ] || { echo "no part finished: no table"; exit 1; }
for csv in "${parts[@]}"; do grep -E '^  (raw-sdk|rclone|geodrive) ' "$(dirname "$csv")/run.log" || true; done >> "$out/run.log"
dotnet .artifacts/bench/GeoDrive.Bench.dll --report "$(IFS=,; echo "${parts[*]}")" --out "$out" | tee -a "$out/run.log"
