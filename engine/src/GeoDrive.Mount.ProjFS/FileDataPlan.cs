namespace GeoDrive.Mount.ProjFS;

/// <summary>One PrjWriteFileData call: a range of the file.</summary>
public readonly record struct DataChunk(long Offset, int Length);

/// <summary>
/// How a GetFileData request is cut into PrjWriteFileData calls. ProjFS wants each buffer from
/// PrjAllocateAlignedBuffer and each offset and length aligned to the volume's sector size, except a
/// last chunk that ends at the end of the file; with a chunk size that is a multiple of 64 KiB every
/// chunk but the last is aligned on any sector size, and the chunks are fetched in parallel.
/// </summary>
public static class FileDataPlan
{
    public const int Alignment = 64 * 1024;

    public static IReadOnlyList<DataChunk> Chunks(long offset, long length, long fileSize, int chunkSize)
    {
        if (chunkSize <= 0 || chunkSize % Alignment != 0)
        {
            throw new ArgumentOutOfRangeException(nameof(chunkSize), chunkSize, $"must be a positive multiple of {Alignment}");
        }
        var end = Math.Min(offset + length, fileSize);
        var chunks = new List<DataChunk>();
        for (var start = offset; start < end; start += chunkSize)
        {
            chunks.Add(new DataChunk(start, (int)Math.Min(chunkSize, end - start)));
        }
        return chunks;
    }
}
