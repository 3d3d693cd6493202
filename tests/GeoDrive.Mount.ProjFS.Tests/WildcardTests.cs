using GeoDrive.Mount.ProjFS.Naming;

namespace GeoDrive.Mount.ProjFS.Tests;

/// <summary>Search expressions as PrjFileNameMatch applies them.</summary>
public sealed class WildcardTests
{
    [Theory]
    [InlineData("report.pdf", null)]
    [InlineData("report.pdf", "")]
    [InlineData("report.pdf", "*")]
    [InlineData("report.pdf", "*.pdf")]
    [InlineData("REPORT.PDF", "*.pdf")]
    [InlineData("report.pdf", "rep?rt.*")]
    [InlineData("report.pdf", "Report.PDF")]
    [InlineData("a.b.c", "*.c")]
    [InlineData("noext", "<")]               // DOS_STAR: the whole name when there is no dot
    [InlineData("a.b.txt", "<.txt")]         // DOS_STAR stops at the last dot
    [InlineData("abc.txt", "<\"txt")]        // "*.txt" as Win32 rewrites it: <"txt ... DOS_DOT matches the dot
    [InlineData("abc", "<\"*")]              // "*.*" as rewritten matches names without a dot too
    [InlineData("ab", "ab>")]                // DOS_QM matches nothing at the end
    [InlineData("ab.txt", "ab>.txt")]        // and nothing before a dot
    [InlineData("abc.txt", "ab>.txt")]
    [InlineData("été.doc", "ÉTÉ.*")]
    public void Matches(string name, string? expression) => Assert.True(ProjFsWildcard.IsMatch(name, expression));

    [Theory]
    [InlineData("report.pdf", "*.doc")]
    [InlineData("report.pdf", "report")]
    [InlineData("report.pdf", "rep??rt.pdf")]
    [InlineData("a.b.txt", "<txt")]          // DOS_STAR may not swallow the last dot
    [InlineData("abcd.txt", "ab>.txt")]      // DOS_QM is at most one character
    [InlineData("abc", "abc\"x")]
    [InlineData("", "?")]
    public void Does_not_match(string name, string expression) => Assert.False(ProjFsWildcard.IsMatch(name, expression));

    [Theory]
    [InlineData("*.txt", true)]
    [InlineData("a?c", true)]
    [InlineData("<\"txt", true)]
    [InlineData("plain.txt", false)]
    [InlineData(null, false)]
    public void Knows_which_expressions_have_wildcards(string? expression, bool expected) =>
        Assert.Equal(expected, ProjFsWildcard.HasWildcards(expression));

    [Fact]
    public void A_long_pattern_of_stars_is_answered_quickly()
    {
        var name = new string('a', 200) + "b";
        var pattern = string.Concat(Enumerable.Repeat("*a", 40)) + "*c";
        Assert.False(ProjFsWildcard.IsMatch(name, pattern));
    }
}
