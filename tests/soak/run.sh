#!/bin/bash
# The long randomized crash run (at least 100 rounds of 1,000 operations, kills and outages included),
# against the real service, a FUSE mount and an S3 server on 127.0.0.1. Writes its table to
# tests/soak/results/last-run.md. Replay a failure with GEODRIVE_CRASH_SEED=<seed> (printed at the start).
# Usage: bash tests/soak/run.sh [rounds] [operations] [kills]
set -euo pipefail
cd "$(dirname "$0")/../.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
bash scripts/install-deps.sh
dotnet build engine/GeoDrive.slnx -nologo -v q -clp:ErrorsOnly
mkdir -p tests/soak/results
export GEODRIVE_CRASH_ROUNDS="${1:-100}" GEODRIVE_CRASH_OPERATIONS="${2:-1000}" GEODRIVE_CRASH_KILLS="${3:-5}"
export GEODRIVE_CRASH_REPORT="$PWD/tests/soak/results/last-run.md"
started=$(date -u +%FT%TZ)
status=0
dotnet test tests/GeoDrive.EndToEnd.Tests --no-build -nologo --filter "FullyQualifiedName~RandomizedCrashTests" \
  --logger "console;verbosity=normal" || status=$?
{
  echo
  echo "Command: \`bash tests/soak/run.sh $GEODRIVE_CRASH_ROUNDS $GEODRIVE_CRASH_OPERATIONS $GEODRIVE_CRASH_KILLS\`; started $started, exit $status."
  echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(uname -sr)."
  echo "S3 server: ${GEODRIVE_TEST_S3:-moto}; commit $(git rev-parse --short HEAD)."
} >> "$GEODRIVE_CRASH_REPORT"
exit $status
