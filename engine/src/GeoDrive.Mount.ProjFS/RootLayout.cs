namespace GeoDrive.Mount.ProjFS;

/// <summary>Where a virtualization root's own files are, and how a state folder inside the root is hidden. Platform-neutral.</summary>
public static class RootLayout
{
    /// <summary>The engine's folder name (DriveEngineOptions.InternalFolder; this project may not reference the engine).</summary>
    public const string InternalFolder = ".geodrive";

    public const string InstanceIdFileName = "projfs-instance-id";

    public static string InternalFolderInRoot(string root) => Path.Combine(root, InternalFolder);

    /// <summary>The root's ProjFS instance id: in the state folder when the drive has one outside the root, else in the root's own .geodrive.</summary>
    public static string InstanceIdFile(string root, string? statePath) =>
        Path.Combine(statePath ?? InternalFolderInRoot(root), InstanceIdFileName);

    /// <summary>Hidden and System: what Explorer, dir and Get-ChildItem (without -Force) leave out, as for "System Volume Information".</summary>
    public static FileAttributes HiddenAttributes(FileAttributes current) => (current & ~FileAttributes.Normal) | FileAttributes.Hidden | FileAttributes.System;
}
