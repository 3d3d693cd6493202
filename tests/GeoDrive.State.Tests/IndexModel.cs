namespace GeoDrive.State.Tests;

/// <summary>What the index's operations do to a model of its entries (path → what a test tracks of each).</summary>
internal static class IndexModel
{
    /// <summary>As <see cref="LiteDbFileIndex.Rename"/>: the path and everything under "from/" move, replacing what is at the new names.</summary>
    public static void Rename<T>(Dictionary<string, T> model, string from, string to)
    {
        var moving = model.Where(p => p.Key == from || p.Key.StartsWith(from + "/", StringComparison.Ordinal)).ToList();
        foreach (var (path, _) in moving)
        {
            model.Remove(path);
        }
        foreach (var (path, value) in moving)
        {
            model[to + path[from.Length..]] = value;
        }
    }
}
