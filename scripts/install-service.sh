#!/bin/bash
# Installs GeoDrive as a system service on Linux (docs/linux-service.md): the self-contained service in
# /usr/lib/geodrive, the PowerShell module in /usr/local/share/powershell/Modules/GeoDrive/<version>, and the
# systemd unit in /etc/systemd/system/geodrive.service. Run it again to upgrade: same result, and a running
# service is restarted on the new files. --uninstall removes those three and nothing else: the state
# (/var/lib/geodrive: drive definitions, credentials), every drive's cache folder and the buckets stay.
#
#   install-service.sh [--root DIR] [--service PATH] [--module PATH] [--enable] [--uninstall]
#
#   --root DIR      install under DIR instead of / (packaging, tests); systemctl is then left alone
#   --service PATH  the published service: a folder or geodrive-service-<v>-linux-x64.tar.gz
#                   (default: the newest in .artifacts/release, made by scripts/release.sh if there is none)
#   --module PATH   the module: a folder holding GeoDrive.psd1, or GeoDrive.<v>.nupkg (default: as --service)
#   --enable        also enable the unit and start it now (systemctl enable --now geodrive)
#   --uninstall     stop and disable the unit, remove the service, the module and the unit
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
ROOT="" SERVICE="" MODULE="" ENABLE=0 UNINSTALL=0
while [ $# -gt 0 ]; do
  case "$1" in
    --root) ROOT=$(realpath -m "$2"); shift 2 ;;
    --service) SERVICE=$(realpath "$2"); shift 2 ;;
    --module) MODULE=$(realpath "$2"); shift 2 ;;
    --enable) ENABLE=1; shift ;;
    --uninstall) UNINSTALL=1; shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error InstallArgumentInvalid: unknown argument '$1'. See: $0 --help" >&2; exit 2 ;;
  esac
done
[ "$ROOT" = / ] && ROOT=""

LIB=$ROOT/usr/lib/geodrive
MODULES=$ROOT/usr/local/share/powershell/Modules/GeoDrive
UNIT=$ROOT/etc/systemd/system/geodrive.service
# systemctl only for the machine itself, and only where systemd runs it (sd_booted: /run/systemd/system).
live() { [ -z "$ROOT" ] && [ -d /run/systemd/system ]; }

if [ "$(id -u)" -ne 0 ] && [ -z "$ROOT" ]; then
  echo "error InstallNotRoot: installing into / needs root. Run it with sudo, or give --root DIR." >&2; exit 1
fi

if [ $UNINSTALL -eq 1 ]; then
  if live && systemctl cat geodrive.service >/dev/null 2>&1; then
    systemctl disable --now geodrive.service || true
  fi
  rm -f "$UNIT"; rm -rf "$LIB" "$MODULES"
  live && systemctl daemon-reload || true
  echo "uninstalled: $LIB, $MODULES, $UNIT (left alone: ${ROOT}/var/lib/geodrive, cache folders, buckets)"
  exit 0
fi

work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

# The release's artifacts, made once if there are none.
newest() { ls -t $1 2>/dev/null | head -1; }
if [ -z "$SERVICE" ]; then
  SERVICE=$(newest "$REPO/.artifacts/release/geodrive-service-*-linux-x64.tar.gz")
  [ -n "$SERVICE" ] || { bash scripts/release.sh --only service-linux-x64 >&2; SERVICE=$(newest "$REPO/.artifacts/release/geodrive-service-*-linux-x64.tar.gz"); }
fi
if [ -z "$MODULE" ]; then
  MODULE=$(newest "$REPO/.artifacts/release/GeoDrive.*.nupkg")
  [ -n "$MODULE" ] || { bash scripts/release.sh --only module >&2; MODULE=$(newest "$REPO/.artifacts/release/GeoDrive.*.nupkg"); }
fi

# The service: a folder, or the release's tarball (one folder inside).
case "$SERVICE" in
  *.tar.gz) mkdir "$work/service"; tar -xzf "$SERVICE" -C "$work/service"; SERVICE=$(dirname "$(find "$work/service" -name GeoDrive.Service -type f | head -1)") ;;
esac
[ -x "$SERVICE/GeoDrive.Service" ] || { echo "error InstallServiceNotFound: no executable GeoDrive.Service in '$SERVICE'. Make one with scripts/release.sh, or give --service." >&2; exit 1; }

# The module: a folder with GeoDrive.psd1, or the Gallery package (a zip; NuGet's own parts are dropped,
# as Install-PSResource drops them).
case "$MODULE" in
  *.nupkg)
    mkdir "$work/module"
    python3 - "$MODULE" "$work/module" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for n in z.namelist():
        if n.endswith(".nuspec") or n in ("[Content_Types].xml",) or n.startswith(("_rels/", "package/")): continue
        z.extract(n, sys.argv[2])
PY
    MODULE=$work/module ;;
esac
[ -f "$MODULE/GeoDrive.psd1" ] || { echo "error InstallModuleNotFound: no GeoDrive.psd1 in '$MODULE'. Make the package with scripts/release.sh, or give --module." >&2; exit 1; }
VERSION=$(sed -n "s/^ *ModuleVersion *= *'\([^']*\)'.*/\1/p" "$MODULE/GeoDrive.psd1")
[ -n "$VERSION" ] || { echo "error InstallModuleNotFound: '$MODULE/GeoDrive.psd1' names no ModuleVersion." >&2; exit 1; }

# Each part is put next to its place and swapped in with one rename, so a re-run or an interrupted run
# never leaves a half-copied service behind.
replace_dir() { # SOURCE TARGET
  mkdir -p "$(dirname "$2")"; rm -rf "$2.new" "$2.old"
  mkdir -p "$2.new"; cp -R --preserve=mode,timestamps "$1/." "$2.new/"
  chmod -R u+rwX,go+rX,go-w "$2.new"
  [ -e "$2" ] && mv "$2" "$2.old"; mv "$2.new" "$2"; rm -rf "$2.old"
}
replace_dir "$SERVICE" "$LIB"
mkdir -p "$LIB/docs"; cp "$REPO/docs/linux-service.md" "$LIB/docs/linux-service.md"
replace_dir "$MODULE" "$MODULES/$VERSION"
mkdir -p "$(dirname "$UNIT")"
install -m 0644 "$REPO/packaging/linux/geodrive.service" "$UNIT.new" && mv "$UNIT.new" "$UNIT"
echo "installed: service $LIB, module $MODULES/$VERSION, unit $UNIT"

if live; then
  systemctl daemon-reload
  if [ $ENABLE -eq 1 ]; then systemctl enable --now geodrive.service
  elif systemctl is-active --quiet geodrive.service; then systemctl restart geodrive.service
  else echo "start it with: systemctl enable --now geodrive   (logs: journalctl -u geodrive)"; fi
fi
