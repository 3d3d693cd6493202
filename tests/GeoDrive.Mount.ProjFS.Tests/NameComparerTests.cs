using GeoDrive.Mount.ProjFS.Naming;

namespace GeoDrive.Mount.ProjFS.Tests;

/// <summary>The managed PrjFileNameCompare: upper-case each UTF-16 unit, compare ordinally, shorter prefix first.</summary>
public sealed class NameComparerTests
{
    private static int Sign(string a, string b) => Math.Sign(ProjFsNameComparer.Instance.Compare(a, b));

    [Theory]
    [InlineData("readme.txt", "README.TXT")]
    [InlineData("Straße", "STRAßE")]        // ß has no single-unit upper case: stays ß on both sides
    [InlineData("éclair", "Éclair")]
    [InlineData("", "")]
    public void Names_that_differ_only_in_case_are_equal(string a, string b)
    {
        Assert.Equal(0, Sign(a, b));
        Assert.Equal(ProjFsNameComparer.Instance.GetHashCode(a), ProjFsNameComparer.Instance.GetHashCode(b));
    }

    [Theory]
    [InlineData("a", "b")]
    [InlineData("B", "c")]                  // case does not decide the order
    [InlineData("a.txt", "a0")]             // '.' (0x2E) before digits (0x30)
    [InlineData("9", "A")]                  // digits before letters
    [InlineData("z", "_")]                  // letters compare as upper case (0x5A) and '_' is 0x5F
    [InlineData("Z", "_")]
    [InlineData("_", "~")]
    [InlineData("a b", "a-b")]              // ' ' 0x20 before '-' 0x2D
    [InlineData("file10", "file2")]         // no numeric ordering
    [InlineData("abc", "abcd")]             // a prefix sorts first
    [InlineData("zebra", "äpfel")]          // Ä (0xC4) after Z
    [InlineData("ÿ", "ž")]                  // ÿ upper-cases to Ÿ (0x178), ž to Ž (0x17D)
    public void Order_is_ordinal_over_upper_case(string first, string second)
    {
        Assert.Equal(-1, Sign(first, second));
        Assert.Equal(1, Sign(second, first));
    }

    [Fact]
    public void A_listing_sorts_as_ProjFS_sorts()
    {
        string[] names = ["b.txt", "_cache", "A.txt", "a_b", "a.b", "10.log", "2.log", "Zeta", "été", "ab"];

        var sorted = names.Order(ProjFsNameComparer.Instance).ToArray();

        Assert.Equal(["10.log", "2.log", "a.b", "A.txt", "ab", "a_b", "b.txt", "Zeta", "_cache", "été"], sorted);
    }

    [Fact]
    public void Surrogate_pairs_are_compared_unit_by_unit()
    {
        // NTFS compares UTF-16 units, not code points: U+1F600 (D83D DE00) sorts before U+FFFD.
        Assert.Equal(-1, Sign("\U0001F600", "\uFFFD"));
        Assert.Equal(0, Sign("\U0001F600", "\U0001F600"));
    }

    [Fact]
    public void Null_sorts_first()
    {
        Assert.Equal(-1, ProjFsNameComparer.Instance.Compare(null, "a"));
        Assert.Equal(1, ProjFsNameComparer.Instance.Compare("a", null));
    }
}
