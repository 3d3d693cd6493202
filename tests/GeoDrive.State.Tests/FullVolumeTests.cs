using GeoDrive.Core.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.State.Tests;

/// <summary>
/// The index on a volume that fills up (a real, small loop-mounted ext4): a write that fails for want of space
/// is reported to its caller, and once space is free again the index writes on, without a restart, and keeps
/// what it acknowledged and what was deferred.
/// </summary>
[Collection(nameof(FullVolumeTests))]
public sealed class FullVolumeTests : IDisposable
{
    private readonly LoopVolume _volume = new(8);

    public void Dispose() => _volume.Dispose();

    private string Filler => Path.Combine(_volume.MountPath, "filler");

    /// <summary>Takes every free byte of the volume.</summary>
    private void FillVolume()
    {
        using var filler = new FileStream(Filler, FileMode.Append);
        var block = new byte[64 * 1024];
        try
        {
            while (true)
            {
                filler.Write(block);
                filler.Flush(flushToDisk: true);
            }
        }
        catch (IOException)
        {
            // Full.
        }
    }

    private static FileEntry Big(string path)
    {
        var entry = Samples.Entry(path);
        entry.LastError = new string('x', 4_000);
        return entry;
    }

    [Fact]
    public void After_a_write_failed_on_a_full_volume_the_index_writes_again_once_space_is_free_and_keeps_every_acknowledged_entry()
    {
        var path = Path.Combine(_volume.MountPath, "state", "index.db");
        var acknowledged = new List<string>();
        using (var index = LiteDbFileIndex.Open(path))
        {
            index.Put(Samples.Entry("before.bin"));
            acknowledged.Add("before.bin");
            FillVolume();
            Exception? failed = null;
            for (var i = 0; i < 2_000 && failed is null; i++)
            {
                try
                {
                    index.Put(Big($"full/{i:0000}.bin"));
                    acknowledged.Add($"full/{i:0000}.bin");
                }
                catch (Exception ex)
                {
                    failed = ex;
                }
            }
            Assert.NotNull(failed);
            // A deferred put (a close through the mount) while the volume is full: nobody waits for it, and it is not lost.
            index.PutDeferred(Big("deferred-while-full.bin"));
            acknowledged.Add("deferred-while-full.bin");
            Assert.ThrowsAny<Exception>(() => index.FindByState(FileState.Cached));
            Assert.NotNull(index.Get("deferred-while-full.bin"));

            File.Delete(Filler);
            index.Put(Samples.Entry("after.bin"));
            acknowledged.Add("after.bin");
            index.PutDeferred(Samples.Entry("deferred.bin"));
            acknowledged.Add("deferred.bin");

            Assert.All(acknowledged, p => Assert.NotNull(index.Get(p)));
            // The counts by state (kept as entries change) agree with the entries after the failed writes.
            Assert.Equal(index.FindByState(FileState.Cached).Count, index.CountByState()[FileState.Cached]);
        }
        using (var reopened = LiteDbFileIndex.Open(path))
        {
            Assert.All(acknowledged, p => Assert.NotNull(reopened.Get(p)));
        }
    }
}
