using System.Diagnostics.CodeAnalysis;
using System.Globalization;

namespace GeoDrive.Policies.Model;

/// <summary>
/// A five-field cron expression ("minute hour day-of-month month day-of-week"), as administrators know it
/// from crontab: '*', lists '1,15', ranges '1-5', steps '*/15' and '8-18/2', month names JAN..DEC,
/// day names SUN..SAT, 0 and 7 both Sunday. When both day fields are restricted, either may match (crontab's rule).
/// The macros @yearly (@annually), @monthly, @weekly, @daily (@midnight) and @hourly stand for their five fields.
/// </summary>
public sealed class CronSchedule
{
    private static readonly string[] FieldNames = ["minute", "hour", "day of month", "month", "day of week"];
    private static readonly (int Min, int Max)[] Ranges = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)];
    private static readonly string[] MonthNames = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
    private static readonly string[] DayNames = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

    private readonly bool[][] _allowed;
    private readonly bool _dayOfMonthRestricted;
    private readonly bool _dayOfWeekRestricted;

    private CronSchedule(string expression, bool[][] allowed, bool dayOfMonthRestricted, bool dayOfWeekRestricted)
    {
        Expression = expression;
        _allowed = allowed;
        _dayOfMonthRestricted = dayOfMonthRestricted;
        _dayOfWeekRestricted = dayOfWeekRestricted;
    }

    public string Expression { get; }

    private static readonly Dictionary<string, string> Macros = new(StringComparer.OrdinalIgnoreCase)
    {
        ["@yearly"] = "0 0 1 1 *",
        ["@annually"] = "0 0 1 1 *",
        ["@monthly"] = "0 0 1 * *",
        ["@weekly"] = "0 0 * * 0",
        ["@daily"] = "0 0 * * *",
        ["@midnight"] = "0 0 * * *",
        ["@hourly"] = "0 * * * *",
    };

    public static CronSchedule Parse(string expression) =>
        TryParse(expression, out var schedule, out var error)
            ? schedule
            : throw new FormatException($"The schedule '{expression}' is not valid: {error}.");

    public static bool TryParse(string expression, [NotNullWhen(true)] out CronSchedule? schedule, [NotNullWhen(false)] out string? error)
    {
        ArgumentNullException.ThrowIfNull(expression);
        schedule = null;
        var trimmed = expression.Trim();
        if (trimmed.StartsWith('@'))
        {
            if (!Macros.TryGetValue(trimmed, out var fiveFields))
            {
                error = $"'{trimmed}' is not a known macro (use @yearly, @monthly, @weekly, @daily or @hourly, or five fields: minute hour day-of-month month day-of-week)";
                return false;
            }
            var ok = TryParse(fiveFields, out schedule, out error);
            schedule = ok ? new CronSchedule(trimmed, schedule!._allowed, schedule._dayOfMonthRestricted, schedule._dayOfWeekRestricted) : null;
            return ok;
        }
        var fields = expression.Split(' ', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        if (fields.Length != 5)
        {
            error = $"it has {fields.Length} field(s) but cron needs 5: minute hour day-of-month month day-of-week (e.g. \"0 6 * * 1-5\")";
            return false;
        }
        var allowed = new bool[5][];
        for (var f = 0; f < 5; f++)
        {
            if (!TryParseField(fields[f], f, out allowed[f], out error))
            {
                return false;
            }
        }
        if (allowed[4][7])
        {
            allowed[4][0] = true; // 7 is Sunday too
        }
        schedule = new CronSchedule(expression.Trim(), allowed, fields[2] != "*", fields[4] != "*");
        error = null;
        return true;
    }

    /// <summary>Whether the schedule fires in the minute that contains <paramref name="time"/>.</summary>
    public bool Matches(DateTime time)
    {
        if (!_allowed[0][time.Minute] || !_allowed[1][time.Hour] || !_allowed[3][time.Month])
        {
            return false;
        }
        return DayMatches(time);
    }

    /// <summary>The first minute strictly after <paramref name="after"/> at which the schedule fires, or null within five years.</summary>
    public DateTime? NextAfter(DateTime after)
    {
        var t = new DateTime(after.Year, after.Month, after.Day, after.Hour, after.Minute, 0, after.Kind).AddMinutes(1);
        var limit = t.AddYears(5); // "0 0 30 2 *" never fires; do not loop for ever
        while (t < limit)
        {
            if (!_allowed[3][t.Month])
            {
                t = new DateTime(t.Year, t.Month, 1, 0, 0, 0, t.Kind).AddMonths(1);
                continue;
            }
            if (!DayMatches(t))
            {
                t = t.Date.AddDays(1);
                continue;
            }
            if (!_allowed[1][t.Hour])
            {
                t = new DateTime(t.Year, t.Month, t.Day, t.Hour, 0, 0, t.Kind).AddHours(1);
                continue;
            }
            if (_allowed[0][t.Minute])
            {
                return t;
            }
            t = t.AddMinutes(1);
        }
        return null;
    }

    /// <summary>
    /// The first firing strictly after <paramref name="afterUtc"/>, with the schedule read as wall-clock
    /// time in <paramref name="zone"/>. A time skipped by a daylight-saving change does not fire; a time that
    /// occurs twice fires at its first occurrence only.
    /// </summary>
    public DateTimeOffset? NextUtcAfter(DateTimeOffset afterUtc, TimeZoneInfo zone)
    {
        ArgumentNullException.ThrowIfNull(zone);
        var local = TimeZoneInfo.ConvertTime(afterUtc, zone).DateTime;
        for (var guard = 0; guard < 1000; guard++)
        {
            if (NextAfter(DateTime.SpecifyKind(local, DateTimeKind.Unspecified)) is not { } next)
            {
                return null;
            }
            local = next;
            if (zone.IsInvalidTime(next))
            {
                continue;
            }
            var offset = zone.IsAmbiguousTime(next) ? zone.GetAmbiguousTimeOffsets(next).Max() : zone.GetUtcOffset(next);
            var utc = new DateTimeOffset(next, offset).ToUniversalTime();
            if (utc > afterUtc)
            {
                return utc;
            }
        }
        return null;
    }

    public override string ToString() => Expression;

    private bool DayMatches(DateTime t)
    {
        var dom = _allowed[2][t.Day];
        var dow = _allowed[4][(int)t.DayOfWeek];
        return _dayOfMonthRestricted && _dayOfWeekRestricted ? dom || dow
            : _dayOfMonthRestricted ? dom
            : !_dayOfWeekRestricted || dow;
    }

    private static bool TryParseField(string text, int field, out bool[] allowed, [NotNullWhen(false)] out string? error)
    {
        var (min, max) = Ranges[field];
        allowed = new bool[max + 1];
        foreach (var item in text.Split(','))
        {
            var rangePart = item;
            var step = 1;
            var slash = item.IndexOf('/', StringComparison.Ordinal);
            if (slash >= 0)
            {
                rangePart = item[..slash];
                if (!int.TryParse(item[(slash + 1)..], NumberStyles.None, CultureInfo.InvariantCulture, out step) || step < 1)
                {
                    error = $"the step in '{item}' ({FieldNames[field]}) must be a whole number above 0";
                    return false;
                }
            }
            int from, to;
            if (rangePart == "*")
            {
                (from, to) = (min, max);
            }
            else
            {
                var dash = rangePart.IndexOf('-', StringComparison.Ordinal);
                var firstText = dash >= 0 ? rangePart[..dash] : rangePart;
                if (!TryValue(firstText, field, out from, out error))
                {
                    return false;
                }
                to = slash >= 0 && dash < 0 ? max : from; // "5/15" means from 5 to the end, every 15
                if (dash >= 0 && !TryValue(rangePart[(dash + 1)..], field, out to, out error))
                {
                    return false;
                }
                if (to < from)
                {
                    error = $"the range '{rangePart}' ({FieldNames[field]}) runs backwards";
                    return false;
                }
            }
            for (var v = from; v <= to; v += step)
            {
                allowed[v] = true;
            }
        }
        error = null;
        return true;
    }

    private static bool TryValue(string text, int field, out int value, [NotNullWhen(false)] out string? error)
    {
        var (min, max) = Ranges[field];
        var names = field == 3 ? MonthNames : field == 4 ? DayNames : null;
        if (names is not null)
        {
            var index = Array.FindIndex(names, n => n.Equals(text, StringComparison.OrdinalIgnoreCase));
            if (index >= 0)
            {
                value = field == 3 ? index + 1 : index;
                error = null;
                return true;
            }
        }
        if (!int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out value) || value < min || value > max)
        {
            error = $"'{text}' is not a valid {FieldNames[field]} (expected {min}-{max}{(names is null ? "" : " or a name such as " + names[1])})";
            return false;
        }
        error = null;
        return true;
    }
}
