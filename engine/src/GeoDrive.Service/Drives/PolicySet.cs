using GeoDrive.Policies.Evaluation;
using GeoDrive.Policies.Loading;
using GeoDrive.Policies.Model;

namespace GeoDrive.Service.Drives;

/// <summary>Loads a drive's ordered policy files into the evaluator the engine uses.</summary>
public static class PolicySet
{
    public static PolicyEvaluator Load(IReadOnlyList<string> paths)
    {
        var documents = paths.Select(PolicyLoader.Load).ToList();
        return new PolicyEvaluator(EffectivePolicy.Merge(documents));
    }
}
