using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;

namespace GeoDrive.Mount.ProjFS.Projection;

/// <summary>
/// What the mount asks before and after it fills a stub with data (hydration). On Linux the engine
/// recalls into the cache file inside OpenAsync; under ProjFS the data must arrive through
/// PrjWriteFileData instead (a write to a placeholder by anyone, the provider included, would wait for
/// its own hydration), so the mount asks the process rule here and fetches the bytes itself.
/// </summary>
public interface IHydrationGate
{
    /// <summary>The caller's process rule for a recall: Local (hydrate), Stream (hydrate for this open, dehydrate at its close) or Deny.</summary>
    ValueTask<OpenDecision> DecideRecallAsync(string path, Caller caller, CancellationToken cancellationToken = default);

    /// <summary>The stub's data is all local now (state Cached, as after a recall).</summary>
    void Hydrated(string path, Caller caller);
}
