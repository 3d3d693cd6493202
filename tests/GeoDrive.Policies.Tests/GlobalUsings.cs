global using System.Globalization;
global using Xunit;
