"""Drives `tackle serve` with the official Python MCP SDK (run by crates/cli/tests/serve.rs).

usage: python_client.py SCENARIO TACKLE WORKDIR DATADIR
Prints "ok" when every check passed; an assertion or exception fails the test.
"""

import asyncio
import os
import sys
import time

import jsonschema
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

SCENARIO, TACKLE, WORKDIR, DATADIR = sys.argv[1:5]
# hostile.py sits beside this script.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def server(*extra):
    return StdioServerParameters(
        command=TACKLE,
        args=["serve", "--data-dir", DATADIR, "--dir", WORKDIR, *extra],
        cwd=WORKDIR,
        env=dict(os.environ),
    )


def text(result):
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def processes_with(marker):
    """Pids whose command line contains `marker` (this script's own excluded)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            found.append(pid)
    return found


async def wait_gone(marker, seconds=15):
    # Awaiting (not sleeping) lets the SDK send its notifications meanwhile.
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not processes_with(marker):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"processes left running: {processes_with(marker)}")


async def basics():
    async with stdio_client(server("--ask", "allow-once")) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "tackle", init
            listed = await session.list_tools()
            names = {tool.name for tool in listed.tools}
            for needed in ["bash", "read", "edit", "write", "grep", "glob"]:
                assert needed in names, names
            for tool in listed.tools:
                jsonschema.Draft202012Validator.check_schema(tool.input_schema)
                assert tool.input_schema["type"] == "object", tool.name
                if tool.output_schema is not None:
                    jsonschema.Draft202012Validator.check_schema(tool.output_schema)
                    assert tool.output_schema["type"] == "object", tool.name
            hints = {tool.name: tool.annotations for tool in listed.tools}
            assert hints["read"].read_only_hint is True
            assert hints["bash"].destructive_hint is True
            assert hints["webfetch"].open_world_hint is True

            read = await session.call_tool("read", {"path": "hello.txt"})
            assert not read.is_error, read
            assert "1: hello world" in text(read), text(read)

            grep = await session.call_tool("grep", {"pattern": "hello"})
            assert not grep.is_error, grep
            assert "hello.txt" in text(grep), text(grep)
            assert grep.structured_content is not None, grep

            edit = await session.call_tool(
                "edit",
                {"path": "hello.txt", "oldString": "world", "newString": "mcp"},
            )
            assert not edit.is_error, text(edit)
            with open(os.path.join(WORKDIR, "hello.txt")) as f:
                assert f.read() == "hello mcp\n"

            bash = await session.call_tool("bash", {"command": "echo from-bash"})
            assert not bash.is_error, text(bash)
            assert "from-bash" in text(bash), text(bash)

            bad = await session.call_tool("read", {"offset": "many"})
            assert bad.is_error, bad
            assert "path" in text(bad), text(bad)

            unknown = await session.call_tool("no_such_tool", {})
            assert unknown.is_error, unknown
            assert "Unknown tool: no_such_tool" in text(unknown), text(unknown)


async def deny_by_default():
    async with stdio_client(server()) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("bash", {"command": "echo never"})
            assert result.is_error, result
            assert "tackle.json" in text(result), text(result)


async def cancel():
    marker = "100.4242"
    async with stdio_client(server("--ask", "allow-once")) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            started = time.monotonic()
            try:
                await session.call_tool(
                    "bash", {"command": f"sleep {marker}"}, read_timeout_seconds=3
                )
                raise AssertionError("the call should have timed out")
            except Exception as err:  # the SDK's timeout; it then sends notifications/cancelled
                assert "timed out" in str(err), err
            await wait_gone(marker)
            assert time.monotonic() - started < 30
            # The session still works after a cancelled call.
            ok = await session.call_tool("read", {"path": "hello.txt"})
            assert not ok.is_error, ok


async def elicitation():
    answers = []

    async def answer(context, params):
        answers.append(params.message)
        decision = "once" if len(answers) == 1 else "reject"
        content = {"decision": decision}
        if decision == "reject":
            content["feedback"] = "use printf instead"
        return types.ElicitResult(action="accept", content=content)

    async with stdio_client(server()) as (read, write):
        async with ClientSession(read, write, elicitation_callback=answer) as session:
            await session.initialize()
            allowed = await session.call_tool("bash", {"command": "echo asked-and-allowed"})
            assert not allowed.is_error, text(allowed)
            assert "asked-and-allowed" in text(allowed)
            rejected = await session.call_tool("bash", {"command": "echo asked-and-rejected"})
            assert rejected.is_error, rejected
            assert "use printf instead" in text(rejected), text(rejected)
            assert len(answers) == 2 and "bash" in answers[0], answers


TOKEN = "s3cret-token-for-the-test"


def http_server(*extra):
    """`tackle serve --http` on a free loopback port with a token file: (process, url)."""
    import socket
    import subprocess

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    token_file = os.path.join(DATADIR, "token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    proc = subprocess.Popen(
        [TACKLE, "serve", "--data-dir", DATADIR, "--dir", WORKDIR, "--ask", "allow-once",
         "--http", f"127.0.0.1:{port}", "--token-file", token_file, *extra],
        stdin=subprocess.DEVNULL,
    )
    return proc, f"http://127.0.0.1:{port}/mcp"


async def over_http():
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    proc, url = http_server()
    try:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}
        accept = {"Accept": "application/json, text/event-stream",
                  "Content-Type": "application/json"}
        async with httpx2.AsyncClient() as raw:
            deadline = time.monotonic() + 30
            while True:
                try:
                    answer = await raw.post(url, json=init, headers=accept)
                    break
                except httpx2.ConnectError:
                    assert time.monotonic() < deadline, "tackle serve --http did not listen"
                    await asyncio.sleep(0.1)
            assert answer.status_code == 401, answer
            wrong = await raw.post(url, json=init,
                                   headers={**accept, "Authorization": "Bearer wrong"})
            assert wrong.status_code == 401, wrong
            # A call with a wrong token runs nothing.
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "bash", "arguments": {"command": "touch pwned"}}}
            await raw.post(url, json=call, headers={**accept, "Authorization": "Bearer wrong"})
            assert not os.path.exists(os.path.join(WORKDIR, "pwned"))
            good = {**accept, "Authorization": f"Bearer {TOKEN}"}
            evil = await raw.post(url, json=init,
                                  headers={**good, "Origin": "http://evil.example"})
            assert evil.status_code == 403, (evil.status_code, evil.text)
            huge = await raw.post(url, content=b"[" + b" " * (5 << 20) + b"]", headers=good)
            assert huge.status_code == 413, huge.status_code

        client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"})
        async with client:
            async with streamable_http_client(url, http_client=client) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    listed = await session.list_tools()
                    for tool in listed.tools:
                        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
                    read_result = await session.call_tool("read", {"path": "hello.txt"})
                    assert "1: hello world" in text(read_result), read_result
                    bash = await session.call_tool("bash", {"command": "echo over-http"})
                    assert "over-http" in text(bash), bash
                    unknown = await session.call_tool("nope", {})
                    assert unknown.is_error
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def survives_hostile_files():
    """One session reads every hostile file while another keeps working on the same server."""
    import anyio
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    import hostile

    pdfs = hostile.write_all(WORKDIR)
    proc, url = http_server()
    headers = {"Authorization": f"Bearer {TOKEN}"}
    try:
        deadline = time.monotonic() + 30
        async with httpx2.AsyncClient(headers=headers) as probe:
            while True:
                try:
                    await probe.get(url)
                    break
                except httpx2.ConnectError:
                    assert time.monotonic() < deadline, "tackle serve --http did not listen"
                    await asyncio.sleep(0.1)
        async with (
            httpx2.AsyncClient(headers=headers, timeout=120) as client_a,
            httpx2.AsyncClient(headers=headers, timeout=120) as client_b,
            streamable_http_client(url, http_client=client_a) as (read_a, write_a),
            streamable_http_client(url, http_client=client_b) as (read_b, write_b),
            ClientSession(read_a, write_a) as attacker,
            ClientSession(read_b, write_b) as bystander,
        ):
            await attacker.initialize()
            await bystander.initialize()
            attacks_done = anyio.Event()
            bystander_reads = 0

            async def keep_working():
                nonlocal bystander_reads
                while not attacks_done.is_set():
                    hello = await bystander.call_tool("read", {"path": "hello.txt"})
                    assert "1: hello world" in text(hello), text(hello)
                    bystander_reads += 1
                    await anyio.sleep(0.05)

            async def attack():
                try:
                    for name in pdfs:
                        started = time.monotonic()
                        result = await attacker.call_tool("read", {"path": name})
                        said = text(result)
                        assert result.is_error, (name, said[:500])
                        assert "PDF could not be read" in said, (name, said[:500])
                        assert time.monotonic() - started < 60, name
                    shown = await attacker.call_tool(
                        "bash", {"command": f"cat {hostile.CURSOR_FORWARD}"})
                    assert len(text(shown)) < 64 * 1024, len(text(shown))
                    job = await attacker.call_tool("bash", {
                        "command": f"cat {hostile.CURSOR_FORWARD}; sleep 0.2",
                        "background": True})
                    assert not job.is_error, text(job)
                    await anyio.sleep(0.5)
                    output = await attacker.call_tool("job_output", {"id": "job_1"})
                    assert len(text(output)) < 64 * 1024, len(text(output))
                    pattern = await attacker.call_tool(
                        "grep", {"pattern": "a" * (3 << 20)})
                    assert pattern.is_error, text(pattern)[:500]
                    # The attacker's own session goes on too.
                    hello = await attacker.call_tool("read", {"path": "hello.txt"})
                    assert "1: hello world" in text(hello), text(hello)
                finally:
                    attacks_done.set()

            async with anyio.create_task_group() as group:
                group.start_soon(keep_working)
                group.start_soon(attack)
            assert bystander_reads > 0
        assert proc.poll() is None, f"tackle serve died: {proc.returncode}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def resources():
    async with stdio_client(server("--ask", "allow-once")) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            big = await session.call_tool("bash", {"command": "seq 1 5000"})
            assert not big.is_error, big
            shown = text(big)
            assert "tool-output://" in shown, shown[-500:]
            listed = await session.list_resources()
            uris = [str(r.uri) for r in listed.resources]
            assert len(uris) == 1 and uris[0] in shown, (uris, shown[-500:])
            lines = []
            uri = uris[0]
            for _ in range(20):
                page = await session.read_resource(uri)
                contents = page.contents[0]
                lines.extend(contents.text.splitlines())
                nxt = (contents.meta or {}).get("next")
                if not nxt:
                    break
                uri = nxt
            assert lines[:2] == ["1", "2"], lines[:5]
            # The whole text the model would have read: every number, then bash's status line.
            numbers = [l for l in lines if l.isdigit()]
            assert numbers == [str(n) for n in range(1, 5001)], (len(numbers), lines[-5:])
            stolen = uris[0]
    # Another session (another connection) cannot read it, nor list it.
    async with stdio_client(server()) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            assert (await session.list_resources()).resources == []
            try:
                await session.read_resource(stolen)
                raise AssertionError("another session read the output")
            except Exception as err:
                assert "no such resource" in str(err), err


async def progress():
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, total, message))

    async with stdio_client(server("--ask", "allow-once")) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool(
                "bash",
                {"command": "for i in 1 2 3; do echo line$i; sleep 0.4; done"},
                progress_callback=on_progress,
            )
            got = list(seen)  # what had arrived when the result did
            assert not result.is_error, text(result)
            assert [m for _, _, m in got] == ["line1", "line2", "line3"], got
            amounts = [p for p, _, _ in got]
            assert amounts == sorted(set(amounts)) and amounts[-1] == 18, got
            assert all(total is None for _, total, _ in got), got
            # Without a progress callback the SDK sends no token: no notification, same result.
            quiet = await session.call_tool("bash", {"command": "echo one; echo two"})
            assert "two" in text(quiet) and len(seen) == len(got), seen


async def roots():
    import pathlib
    import tempfile

    import anyio

    first = tempfile.mkdtemp(dir=DATADIR)
    with open(os.path.join(first, "a.txt"), "w") as f:
        f.write("in the first root\n")
    current = [first]

    async def list_roots(context):
        return types.ListRootsResult(
            roots=[types.Root(uri=pathlib.Path(current[0]).as_uri(), name="workspace")]
        )

    # No --dir: the Location is the client's first root.
    params = StdioServerParameters(
        command=TACKLE,
        args=["serve", "--data-dir", DATADIR, "--ask", "allow-once"],
        cwd=DATADIR,
        env=dict(os.environ),
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, list_roots_callback=list_roots) as session:
            await session.initialize()
            a = await session.call_tool("read", {"path": "a.txt"})
            assert not a.is_error and "in the first root" in text(a), text(a)
            slow = {}

            async def in_flight():
                slow["result"] = await session.call_tool("bash", {"command": "sleep 1.5; pwd"})

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(in_flight)
                await anyio.sleep(0.5)
                current[0] = WORKDIR
                await session.send_roots_list_changed()
                # The server lists the roots again, then serves from the new Location.
                deadline = time.monotonic() + 30
                while True:
                    hello = await session.call_tool("read", {"path": "hello.txt"})
                    if not hello.is_error:
                        break
                    assert time.monotonic() < deadline, text(hello)
                    await anyio.sleep(0.1)
                assert "1: hello world" in text(hello), text(hello)
            # The call that was running when the roots changed finished where it started.
            pwd = text(slow["result"])
            assert os.path.realpath(first) in pwd, pwd
            gone = await session.call_tool("read", {"path": "a.txt"})
            assert gone.is_error, text(gone)


SCENARIOS = {
    "progress": progress,
    "roots": roots,
    "resources": resources,
    "http": over_http,
    "hostile": survives_hostile_files,
    "basics": basics,
    "deny": deny_by_default,
    "cancel": cancel,
    "elicitation": elicitation,
}

asyncio.run(SCENARIOS[SCENARIO]())
print("ok")
