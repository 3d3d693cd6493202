using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Ports;
using GeoDrive.Mount.ProjFS.Enumeration;
using GeoDrive.Mount.ProjFS.Native;
using GeoDrive.Mount.ProjFS.Notifications;
using GeoDrive.Mount.ProjFS.Projection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace GeoDrive.Mount.ProjFS;

/// <summary>Tunables of one ProjFS mount.</summary>
public sealed class ProjFsMountOptions
{
    public string DriveName { get; init; } = "drive";

    /// <summary>Bytes per PrjWriteFileData call; a multiple of 64 KiB (FileDataPlan).</summary>
    public int ChunkSize { get; init; } = 4 * 1024 * 1024;

    /// <summary>Chunks of one file fetched from the bucket at once.</summary>
    public int DataThreads { get; init; } = 4;

    /// <summary>ProjFS callback threads (0: ProjFS chooses, twice the processors).</summary>
    public int PoolThreadCount { get; init; }

    /// <summary>
    /// Report file activity of the mount's own process to the engine. Off in the service (its own I/O
    /// is the engine's); on where the applications run in the same process, as in the conformance tests.
    /// Those calls are queued, never made while the notification waits, because the engine may be the
    /// one doing that I/O while it holds the file's lock.
    /// </summary>
    public bool ReportOwnProcess { get; init; }

    /// <summary>
    /// The drive's state folder outside the root, where the root's instance id is kept (the Service
    /// keeps the whole engine state there on Windows). Null: "&lt;root&gt;\.geodrive", as a drive whose
    /// state lives in its cache has it (test rigs).
    /// </summary>
    public string? StatePath { get; init; }

    public ILogger Logger { get; init; } = NullLogger.Instance;
}

/// <summary>
/// A drive's cache folder as a ProjFS virtualization root (docs/architecture.md, "The front-end contract", Windows). Files written here
/// are ordinary (full) files; a stub is a placeholder whose data ProjFS asks for on first read
/// (GetFileData → the bucket); the index is projected, so a dehydrated file still lists with its
/// size, times and FILE_ATTRIBUTE_OFFLINE. Notifications tell the engine of creates, modifying
/// closes, deletes and renames, with the triggering process as the caller.
/// </summary>
[SupportedOSPlatform("windows")]
public sealed partial class ProjFsMount : ILocalStubs, IDisposable
{
    private readonly IDriveFileSystem _drive;
    private readonly IProjectionSource _projection;
    private readonly IHydrationGate _gate;
    private readonly ProjFsMountOptions _options;
    private readonly ILogger _logger;
    private readonly EnumerationSessions _enumerations = new();
    private readonly PendingCommands _pending = new();
    private readonly NotificationMapper _notifications;
    private readonly CancellationTokenSource _stopping = new();
    private GCHandle _self;
    private nint _context;
    private int _stopped;

    private ProjFsMount(IDriveFileSystem drive, IProjectionSource projection, IHydrationGate gate, ProjFsMountOptions options)
    {
        _drive = drive;
        _projection = projection;
        _gate = gate;
        _options = options;
        _logger = options.Logger;
        _notifications = new NotificationMapper(drive.IsInternalPath, Environment.ProcessId, options.ReportOwnProcess);
        Root = Path.TrimEndingDirectorySeparator(Path.GetFullPath(drive.CachePath));
    }

    /// <summary>The virtualization root: the drive's cache folder.</summary>
    public string Root { get; }

    /// <summary>Files with handles open through the root right now (as ProjFS notified them).</summary>
    public int OpenFileCount => _open.Count;

    /// <summary>Recalls answered "pending" and not completed yet.</summary>
    public int PendingCount => _pending.Count;

    /// <summary>Starts virtualizing the drive's cache folder; throws MountFailed with what to do.</summary>
    public static ProjFsMount Mount(IDriveFileSystem drive, IProjectionSource projection, IHydrationGate gate, ProjFsMountOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(drive);
        var mount = new ProjFsMount(drive, projection, gate, options ?? new ProjFsMountOptions());
        if (!Directory.Exists(mount.Root))
        {
            throw new GeoDriveException(ErrorIds.MountPathNotFound, ErrorKind.ObjectNotFound,
                $"The cache folder '{mount.Root}' does not exist.", "Create it first, e.g. New-Item -ItemType Directory '" + mount.Root + "'.");
        }
        if (!NativeLibrary.TryLoad("ProjectedFSLib.dll", out _))
        {
            throw MountFailed(mount.Root, "ProjectedFSLib.dll is not available",
                "Enable Projected File System: Enable-WindowsOptionalFeature -Online -FeatureName Client-ProjFS -NoRestart (see docs/windows.md).");
        }
        mount.Start();
        mount.StartQueue();
        return mount;
    }

    private unsafe void Start()
    {
        MarkRoot();
        HideInternalFolder();
        _self = GCHandle.Alloc(this);
        var callbacks = ProjFsCallbacks.Table();
        var internalRoot = RootLayout.InternalFolderInRoot(Root);
        fixed (char* all = "")
        fixed (char* own = RootLayout.InternalFolder)
        {
            var mappings = stackalloc PrjNotificationMapping[2];
            mappings[0] = new PrjNotificationMapping { NotificationBitMask = WatchedNotifications, NotificationRoot = all };
            // The engine's own folder: only deletes and renames are watched, to refuse them to others.
            mappings[1] = new PrjNotificationMapping { NotificationBitMask = PrjNotifyTypes.PreDelete | PrjNotifyTypes.PreRename, NotificationRoot = own };
            var options = new PrjStartVirtualizingOptions
            {
                Flags = PrjStartVirtualizingFlags.None,
                PoolThreadCount = (uint)Math.Max(0, _options.PoolThreadCount),
                ConcurrentThreadCount = 0,
                NotificationMappings = mappings,
                NotificationMappingsCount = Directory.Exists(internalRoot) ? 2u : 1u,
            };
            var result = ProjectedFsLib.StartVirtualizing(Root, &callbacks, GCHandle.ToIntPtr(_self), &options, out _context);
            if (result != HResult.Ok)
            {
                _self.Free();
                throw MountFailed(Root, $"PrjStartVirtualizing failed with 0x{result:X8}",
                    "Check that Client-ProjFS is enabled, that no other provider serves this folder, and that the service account owns it.");
            }
        }
        _logger.LogInformation("Virtualizing {Root} with ProjFS", Root);
    }

    private const PrjNotifyTypes WatchedNotifications =
        PrjNotifyTypes.FileOpened | PrjNotifyTypes.NewFileCreated | PrjNotifyTypes.FileOverwritten |
        PrjNotifyTypes.PreDelete | PrjNotifyTypes.PreRename | PrjNotifyTypes.PreSetHardlink | PrjNotifyTypes.FileRenamed |
        PrjNotifyTypes.FileHandleClosedNoModification | PrjNotifyTypes.FileHandleClosedFileModified |
        PrjNotifyTypes.FileHandleClosedFileDeleted;

    /// <summary>
    /// The root is marked once, with an instance id kept in the engine's folder so that a restart
    /// serves the same root (ProjFS refuses a second, different id).
    /// </summary>
    private unsafe void MarkRoot()
    {
        var idFile = RootLayout.InstanceIdFile(Root, _options.StatePath);
        Guid id;
        if (File.Exists(idFile) && Guid.TryParse(File.ReadAllText(idFile).Trim(), out var saved))
        {
            id = saved;
        }
        else
        {
            id = Guid.NewGuid();
            Directory.CreateDirectory(Path.GetDirectoryName(idFile)!);
            File.WriteAllText(idFile, id.ToString("D"));
        }
        var result = ProjectedFsLib.MarkDirectoryAsPlaceholder(Root, null, null, &id);
        // An already marked root answers ERROR_REPARSE_POINT_ENCOUNTERED (or ALREADY_EXISTS on some builds).
        if (result != HResult.Ok && result != HResult.ReparsePointEncountered && result != HResult.AlreadyExists)
        {
            throw MountFailed(Root, $"PrjMarkDirectoryAsPlaceholder failed with 0x{result:X8}",
                "The folder may belong to another ProjFS provider; give the drive its own empty cache folder.");
        }
    }

    /// <summary>
    /// A state folder inside the root is a real folder on disk, which ProjFS lists whatever the provider
    /// projects (the projection never has it, FileEntryProjection skips internal paths). As FUSE hides it
    /// from listings, it is marked Hidden and System here, so Explorer and dir do not show it; deletes and
    /// renames of it are refused (PreDelete/PreRename). The Service keeps its state outside the root.
    /// </summary>
    private void HideInternalFolder()
    {
        var folder = new DirectoryInfo(RootLayout.InternalFolderInRoot(Root));
        if (folder.Exists && RootLayout.HiddenAttributes(folder.Attributes) is var hidden && hidden != folder.Attributes)
        {
            folder.Attributes = hidden;
        }
    }

    /// <summary>Stops virtualizing: pending recalls are cancelled, ProjFS waits for callbacks in flight.</summary>
    public void Unmount()
    {
        if (Interlocked.Exchange(ref _stopped, 1) != 0 || _context == 0)
        {
            return;
        }
        _stopping.Cancel();
        StopQueue();
        ProjectedFsLib.StopVirtualizing(_context);
        _context = 0;
        _self.Free();
        _logger.LogInformation("Stopped virtualizing {Root}", Root);
    }

    public void Dispose()
    {
        Unmount();
        _stopping.Dispose();
    }

    internal static ProjFsMount? FromInstance(nint instanceContext) =>
        instanceContext == 0 ? null : GCHandle.FromIntPtr(instanceContext).Target as ProjFsMount;

    /// <summary>The HRESULT an application sees for a failed request.</summary>
    internal static int HResultFor(Exception exception) => exception switch
    {
        GeoDriveException { Kind: ErrorKind.PermissionDenied } => HResult.AccessDenied,
        GeoDriveException { ErrorId: ErrorIds.RecallDenied } => HResult.AccessDenied,
        GeoDriveException { ErrorId: ErrorIds.FileNotFound or ErrorIds.ObjectNotFound } => HResult.FileNotFound,
        GeoDriveException { ErrorId: ErrorIds.FileBusy } => HResult.SharingViolation,
        GeoDriveException { Kind: ErrorKind.ConnectionError } => HResult.NetworkUnreachable,
        OperationCanceledException => HResult.OperationAborted,
        FileNotFoundException or DirectoryNotFoundException => HResult.FileNotFound,
        UnauthorizedAccessException => HResult.AccessDenied,
        _ => HResult.InternalError,
    };

    internal int Fail(string? path, Exception exception)
    {
        var result = HResultFor(exception);
        if (result == HResult.InternalError)
        {
            _logger.LogError(exception, "ProjFS request on {Path} failed", path);
        }
        else
        {
            _logger.LogInformation("ProjFS request on {Path} refused: {Message}", path, exception.Message);
        }
        return result;
    }

    private static GeoDriveException MountFailed(string root, string why, string remedy) => new(
        ErrorIds.MountFailed, ErrorKind.ResourceUnavailable, $"The drive could not be virtualized at '{root}': {why}.", remedy);

    /// <summary>Root-relative Windows path for the ProjFS calls that take one ("a/b" → "a\\b").</summary>
    private static string Native(string drivePath) => drivePath.Replace('/', '\\');

    private static T Wait<T>(ValueTask<T> task) => task.IsCompletedSuccessfully ? task.Result : task.AsTask().GetAwaiter().GetResult();

    private static void Wait(ValueTask task)
    {
        if (!task.IsCompletedSuccessfully)
        {
            task.AsTask().GetAwaiter().GetResult();
        }
    }
}
