using System.Text.Json;
using GeoDrive.Api;
using GeoDrive.Core.Errors;

namespace GeoDrive.Service.ControlApi;

/// <summary>Turns every failure into an <see cref="ApiError"/> with a status code that matches its kind.</summary>
public static class ErrorHandling
{
    public static void Use(WebApplication app)
    {
        // Answers the framework gives without a body (no such route, wrong method, body too large) carry an error id too.
        app.UseStatusCodePages(async status =>
        {
            var context = status.HttpContext;
            var code = context.Response.StatusCode;
            var what = $"{context.Request.Method} {Shorten(context.Request.Path.Value)}";
            var error = new ApiError
            {
                ErrorId = ErrorIds.InvalidRequest,
                Kind = nameof(ErrorKind.InvalidArgument),
                Message = code switch
                {
                    404 => $"The GeoDrive service has no '{what}'.",
                    405 => $"'{what}' is not a method this address takes.",
                    413 => "The request's body is larger than the GeoDrive service reads.",
                    _ => $"The request '{what}' was refused ({code}).",
                },
                Remedy = "Use the GeoDrive PowerShell module (or the GeoDrive.Api client), which sends only requests the service takes.",
            };
            await context.Response.WriteAsJsonAsync(error, GeoDriveClient.JsonOptions);
        });
        app.Use(async (context, next) =>
        {
            try
            {
                await next(context);
            }
            catch (Exception ex) when (!context.Response.HasStarted && ex is not OperationCanceledException)
            {
                var error = ex switch
                {
                    GeoDriveException g => new ApiError { ErrorId = g.ErrorId, Kind = g.Kind.ToString(), Message = g.Message, Remedy = g.Remedy },
                    BadHttpRequestException or JsonException => new ApiError
                    {
                        ErrorId = ErrorIds.InvalidRequest,
                        Kind = nameof(ErrorKind.InvalidArgument),
                        Message = "The request was not understood: " + ex.Message,
                        Remedy = "Use the GeoDrive PowerShell module (or the GeoDrive.Api client), which sends only requests the service takes.",
                    },
                    _ => new ApiError
                    {
                        ErrorId = "InternalError",
                        Kind = nameof(ErrorKind.NotSpecified),
                        Message = "The GeoDrive service failed: " + ex.Message,
                        Remedy = "See the service log for details.",
                    },
                };
                if (ex is not GeoDriveException)
                {
                    app.Logger.LogError(ex, "Request {Path} failed", context.Request.Path);
                }
                context.Response.StatusCode = StatusFor(ex is GeoDriveException ge ? ge.Kind : ErrorKind.InvalidArgument, ex is GeoDriveException || ex is BadHttpRequestException || ex is JsonException);
                await context.Response.WriteAsJsonAsync(error, GeoDriveClient.JsonOptions);
            }
        });
    }

    private static int StatusFor(ErrorKind kind, bool known) => !known ? 500 : kind switch
    {
        ErrorKind.InvalidArgument or ErrorKind.InvalidData => 400,
        ErrorKind.PermissionDenied => 403,
        ErrorKind.ObjectNotFound => 404,
        ErrorKind.ResourceExists or ErrorKind.InvalidOperation => 409,
        ErrorKind.ConnectionError or ErrorKind.ResourceUnavailable => 503,
        _ => 500,
    };

    private static string Shorten(string? text) => text is null ? "" : text.Length > 200 ? text[..200] + "…" : text;
}
