using System.Net;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Drives;

namespace GeoDrive.Service.Peers;

/// <summary>
/// One drive's link to its peers (docs/decisions/0020-peers-told-of-changes.md): a sender per peer named in the drive's
/// definition, told of each change the engine made in the bucket, and, when the drive listens, a listener whose notices
/// the follower hands to the engine. Nothing here is on a user's write path: the engine's event only queues.
/// </summary>
internal sealed class PeerLink : IAsyncDisposable
{
    private static readonly HttpClient Http = new(new SocketsHttpHandler { PooledConnectionLifetime = TimeSpan.FromMinutes(5), ConnectTimeout = TimeSpan.FromSeconds(5) });

    private readonly DriveEngine _engine;
    private readonly PeerSender[] _senders;
    private readonly PeerFollower? _follower;
    private readonly PeerListener? _listener;

    private PeerLink(DriveEngine engine, PeerSender[] senders, PeerFollower? follower, PeerListener? listener)
    {
        _engine = engine;
        _senders = senders;
        _follower = follower;
        _listener = listener;
        if (_senders.Length > 0)
        {
            _engine.BucketChangeMade += Tell;
        }
    }

    public bool Listens => _listener is not null;

    public static async Task<PeerLink> StartAsync(PeerLinkOptions options, string peerKey, DriveEngine engine, IClock clock, ILogger logger, CancellationToken cancellationToken)
    {
        var key = PeerSignature.KeyBytes(peerKey);
        void Record(DriveEventRequest e) => engine.RecordEvent(e.Kind, null, e.Message, e.ErrorId);
        PeerFollower? follower = null;
        PeerListener? listener = null;
        if (options.Listen is not null)
        {
            follower = new PeerFollower(engine, options.QueueCapacity, logger);
            try
            {
                listener = await PeerListener.StartAsync(options, key, follower, clock, Record, logger, cancellationToken);
            }
            catch
            {
                await follower.DisposeAsync();
                throw;
            }
        }
        var senders = options.Peers.Select(p => new PeerSender(p, options, key, Http, clock, Record, logger)).ToArray();
        return new PeerLink(engine, senders, follower, listener);
    }

    /// <summary>"address:port", or a port alone (loopback): the address a drive listens for its peers on; null when it is none.</summary>
    public static IPEndPoint? ParseListen(string? listen)
    {
        if (string.IsNullOrWhiteSpace(listen))
        {
            return null;
        }
        listen = listen.Trim();
        if (ushort.TryParse(listen, out var port) && port > 0)
        {
            return new IPEndPoint(IPAddress.Loopback, port);
        }
        return IPEndPoint.TryParse(listen, out var endpoint) && endpoint.Port > 0 && listen.Contains(':', StringComparison.Ordinal) ? endpoint : null;
    }

    private void Tell(BucketChangeMade change)
    {
        foreach (var sender in _senders)
        {
            sender.Tell(change);
        }
    }

    public async ValueTask DisposeAsync()
    {
        _engine.BucketChangeMade -= Tell;
        if (_listener is not null)
        {
            await _listener.DisposeAsync();
        }
        if (_follower is not null)
        {
            await _follower.DisposeAsync();
        }
        foreach (var sender in _senders)
        {
            await sender.DisposeAsync();
        }
    }
}
