#!/bin/bash
# Installs the Debian packages GeoDrive's demo, tests and benchmarks need. Idempotent; quiet when done.
set -euo pipefail
PKGS=(fuse3 libfuse3-3 attr acl uuid-runtime curl ceph-mon ceph-osd radosgw ceph-common rclone systemd)
missing=()
for p in "${PKGS[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi
[ -e /dev/fuse ] || { echo "error: /dev/fuse is missing; GeoDrive's Linux front end needs FUSE (modprobe fuse)" >&2; exit 1; }
# libfuse 3.17 beside Debian's 3.14: the mount's reads of local files can then pass through to the cache file.
bash "$(dirname "$0")/install-libfuse.sh"
