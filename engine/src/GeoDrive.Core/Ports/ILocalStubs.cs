using GeoDrive.Core.Model;

namespace GeoDrive.Core.Ports;

/// <summary>
/// How a verified file's local data becomes a stub, which depends on the front end: on Linux the
/// cache file is made sparse in place (the default); under Windows ProjFS it is dehydrated (the
/// placeholder is written again without data, FILE_ATTRIBUTE_OFFLINE). Called by the engine after
/// it has verified the bucket's object and recorded the entry as Stubbed.
/// </summary>
public interface ILocalStubs
{
    void MakeStub(FileEntry entry, string localPath);
}
