#!/bin/bash
# Makes a release into .artifacts/release/ (docs/linux-service.md, "Packages"):
#   GeoDrive.<v>.nupkg                         the PowerShell module in the PowerShell Gallery's format
#                                              (Publish-PSResource -NupkgPath, or Install-PSResource from a local repository)
#   geodrive-service-<v>-linux-x64.tar.gz      the service, self-contained, with its systemd unit
#   geodrive-service-<v>-win-x64.zip           the service, self-contained (docs/windows.md)
#   SHA256SUMS                                 sha256sum -c SHA256SUMS
# <v> is GeoDrive.psd1's ModuleVersion; the service is built with the same version.
#
#   release.sh [--out DIR] [--only module|service-linux-x64|service-win-x64]...
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
OUT=$REPO/.artifacts/release
PARTS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT=$(realpath -m "$2"); shift 2 ;;
    --only) PARTS+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error ReleaseArgumentInvalid: unknown argument '$1'. See: $0 --help" >&2; exit 2 ;;
  esac
done
[ ${#PARTS[@]} -gt 0 ] || PARTS=(module service-linux-x64 service-win-x64)
VERSION=$(sed -n "s/^ *ModuleVersion *= *'\([^']*\)'.*/\1/p" GeoDrive.psd1)
[ -n "$VERSION" ] || { echo "error ReleaseVersionMissing: GeoDrive.psd1 names no ModuleVersion." >&2; exit 1; }
mkdir -p "$OUT"
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/geodrive-release.XXXXXX"); trap 'rm -rf "$STAGE"' EXIT

module() {
  # Built into the stage, never into module/bin, which the repository's own manifest (and running tests) load.
  local root=$STAGE/module/GeoDrive
  dotnet build module/src/GeoDrive.Commands -c Release -nologo -v q "-clp:ErrorsOnly;NoSummary" -p:Version="$VERSION" \
    -p:OutputPath="$STAGE/module/build/" -p:AppendTargetFrameworkToOutputPath=false
  # The module's folder as an administrator gets it: the manifest at its root and the paths it names.
  mkdir -p "$root/module/bin/en-US" "$root/module/dsc"
  cp GeoDrive.psd1 "$root/"
  cp module/GeoDrive.Format.ps1xml "$root/module/"
  cp module/dsc/* "$root/module/dsc/"
  cp "$STAGE"/module/build/*.dll "$root/module/bin/"
  cp "$STAGE"/module/build/en-US/* "$root/module/bin/en-US/"
  python3 scripts/release/module-nuspec.py "$root/GeoDrive.psd1" "$VERSION" > "$STAGE/module/GeoDrive.nuspec"
  # dotnet pack of a nuspec: NuGet's own writer makes the package (the OPC parts PowerShellGet expects).
  cat > "$STAGE/module/pack.csproj" <<'XML'
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>net10.0</TargetFramework>
    <IncludeBuildOutput>false</IncludeBuildOutput>
    <!-- A module is not a library: assemblies outside lib/ and scripts outside tools/ are its layout. -->
    <NoWarn>$(NoWarn);NU5100;NU5110;NU5111;NU5128</NoWarn>
  </PropertyGroup>
</Project>
XML
  dotnet pack "$STAGE/module/pack.csproj" -nologo -v q -clp:ErrorsOnly -o "$OUT" \
    -p:NuspecFile="$STAGE/module/GeoDrive.nuspec" -p:NuspecBasePath="$root" -p:PackageId=GeoDrive -p:PackageVersion="$VERSION"
  echo "made $OUT/GeoDrive.$VERSION.nupkg"
}

service() { # RID
  local rid=$1 name=geodrive-service-$VERSION-$1
  local dir=$STAGE/$rid/$name
  dotnet publish engine/src/GeoDrive.Service -c Release -r "$rid" --self-contained -nologo -v q -clp:ErrorsOnly \
    -p:Version="$VERSION" -p:DebugType=none -o "$dir"
  rm -f "$dir"/*.staticwebassets.endpoints.json
  if [ "$rid" = win-x64 ]; then
    rm -f "$OUT/$name.zip"
    (cd "$STAGE/$rid" && python3 -c 'import shutil,sys; shutil.make_archive(sys.argv[1], "zip", ".", sys.argv[2])' "$OUT/$name" "$name")
    echo "made $OUT/$name.zip"
  else
    cp packaging/linux/geodrive.service docs/linux-service.md "$dir/"
    tar -C "$STAGE/$rid" --owner=0 --group=0 --numeric-owner -czf "$OUT/$name.tar.gz" "$name"
    echo "made $OUT/$name.tar.gz"
  fi
}

for part in "${PARTS[@]}"; do
  case "$part" in
    module) module ;;
    service-linux-x64) service linux-x64 ;;
    service-win-x64) service win-x64 ;;
    *) echo "error ReleaseArgumentInvalid: unknown part '$part' (module, service-linux-x64, service-win-x64)." >&2; exit 2 ;;
  esac
done
# Checksums of every artifact of this version in the folder, whichever parts this run made.
(cd "$OUT" && shopt -s nullglob && sha256sum GeoDrive."$VERSION".nupk[g] geodrive-service-"$VERSION"-*.{tar.gz,zip} > SHA256SUMS)
echo "checksums: $OUT/SHA256SUMS"
