using GeoDrive.Core.Model;
using GeoDrive.Engine.Files;
using GeoDrive.Engine.Layout;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// Properties as object metadata: what goes in comes back, what is over S3's limit is named, and whatever a hostile or
/// damaged object says is either a valid property or left out (never an engine attribute, never a malformed ACL).
/// </summary>
public sealed class PropertyMetadataTests
{
    private static readonly DateTimeOffset Tick = new DateTimeOffset(2025, 6, 1, 12, 0, 0, TimeSpan.Zero).AddTicks(1_234_567);

    private static ObjectInfo Head(Dictionary<string, string> metadata) => new("k", 1, "\"e\"", Tick, metadata);

    private static ObjectInfo Head(params (string Key, string Value)[] metadata) => Head(metadata.ToDictionary(m => m.Key, m => m.Value));

    [Fact]
    public void Every_property_goes_into_metadata_and_comes_back_as_it_was()
    {
        var acl = PosixAcl.Parse("u::rw-,u:1001:r--,u:1002:rwx,g::r--,g:50:-w-,m::rwx,o::---");
        Assert.NotNull(acl);
        var properties = new FileProperties(UnixFileMode.UserRead | UnixFileMode.UserWrite, new FileTime(1748779200, 123_456_789),
            new FileOwner(1001, 50, "ana", "staff"), [new("comment", "é & = %"u8.ToArray()), new("raw", [0, 1, 255])], acl);
        var metadata = new Dictionary<string, string>();

        Assert.Empty(PropertyMetadata.Add(metadata, properties));
        Assert.All(metadata.Values, v => Assert.True(v.All(c => c is > ' ' and < (char)127), v)); // fit for an HTTP header
        var back = PropertyMetadata.Read(Head(metadata), properties.Mode, Tick);

        Assert.Equal(properties.Modified, back.Modified);
        Assert.Equal(properties.Owner, back.Owner);
        Assert.Equal(properties.Attributes.Select(a => (a.Name, Convert.ToHexString(a.Value))), back.Attributes.Select(a => (a.Name, Convert.ToHexString(a.Value))));
        Assert.Equal(acl.ToString(), back.Acl?.ToString());
        Assert.Equal(acl.ToAttribute(), back.Acl!.ToAttribute());
    }

    /// <summary>A Windows file's: read-only and hidden, owned by a user, with an explicit entry for a group and a protected DACL.</summary>
    private const string Sddl = "O:S-1-5-21-1004336348-1177238915-682003330-1001G:S-1-5-21-1004336348-1177238915-682003330-513D:PAI(A;;FA;;;SY)(A;;0x1200a9;;;S-1-5-21-1004336348-1177238915-682003330-1105)";

    [Fact]
    public void A_Windows_file_s_attributes_and_security_descriptor_go_into_metadata_and_come_back_as_they_were()
    {
        var windows = new WindowsFileProperties(FileAttributes.ReadOnly | FileAttributes.Hidden | FileAttributes.Archive, Sddl);
        var properties = new FileProperties(UnixFileMode.UserRead | UnixFileMode.UserWrite, new FileTime(1748779200, 123_456_700), null, [], null) { Windows = windows };
        var metadata = new Dictionary<string, string>();

        Assert.Empty(PropertyMetadata.Add(metadata, properties));
        Assert.Equal("ReadOnly,Hidden,Archive", metadata[PropertyMetadata.WindowsAttributesKey]);
        var back = PropertyMetadata.Read(Head(metadata), properties.Mode, Tick);

        Assert.Equal(windows, back.Windows);
        Assert.True(back.RecordsOwner);
        Assert.True(back.Holds(back, privileged: true));
        Assert.False(properties with { Windows = windows with { Attributes = FileAttributes.Archive } } is var changed && changed.Holds(back, privileged: true));
    }

    [Theory]
    [InlineData("ReadOnly,Offline,SparseFile,ReparsePoint", FileAttributes.ReadOnly)] // how the cache stores a file is not the file's
    [InlineData("1,2,Hidden", FileAttributes.Hidden)] // numbers are no names
    [InlineData("readonly,System", FileAttributes.System)] // names as written
    [InlineData("", (FileAttributes)0)]
    public void Windows_attributes_from_the_bucket_are_the_kept_ones_by_name(string text, FileAttributes expected) =>
        Assert.Equal(expected, WindowsFileProperties.ParseAttributes(text));

    [Theory]
    [InlineData("O:SYG:SYD:(A;;FA;;;SY)S:(AU;SA;FA;;;WD)")] // a SACL takes a privilege the service does not take
    [InlineData("D:(A;;FA;;;SY)\n")]
    [InlineData("D:(A;;FA;;;SY)é")]
    [InlineData("(A;;FA;;;SY)")]
    [InlineData("")]
    public void A_security_descriptor_that_is_not_one_this_drive_writes_is_left_out(string sddl)
    {
        var back = PropertyMetadata.Read(Head((PropertyMetadata.SddlKey, sddl)), UnixFileMode.None, Tick);
        Assert.Null(back.Windows!.Sddl);
    }

    [Fact]
    public void A_security_descriptor_over_the_limit_is_left_out_and_named()
    {
        var huge = "D:PAI" + string.Concat(Enumerable.Range(0, 60).Select(i => $"(A;;0x1200a9;;;S-1-5-21-1004336348-1177238915-682003330-{2000 + i})"));
        var properties = new FileProperties(UnixFileMode.UserRead, new FileTime(1748779200, 0), null, [], null) { Windows = new(FileAttributes.Archive, huge) };
        var metadata = new Dictionary<string, string>();

        Assert.Equal(["security descriptor"], PropertyMetadata.Add(metadata, properties));
        Assert.False(metadata.ContainsKey(PropertyMetadata.SddlKey));
        Assert.Equal("Archive", metadata[PropertyMetadata.WindowsAttributesKey]);
    }

    [Fact]
    public void An_exact_time_that_is_not_the_recorded_time_to_the_tick_is_not_taken()
    {
        Assert.Equal(new FileTime(1748779200, 123_456_789), PropertyMetadata.Read(Head((PropertyMetadata.MtimeNsKey, "1748779200.123456789")), UnixFileMode.None, Tick).Modified);
        // Another version's exact time beside this version's geodrive-mtime (written by a tool that kept only one): the tick wins.
        Assert.Equal(FileTime.From(Tick), PropertyMetadata.Read(Head((PropertyMetadata.MtimeNsKey, "1748779200.999999999")), UnixFileMode.None, Tick).Modified);
        Assert.Equal(FileTime.From(Tick), PropertyMetadata.Read(Head((PropertyMetadata.MtimeNsKey, "soon")), UnixFileMode.None, Tick).Modified);
    }

    [Theory]
    [InlineData("u::rw-,g::r--")] // no other entry
    [InlineData("u::rw-,u:7:r--,g::r--,o::---")] // a named entry without a mask
    [InlineData("u::rw-,u:9:r--,u:7:r--,g::r--,m::r--,o::---")] // ids out of order
    [InlineData("u::rw-,u:7:r--,u:7:r--,g::r--,m::r--,o::---")] // an id twice
    [InlineData("u::rwz,g::r--,o::---")]
    [InlineData("u::wr-,g::r--,o::---")]
    [InlineData("x::rw-,g::r--,o::---")]
    [InlineData("u:-1:rw-,g::r--,m::r--,o::---")]
    [InlineData("u:4294967295:rw-,u::rw-,g::r--,m::r--,o::---")]
    public void A_malformed_ACL_is_left_out(string text) => Assert.Null(PosixAcl.Parse(text));

    [Fact]
    public void Hostile_attributes_owner_names_and_encodings_are_left_out_and_the_rest_is_kept()
    {
        var back = PropertyMetadata.Read(Head(
            (PropertyMetadata.XattrKey, "geodrive.stub=s1&ok=1&bad%zz=2&nul%00name=3&=4&half=%4&two=a=b&fine=%41"),
            (PropertyMetadata.OwnerKey, "12:34"),
            (PropertyMetadata.OwnerNameKey, "ro%00ot:")), UnixFileMode.None, Tick);

        Assert.Equal(["ok", "fine"], back.Attributes.Select(a => a.Name));
        Assert.Equal("A"u8.ToArray(), back.Attributes[1].Value);
        Assert.Equal(new FileOwner(12, 34, null, null), back.Owner);
        Assert.Null(PropertyMetadata.Read(Head((PropertyMetadata.OwnerKey, "-1:2")), UnixFileMode.None, Tick).Owner);
    }

    [Fact]
    public void Over_the_limit_attributes_are_left_out_by_name_and_what_fits_stays_within_2_KB()
    {
        var metadata = new Dictionary<string, string> { ["geodrive-sha256"] = new string('a', 64), ["department"] = new string('d', 300) };
        var properties = new FileProperties(UnixFileMode.None, new FileTime(1, 0), new FileOwner(1, 1, "a", "b"),
            [new("one", new byte[400]), new("three", new byte[10]), new("two", new byte[400])], null);

        var left = PropertyMetadata.Add(metadata, properties);

        Assert.Equal(["user.two"], left); // 400 zero bytes are 1,200 characters encoded: the first fits, the small one too, the last not
        Assert.Contains("three=", metadata[PropertyMetadata.XattrKey], StringComparison.Ordinal);
        Assert.True(metadata.Sum(m => m.Key.Length + m.Value.Length) <= PropertyMetadata.Limit);
    }
}
