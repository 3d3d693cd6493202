using System.Management.Automation;

namespace GeoDrive.Module.Tests;

/// <summary>Assertions on a cmdlet's public contract: what scripts and pipelines rely on.</summary>
internal static class Contract
{
    public const string AllSets = "__AllParameterSets";

    public static ParameterSetMetadata Parameter(CmdletInfo cmdlet, string parameter, string set = AllSets)
    {
        Assert.True(cmdlet.Parameters.TryGetValue(parameter, out var metadata), $"{cmdlet.Name} has no -{parameter}");
        Assert.True(metadata!.ParameterSets.TryGetValue(set, out var inSet), $"{cmdlet.Name} -{parameter} is not in the parameter set '{set}'");
        return inSet!;
    }

    public static void Mandatory(CmdletInfo cmdlet, string parameter, bool mandatory, string set = AllSets) =>
        Assert.True(Parameter(cmdlet, parameter, set).IsMandatory == mandatory, $"{cmdlet.Name} -{parameter} mandatory should be {mandatory}");

    public static void ByPropertyName(CmdletInfo cmdlet, string parameter, string set = AllSets) =>
        Assert.True(Parameter(cmdlet, parameter, set).ValueFromPipelineByPropertyName, $"{cmdlet.Name} -{parameter} should bind by property name");

    public static void Type(CmdletInfo cmdlet, string parameter, Type type) =>
        Assert.Equal(type, cmdlet.Parameters[parameter].ParameterType);

    public static void Alias(CmdletInfo cmdlet, string parameter, string alias) =>
        Assert.Contains(alias, cmdlet.Parameters[parameter].Aliases);

    public static void Wildcards(CmdletInfo cmdlet, string parameter) =>
        Assert.Contains(cmdlet.Parameters[parameter].Attributes, a => a is SupportsWildcardsAttribute);

    public static void CompletesDriveNames(CmdletInfo cmdlet, string parameter) =>
        Assert.Contains(cmdlet.Parameters[parameter].Attributes,
            a => a is ArgumentCompleterAttribute { Type.FullName: "GeoDrive.Commands.DriveNameCompleter" });

    public static void ShouldProcess(CmdletInfo cmdlet, ConfirmImpact impact)
    {
        var attribute = Attribute(cmdlet);
        Assert.True(attribute.SupportsShouldProcess, $"{cmdlet.Name} should support -WhatIf/-Confirm");
        Assert.Equal(impact, attribute.ConfirmImpact);
    }

    public static void NoShouldProcess(CmdletInfo cmdlet) => Assert.False(Attribute(cmdlet).SupportsShouldProcess);

    public static void Outputs(CmdletInfo cmdlet, string typeName) =>
        Assert.Contains(cmdlet.OutputType, t => t.Name == typeName);

    public static void Parameters(CmdletInfo cmdlet, params string[] expected) =>
        Assert.Equal(
            expected.Order(StringComparer.Ordinal),
            cmdlet.Parameters.Keys.Where(k => !IsCommon(k)).Order(StringComparer.Ordinal));

    private static CmdletAttribute Attribute(CmdletInfo cmdlet) =>
        (CmdletAttribute)System.Attribute.GetCustomAttribute(cmdlet.ImplementingType, typeof(CmdletAttribute))!;

    private static bool IsCommon(string name) =>
        System.Management.Automation.Cmdlet.CommonParameters.Contains(name) || System.Management.Automation.Cmdlet.OptionalCommonParameters.Contains(name);
}
