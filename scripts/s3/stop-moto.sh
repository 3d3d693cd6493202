#!/bin/bash
# Stops a moto server started by start-moto.sh: stop-moto.sh PIDFILE
set -euo pipefail
PIDFILE=${1:?usage: stop-moto.sh PIDFILE}
[ -f "$PIDFILE" ] || exit 0
PID=$(cat "$PIDFILE")
kill "$PID" 2>/dev/null || true
for _ in $(seq 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
kill -9 "$PID" 2>/dev/null || true
rm -f "$PIDFILE"
