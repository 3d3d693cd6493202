using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Mount.ProjFS.Dehydration;
using GeoDrive.Mount.ProjFS.Native;

namespace GeoDrive.Mount.ProjFS.Tests;

/// <summary>When a file may become a stub on Windows: the engine's stubbing rules, checked again at dehydration.</summary>
public sealed class DehydrationRulesTests
{
    private static readonly DateTimeOffset Written = new(2026, 3, 1, 12, 0, 0, TimeSpan.Zero);

    private static FileEntry Entry(FileState state = FileState.Cached, string? checksum = "abc123") => new()
    {
        Path = "scans/a.pdf",
        State = state,
        Size = 4096,
        ModifiedUtc = Written,
        Checksum = checksum,
        ETag = "\"e1\"",
    };

    private static OnDiskFile Disk(PrjFileState state = PrjFileState.Full, long size = 4096, DateTimeOffset? modified = null, bool readOnly = false) =>
        new(true, state, size, modified ?? Written, readOnly);

    [Fact]
    public void A_verified_closed_unchanged_full_file_is_dehydrated_allowing_its_local_data_to_go()
    {
        var decision = DehydrationRules.Decide(Entry(), Disk(), isOpen: false);

        Assert.True(decision.MayDehydrate);
        Assert.Equal((uint)(PrjUpdateTypes.AllowDirtyData | PrjUpdateTypes.AllowDirtyMetadata), decision.UpdateFlags);
    }

    [Fact]
    public void A_hydrated_placeholder_needs_no_dirty_flags()
    {
        var decision = DehydrationRules.Decide(Entry(), Disk(PrjFileState.HydratedPlaceholder), false);

        Assert.True(decision.MayDehydrate);
        Assert.Equal(0u, decision.UpdateFlags);
    }

    [Fact]
    public void Dirty_metadata_and_read_only_are_allowed_explicitly()
    {
        var decision = DehydrationRules.Decide(Entry(), Disk(PrjFileState.HydratedPlaceholder | PrjFileState.DirtyPlaceholder, readOnly: true), false);

        Assert.Equal((uint)(PrjUpdateTypes.AllowDirtyMetadata | PrjUpdateTypes.AllowReadOnly), decision.UpdateFlags);
    }

    [Theory]
    [InlineData(FileState.Dirty)]
    [InlineData(FileState.Uploading)]
    [InlineData(FileState.Recalling)]
    public void Data_not_verified_in_the_bucket_is_never_dehydrated(FileState state)
    {
        var decision = DehydrationRules.Decide(Entry(state), Disk(), false);

        Assert.Equal(DehydrationVerdict.Refuse, decision.Verdict);
        Assert.Equal(ErrorIds.FileNotUploaded, decision.ErrorId);
    }

    [Fact]
    public void A_cached_entry_without_a_checksum_is_not_verified()
    {
        Assert.Equal(ErrorIds.FileNotUploaded, DehydrationRules.Decide(Entry(checksum: null), Disk(), false).ErrorId);
    }

    [Fact]
    public void An_excluded_file_is_never_dehydrated()
    {
        Assert.Equal(ErrorIds.FileExcluded, DehydrationRules.Decide(Entry(FileState.Excluded), Disk(), false).ErrorId);
    }

    [Fact]
    public void An_open_file_is_never_dehydrated()
    {
        Assert.Equal(ErrorIds.FileBusy, DehydrationRules.Decide(Entry(), Disk(), isOpen: true).ErrorId);
    }

    [Fact]
    public void A_file_changed_since_the_upload_is_not_dehydrated()
    {
        Assert.Equal(ErrorIds.FileNotUploaded, DehydrationRules.Decide(Entry(), Disk(size: 4097), false).ErrorId);
        Assert.Equal(ErrorIds.FileNotUploaded, DehydrationRules.Decide(Entry(), Disk(modified: Written.AddSeconds(1)), false).ErrorId);
    }

    [Fact]
    public void A_placeholder_without_data_is_already_a_stub()
    {
        Assert.Equal(DehydrationVerdict.AlreadyStub, DehydrationRules.Decide(Entry(FileState.Stubbed), Disk(PrjFileState.Placeholder), false).Verdict);
    }

    [Fact]
    public void An_entry_marked_stubbed_whose_data_is_still_local_is_dehydrated_as_recovery_does()
    {
        // The index says Stubbed before the data goes; after a crash in between the data is still here.
        Assert.True(DehydrationRules.Decide(Entry(FileState.Stubbed), Disk(PrjFileState.HydratedPlaceholder), false).MayDehydrate);
    }

    [Fact]
    public void A_missing_file_or_a_tombstone_is_not_found()
    {
        Assert.Equal(ErrorIds.FileNotFound, DehydrationRules.Decide(Entry(), new OnDiskFile(false, PrjFileState.None, 0, default, false), false).ErrorId);
        Assert.Equal(ErrorIds.FileNotFound, DehydrationRules.Decide(Entry(), Disk(PrjFileState.Tombstone), false).ErrorId);
    }
}
