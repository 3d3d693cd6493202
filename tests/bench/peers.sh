#!/bin/bash
# Peers probe: the time from an upload's completion on one site to its stub's appearance on the other, with two
# services on this machine sharing one bucket, each telling the other of its changes (docs/decisions/0020-peers-told-of-changes.md).
# A measurement, not a test. Site "east" writes FILES files of 1 KB one at a time through its mount into a folder the
# "west" never listed (updateWait 1h: only a notice can show them there); for each, the completion is the east's
# Upload event (the service's clock) and the appearance is the stub file showing in the west's cache folder (polled
# every millisecond from outside, never through the west's mount).
#   bash tests/bench/peers.sh                # FILES=50, moto on a free port
#   BENCH_S3=ceph bash tests/bench/peers.sh  # the benchmark's own Ceph RGW on 7490 (wiped at the end)
# Prints a Markdown table; tests/bench/results/peers.md keeps a run.
set -euo pipefail
cd "$(dirname "$0")/../.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
files=${FILES:-50}

source tests/bench/lib.sh
if [ "${BENCH_S3:-moto}" = ceph ]; then
  bench_ceph_start $((2 * 1024 * 1024 * 1024))
  stop_s3() { bash scripts/s3/stop-ceph-s3.sh --wipe >/dev/null 2>&1 || true; }
else
  flock /tmp/geodrive-build.lock bash scripts/build.sh >/dev/null
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  bash scripts/s3/start-moto.sh "$port" /tmp/geodrive-bench-peers-moto.pid >/dev/null
  stop_s3() { bash scripts/s3/stop-moto.sh /tmp/geodrive-bench-peers-moto.pid >/dev/null 2>&1 || true; }
  endpoint=http://127.0.0.1:$port ak=bench sk=bench-secret
fi
work=$(mktemp -d /tmp/geodrive-peers.XXXXXX)
bucket=peers-$(date +%s)
pids=()
cleanup() {
  for site in east west; do
    curl -sS --unix-socket "$work/$site/gd.sock" -X DELETE "http://geodrive/v1/drives/$site" >/dev/null 2>&1 || true
  done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  umount -l "$work/east/mnt" "$work/west/mnt" 2>/dev/null || true
  rm -rf "$work"
  stop_s3
}
trap cleanup EXIT
s3 -X PUT "$endpoint/$bucket" >/dev/null
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
east_port=$(free_port) west_port=$(free_port)
# The peer key lives in this shell only; it is sent to each service once, over its root-only socket, and never printed.
peer_key=$(head -c 32 /dev/urandom | base64)
cat > "$work/policy.yaml" <<YAML
apiVersion: geodrive/v1
kind: CloudDrivePolicy
metadata: { name: peers-probe }
spec:
  stubbing: { enabled: true, accessWait: 30d }
  upload: { settle: 0s, updateWait: 1h }
YAML
start_site() { # name listen-port peer-port
  local site=$1 dir=$work/$1
  mkdir -p "$dir/cache" "$dir/mnt" "$dir/home"
  dotnet .artifacts/service/GeoDrive.Service.dll --socket "$dir/gd.sock" --home "$dir/home" --tick 1s >"$dir/service.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 200); do [ -S "$dir/gd.sock" ] && break; sleep 0.1; done
  curl -sSf --unix-socket "$dir/gd.sock" -H 'Content-Type: application/json' -X POST http://geodrive/v1/drives -d @- >/dev/null <<JSON
{"name":"$site","cachePath":"$dir/cache","mountPath":"$dir/mnt","endpoint":"$endpoint","bucket":"$bucket","accessKey":"$ak","secretKey":"$sk",
 "policyPaths":["$work/policy.yaml"],"peers":["http://127.0.0.1:$3"],"peerListen":"127.0.0.1:$2","peerKey":"$peer_key"}
JSON
}
start_site east "$east_port" "$west_port"
start_site west "$west_port" "$east_port"
mkdir -p "$work/east/mnt/bench"

python3 - "$work" "$files" <<'PY'
import json, os, socket, statistics, sys, time, http.client
from datetime import datetime
work, files = sys.argv[1], int(sys.argv[2])

class Unix(http.client.HTTPConnection):
    def __init__(self, path): super().__init__("geodrive"); self.path = path
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); self.sock.connect(self.path)

def upload_time(path, deadline):
    # The east's Upload event of the file: the moment its upload was verified (the service's UTC clock).
    while time.time() < deadline:
        c = Unix(f"{work}/east/gd.sock")
        c.request("POST", "/v1/drives/east/events/query", json.dumps({"kinds": ["Upload"], "paths": [path]}), {"Content-Type": "application/json"})
        events = json.loads(c.getresponse().read())
        c.close()
        if events:
            return datetime.fromisoformat(events[0]["time"].replace("Z", "+00:00")).timestamp()
        time.sleep(0.02)
    raise SystemExit(f"{path}: no Upload event on the east")

lat = []
for i in range(files):
    name = f"bench/f{i:03d}.bin"
    with open(f"{work}/east/mnt/{name}", "wb") as f:
        f.write(os.urandom(1024))
    stub, deadline = f"{work}/west/cache/{name}", time.time() + 30
    while not os.path.exists(stub):
        if time.time() > deadline:
            raise SystemExit(f"{name}: no stub on the west within 30 s")
        time.sleep(0.001)
    seen = time.time()
    lat.append(seen - upload_time(name, time.time() + 30))
first = lat[0]
worst = max(range(files), key=lambda i: lat[i])
lat.sort()
ms = lambda s: f"{s * 1000:.0f} ms"
print(f"| files (1 KB, one at a time, into a folder the west never listed) | {files} |")
print(f"| upload done on the east -> stub in the west's cache: median | **{ms(statistics.median(lat))}** |")
print(f"| 90th percentile; max | {ms(lat[int(0.9 * (len(lat) - 1))])}; {ms(lat[-1])} |")
print(f"| min | {ms(lat[0])} |")
print(f"| the first file (the west's listener and HTTP connection new, its folder made); the slowest file | {ms(first)}; file {worst + 1} |")
PY
echo "| stubs in the west's cache | $(find "$work/west/cache/bench" -type f | wc -l) |"
