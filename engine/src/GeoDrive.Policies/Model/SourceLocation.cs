namespace GeoDrive.Policies.Model;

/// <summary>Where a value was written: file, 1-based line and column. Built-in defaults have line 0.</summary>
public sealed record SourceLocation(string File, int Line, int Column)
{
    /// <summary>The origin of a value nobody wrote: GeoDrive's built-in default.</summary>
    public static SourceLocation Default { get; } = new("(default)", 0, 0);

    public bool IsDefault => Line == 0;

    public override string ToString() => IsDefault ? File : $"{File}:{Line}:{Column}";
}

/// <summary>A value from a policy together with where it was written, so every decision can be explained.</summary>
public sealed record PolicyValue<T>(T Value, SourceLocation Origin)
{
    public static implicit operator T(PolicyValue<T> value) => value.Value;

    public override string ToString() => $"{Value} ({Origin})";
}

/// <summary>Helpers to make the built-in defaults.</summary>
public static class PolicyValue
{
    public static PolicyValue<T> Default<T>(T value) => new(value, SourceLocation.Default);
}
