using LiteDB;
using LiteDB.Engine;

namespace GeoDrive.State.Tests;

/// <summary>The index file opened with plain LiteDB, to look at or tamper with what is on disk.</summary>
internal static class RawDatabase
{
    public static LiteDatabase Open(string path) =>
        new(new LiteEngine(new EngineSettings { Filename = path, Collation = Collation.Binary }), new BsonMapper());
}
