namespace GeoDrive.Core.Model;

/// <summary>
/// The checksums of a file's bytes as a front end saw them written: every write landed at the end of the file,
/// from empty, so these bytes in this order are the whole file (docs/decisions/0032-hashed-as-written.md).
/// <see cref="Sha256"/> and <see cref="Xxh128"/> are lower-case hex, as the object's metadata records them.
/// </summary>
public sealed record WrittenDigest(long Length, string Sha256, string Xxh128);
