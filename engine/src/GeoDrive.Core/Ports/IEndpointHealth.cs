namespace GeoDrive.Core.Ports;

/// <summary>
/// How a store's endpoints are doing, for the drive's metrics: an object store with several endpoints (round-robin,
/// failover) implements it beside <see cref="IObjectStore"/>; a store that does not reports nothing.
/// </summary>
public interface IEndpointHealth
{
    /// <summary>Each endpoint as it stands now; cheap (no request is made).</summary>
    IReadOnlyList<EndpointHealth> EndpointHealth();
}

/// <summary>
/// One endpoint: its address (scheme, host and port: never a user name or path), whether requests go to it now
/// (false while it sits out after failures, or is known to hold requests without answering), and its consecutive failures.
/// </summary>
public sealed record EndpointHealth(string Endpoint, bool Up, int Failures);
