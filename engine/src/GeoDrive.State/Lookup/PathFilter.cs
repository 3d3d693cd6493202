using System.Numerics;

namespace GeoDrive.State.Lookup;

/// <summary>
/// A Bloom filter over entry paths: <see cref="MayContain"/> false is certain (the path was never added), true
/// is only likely. Sized at 16 bits per path it was made for, with 4 probes: about 0.24 % false "maybe"s at
/// that many paths, more past it (<see cref="Overfull"/> says when to build a bigger one).
/// Adds and lookups may run on any threads at once; a bit once set stays set, so nothing added is ever missed.
/// </summary>
internal sealed class PathFilter
{
    private const int BitsPerPath = 16;
    private const int Probes = 4;
    private readonly long[] _words;
    private readonly ulong _mask;
    private readonly ulong _seed;
    private long _added;

    public PathFilter(long capacity)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(capacity);
        Capacity = capacity;
        var bits = BitOperations.RoundUpToPowerOf2((ulong)Math.Max(capacity, 1_024) * BitsPerPath);
        _words = new long[bits / 64];
        _mask = bits - 1;
        // Per filter, so that no set of names chosen in advance collides in every process.
        _seed = (ulong)Random.Shared.NextInt64();
    }

    /// <summary>The number of paths it was sized for.</summary>
    public long Capacity { get; }

    /// <summary>More new paths were added than it was sized for: its "maybe"s grow common.</summary>
    public bool Overfull => Interlocked.Read(ref _added) > Capacity;

    public bool MayContain(string path)
    {
        var (h1, h2) = Hash(path);
        for (ulong i = 0; i < Probes; i++)
        {
            var bit = (h1 + i * h2) & _mask;
            if ((Volatile.Read(ref _words[bit >> 6]) & (1L << (int)(bit & 63))) == 0)
            {
                return false;
            }
        }
        return true;
    }

    public void Add(string path)
    {
        var (h1, h2) = Hash(path);
        var fresh = false;
        for (ulong i = 0; i < Probes; i++)
        {
            var bit = (h1 + i * h2) & _mask;
            var mask = 1L << (int)(bit & 63);
            fresh |= (Interlocked.Or(ref _words[bit >> 6], mask) & mask) == 0;
        }
        if (fresh)
        {
            Interlocked.Increment(ref _added);
        }
    }

    /// <summary>Two 64-bit hashes of the path's UTF-16 code units (FNV-1a, then two mixes), for double hashing.</summary>
    private (ulong, ulong) Hash(string path)
    {
        var h = 14695981039346656037UL ^ _seed;
        foreach (var c in path)
        {
            h = (h ^ c) * 1099511628211UL;
        }
        return (Mix(h), Mix(h ^ 0x9E3779B97F4A7C15UL) | 1);
    }

    private static ulong Mix(ulong z)
    {
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
        return z ^ (z >> 31);
    }
}
