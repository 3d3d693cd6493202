using System.Management.Automation.Host;

namespace GeoDrive.PSHost;

/// <summary>
/// Just enough of a console for the formatter: its width (the terminal's, or 120 when output is
/// redirected, as pwsh does) and colours. No buffer access: this host never redraws.
/// </summary>
internal sealed class ConsoleRawUserInterface : PSHostRawUserInterface
{
    private const int RedirectedWidth = 120;

    public override ConsoleColor BackgroundColor { get; set; } = ConsoleColor.Black;

    public override ConsoleColor ForegroundColor { get; set; } = ConsoleColor.Gray;

    public override Size BufferSize
    {
        get => new(Width, short.MaxValue);
        set { }
    }

    public override Coordinates CursorPosition { get; set; }

    public override int CursorSize { get; set; } = 25;

    public override bool KeyAvailable => !Console.IsInputRedirected && Console.KeyAvailable;

    public override Size MaxPhysicalWindowSize => new(Width, 50);

    public override Size MaxWindowSize => new(Width, 50);

    public override Coordinates WindowPosition { get; set; }

    public override Size WindowSize
    {
        get => new(Width, 50);
        set { }
    }

    public override string WindowTitle { get; set; } = "GeoDrive.PSHost";

    private static int Width
    {
        get
        {
            if (Console.IsOutputRedirected)
            {
                return RedirectedWidth;
            }
            try
            {
                return Console.WindowWidth > 0 ? Console.WindowWidth : RedirectedWidth;
            }
            catch (IOException)
            {
                return RedirectedWidth;
            }
        }
    }

    public override void FlushInputBuffer()
    {
    }

    public override BufferCell[,] GetBufferContents(Rectangle rectangle) => throw new NotSupportedException();

    public override KeyInfo ReadKey(ReadKeyOptions options)
    {
        var key = Console.ReadKey((options & ReadKeyOptions.NoEcho) != 0);
        return new KeyInfo((int)key.Key, key.KeyChar, default, keyDown: true);
    }

    public override void ScrollBufferContents(Rectangle source, Coordinates destination, Rectangle clip, BufferCell fill) => throw new NotSupportedException();

    public override void SetBufferContents(Coordinates origin, BufferCell[,] contents) => throw new NotSupportedException();

    public override void SetBufferContents(Rectangle rectangle, BufferCell fill) => throw new NotSupportedException();
}
