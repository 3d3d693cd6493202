#!/bin/bash
# Installs libfuse 3.17 (libfuse3.so.4) beside Debian 12's libfuse 3.14, built from Debian's own source archive
# (the fuse3 source package of Debian 13, checked by its SHA-256), into /usr/local. GeoDrive's FUSE mount binds to it
# when present: from 3.17 an open can hand the kernel the cache file as a backing file (FUSE passthrough,
# docs/decisions/0034-fuse-passthrough.md). Without it the mount uses libfuse3.so.3 and serves every read itself.
# Idempotent; quiet when done. A failed download or build is reported and leaves the system as it was.
set -euo pipefail
version=3.17.2
sha256=3d932431ad94e86179e5265cddde1d67aa3bb2fb09a5bd35c641f86f2b5ed06f
url="http://deb.debian.org/debian/pool/main/f/fuse3/fuse3_${version}.orig.tar.gz"
[ -e "/usr/local/lib/x86_64-linux-gnu/libfuse3.so.$version" ] && exit 0

missing=()
for p in meson ninja-build gcc libc6-dev pkg-config; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi

work=$(mktemp -d /tmp/geodrive-libfuse.XXXXXX)
trap 'rm -rf "$work"' EXIT
if ! curl -fsS --max-time 120 -o "$work/src.tar.gz" "$url"; then
  echo "warning: could not fetch $url; the mount will use libfuse 3.14 (no passthrough)" >&2
  exit 0
fi
echo "$sha256  $work/src.tar.gz" | sha256sum -c --quiet
tar -xzf "$work/src.tar.gz" -C "$work"
cd "$work/fuse-$version"
# The library only: no utilities (fusermount3 and mount.fuse3 stay Debian's), examples, tests, udev rules or init script.
meson setup build --prefix=/usr/local -Dutils=false -Dexamples=false -Dtests=false -Duseroot=false >"$work/setup.log" 2>&1 ||
  { cat "$work/setup.log" >&2; exit 1; }
ninja -C build >"$work/build.log" 2>&1 || { tail -40 "$work/build.log" >&2; exit 1; }
ninja -C build install >"$work/install.log" 2>&1 || { tail -40 "$work/install.log" >&2; exit 1; }
ldconfig
echo "installed libfuse $version in /usr/local ($(ldconfig -p | grep -c 'libfuse3.so.4') entry for libfuse3.so.4)"
