using GeoDrive.Core.Paths;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Ports;
using GeoDrive.State.Mapping;
using GeoDrive.State.Storage;
using LiteDB;
using LiteDB.Engine;

namespace GeoDrive.State;

/// <summary>
/// The drive's <see cref="IFileIndex"/> in one LiteDB file (&lt;cache&gt;/.geodrive/index.db, plus LiteDB's
/// "index-log.db" write-ahead log and our "index.db.lock"). Every write but PutDeferred is in the log
/// file when the call returns, so a killed process loses nothing it acknowledged; writes are serialized here, reads
/// run concurrently on LiteDB snapshots. One process at a time: a second one gets CachePathInUse.
/// </summary>
public sealed partial class LiteDbFileIndex : IFileIndex
{
    /// <summary>The schema this code writes. Bump it with a migration in <see cref="EnsureSchema"/>.</summary>
    public const int SchemaVersion = 1;

    private const string FilesCollection = "files";
    private const string EventsCollection = "events";
    private const string MetaCollection = "meta";
    private const string StateIndex = "state";

    // LiteDB 5.0.20 races readers against a committing or checkpointing writer (litedb-org/LiteDB#2792,
    // #2803: "page type must be collection page", which also closes the engine). Readers share this
    // lock and writers hold it alone; the wait for the log flush stays outside it.
    private readonly ReaderWriterLockSlim _access = new(LockRecursionPolicy.SupportsRecursion);
    private readonly LiteDbFileIndexOptions _options;
    private readonly IndexLockFile _lockFile;
    // Opened again (under the write lock) after LiteDB closed itself on a failed write: see Heal.
    private LiteDatabase _db;
    private LogFileStream _log;
    private LogWriterBarrier _logWriter;
    private ILiteCollection<BsonDocument> _files;
    private ILiteCollection<BsonDocument> _events;
    private readonly Counting.StateCounts _stateCounts = new();
    private readonly Lookup.KnownPaths _knownPaths;
    private int _appendsSincePrune;
    private volatile bool _disposed;

    // A write failed in LiteDB or its log (a full volume, say): LiteDB has closed itself, and the next call opens it again.
    private volatile bool _broken;

    public LiteDbFileIndex(string databasePath)
        : this(databasePath, new LiteDbFileIndexOptions())
    {
    }

    public LiteDbFileIndex(string databasePath, LiteDbFileIndexOptions options)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(databasePath);
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        _options = options;
        _knownPaths = new Lookup.KnownPaths(options.KnownPathsCapacity);
        DatabasePath = Path.GetFullPath(databasePath);
        // Only the service's user reads the index (every file name of the drive), whatever the umask.
        OwnerOnly.Folder(Path.GetDirectoryName(DatabasePath)!);

        // The lock comes first: opening LiteDB replays its log, which must never race a live owner.
        _lockFile = IndexLockFile.Acquire(DatabasePath);
        try
        {
            OpenLiteDb();
            EnsureSchema();
            RecountStates();
            FillKnownPathsIfDue();
            _logWriter.Wait();
            foreach (var file in new[] { DatabasePath, LogPath(DatabasePath), DatabasePath + ".lock" })
            {
                OwnerOnly.File(file);
            }
        }
        catch
        {
            _db?.Dispose();
            _log?.Dispose();
            _lockFile.Dispose();
            throw;
        }
    }

    /// <summary>Opens LiteDB on the data file and its log (which it replays), with the lock file held.</summary>
    [System.Diagnostics.CodeAnalysis.MemberNotNull(nameof(_db), nameof(_log), nameof(_logWriter), nameof(_files), nameof(_events))]
    private void OpenLiteDb()
    {
        _log = new LogFileStream(LogPath(DatabasePath));
        LiteEngine engine;
        try
        {
            engine = OpenEngine(DatabasePath, _log);
        }
        catch
        {
            _log.Dispose();
            throw;
        }
        _logWriter = LogWriterBarrier.For(engine, _log, _options.WriteTimeout);
        // A private mapper: nothing else in the process can reconfigure BsonMapper.Global under us.
        _db = new LiteDatabase(engine, new BsonMapper(), disposeOnClose: true);
        _files = _db.GetCollection(FilesCollection, BsonAutoId.ObjectId);
        _events = _db.GetCollection(EventsCollection, BsonAutoId.Int64);
    }

    /// <summary>
    /// With the write lock held: after a write failed in LiteDB or its log (LiteDB then closes itself for good),
    /// LiteDB is opened again from its files, which replays every write that reached the log; then the entries a
    /// failed commit may have taken with it (recent puts, deferred puts that failed) are written again, durably.
    /// So a full volume, once space is free again, never leaves the drive without its index until a restart.
    /// Throws (and stays broken, to try again at the next call) while that still fails.
    /// </summary>
    private void HealLocked()
    {
        if (!_broken)
        {
            return;
        }
        // Not while the volume is still full: LiteDB's log writer, failing again, closes its engine from its own
        // thread and waits for itself (LiteDB 5.0.20), which would hold this call for the whole write timeout.
        var folder = Path.GetDirectoryName(DatabasePath)!;
        if (new DriveInfo(folder).AvailableFreeSpace < HealRoom)
        {
            throw new GeoDriveException(ErrorIds.CacheVolumeFull, ErrorKind.ResourceUnavailable,
                $"The drive's index cannot be written: the volume of '{folder}' is full.",
                "Free space on the cache volume; the index opens again by itself at the next change.");
        }
        try
        {
            _db.Dispose();
        }
        catch (Exception ex) when (ex is LiteException or IOException or ObjectDisposedException or GeoDriveException)
        {
            // Already closed by the failure it met.
        }
        _log.Dispose();
        OpenLiteDb();
        // Events of a failed commit are lost; the next one never takes an id already in the index.
        var newestEvent = NewestEventId();
        lock (_groupGate)
        {
            _lastEventId = Math.Max(_lastEventId, newestEvent);
        }
        var redo = RedoAfterHeal();
        if (redo.Count > 0)
        {
            _db.BeginTrans();
            try
            {
                foreach (var doc in redo)
                {
                    _knownPaths.Adding(doc["_id"].AsString);
                    _files.Upsert(doc);
                }
                _db.Commit();
            }
            catch
            {
                _db.Rollback();
                throw;
            }
            _logWriter.Wait();
        }
        RedoneAfterHeal(redo);
        RecountStates();
        _broken = false;
    }

    /// <summary>Free space the volume must have again before the index is opened again after a failed write.</summary>
    private const long HealRoom = 2L << 20;

    /// <summary>Marks the index broken when a write or its flush failed in LiteDB or its log (see <see cref="HealLocked"/>).</summary>
    private void BrokenBy(Exception ex)
    {
        if (ex is IOException or LiteException or GeoDriveException or ObjectDisposedException && !_disposed)
        {
            _broken = true;
        }
    }

    /// <summary>Full path of the index's data file.</summary>
    public string DatabasePath { get; }

    public static LiteDbFileIndex Open(string databasePath) => new(databasePath);

    public static LiteDbFileIndex Open(string databasePath, LiteDbFileIndexOptions options) => new(databasePath, options);

    /// <summary>Checkpoints the log into the data file, closes it and releases the lock.</summary>
    public void Dispose()
    {
        if (!_disposed)
        {
            try
            {
                FlushDeferred();
            }
            catch (Exception ex) when (ex is InvalidOperationException or LiteException or IOException or ObjectDisposedException)
            {
                // Already reported to the writer that hit it; what is in the log is replayed at the next open.
            }
        }

        _access.EnterWriteLock();
        try
        {
            if (_disposed)
            {
                return;
            }

            _disposed = true;
            try
            {
                // Folding the log in now makes the next open fast; LiteDB's own close only tries.
                _db.Checkpoint();
            }
            catch (Exception ex) when (ex is LiteException or ObjectDisposedException or IOException)
            {
                // LiteDB closed itself after an I/O error, which its caller already saw. The log is
                // replayed at the next open, so nothing is lost; Dispose must not mask that first error.
            }
            finally
            {
                _gatherTimer?.Dispose();
                _db.Dispose();
                _log.Dispose();
                DeleteEmptyLog();
                _lockFile.Dispose();
            }
        }
        finally
        {
            _access.ExitWriteLock();
        }
    }

    /// <summary>As LiteDB does with a log file of its own: one left empty by the final checkpoint goes.</summary>
    private void DeleteEmptyLog()
    {
        var log = new FileInfo(LogPath(DatabasePath));
        try
        {
            if (log.Exists && log.Length == 0)
            {
                log.Delete();
            }
        }
        catch (IOException)
        {
            // Left for the next open, which treats an empty log as none.
        }
    }

    /// <summary>LiteDB's own name for the log of a data file ("index.db" → "index-log.db").</summary>
    internal static string LogPath(string databasePath) =>
        Path.Combine(Path.GetDirectoryName(databasePath)!, Path.GetFileNameWithoutExtension(databasePath) + "-log" + Path.GetExtension(databasePath));

    private static LiteEngine OpenEngine(string databasePath, LogFileStream log)
    {
        // Direct mode (LiteEngine in this process), journal on. Binary = ordinal collation: LiteDB's
        // default is culture-aware and IgnoreCase, which would make "A.txt" and "a.txt" one _id.
        // The log is ours (LogFileStream): LiteDB writes it, the index decides when it is fsynced.
        var settings = new EngineSettings { Filename = databasePath, LogStream = log, Collation = Collation.Binary };
        try
        {
            return new LiteEngine(settings);
        }
        catch (Exception ex) when (ex is LiteException or ArgumentException or InvalidCastException or IndexOutOfRangeException or FormatException)
        {
            // A file that is not a LiteDB index fails in LiteDB's header reader with whatever its bytes provoke.
            throw new GeoDriveException(
                ErrorIds.CachePathInvalid,
                ErrorKind.InvalidData,
                $"The drive's index '{databasePath}' cannot be opened: {ex.Message}",
                "Restore the cache's .geodrive folder from a backup, or move it aside so GeoDrive rebuilds the index from the cache and the bucket.",
                ex);
        }
    }

    private void EnsureSchema()
    {
        var meta = _db.GetCollection(MetaCollection);
        var schema = meta.FindById("schema");
        if (schema is null)
        {
            meta.Insert(new BsonDocument { ["_id"] = "schema", ["version"] = SchemaVersion });
        }
        else if (schema["version"].AsInt32 > SchemaVersion)
        {
            throw new GeoDriveException(
                ErrorIds.CachePathInvalid,
                ErrorKind.InvalidData,
                $"The drive's index '{DatabasePath}' was written by a newer GeoDrive (index schema {schema["version"].AsInt32}; this version reads up to {SchemaVersion}).",
                "Upgrade GeoDrive on this machine, or choose another cache path.");
        }

        // Version 1 is the first: later versions migrate older documents here, then store the new version.
        _files.EnsureIndex(StateIndex, "$." + FileEntryDocument.State);
        CreateEventsCollection();
        CreateCollection(RecallJobsCollection);
        CreateJournalCollection();
        PruneEvents();
        _lastEventId = NewestEventId();
    }

    /// <summary>
    /// Every collection must exist before the index is shared. LiteDB 5.0.20 races a reader against the
    /// transaction that creates a collection (litedb-org/LiteDB#2792): the reader finds the new collection
    /// in the shared header but reads its page from an older snapshot, fails an ENSURE, and that closes
    /// the whole engine. "files" and "meta" are created above; "events" would otherwise appear with the
    /// first AppendEvent, while the front end or the control API may be reading events.
    /// </summary>
    private void CreateEventsCollection()
    {
        if (_db.CollectionExists(EventsCollection))
        {
            return;
        }

        // LiteDB has no "create collection": insert and delete a placeholder in one transaction. Its
        // explicit _id 0 leaves the Int64 auto-id sequence starting at 1, so event ids keep no gaps.
        _db.BeginTrans();
        try
        {
            _events.Insert(new BsonDocument { ["_id"] = 0L });
            _events.Delete(0L);
            _db.Commit();
        }
        catch
        {
            _db.Rollback();
            throw;
        }
    }

    /// <summary>Creates an (id-keyed) collection now, for the reason given at <see cref="CreateEventsCollection"/>.</summary>
    private void CreateCollection(string name)
    {
        if (_db.CollectionExists(name))
        {
            return;
        }
        var collection = _db.GetCollection(name);
        _db.BeginTrans();
        try
        {
            collection.Insert(new LiteDB.BsonDocument { ["_id"] = "placeholder" });
            collection.Delete("placeholder");
            _db.Commit();
        }
        catch
        {
            _db.Rollback();
            throw;
        }
    }

    /// <summary>Runs one write under the write lock, then (when <paramref name="durable"/>) waits until it is in the log file on disk.</summary>
    private T Write<T>(Func<T> write, bool durable = true)
    {
        T result;
        LogWriterBarrier logWriter;
        _access.EnterWriteLock();
        try
        {
            ThrowIfDisposed();
            HealLocked();
            logWriter = _logWriter;
            result = write();
        }
        catch (Exception ex)
        {
            BrokenBy(ex);
            throw;
        }
        finally
        {
            _access.ExitWriteLock();
        }

        // Outside the lock: concurrent writers wait for the same flush instead of queueing behind it.
        // Not durable (deferred writes only): the next durable write's wait covers these pages too.
        if (durable)
        {
            try
            {
                logWriter.Wait();
            }
            catch (Exception ex)
            {
                BrokenBy(ex);
                throw;
            }
        }
        return result;
    }

    /// <summary>Runs one read while no write is under way (see <see cref="_access"/>).</summary>
    private T Read<T>(Func<T> read)
    {
        if (_broken)
        {
            _access.EnterWriteLock();
            try
            {
                ThrowIfDisposed();
                HealLocked();
            }
            finally
            {
                _access.ExitWriteLock();
            }
        }
        _access.EnterReadLock();
        try
        {
            ThrowIfDisposed();
            return read();
        }
        catch (Exception ex)
        {
            BrokenBy(ex);
            throw;
        }
        finally
        {
            _access.ExitReadLock();
        }
    }

    private void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(_disposed, this);
}
