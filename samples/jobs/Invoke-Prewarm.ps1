# Pre-warm a drive from the operating system's scheduler (systemd timer, Task Scheduler) instead of
# a GeoDrive recall job: Invoke-CloudRecall, the same recall the service's jobs use. Exits 1 when any
# file failed, so the scheduler shows the run as failed; the summary goes to the journal / task history.
param(
    [string] $Drive = 'finance',
    [string[]] $Path = @('Active'),
    [int] $ThrottleLimit = 16
)
$ErrorActionPreference = 'Stop'
Import-Module GeoDrive

$result = Invoke-CloudRecall -Drive $Drive -Path $Path -Recurse -ThrottleLimit $ThrottleLimit -Confirm:$false -ErrorAction Continue
"{0}: {1} files, {2} bytes recalled in {3} s, {4} failed" -f $result.Drive, $result.Files, $result.Bytes, $result.Seconds, $result.Failures
if ($result.Failures -gt 0) { exit 1 }
