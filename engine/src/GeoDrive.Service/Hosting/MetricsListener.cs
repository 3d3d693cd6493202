using GeoDrive.Core.Errors;
using GeoDrive.Engine.Metrics;
using OpenTelemetry.Metrics;
using OpenTelemetry.Resources;

namespace GeoDrive.Service.Hosting;

/// <summary>
/// The Prometheus scrape endpoint (GET /metrics), on a small HTTP listener of its own so that the control API never
/// answers on TCP: only when the service is told where (<see cref="ServiceOptions.MetricsListen"/>). It serves the
/// engine's Meter "GeoDrive" through OpenTelemetry's Prometheus exporter (docs/decisions/0023-metrics.md). An address
/// it cannot bind is logged (MetricsListenFailed) and the drives run on without it: their data matters more than their metrics.
/// </summary>
internal sealed class MetricsListener(ServiceOptions options, MeterProvider meterProvider, ILogger<MetricsListener> logger) : IHostedService, IAsyncDisposable
{
    private WebApplication? _app;

    /// <summary>Registers OpenTelemetry's metrics and the listener when the options name an address; nothing otherwise.</summary>
    public static void AddTo(WebApplicationBuilder builder, ServiceOptions options)
    {
        if (options.MetricsListen is null)
        {
            return;
        }
        builder.Services.AddOpenTelemetry()
            .ConfigureResource(resource => resource.AddService("geodrive"))
            .WithMetrics(metrics => metrics
                .AddMeter(EngineMeter.MeterName)
                .AddPrometheusExporter(exporter => exporter.ScrapeEndpointPath = MetricsAddress.ScrapePath));
        builder.Services.AddHostedService<MetricsListener>();
    }

    public async Task StartAsync(CancellationToken cancellationToken)
    {
        var address = options.MetricsListen!;
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(k =>
        {
            k.Listen(address);
            k.AddServerHeader = false;
        });
        var app = builder.Build();
        app.UseOpenTelemetryPrometheusScrapingEndpoint(meterProvider, predicate: null, path: MetricsAddress.ScrapePath, configureBranchedPipeline: null, optionsName: null);
        // Nothing else is served here.
        app.Run(context =>
        {
            context.Response.StatusCode = StatusCodes.Status404NotFound;
            return Task.CompletedTask;
        });
        try
        {
            await app.StartAsync(cancellationToken);
            _app = app;
            logger.LogInformation("Metrics for Prometheus on http://{Address}{Path}", address, MetricsAddress.ScrapePath);
        }
        catch (Exception ex) when (ex is IOException or System.Net.Sockets.SocketException or InvalidOperationException)
        {
            await app.DisposeAsync();
            logger.LogError("error {ErrorId}: the metrics endpoint could not listen on {Address}: {Message} The drives run without it. Give a free port of an address of this host (--metrics-listen).",
                ErrorIds.MetricsListenFailed, address, ex.Message);
        }
    }

    public async Task StopAsync(CancellationToken cancellationToken)
    {
        if (_app is not null)
        {
            await _app.StopAsync(cancellationToken);
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (_app is not null)
        {
            await _app.DisposeAsync();
        }
    }
}
