using GeoDrive.Core.Model;

namespace GeoDrive.Core.Ports;

/// <summary>
/// The per-drive record of every file's state, kept in a file inside the drive's cache. Every state
/// change is written here before it is acted on, so a crash at any point resumes on restart.
/// Paths compare case-sensitively here (the file system decides case rules).
/// </summary>
public interface IFileIndex : IDisposable
{
    FileEntry? Get(string path);

    /// <summary>Inserts or replaces the entry; durable when the call returns.</summary>
    void Put(FileEntry entry);

    /// <summary>
    /// Inserts or replaces the entry without waiting for the disk: every read sees it at once, and it is
    /// durable with the next write or within milliseconds. Only for changes the cache itself shows after
    /// a crash (a file created or written through the mount: the start-up scan finds a cache file that is
    /// not indexed, or whose size or time differ, and makes it Dirty), never for a state that acts on the
    /// bucket or frees local bytes.
    /// </summary>
    void PutDeferred(FileEntry entry);

    bool Delete(string path);

    /// <summary>Moves an entry and, for a folder, every entry under it ("a/b" moves "a/b/**").</summary>
    int Rename(string oldPath, string newPath);

    IReadOnlyList<FileEntry> FindByState(FileState state, int limit = int.MaxValue);

    IEnumerable<FileEntry> All();

    /// <summary>Entries directly or indirectly under a folder path ("" = whole drive).</summary>
    IEnumerable<FileEntry> Under(string folderPath);

    long Count();

    /// <summary>How many entries are in each state (every state present, 0 where none).</summary>
    IReadOnlyDictionary<FileState, long> CountByState();

    void AppendEvent(DriveEvent driveEvent);

    /// <summary>Newest first.</summary>
    IReadOnlyList<DriveEvent> ReadEvents(DateTimeOffset? sinceUtc = null, DriveEventKind? kind = null, int limit = 1000);
}
