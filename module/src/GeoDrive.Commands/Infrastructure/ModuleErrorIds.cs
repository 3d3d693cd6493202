namespace GeoDrive.Commands;

/// <summary>
/// Error ids only the module raises (starting and stopping the service process). Stable like
/// GeoDrive.Core.Errors.ErrorIds; they belong there once Core takes them.
/// </summary>
public static class ModuleErrorIds
{
    public const string ServiceBinaryNotFound = "ServiceBinaryNotFound";
    public const string ServiceStartFailed = "ServiceStartFailed";
    public const string ServiceStopFailed = "ServiceStopFailed";

    // Issue 5
    public const string PinOrUnpin = "PinOrUnpin";
}
