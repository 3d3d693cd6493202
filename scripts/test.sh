#!/bin/bash
# Runs every test: xunit (engine, storage, state, policies, FUSE mount, module through a real
# PowerShell runspace, end-to-end through the service). Real parts: an S3 server on 127.0.0.1
# (moto; Ceph RGW where signatures matter), LiteDB files, FUSE mounts. Prints "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
bash scripts/install-deps.sh
results=.artifacts/test-results
rm -rf "$results"; mkdir -p "$results"
# Release, as the demo builds (scripts/build.sh): the demo's test then finds everything built, and the service the
# end-to-end tests start runs optimized code, as an administrator's does.
dotnet build engine/GeoDrive.slnx -c Release -nologo -v q -clp:ErrorsOnly
# Ceph first, before any test runs: creating a cluster (every CI run, as the session's daemons are killed
# when it ends) takes ~15 s of both cores, and the rate tests (throttles) running beside it missed their
# rates. The test assemblies then find it running.
bash scripts/s3/start-ceph-s3.sh >/dev/null
status=0
# Tests make their folders under /tmp/geodrive-test and remove them; what is left after the run is a bug.
mkdir -p /tmp/geodrive-test; started=$(mktemp); trap 'rm -f "$started"' EXIT
# The rate tests (throttles measured on the wire, [Trait("Category", "Rate")]) run last and alone: in the
# parallel run, beside the index's concurrency tests on two cores, they measured 1.5-1.8 MB/s for a
# 2 MB/s throttle. "Alone" means one assembly at a time too (-m:1): dotnet test runs a solution's test
# assemblies side by side, and the engine's throttle tests beside the mount's left 8.5 MB/s on the wire
# for a 10 MB/s throttle (CI, 2026-11-23). Arguments given to this script (e.g. a --filter of your own)
# run everything at once.
run_tests() { dotnet test engine/GeoDrive.slnx -c Release --no-build -nologo -v q --logger "trx" --results-directory "$results" "$@" || status=$?; }
if [ $# -eq 0 ]; then
  run_tests --filter "Category!=Rate"
  run_tests --filter "Category=Rate" -m:1
else
  run_tests "$@"
fi
python3 scripts/summarize-trx.py "$results" || status=1
# A test that leaves a dead FUSE mount behind is a bug; say so and clear it so the machine stays usable.
for m in $(grep -o ' /tmp/geodrive-test/[^ ]*' /proc/mounts || true); do
  if ! stat "$m" >/dev/null 2>&1; then echo "warning: a test left a dead mount behind: $m" >&2; umount -l "$m" || true; fi
done
left=$(find /tmp/geodrive-test -mindepth 1 -maxdepth 1 -newer "$started" | head -5)
if [ -n "$left" ]; then echo "warning: tests left folders behind in /tmp/geodrive-test, e.g.:" $left >&2; fi
exit $status
