using module ../../GeoDrive.psd1
# The DSC v3 command resource GeoDrive/CloudDrive (GeoDrive.CloudDrive.dsc.resource.json): reads the
# desired state as JSON on stdin, writes the state as one line of JSON on stdout. The work is done by
# the class-based resource CloudDrive (CloudDriveDsc.psm1), so both forms behave the same.
#   get  -> the actual state ({"name":..,"_exist":true,...})
#   test -> the actual state plus "_inDesiredState"
#   set  -> applies the desired state, then the actual state
# The secrets (credential.password, peerKey) are read from stdin only and never written out.
param(
    [Parameter(Mandatory = $true, Position = 0)]
    [ValidateSet('get', 'set', 'test')]
    [string] $Operation
)

$ErrorActionPreference = 'Stop'

function ConvertTo-CloudDriveResource([System.Text.Json.Nodes.JsonObject] $In)
{
    $r = [CloudDrive]::new()
    $value = { param($n) if ($null -ne $In[$n]) { $In[$n].ToString() } }
    $list = {
        param($n)
        $node = $In[$n]
        if ($null -eq $node) { return $null }
        if ($node -is [System.Text.Json.Nodes.JsonArray]) { return , [string[]]@($node | ForEach-Object { $_.ToString() }) }
        return , [string[]]@($node.ToString())
    }
    $r.Name = & $value 'name'
    if (-not $r.Name) { throw "The input has no 'name': give the drive's name, e.g. {`"name`":`"finance`"}." }
    if ($null -ne $In['_exist'] -and -not $In['_exist'].GetValue[bool]()) { $r.Ensure = [Ensure]::Absent }
    $r.CachePath = & $value 'cachePath'
    $r.MountPath = & $value 'mountPath'
    $r.Bucket = & $value 'bucket'
    $r.Endpoint = & $list 'endpoint'
    $r.PolicyPath = & $list 'policyPath'
    if ($null -ne $In['removeCache']) { $r.RemoveCache = $In['removeCache'].GetValue[bool]() }
    if ($null -ne $In['caseInsensitive']) { $r.CaseInsensitive = $In['caseInsensitive'].GetValue[bool]() }
    $r.Peer = & $list 'peer'
    if ($null -ne $In['peerListen']) { $r.PeerListen = $In['peerListen'].ToString() }
    if ($null -ne $In['peerKey'])
    {
        $r.PeerKey = [pscredential]::new('peer', [System.Net.NetworkCredential]::new('', $In['peerKey'].ToString()).SecurePassword)
    }
    $cred = $In['credential']
    if ($null -ne $cred)
    {
        $secret = [System.Net.NetworkCredential]::new('', $cred['password'].ToString()).SecurePassword
        $r.Credential = [pscredential]::new($cred['username'].ToString(), $secret)
    }
    return $r
}

function ConvertTo-StateJson([CloudDrive] $State, $InDesiredState)
{
    $out = [System.Text.Json.Nodes.JsonObject]::new()
    $out['name'] = $State.Name
    $out['_exist'] = $State.Ensure -eq [Ensure]::Present
    if ($State.Ensure -eq [Ensure]::Present)
    {
        $out['cachePath'] = $State.CachePath
        $out['mountPath'] = $State.MountPath
        $out['bucket'] = $State.Bucket
        $endpoints = [System.Text.Json.Nodes.JsonArray]::new()
        foreach ($e in $State.Endpoint) { $endpoints.Add([System.Text.Json.Nodes.JsonValue]::Create([string]$e)) }
        $out['endpoint'] = $endpoints
        $policies = [System.Text.Json.Nodes.JsonArray]::new()
        foreach ($p in $State.PolicyPath) { $policies.Add([System.Text.Json.Nodes.JsonValue]::Create([string]$p)) }
        $out['policyPath'] = $policies
        $out['accessKeyId'] = $State.AccessKeyId
        $out['mounted'] = $State.Mounted
        $out['caseInsensitive'] = [bool]$State.CaseInsensitive
        $peers = [System.Text.Json.Nodes.JsonArray]::new()
        foreach ($p in $State.Peer) { $peers.Add([System.Text.Json.Nodes.JsonValue]::Create([string]$p)) }
        $out['peer'] = $peers
        $out['peerListen'] = [string]$State.PeerListen
        $out['peerKeySet'] = $State.PeerKeySet
    }
    if ($null -ne $InDesiredState)
    {
        $out['_inDesiredState'] = [bool]$InDesiredState
    }
    return $out.ToJsonString()
}

$text = [Console]::In.ReadToEnd()
if ([string]::IsNullOrWhiteSpace($text)) { throw "No JSON on stdin: give the desired state, e.g. {`"name`":`"finance`"}." }
$desired = ConvertTo-CloudDriveResource ([System.Text.Json.Nodes.JsonNode]::Parse($text).AsObject())

switch ($Operation)
{
    'get' { [Console]::Out.WriteLine((ConvertTo-StateJson $desired.Get() $null)) }
    'test' { [Console]::Out.WriteLine((ConvertTo-StateJson $desired.Get() $desired.Test())) }
    'set'
    {
        if (-not $desired.Test()) { $desired.Set() }
        [Console]::Out.WriteLine((ConvertTo-StateJson $desired.Get() $null))
    }
}
exit 0
