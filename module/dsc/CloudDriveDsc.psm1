# The class-based DSC resource CloudDrive (PSDSC, machine configuration, Invoke-DscResource) and the
# functions the DSC v3 command resource (CloudDrive.dsc.ps1, GeoDrive.CloudDrive.dsc.resource.json)
# calls: both go through the same Get/Test/Set below, which call the module's cmdlets.
# Loaded as a nested module of GeoDrive.psd1, so the cmdlets are in scope. Core cmdlets and .NET only:
# it must run in GeoDrive.PSHost too (no Utility/Management module there).

enum Ensure
{
    Absent
    Present
}

[DscResource()]
class CloudDrive
{
    # The drive's name: the key.
    [DscProperty(Key)]
    [string] $Name

    [DscProperty()]
    [Ensure] $Ensure = [Ensure]::Present

    # Local folder of the cached data. Fixed once the drive exists (remove it and create it again to move it).
    [DscProperty()]
    [string] $CachePath

    # Folder where applications see the drive; created when missing. Fixed once the drive exists.
    [DscProperty()]
    [string] $MountPath

    # S3 endpoint URL(s); a change restarts the drive's store (Set-CloudDrive).
    [DscProperty()]
    [string[]] $Endpoint

    # Fixed once the drive exists.
    [DscProperty()]
    [string] $Bucket

    # Policy files in order; a change is in force when Set() returns. Not given: not managed.
    [DscProperty()]
    [string[]] $PolicyPath

    # Access key id (user name) and secret key (password). Get() never returns it: compared by key id only.
    [DscProperty()]
    [pscredential] $Credential

    # Names compare case-insensitively (keys in lower case, the name as written in metadata). Not given: the platform's
    # default when the drive is made (on for Windows drives, off on Linux), and not managed after. Fixed once the drive exists.
    [DscProperty()]
    [Nullable[bool]] $CaseInsensitive

    # The peer sites' listeners (http://host:port) told of this drive's changes; an empty list tells none. Not given: not managed.
    [DscProperty()]
    [string[]] $Peer

    # address:port (or a port alone, for 127.0.0.1) this drive hears its peers on; '' listens nowhere. Not given: not managed.
    [DscProperty()]
    [string] $PeerListen

    # The key the drive's sites sign their notices with (the password; the user name is not used). Kept like the
    # Credential: Get() never returns it, and Test() only checks that the drive has one (PeerKeySet).
    [DscProperty()]
    [pscredential] $PeerKey

    # Ensure = Absent also deletes the cache folder (refused while files are not yet uploaded or kept local, and for
    # the cache of a drive that no longer exists unless it holds no file). Default: kept.
    [DscProperty()]
    [bool] $RemoveCache = $false

    # What Get() reports of the credential: the key id, never the secret.
    [DscProperty(NotConfigurable)]
    [string] $AccessKeyId

    [DscProperty(NotConfigurable)]
    [bool] $Mounted

    # What Get() reports of the peer key: whether the drive has one, never the key.
    [DscProperty(NotConfigurable)]
    [bool] $PeerKeySet

    [CloudDrive] Get()
    {
        $state = [CloudDrive]::new()
        $state.Name = $this.Name
        $state.RemoveCache = $this.RemoveCache
        $drive = GetCloudDriveOrNull $this.Name
        if ($null -eq $drive)
        {
            $state.Ensure = [Ensure]::Absent
            $state.CachePath = $this.CachePath
            return $state
        }
        $state.Ensure = [Ensure]::Present
        $state.CachePath = $drive.CachePath
        $state.MountPath = $drive.MountPath
        $state.Endpoint = @($drive.Endpoint)
        $state.Bucket = $drive.Bucket
        $state.PolicyPath = @($drive.PolicyPaths)
        $state.AccessKeyId = $drive.AccessKeyId
        $state.Mounted = $drive.Mounted
        $state.CaseInsensitive = $drive.CaseInsensitive
        $state.Peer = @($drive.Peers)
        $state.PeerListen = [string]$drive.PeerListen
        $state.PeerKeySet = $drive.PeerKeySet
        return $state
    }

    [bool] Test()
    {
        return (GetCloudDriveDifference $this $this.Get()).Count -eq 0
    }

    [void] Set()
    {
        $current = $this.Get()
        if ($this.Ensure -eq [Ensure]::Absent)
        {
            if ($current.Ensure -eq [Ensure]::Present)
            {
                if ($this.RemoveCache)
                {
                    # Only what is verified in the bucket may go with the cache: not files waiting to go up, nor
                    # files an exclude keeps local by design.
                    $status = Get-CloudDriveStatus -Name $this.Name -ErrorAction Stop
                    $notUploaded = $status.UploadQueue + $status.Uploading
                    if ($notUploaded + $status.Excluded -gt 0)
                    {
                        throw (NewCloudDriveDscError 'CacheHasUnsavedFiles' InvalidOperation `
                            "The cache of the cloud drive '$($this.Name)' holds files that are not in the bucket: $notUploaded not yet uploaded, $($status.Excluded) kept local by an exclude of its policy; RemoveCache would lose them." `
                            "Let them upload (Invoke-ForceUpload -Drive $($this.Name) -Path '**'), move the excluded files elsewhere, or set RemoveCache = `$false.")
                    }
                }
                Remove-CloudDrive -Name $this.Name -Force -Confirm:$false -ErrorAction Stop
            }
            elseif ($this.RemoveCache -and $current.CachePath -and [IO.Directory]::Exists($current.CachePath))
            {
                # The drive is gone: nothing can tell any more which of its files are in the bucket (written after the
                # last upload, kept local by an exclude). Only a cache with no file of its own goes.
                $files = @(CloudDriveCacheFiles $current.CachePath)
                if ($files.Count -gt 0)
                {
                    throw (NewCloudDriveDscError 'CacheNotVerified' InvalidOperation `
                        "The cloud drive '$($this.Name)' no longer exists, so nothing can verify that the $($files.Count) file(s) left in its cache '$($current.CachePath)' (e.g. '$($files[0])') are in the bucket; RemoveCache would risk losing them." `
                        "Check the files and delete the folder yourself, or create the drive again over this cache and apply Ensure = 'Absent' with RemoveCache in one step.")
                }
            }
            if ($this.RemoveCache -and $current.CachePath -and [IO.Directory]::Exists($current.CachePath))
            {
                [IO.Directory]::Delete($current.CachePath, $true)
            }
            return
        }

        if ($current.Ensure -eq [Ensure]::Absent)
        {
            foreach ($required in 'CachePath', 'MountPath', 'Endpoint', 'Bucket', 'Credential')
            {
                if (-not $this.$required)
                {
                    throw (NewCloudDriveDscError 'DscPropertyMissing' InvalidArgument `
                        "The cloud drive '$($this.Name)' does not exist and $required is not given, so it cannot be created." `
                        'Give CachePath, MountPath, Endpoint, Bucket and Credential to create a drive.')
                }
            }
            [IO.Directory]::CreateDirectory($this.MountPath) | Out-Null
            $new = @{
                Name        = $this.Name
                CachePath   = $this.CachePath
                MountPath   = $this.MountPath
                Endpoint    = $this.Endpoint[0]
                Bucket      = $this.Bucket
                Credential  = $this.Credential
                PolicyPath  = @($this.PolicyPath | Where-Object { $_ })
            }
            if ($null -ne $this.CaseInsensitive) { $new.CaseInsensitive = [bool]$this.CaseInsensitive }
            if ($null -ne $this.Peer) { $new.Peer = @($this.Peer | Where-Object { $_ }) }
            if ($this.PeerListen) { $new.PeerListen = $this.PeerListen }
            if ($this.PeerKey) { $new.PeerKey = $this.PeerKey.Password }
            New-CloudDrive @new -Confirm:$false -ErrorAction Stop | Out-Null
            return
        }

        foreach ($fixed in 'CachePath', 'MountPath', 'Bucket')
        {
            if ($this.$fixed -and -not (SameCloudDriveValue $fixed $this.$fixed $current.$fixed))
            {
                throw (NewCloudDriveDscError 'DscPropertyImmutable' InvalidOperation `
                    "The $fixed of the existing cloud drive '$($this.Name)' is '$($current.$fixed)', not '$($this.$fixed)', and cannot be changed in place." `
                    "Apply Ensure = 'Absent' first (the cache is kept unless RemoveCache), then create the drive again.")
            }
        }
        if ($null -ne $this.CaseInsensitive -and [bool]$this.CaseInsensitive -ne $current.CaseInsensitive)
        {
            # The drive's keys in the bucket were written by its rule: another rule would look for them elsewhere.
            throw (NewCloudDriveDscError 'DscPropertyImmutable' InvalidOperation `
                "The existing cloud drive '$($this.Name)' has CaseInsensitive = `$$($current.CaseInsensitive), not `$$([bool]$this.CaseInsensitive); that is fixed when a drive is made, because its keys in the bucket are written by that rule." `
                "Leave CaseInsensitive out, or apply Ensure = 'Absent' and make the drive again on an empty cache folder (use the same setting for every drive on a bucket).")
        }
        $change = @{}
        if ($null -ne $this.PolicyPath -and -not (SameCloudDriveValue 'PolicyPath' $this.PolicyPath $current.PolicyPath))
        {
            $change.PolicyPath = @($this.PolicyPath | Where-Object { $_ })
        }
        if ($this.Endpoint -and -not (SameCloudDriveValue 'Endpoint' $this.Endpoint $current.Endpoint))
        {
            $change.Endpoint = $this.Endpoint
        }
        if ($this.Credential -and (MaskedAccessKeyId $this.Credential.UserName) -ne $current.AccessKeyId)
        {
            $change.Credential = $this.Credential
        }
        if ($null -ne $this.Peer -and -not (SameCloudDrivePeers $this.Peer $current.Peer))
        {
            $change.Peer = @($this.Peer | Where-Object { $_ })
        }
        if ($null -ne $this.PeerListen -and (CloudDrivePeerListen $this.PeerListen) -ne (CloudDrivePeerListen $current.PeerListen))
        {
            $change.PeerListen = $this.PeerListen
        }
        # The key is never read back, so it is sent only to a drive that has none (a new key is not drift: rotate it
        # with Set-CloudDrive -PeerKey on every site, as the Credential's secret).
        if ($this.PeerKey -and -not $current.PeerKeySet)
        {
            $change.PeerKey = $this.PeerKey.Password
        }
        if ($change.Count -gt 0)
        {
            Set-CloudDrive -Name $this.Name @change -Confirm:$false -ErrorAction Stop
        }
    }
}

# The files of a cache folder outside GeoDrive's own folder (.geodrive), relative to it; links are not followed.
function CloudDriveCacheFiles([string] $CachePath)
{
    $options = [IO.EnumerationOptions]::new()
    $options.RecurseSubdirectories = $true
    $options.AttributesToSkip = [IO.FileAttributes]::ReparsePoint
    foreach ($file in [IO.Directory]::EnumerateFiles($CachePath, '*', $options))
    {
        $relative = [IO.Path]::GetRelativePath($CachePath, $file)
        if (-not $relative.StartsWith('.geodrive' + [IO.Path]::DirectorySeparatorChar))
        {
            $relative
        }
    }
}

# The drive, or $null when the service has none by that name ("service not running" still throws).
# The same mask as the service's DriveCredential.Mask: a key id of 12 characters or more keeps its last 4.
function MaskedAccessKeyId([string] $AccessKeyId)
{
    if ($AccessKeyId.Length -ge 12) { return ('*' * ($AccessKeyId.Length - 4)) + $AccessKeyId.Substring($AccessKeyId.Length - 4) }
    return '****'
}

function GetCloudDriveOrNull([string] $Name)
{
    $missing = $null
    $drive = Get-CloudDrive -Name $Name -ErrorAction SilentlyContinue -ErrorVariable missing
    foreach ($e in $missing)
    {
        if ($e.FullyQualifiedErrorId -notlike 'DriveNotFound,*')
        {
            throw $e
        }
    }
    return $drive
}

# The names of the properties whose desired value differs from the current state (empty: in desired state).
function GetCloudDriveDifference([CloudDrive] $Desired, [CloudDrive] $Current)
{
    $differ = [System.Collections.Generic.List[string]]::new()
    if ($Desired.Ensure -ne $Current.Ensure)
    {
        $differ.Add('Ensure')
    }
    if ($Desired.Ensure -eq [Ensure]::Absent)
    {
        if ($Desired.RemoveCache -and $Current.CachePath -and [IO.Directory]::Exists($Current.CachePath))
        {
            $differ.Add('RemoveCache')
        }
        return , $differ
    }
    if ($Current.Ensure -eq [Ensure]::Absent)
    {
        return , $differ
    }
    foreach ($property in 'CachePath', 'MountPath', 'Bucket', 'Endpoint')
    {
        if ($Desired.$property -and -not (SameCloudDriveValue $property $Desired.$property $Current.$property))
        {
            $differ.Add($property)
        }
    }
    if ($null -ne $Desired.PolicyPath -and -not (SameCloudDriveValue 'PolicyPath' $Desired.PolicyPath $Current.PolicyPath))
    {
        $differ.Add('PolicyPath')
    }
    if ($null -ne $Desired.CaseInsensitive -and [bool]$Desired.CaseInsensitive -ne $Current.CaseInsensitive)
    {
        $differ.Add('CaseInsensitive')
    }
    if ($null -ne $Desired.Peer -and -not (SameCloudDrivePeers $Desired.Peer $Current.Peer))
    {
        $differ.Add('Peer')
    }
    if ($null -ne $Desired.PeerListen -and (CloudDrivePeerListen $Desired.PeerListen) -ne (CloudDrivePeerListen $Current.PeerListen))
    {
        $differ.Add('PeerListen')
    }
    # Nor is the peer key: a drive is in its desired state when it has one.
    if ($Desired.PeerKey -and -not $Current.PeerKeySet)
    {
        $differ.Add('PeerKey')
    }
    # The secret is never read back: a credential is in its desired state when its key id is. The
    # service shows the key id masked (last 4 characters; all stars under 12), so the desired one is masked alike.
    if ($Desired.Credential -and (MaskedAccessKeyId $Desired.Credential.UserName) -ne $Current.AccessKeyId)
    {
        $differ.Add('Credential')
    }
    return , $differ
}

function SameCloudDriveValue([string] $Property, $Desired, $Current)
{
    $normalise = switch ($Property)
    {
        'Endpoint' { { param($v) ([string]$v).TrimEnd('/') } }
        'Bucket' { { param($v) [string]$v } }
        default { { param($v) [IO.Path]::TrimEndingDirectorySeparator([IO.Path]::GetFullPath([string]$v)) } }
    }
    $d = @(@($Desired) | Where-Object { $_ } | ForEach-Object { & $normalise $_ })
    $c = @(@($Current) | Where-Object { $_ } | ForEach-Object { & $normalise $_ })
    if ($d.Count -ne $c.Count)
    {
        return $false
    }
    for ($i = 0; $i -lt $d.Count; $i++)
    {
        if ($d[$i] -cne $c[$i])
        {
            return $false
        }
    }
    return $true
}

# Peer URLs as the service keeps them (scheme, host and port; the host in lower case, a default port left out),
# compared as a set: the order in which peers are told does not matter.
function SameCloudDrivePeers($Desired, $Current)
{
    $normalise = {
        param($p)
        $uri = $null
        if ([Uri]::TryCreate(([string]$p).Trim(), [UriKind]::Absolute, [ref]$uri)) { $uri.GetLeftPart([UriPartial]::Authority).ToLowerInvariant() } else { ([string]$p).Trim() }
    }
    $d = [System.Collections.Generic.SortedSet[string]]::new([string[]]@(@($Desired) | Where-Object { $_ } | ForEach-Object { & $normalise $_ }), [StringComparer]::Ordinal)
    $c = [System.Collections.Generic.SortedSet[string]]::new([string[]]@(@($Current) | Where-Object { $_ } | ForEach-Object { & $normalise $_ }), [StringComparer]::Ordinal)
    return $d.SetEquals($c)
}

# A peer listen address as the service keeps it: a port alone is 127.0.0.1's; '' or $null listens nowhere.
function CloudDrivePeerListen([string] $Listen)
{
    $Listen = $Listen.Trim()
    if (-not $Listen) { return '' }
    [ushort] $port = 0
    if ([ushort]::TryParse($Listen, [ref]$port) -and $port -gt 0) { return "127.0.0.1:$port" }
    $endpoint = $null
    if ([System.Net.IPEndPoint]::TryParse($Listen, [ref]$endpoint)) { return $endpoint.ToString() }
    return $Listen
}

function NewCloudDriveDscError([string] $Id, [GeoDrive.Core.Errors.ErrorKind] $Kind, [string] $Message, [string] $Remedy)
{
    $exception = [GeoDrive.Core.Errors.GeoDriveException]::new($Id, $Kind, "$Message $Remedy", $Remedy)
    $category = [System.Management.Automation.ErrorCategory]::NotSpecified
    [void][Enum]::TryParse([string]$Kind, [ref]$category)
    return [System.Management.Automation.ErrorRecord]::new($exception, $Id, $category, $null)
}

Export-ModuleMember -Function @()
