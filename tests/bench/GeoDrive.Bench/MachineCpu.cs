using System.Globalization;

namespace GeoDrive.Bench;

/// <summary>
/// CPU time of the whole machine and of the S3 server (Ceph's radosgw, ceph-osd and ceph-mon), read from
/// /proc, so each run says what it cost the host: on a machine whose cores are shared with the S3 server,
/// a client's rate is about the cores divided by the CPU that all parts spend per file.
/// </summary>
internal static class MachineCpu
{
    private const double TicksPerSecond = 100; // USER_HZ on Linux
    private static readonly string[] ServerProcesses = ["radosgw", "ceph-osd", "ceph-mon"];

    /// <summary>Busy CPU seconds of every core since boot (user, nice, system, irq, softirq, steal).</summary>
    public static double BusySeconds()
    {
        var f = File.ReadLines("/proc/stat").First().Split(' ', StringSplitOptions.RemoveEmptyEntries);
        long Field(int i) => long.Parse(f[i], CultureInfo.InvariantCulture);
        return (Field(1) + Field(2) + Field(3) + Field(6) + Field(7) + Field(8)) / TicksPerSecond;
    }

    /// <summary>CPU seconds the S3 server's processes have used since they started (0 when it is not Ceph).</summary>
    public static double ServerSeconds()
    {
        double total = 0;
        foreach (var dir in Directory.EnumerateDirectories("/proc"))
        {
            try
            {
                if (!char.IsAsciiDigit(Path.GetFileName(dir)[0]) || !ServerProcesses.Contains(File.ReadAllText(Path.Combine(dir, "comm")).Trim()))
                {
                    continue;
                }
                // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are the 12th and 13th.
                var stat = File.ReadAllText(Path.Combine(dir, "stat"));
                var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
                total += (long.Parse(fields[11], CultureInfo.InvariantCulture) + long.Parse(fields[12], CultureInfo.InvariantCulture)) / TicksPerSecond;
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                // The process ended while it was being read.
            }
        }
        return total;
    }
}
