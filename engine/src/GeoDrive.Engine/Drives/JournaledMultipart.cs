using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;

namespace GeoDrive.Engine.Drives;

/// <summary>
/// One upload's multipart id in the bucket journal: journaled before the first part is sent, settled
/// when the upload is completed or aborted, due for an abort when it is not (or after a crash).
/// </summary>
internal sealed class JournaledMultipart(OwedBucketChanges owed, string key, Func<bool> stillWanted) : IMultipartObserver
{
    private BucketChange? _abort;

    public void Started(string uploadId) => _abort = owed.OweAbort(key, uploadId);

    public bool StillWanted() => stillWanted();

    public void Ended(string uploadId, bool settled)
    {
        if (_abort is null)
        {
            return;
        }
        if (settled)
        {
            owed.Done(_abort);
        }
        else
        {
            owed.MakeDue(_abort);
        }
    }
}
