#!/bin/bash
# Starts the moto S3 server (from the machine's Python) on 127.0.0.1:PORT in the background.
#   start-moto.sh PORT [PIDFILE]      waits until it answers; prints the endpoint
# moto is quick to start and fine for most tests; it checks no signatures (use Ceph RGW for that).
set -euo pipefail
PORT=${1:?usage: start-moto.sh PORT [PIDFILE]}
PIDFILE=${2:-/tmp/geodrive-moto-$PORT.pid}
if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then echo "moto already running: http://127.0.0.1:$PORT"; exit 0; fi
python3 -c "import moto.server" 2>/dev/null || { echo "error: python3 has no moto (pip install 'moto[server]')" >&2; exit 1; }
# moto_server.py: moto with a PUT's object and its metadata seen together (moto alone shows the object first).
nohup python3 "$(dirname "$0")/moto_server.py" -H 127.0.0.1 -p "$PORT" > "${PIDFILE%.pid}.log" 2>&1 &
echo $! > "$PIDFILE"
for _ in $(seq 150); do
  curl -fs "http://127.0.0.1:$PORT/" >/dev/null 2>&1 && { echo "moto s3 up: http://127.0.0.1:$PORT"; exit 0; }
  kill -0 "$(cat "$PIDFILE")" 2>/dev/null || break
  sleep 0.1
done
echo "error: moto did not start on port $PORT; log: ${PIDFILE%.pid}.log" >&2
exit 1
