using Amazon.Runtime;
using Amazon.S3;
using Amazon.S3.Model;
using Amazon.S3.Transfer;

namespace GeoDrive.Bench;

/// <summary>The ceiling: AWSSDK.S3 straight to the server with the same concurrency, no file system in between.</summary>
public sealed class RawS3Client : IBenchClient
{
    private readonly BenchSettings _settings;
    private readonly string _bucket;
    private readonly AmazonS3Client _client;
    private readonly TransferUtility _transfer;

    public RawS3Client(BenchSettings settings, string bucket)
    {
        _settings = settings;
        _bucket = bucket;
        _client = new AmazonS3Client(new BasicAWSCredentials(settings.AccessKey, settings.SecretKey), new AmazonS3Config
        {
            ServiceURL = settings.Endpoint,
            ForcePathStyle = true,
            AuthenticationRegion = "us-east-1",
            RequestChecksumCalculation = RequestChecksumCalculation.WHEN_REQUIRED,
            ResponseChecksumValidation = ResponseChecksumValidation.WHEN_REQUIRED,
            MaxConnectionsPerServer = settings.Threads * Math.Max(1, settings.MultipartThreads),
            UseHttp = true,
        });
        _transfer = new TransferUtility(_client, new TransferUtilityConfig { ConcurrentServiceRequests = settings.MultipartThreads, MinSizeBeforePartUpload = settings.MultipartThreshold });
    }

    public string Name => "raw-sdk";

    public Task SeedAsync(string run, IReadOnlyList<string> files) => UploadAsync(run, files);

    public Task RunAsync(string run, IReadOnlyList<string> upload, IReadOnlyList<string> restore) =>
        Task.WhenAll(UploadAsync(run, upload), RestoreAsync(run, restore));

    private Task UploadAsync(string run, IReadOnlyList<string> files) =>
        Parallelism.ForEachAsync(files, _settings.Threads, async (relative, ct) =>
        {
            var source = _settings.DataPath(relative);
            if (new FileInfo(source).Length >= _settings.MultipartThreshold)
            {
                await _transfer.UploadAsync(new TransferUtilityUploadRequest { BucketName = _bucket, Key = $"{run}/{relative}", FilePath = source, PartSize = _settings.PartSize }, ct);
            }
            else
            {
                await _client.PutObjectAsync(new PutObjectRequest { BucketName = _bucket, Key = $"{run}/{relative}", FilePath = source, UseChunkEncoding = false }, ct);
            }
        });

    private Task RestoreAsync(string run, IReadOnlyList<string> files) =>
        Parallelism.ForEachAsync(files, _settings.Threads, async (relative, ct) =>
        {
            var destination = Path.Combine(_settings.Root, "restore", Name, run, relative);
            Directory.CreateDirectory(Path.GetDirectoryName(destination)!);
            // Ranged ("bytes=0-", no dataset file is empty): a GET without Range makes the SDK check the
            // object's MD5 in managed code, which costs more than the transfer; the ceiling should not pay it.
            using var response = await _client.GetObjectAsync(new GetObjectRequest { BucketName = _bucket, Key = $"{run}/{relative}", ByteRange = new ByteRange("bytes=0-") }, ct);
            await using var file = new FileStream(destination, FileMode.Create, FileAccess.Write, FileShare.None, 1 << 20, useAsync: true);
            await response.ResponseStream.CopyToAsync(file, 1 << 20, ct);
        });

    public ValueTask DisposeAsync()
    {
        _transfer.Dispose();
        _client.Dispose();
        return ValueTask.CompletedTask;
    }
}
