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
dotnet build engine/GeoDrive.slnx -nologo -v q -clp:ErrorsOnly
status=0
dotnet test engine/GeoDrive.slnx --no-build -nologo -v q --logger "trx" --results-directory "$results" "$@" || status=$?
python3 scripts/summarize-trx.py "$results" || status=1
# A test that leaves a FUSE or loop mount behind is a bug; say so and clear it so the machine stays usable.
leftover=$(grep -o ' /tmp/geodrive-test/[^ ]*' /proc/mounts || true)
if [ -n "$leftover" ]; then
  echo "warning: mounts left behind by tests:$leftover" >&2
  for m in $leftover; do umount -l "$m" 2>/dev/null || true; done
fi
exit $status
