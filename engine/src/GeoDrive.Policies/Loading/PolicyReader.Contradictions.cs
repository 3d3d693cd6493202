using GeoDrive.Core.Errors;
using GeoDrive.Policies.Model;

namespace GeoDrive.Policies.Loading;

// Contradictions between rules of one file that make an earlier rule dead for the very same pattern.
internal sealed partial class PolicyReader
{
    // Two stubbing rules of one file that give the very same pattern opposite pins, or two different
    // access waits: the later always wins, so the earlier can never apply and was almost surely not meant.
    // (Different patterns that overlap are fine: that is how a later, narrower rule refines a broader one.)
    private void CheckContradictoryStubbingRules(StubbingSettings stubbing)
    {
        var pins = new Dictionary<string, (bool Pin, PathPattern At)>(StringComparer.OrdinalIgnoreCase);
        var waits = new Dictionary<string, (TimeSpan Wait, PathPattern At)>(StringComparer.OrdinalIgnoreCase);
        foreach (var rule in stubbing.Rules)
        {
            foreach (var pattern in rule.Paths)
            {
                var key = pattern.Pattern.Trim('/');
                if (rule.Pin is { } pin)
                {
                    if (pins.TryGetValue(key, out var earlier) && earlier.Pin != pin.Value)
                    {
                        Report(ErrorIds.PolicyBadValue, pattern.Origin.Line, pattern.Origin.Column,
                            $"the pattern '{pattern.Pattern}' is {(pin.Value ? "pinned" : "unpinned")} here but {(earlier.Pin ? "pinned" : "unpinned")} at line {earlier.At.Origin.Line}; the later rule always wins, so the earlier one could never apply",
                            "Keep one of the two rules; to unpin part of a pinned folder, name that part with its own pattern.");
                    }
                    pins[key] = (pin.Value, pattern);
                }
                if (rule.AccessWait is { } wait)
                {
                    if (waits.TryGetValue(key, out var earlier) && earlier.Wait != wait.Value)
                    {
                        Report(ErrorIds.PolicyBadValue, pattern.Origin.Line, pattern.Origin.Column,
                            $"the pattern '{pattern.Pattern}' gets accessWait {PolicyUnits.FormatDuration(wait.Value)} here but {PolicyUnits.FormatDuration(earlier.Wait)} at line {earlier.At.Origin.Line}; the later rule always wins, so the earlier one could never apply",
                            "Keep one access wait for the pattern.");
                    }
                    waits[key] = (wait.Value, pattern);
                }
            }
        }
    }
}
