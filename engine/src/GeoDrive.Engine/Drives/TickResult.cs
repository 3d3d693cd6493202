namespace GeoDrive.Engine.Drives;

/// <summary>What one pass of the engine's scheduler did.</summary>
public readonly record struct TickResult(int Uploaded, int UploadsFailed, int Stubbed, int Deleted);
