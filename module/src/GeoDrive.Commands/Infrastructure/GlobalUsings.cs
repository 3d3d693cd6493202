// System.IO.DriveInfo is imported implicitly; in this module "DriveInfo" is always a cloud drive.
global using DriveInfo = GeoDrive.Api.DriveInfo;
