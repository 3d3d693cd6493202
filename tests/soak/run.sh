#!/bin/bash
# The long randomized crash run (at least 100 rounds of 1,000 operations, kills and outages included),
# against the real service, a FUSE mount and an S3 server on 127.0.0.1, in lanes: concurrent runs, each with
# its own seed, service, drive, bucket and S3 server, the rounds split among them (a round's time is mostly
# waiting on the service's timeouts during outages, so the machine has room for two). Writes the table of
# every lane to tests/soak/results/last-run.md. Replay a lane with GEODRIVE_CRASH_SEED=<seed> (printed at
# its start, and in the table).
# Usage: bash tests/soak/run.sh [rounds=100] [operations=1000] [kills=5] [lanes=2]
set -euo pipefail
cd "$(dirname "$0")/../.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
rounds="${1:-100}" operations="${2:-1000}" kills="${3:-5}" lanes="${4:-2}"
bash scripts/install-deps.sh
dotnet build engine/GeoDrive.slnx -nologo -v q -clp:ErrorsOnly
results="$PWD/tests/soak/results"
mkdir -p "$results"
rm -f "$results"/lane-*.md
started=$(date -u +%FT%TZ)
begun=$SECONDS

pids=()
for lane in $(seq 1 "$lanes"); do
  # Lane 1 takes the remainder, so that the lanes' rounds add up to the rounds asked for.
  share=$(( rounds / lanes + (lane == 1 ? rounds % lanes : 0) ))
  (
    export GEODRIVE_CRASH_ROUNDS="$share" GEODRIVE_CRASH_OPERATIONS="$operations" GEODRIVE_CRASH_KILLS="$kills"
    export GEODRIVE_CRASH_REPORT="$results/lane-$lane.md"
    dotnet test tests/GeoDrive.EndToEnd.Tests --no-build -nologo --filter "FullyQualifiedName~RandomizedCrashTests" \
      --logger "console;verbosity=normal" 2>&1 | sed -u "s/^/[lane $lane] /"
    exit "${PIPESTATUS[0]}"
  ) &
  pids+=($!)
done
status=0
# The lanes' tables joined: also when the run is stopped by hand, so it keeps every round it checked.
report() {
  {
    echo "# The long randomized crash run"
    echo
    passed=$(cat "$results"/lane-*.md 2>/dev/null | sed -n 's/^seed [0-9]*; \([0-9]*\) of .*/\1/p' | awk '{ n += $1 } END { print n + 0 }')
    echo "$rounds rounds of $operations operations ($kills kills each) planned in $lanes lanes: $passed rounds passed their checks in $(( (SECONDS - begun) / 60 )) min."
    for lane in $(seq 1 "$lanes"); do
      echo
      echo "## Lane $lane"
      echo
      cat "$results/lane-$lane.md" 2>/dev/null || echo "(no round checked)"
    done
    echo
    echo "Command: \`bash tests/soak/run.sh $rounds $operations $kills $lanes\`; started $started, exit $status."
    echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(uname -sr)."
    echo "S3 server: ${GEODRIVE_TEST_S3:-moto, one per lane}; commit $(git rev-parse --short HEAD)."
  } > "$results/last-run.md"
}
trap 'status=130; report; kill "${pids[@]}" 2>/dev/null || true' INT TERM
for pid in "${pids[@]}"; do
  wait "$pid" || status=$?
done
report
rm -f "$results"/lane-*.md
exit $status
