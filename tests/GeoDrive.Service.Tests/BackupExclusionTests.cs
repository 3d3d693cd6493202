using GeoDrive.Service.Hosting.Windows;

namespace GeoDrive.Service.Tests;

public sealed class BackupExclusionTests
{
    [Fact]
    public void The_value_is_named_after_the_drive_under_FilesNotToBackup()
    {
        Assert.Equal(@"SYSTEM\CurrentControlSet\Control\BackupRestore\FilesNotToBackup", BackupExclusion.KeyPath);
        Assert.Equal("GeoDrive-finance", BackupExclusion.ValueName("finance"));
    }

    [Theory]
    [InlineData(@"D:\GeoDrive\finance", @"D:\GeoDrive\finance\* /s")]
    [InlineData(@"D:\GeoDrive\finance\", @"D:\GeoDrive\finance\* /s")]
    [InlineData(@"D:/GeoDrive/finance", @"D:\GeoDrive\finance\* /s")]
    [InlineData(@"E:\", @"E:\* /s")]
    [InlineData(@"\\?\D:\Cache With Spaces", @"\\?\D:\Cache With Spaces\* /s")]
    public void The_value_covers_everything_under_the_cache_folder(string cachePath, string expected) =>
        Assert.Equal([expected], BackupExclusion.ValueData(cachePath));

    [Fact]
    public void A_drive_is_excluded_unless_the_administrator_opted_out()
    {
        Assert.Equal([@"D:\c\* /s"], BackupExclusion.Desired(@"D:\c", includeCacheInBackup: false)!);
        Assert.Null(BackupExclusion.Desired(@"D:\c", includeCacheInBackup: true));
    }

    [Fact]
    public void An_empty_cache_path_is_refused() =>
        Assert.Throws<ArgumentException>(() => BackupExclusion.ValueData(" "));
}
