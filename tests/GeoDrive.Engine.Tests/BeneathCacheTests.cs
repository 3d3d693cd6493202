using GeoDrive.Core.Errors;
using GeoDrive.Core.Paths;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>Opens beneath a cache folder on a real file system: links refused wherever they are, the cache never left.</summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class BeneathCacheTests : IDisposable
{
    private const int ELoop = 40;
    private const int EXDev = 18;
    private readonly TempDirectory _cache = new("cache");
    private readonly TempDirectory _outside = new("outside");

    public BeneathCacheTests()
    {
        Directory.CreateDirectory(_cache.Combine("docs"));
        File.WriteAllText(_cache.Combine("docs/a.txt"), "inside");
        File.WriteAllText(_outside.Combine("a.txt"), "outside");
    }

    public void Dispose()
    {
        _cache.Dispose();
        _outside.Dispose();
    }

    private int Open(string relative, int flags = BeneathCache.ORdOnly)
    {
        var descriptor = BeneathCache.Open(_cache.Path, relative, flags, 0);
        if (descriptor >= 0)
        {
            BeneathCache.Close(descriptor);
            return 0;
        }
        return -descriptor;
    }

    [Fact]
    public void A_link_as_the_last_name_on_the_way_or_a_way_out_of_the_cache_is_refused_and_a_plain_file_opens()
    {
        File.CreateSymbolicLink(_cache.Combine("docs/link.txt"), _outside.Combine("a.txt"));
        File.CreateSymbolicLink(_cache.Combine("away"), _outside.Path);
        File.CreateSymbolicLink(_cache.Combine("docs/same.txt"), "a.txt");

        Assert.Equal(0, Open("docs/a.txt"));
        Assert.Equal(ELoop, Open("docs/link.txt"));
        Assert.Equal(ELoop, Open("away/a.txt"));
        Assert.Equal(ELoop, Open("docs/same.txt"));
        Assert.Equal(EXDev, Open("../" + Path.GetFileName(_outside.Path) + "/a.txt"));
    }

    [Fact]
    public void Kernel_internal_bits_in_a_front_ends_flags_do_not_fail_the_open()
    {
        // __FMODE_EXEC (0x20), as the kernel may pass it in a FUSE open of a file being executed.
        Assert.Equal(0, Open("docs/a.txt", BeneathCache.ORdOnly | 0x20));
    }

    [Fact]
    public void The_engine_gets_PlantedLink_for_a_link_and_a_readable_handle_for_a_file()
    {
        File.CreateSymbolicLink(_cache.Combine("docs/link.txt"), _outside.Combine("a.txt"));

        var refused = Assert.Throws<GeoDriveException>(() => BeneathCache.OpenHandle(_cache.Path, _cache.Combine("docs/link.txt"), FileMode.Open, FileAccess.Read));
        Assert.Equal(ErrorIds.PlantedLink, refused.ErrorId);
        Assert.Throws<FileNotFoundException>(() => BeneathCache.OpenHandle(_cache.Path, _cache.Combine("docs/none.txt"), FileMode.Open, FileAccess.Read));
        using var handle = BeneathCache.OpenHandle(_cache.Path, _cache.Combine("docs/a.txt"), FileMode.Open, FileAccess.Read);
        var bytes = new byte[16];
        Assert.Equal("inside", System.Text.Encoding.UTF8.GetString(bytes, 0, RandomAccess.Read(handle, bytes, 0)));
    }
}
