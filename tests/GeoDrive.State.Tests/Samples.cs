using GeoDrive.Core.Model;

namespace GeoDrive.State.Tests;

internal static class Samples
{
    public static readonly DateTimeOffset T0 = new DateTimeOffset(2026, 1, 5, 9, 0, 0, TimeSpan.Zero).AddTicks(1_234_567);

    public static FileEntry Entry(string path, FileState state = FileState.Cached, long generation = 1) => new()
    {
        Path = path,
        State = state,
        Size = path.Length * 100L,
        ModifiedUtc = T0,
        LastAccessUtc = T0.AddMinutes(1),
        Generation = generation,
        Checksum = state == FileState.Dirty ? null : new string('a', 64),
        ObjectKey = "prefix/" + path,
    };

    /// <summary>Every property set to something other than its default, so a lost field shows.</summary>
    public static FileEntry Full(string path) => new()
    {
        Path = path,
        State = FileState.Recalling,
        Pinned = true,
        Size = 5_000_000_123,
        ModifiedUtc = new DateTimeOffset(2025, 12, 31, 23, 59, 59, TimeSpan.FromHours(2)).AddTicks(9_999_999),
        LastAccessUtc = new DateTimeOffset(2026, 2, 3, 4, 5, 6, TimeSpan.FromHours(-7)).AddTicks(1),
        DirtySinceUtc = new DateTimeOffset(2024, 2, 29, 12, 0, 0, TimeSpan.Zero).AddTicks(7),
        Generation = 42,
        Checksum = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        Xxh128 = "6dbef3e3a7eb7e5d4b6e8dc4d5d0a0f1",
        ObjectKey = "drives/finance/Q4/report.pdf",
        ETag = "\"3858f62230ac3c915f300c664312c63f-2\"",
        VersionId = "3/L4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY+MTRCxf3vjVBH40Nr8X8gdRQBpUMLUo",
        ReplacesETag = "\"0cc175b9c0f1b6a831c399e269772661\"",
        UnseenETag = "\"e1faffb3e614e6c2fba74296962386b7\"",
        FailedAttempts = 3,
        NextAttemptUtc = new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.FromHours(5.5)).AddTicks(3),
        LastError = "ObjectMismatch: ETag changed during upload",
    };
}
