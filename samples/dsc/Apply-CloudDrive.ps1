# Applies the CloudDrive DSC resource the way Invoke-DscResource does (Test, then Set when needed),
# without the PSDesiredStateConfiguration module: runs in pwsh and in GeoDrive's own host
# (bash scripts/gdpwsh -File samples/dsc/Apply-CloudDrive.ps1 ...). Run in CI by DscTests.
#   $cred = [pscredential]::new($accessKey, [System.Net.NetworkCredential]::new('', $secret).SecurePassword)
#   ./samples/dsc/Apply-CloudDrive.ps1 -Name finance -CachePath /srv/geodrive/finance-cache -MountPath /mnt/finance `
#       -Endpoint http://127.0.0.1:9000 -Bucket finance -PolicyPath /etc/geodrive/policies/default.yaml -Credential $cred
# The secret may also come from the environment (GEODRIVE_ACCESS_KEY / GEODRIVE_SECRET_KEY), for schedulers.
using module ../../GeoDrive.psd1
param(
    [Parameter(Mandatory)] [string] $Name,
    [ValidateSet('Present', 'Absent')] [string] $Ensure = 'Present',
    [string] $CachePath,
    [string] $MountPath,
    [string[]] $Endpoint,
    [string] $Bucket,
    [string[]] $PolicyPath,
    [pscredential] $Credential,
    [switch] $RemoveCache
)
$ErrorActionPreference = 'Stop'

if (-not $Credential -and $env:GEODRIVE_ACCESS_KEY)
{
    $Credential = [pscredential]::new($env:GEODRIVE_ACCESS_KEY, [System.Net.NetworkCredential]::new('', $env:GEODRIVE_SECRET_KEY).SecurePassword)
}

# The same property set a Configuration's CloudDrive block (CloudDriveConfiguration.ps1) or
# Invoke-DscResource -Name CloudDrive -ModuleName GeoDrive -Property @{...} would pass.
$resource = [CloudDrive]::new()
$resource.Name = $Name
$resource.Ensure = $Ensure
$resource.CachePath = $CachePath
$resource.MountPath = $MountPath
$resource.Endpoint = $Endpoint
$resource.Bucket = $Bucket
if ($PSBoundParameters.ContainsKey('PolicyPath')) { $resource.PolicyPath = $PolicyPath }
$resource.Credential = $Credential
$resource.RemoveCache = $RemoveCache.IsPresent

if ($resource.Test())
{
    [Console]::WriteLine("CloudDrive '$Name': in the desired state, nothing to do.")
}
else
{
    $resource.Set()
    [Console]::WriteLine("CloudDrive '$Name': set. In the desired state now: $($resource.Test())")
}
