# Registers a Windows Task Scheduler task that runs Invoke-Prewarm.ps1 at 06:00 on weekdays, as
# SYSTEM (the GeoDrive service's pipe is for Administrators). Run in an elevated pwsh. -WhatIf shows
# the task without registering it.
[CmdletBinding(SupportsShouldProcess)]
param(
    [string] $Drive = 'finance',
    [string] $Script = "$env:ProgramFiles\GeoDrive\samples\jobs\Invoke-Prewarm.ps1",
    [string] $TaskName = 'GeoDrive morning pre-warm'
)
$action = New-ScheduledTaskAction -Execute 'pwsh.exe' `
    -Argument "-NoProfile -NonInteractive -File `"$Script`" -Drive $Drive -Path Active"
$trigger = New-ScheduledTaskTrigger -Weekly -DaysOfWeek Monday, Tuesday, Wednesday, Thursday, Friday -At '06:00'
$principal = New-ScheduledTaskPrincipal -UserId 'SYSTEM' -LogonType ServiceAccount -RunLevel Highest
# StartWhenAvailable: a run missed while the machine was off runs once when it is back (like Persistent=true).
$settings = New-ScheduledTaskSettingsSet -StartWhenAvailable -ExecutionTimeLimit (New-TimeSpan -Hours 4) -MultipleInstances IgnoreNew

if ($PSCmdlet.ShouldProcess($TaskName, 'Register scheduled task')) {
    Register-ScheduledTask -TaskName $TaskName -TaskPath '\GeoDrive\' -Action $action -Trigger $trigger `
        -Principal $principal -Settings $settings -Description "Invoke-CloudRecall on drive $Drive before office hours" -Force
}
