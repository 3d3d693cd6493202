# The CI gate of a policy repository: every policy file must pass Test-CloudPolicy, or the build fails.
# Each problem is printed as an error record, "file:line:column: message remedy", with its error id
# (PolicyUnknownKey, PolicyBadDuration, ...). Runs in pwsh or in GeoDrive's own host (scripts/gdpwsh),
# so it uses .NET for files instead of Get-ChildItem.
#   scripts/gdpwsh -NoProfile -File samples/policy-repo/ci/Test-Policies.ps1
param(
    # The folder holding the policies (searched recursively for *.yaml and *.yml).
    [string] $PolicyRoot = [System.IO.Path]::Combine($PSScriptRoot, '..', 'policies'),
    # The GeoDrive module: a name on PSModulePath, or the path of GeoDrive.psd1.
    [string] $Module = [System.IO.Path]::Combine($PSScriptRoot, '..', '..', '..', 'GeoDrive.psd1')
)

Import-Module $Module -ErrorAction Stop

$root = [System.IO.Path]::GetFullPath($PolicyRoot)
$files = @([System.IO.Directory]::GetFiles($root, '*.yaml', [System.IO.SearchOption]::AllDirectories)) +
         @([System.IO.Directory]::GetFiles($root, '*.yml', [System.IO.SearchOption]::AllDirectories))
if ($files.Count -eq 0) {
    [Console]::Error.WriteLine("no policy files under $root")
    exit 2
}

# One $true/$false for the whole run; the problems themselves go to the error stream.
if (Test-CloudPolicy -LiteralPath $files) {
    [Console]::WriteLine("$($files.Count) policy file(s) under $root are valid")
    exit 0
}
[Console]::Error.WriteLine('policy check failed: fix the problems listed above')
exit 1
