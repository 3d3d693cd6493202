using System.Runtime.InteropServices;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Paths;
using GeoDrive.Core.Ports;
using GeoDrive.Mount.Fuse.Native;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace GeoDrive.Mount.Fuse;

/// <summary>Tunables of one FUSE mount.</summary>
public sealed class FuseMountOptions
{
    /// <summary>Shown as the mount's source in /proc/mounts and df ("geodrive:NAME").</summary>
    public string DriveName { get; init; } = "drive";

    /// <summary>Most requests served at once (each recall holds one until its data is back).</summary>
    public int MaxThreads { get; init; } = 16;

    /// <summary>How long the kernel may trust a file's attributes and a name lookup.</summary>
    public TimeSpan AttributeTimeout { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// Names of files (closed or looked up) the kernel may keep cached, and libfuse a node for each; past it the least
    /// recently used are forgotten, and looked up again when next used (docs/decisions/0036-names-the-kernel-keeps.md).
    /// </summary>
    public int NamesKept { get; init; } = 8_192;

    public ILogger Logger { get; init; } = NullLogger.Instance;
}

/// <summary>
/// A drive's cache folder mounted at its mount path through FUSE 3 (docs/architecture.md, "The front-end contract"). Each request is
/// served from the cache file after asking the engine: open recalls a stub (or streams, or denies,
/// by the caller's process rule), the last close reports "modified", and create, delete and rename
/// are reported as they happen. The engine's own folder (.geodrive) is hidden and refused.
/// </summary>
public sealed partial class FuseMount : IDisposable
{
    private readonly IDriveFileSystem _drive;
    private readonly FuseMountOptions _options;
    private readonly ILogger _logger;
    private readonly OpenFiles _open = new();
    private readonly Passthrough _passthrough;
    private readonly CacheSpace _space;
    private readonly KernelNames _kernelNames;
    private CacheFolder _cache = null!;
    private CaseInsensitiveNames? _names;
    private readonly bool _runningAsRoot = LibC.GetEUid() == 0;
    private readonly ManualResetEventSlim _loopEnded = new(false);
    private GCHandle _self;
    private nint _fuse;
    private MountRoot? _root;
    private Thread? _loop;
    private int _unmounted;
    private long _readsServed;
    private long _flushesServed;

    private FuseMount(string mountPath, IDriveFileSystem drive, FuseMountOptions options)
    {
        MountPath = mountPath;
        _drive = drive;
        _options = options;
        _logger = options.Logger;
        _space = new CacheSpace(drive.CachePath);
        _passthrough = new Passthrough(_logger);
        _kernelNames = new KernelNames(options.NamesKept, KernelNames.BatchFor(options.NamesKept), FolderNode, ForgetName);
        _drive.LocalCopyReplaced += ForgetCached;
    }

    /// <summary>A file's bytes were replaced under its name (a newer version from the bucket), or the file removed (deleted there): the kernel's cached attributes and pages go.</summary>
    private void ForgetCached(string path)
    {
        var fuse = _fuse;
        if (fuse != 0 && Volatile.Read(ref _unmounted) == 0)
        {
            // -ENOENT: the kernel holds nothing of it, which is as good.
            _ = LibFuse.InvalidatePath(fuse, "/" + path);
        }
    }

    /// <summary>
    /// The kernel's node id of a folder below the mount ("" its root): libfuse's high-level API gives a name's node id as
    /// its inode number (use_ino is off). Asked through the mount, by the thread that tells the kernel to forget names.
    /// </summary>
    private unsafe ulong? FolderNode(string folder)
    {
        if (folder.Length == 0)
        {
            return LibFuse.RootNode;
        }
        var stat = stackalloc byte[LibC.StatBufferSize];
        return LibC.LStat(MountPath + "/" + folder, (nint)stat) == 0 ? LibC.InodeNumber((nint)stat) : null;
    }

    /// <summary>Tells the kernel to forget a file's name (it sends FORGET once nothing holds it); 0, or a negative errno.</summary>
    private unsafe int ForgetName(ulong folderNode, string name)
    {
        if (Volatile.Read(ref _unmounted) != 0)
        {
            return -Errno.ENOTCONN;
        }
        var bytes = System.Text.Encoding.UTF8.GetBytes(name);
        fixed (byte* p = bytes)
        {
            return LibFuse.NotifyInvalEntry(LibFuse.GetSession(_fuse), folderNode, p, (nuint)bytes.Length);
        }
    }

    public string MountPath { get; }

    /// <summary>Whether opens for reading of local files pass through to the cache file in the kernel (FUSE passthrough).</summary>
    public bool PassesThrough => _passthrough.Enabled;

    /// <summary>The connection's INIT agreed to passthrough (libfuse 3.17+, the kernel offered it).</summary>
    internal void PassthroughNegotiated() => _passthrough.Negotiated();

    /// <summary>Read requests the service has answered since the mount (a passthrough open's reads never come here).</summary>
    internal long ReadsServed => Interlocked.Read(ref _readsServed);

    /// <summary>Flush requests (one per close(2) of a handle that needs one) the service has answered since the mount.</summary>
    internal long FlushesServed => Interlocked.Read(ref _flushesServed);

    /// <summary>For tests: told the path of every lookup and getattr the kernel sends (not the root's).</summary>
    internal Action<string>? AttributesAsked { get; set; }

    /// <summary>For tests: names of files the kernel was told to forget, and held.</summary>
    internal long NamesForgotten => _kernelNames.Forgotten;

    /// <summary>For tests: completes once every name past <see cref="FuseMountOptions.NamesKept"/> so far was told to the kernel.</summary>
    internal Task WhenNamesToldAsync() => _kernelNames.WhenToldAsync();

    /// <summary>Handles open through the mount right now.</summary>
    public int OpenHandleCount => _open.HandleCount;

    /// <summary>Mounts <paramref name="drive"/>'s cache at <paramref name="mountPath"/>; throws MountFailed with what to do.</summary>
    public static FuseMount Mount(string mountPath, IDriveFileSystem drive, FuseMountOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(drive);
        var full = Path.TrimEndingDirectorySeparator(Path.GetFullPath(mountPath));
        ClearStaleMount(full);
        if (!Directory.Exists(full))
        {
            throw new GeoDriveException(ErrorIds.MountPathNotFound, ErrorKind.ObjectNotFound,
                $"The mount path '{full}' does not exist.", "Create the folder (empty) first, e.g. mkdir -p " + full);
        }
        if (!File.Exists("/dev/fuse"))
        {
            throw MountFailed(full, "/dev/fuse is missing", "Load the FUSE module (modprobe fuse) or give the container /dev/fuse.");
        }
        LibFuseLoader.Install();
        var mount = new FuseMount(full, drive, options ?? new FuseMountOptions());
        mount.Start();
        return mount;
    }

    /// <summary>The mount that libfuse's current request is for (its private data).</summary>
    internal static unsafe FuseMount? FromContext()
    {
        var context = LibFuse.GetContext();
        if (context is null || context->PrivateData == 0)
        {
            return null;
        }
        return GCHandle.FromIntPtr(context->PrivateData).Target as FuseMount;
    }

    private unsafe void Start()
    {
        _self = GCHandle.Alloc(this);
        var timeout = _options.AttributeTimeout.TotalSeconds.ToString("0.###", System.Globalization.CultureInfo.InvariantCulture);
        // A case-insensitive drive's file has a name for every case the kernel was asked for, and a delete or rename
        // through one leaves the others: the kernel asks again at every lookup, or `rm REPORT.TXT; echo > Report.TXT`
        // would open a name the kernel still held as the deleted file (ENOENT) instead of creating it.
        var entryTimeout = _drive.NamesIgnoreCase ? "0" : timeout;
        // default_permissions: the kernel checks modes and owners against what getattr returns. nosuid and nodev (libfuse's
        // defaults, said here): a mode or a file another site put in the bucket never runs with privileges here.
        var mountOptions = $"fsname=geodrive:{_options.DriveName},subtype=geodrive,nosuid,nodev,default_permissions," +
                           $"attr_timeout={timeout},entry_timeout={entryTimeout},negative_timeout=0" +
                           (_runningAsRoot ? ",allow_other" : "");
        string[] arguments = ["geodrive", "-o", mountOptions];
        var argv = arguments.Select(Marshal.StringToCoTaskMemUTF8).ToArray();
        var argvBlock = Marshal.AllocHGlobal(nint.Size * (argv.Length + 1));
        var operations = FuseCallbacks.Table();
        try
        {
            for (var i = 0; i < argv.Length; i++)
            {
                Marshal.WriteIntPtr(argvBlock, i * nint.Size, argv[i]);
            }
            Marshal.WriteIntPtr(argvBlock, argv.Length * nint.Size, 0);
            var args = new FuseArgs { Argc = argv.Length, Argv = argvBlock, Allocated = 0 };
            _fuse = LibFuse.New(&args, &operations, (nuint)sizeof(FuseOperations), GCHandle.ToIntPtr(_self));
            if (args.Allocated != 0)
            {
                LibFuse.FreeArgs(&args);
            }
            if (_fuse == 0)
            {
                throw MountFailed(MountPath, "libfuse refused the mount options", "See the service log; check that fuse3 is installed (apt-get install fuse3).");
            }
            _root = MountRoot.Open(MountPath, _drive.CachePath);
            _cache = CacheFolder.Open(_drive.CachePath);
            _names = _drive.NamesIgnoreCase ? new CaseInsensitiveNames(_cache) : null;
            if (LibFuse.Mount(_fuse, MountPath) != 0)
            {
                LibFuse.Destroy(_fuse);
                _fuse = 0;
                throw MountFailed(MountPath, "the kernel refused the mount",
                    "Check that the folder is empty and not already mounted, that /dev/fuse is usable, and that the service runs as root.");
            }
            _passthrough.Attach(LibFuse.SessionFd(LibFuse.GetSession(_fuse)));
        }
        catch
        {
            _kernelNames.Dispose();
            _cache?.Dispose();
            _root?.Dispose();
            _self.Free();
            throw;
        }
        finally
        {
            Marshal.FreeHGlobal(argvBlock);
            foreach (var arg in argv)
            {
                Marshal.FreeCoTaskMem(arg);
            }
        }

        _loop = new Thread(RunLoop) { Name = $"fuse:{_options.DriveName}", IsBackground = true };
        _loop.Start();
        _logger.LogInformation("Mounted {Cache} at {Mount}", _drive.CachePath, MountPath);
    }

    private void RunLoop()
    {
        var config = LibFuse.LoopConfigCreate();
        try
        {
            LibFuse.LoopConfigSetMaxThreads(config, (uint)Math.Max(2, _options.MaxThreads));
            LibFuse.LoopConfigSetIdleThreads(config, 4);
            var result = LibFuse.LoopMultiThreaded(_fuse, config);
            if (result != 0 && Volatile.Read(ref _unmounted) == 0)
            {
                _logger.LogError("The FUSE loop of {Mount} ended with {Result}", MountPath, result);
            }
        }
        finally
        {
            LibFuse.LoopConfigDestroy(config);
            _loopEnded.Set();
        }
    }

    /// <summary>Unmounts (lazily, so a busy mount detaches at once) and waits for the loop to end.</summary>
    public void Unmount()
    {
        if (Interlocked.Exchange(ref _unmounted, 1) != 0 || _fuse == 0)
        {
            return;
        }
        _drive.LocalCopyReplaced -= ForgetCached;
        // Before the session ends: no notify may reach a session libfuse has freed. A call stuck longer (a stat through
        // the mount waiting for a FUSE thread a recall holds) leaves the session allocated below, never freed under it.
        var namesStopped = _kernelNames.Stop(TimeSpan.FromSeconds(10));
        LibFuse.Exit(_fuse);
        if (LibC.UMount2(MountPath, LibC.MntDetach) != 0)
        {
            RunFusermount(MountPath);
        }
        if (!_loopEnded.Wait(TimeSpan.FromSeconds(30)))
        {
            // Something still holds a file open under the detached mount; the loop ends when it closes.
            _logger.LogWarning("The FUSE loop of {Mount} is still serving open files after unmount", MountPath);
            return;
        }
        if (!namesStopped)
        {
            _logger.LogWarning("The FUSE session of {Mount} is left allocated: a call telling the kernel to forget a name had not returned", MountPath);
            return;
        }
        LibFuse.Unmount(_fuse);
        LibFuse.Destroy(_fuse);
        _fuse = 0;
        _cache?.Dispose();
        _root?.Dispose();
        _self.Free();
        _logger.LogInformation("Unmounted {Mount}", MountPath);
    }

    public void Dispose() => Unmount();

    /// <summary>
    /// A service killed while mounted leaves the kernel mount behind ("Transport endpoint is not
    /// connected"); it is detached before mounting again. The drive's cache is ours (its index is locked),
    /// so any GeoDrive mount still at its mount path is a dead one: every layer is detached, also one whose
    /// root still answers from the kernel's attribute cache (a restart within the attribute timeout once
    /// stacked a new mount on a dead one, and the next restart found the path gone).
    /// </summary>
    private static void ClearStaleMount(string path)
    {
        for (var layer = 0; layer < 8 && IsGeoDriveMountPoint(path); layer++)
        {
            if (LibC.UMount2(path, LibC.MntDetach) != 0)
            {
                RunFusermount(path);
            }
        }
        var buffer = Marshal.AllocHGlobal(512);
        try
        {
            if (LibC.LStat(path, buffer) == 0 || Marshal.GetLastPInvokeError() != Errno.ENOTCONN)
            {
                return;
            }
        }
        finally
        {
            Marshal.FreeHGlobal(buffer);
        }
        if (LibC.UMount2(path, LibC.MntDetach) != 0)
        {
            RunFusermount(path);
        }
    }

    /// <summary>Whether /proc/self/mountinfo lists a GeoDrive FUSE mount (type fuse.geodrive) at <paramref name="path"/>.</summary>
    private static bool IsGeoDriveMountPoint(string path)
    {
        try
        {
            foreach (var line in File.ReadLines("/proc/self/mountinfo"))
            {
                // "id parent major:minor root mountpoint options ... - fstype source superoptions"; spaces in paths are \040.
                var fields = line.Split(' ');
                var separator = Array.IndexOf(fields, "-");
                if (fields.Length > 4 && separator > 0 && separator + 1 < fields.Length
                    && fields[separator + 1] == "fuse.geodrive"
                    && fields[4].Replace("\\040", " ", StringComparison.Ordinal).Replace("\\011", "\t", StringComparison.Ordinal) == path)
                {
                    return true;
                }
            }
        }
        catch (IOException)
        {
            // No /proc: the lstat check below is all there is.
        }
        return false;
    }

    private static void RunFusermount(string path)
    {
        try
        {
            using var process = System.Diagnostics.Process.Start(new System.Diagnostics.ProcessStartInfo("fusermount3", ["-u", "-z", path])
            {
                RedirectStandardError = true,
                RedirectStandardOutput = true,
            });
            process?.WaitForExit(10_000);
        }
        catch (System.ComponentModel.Win32Exception)
        {
            // fusermount3 is not installed; umount2 already said no, nothing more to try.
        }
    }

    private static GeoDriveException MountFailed(string mountPath, string why, string remedy) => new(
        ErrorIds.MountFailed, ErrorKind.ResourceUnavailable, $"The drive could not be mounted at '{mountPath}': {why}.", remedy);

    /// <summary>The drive-relative path of a FUSE path ("/a/b" → "a/b", "/" → "").</summary>
    private static string Relative(string fusePath) => fusePath.Length <= 1 ? "" : fusePath[1..];

    /// <summary>The drive-relative path the cache has for a FUSE path: on a case-insensitive drive, its names of any case (<see cref="CaseInsensitiveNames"/>).</summary>
    private string Named(string fusePath) => _names is null ? Relative(fusePath) : _names.Resolve(Relative(fusePath));

    private string Local(string relative) => relative.Length == 0 ? _drive.CachePath : DrivePath.ToLocal(_drive.CachePath, relative);

    /// <summary>Logs an unexpected failure of one request and turns it into an errno for the application.</summary>
    internal int Fail(string? path, Exception exception)
    {
        var errno = ErrnoFor(exception);
        if (errno == Errno.EIO)
        {
            _logger.LogError(exception, "FUSE request on {Path} failed", path);
        }
        else
        {
            _logger.LogInformation("FUSE request on {Path} refused: {Message}", path, exception.Message);
        }
        return -errno;
    }

    internal static int ErrnoFor(Exception exception) => exception switch
    {
        GeoDriveException { Kind: ErrorKind.PermissionDenied } => Errno.EACCES,
        GeoDriveException { ErrorId: ErrorIds.RecallDenied } => Errno.EACCES,
        GeoDriveException { ErrorId: ErrorIds.FileNotFound } => Errno.ENOENT,
        GeoDriveException { ErrorId: ErrorIds.HostileObjectKey } => Errno.EINVAL,
        GeoDriveException { ErrorId: ErrorIds.FileBusy } => Errno.EBUSY,
        GeoDriveException { ErrorId: ErrorIds.CacheVolumeFull } => Errno.ENOSPC,
        GeoDriveException { Kind: ErrorKind.ConnectionError } => Errno.EHOSTUNREACH,
        OperationCanceledException => Errno.ETIMEDOUT,
        FileNotFoundException or DirectoryNotFoundException => Errno.ENOENT,
        UnauthorizedAccessException => Errno.EACCES,
        IOException io when CacheReserve.IsVolumeFull(io) => Errno.ENOSPC,
        _ => Errno.EIO,
    };
}
