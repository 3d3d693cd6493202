namespace GeoDrive.Core.Ports;

/// <summary>The only source of "now" for logic, so access wait, settle and schedules are testable without sleeping.</summary>
public interface IClock
{
    DateTimeOffset UtcNow { get; }
}

public sealed class SystemClock : IClock
{
    public static readonly SystemClock Instance = new();

    public DateTimeOffset UtcNow => DateTimeOffset.UtcNow;
}
