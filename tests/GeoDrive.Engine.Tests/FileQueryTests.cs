using GeoDrive.Core.Errors;
using GeoDrive.Engine.Files;

namespace GeoDrive.Engine.Tests;

/// <summary>The cmdlets' -Path patterns are the policy language's globs: what help promises, the cmdlets do.</summary>
public sealed class FileQueryTests
{
    private static readonly string[] Paths = ["dir00/a.pdf", "dir01/b.docx", "dir02/c.pdf", "dir01/deep/d.PDF", "top.pdf", "report[1].pdf"];

    private static string[] Matching(string pattern, bool literal = false)
    {
        var query = new FileQuery(pattern, literal);
        return [.. Paths.Where(query.Matches)];
    }

    [Theory]
    [InlineData("dir0{0,1}/**", new[] { "dir00/a.pdf", "dir01/b.docx", "dir01/deep/d.PDF" })]
    [InlineData("dir0[01]/**", new[] { "dir00/a.pdf", "dir01/b.docx", "dir01/deep/d.PDF" })]
    [InlineData("dir0[!0]/*", new[] { "dir01/b.docx", "dir02/c.pdf" })]
    [InlineData("*.{pdf,docx}", new[] { "dir00/a.pdf", "dir01/b.docx", "dir02/c.pdf", "dir01/deep/d.PDF", "top.pdf", "report[1].pdf" })]
    [InlineData("**/*.pdf", new[] { "dir00/a.pdf", "dir02/c.pdf", "dir01/deep/d.PDF", "top.pdf", "report[1].pdf" })]
    [InlineData("dir0?/*.pdf", new[] { "dir00/a.pdf", "dir02/c.pdf" })]
    [InlineData("top.pdf", new[] { "top.pdf" })]
    public void A_pattern_matches_what_the_policy_language_says(string pattern, string[] expected) =>
        Assert.Equal(expected, Matching(pattern));

    [Fact]
    public void A_literal_path_matches_itself_even_with_pattern_characters()
    {
        Assert.Equal(["report[1].pdf"], Matching("report[1].pdf", literal: true));
        Assert.Empty(Matching("report[1].pdf"));
    }

    [Fact]
    public void A_pattern_that_is_not_valid_is_refused_with_an_id_and_a_remedy()
    {
        var refused = Assert.Throws<GeoDriveException>(() => new FileQuery("dir[z-a]/*"));
        Assert.Equal(ErrorIds.InvalidRequest, refused.ErrorId);
        Assert.Contains("dir[z-a]/*", refused.Message);
        Assert.Contains("-LiteralPath", refused.Remedy);
    }
}
