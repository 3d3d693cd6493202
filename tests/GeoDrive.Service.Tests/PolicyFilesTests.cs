using GeoDrive.Service.Drives;

namespace GeoDrive.Service.Tests;

/// <summary>
/// Hot reload's reading of the policy files, one look per scheduler pass, on real files: a save is read once it held
/// still from one look to the next, so a save caught half-written is neither refused nor put in force.
/// </summary>
public sealed class PolicyFilesTests : IDisposable
{
    private readonly string _folder = Directory.CreateTempSubdirectory("geodrive-policy-files-").FullName;

    private string PolicyPath => Path.Combine(_folder, "policy.yaml");

    private static string Policy(string excludes) => $$"""
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: reload }
        spec:
          upload: { settle: 0s }
          excludes: {{excludes}}
        """;

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    private PolicyFiles Loaded(string yaml)
    {
        File.WriteAllText(PolicyPath, yaml);
        return new PolicyFiles([PolicyPath], PolicySet.Load([PolicyPath]));
    }

    [Fact]
    public void A_save_caught_half_written_is_not_read_and_the_whole_save_is_in_force_at_the_look_after_it_held_still()
    {
        var files = Loaded(Policy("""[ "**/*.tmp" ]"""));
        var saved = Policy("""[ "**/*.tmp", "**/*.skip" ]""");

        // Cut at a line: valid on its own, without the excludes that follow.
        File.WriteAllText(PolicyPath, saved[..saved.IndexOf("  excludes", StringComparison.Ordinal)]);
        Assert.Null(files.ReloadIfChanged());
        File.WriteAllText(PolicyPath, saved);
        Assert.Null(files.ReloadIfChanged());

        var reload = files.ReloadIfChanged();
        Assert.NotNull(reload?.Policy);
        Assert.True(files.Current.IsExcluded("a.skip", isDirectory: false));
        Assert.Null(files.ReloadIfChanged());
    }

    [Fact]
    public void A_broken_save_is_refused_once_and_the_last_good_policy_stays()
    {
        var files = Loaded(Policy("""[ "**/*.skip" ]"""));

        File.WriteAllText(PolicyPath, Policy("""[ "**/*.skip" ]""").Replace("settle", "setle", StringComparison.Ordinal));
        var looks = Enumerable.Range(0, 4).Select(_ => files.ReloadIfChanged()).ToList();

        Assert.Equal("PolicyUnknownKey", Assert.Single(looks, l => l is not null)!.Refusal?.ErrorId);
        Assert.True(files.Current.IsExcluded("a.skip", isDirectory: false));
    }
}
