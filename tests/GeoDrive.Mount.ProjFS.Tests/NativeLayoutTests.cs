using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using GeoDrive.Mount.ProjFS.Native;

namespace GeoDrive.Mount.ProjFS.Tests;

/// <summary>
/// The ProjFS structures are laid out as projectedfslib.h lays them out on 64-bit Windows. Only the
/// layout can be checked here; that ProjFS accepts them is verified on Windows alone.
/// </summary>
public sealed unsafe class NativeLayoutTests
{
    [Fact]
    public void Callback_data_has_the_headers_offsets()
    {
        Assert.Equal(8, (int)Marshal.OffsetOf<PrjCallbackData>(nameof(PrjCallbackData.NamespaceVirtualizationContext)));
        Assert.Equal(16, (int)Marshal.OffsetOf<PrjCallbackData>(nameof(PrjCallbackData.CommandId)));
        Assert.Equal(20, (int)Marshal.OffsetOf<PrjCallbackData>(nameof(PrjCallbackData.FileId)));
        Assert.Equal(36, (int)Marshal.OffsetOf<PrjCallbackData>(nameof(PrjCallbackData.DataStreamId)));
        Assert.Equal(56, (int)Marshal.OffsetOf<PrjCallbackData>(nameof(PrjCallbackData.FilePathName)));
        Assert.Equal(64, (int)Marshal.OffsetOf<PrjCallbackData>(nameof(PrjCallbackData.VersionInfo)));
        Assert.Equal(72, (int)Marshal.OffsetOf<PrjCallbackData>(nameof(PrjCallbackData.TriggeringProcessId)));
        Assert.Equal(80, (int)Marshal.OffsetOf<PrjCallbackData>(nameof(PrjCallbackData.TriggeringProcessImageFileName)));
        Assert.Equal(96, sizeof(PrjCallbackData));
    }

    [Fact]
    public void Placeholder_info_is_344_bytes_with_the_version_info_at_80()
    {
        Assert.Equal(56, sizeof(PrjFileBasicInfo));
        Assert.Equal(8, (int)Marshal.OffsetOf<PrjFileBasicInfo>(nameof(PrjFileBasicInfo.FileSize)));
        Assert.Equal(48, (int)Marshal.OffsetOf<PrjFileBasicInfo>(nameof(PrjFileBasicInfo.FileAttributes)));
        Assert.Equal(80, (int)Marshal.OffsetOf<PrjPlaceholderInfo>(nameof(PrjPlaceholderInfo.VersionInfo)));
        Assert.Equal(344, sizeof(PrjPlaceholderInfo));
        Assert.Equal(256, sizeof(PrjPlaceholderVersionInfo));
    }

    [Fact]
    public void Options_callbacks_and_mappings_have_the_headers_sizes()
    {
        Assert.Equal(16, sizeof(PrjNotificationMapping));
        Assert.Equal(32, sizeof(PrjStartVirtualizingOptions));
        Assert.Equal(16, (int)Marshal.OffsetOf<PrjStartVirtualizingOptions>(nameof(PrjStartVirtualizingOptions.NotificationMappings)));
        Assert.Equal(8 * 8, sizeof(PrjCallbacks));
        Assert.Equal(4, Unsafe.SizeOf<PrjNotificationParameters>());
    }
}
