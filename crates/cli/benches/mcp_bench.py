"""`cargo xtask bench mcp`'s client: the official Python MCP SDK against `tackle serve` and the
official filesystem server, same files, same run.

usage: mcp_bench.py TACKLE PEER_JS WORKDIR DATADIR SEQUENTIAL MEMORY_CALLS
PEER_JS may be "-" (peer missing: tackle is timed alone). Prints one line per measurement.
"""

import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TACKLE, PEER_JS, WORKDIR, DATADIR = sys.argv[1:5]
SEQUENTIAL, MEMORY_CALLS = int(sys.argv[5]), int(sys.argv[6])
CLIENTS, CALLS_PER_CLIENT = 16, 100
FILE = os.path.join(WORKDIR, "file.txt")

SERVERS = {
    "tackle": (
        [TACKLE, "serve", "--data-dir", DATADIR, "--dir", WORKDIR],
        "read",
        {"path": "file.txt"},
    ),
}
if PEER_JS != "-":
    SERVERS["server-filesystem"] = (
        ["node", PEER_JS, WORKDIR],
        "read_text_file",
        {"path": FILE},
    )


DEVNULL = open(os.devnull, "w")


def params(argv):
    return StdioServerParameters(command=argv[0], args=argv[1:], cwd=WORKDIR,
                                 env=dict(os.environ))


def client(argv):
    # The servers' own stderr chatter is not the bench's output.
    return stdio_client(params(argv), errlog=DEVNULL)


def spawn_to_initialize(argv, rounds=30):
    """Spawn → the `initialize` answer on stdout, over raw pipes (no SDK start-up in it)."""
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}}) + "\n"
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, cwd=WORKDIR)
        proc.stdin.write(init.encode())
        proc.stdin.flush()
        line = proc.stdout.readline()
        times.append(time.perf_counter() - start)
        assert b'"result"' in line, line
        proc.stdin.close()
        proc.wait()
    return statistics.median(times)


def child_rss_kib(marker):
    """VmRSS of this process's child whose command line contains `marker`."""
    me = str(os.getpid())
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = f.read().rsplit(")", 1)[1].split()[1]
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
            if ppid != me or marker.encode() not in cmdline:
                continue
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            continue
    return -1


# Sequential calls alternate between the servers in blocks of this many, so a machine that
# slows down or speeds up during the run weighs on both alike.
BLOCK = 50


class RawServer:
    """A server spoken to over raw pipes: what it costs without the SDK's own overhead."""

    def __init__(self, argv, tool, arguments):
        self.tool, self.arguments = tool, arguments
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, cwd=WORKDIR)
        self.next_id = 0
        self.ask("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "bench", "version": "1"}})
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def ask(self, method, params):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()
        while True:
            answer = json.loads(self.proc.stdout.readline())
            if answer.get("id") == self.next_id:
                return answer

    def call(self):
        answer = self.ask("tools/call", {"name": self.tool, "arguments": self.arguments})
        assert not answer["result"].get("isError"), answer

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def raw_sequential(calls):
    """Median per-call time of each server over raw pipes, the servers alternating."""
    servers = {name: RawServer(argv, tool, arguments)
               for name, (argv, tool, arguments) in SERVERS.items()}
    times = {name: [] for name in servers}
    for server in servers.values():
        for _ in range(20):  # warm-up
            server.call()
    for _ in range(calls // BLOCK):
        for name, server in servers.items():
            for _ in range(BLOCK):
                start = time.perf_counter()
                server.call()
                times[name].append(time.perf_counter() - start)
    for server in servers.values():
        server.close()
    return {name: statistics.median(samples) for name, samples in times.items()}


async def sequential(calls):
    """Median per-call time of each server through the SDK, the servers alternating, and each
    server's RSS afterwards."""
    async with contextlib.AsyncExitStack() as stack:
        sessions = {}
        for name, (argv, tool, arguments) in SERVERS.items():
            read, write = await stack.enter_async_context(client(argv))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            for _ in range(20):  # warm-up
                await session.call_tool(tool, arguments)
            sessions[name] = (session, tool, arguments)
        times = {name: [] for name in sessions}
        for _ in range(calls // BLOCK):
            for name, (session, tool, arguments) in sessions.items():
                for _ in range(BLOCK):
                    start = time.perf_counter()
                    result = await session.call_tool(tool, arguments)
                    times[name].append(time.perf_counter() - start)
                    assert not result.is_error, result
        return {name: (statistics.median(samples), child_rss_kib(marker_of(name)))
                for name, samples in times.items()}


def marker_of(name):
    argv = SERVERS[name][0]
    return argv[1] if name != "tackle" else "serve"


async def memory(argv, tool, arguments, calls, marker):
    async with client(argv) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for _ in range(100):
                await session.call_tool(tool, arguments)
            before = child_rss_kib(marker)
            for _ in range(calls):
                await session.call_tool(tool, arguments)
            return before, child_rss_kib(marker)


async def one_client(argv, tool, arguments):
    async with client(argv) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.call_tool(tool, arguments)
            start = time.perf_counter()
            for _ in range(CALLS_PER_CLIENT):
                result = await session.call_tool(tool, arguments)
                assert not result.is_error, result
            return start, time.perf_counter()


async def concurrent(argv, tool, arguments):
    spans = await asyncio.gather(*(one_client(argv, tool, arguments) for _ in range(CLIENTS)))
    wall = max(end for _, end in spans) - min(start for start, _ in spans)
    return CLIENTS * CALLS_PER_CLIENT / wall


async def main():
    with open(FILE, "w") as f:
        for n in range(1, 101):
            f.write(f"line {n}: the quick brown fox jumps over the lazy dog\n")
    latency = await sequential(SEQUENTIAL)
    raw = raw_sequential(SEQUENTIAL)
    results = {}
    for name, (argv, tool, arguments) in SERVERS.items():
        marker = marker_of(name)
        r = {}
        r["spawn_ms"] = spawn_to_initialize(argv) * 1000
        r["median_us"], r["rss_after_seq_kib"] = latency[name]
        r["median_us"] *= 1e6
        r["raw_us"] = raw[name] * 1e6
        r["throughput"] = await concurrent(argv, tool, arguments)
        r["rss_100_kib"], r["rss_after_kib"] = await memory(
            argv, tool, arguments, MEMORY_CALLS, marker)
        results[name] = r
        print(f"{name}: spawn→initialize {r['spawn_ms']:.1f} ms; median call "
              f"{r['median_us']:.0f} µs over {SEQUENTIAL} (raw pipes: {r['raw_us']:.0f} µs); {CLIENTS} clients "
              f"{r['throughput']:.0f} calls/s; RSS {r['rss_100_kib']} KiB after 100 calls, "
              f"{r['rss_after_kib']} KiB after {MEMORY_CALLS} more", flush=True)
    if "server-filesystem" in results:
        t, p = results["tackle"], results["server-filesystem"]
        print(f"ratio tackle/peer: median latency {t['median_us'] / p['median_us']:.2f}x "
              f"(goal ≤ 0.5x), raw pipes {t['raw_us'] / p['raw_us']:.2f}x; throughput {t['throughput'] / p['throughput']:.2f}x; "
              f"spawn→initialize {t['spawn_ms'] / p['spawn_ms']:.2f}x "
              f"(tackle goal ≤ 20 ms: {t['spawn_ms']:.1f} ms)")


asyncio.run(main())
