using System.Security.Cryptography;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Layout;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// Checksums a front end hands over at close (docs/decisions/0032-hashed-as-written.md), taken by the upload for that change
/// only. The wrong ones here are a stand-in for a front end's bug: no real part hands them over, which is why the check
/// before a stub must catch them.
/// </summary>
public sealed class WrittenChecksumUploadTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>, IAsyncLifetime
{
    private const int Size = 6 << 20;

    private readonly DriveRig _rig = new(s3, DriveRig.FiveMiBRangesOneAtATime);

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync() => await _rig.DisposeAsync();

    private static string Sha256(byte[] bytes) => Convert.ToHexStringLower(SHA256.HashData(bytes));

    /// <summary>Made and written as the mount reports it, the last close handing over <paramref name="written"/>.</summary>
    private async Task WriteAsync(string path, byte[] content, WrittenDigest written)
    {
        await File.WriteAllBytesAsync(_rig.Local(path), content);
        _rig.Engine.Created(path, _rig.Caller, isDirectory: false);
        await _rig.Engine.OpenAsync(path, _rig.Caller, OpenIntent.Write);
        await _rig.Engine.ClosedWrittenAsync(path, _rig.Caller, written);
    }

    [Fact]
    public async Task Wrong_checksums_handed_over_at_close_stand_in_for_a_front_end_bug_and_never_let_the_file_be_stubbed()
    {
        var content = DriveRig.RandomBytes(Size, 3);
        var zeros = new byte[Size];
        await WriteAsync("scan.tif", content, new WrittenDigest(Size, Sha256(zeros), Convert.ToHexStringLower(System.IO.Hashing.XxHash128.Hash(zeros))));

        // Taken for the parts: the object goes up labelled with them.
        Assert.Equal(FileState.Cached, (await _rig.Engine.UploadAsync("scan.tif")).State);
        Assert.False(ObjectLayout.Holds((await _rig.Store.HeadAsync("scan.tif"))!, Size, Sha256(content), null));

        // The check before the stub reads the file and finds other bytes than the entry names: the only copy stays.
        var refused = await Assert.ThrowsAsync<GeoDriveException>(() => _rig.Engine.StubAsync("scan.tif"));
        Assert.Equal(ErrorIds.FileNotUploaded, refused.ErrorId);
        Assert.Equal(FileState.Dirty, _rig.StateOf("scan.tif"));
        Assert.NotEqual(0, _rig.AllocatedBlocks("scan.tif"));

        // The next upload hashes the file by reading it, and the object is labelled by its bytes.
        Assert.Equal(FileState.Cached, (await _rig.Engine.UploadAsync("scan.tif")).State);
        Assert.True(ObjectLayout.Holds((await _rig.Store.HeadAsync("scan.tif"))!, Size, Sha256(content), null));
        await _rig.Engine.StubAsync("scan.tif");
        Assert.Equal(content, await _rig.ReadAsync("scan.tif"));
    }

    [Fact]
    public async Task Checksums_handed_over_at_close_are_not_taken_after_the_file_was_opened_for_writing_again()
    {
        var first = DriveRig.RandomBytes(Size, 4);
        await WriteAsync("film.mkv", first, new WrittenDigest(Size, Sha256(first), Convert.ToHexStringLower(System.IO.Hashing.XxHash128.Hash(first))));
        var written = File.GetLastWriteTimeUtc(_rig.Local("film.mkv"));
        // Rewritten in place, same size, by an open whose close hands over nothing (a write not at the end), within the
        // same tick of the file system's clock: size, time and mode cannot tell the two apart.
        await _rig.Engine.OpenAsync("film.mkv", _rig.Caller, OpenIntent.Write);
        var second = DriveRig.RandomBytes(Size, 5);
        await File.WriteAllBytesAsync(_rig.Local("film.mkv"), second);
        File.SetLastWriteTimeUtc(_rig.Local("film.mkv"), written);

        // Not closed yet: an upload now (Invoke-ForceUpload) must not take the first bytes' checksums.
        Assert.Equal(FileState.Cached, (await _rig.Engine.UploadAsync("film.mkv")).State);

        Assert.True(ObjectLayout.Holds((await _rig.Store.HeadAsync("film.mkv"))!, Size, Sha256(second), null));
        Assert.Equal(second, await _rig.ObjectBytesAsync("film.mkv"));
    }
}
