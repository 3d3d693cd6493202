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
    /// committed within milliseconds (so it survives the process being killed) and fsynced with the next
    /// durable write (every earlier write goes with it, in order), never on its own. Only for changes whose loss in
    /// a crash costs work, never data: a file created or written through the mount (the start-up scan
    /// finds a cache file that is not indexed, or whose size or time differ, and makes it Dirty), an
    /// upload starting or verified (lost, the file is uploaded again; stubbing checks the bytes and the
    /// object again and writes durably before it frees anything). Never for a state that frees local bytes.
    /// </summary>
    void PutDeferred(FileEntry entry);

    bool Delete(string path);

    /// <summary>Moves an entry and, for a folder, every entry under it ("a/b" moves "a/b/**").</summary>
    int Rename(string oldPath, string newPath);

    IReadOnlyList<FileEntry> FindByState(FileState state, int limit = int.MaxValue);

    /// <summary>
    /// Calls <paramref name="visit"/> for every entry in <paramref name="state"/>, one at a time, so a scan of a
    /// large drive never holds them all (<see cref="FindByState"/> returns them together). The entries are read a
    /// page at a time, and an entry that changes during the scan is seen as its page was read (or, moved to a page
    /// already read, not at all); <paramref name="visit"/> runs outside the index's locks.
    /// </summary>
    void VisitByState(FileState state, Action<FileEntry> visit);

    IEnumerable<FileEntry> All();

    /// <summary>Entries directly or indirectly under a folder path ("" = whole drive).</summary>
    IEnumerable<FileEntry> Under(string folderPath);

    long Count();

    /// <summary>How many entries are in each state (every state present, 0 where none).</summary>
    IReadOnlyDictionary<FileState, long> CountByState();

    /// <summary>Gives the event its id (ascending in append order) and queues it: committed with the next write, never waited for; <see cref="ReadEvents"/> sees it.</summary>
    void AppendEvent(DriveEvent driveEvent);

    /// <summary>Newest first.</summary>
    IReadOnlyList<DriveEvent> ReadEvents(DateTimeOffset? sinceUtc = null, DriveEventKind? kind = null, int limit = 1000);
}
