"""Which web framework for the table's pages: aiohttp against Starlette +
uvicorn, on this machine.  Each candidate serves one JSON route on a
loopback port in a fresh interpreter; we time interpreter start → first
answer, and read the process's RSS (VmRSS) then, against a bare
interpreter that imported only what the daemon already imports (yaml).

    python qa/bench/web_frameworks.py [--runs 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

SERVERS = {
    "none (baseline)": """
import yaml, sys, time
print('ready', flush=True); sys.stdin.readline()
""",
    "aiohttp": """
import yaml, asyncio, sys
from aiohttp import web
async def table(request): return web.json_response({'ok': True})
app = web.Application(); app.router.add_get('/api/table', table)
async def main():
    runner = web.AppRunner(app, access_log=None); await runner.setup()
    await web.TCPSite(runner, '127.0.0.1', PORT).start()
    print('ready', flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
asyncio.run(main())
""",
    "starlette+uvicorn": """
import yaml, asyncio, sys
import uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
async def table(request): return JSONResponse({'ok': True})
app = Starlette(routes=[Route('/api/table', table)])
async def main():
    server = uvicorn.Server(uvicorn.Config(app, host='127.0.0.1', port=PORT, log_level='warning',
                                           access_log=False, lifespan='off'))
    task = asyncio.create_task(server.serve())
    while not server.started: await asyncio.sleep(0.005)
    print('ready', flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    server.should_exit = True; await task
asyncio.run(main())
""",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def one(code: str) -> tuple[float, float]:
    port = free_port()
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code.replace("PORT", str(port))],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        if "aiohttp" in code or "uvicorn" in code:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/table", timeout=5) as r:
                r.read()
        elapsed = time.perf_counter() - started
        return elapsed, rss_mib(proc.pid)
    finally:
        assert proc.stdin is not None
        proc.stdin.write("\n")
        proc.stdin.flush()
        proc.wait(10)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = {}
    for name, code in SERVERS.items():
        samples = [one(code) for _ in range(args.runs)]
        rows[name] = {"start_s": statistics.median(s for s, _ in samples),
                      "rss_mib": statistics.median(r for _, r in samples)}
    base = rows["none (baseline)"]
    if args.json:
        print(json.dumps(rows))
        return 0
    print(f"{'framework':<20} {'start→answer':>13} {'+ over bare':>12} {'RSS':>9} {'+ over bare':>12}")
    for name, r in rows.items():
        print(f"{name:<20} {r['start_s']:>12.3f}s {r['start_s'] - base['start_s']:>+11.3f}s "
              f"{r['rss_mib']:>7.1f}Mi {r['rss_mib'] - base['rss_mib']:>+10.1f}Mi")
    print(f"(median of {args.runs} runs each, {sys.version.split()[0]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
