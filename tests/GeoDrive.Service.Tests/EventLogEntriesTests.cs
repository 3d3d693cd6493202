using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Service.Hosting.Windows;
using GeoDrive.TestSupport;

namespace GeoDrive.Service.Tests;

public sealed class EventLogEntriesTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>
{
    private static readonly DateTimeOffset At = new(2026, 11, 23, 8, 30, 0, TimeSpan.Zero);

    private static DriveEvent Event(DriveEventKind kind, string message, string? path = "scans/a.pdf", string? errorId = null) =>
        new() { Id = 7, TimeUtc = At, Kind = kind, Path = path, Message = message, ErrorId = errorId };

    public static TheoryData<DriveEventKind, string?, string, string?, EventLogLevel, int> Written => new()
    {
        { DriveEventKind.Error, "scans/a.pdf", "Upload failed, will retry: connection refused", ErrorIds.StoreError, EventLogLevel.Warning, 2001 },
        { DriveEventKind.Error, "scans/a.pdf", "Recall failed: the object is gone", ErrorIds.ObjectNotFound, EventLogLevel.Error, 2002 },
        { DriveEventKind.Error, "scans/a.pdf", "Not stubbed: it changed", ErrorIds.FileBusy, EventLogLevel.Warning, 2003 },
        { DriveEventKind.Error, "scans/a.pdf", "Not stubbed for the cache threshold: open", ErrorIds.FileBusy, EventLogLevel.Warning, 2003 },
        { DriveEventKind.Error, "scans", "The folder was not synced with the bucket; the listing shows the cache: timeout", ErrorIds.StoreError, EventLogLevel.Warning, 2004 },
        { DriveEventKind.Error, "scans/b.pdf", "No stub was made for the object 'b.pdf': disk full", ErrorIds.CacheWriteFailed, EventLogLevel.Warning, 2004 },
        { DriveEventKind.Error, null, "An object was skipped: bad key", ErrorIds.InvalidRequest, EventLogLevel.Warning, 2004 },
        { DriveEventKind.Error, "old.bin", "Could not delete the object of a deleted file: denied", ErrorIds.StoreError, EventLogLevel.Warning, 2005 },
        { DriveEventKind.Error, null, "The cache volume stays 91% used, above stubUntil 70%: every remaining file is pinned", ErrorIds.CacheThresholdUnreachable, EventLogLevel.Warning, 2006 },
        { DriveEventKind.Error, "x", "Something new went wrong", ErrorIds.StoreError, EventLogLevel.Error, 2009 },
        { DriveEventKind.Service, null, "Drive started: 3 files, nothing to resume.", null, EventLogLevel.Information, 2000 },
        { DriveEventKind.Policy, null, "Policy reloaded from /p.yaml.", null, EventLogLevel.Information, 2010 },
        { DriveEventKind.Policy, null, "Uploads suspended (Suspend-CloudDrive).", null, EventLogLevel.Information, 2010 },
        { DriveEventKind.Policy, null, "Policy change refused, the last good policy stays in force: p.yaml:3:5 unknown key", "PolicyUnknownKey", EventLogLevel.Warning, 2011 },
        { DriveEventKind.Stub, null, "Cache volume was 90% used (stubAbove 85%): stubbed 12 least recently used files, now 69%.", null, EventLogLevel.Information, 2020 },
    };

    [Theory]
    [MemberData(nameof(Written))]
    public void Events_an_administrator_acts_on_are_written_with_their_level_and_id(DriveEventKind kind, string? path, string message, string? errorId, EventLogLevel level, int id)
    {
        var entry = EventLogEntries.For("finance", Event(kind, message, path, errorId));

        Assert.NotNull(entry);
        Assert.Equal(level, entry.Level);
        Assert.Equal(id, entry.EventId);
        Assert.StartsWith($"Drive 'finance': {message}", entry.Message, StringComparison.Ordinal);
        Assert.Contains("Time (UTC): 2026-11-23T08:30:00.000Z", entry.Message, StringComparison.Ordinal);
        if (path is not null)
        {
            Assert.Contains($"\r\n\r\nPath: {path}", entry.Message, StringComparison.Ordinal);
        }
        if (errorId is not null)
        {
            Assert.Contains($"\r\nError id: {errorId}", entry.Message, StringComparison.Ordinal);
        }
    }

    [Theory]
    [InlineData(DriveEventKind.Upload, "Uploaded 2 KiB to 'a.pdf'.")]
    [InlineData(DriveEventKind.Stub, "Stubbed; 2 KiB freed, data in 'a.pdf'.")]
    [InlineData(DriveEventKind.Recall, "Recalled 2 KiB from 'a.pdf'.")]
    [InlineData(DriveEventKind.Delete, "Deleted.")]
    [InlineData(DriveEventKind.Rename, "Renamed from 'b.pdf'.")]
    [InlineData(DriveEventKind.Sync, "Folder synced with the bucket: 3 stub(s) and 0 folder(s) added.")]
    public void Per_file_successes_stay_out_of_the_Event_Log(DriveEventKind kind, string message) =>
        Assert.Null(EventLogEntries.For("finance", Event(kind, message)));

    [Fact]
    public void Ids_are_unique_and_levels_are_the_Event_Logs_own_values()
    {
        int[] ids =
        [
            EventLogEntries.ServiceStarted, EventLogEntries.ServiceStopping, EventLogEntries.ServiceError,
            EventLogEntries.DriveStarted, EventLogEntries.UploadFailed, EventLogEntries.RecallFailed, EventLogEntries.StubFailed,
            EventLogEntries.BucketSyncFailed, EventLogEntries.ObjectDeleteFailed, EventLogEntries.CacheThresholdUnreachable,
            EventLogEntries.DriveError, EventLogEntries.PolicyChanged, EventLogEntries.PolicyRefused, EventLogEntries.CacheThresholdStubbed,
        ];
        Assert.Equal(ids.Length, ids.Distinct().Count());
        Assert.All(ids, id => Assert.InRange(id, 0, 65535));
        // System.Diagnostics.EventLogEntryType: Error 1, Warning 2, Information 4.
        Assert.Equal(1, (int)EventLogLevel.Error);
        Assert.Equal(2, (int)EventLogLevel.Warning);
        Assert.Equal(4, (int)EventLogLevel.Information);
    }

    [Theory]
    [InlineData("GET https://b.s3.example.com/a.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAEXAMPLE%2F20261123&X-Amz-Signature=0123abcd failed", "0123abcd", "AKIAEXAMPLE")]
    [InlineData("Authorization: AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE/20261123/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=fe12", "fe12", "AKIAEXAMPLE")]
    [InlineData("request had x-amz-security-token=IQoJb3JpZ2luX2VjEXAMPLE in it", "IQoJb3JpZ2luX2VjEXAMPLE", null)]
    [InlineData("config {\"secretKey\": \"wJalrXUtnFEMI/K7MDENG\"}", "wJalrXUtnFEMI", null)]
    [InlineData("secret_access_key=wJalrXUtnFEMI/K7MDENG", "wJalrXUtnFEMI", null)]
    public void Signatures_credentials_and_secret_values_never_reach_the_log(string message, string secret, string? alsoHidden)
    {
        var entry = EventLogEntries.For("finance", Event(DriveEventKind.Error, "Recall failed: " + message, errorId: ErrorIds.StoreError))!;

        Assert.DoesNotContain(secret, entry.Message, StringComparison.Ordinal);
        if (alsoHidden is not null)
        {
            Assert.DoesNotContain(alsoHidden, entry.Message, StringComparison.Ordinal);
        }
        Assert.Contains("***", entry.Message, StringComparison.Ordinal);
        Assert.Contains("Recall failed", entry.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_long_message_is_cut_visibly_below_the_Event_Logs_limit()
    {
        var entry = EventLogEntries.For("finance", Event(DriveEventKind.Error, "Recall failed: " + new string('x', 40_000)))!;

        Assert.True(entry.Message.Length < 31_839);
        Assert.EndsWith("(cut)", entry.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Service_errors_carry_their_source_and_exception_but_no_stack()
    {
        var error = EventLogEntries.Error("GeoDrive.Service", "Drive finance could not start: the bucket is gone", new InvalidOperationException("gone"));

        Assert.Equal(EventLogLevel.Error, error.Level);
        Assert.Equal(1100, error.EventId);
        Assert.Contains("Source: GeoDrive.Service", error.Message, StringComparison.Ordinal);
        Assert.Contains("System.InvalidOperationException: gone", error.Message, StringComparison.Ordinal);
        Assert.DoesNotContain(" at ", error.Message, StringComparison.Ordinal);
        Assert.Equal(1000, EventLogEntries.Started(@"\\.\pipe\geodrive", @"C:\ProgramData\GeoDrive", 2).EventId);
        Assert.Equal(1001, EventLogEntries.Stopping().EventId);
    }

    /// <summary>The engine's own messages, not copies of them: a real upload and a real recall fail against a stopped proxy.</summary>
    [Fact]
    public async Task The_engines_own_upload_and_recall_failures_map_to_2001_and_2002()
    {
        using var proxy = new FaultProxy(s3.Endpoint);
        await using var rig = new DriveRig(s3, endpoint: proxy.Endpoint);
        var written = new List<EventLogEntrySpec>();
        rig.Engine.EventRecorded += e =>
        {
            if (EventLogEntries.For("rig", e) is { } entry)
            {
                written.Add(entry);
            }
        };
        await rig.WriteAsync("kept.bin", DriveRig.RandomBytes(5000, 1));
        rig.Clock.Advance(TimeSpan.FromSeconds(31));
        await rig.Engine.TickAsync();
        await rig.Engine.StubAsync("kept.bin");
        Assert.Equal(FileState.Stubbed, rig.StateOf("kept.bin"));
        Assert.Empty(written);

        proxy.Stop();
        await rig.WriteAsync("new.bin", DriveRig.RandomBytes(5000, 2));
        rig.Clock.Advance(TimeSpan.FromSeconds(31));
        await rig.Engine.TickAsync();
        await Assert.ThrowsAnyAsync<Exception>(() => rig.ReadAsync("kept.bin"));

        Assert.Contains(written, e => e is { EventId: EventLogEntries.UploadFailed, Level: EventLogLevel.Warning } && e.Message.Contains("Path: new.bin", StringComparison.Ordinal));
        Assert.Contains(written, e => e is { EventId: EventLogEntries.RecallFailed, Level: EventLogLevel.Error } && e.Message.Contains("Path: kept.bin", StringComparison.Ordinal));
        Assert.DoesNotContain(written, e => e.Message.Contains(s3.SecretKey, StringComparison.Ordinal));
    }
}
