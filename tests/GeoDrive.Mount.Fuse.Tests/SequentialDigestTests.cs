using System.IO.Hashing;
using System.Security.Cryptography;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>The checksums the mount keeps of a file written from empty: only writes at the end keep them.</summary>
public sealed class SequentialDigestTests
{
    private static readonly byte[] Bytes = Enumerable.Range(0, 300_000).Select(i => (byte)(i * 7 + i / 251)).ToArray();

    [Fact]
    public void Writes_each_at_the_end_give_the_checksums_of_the_whole_file_in_order()
    {
        using var digest = new SequentialDigest();
        digest.Written(0, Bytes.AsSpan(0, 100));
        digest.Written(100, Bytes.AsSpan(100, 131_072));
        digest.Written(131_172, Bytes.AsSpan(131_172));

        var written = digest.Finish();

        Assert.NotNull(written);
        Assert.Equal(Bytes.Length, written.Length);
        Assert.Equal(Convert.ToHexStringLower(SHA256.HashData(Bytes)), written.Sha256);
        Assert.Equal(Convert.ToHexStringLower(XxHash128.Hash(Bytes)), written.Xxh128);
    }

    [Fact]
    public void An_empty_file_has_the_checksums_of_no_bytes()
    {
        using var digest = new SequentialDigest();

        var written = digest.Finish();

        Assert.Equal(new GeoDrive.Core.Model.WrittenDigest(0, Convert.ToHexStringLower(SHA256.HashData([])), Convert.ToHexStringLower(XxHash128.Hash([]))), written);
    }

    [Theory]
    [InlineData(99)] // over the last bytes written (a rewrite)
    [InlineData(101)] // past the end (a hole)
    [InlineData(0)] // from the start again
    public void A_write_anywhere_but_the_end_ends_it_for_good(long offset)
    {
        using var digest = new SequentialDigest();
        digest.Written(0, Bytes.AsSpan(0, 100));

        digest.Written(offset, Bytes.AsSpan(100, 10));
        // Even a write at the end afterwards cannot bring it back.
        digest.Written(100, Bytes.AsSpan(100, 10));

        Assert.Equal(-1, digest.Length);
        Assert.Null(digest.Finish());
    }

    [Fact]
    public void A_truncation_to_its_own_length_keeps_it_and_any_other_ends_it()
    {
        using var kept = new SequentialDigest();
        kept.Written(0, Bytes.AsSpan(0, 100));
        kept.Truncated(100);
        kept.Written(100, Bytes.AsSpan(100, 50));
        Assert.Equal(Convert.ToHexStringLower(SHA256.HashData(Bytes.AsSpan(0, 150))), kept.Finish()?.Sha256);

        using var cut = new SequentialDigest();
        cut.Written(0, Bytes.AsSpan(0, 100));
        cut.Truncated(50);
        Assert.Null(cut.Finish());

        using var grown = new SequentialDigest();
        grown.Written(0, Bytes.AsSpan(0, 100));
        grown.Truncated(4096);
        Assert.Null(grown.Finish());
    }

    [Fact]
    public void It_finishes_once()
    {
        using var digest = new SequentialDigest();
        digest.Written(0, Bytes.AsSpan(0, 10));

        Assert.NotNull(digest.Finish());
        Assert.Null(digest.Finish());
    }

    [Fact]
    public void Large_writes_hashed_behind_the_writer_give_the_same_checksums_even_past_the_shared_budget()
    {
        var big = new byte[(int)(SequentialDigest.SharedBudget * 2 + 12_345)];
        new Random(32).NextBytes(big);
        using var digest = new SequentialDigest();
        var at = 0;
        // Large and small writes in turn: a small one may not overtake large ones still waiting to be hashed.
        for (var piece = 0; at < big.Length; piece++)
        {
            var length = Math.Min(big.Length - at, piece % 2 == 0 ? 1 << 20 : 100);
            digest.Written(at, big.AsSpan(at, length));
            at += length;
        }

        var written = digest.Finish();

        Assert.Equal(Convert.ToHexStringLower(SHA256.HashData(big)), written?.Sha256);
        Assert.Equal(Convert.ToHexStringLower(XxHash128.Hash(big)), written?.Xxh128);
    }

    [Fact]
    public void Ended_while_bytes_wait_to_be_hashed_it_finishes_with_nothing()
    {
        using var digest = new SequentialDigest();
        for (var i = 0; i < 8; i++)
        {
            digest.Written(i * (1L << 20), Bytes.AsSpan(0, 1 << 18).ToArray().Concat(new byte[(1 << 20) - (1 << 18)]).ToArray());
        }

        digest.End();

        Assert.Null(digest.Finish());
        Assert.Equal(-1, digest.Length);
    }
}
