"""The client side of crates/mcp/tests/list_changed.rs: the official Python MCP SDK on this
process's stdin and stdout, which the test serves `McpServer` on.

Tools `add_tool` ({"layer": ...}) and `drop_tools` change the catalog; the client must hear
`notifications/tools/list_changed` for its own session's catalog and not for another's.
Prints "ok" on stderr when every check passed (stdout is the protocol).
"""

import os
import sys
import traceback

import anyio
from mcp import ClientSession, types
from mcp.server.stdio import stdio_server

WAIT = 20  # generous: two loaded cores


async def checks(session, heard, current, reset):
    init = await session.initialize()
    assert init.capabilities.tools.list_changed is True, init.capabilities

    async def names():
        return {tool.name for tool in (await session.list_tools()).tools}

    async def heard_it():
        with anyio.fail_after(WAIT):
            await current().wait()

    assert "extra" not in await names()
    for layer in ["session", "location", "application"]:
        reset()
        added = await session.call_tool("add_tool", {"layer": layer})
        assert not added.is_error, added
        await heard_it()
        assert "extra" in await names(), layer

        reset()
        dropped = await session.call_tool("drop_tools", {})
        assert not dropped.is_error, dropped
        await heard_it()
        assert "extra" not in await names(), layer

    # Another session's tool changes nothing here: no announcement.
    before = len(heard)
    reset()
    other = await session.call_tool("add_tool", {"layer": "other"})
    assert not other.is_error, other
    with anyio.move_on_after(1):
        await current().wait()
    assert len(heard) == before, heard
    assert "extra" not in await names()


async def main():
    heard = []
    event = anyio.Event()

    def reset():
        nonlocal event
        event = anyio.Event()

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification):
            heard.append(message)
            event.set()

    async with stdio_server() as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            try:
                await checks(session, heard, lambda: event, reset)
            except BaseException:
                traceback.print_exc()
                sys.stderr.flush()
                os._exit(1)
            print("ok", file=sys.stderr, flush=True)
            # Leaving the session waits for the end of stdin, which the serving test holds
            # open until this process exits: exit now.
            os._exit(0)


anyio.run(main)
