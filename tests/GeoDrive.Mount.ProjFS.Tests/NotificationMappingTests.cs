using GeoDrive.Core.Model;
using GeoDrive.Mount.ProjFS.Native;
using GeoDrive.Mount.ProjFS.Notifications;

namespace GeoDrive.Mount.ProjFS.Tests;

/// <summary>Which ProjFS notification becomes which engine call, and with which caller.</summary>
public sealed class NotificationMappingTests
{
    private const int Service = 4242;
    private static readonly Caller Word = NotificationMapper.CallerOf(1234, @"C:\Program Files\Microsoft Office\root\Office16\WINWORD.EXE");
    private static readonly Caller Defender = NotificationMapper.CallerOf(777, @"C:\ProgramData\Microsoft\Windows Defender\Platform\4.18\MsMpEng.exe");

    private readonly NotificationMapper _mapper = new(p => p == ".geodrive" || p.StartsWith(".geodrive/", StringComparison.Ordinal), Service);

    [Fact]
    public void The_caller_is_the_triggering_process_id_and_image_file_name()
    {
        Assert.Equal(new Caller(1234, "WINWORD.EXE"), Word);
        Assert.Equal("MsMpEng.exe", Defender.ImageName);
        Assert.False(Word.IsSystem);
    }

    [Theory]
    [InlineData(4u, "System", true)]        // SMB server and kernel-mode access come as the System process
    [InlineData(0u, null, true)]            // unknown
    [InlineData(900u, null, false)]
    public void System_and_unknown_callers_are_marked_system(uint pid, string? image, bool system)
    {
        var caller = NotificationMapper.CallerOf(pid, image);
        Assert.Equal(system, caller.IsSystem);
        Assert.Equal(image ?? "", caller.ImageName);
    }

    [Fact]
    public void A_new_file_is_created_in_the_engine_with_its_caller_and_a_slash_path()
    {
        var action = _mapper.Map(PrjNotification.NewFileCreated, @"Docs\2026\plan.txt", false, null, Word);

        Assert.Equal(new EngineAction(EngineCall.Created, "Docs/2026/plan.txt", Word, false), action);
    }

    [Fact]
    public void A_new_folder_is_created_as_a_directory()
    {
        Assert.Equal(new EngineAction(EngineCall.Created, "Docs", Word, true), _mapper.Map(PrjNotification.NewFileCreated, "Docs", true, null, Word));
    }

    [Theory]
    [InlineData(PrjNotification.FileHandleClosedFileModified, true)]
    [InlineData(PrjNotification.FileHandleClosedNoModification, false)]
    public void A_closed_handle_is_ClosedAsync_with_modified(PrjNotification notification, bool modified)
    {
        var action = _mapper.Map(notification, "a.txt", false, null, Word);

        Assert.Equal(EngineCall.Closed, action.Call);
        Assert.Equal(modified, action.Modified);
        Assert.Equal(Word, action.Caller);
    }

    [Fact]
    public void Deletion_is_reported_when_the_deleting_handle_closes()
    {
        Assert.Equal(EngineCall.None, _mapper.Map(PrjNotification.PreDelete, "a.txt", false, null, Word).Call);
        Assert.True(_mapper.Map(PrjNotification.PreDelete, "a.txt", false, null, Word).Allow);

        var action = _mapper.Map(PrjNotification.FileHandleClosedFileDeleted, @"old\a.txt", false, null, Word, isFileModified: true);

        Assert.Equal(new EngineAction(EngineCall.Deleted, "old/a.txt", Word, false, Modified: true), action);
    }

    [Fact]
    public void A_deleted_folder_is_deleted_as_a_directory()
    {
        Assert.Equal(new EngineAction(EngineCall.Deleted, "old", Word, true), _mapper.Map(PrjNotification.FileHandleClosedFileDeleted, "old", true, null, Word));
    }

    [Fact]
    public void A_rename_inside_the_root_is_Renamed_from_the_old_to_the_new_path()
    {
        var action = _mapper.Map(PrjNotification.FileRenamed, @"a\x.bin", false, @"b\y.bin", Word);

        Assert.Equal(new EngineAction(EngineCall.Renamed, "a/x.bin", Word, false, NewPath: "b/y.bin"), action);
    }

    [Fact]
    public void A_move_into_the_root_is_a_new_file_and_a_move_out_a_deleted_one()
    {
        Assert.Equal(new EngineAction(EngineCall.Created, "in.bin", Word, false), _mapper.Map(PrjNotification.FileRenamed, "", false, "in.bin", Word));
        Assert.Equal(new EngineAction(EngineCall.Deleted, "out.bin", Word, false), _mapper.Map(PrjNotification.FileRenamed, "out.bin", false, "", Word));
    }

    [Fact]
    public void An_overwrite_is_an_open_that_truncates_so_nothing_is_recalled()
    {
        Assert.Equal(EngineCall.Overwritten, _mapper.Map(PrjNotification.FileOverwritten, "big.iso", false, null, Word).Call);
    }

    [Fact]
    public void An_open_is_counted_by_the_mount_and_not_sent_to_the_engine()
    {
        Assert.Equal(EngineCall.Opened, _mapper.Map(PrjNotification.FileOpened, "a.txt", false, null, Defender).Call);
        Assert.Equal(EngineCall.None, _mapper.Map(PrjNotification.FileOpened, "Docs", true, null, Defender).Call);
    }

    [Fact]
    public void Hard_links_are_refused()
    {
        Assert.False(_mapper.Map(PrjNotification.PreSetHardlink, "a.txt", false, "b.txt", Word).Allow);
        Assert.Equal(EngineCall.None, _mapper.Map(PrjNotification.HardlinkCreated, "a.txt", false, "b.txt", Word).Call);
    }

    [Fact]
    public void Others_may_not_delete_or_rename_the_engines_folder_but_the_engine_may()
    {
        Assert.False(_mapper.Map(PrjNotification.PreDelete, @".geodrive\index.db", false, null, Word).Allow);
        Assert.False(_mapper.Map(PrjNotification.PreRename, "x.txt", false, @".geodrive\x.txt", Word).Allow);
        Assert.False(_mapper.Map(PrjNotification.PreRename, ".geodrive", true, "hidden", Word).Allow);

        var engine = new Caller(Service, "GeoDrive.Service.exe");
        Assert.True(_mapper.Map(PrjNotification.PreDelete, @".geodrive\index-log.db", false, null, engine).Allow);
    }

    [Theory]
    [InlineData(PrjNotification.NewFileCreated, ".geodrive", true)]
    [InlineData(PrjNotification.NewFileCreated, @".geodrive\mine", true)]
    [InlineData(PrjNotification.FileOpened, @".geodrive\index.db", false)]
    [InlineData(PrjNotification.FileOverwritten, @".geodrive\index.db", false)]
    public void As_under_FUSE_others_may_not_create_or_open_anything_in_the_engines_folder(PrjNotification notification, string path, bool isDirectory)
    {
        Assert.False(_mapper.Map(notification, path, isDirectory, null, Word).Allow);

        var engine = new Caller(Service, "GeoDrive.Service.exe");
        Assert.True(_mapper.Map(notification, path, isDirectory, null, engine).Allow);
        Assert.True(_mapper.Map(notification, ".geodrive-notes.txt", false, null, Word).Allow);
    }

    [Fact]
    public void Nothing_in_the_engines_folder_reaches_the_engine()
    {
        Assert.Equal(EngineCall.None, _mapper.Map(PrjNotification.FileHandleClosedFileModified, @".geodrive\index.db", false, null, Word).Call);
        Assert.Equal(EngineCall.Deleted, _mapper.Map(PrjNotification.FileRenamed, "a.txt", false, @".geodrive\a.txt", Word).Call);
    }

    [Theory]
    [InlineData(PrjNotification.FileOpened)]
    [InlineData(PrjNotification.NewFileCreated)]
    [InlineData(PrjNotification.FileHandleClosedFileModified)]
    [InlineData(PrjNotification.FileHandleClosedFileDeleted)]
    [InlineData(PrjNotification.FileRenamed)]
    public void The_engines_own_file_io_is_not_reported_back_to_it(PrjNotification notification)
    {
        var engine = new Caller(Service, "GeoDrive.Service.exe");

        Assert.Equal(EngineCall.None, _mapper.Map(notification, "a.txt", false, "b.txt", engine).Call);
    }

    [Fact]
    public void Where_applications_share_the_mounts_process_their_activity_is_reported()
    {
        var shared = new NotificationMapper(p => p.StartsWith(".geodrive", StringComparison.Ordinal), Service, reportOwnProcess: true);
        var tests = new Caller(Service, "testhost.exe");

        Assert.Equal(EngineCall.Created, shared.Map(PrjNotification.NewFileCreated, "a.txt", false, null, tests).Call);
        Assert.True(shared.Map(PrjNotification.PreDelete, @".geodrive\index-log.db", false, null, tests).Allow);
    }

    [Fact]
    public void Converting_a_placeholder_to_full_is_allowed_and_reported_by_its_close()
    {
        var action = _mapper.Map(PrjNotification.FilePreConvertToFull, "a.txt", false, null, Word);
        Assert.True(action.Allow);
        Assert.Equal(EngineCall.None, action.Call);
    }
}
