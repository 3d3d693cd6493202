using GeoDrive.Policies.Loading;

namespace GeoDrive.Policies.Tests.Loading;

/// <summary>Rules of one file that give the very same pattern opposite answers are refused; overlapping patterns are not.</summary>
public sealed class ContradictoryRuleTests
{
    private static IReadOnlyList<PolicyProblem> Validate(string rules) => PolicyLoader.ValidateText($"""
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: {"{"} name: rules {"}"}
        spec:
          stubbing:
            rules:
        {rules}
        """, "rules.yaml");

    [Fact]
    public void Pinning_and_unpinning_the_same_pattern_is_refused_at_the_later_rule()
    {
        var problem = Assert.Single(Validate("""
                  - { paths: [ "Active/**" ], pin: true }
                  - { paths: [ "active/**" ], pin: false }
            """));
        Assert.Equal(("PolicyBadValue", 8), (problem.ErrorId, problem.Line));
        Assert.Contains("pinned at line 7", problem.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Two_access_waits_for_the_same_pattern_are_refused()
    {
        var problem = Assert.Single(Validate("""
                  - { paths: [ "**/*.iso" ], accessWait: 1d }
                  - { paths: [ "**/*.iso" ], accessWait: 2d }
            """));
        Assert.Contains("accessWait 2d here but 1d at line 7", problem.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_narrower_pattern_may_unpin_part_of_a_pinned_folder() =>
        Assert.Empty(Validate("""
                  - { paths: [ "Active/**" ], pin: true }
                  - { paths: [ "Active/Old/**" ], pin: false }
            """));

    [Fact]
    public void Saying_the_same_thing_twice_is_harmless() =>
        Assert.Empty(Validate("""
                  - { paths: [ "Active/**" ], pin: true }
                  - { paths: [ "Active/**", "Board/**" ], pin: true }
            """));
}
