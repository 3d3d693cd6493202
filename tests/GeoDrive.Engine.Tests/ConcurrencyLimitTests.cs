using GeoDrive.Engine.Files;

namespace GeoDrive.Engine.Tests;

/// <summary>transfer.restoreThreads changed while recalls run: a raised limit lets waiters in now, a lowered one lets nobody new in until enough left.</summary>
public sealed class ConcurrencyLimitTests
{
    [Fact]
    public async Task A_raised_limit_admits_waiters_at_once_and_a_lowered_one_waits_for_holders_to_leave()
    {
        var limit = 1;
        var gate = new ConcurrencyLimit(() => limit);
        var first = await gate.EnterAsync(CancellationToken.None);
        var second = gate.EnterAsync(CancellationToken.None);
        var third = gate.EnterAsync(CancellationToken.None);
        Assert.False(second.IsCompleted);

        limit = 3;
        gate.Admit();
        var places = new[] { await second.WaitAsync(TimeSpan.FromSeconds(10)), await third.WaitAsync(TimeSpan.FromSeconds(10)) };
        Assert.Equal(3, gate.Held);

        limit = 1;
        var fourth = gate.EnterAsync(CancellationToken.None);
        first.Dispose();
        places[0].Dispose();
        Assert.False(fourth.IsCompleted, "two holders left of three, the limit is one: still one too many");
        places[1].Dispose();
        (await fourth.WaitAsync(TimeSpan.FromSeconds(10))).Dispose();
        Assert.Equal(0, gate.Held);
    }

    [Fact]
    public async Task A_waiter_that_gives_up_leaves_its_turn_to_the_next()
    {
        var gate = new ConcurrencyLimit(() => 1);
        var held = await gate.EnterAsync(CancellationToken.None);
        using var giveUp = new CancellationTokenSource();
        var impatient = gate.EnterAsync(giveUp.Token);
        var patient = gate.EnterAsync(CancellationToken.None);

        await giveUp.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => impatient);
        held.Dispose();

        (await patient.WaitAsync(TimeSpan.FromSeconds(10))).Dispose();
        Assert.Equal(0, gate.Held);
    }
}
