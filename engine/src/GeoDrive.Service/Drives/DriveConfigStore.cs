using System.Text.Json;

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

    public DriveCredential LoadCredential(string driveName) =>
        JsonSerializer.Deserialize<DriveCredential>(File.ReadAllText(CredentialFile(driveName)), Json)
        ?? throw new InvalidDataException($"The credential file of drive '{driveName}' is empty.");

    public void SaveCredential(string driveName, DriveCredential credential) =>
        WriteAtomically(CredentialFile(driveName), JsonSerializer.Serialize(credential, Json));

    public void DeleteCredential(string driveName) => File.Delete(CredentialFile(driveName));

    private string CredentialFile(string driveName) => Path.Combine(CredentialsFolder, driveName + ".json");

    private static void WriteAtomically(string path, string content)
    {
        var temp = path + ".tmp";
        var options = new FileStreamOptions { Mode = FileMode.Create, Access = FileAccess.Write };
        if (!OperatingSystem.IsWindows())
        {
            options.UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite;
        }
        using (var stream = new FileStream(temp, options))
        using (var writer = new StreamWriter(stream))
        {
            writer.Write(content);
            writer.Flush();
            stream.Flush(flushToDisk: true);
        }
        File.Move(temp, path, overwrite: true);
    }
}
