using System.Reflection;
using System.Runtime.InteropServices;

namespace GeoDrive.Mount.Fuse.Native;

/// <summary>
/// Which libfuse 3 the mount binds to: GEODRIVE_LIBFUSE (a path) when set, else libfuse3.so.4 (3.17 and later, which
/// can hand the kernel a backing file) when the system has it, else Debian 12's libfuse3.so.3. Both keep the ABI of
/// the calls and structures <see cref="LibFuse"/> uses.
/// </summary>
internal static class LibFuseLoader
{
    private const string Newer = "libfuse3.so.4";
    private static int _installed;

    public static void Install()
    {
        if (Interlocked.Exchange(ref _installed, 1) == 0)
        {
            NativeLibrary.SetDllImportResolver(typeof(LibFuseLoader).Assembly, Resolve);
        }
    }

    private static nint Resolve(string name, Assembly assembly, DllImportSearchPath? searchPath)
    {
        if (name != LibFuse.Library)
        {
            return 0;
        }
        var chosen = Environment.GetEnvironmentVariable("GEODRIVE_LIBFUSE");
        if (!string.IsNullOrEmpty(chosen))
        {
            // Asked for by name or path: that one, or the mount fails saying which and what to do.
            try
            {
                return NativeLibrary.Load(chosen);
            }
            catch (DllNotFoundException ex)
            {
                throw new DllNotFoundException(
                    $"GEODRIVE_LIBFUSE names '{chosen}', which could not be loaded ({ex.Message}). Unset it, or name libfuse3.so.3 (Debian's 3.14) or libfuse3.so.4 (3.17, scripts/install-libfuse.sh).", ex);
            }
        }
        return NativeLibrary.TryLoad(Newer, out var newer) ? newer : 0;
    }
}
