using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Threading.Channels;

namespace GeoDrive.Bench;

/// <summary>
/// A TCP delay line on 127.0.0.1 in front of the S3 server: every byte arrives <c>oneWay</c> after it was sent, in
/// each direction, so a request and its answer take a round trip of twice that, and bytes in flight are not held
/// back by the ones before them (a delay, not a rate limit). Timers here fire on whole milliseconds, so a delay
/// below one comes out near one: the probe measures the round trip it adds and reports that. The stand-in for netem, which this machine's kernel
/// lacks (CONFIG_NET_SCH_NETEM is not set): what a user waits for on a LAN (1 ms) or a WAN (20 ms).
/// </summary>
public sealed class DelayProxy : IAsyncDisposable
{
    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly Uri _upstream;
    private readonly TimeSpan _oneWay;
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _accepting;

    public DelayProxy(Uri upstream, TimeSpan oneWay)
    {
        _upstream = upstream;
        _oneWay = oneWay;
        _listener.Start();
        _accepting = AcceptAsync();
    }

    public string Endpoint => $"http://127.0.0.1:{((IPEndPoint)_listener.LocalEndpoint).Port}";

    private async Task AcceptAsync()
    {
        try
        {
            while (true)
            {
                var client = await _listener.AcceptTcpClientAsync(_stop.Token);
                _ = ForwardAsync(client);
            }
        }
        catch (OperationCanceledException)
        {
        }
    }

    private async Task ForwardAsync(TcpClient client)
    {
        using (client)
        using (var upstream = new TcpClient())
        {
            try
            {
                client.NoDelay = true;
                upstream.NoDelay = true;
                // The connection's setup pays the round trip too (SYN, SYN-ACK).
                await Task.Delay(_oneWay * 2, _stop.Token);
                await upstream.ConnectAsync(_upstream.Host, _upstream.Port, _stop.Token);
                var a = client.GetStream();
                var b = upstream.GetStream();
                await Task.WhenAny(PumpAsync(a, b), PumpAsync(b, a));
            }
            catch (Exception ex) when (ex is IOException or SocketException or OperationCanceledException or ObjectDisposedException)
            {
                // A side closed: the other goes with it.
            }
        }
    }

    /// <summary>One direction: a reader stamps each chunk with when it may leave, a writer sends it then.</summary>
    private async Task PumpAsync(Stream from, Stream to)
    {
        var line = Channel.CreateUnbounded<(long Due, byte[] Bytes, int Count)>(new UnboundedChannelOptions { SingleReader = true, SingleWriter = true });
        var writer = Task.Run(async () =>
        {
            await foreach (var (due, bytes, count) in line.Reader.ReadAllAsync(_stop.Token))
            {
                var wait = Stopwatch.GetElapsedTime(Stopwatch.GetTimestamp(), due);
                if (wait > TimeSpan.Zero)
                {
                    await Task.Delay(wait, _stop.Token);
                }
                await to.WriteAsync(bytes.AsMemory(0, count), _stop.Token);
            }
            to.Close();
        });
        try
        {
            while (true)
            {
                var buffer = new byte[64 * 1024];
                var read = await from.ReadAsync(buffer, _stop.Token);
                if (read == 0)
                {
                    break;
                }
                line.Writer.TryWrite((Stopwatch.GetTimestamp() + (long)(_oneWay.TotalSeconds * Stopwatch.Frequency), buffer, read));
            }
        }
        finally
        {
            line.Writer.TryComplete();
        }
        await writer;
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        _listener.Stop();
        await _accepting;
        _stop.Dispose();
    }
}
