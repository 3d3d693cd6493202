namespace GeoDrive.Core.Errors;

/// <summary>
/// Every refusal GeoDrive makes: a stable id (used as the PowerShell FullyQualifiedErrorId), what was
/// wrong, and what to do about it. Messages never contain secrets.
/// </summary>
public class GeoDriveException : Exception
{
    public GeoDriveException(string errorId, ErrorKind kind, string message, string remedy, Exception? inner = null)
        : base(message, inner)
    {
        ErrorId = errorId;
        Kind = kind;
        Remedy = remedy;
    }

    public GeoDriveException()
        : this("Unknown", ErrorKind.NotSpecified, "GeoDrive failed.", "See the service log.")
    {
    }

    public GeoDriveException(string message)
        : this("Unknown", ErrorKind.NotSpecified, message, "See the service log.")
    {
    }

    public GeoDriveException(string message, Exception innerException)
        : this("Unknown", ErrorKind.NotSpecified, message, "See the service log.", innerException)
    {
    }

    /// <summary>Stable identifier, e.g. "PolicyUnknownKey". Never change one once released.</summary>
    public string ErrorId { get; }

    public ErrorKind Kind { get; }

    /// <summary>One sentence telling the administrator what to do.</summary>
    public string Remedy { get; }

    /// <summary>Message and remedy together, as shown to a user.</summary>
    public string FullMessage => string.IsNullOrEmpty(Remedy) ? Message : $"{Message} {Remedy}";
}

/// <summary>Broad kind of a refusal; maps onto PowerShell's ErrorCategory and HTTP status codes.</summary>
public enum ErrorKind
{
    NotSpecified,
    InvalidArgument,
    InvalidData,
    ObjectNotFound,
    ResourceExists,
    PermissionDenied,
    ConnectionError,
    ResourceUnavailable,
    InvalidOperation,
}
