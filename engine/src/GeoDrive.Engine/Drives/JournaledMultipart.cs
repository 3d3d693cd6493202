using GeoDrive.Core.Ports;

namespace GeoDrive.Engine.Drives;

/// <summary>
/// One multipart upload in the bucket journal: journaled before it is started, so that a crash, or a
/// start whose answer was lost (the server opened an upload whose id never arrived), cannot leave an
/// upload open that nobody knows of. Once the upload ended, the journal's record is due: it aborts every
/// upload still open under the key since the record was written (docs/architecture.md, "The bucket journal").
/// </summary>
internal sealed class JournaledMultipart(OwedBucketChanges owed, string key, Func<bool> stillWanted) : IMultipartObserver
{
    private Core.Model.BucketChange? _sweep;

    public void Starting() => _sweep = owed.OweMultipartSweep(key);

    public void Started(string uploadId) => owed.UploadLive(uploadId, true);

    public bool StillWanted() => stillWanted();

    public void Ended(string? uploadId)
    {
        if (uploadId is not null)
        {
            owed.UploadLive(uploadId, false);
        }
        if (_sweep is not null)
        {
            owed.MakeDue(_sweep);
        }
    }
}
