using Xunit.Abstractions;
using Xunit.Sdk;

namespace GeoDrive.Conformance;

/// <summary>
/// A conformance test. Like [Fact], except that it is reported as skipped, with the reason, when the
/// deriving test class carries <see cref="ConformanceRunsOnAttribute"/> for another operating system
/// (the ProjFS suite compiles everywhere and runs only on Windows).
/// </summary>
[AttributeUsage(AttributeTargets.Method)]
[XunitTestCaseDiscoverer("GeoDrive.Conformance.ConformanceFactDiscoverer", "GeoDrive.Conformance")]
public sealed class ConformanceFactAttribute : FactAttribute;

/// <summary>On a conformance class: the operating system ("windows", "linux") its front end needs, and why.</summary>
[AttributeUsage(AttributeTargets.Class)]
public sealed class ConformanceRunsOnAttribute(string operatingSystem, string reason) : Attribute
{
    public string OperatingSystem { get; } = operatingSystem;

    public string Reason { get; } = reason;
}

public sealed class ConformanceFactDiscoverer(IMessageSink diagnosticMessageSink) : IXunitTestCaseDiscoverer
{
    public IEnumerable<IXunitTestCase> Discover(ITestFrameworkDiscoveryOptions discoveryOptions, ITestMethod testMethod, IAttributeInfo factAttribute)
    {
        var display = discoveryOptions.MethodDisplayOrDefault();
        var displayOptions = discoveryOptions.MethodDisplayOptionsOrDefault();
        var runsOn = testMethod.TestClass.Class.GetCustomAttributes(typeof(ConformanceRunsOnAttribute)).FirstOrDefault();
        if (runsOn is not null)
        {
            var os = runsOn.GetConstructorArguments().First() as string ?? "";
            var reason = runsOn.GetConstructorArguments().Skip(1).First() as string ?? "";
            if (!OperatingSystem.IsOSPlatform(os))
            {
                return [new SkippedConformanceTestCase(diagnosticMessageSink, display, displayOptions, testMethod, reason)];
            }
        }
        return [new XunitTestCase(diagnosticMessageSink, display, displayOptions, testMethod)];
    }
}

/// <summary>A conformance test that cannot run on this OS: reported skipped, never run, never failed.</summary>
public sealed class SkippedConformanceTestCase : XunitTestCase
{
    private string _reason = "";

    [Obsolete("Called by the de-serializer only.", error: true)]
    public SkippedConformanceTestCase()
    {
    }

    public SkippedConformanceTestCase(IMessageSink sink, TestMethodDisplay display, TestMethodDisplayOptions displayOptions, ITestMethod testMethod, string reason)
        : base(sink, display, displayOptions, testMethod)
    {
        _reason = reason;
    }

    protected override string GetSkipReason(IAttributeInfo factAttribute) => _reason;

    public override void Serialize(IXunitSerializationInfo data)
    {
        base.Serialize(data);
        data.AddValue("Reason", _reason);
    }

    public override void Deserialize(IXunitSerializationInfo data)
    {
        _reason = data.GetValue<string>("Reason");
        base.Deserialize(data);
    }
}
