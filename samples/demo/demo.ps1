<#
.SYNOPSIS
    Walks one file through GeoDrive's life: write -> upload -> stub -> recall, printing each state.
.DESCRIPTION
    Run by scripts/demo.sh against a running service. Works in pwsh 7.4+ and in GeoDrive's own
    host (which has only the core cmdlets, hence the .NET calls for file I/O and output).
    The secret key comes from the environment (S3_SECRET_KEY), never from the command line.
#>
param(
    [Parameter(Mandatory)] [string] $Endpoint,
    [Parameter(Mandatory)] [string] $CachePath,
    [Parameter(Mandatory)] [string] $MountPath,
    [string] $PolicyPath,
    [string] $Bucket = 'demo',
    [string] $Name = 'demo'
)
$ErrorActionPreference = 'Stop'
Import-Module ([IO.Path]::Combine($PSScriptRoot, '..', '..', 'GeoDrive.psd1'))

function Say([string] $text) { [Console]::WriteLine($text) }
function Show-State([string] $label) {
    $f = Get-CloudFile -Drive $Name -Path report.txt
    Say ("  {0,-28} state={1,-9} size={2}" -f $label, $f.State, $f.Size)
    $f
}

$secret = [System.Net.NetworkCredential]::new('', $env:S3_SECRET_KEY).SecurePassword
$cred = [pscredential]::new($env:S3_ACCESS_KEY, $secret)

Say "New-CloudDrive $Name -> $Endpoint bucket '$Bucket', mounted at $MountPath"
$drive = New-CloudDrive -Name $Name -CachePath $CachePath -MountPath $MountPath `
    -Endpoint $Endpoint -Bucket $Bucket -Credential $cred -PolicyPath $PolicyPath
$drive | Out-Host

$file = [IO.Path]::Combine($MountPath, 'report.txt')
[IO.File]::WriteAllText($file, 'hello')
Say "Wrote 'hello' to $file through the mount"
$null = Show-State 'after the write:'

# The demo policy settles after 2 s; wait (bounded) for the verified upload.
$deadline = [DateTime]::UtcNow.AddSeconds(30)
while ((Get-CloudFile -Drive $Name -Path report.txt).State -ne 'Cached' -and [DateTime]::UtcNow -lt $deadline) {
    [Threading.Thread]::Sleep(250)
}
$null = Show-State 'after settle + upload:'

$null = Invoke-ForceStub -Drive $Name -Path report.txt -Confirm:$false
$null = Show-State 'after Invoke-ForceStub:'
$blocks = (& stat -c %b ([IO.Path]::Combine($CachePath, 'report.txt')))
Say "  cache file blocks allocated: $blocks; size through the mount: $([IO.FileInfo]::new($file).Length) bytes"

$text = [IO.File]::ReadAllText($file)
Say "Read back through the mount: '$text'"
$null = Show-State 'after the read (recall):'
if ($text -ne 'hello') { throw "read back '$text', expected 'hello'" }
