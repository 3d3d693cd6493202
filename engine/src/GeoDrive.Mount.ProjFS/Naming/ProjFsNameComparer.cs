namespace GeoDrive.Mount.ProjFS.Naming;

/// <summary>
/// The order ProjFS sorts names in (PrjFileNameCompare), in managed code so enumeration paging is
/// testable anywhere. The rule, as NTFS and RtlCompareUnicodeString(CaseInSensitive) apply it:
/// each UTF-16 code unit is mapped to upper case (the invariant simple mapping, one unit at a time,
/// so surrogates stay as they are), the mapped units are compared as unsigned numbers, and a name
/// that is a prefix of the other sorts first. Consequences: "a" equals "A"; '.' (0x2E) sorts before
/// digits (0x30–0x39), digits before letters, and '_' (0x5F) after every letter because letters
/// compare as upper case (0x41–0x5A); "ä" sorts after "z" (0xC4 &gt; 0x5A); no numeric ("2" &lt; "10")
/// or culture-aware ordering. NTFS's own upcase table (written at format time) can differ from
/// .NET's for a handful of rarely used characters; docs/windows.md lists that as a known limit.
/// </summary>
public sealed class ProjFsNameComparer : IComparer<string>, IEqualityComparer<string>
{
    public static readonly ProjFsNameComparer Instance = new();

    private ProjFsNameComparer()
    {
    }

    public int Compare(string? x, string? y)
    {
        if (ReferenceEquals(x, y))
        {
            return 0;
        }
        if (x is null)
        {
            return -1;
        }
        if (y is null)
        {
            return 1;
        }
        var length = Math.Min(x.Length, y.Length);
        for (var i = 0; i < length; i++)
        {
            var a = char.ToUpperInvariant(x[i]);
            var b = char.ToUpperInvariant(y[i]);
            if (a != b)
            {
                return a < b ? -1 : 1;
            }
        }
        return x.Length.CompareTo(y.Length);
    }

    public bool Equals(string? x, string? y) => Compare(x, y) == 0;

    public int GetHashCode(string obj)
    {
        var hash = new HashCode();
        foreach (var c in obj)
        {
            hash.Add(char.ToUpperInvariant(c));
        }
        return hash.ToHashCode();
    }
}
