using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace GeoDrive.TestSupport;

/// <summary>
/// A TCP proxy on 127.0.0.1 in front of the test's S3 server that injects the faults a real server
/// cannot be made to produce on demand: 503 SlowDown and 500 InternalError answers, connection resets, replies lost after the server acted, being down
/// (stopped: connections refused) and being frozen (a black hole: connections accepted, requests never
/// answered, as a hung gateway or a dropped route behind a load balancer does). Faults are handed to new
/// connections; arming one drops the open connections so the client's next requests come on new ones.
/// A fault-injection stand-in, by design: no real server freezes on demand.
/// </summary>
public sealed class FaultProxy : IDisposable
{
    private const string SlowDownBody = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>";
    private const string InternalErrorBody = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>InternalError</Code><Message>We encountered an internal error. Please try again.</Message></Error>";
    private readonly IPEndPoint _upstream;
    private readonly ConcurrentDictionary<Socket, byte> _connections = new();
    private TcpListener? _listener;
    private TaskCompletionSource? _thawed;
    private int _pendingSlowDowns;
    private int _pendingInternalErrors;
    private int _pendingResets;
    private int _slowDownsSent;
    private int _internalErrorsSent;
    private int _resetsSent;
    private int _pendingLostReplies;
    private Func<string, bool> _losesReplyTo = static _ => false;
    private int _repliesLost;
    private ConcurrentQueue<string>? _requestHeads;
    private HeldRequest? _toHold;
    private readonly ConcurrentDictionary<Func<string, bool>, TaskCompletionSource> _answerWatches = new();
    private readonly ConcurrentDictionary<Refusal, byte> _refusals = new();

    public FaultProxy(string upstreamEndpoint)
    {
        var uri = new Uri(upstreamEndpoint);
        _upstream = new IPEndPoint(IPAddress.Loopback, uri.Port);
        Port = S3TestServer.FreePort();
        Start();
    }

    public int Port { get; }

    public string Endpoint => $"http://127.0.0.1:{Port}";

    public int SlowDownsSent => Volatile.Read(ref _slowDownsSent);

    /// <summary>Bytes the client sent through to the server, and when the first and last of them passed: the rate on the wire.</summary>
    public long BytesToServer => Interlocked.Read(ref _bytesToServer);

    public TimeSpan ToServerSpan => TimeSpan.FromTicks(Math.Max(0, Interlocked.Read(ref _lastToServer) - Interlocked.Read(ref _firstToServer)));

    private long _bytesToServer;
    private long _firstToServer;
    private long _lastToServer;

    private byte[]? _meterFrom;
    private byte[]? _meterUntil;
    private int _meterStopped;

    /// <summary>Measures the wire afresh, for a second transfer of the same test (call it while nothing is in flight).</summary>
    public void ResetWireMeter()
    {
        Volatile.Write(ref _meterFrom, null);
        Volatile.Write(ref _meterUntil, null);
        Volatile.Write(ref _meterStopped, 0);
        Interlocked.Exchange(ref _bytesToServer, 0);
        Interlocked.Exchange(ref _firstToServer, 0);
        Interlocked.Exchange(ref _lastToServer, 0);
    }

    /// <summary>
    /// Measures the wire afresh from the first request whose line starts with <paramref name="requestLine"/>
    /// (say "POST /bucket/key?uploads", a multipart upload's start): what goes before it (a one-time probe,
    /// a lookup) is not the transfer. A request's head opens a read of its own here, as a client sends the
    /// next request on a connection only once the previous answer came.
    /// </summary>
    public void ResetWireMeterFrom(string requestLine)
    {
        ResetWireMeter();
        Volatile.Write(ref _meterFrom, Encoding.ASCII.GetBytes(requestLine));
    }

    /// <summary>
    /// As <see cref="ResetWireMeterFrom"/>, and the meter stops at the first request whose line starts with
    /// <paramref name="untilRequestLine"/> (say "POST /bucket/key?uploadId=", a multipart upload's completion, which goes only
    /// once the server has answered the last part: its answer's wait is the server's, not the sender's pace).
    /// </summary>
    public void ResetWireMeterFrom(string requestLine, string untilRequestLine)
    {
        ResetWireMeterFrom(requestLine);
        Volatile.Write(ref _meterUntil, Encoding.ASCII.GetBytes(untilRequestLine));
    }

    public int ResetsSent => Volatile.Read(ref _resetsSent);

    public int RepliesLost => Volatile.Read(ref _repliesLost);

    /// <summary>
    /// The next <paramref name="count"/> requests whose head (request line and headers) matches <paramref name="requestHead"/>
    /// (each the first on a new connection, which ends with its answer) reach the server, which acts on them, and their answers are
    /// lost: the connection is reset once the server starts to answer (a reply lost on the way back).
    /// </summary>
    public void LoseReplies(int count, Func<string, bool> requestHead)
    {
        _losesReplyTo = requestHead;
        Interlocked.Exchange(ref _pendingLostReplies, count);
        DropConnections();
    }

    /// <summary>
    /// From now on every request's head (request line and headers, as the client sent them) is kept in
    /// <see cref="RequestHeads"/>; each request goes on a connection of its own (its last), so none passes unseen.
    /// </summary>
    public void RecordRequestHeads()
    {
        Interlocked.CompareExchange(ref _requestHeads, new ConcurrentQueue<string>(), null);
        DropConnections();
    }

    /// <summary>The heads of the requests passed since <see cref="RecordRequestHeads"/>, in the order they came.</summary>
    public IReadOnlyList<string> RequestHeads => [.. Volatile.Read(ref _requestHeads) ?? []];

    /// <summary>
    /// The next request whose head matches <paramref name="requestHead"/> is read whole (head and body) and held: the server
    /// sees nothing of it until <see cref="HeldRequest.ReleaseAsync"/>, however the client fares meanwhile (killed, gone).
    /// A server that received a request and acts on it late, which no real server does on demand.
    /// </summary>
    public HeldRequest HoldNext(Func<string, bool> requestHead)
    {
        var held = new HeldRequest(requestHead);
        Volatile.Write(ref _toHold, held);
        DropConnections();
        return held;
    }

    /// <summary>
    /// Holds nothing more for <paramref name="held"/> if no request matched it yet; its <see cref="HeldRequest.Whole"/>
    /// then answers false. A request already matched stays held.
    /// </summary>
    public void StopHolding(HeldRequest held)
    {
        if (Interlocked.CompareExchange(ref _toHold, null, held) == held)
        {
            held.SetWhole(false);
        }
    }

    /// <summary>Completes once the server starts to answer a request whose head matches <paramref name="requestHead"/>, from now on.</summary>
    public Task WhenAnswered(Func<string, bool> requestHead)
    {
        var answered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        _answerWatches[requestHead] = answered;
        DropConnections();
        return answered.Task;
    }

    /// <summary>
    /// Until the returned refusal is disposed, every request whose head matches <paramref name="requestHead"/> gets
    /// "500 InternalError" and never reaches the server (a server failing one kind of request for a while).
    /// </summary>
    public IDisposable RefuseWhile(Func<string, bool> requestHead)
    {
        var refusal = new Refusal(requestHead, r => _refusals.TryRemove(r, out _));
        _refusals[refusal] = 0;
        DropConnections();
        return refusal;
    }

    /// <summary>How many requests a <see cref="RefuseWhile"/> refused.</summary>
    public int Refused => Volatile.Read(ref _refused);

    private int _refused;

    private sealed class Refusal(Func<string, bool> matches, Action<Refusal> end) : IDisposable
    {
        public Func<string, bool> Matches { get; } = matches;

        public void Dispose() => end(this);
    }

    private bool LooksAtHeads => Volatile.Read(ref _pendingLostReplies) > 0 || Volatile.Read(ref _requestHeads) is not null || Volatile.Read(ref _toHold) is not null
        || !_answerWatches.IsEmpty || !_refusals.IsEmpty;

    /// <summary>A request the proxy keeps from the server (<see cref="HoldNext"/>).</summary>
    public sealed class HeldRequest(Func<string, bool> matches)
    {
        private readonly TaskCompletionSource _arrived = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly TaskCompletionSource<bool> _whole = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly TaskCompletionSource _released = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly TaskCompletionSource<string> _answered = new(TaskCreationOptions.RunContinuationsAsynchronously);

        internal Func<string, bool> Matches { get; } = matches;

        /// <summary>Completes once the request has come whole from the client.</summary>
        public Task Arrived => _arrived.Task;

        /// <summary>True once the request has come whole (it is held); false once it cannot (the client went away first, or nothing matched before <see cref="StopHolding"/>).</summary>
        public Task<bool> Whole => _whole.Task;

        /// <summary>The held request's first line ("PUT /bucket/key HTTP/1.1").</summary>
        public string RequestLine { get; private set; } = "";

        /// <summary>Sends the request on to the server; returns the status line of the server's answer.</summary>
        public Task<string> ReleaseAsync()
        {
            _released.TrySetResult();
            return _answered.Task;
        }

        internal void SetArrived(string requestLine)
        {
            RequestLine = requestLine;
            _arrived.TrySetResult();
            _whole.TrySetResult(true);
        }

        internal void SetWhole(bool whole) => _whole.TrySetResult(whole);

        internal Task Released => _released.Task;

        internal void SetAnswered(string statusLine) => _answered.TrySetResult(statusLine);

        internal void SetFailed(Exception error)
        {
            _whole.TrySetResult(false);
            _answered.TrySetException(error);
        }
    }

    public int InternalErrorsSent => Volatile.Read(ref _internalErrorsSent);

    /// <summary>The next <paramref name="count"/> connections get "500 InternalError" instead of the server.</summary>
    public void InjectInternalErrors(int count)
    {
        Interlocked.Add(ref _pendingInternalErrors, count);
        DropConnections();
    }

    /// <summary>The next <paramref name="count"/> connections get "503 SlowDown" instead of the server.</summary>
    public void InjectSlowDowns(int count)
    {
        Interlocked.Add(ref _pendingSlowDowns, count);
        DropConnections();
    }

    /// <summary>The next <paramref name="count"/> connections are reset (RST) once the request arrives.</summary>
    public void InjectResets(int count)
    {
        Interlocked.Add(ref _pendingResets, count);
        DropConnections();
    }

    /// <summary>
    /// The endpoint freezes until <see cref="Thaw"/>: every connection, open or new, is accepted and
    /// kept, and nothing more passes either way (no answer, no reset, no refusal).
    /// </summary>
    public void Freeze()
    {
        Interlocked.CompareExchange(ref _thawed, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously), null);
    }

    /// <summary>Ends a freeze: the connections held meanwhile are cut (the client gave up on them), new ones pass again.</summary>
    public void Thaw()
    {
        if (Interlocked.Exchange(ref _thawed, null) is { } thawed)
        {
            DropConnections();
            thawed.TrySetResult();
        }
    }

    public bool Frozen => Volatile.Read(ref _thawed) is not null;

    /// <summary>The endpoint goes down: open connections are cut and new ones refused until <see cref="Start"/>.</summary>
    public void Stop()
    {
        _listener?.Stop();
        _listener = null;
        DropConnections();
    }

    public void Start()
    {
        var listener = new TcpListener(IPAddress.Loopback, Port);
        listener.Server.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
        listener.Start();
        _listener = listener;
        _ = AcceptAsync(listener);
    }

    private async Task AcceptAsync(TcpListener listener)
    {
        while (true)
        {
            Socket client;
            try
            {
                client = await listener.AcceptSocketAsync();
            }
            catch (Exception ex) when (ex is SocketException or ObjectDisposedException or InvalidOperationException)
            {
                return;
            }
            _ = ServeAsync(client);
        }
    }

    private static async Task AnswerErrorAsync(Socket client, string status, string body)
    {
        await ReadRequestHeadAsync(client);
        await SendErrorAsync(client, status, body);
    }

    private static async Task SendErrorAsync(Socket client, string status, string body)
    {
        var response = $"HTTP/1.1 {status}\r\nContent-Type: application/xml\r\nContent-Length: {Encoding.ASCII.GetByteCount(body)}\r\nConnection: close\r\n\r\n{body}";
        await client.SendAsync(Encoding.ASCII.GetBytes(response));
    }

    private async Task ServeAsync(Socket client)
    {
        _connections[client] = 0;
        try
        {
            if (Volatile.Read(ref _thawed) is { } frozen)
            {
                // Accepted, read from never: the request sits in the socket buffers until the freeze ends.
                await frozen.Task;
                return;
            }
            if (Take(ref _pendingResets))
            {
                await ReadRequestHeadAsync(client);
                client.LingerState = new LingerOption(true, 0);
                Interlocked.Increment(ref _resetsSent);
                return;
            }
            if (Take(ref _pendingSlowDowns))
            {
                await AnswerErrorAsync(client, "503 Slow Down", SlowDownBody);
                Interlocked.Increment(ref _slowDownsSent);
                return;
            }
            if (Take(ref _pendingInternalErrors))
            {
                await AnswerErrorAsync(client, "500 Internal Server Error", InternalErrorBody);
                Interlocked.Increment(ref _internalErrorsSent);
                return;
            }
            using var upstream = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            await upstream.ConnectAsync(_upstream);
            _connections[upstream] = 0;
            try
            {
                if (LooksAtHeads)
                {
                    var head = await ReadRequestHeadAsync(client);
                    var headText = Encoding.Latin1.GetString(head);
                    if (_refusals.Keys.Any(r => r.Matches(headText)))
                    {
                        // Its body (if any) is left unread: the answer closes the connection.
                        await SendErrorAsync(client, "500 Internal Server Error", InternalErrorBody);
                        Interlocked.Increment(ref _refused);
                        return;
                    }
                    if (Volatile.Read(ref _toHold) is { } hold && hold.Matches(headText) && Interlocked.CompareExchange(ref _toHold, null, hold) == hold)
                    {
                        await HoldAsync(hold, client, _upstream, head);
                        return;
                    }
                    if (Volatile.Read(ref _requestHeads) is { } heads)
                    {
                        heads.Enqueue(headText.IndexOf("\r\n\r\n", StringComparison.Ordinal) is var end and >= 0 ? headText[..end] : headText);
                    }
                    // Only a connection's first request is looked at: this one is its last, so the client's next
                    // request comes on a new connection (a server that keeps connections alive, as Ceph RGW does,
                    // otherwise carried the request to lose on a connection opened by an earlier one).
                    await upstream.SendAsync(WithConnectionClose(head));
                    if (_answerWatches.Keys.FirstOrDefault(w => w(headText)) is { } watch && _answerWatches.TryRemove(watch, out var answered))
                    {
                        // The first byte of the server's answer: it acted on the request.
                        var toServer = PipeAsync(client, upstream, toServer: true);
                        var first = new byte[1];
                        if (await upstream.ReceiveAsync(first) == 1)
                        {
                            answered.TrySetResult();
                            await client.SendAsync(first);
                        }
                        await Task.WhenAny(toServer, PipeAsync(upstream, client, toServer: false));
                        return;
                    }
                    if (_losesReplyTo(Encoding.ASCII.GetString(head)) && Take(ref _pendingLostReplies))
                    {
                        // The server acted on the request once it starts to answer; the answer never arrives.
                        await upstream.ReceiveAsync(new byte[1]);
                        client.LingerState = new LingerOption(true, 0);
                        Interlocked.Increment(ref _repliesLost);
                        return;
                    }
                }
                await Task.WhenAny(PipeAsync(client, upstream, toServer: true), PipeAsync(upstream, client, toServer: false));
            }
            finally
            {
                _connections.TryRemove(upstream, out _);
            }
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException or IOException)
        {
            // The client or the server went away: that is all a proxy needs to know.
        }
        finally
        {
            _connections.TryRemove(client, out _);
            client.Dispose();
        }
    }

    /// <summary>Reads the rest of a held request's body (its Content-Length), waits for its release, sends it and reads the answer's first line.</summary>
    /// <remarks>Sent on a connection of its own, opened at the release: whatever the proxy cuts meanwhile, the server got the request.</remarks>
    private static async Task HoldAsync(HeldRequest hold, Socket client, IPEndPoint server, byte[] head)
    {
        try
        {
            var request = new List<byte>(head);
            var text = Encoding.Latin1.GetString(head);
            var headEnd = text.IndexOf("\r\n\r\n", StringComparison.Ordinal) + 4;
            var length = text[..headEnd].Split("\r\n").Select(l => l.Split(':', 2)).Where(p => p.Length == 2 && p[0].Trim().Equals("Content-Length", StringComparison.OrdinalIgnoreCase))
                .Select(p => long.Parse(p[1].Trim(), System.Globalization.CultureInfo.InvariantCulture)).FirstOrDefault();
            var buffer = new byte[81920];
            while (request.Count - headEnd < length)
            {
                var n = await client.ReceiveAsync(buffer);
                if (n == 0)
                {
                    throw new IOException($"the client went away {length - (request.Count - headEnd)} bytes before the end of the request it sent");
                }
                request.AddRange(buffer.AsSpan(0, n));
            }
            hold.SetArrived(text[..text.IndexOf("\r\n", StringComparison.Ordinal)]);
            await hold.Released;
            using var upstream = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            await upstream.ConnectAsync(server);
            await upstream.SendAsync(WithConnectionClose([.. request]));
            // The final answer's status line, past any interim "100 Continue" (a client that sent Expect: 100-continue).
            var answer = new List<byte>();
            string status;
            while (true)
            {
                var received = Encoding.Latin1.GetString([.. answer]);
                var answerHeadEnd = received.IndexOf("\r\n\r\n", StringComparison.Ordinal);
                if (answerHeadEnd >= 0 && received.StartsWith("HTTP/1.1 1", StringComparison.Ordinal))
                {
                    answer.RemoveRange(0, answerHeadEnd + 4);
                    continue;
                }
                if (answerHeadEnd >= 0)
                {
                    status = received[..received.IndexOf("\r\n", StringComparison.Ordinal)];
                    break;
                }
                var n = await upstream.ReceiveAsync(buffer);
                if (n == 0)
                {
                    status = received;
                    break;
                }
                answer.AddRange(buffer.AsSpan(0, n));
            }
            hold.SetAnswered(status);
        }
        catch (Exception ex)
        {
            hold.SetFailed(ex);
        }
    }

    private static bool Take(ref int pending)
    {
        while (true)
        {
            var current = Volatile.Read(ref pending);
            if (current <= 0)
            {
                return false;
            }
            if (Interlocked.CompareExchange(ref pending, current - 1, current) == current)
            {
                return true;
            }
        }
    }

    /// <summary>The request with "Connection: close" added to its head (any body bytes after it kept as they came).</summary>
    private static byte[] WithConnectionClose(byte[] request)
    {
        var text = Encoding.Latin1.GetString(request);
        var end = text.IndexOf("\r\n\r\n", StringComparison.Ordinal);
        return end < 0 ? request : Encoding.Latin1.GetBytes(text[..end] + "\r\nConnection: close" + text[end..]);
    }

    /// <summary>Reads until the request's head has arrived; returns every byte read (the head, and any body bytes that came with it).</summary>
    private static async Task<byte[]> ReadRequestHeadAsync(Socket client)
    {
        var buffer = new byte[8192];
        var seen = new List<byte>();
        while (!Encoding.ASCII.GetString(seen.ToArray()).Contains("\r\n\r\n", StringComparison.Ordinal))
        {
            var n = await client.ReceiveAsync(buffer);
            if (n == 0)
            {
                break;
            }
            seen.AddRange(buffer.AsSpan(0, n));
        }
        return [.. seen];
    }

    private async Task PipeAsync(Socket from, Socket to, bool toServer)
    {
        var buffer = new byte[81920];
        while (true)
        {
            var n = await from.ReceiveAsync(buffer);
            if (Volatile.Read(ref _thawed) is { } frozen)
            {
                // A connection opened before the freeze stops mid-stream too; it is cut when the freeze ends.
                await frozen.Task;
                return;
            }
            if (n == 0)
            {
                to.Shutdown(SocketShutdown.Send);
                return;
            }
            if (toServer && Volatile.Read(ref _meterFrom) is { } startLine && buffer.AsSpan(0, n).StartsWith(startLine))
            {
                Interlocked.CompareExchange(ref _meterFrom, null, startLine);
            }
            if (toServer && Volatile.Read(ref _meterUntil) is { } endLine && buffer.AsSpan(0, n).StartsWith(endLine))
            {
                Volatile.Write(ref _meterStopped, 1);
            }
            if (toServer && Volatile.Read(ref _meterFrom) is null && Volatile.Read(ref _meterStopped) == 0)
            {
                var now = DateTime.UtcNow.Ticks;
                Interlocked.CompareExchange(ref _firstToServer, now, 0);
                Interlocked.Exchange(ref _lastToServer, now);
                Interlocked.Add(ref _bytesToServer, n);
            }
            await to.SendAsync(buffer.AsMemory(0, n));
        }
    }

    private void DropConnections()
    {
        foreach (var socket in _connections.Keys)
        {
            try
            {
                socket.LingerState = new LingerOption(true, 0);
                socket.Close();
            }
            catch (ObjectDisposedException)
            {
            }
        }
    }

    public void Dispose()
    {
        Thaw();
        Stop();
    }
}
