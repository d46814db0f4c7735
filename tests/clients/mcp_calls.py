"""Calls wearhouse's MCP endpoint with an independent client (PyPI's `mcp` package).

    python3 mcp_calls.py <url of /mcp> <calls.json> <answers.json>

calls.json: {"key": "<API key>", "calls": [{"tool": name, "arguments": {...}, "key": optional
other key}]}. Writes {"tools": [{name, description, input_schema}], "answers": [{tool, is_error,
text, structured}]} in the order of the calls. A connection-level failure is an answer too
(`failed`), so the test says which call broke.
"""

import asyncio
import json
import sys

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def session_call(url, key, fn):
    http = httpx2.AsyncClient(headers={"X-Service-API-Key": key}, timeout=httpx2.Timeout(60))
    async with http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await fn(session)


async def main(url, calls_path, out_path):
    spec = json.load(open(calls_path))
    key = spec["key"]

    async def list_tools(session):
        tools = (await session.list_tools()).tools
        return [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in tools
        ]

    tools = await session_call(url, key, list_tools)
    answers = []
    for call in spec["calls"]:
        async def one(session, call=call):
            r = await session.call_tool(call["tool"], call.get("arguments", {}))
            text = "".join(getattr(c, "text", "") for c in r.content)
            return {"tool": call["tool"], "is_error": bool(r.is_error), "text": text,
                    "structured": r.structured_content}
        try:
            answers.append(await session_call(url, call.get("key", key), one))
        except BaseException as e:  # an ExceptionGroup from the transport's task group
            answers.append({"tool": call["tool"], "failed": repr(e)})
    json.dump({"tools": tools, "answers": answers}, open(out_path, "w"))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
