namespace GeoDrive.Core.Model;

/// <summary>Who triggered a file-system operation: the front end fills this from the OS callback.</summary>
/// <param name="ProcessId">0 when unknown.</param>
/// <param name="ImageName">Process image name, e.g. "cat" (Linux /proc/pid/comm) or "MsMpEng.exe".</param>
/// <param name="IsSystem">True for network or system callers (policy name &lt;SYSTEM&gt;).</param>
public sealed record Caller(int ProcessId, string ImageName, bool IsSystem = false)
{
    public static readonly Caller Unknown = new(0, "", false);
    public static readonly Caller Engine = new(Environment.ProcessId, "geodrive", true);
}
