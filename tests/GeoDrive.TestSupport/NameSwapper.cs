using System.Runtime.InteropServices;

namespace GeoDrive.TestSupport;

/// <summary>
/// Exchanges two names (renameat2 RENAME_EXCHANGE: atomic, both always exist) on its own thread as fast as it
/// can until disposed, as a local user racing the service's checks would; disposing leaves the names as they were.
/// </summary>
public sealed partial class NameSwapper : IDisposable
{
    private const int AtFdCwd = -100;
    private const uint RenameExchange = 2;
    private readonly Thread _thread;
    private readonly string _one;
    private readonly string _other;
    private volatile bool _stop;
    private long _swaps;

    public NameSwapper(string one, string other)
    {
        _one = one;
        _other = other;
        _thread = new Thread(() =>
        {
            while (!_stop)
            {
                Exchange();
                _swaps++;
            }
        }) { IsBackground = true, Name = "name swapper" };
        _thread.Start();
    }

    public long Swaps => Interlocked.Read(ref _swaps);

    public void Dispose()
    {
        if (_stop)
        {
            return;
        }
        _stop = true;
        _thread.Join();
        if (_swaps % 2 == 1)
        {
            Exchange();
        }
    }

    private void Exchange()
    {
        if (RenameAt2(AtFdCwd, _one, AtFdCwd, _other, RenameExchange) != 0)
        {
            throw new IOException($"renameat2 of '{_one}' and '{_other}' failed: errno {Marshal.GetLastPInvokeError()}");
        }
    }

    [LibraryImport("libc", EntryPoint = "renameat2", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int RenameAt2(int oldDirFd, string oldPath, int newDirFd, string newPath, uint flags);
}
