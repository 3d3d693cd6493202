namespace GeoDrive.TestSupport;

/// <summary>
/// What a test made (a proxy, a rig, a mount, a volume), disposed in reverse order at the end: a mount
/// goes before its engine, the engine before the volume under its cache.
/// </summary>
public sealed class CleanupStack : IAsyncDisposable
{
    private readonly Stack<object> _items = new();

    public T Push<T>(T item)
        where T : notnull
    {
        _items.Push(item);
        return item;
    }

    public async ValueTask DisposeAsync()
    {
        while (_items.TryPop(out var item))
        {
            switch (item)
            {
                case IAsyncDisposable asyncDisposable:
                    await asyncDisposable.DisposeAsync();
                    break;
                case IDisposable disposable:
                    disposable.Dispose();
                    break;
            }
        }
    }
}
