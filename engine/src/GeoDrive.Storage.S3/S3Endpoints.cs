using Amazon.Runtime;
using Amazon.S3;

namespace GeoDrive.Storage.S3;

/// <summary>One endpoint URL of a drive and its client, with its health.</summary>
internal sealed class S3Endpoint(Uri url, AmazonS3Client client, HttpClient http, EndpointSilence silence)
{
    /// <summary>The HTTP client under <see cref="Client"/>, for the requests the store signs itself (<see cref="DirectRequests"/>).</summary>
    public HttpClient Http { get; } = http;

    /// <summary>Known to hold requests without answering (a frozen endpoint); see <see cref="IdleTimeoutHandler"/>.</summary>
    public EndpointSilence Silence { get; } = silence;

    public Uri Url { get; } = url;

    public AmazonS3Client Client { get; } = client;

    /// <summary>Consecutive connection failures; each one doubles how long the endpoint sits out.</summary>
    public int Failures { get; set; }

    /// <summary>When an endpoint that failed may be tried again (a probe); MinValue while healthy.</summary>
    public DateTimeOffset OutUntil { get; set; } = DateTimeOffset.MinValue;
}

/// <summary>
/// The drive's endpoints used round-robin (the built-in load balancer). An endpoint that cannot be
/// reached is taken out for a while (doubling up to <see cref="S3StoreOptions.EndpointMaxOutTime"/>)
/// and probed back in by the next request after that; when every endpoint is out, the one due back
/// first is tried, so requests never stop while any server might answer.
/// </summary>
internal sealed class S3EndpointPool : IDisposable
{
    private readonly S3Endpoint[] _endpoints;
    private readonly S3StoreOptions _options;
    private readonly Lock _gate = new();
    private int _next = -1;

    public S3EndpointPool(S3StoreOptions options)
    {
        _options = options;
        _endpoints = options.AllEndpoints.Select(url =>
        {
            var silence = new EndpointSilence(options);
            var http = new IdleTimeoutHttpClientFactory(options, silence);
            return new S3Endpoint(url, NewClient(url, options, http), http.Client, silence);
        }).ToArray();
    }

    public int Count => _endpoints.Length;

    public IReadOnlyList<S3Endpoint> All => _endpoints;

    public S3Endpoint Pick()
    {
        var now = _options.Time.GetUtcNow();
        lock (_gate)
        {
            for (var i = 0; i < _endpoints.Length; i++)
            {
                _next = (_next + 1) % _endpoints.Length;
                if (_endpoints[_next].OutUntil <= now)
                {
                    return _endpoints[_next];
                }
            }
            return _endpoints.MinBy(e => e.OutUntil)!;
        }
    }

    public void Failed(S3Endpoint endpoint)
    {
        lock (_gate)
        {
            endpoint.Failures++;
            var outFor = TimeSpan.FromTicks(Math.Min(
                _options.EndpointMaxOutTime.Ticks,
                _options.EndpointOutTime.Ticks * (1L << Math.Min(endpoint.Failures - 1, 16))));
            endpoint.OutUntil = _options.Time.GetUtcNow() + outFor;
        }
    }

    public void Succeeded(S3Endpoint endpoint)
    {
        if (endpoint.Failures == 0)
        {
            return;
        }
        lock (_gate)
        {
            endpoint.Failures = 0;
            endpoint.OutUntil = DateTimeOffset.MinValue;
        }
    }

    /// <summary>Each endpoint now: in the rotation (not sitting out, not known to be silent) and its consecutive failures.</summary>
    public IReadOnlyList<GeoDrive.Core.Ports.EndpointHealth> Health()
    {
        var now = _options.Time.GetUtcNow();
        lock (_gate)
        {
            return _endpoints.Select(e => new GeoDrive.Core.Ports.EndpointHealth(
                $"{e.Url.Scheme}://{e.Url.Authority}", e.OutUntil <= now && e.Silence.Silent() is null, e.Failures)).ToArray();
        }
    }

    public void Dispose()
    {
        foreach (var endpoint in _endpoints)
        {
            endpoint.Client.Dispose();
            endpoint.Http.Dispose();
        }
    }

    private static AmazonS3Client NewClient(Uri url, S3StoreOptions options, IdleTimeoutHttpClientFactory http) => new KnownPayloadClient(
        new BasicAWSCredentials(options.AccessKey, options.SecretKey),
        new AmazonS3Config
        {
            ServiceURL = url.ToString(),
            ForcePathStyle = options.ForcePathStyle,
            AuthenticationRegion = options.Region,
            // Older servers (Ceph Pacific, moto) refuse the streaming trailer checksums SDK v4 sends by default.
            RequestChecksumCalculation = RequestChecksumCalculation.WHEN_REQUIRED,
            ResponseChecksumValidation = ResponseChecksumValidation.WHEN_REQUIRED,
            ConnectTimeout = options.ConnectTimeout,
            Timeout = options.RequestTimeout,
            // Our own handler: a request that moves nothing for IdleTimeout fails (a frozen endpoint).
            HttpClientFactory = http,
            // The SDK's standard mode: 5xx, SlowDown and throttling answers are retried with
            // exponential backoff and jitter; connection failures fail over to the next endpoint here.
            RetryMode = RequestRetryMode.Standard,
            MaxErrorRetry = options.MaxErrorRetry,
            MaxConnectionsPerServer = options.MaxConnectionsPerEndpoint,
            UseHttp = url.Scheme == Uri.UriSchemeHttp,
        });
}
