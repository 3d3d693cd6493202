# Shared by the bench probes (memory.sh, streaming-recall.sh): the real service with one FUSE-mounted drive named
# "probe", on a bucket of its own. Sourced, not run. Set endpoint, ak and sk first, then:
#   probe_workspace NAME      a work folder ($work: cache, mnt, home; $sock) and a bucket name ($bucket)
#   (write the drive's policy to $work/policy.yaml)
#   probe_start               makes the bucket, starts the service ($pid), adds the drive, mounted at $work/mnt
#   probe_stop                removes the drive, stops the service, unmounts, removes $work (call it from a trap)
# and the helpers s3, api, now, stub PATH.

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
  dotnet .artifacts/service/GeoDrive.Service.dll --socket "$sock" --home "$work/home" --tick 1s >"$work/service.log" 2>&1 &
  pid=$!
  for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.1; done
  api -X POST http://geodrive/v1/drives -d "{\"name\":\"probe\",\"cachePath\":\"$work/cache\",\"mountPath\":\"$work/mnt\",\"endpoint\":\"$endpoint\",\"bucket\":\"$bucket\",\"accessKey\":\"$ak\",\"secretKey\":\"$sk\",\"policyPaths\":[\"$work/policy.yaml\"]}" >/dev/null
}

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
