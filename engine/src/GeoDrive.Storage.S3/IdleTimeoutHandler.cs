using System.Net;
using Amazon.Runtime;

namespace GeoDrive.Storage.S3;

/// <summary>
/// Fails a request that moves no byte for <see cref="S3StoreOptions.IdleTimeout"/>: no request byte
/// accepted by the socket, no answer, no response byte. A frozen endpoint (connection accepted, never
/// answered) is noticed within that time, while a 128 MiB part that keeps moving, however slowly
/// (throttled), is never cut: the limit is on silence, not on the whole request.
/// After a timeout the endpoint counts as silent for one more idle timeout (<see cref="EndpointSilence"/>):
/// requests to it fail at once, so the SDK's own retries and the callers' don't each wait it out again.
/// </summary>
internal sealed class IdleTimeoutHandler(S3StoreOptions options, EndpointSilence silence, HttpMessageHandler inner) : DelegatingHandler(inner)
{
    protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
    {
        silence.ThrowIfSilent();
        var idleTimeout = options.IdleTimeout;
        var watch = new IdleWatch(idleTimeout, cancellationToken);
        if (request.Content is { } content)
        {
            request.Content = new WatchedContent(content, watch);
        }
        HttpResponseMessage response;
        try
        {
            response = await base.SendAsync(request, watch.Token);
        }
        catch (OperationCanceledException) when (watch.TimedOut)
        {
            watch.Dispose();
            var timeout = watch.Timeout("the request");
            silence.WentSilent(timeout.Message);
            throw timeout;
        }
        catch
        {
            watch.Dispose();
            throw;
        }
        watch.Dispose();
        silence.Answered();
        // The body is read after this returns (GET): each of its reads has the idle time of its own.
        response.Content = new WatchedContent(response.Content, watch);
        return response;
    }

    private sealed class IdleWatch : IDisposable
    {
        private readonly TimeSpan _idle;
        private readonly CancellationTokenSource _source;
        private readonly CancellationToken _caller;

        public IdleWatch(TimeSpan idle, CancellationToken caller)
        {
            _idle = idle;
            _caller = caller;
            _source = CancellationTokenSource.CreateLinkedTokenSource(caller);
            _source.CancelAfter(idle);
        }

        public CancellationToken Token => _source.Token;

        public TimeSpan Idle => _idle;

        /// <summary>The watch fired, not the caller's own cancellation.</summary>
        public bool TimedOut => _source.IsCancellationRequested && !_caller.IsCancellationRequested;

        public void Touch()
        {
            try
            {
                _source.CancelAfter(_idle);
            }
            catch (ObjectDisposedException)
            {
            }
        }

        public TimeoutException Timeout(string what) => new(
            $"the server accepted the connection but nothing moved for {_idle.TotalSeconds:0.#} s after {what} (no answer)");

        public void Dispose() => _source.Dispose();
    }

    /// <summary>A request or response body whose every byte written or read resets the idle watch.</summary>
    private sealed class WatchedContent : HttpContent
    {
        private readonly HttpContent _inner;
        private readonly IdleWatch _watch;

        public WatchedContent(HttpContent inner, IdleWatch watch)
        {
            _inner = inner;
            _watch = watch;
            foreach (var header in inner.Headers)
            {
                Headers.TryAddWithoutValidation(header.Key, header.Value);
            }
        }

        protected override Task SerializeToStreamAsync(Stream stream, TransportContext? context) =>
            SerializeToStreamAsync(stream, context, CancellationToken.None);

        protected override Task SerializeToStreamAsync(Stream stream, TransportContext? context, CancellationToken cancellationToken) =>
            _inner.CopyToAsync(new WatchedStream(stream, _watch), context, cancellationToken);

        protected override async Task<Stream> CreateContentReadStreamAsync() => new WatchedStream(await _inner.ReadAsStreamAsync(), _watch);

        protected override async Task<Stream> CreateContentReadStreamAsync(CancellationToken cancellationToken) =>
            new WatchedStream(await _inner.ReadAsStreamAsync(cancellationToken), _watch);

        protected override bool TryComputeLength(out long length)
        {
            if (_inner.Headers.ContentLength is { } known)
            {
                length = known;
                return true;
            }
            length = 0;
            return false;
        }

        protected override void Dispose(bool disposing)
        {
            if (disposing)
            {
                _inner.Dispose();
            }
            base.Dispose(disposing);
        }
    }

    /// <summary>Passes bytes through; each read or write must move within the idle time.</summary>
    private sealed class WatchedStream(Stream inner, IdleWatch watch) : Stream
    {
        public override bool CanRead => inner.CanRead;
        public override bool CanSeek => false;
        public override bool CanWrite => inner.CanWrite;
        public override long Length => inner.Length;
        public override long Position { get => inner.Position; set => throw new NotSupportedException(); }

        public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            // A timer per read: a reader that is slow itself (a throttled recall) between reads is no silence of the server's.
            using var read = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            read.CancelAfter(watch.Idle);
            try
            {
                return await inner.ReadAsync(buffer, read.Token);
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                throw new IOException("The S3 answer stopped coming.", watch.Timeout("part of the answer arrived"));
            }
        }

        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        public override int Read(byte[] buffer, int offset, int count) => ReadAsync(buffer.AsMemory(offset, count)).AsTask().GetAwaiter().GetResult();

        public override async ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
        {
            using var linked = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, watch.Token);
            await inner.WriteAsync(buffer, linked.Token);
            watch.Touch();
        }

        public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        public override void Write(byte[] buffer, int offset, int count) => WriteAsync(buffer.AsMemory(offset, count)).AsTask().GetAwaiter().GetResult();

        public override void Flush() => inner.Flush();

        public override Task FlushAsync(CancellationToken cancellationToken) => inner.FlushAsync(cancellationToken);

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        protected override void Dispose(bool disposing)
        {
            if (disposing)
            {
                inner.Dispose();
            }
            base.Dispose(disposing);
        }
    }
}

/// <summary>
/// Whether one endpoint is known to hold requests without answering, shared by its HTTP clients and
/// the store. Silent for one idle timeout after the last timeout: asking costs that much, so a frozen
/// endpoint is waited on at most half the time, and one that thaws is asked again within that time.
/// </summary>
internal sealed class EndpointSilence(S3StoreOptions options)
{
    private readonly Lock _gate = new();
    private DateTimeOffset _until = DateTimeOffset.MinValue;
    private string? _reason;

    /// <summary>The failure for a request not sent because the endpoint is silent; null when it may be asked.</summary>
    public TimeoutException? Silent()
    {
        lock (_gate)
        {
            return _until > options.Time.GetUtcNow()
                ? new TimeoutException($"{_reason}; not asked again until {_until:HH:mm:ss} UTC")
                : null;
        }
    }

    public void ThrowIfSilent()
    {
        if (Silent() is { } silent)
        {
            throw silent;
        }
    }

    public void WentSilent(string reason)
    {
        lock (_gate)
        {
            _until = options.Time.GetUtcNow() + options.IdleTimeout;
            _reason = reason;
        }
    }

    public void Answered()
    {
        lock (_gate)
        {
            _until = DateTimeOffset.MinValue;
        }
    }
}

/// <summary>
/// The HTTP client of one endpoint, the SDK's and the store's own requests' (<see cref="DirectRequests"/>): one pool of
/// connections with the connect timeout and connection limit, behind the idle watch.
/// </summary>
internal sealed class IdleTimeoutHttpClientFactory(S3StoreOptions options, EndpointSilence silence) : HttpClientFactory
{
    private readonly Lazy<HttpClient> _client = new(() => NewClient(options, silence));

    /// <summary>The one client: the SDK disposes it with its own client (the store's).</summary>
    public HttpClient Client => _client.Value;

    public override HttpClient CreateHttpClient(IClientConfig clientConfig) => _client.Value;

    private static HttpClient NewClient(S3StoreOptions options, EndpointSilence silence)
    {
        var sockets = new SocketsHttpHandler
        {
            ConnectTimeout = options.ConnectTimeout,
            MaxConnectionsPerServer = options.MaxConnectionsPerEndpoint,
            AutomaticDecompression = DecompressionMethods.None,
            AllowAutoRedirect = false,
            // Connections are re-resolved now and then, so a gateway moved behind DNS is followed.
            PooledConnectionLifetime = TimeSpan.FromMinutes(5),
        };
        // The idle watch bounds each request; the whole-request limit only catches a server that trickles forever.
        return new HttpClient(new IdleTimeoutHandler(options, silence, sockets)) { Timeout = options.RequestTimeout };
    }

    public override bool UseSDKHttpClientCaching(IClientConfig clientConfig) => true;

    public override bool DisposeHttpClientsAfterUse(IClientConfig clientConfig) => false;

    // Null: cached per SDK client, disposed with it.
    public override string? GetConfigUniqueString(IClientConfig clientConfig) => null;
}
