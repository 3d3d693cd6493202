#!/bin/bash
# Builds what the demo and an administrator run: the service (.artifacts/service), the PowerShell
# module (module/bin, loaded by ./GeoDrive.psd1) and our PowerShell host (.artifacts/pshost).
set -euo pipefail
cd "$(dirname "$0")/.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
dotnet publish engine/src/GeoDrive.Service -c Release -o .artifacts/service -nologo -v q
dotnet build module/src/GeoDrive.Commands -c Release -nologo -v q
dotnet publish module/host/GeoDrive.PSHost -c Release -o .artifacts/pshost -nologo -v q
echo "built: .artifacts/service/GeoDrive.Service, module/bin/GeoDrive.Commands.dll, .artifacts/pshost/GeoDrive.PSHost"
