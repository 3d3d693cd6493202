using GeoDrive.Engine.Drives;

namespace GeoDrive.Engine.Tests;

/// <summary>The folder markers a run deleted, kept to a budget: a marker written again is forgotten, the oldest go first.</summary>
public sealed class DeletedFoldersTests
{
    [Fact]
    public void A_deleted_marker_is_remembered_until_it_is_written_again()
    {
        var deleted = new DeletedFolders();
        deleted.Deleted("reports/2025/");
        Assert.True(deleted.WasDeleted("reports/2025/"));
        Assert.False(deleted.WasDeleted("reports/"));

        deleted.Written("reports/2025/");
        Assert.False(deleted.WasDeleted("reports/2025/"));

        deleted.Deleted("reports/2025/");
        Assert.True(deleted.WasDeleted("reports/2025/"));
    }

    [Fact]
    public void Past_its_capacity_the_oldest_markers_are_forgotten_first()
    {
        var deleted = new DeletedFolders();
        for (var i = 0; i <= DeletedFolders.Capacity; i++)
        {
            deleted.Deleted($"f{i}/");
        }
        Assert.False(deleted.WasDeleted("f0/"));
        Assert.True(deleted.WasDeleted("f1/"));
        Assert.True(deleted.WasDeleted($"f{DeletedFolders.Capacity}/"));
    }

    [Fact]
    public void A_marker_deleted_again_after_it_was_written_is_remembered_by_its_later_delete()
    {
        var deleted = new DeletedFolders();
        deleted.Deleted("reports/");
        deleted.Written("reports/");
        deleted.Deleted("reports/");
        for (var i = 1; i < DeletedFolders.Capacity; i++)
        {
            deleted.Deleted($"f{i}/");
        }
        Assert.True(deleted.WasDeleted("reports/"));

        // Its later delete is now the oldest: the next one past the capacity forgets it.
        deleted.Deleted("one more/");
        Assert.False(deleted.WasDeleted("reports/"));
        Assert.True(deleted.WasDeleted("f1/"));
    }
}
