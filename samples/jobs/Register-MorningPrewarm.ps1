# The same morning pre-warm as morning-prewarm.yaml, registered from PowerShell instead of a policy.
# The service runs it at 06:00 on weekdays, one job at a time per drive; a run missed while the
# service was down runs once when it starts. Run with -WhatIf to see what would be registered.
[CmdletBinding(SupportsShouldProcess)]
param(
    [string] $Drive = 'finance',
    [string] $TimeZone
)
if (-not (Get-Module GeoDrive)) { Import-Module GeoDrive -ErrorAction Stop }

$job = @{
    Drive         = $Drive
    Name          = 'morning-prewarm'
    Path          = 'Active', 'Projects/*/current'
    Recurse       = $true
    Schedule      = '0 6 * * 1-5'
    ThrottleLimit = 16
}
if ($TimeZone) { $job.TimeZone = $TimeZone }
Register-CloudRecallJob @job -WhatIf:$WhatIfPreference

# Later: how did it go?
#   Get-CloudRecallJob -Drive finance -Name morning-prewarm | Format-List Name, NextRun, LastRun, Files, Bytes, Failures, LastResult, LastMessage
# And to remove it:
#   Unregister-CloudRecallJob -Drive finance -Name morning-prewarm
