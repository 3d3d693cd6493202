using GeoDrive.Mount.Fuse.Native;
using Microsoft.Extensions.Logging;

namespace GeoDrive.Mount.Fuse;

/// <summary>
/// FUSE passthrough (Linux 6.9+, libfuse 3.17+): an open answered with a backing file has its reads (and, for a
/// handle that may write, its mmap) done by the kernel on the cache file, without a trip through the service.
/// This registers a cache file's descriptor with the kernel as a backing file and drops it again; the choice of
/// which opens pass through is <see cref="OpenFiles.Choose"/>'s. docs/decisions/0034-fuse-passthrough.md.
/// </summary>
internal sealed class Passthrough
{
    // include/uapi/linux/fuse.h: FUSE_DEV_IOC_MAGIC 229; struct fuse_backing_map { int32 fd; uint32 flags; uint64 padding; }.
    private const nuint BackingOpen = (1u << 30) | (16u << 16) | (229u << 8) | 1; // _IOW(229, 1, struct fuse_backing_map)
    private const nuint BackingClose = (1u << 30) | (4u << 16) | (229u << 8) | 2; // _IOW(229, 2, uint32_t)

    /// <summary>FUSE_CAP_PASSTHROUGH (fuse_common.h, libfuse 3.17).</summary>
    public const uint Capability = 1u << 29;

    /// <summary>FUSE_VERSION from which struct fuse_file_info carries backing_id.</summary>
    public const int FirstLibraryVersion = 317;

    private readonly ILogger _logger;
    private int _sessionFd = -1;
    private int _enabled;

    public Passthrough(ILogger logger) => _logger = logger;

    /// <summary>Whether opens may pass through: the kernel and the library agreed to it, and registering works.</summary>
    public bool Enabled => Volatile.Read(ref _enabled) == 1;

    /// <summary>The connection's INIT: the kernel offered passthrough and the library was asked for it.</summary>
    public void Negotiated()
    {
        Volatile.Write(ref _enabled, 1);
        _logger.LogInformation("FUSE passthrough on: reads of local files opened for reading go from the cache file in the kernel");
    }

    /// <summary>The session's /dev/fuse descriptor, known once mounted.</summary>
    public void Attach(int sessionFd) => Volatile.Write(ref _sessionFd, sessionFd);

    /// <summary>
    /// Registers <paramref name="descriptor"/> as a backing file: its id (&gt; 0), or 0 when the kernel refused. A refusal
    /// turns passthrough off for the mount (logged once): every later open is served by the service, as before.
    /// </summary>
    public unsafe int Register(int descriptor)
    {
        var fd = Volatile.Read(ref _sessionFd);
        if (!Enabled || fd < 0)
        {
            return 0;
        }
        var map = stackalloc long[2];
        map[0] = (uint)descriptor; // fd, flags 0
        map[1] = 0;
        var id = LibC.IoCtl(fd, BackingOpen, map);
        if (id > 0)
        {
            return id;
        }
        var errno = System.Runtime.InteropServices.Marshal.GetLastPInvokeError();
        if (Interlocked.Exchange(ref _enabled, 0) == 1)
        {
            _logger.LogWarning("FUSE passthrough turned off for this mount: the kernel refused a backing file (errno {Errno}); reads go through the service", errno);
        }
        return 0;
    }

    /// <summary>Drops a backing file's id once its open is released; the kernel keeps the file while any open uses it.</summary>
    public unsafe void Unregister(int id)
    {
        var fd = Volatile.Read(ref _sessionFd);
        if (id > 0 && fd >= 0)
        {
            _ = LibC.IoCtl(fd, BackingClose, &id);
        }
    }
}
