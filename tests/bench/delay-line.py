"""A delay line for the bench probes: a TCP proxy on 127.0.0.1 that holds every chunk DELAY_MS before passing it on,
in each direction, so each request and its answer take 2 x DELAY_MS longer (the kernel here has no sch_netem).
   python3 tests/bench/delay-line.py LISTEN_PORT TARGET_PORT DELAY_MS"""
import asyncio, sys, time
L, T, D = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]) / 1000
async def pipe(r, w):
    q = asyncio.Queue()
    async def out():
        while True:
            t, data = await q.get()
            if data is None: break
            wait = t + D - time.monotonic()
            if wait > 0: await asyncio.sleep(wait)
            w.write(data); await w.drain()
        w.close()
    o = asyncio.create_task(out())
    try:
        while True:
            data = await r.read(65536)
            if not data: break
            q.put_nowait((time.monotonic(), data))
    except Exception: pass
    q.put_nowait((time.monotonic(), None)); await o
async def handle(cr, cw):
    try:
        sr, sw = await asyncio.open_connection('127.0.0.1', T)
    except Exception:
        cw.close(); return
    await asyncio.gather(pipe(cr, sw), pipe(sr, cw), return_exceptions=True)
async def main():
    s = await asyncio.start_server(handle, '127.0.0.1', L)
    async with s: await s.serve_forever()
asyncio.run(main())
