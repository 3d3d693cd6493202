using System.Diagnostics;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;

namespace GeoDrive.State.Tests;

/// <summary>
/// The child process of the crash and locking tests. Each mode prints one line per acknowledged step
/// ("ready ..."), then waits to be killed or for stdin to close:
///   put &lt;db&gt; &lt;count&gt;    Put entries "f/0000001"..., each with a 2 KB LastError so LiteDB's log fills
///                         and auto-checkpoints happen while the test kills us;
///   deferred &lt;db&gt; &lt;count&gt; PutDeferred entries "f/..." in batches of 10, each batch followed by
///                         one durable Put "marker/..." (the acknowledgement covers the batch);
///   deferred-alone &lt;db&gt; one PutDeferred of "alone/0000001", then no other call ("put");
///   rename &lt;db&gt; &lt;count&gt; seed "a/" with count entries, then rename the folder a -> b -> a ... forever;
///   hold &lt;db&gt;            open the index and hold it.
/// </summary>
internal static class IndexHelper
{
    public const string Verb = "index-helper";
    public static readonly string Payload = new('x', 2_000);

    public static int Run(string[] args)
    {
        try
        {
            var db = args[1];
            switch (args[0])
            {
                case "put":
                    return Put(db, int.Parse(args[2]));
                case "deferred":
                    return Deferred(db, int.Parse(args[2]));
                case "deferred-alone":
                    return DeferredAlone(db);
                case "rename":
                    return Rename(db, int.Parse(args[2]));
                case "hold":
                    using (LiteDbFileIndex.Open(db))
                    {
                        Console.WriteLine("ready");
                        Console.In.ReadToEnd();
                    }

                    return 0;
                default:
                    return 2;
            }
        }
        catch (GeoDriveException ex)
        {
            Console.WriteLine($"error {ex.ErrorId}");
            return 1;
        }
    }

    public static FileEntry PutEntry(int i) => new()
    {
        Path = $"f/{i:D7}",
        State = FileState.Dirty,
        Size = i,
        ModifiedUtc = Samples.T0.AddTicks(i),
        LastAccessUtc = Samples.T0,
        Generation = i,
        LastError = Payload,
    };

    private static int Put(string db, int count)
    {
        using var index = LiteDbFileIndex.Open(db);
        Console.WriteLine("open");
        for (var i = 0; i < count; i++)
        {
            index.Put(PutEntry(i));
            Console.WriteLine($"ready {i}");
        }

        Console.WriteLine("done");
        Console.In.ReadToEnd();
        return 0;
    }

    private static int Deferred(string db, int count)
    {
        using var index = LiteDbFileIndex.Open(db);
        Console.WriteLine("open");
        for (var i = 0; i < count; i++)
        {
            index.PutDeferred(PutEntry(i));
            if (i % 10 == 9)
            {
                index.Put(new FileEntry { Path = $"marker/{i:D7}", State = FileState.Cached });
                Console.WriteLine($"ready {i}");
            }
        }

        Console.WriteLine("done");
        Console.In.ReadToEnd();
        return 0;
    }

    public const string AlonePath = "alone/0000001";

    private static int DeferredAlone(string db)
    {
        using var index = LiteDbFileIndex.Open(db);
        index.PutDeferred(new FileEntry { Path = AlonePath, State = FileState.Dirty, Generation = 7 });
        Console.WriteLine("put");
        Console.In.ReadToEnd();
        return 0;
    }

    private static int Rename(string db, int count)
    {
        using var index = LiteDbFileIndex.Open(db);
        for (var i = 0; i < count; i++)
        {
            index.Put(Samples.Entry($"a/{i:D3}"));
        }

        Console.WriteLine("open");
        for (var round = 0; ; round++)
        {
            var (from, to) = round % 2 == 0 ? ("a", "b") : ("b", "a");
            index.Rename(from, to);
            Console.WriteLine($"ready {to} {round}");
        }
    }
}

/// <summary>Starts and talks to an <see cref="IndexHelper"/> child process.</summary>
internal sealed class HelperProcess : IDisposable
{
    private readonly Process _process;
    private readonly System.Text.StringBuilder _errors = new();

    private HelperProcess(Process process) => _process = process;

    /// <summary>What the child wrote to stderr so far, for failure messages.</summary>
    public string Errors
    {
        get
        {
            lock (_errors)
            {
                return _errors.ToString();
            }
        }
    }

    public static HelperProcess Start(params string[] args)
    {
        // Under "dotnet test" the SDK names its own host in DOTNET_HOST_PATH; elsewhere "dotnet" is on PATH.
        var host = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } h && File.Exists(h) ? h : "dotnet";
        var start = new ProcessStartInfo(host)
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        start.ArgumentList.Add("exec");
        start.ArgumentList.Add(typeof(IndexHelper).Assembly.Location);
        start.ArgumentList.Add(IndexHelper.Verb);
        foreach (var arg in args)
        {
            start.ArgumentList.Add(arg);
        }

        var process = Process.Start(start) ?? throw new InvalidOperationException("The helper process did not start.");
        var helper = new HelperProcess(process);
        process.ErrorDataReceived += (_, e) =>
        {
            lock (helper._errors)
            {
                helper._errors.AppendLine(e.Data);
            }
        };
        process.BeginErrorReadLine();
        return helper;
    }

    /// <summary>Next line of the child's output, or null at its end; fails the test after a timeout.</summary>
    public string? ReadLine(TimeSpan? timeout = null)
    {
        var read = _process.StandardOutput.ReadLineAsync();
        if (!read.Wait(timeout ?? TimeSpan.FromSeconds(30)))
        {
            throw new TimeoutException($"The helper process went silent. stderr: {Errors}");
        }

        return read.Result;
    }

    public void Expect(string expected)
    {
        var actual = ReadLine();
        Assert.True(actual == expected, $"expected '{expected}' from the helper, got '{actual}'. stderr: {Errors}");
    }

    /// <summary>SIGKILL on Unix, TerminateProcess on Windows: no finalizers, no Dispose, no flush.</summary>
    public void Kill()
    {
        _process.Kill(entireProcessTree: true);
        _process.WaitForExit();
    }

    /// <summary>Everything the child printed before it died.</summary>
    public List<string> ReadToEnd()
    {
        var lines = new List<string>();
        while (ReadLine() is { } line)
        {
            lines.Add(line);
        }

        return lines;
    }

    public void Dispose()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
            _process.WaitForExit();
        }

        _process.Dispose();
    }
}
