#!/bin/bash
# What the policy repository's CI job runs (any CI: a failing exit code fails the build).
# GEODRIVE_REPO: a GeoDrive checkout with the module built (bash scripts/build.sh) for scripts/gdpwsh.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
geodrive="${GEODRIVE_REPO:-$(cd "$here/../../.." && pwd)}"
exec bash "$geodrive/scripts/gdpwsh" -NoProfile -File "$here/Test-Policies.ps1" "$@"
