namespace GeoDrive.Policies.Loading;

/// <summary>"Did you mean …?" for misspelt keys and values, by edit distance.</summary>
internal static class KeySuggestion
{
    /// <summary>The closest candidate, if it is close enough to be a likely typo; else null.</summary>
    public static string? Closest(string word, IEnumerable<string> candidates)
    {
        string? best = null;
        var bestDistance = int.MaxValue;
        foreach (var candidate in candidates)
        {
            var distance = Distance(word.ToLowerInvariant(), candidate.ToLowerInvariant());
            if (distance < bestDistance)
            {
                (best, bestDistance) = (candidate, distance);
            }
        }
        // One edit for short words, two for longer ones: further than that the "suggestion" is a guess.
        var allowed = word.Length <= 4 ? 1 : word.Length <= 12 ? 2 : 3;
        return bestDistance <= allowed ? best : null;
    }

    /// <summary>Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours.</summary>
    public static int Distance(string a, string b)
    {
        var d = new int[a.Length + 1, b.Length + 1];
        for (var i = 0; i <= a.Length; i++)
        {
            d[i, 0] = i;
        }
        for (var j = 0; j <= b.Length; j++)
        {
            d[0, j] = j;
        }
        for (var i = 1; i <= a.Length; i++)
        {
            for (var j = 1; j <= b.Length; j++)
            {
                var cost = a[i - 1] == b[j - 1] ? 0 : 1;
                d[i, j] = Math.Min(Math.Min(d[i - 1, j] + 1, d[i, j - 1] + 1), d[i - 1, j - 1] + cost);
                if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                {
                    d[i, j] = Math.Min(d[i, j], d[i - 2, j - 2] + 1);
                }
            }
        }
        return d[a.Length, b.Length];
    }
}
