namespace GeoDrive.Core.Model;

/// <summary>
/// Who triggered a file-system operation: the front end fills this from the OS callback. Its image name may be read only
/// when first asked for (FUSE: /proc/PID/comm, three system calls; most requests never need it), so the engine asks for it
/// while the request is being answered, when the process is still the one that made it.
/// </summary>
public sealed record Caller
{
    private readonly Func<int, string>? _readImageName;
    private string? _imageName;

    /// <param name="ProcessId">0 when unknown.</param>
    /// <param name="ImageName">Process image name, e.g. "cat" (Linux /proc/pid/comm) or "MsMpEng.exe".</param>
    /// <param name="IsSystem">True for network or system callers (policy name &lt;SYSTEM&gt;).</param>
#pragma warning disable IDE1006 // The names of the properties they set, as callers write them (IsSystem: true).
    public Caller(int ProcessId, string ImageName, bool IsSystem = false)
#pragma warning restore IDE1006
    {
        this.ProcessId = ProcessId;
        _imageName = ImageName;
        this.IsSystem = IsSystem;
    }

    /// <summary>A process whose image name <paramref name="readImageName"/> reads from its id, once, when first asked for.</summary>
    public Caller(int processId, Func<int, string> readImageName)
    {
        ProcessId = processId;
        _readImageName = readImageName;
    }

    public static readonly Caller Unknown = new(0, "", false);
    public static readonly Caller Engine = new(Environment.ProcessId, "geodrive", true);

    public int ProcessId { get; }

    public string ImageName => _imageName ??= _readImageName!(ProcessId);

    public bool IsSystem { get; }

    public bool Equals(Caller? other) =>
        other is not null && ProcessId == other.ProcessId && IsSystem == other.IsSystem && ImageName == other.ImageName;

    public override int GetHashCode() => HashCode.Combine(ProcessId, IsSystem, ImageName);
}
