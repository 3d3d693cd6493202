using GeoDrive.Policies.Evaluation;
using GeoDrive.Policies.Loading;
using GeoDrive.Policies.Model;

namespace GeoDrive.Service.Drives;

/// <summary>Loads a drive's ordered policy files into the evaluator the engine uses.</summary>
public static class PolicySet
{
    public static PolicyEvaluator Load(IReadOnlyList<string> paths) => Read(paths).Policy;

    /// <summary>Loads the files, keeping the text each was parsed from (what the last good copy keeps).</summary>
    public static LoadedPolicy Read(IReadOnlyList<string> paths)
    {
        var files = new List<PolicyFileText>(paths.Count);
        var documents = new List<PolicyDocument>(paths.Count);
        foreach (var path in paths)
        {
            string text;
            try
            {
                text = File.ReadAllText(path);
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                // The loader's own refusal (PolicyFileNotFound, with the path) for a file that cannot be read.
                documents.Add(PolicyLoader.Load(path));
                throw;
            }
            documents.Add(PolicyLoader.Parse(text, path));
            files.Add(new PolicyFileText(path, text));
        }
        return new LoadedPolicy(new PolicyEvaluator(EffectivePolicy.Merge(documents)), files);
    }
}
