// Linux packaging: bash scripts, systemd-analyze, Unix modes.
[assembly: System.Runtime.Versioning.SupportedOSPlatform("linux")]
