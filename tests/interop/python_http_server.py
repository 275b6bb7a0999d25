#!/usr/bin/env python3
"""A Streamable HTTP server built with the official Python MCP SDK (`mcp` 2.3.0), for our client.

Usage: python tests/interop/python_http_server.py <port> [--sse]
       python tests/interop/python_http_server.py <port> --tls <cert.pem> <key.pem>
       python tests/interop/python_http_server.py --stdio

Serves http://127.0.0.1:<port>/mcp until killed (with `--sse`: only the deprecated 2024-11-05
HTTP+SSE transport, `GET /sse` and `POST /messages/`, which our client must fall back to; with
`--tls`: https://127.0.0.1:<port>/mcp, by uvicorn's own `ssl_*` options). The SDK serves both eras on that one endpoint:
2025-11-25 sessions (`initialize`, `Mcp-Session-Id`, GET stream, DELETE) and stateless 2026-07-28
requests (checked against their `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and
`Mcp-Param-*` headers). `crates/modelcontext/examples/http_client.rs` holds the expectations.
"""

from __future__ import annotations

import sys
from typing import Annotated

from pydantic import Field

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

mcp = MCPServer("PyInterop", version="1.0.0", instructions="Interop fixture for modelcontext.")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
def fail(message: str) -> str:
    """Always fails with `message` (the client must see a result with isError and the text)."""
    raise ToolError(message)


@mcp.tool()
async def count(steps: int, ctx: Context) -> str:
    """Count to `steps`, reporting progress at every step (so the answer is an SSE stream)."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps)
    return f"counted to {steps}"


@mcp.tool()
def region(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
    """Echo the region, mirrored into the `Mcp-Param-Region` header on the 2026-07-28 wire."""
    return f"region={region}"


if __name__ == "__main__":
    args = sys.argv[1:]
    if args == ["--stdio"]:
        # The same server over stdio: `interop-python.sh` drives it with our `mcp` command.
        mcp.run("stdio")
        sys.exit(0)
    if len(args) == 4 and args[0].isdigit() and args[1] == "--tls":
        # Streamable HTTP behind TLS: the SDK's app, served by uvicorn with a certificate.
        import uvicorn

        app = mcp.streamable_http_app(host="127.0.0.1")
        uvicorn.run(app, host="127.0.0.1", port=int(args[0]), ssl_certfile=args[2],
                    ssl_keyfile=args[3], log_level="warning")
        sys.exit(0)
    if len(args) not in (1, 2) or not args[0].isdigit() or args[1:] not in ([], ["--sse"]):
        sys.exit("usage: python_http_server.py <port> [--sse | --tls <cert> <key>] | --stdio")
    transport = "sse" if args[1:] == ["--sse"] else "streamable-http"
    mcp.run(transport, host="127.0.0.1", port=int(args[0]))
