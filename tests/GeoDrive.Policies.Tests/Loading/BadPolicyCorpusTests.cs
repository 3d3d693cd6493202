using GeoDrive.Policies.Loading;

namespace GeoDrive.Policies.Tests.Loading;

/// <summary>
/// Every file in tests/fixtures/policies/bad is refused with the error id, place and message fragment its
/// sibling '.expected' file names ("PolicyUnknownKey 6:5 did you mean 'accessWait'?").
/// </summary>
public sealed class BadPolicyCorpusTests
{
    public static TheoryData<string> BadFiles()
    {
        var data = new TheoryData<string>();
        foreach (var file in Directory.GetFiles(RepoFiles.Fixture("bad"), "*.yaml").Order(StringComparer.Ordinal))
        {
            data.Add(Path.GetFileNameWithoutExtension(file));
        }
        return data;
    }

    [Fact]
    public void The_corpus_has_at_least_thirty_bad_files_each_expecting_an_id_a_place_and_a_message()
    {
        var files = Directory.GetFiles(RepoFiles.Fixture("bad"), "*.yaml");
        Assert.True(files.Length >= 30, $"only {files.Length} bad policy files");
        Assert.All(files, f => Assert.True(File.Exists(Path.ChangeExtension(f, ".expected")), $"{f} has no .expected file"));
        Assert.All(files, f => Assert.True(File.ReadAllText(Path.ChangeExtension(f, ".expected")).Trim().Split(' ', 3) is [_, _, { Length: > 0 }],
            $"{Path.ChangeExtension(f, ".expected")} names no message fragment"));
    }

    [Theory]
    [MemberData(nameof(BadFiles))]
    public void A_bad_file_is_refused_with_the_expected_id_line_column_and_message(string name)
    {
        var path = RepoFiles.Fixture("bad", name + ".yaml");
        var expected = File.ReadAllText(Path.ChangeExtension(path, ".expected")).Trim().Split(' ', 3);
        var (id, place) = (expected[0], expected[1].Split(':'));
        var fragment = expected.Length > 2 ? expected[2] : "";

        var ex = Assert.Throws<PolicyException>(() => PolicyLoader.Load(path));

        Assert.Equal((id, int.Parse(place[0], CultureInfo.InvariantCulture), int.Parse(place[1], CultureInfo.InvariantCulture)), (ex.ErrorId, ex.Line, ex.Column));
        Assert.Equal(path, ex.File);
        Assert.StartsWith($"{path}:{ex.Line}:{ex.Column}: ", ex.Message, StringComparison.Ordinal);
        Assert.False(string.IsNullOrWhiteSpace(ex.Remedy));
        Assert.Contains(fragment, ex.Problems[0].Message, StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(BadFiles))]
    public void Validate_reports_the_same_first_problem_without_throwing(string name)
    {
        var path = RepoFiles.Fixture("bad", name + ".yaml");
        var problems = PolicyLoader.Validate(path);
        var ex = Assert.Throws<PolicyException>(() => PolicyLoader.Load(path));

        Assert.NotEmpty(problems);
        Assert.Equal(problems, ex.Problems);
        Assert.Equal(ex.ErrorId, problems[0].ErrorId);
    }
}
