@{
  # Binary module built by `dotnet build module/src/GeoDrive.Commands` (scripts/build.sh does it).
  # Loaded as a nested module rather than RootModule so that Get-Help finds the cmdlet help beside
  # the assembly (module/bin/en-US, copied from module/en-US by the build): as RootModule its help
  # would have to live in en-US/ at the repository root, next to this manifest.
  # module/dsc/CloudDriveDsc.psm1: the class-based DSC resource CloudDrive, which calls the cmdlets.
  NestedModules        = @('module/bin/GeoDrive.Commands.dll', 'module/dsc/CloudDriveDsc.psm1')
  # Loaded on import so scripts can name the output and error types ([GeoDrive.Api.DriveInfo], [GeoDrive.Core.Errors.GeoDriveException]);
  # YamlDotNet and GeoDrive.Policies: Test-CloudPolicy reads policy files without the service.
  RequiredAssemblies   = @('module/bin/GeoDrive.Core.dll', 'module/bin/GeoDrive.Api.dll', 'module/bin/YamlDotNet.dll', 'module/bin/GeoDrive.Policies.dll')
  ModuleVersion        = '0.1.0'
  GUID                 = 'e3430605-93ef-40cf-b0e4-280ea35ee39f'
  Author               = 'GeoDrive contributors'
  Copyright            = '(c) GeoDrive contributors. All rights reserved.'
  Description          = 'Administer GeoDrive cloud drives: local cache folders in front of S3 buckets, where cold files become stubs that are recalled on open, driven by YAML policies.'
  # The module is built for .NET 10 against System.Management.Automation 7.6: PowerShell 7.6 is the
  # first that can load it (7.4 runs on .NET 8).
  PowerShellVersion    = '7.6'
  CompatiblePSEditions = @('Core')
  FormatsToProcess     = @('module/GeoDrive.Format.ps1xml')
  CmdletsToExport      = @(
    'New-CloudDrive'
    'Get-CloudDrive'
    'Get-CloudDriveStatus'
    'Remove-CloudDrive'
    'Mount-CloudDrive'
    'Dismount-CloudDrive'
    'Suspend-CloudDrive'
    'Resume-CloudDrive'
    'Get-CloudFile'
    'Invoke-ForceStub'
    'Invoke-ForceUpload'
    'Invoke-CloudRecall'
    'Start-GeoDriveService'
    'Stop-GeoDriveService'
    'Get-GeoDriveService'
    'Test-CloudPolicy'
    'Get-CloudPolicy'
    'Get-CloudPolicyDecision'
    # issue 5
    'Get-CloudDriveEvent'
    'Set-CloudFile'
    # Set-CloudDrive and the DSC resource (issue 5)
    'Set-CloudDrive'
    'Register-CloudRecallJob'
    'Get-CloudRecallJob'
    'Unregister-CloudRecallJob'
    # issue 14
    'Get-CloudFileVersion'
    'Restore-CloudFile'
    'Sync-CloudDrive'
  )
  FunctionsToExport    = @()
  DscResourcesToExport = @('CloudDrive')
  AliasesToExport      = @()
  VariablesToExport    = @()
  PrivateData          = @{
    PSData = @{
      Tags       = @('S3', 'CloudTiering', 'Storage', 'Linux', 'FUSE')
      ProjectUri = 'https://github.com/geodrive/geodrive'
    }
  }
}
