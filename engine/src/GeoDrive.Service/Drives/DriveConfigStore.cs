using System.Security.Cryptography;
using System.Text.Json;
using GeoDrive.Core.Errors;

namespace GeoDrive.Service.Drives;

/// <summary>
/// Persists drive definitions (home/drives.json) and credentials (home/credentials/NAME.json, mode
/// 0600 in a 0700 folder; on Windows a home whose ACL admits SYSTEM and Administrators only). Writes go to a temporary file then rename, so a crash never leaves half a file.
/// </summary>
public sealed class DriveConfigStore
{
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web) { WriteIndented = true };
    private readonly string _home;
    private readonly Lock _gate = new();

    public DriveConfigStore(string home)
    {
        _home = home;
        Directory.CreateDirectory(home);
        Directory.CreateDirectory(CredentialsFolder);
        if (OperatingSystem.IsWindows())
        {
            // %ProgramData% lets every user read; the home holds secret keys (docs/windows.md).
            Hosting.Windows.HomeFolderAcl.Restrict(home);
        }
        else
        {
            File.SetUnixFileMode(home, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
            File.SetUnixFileMode(CredentialsFolder, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        }
        TightenCredentialFiles();
    }

    private string DrivesFile => Path.Combine(_home, "drives.json");

    private string CredentialsFolder => Path.Combine(_home, "credentials");

    public List<DriveDefinition> LoadDefinitions()
    {
        lock (_gate)
        {
            return File.Exists(DrivesFile)
                ? JsonSerializer.Deserialize<List<DriveDefinition>>(File.ReadAllText(DrivesFile), Json) ?? []
                : [];
        }
    }

    public void SaveDefinitions(IEnumerable<DriveDefinition> definitions)
    {
        lock (_gate)
        {
            WriteAtomically(DrivesFile, JsonSerializer.Serialize(definitions.OrderBy(d => d.Name, StringComparer.OrdinalIgnoreCase).ToList(), Json));
        }
    }

    // Credentials (issue 5): the only place a secret is kept. Linux: a JSON file per drive, mode 0600 and
    // owned by the service's user (root), in a 0700 folder of the service's home, never in drives.json.
    // Windows: the same file's bytes protected with DPAPI (machine scope: the service may run as any
    // account of the machine's Administrators; ACLs of the state folder keep others out).

    public DriveCredential LoadCredential(string driveName)
    {
        var path = CredentialFile(driveName);
        if (!File.Exists(path))
        {
            throw new GeoDriveException(ErrorIds.CredentialMissing, ErrorKind.ObjectNotFound,
                $"The protected credential of drive '{driveName}' is missing.",
                "Remove the drive with Remove-CloudDrive (its cache and bucket stay) and create it again with -Credential or -ProfileName.");
        }
        var bytes = Unprotect(File.ReadAllBytes(path));
        return JsonSerializer.Deserialize<DriveCredential>(bytes, Json)
            ?? throw new InvalidDataException($"The credential file of drive '{driveName}' is empty.");
    }

    public void SaveCredential(string driveName, DriveCredential credential) =>
        WriteAtomically(CredentialFile(driveName), Protect(JsonSerializer.SerializeToUtf8Bytes(credential, Json)));

    public void DeleteCredential(string driveName)
    {
        File.Delete(CredentialFile(driveName));
        File.Delete(PeerKeyFile(driveName));
    }

    /// <summary>The key a drive's sites sign their notices with; kept as the drive's key pair is, never in drives.json. Null: none.</summary>
    public string? LoadPeerKey(string driveName)
    {
        var path = PeerKeyFile(driveName);
        return File.Exists(path) ? JsonSerializer.Deserialize<StoredPeerKey>(Unprotect(File.ReadAllBytes(path)), Json)?.Key : null;
    }

    public void SavePeerKey(string driveName, string key) =>
        WriteAtomically(PeerKeyFile(driveName), Protect(JsonSerializer.SerializeToUtf8Bytes(new StoredPeerKey { Key = key }, Json)));

    // '@' is no character of a drive name: no drive's own credential file can be called this.
    private string PeerKeyFile(string driveName) => Path.Combine(CredentialsFolder, driveName + "@peer.json");

    private sealed class StoredPeerKey
    {
        public required string Key { get; init; }

        public override string ToString() => "PeerKey (hidden)";
    }

    /// <summary>The file holding a drive's key pair (for tests and the administrator's audit).</summary>
    public string CredentialFile(string driveName) => Path.Combine(CredentialsFolder, driveName + ".json");

    /// <summary>Files written by an older service, or loosened by hand, are made root-only again at start.</summary>
    private void TightenCredentialFiles()
    {
        if (OperatingSystem.IsWindows())
        {
            return;
        }
        foreach (var file in Directory.EnumerateFiles(CredentialsFolder))
        {
            File.SetUnixFileMode(file, UnixFileMode.UserRead | UnixFileMode.UserWrite);
        }
    }

    private static readonly byte[] Entropy = "GeoDrive drive credential v1"u8.ToArray();

    private static byte[] Protect(byte[] plain) =>
        OperatingSystem.IsWindows() ? ProtectedData.Protect(plain, Entropy, DataProtectionScope.LocalMachine) : plain;

    private static byte[] Unprotect(byte[] stored) =>
        OperatingSystem.IsWindows() ? ProtectedData.Unprotect(stored, Entropy, DataProtectionScope.LocalMachine) : stored;

    private static void WriteAtomically(string path, string content) => WriteAtomically(path, System.Text.Encoding.UTF8.GetBytes(content));

    private static void WriteAtomically(string path, byte[] content)
    {
        var temp = path + ".tmp";
        var options = new FileStreamOptions { Mode = FileMode.Create, Access = FileAccess.Write };
        if (!OperatingSystem.IsWindows())
        {
            options.UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite;
        }
        using (var stream = new FileStream(temp, options))
        {
            stream.Write(content);
            stream.Flush(flushToDisk: true);
        }
        File.Move(temp, path, overwrite: true);
    }
}
