# PSDSC (PowerShell DSC 2.x / machine configuration): the same drive as clouddrive.dsc.yaml, as a
# Configuration. Compiling it needs the PSDesiredStateConfiguration module (on Linux also PS DSC for
# Linux); GeoDrive's own host does not have it, so CI applies the same resource with
# Apply-CloudDrive.ps1, which calls the resource's Test()/Set() as Invoke-DscResource does.
#
#   . ./samples/dsc/CloudDriveConfiguration.ps1
#   GeoDriveFinance -Credential (Get-Credential AKIAEXAMPLE) -OutputPath ./mof
#   Start-DscConfiguration -Path ./mof -Wait -Verbose     # or: Invoke-DscResource (see docs/dsc.md)
Configuration GeoDriveFinance
{
    param(
        [Parameter(Mandatory)] [pscredential] $Credential,
        [string] $CachePath = '/srv/geodrive/finance-cache',
        [string] $MountPath = '/mnt/finance',
        [string] $Endpoint = 'http://127.0.0.1:9000',
        [string] $Bucket = 'finance',
        [string[]] $PolicyPath = @('/etc/geodrive/policies/default.yaml')
    )

    Import-DscResource -ModuleName GeoDrive

    Node localhost
    {
        CloudDrive Finance
        {
            Name        = 'finance'
            Ensure      = 'Present'
            CachePath   = $CachePath
            MountPath   = $MountPath
            Endpoint    = $Endpoint
            Bucket      = $Bucket
            PolicyPath  = $PolicyPath
            Credential  = $Credential
        }
    }
}
