using GeoDrive.Policies.Globs;

namespace GeoDrive.Policies.Tests.Globs;

public sealed class GlobTests
{
    // pattern, path, path is a folder, does the pattern name the path itself (IsMatch)
    public static TheoryData<string, string, bool, bool> Matches() => new()
    {
        // A pattern without '/' matches a name at any depth.
        { "Thumbs.db", "Thumbs.db", false, true },
        { "Thumbs.db", "Photos/2024/Thumbs.db", false, true },
        { "Thumbs.db", "Photos/Thumbs.db.bak", false, false },
        { "*.tmp", "a.tmp", false, true },
        { "*.tmp", "deep/down/here/x.tmp", false, true },
        { "*.tmp", "x.tmp/inside.txt", false, false },
        { "~$*", "Reports/~$Budget.xlsx", false, true },
        { "~$*", "Reports/Budget.xlsx", false, false },
        // Case-insensitive by default.
        { "thumbs.DB", "Photos/THUMBS.db", false, true },
        { "Active/**", "ACTIVE/x.txt", false, true },
        // With a '/', a pattern is anchored at the drive root.
        { "Active/*.txt", "Active/a.txt", false, true },
        { "Active/*.txt", "Old/Active/a.txt", false, false },
        { "Active/*.txt", "Active/sub/a.txt", false, false },
        { "/Active/*.txt", "Active/a.txt", false, true },
        // '*' stays within one segment; '**' spans any number of segments, zero included.
        { "Active/**", "Active/a.txt", false, true },
        { "Active/**", "Active/x/y/z.txt", false, true },
        { "Active/**", "Active", true, true },
        { "Active/**", "Inactive/a.txt", false, false },
        { "**/*.iso", "a.iso", false, true },
        { "**/*.iso", "x/y/a.iso", false, true },
        { "**/*.iso", "x/y/a.iso.txt", false, false },
        { "a/**/b", "a/b", false, true },
        { "a/**/b", "a/x/y/b", false, true },
        { "a/**/b", "a/x/y/c", false, false },
        { "a/**/**/b", "a/x/b", false, true },
        { "**", "anything/at/all", false, true },
        { "**/Thumbs.db", "Thumbs.db", false, true },
        { "*", "top.txt", false, true },
        { "*/x", "a/x", false, true },
        { "*/x", "a/b/x", false, false },
        // '?', classes, alternation.
        { "report-?.pdf", "report-1.pdf", false, true },
        { "report-?.pdf", "report-12.pdf", false, false },
        { "Media/[0-9][0-9]/*", "Media/24/a.mov", false, true },
        { "Media/[0-9][0-9]/*", "Media/2x/a.mov", false, false },
        { "[!.]*", "visible.txt", false, true },
        { "[!.]*", ".hidden", false, false },
        { "[^.]*", ".hidden", false, false },
        { "Report [[]final].pdf", "Report [final].pdf", false, true },
        { "a[*]b", "a*b", false, true },
        { "a[*]b", "axb", false, false },
        { "**/*.{iso,img}", "x/a.img", false, true },
        { "**/*.{iso,img}", "x/a.iso", false, true },
        { "**/*.{iso,img}", "x/a.vhd", false, false },
        { "{Active,Current}/**", "Current/a", false, true },
        { "*.{tar.{gz,xz},zip}", "b.tar.xz", false, true },
        { "*.{tar.{gz,xz},zip}", "b.tar.bz2", false, false },
        // Regex characters in a pattern are literal.
        { "a+b (1).txt", "a+b (1).txt", false, true },
        { "a.b", "axb", false, false },
        // A trailing '/' means a folder: never a file of that name.
        { "Scratch/", "Scratch", true, true },
        { "Scratch/", "Scratch", false, false },
        { "Build/", "src/Build", true, false },
        { "**/Build/", "src/Build", true, true },
    };

    [Theory]
    [MemberData(nameof(Matches))]
    public void A_pattern_names_exactly_the_paths_the_format_says(string pattern, string path, bool isDirectory, bool expected) =>
        Assert.Equal(expected, Glob.Parse(pattern).IsMatch(path, isDirectory));

    // pattern, path, applies (the path or one of the folders it is in is named)
    public static TheoryData<string, string, bool> AppliesTo() => new()
    {
        { "Scratch/", "Scratch/a.txt", true },
        { "Scratch/", "Scratch/deep/down/a.txt", true },
        { "Scratch/", "Scratchpad/a.txt", false },
        { "Scratch/", "Other/Scratch/a.txt", false },
        { "**/Scratch/", "Other/Scratch/a.txt", true },
        { "node_modules", "web/node_modules/lodash/index.js", true },
        { "Projects/*", "Projects/Alpha/plan.docx", true },
        { "Projects/*", "Projects", false },
        { "*.tmp", "build.tmp/out.bin", true },
        { "Active/**", "Active/x.txt", true },
    };

    [Theory]
    [MemberData(nameof(AppliesTo))]
    public void A_pattern_that_names_a_folder_applies_to_everything_under_it(string pattern, string path, bool expected) =>
        Assert.Equal(expected, Glob.Parse(pattern).AppliesTo(path));

    public static TheoryData<string, string> BadPatterns() => new()
    {
        { "Reports/[2024.pdf", "never closed with ']'" },
        { "**/*.{iso,img", "never closed with '}'" },
        { "a}b", "has no '{'" },
        { "{a/b,c}", "contains '/'" },
        { "a/[x/y]", "contains '/'" },
        { "", "empty" },
        { "  ", "empty" },
        { "/", "names no path" },
        { "a//b", "empty folder name" },
        { "../secrets", "'..'" },
        { "a/./b", "'.'" },
        { "Active\\**", "'\\'" },
        { "[z-a]", "not valid" },
    };

    [Theory]
    [MemberData(nameof(BadPatterns))]
    public void A_bad_pattern_is_refused_with_the_reason(string pattern, string reason)
    {
        Assert.False(Glob.TryParse(pattern, out var glob, out var error));
        Assert.Null(glob);
        Assert.Contains(reason, error, StringComparison.Ordinal);
        var ex = Assert.Throws<FormatException>(() => Glob.Parse(pattern));
        Assert.Contains(reason, ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Matching_can_be_made_case_sensitive()
    {
        var glob = Glob.Parse("Active/**", caseSensitive: true);
        Assert.True(glob.IsMatch("Active/a"));
        Assert.False(glob.IsMatch("active/a"));
    }

    [Fact]
    public void A_pattern_reports_its_shape()
    {
        Assert.True(Glob.Parse("Thumbs.db").MatchesAnyDepth);
        Assert.False(Glob.Parse("Scratch/").MatchesAnyDepth);
        Assert.True(Glob.Parse("Scratch/").IsFolderPattern);
        Assert.False(Glob.Parse("Scratch/**").IsFolderPattern);
        Assert.Equal("**/*.iso", Glob.Parse("**/*.iso").ToString());
    }

    [Fact]
    public void Leading_or_trailing_slashes_in_a_path_are_forgiven()
    {
        Assert.True(Glob.Parse("Active/*.txt").IsMatch("/Active/a.txt"));
        Assert.True(Glob.Parse("Scratch/").AppliesTo("/Scratch/a.txt"));
    }
}
