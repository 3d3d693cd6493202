namespace GeoDrive.Api;

/// <summary>The control API's routes and where it listens. The module and the service both use these.</summary>
public static partial class ApiRoutes
{
    public const string Service = "/v1/service";
    public const string Drives = "/v1/drives";

    public static string Drive(string name) => $"{Drives}/{Uri.EscapeDataString(name)}";
    public static string Mount(string name) => $"{Drive(name)}/mount";
    public static string Dismount(string name) => $"{Drive(name)}/dismount";
    public static string Files(string name, string pattern) => $"{Drive(name)}/files?path={Uri.EscapeDataString(pattern)}";
    public static string Stub(string name) => $"{Drive(name)}/files/stub";
    public static string Upload(string name) => $"{Drive(name)}/files/upload";
    public static string Recall(string name) => $"{Drive(name)}/files/recall";
    public static string FileVersions(string name, string path) => $"{Drive(name)}/files/versions?path={Uri.EscapeDataString(path)}";
    public static string Restore(string name) => $"{Drive(name)}/files/restore";
    public static string Sync(string name) => $"{Drive(name)}/sync";
    public static string Policy(string name) => $"{Drive(name)}/policy";
    public static string EffectivePolicy(string name) => $"{Drive(name)}/policy/effective";
    public static string PolicyDecision(string name, string path, string? process) =>
        $"{Drive(name)}/policy/decision?path={Uri.EscapeDataString(path)}" + (string.IsNullOrEmpty(process) ? "" : $"&process={Uri.EscapeDataString(process)}");

    /// <summary>Env var that overrides the socket path (tests, side-by-side services).</summary>
    public const string SocketEnvironmentVariable = "GEODRIVE_SOCKET";

    /// <summary>Env var that overrides where the service keeps drive definitions and credentials.</summary>
    public const string HomeEnvironmentVariable = "GEODRIVE_HOME";

    /// <summary>The control API's address: GEODRIVE_SOCKET, else /run/geodrive/geodrive.sock (Linux) or \\.\pipe\geodrive (Windows).</summary>
    public static string DefaultSocketPath =>
        Environment.GetEnvironmentVariable(SocketEnvironmentVariable) is { Length: > 0 } p ? p : ControlEndpoint.DefaultAddress(OperatingSystem.IsWindows());

    /// <summary>GEODRIVE_HOME, else /var/lib/geodrive (Linux) or %ProgramData%\GeoDrive (Windows).</summary>
    public static string DefaultHomePath =>
        Environment.GetEnvironmentVariable(HomeEnvironmentVariable) is { Length: > 0 } p ? p
        : OperatingSystem.IsWindows() ? Path.Combine(Environment.GetFolderPath(Environment.SpecialFolder.CommonApplicationData), "GeoDrive")
        : "/var/lib/geodrive";
}
