"""FastMCP's proxy in front of a stdio MCP server, served as Streamable HTTP at /mcp.

The gateway cells of scripts/bench.sh run it as
`python fastmcp_proxy.py PORT COMMAND [ARG ...]`. It is FastMCP's documented way to expose a
stdio server over HTTP (`create_proxy` over a `StdioTransport`), with its defaults, except
that the log level is WARNING so that uvicorn does not log every request.
"""

import sys

from fastmcp.client.transports import StdioTransport
from fastmcp.server import create_proxy


def main() -> None:
    port, command, *args = sys.argv[1:]
    proxy = create_proxy(StdioTransport(command, args), name="fastmcp-proxy")
    proxy.run(
        transport="streamable-http",
        host="127.0.0.1",
        port=int(port),
        path="/mcp",
        log_level="WARNING",
        show_banner=False,
    )


if __name__ == "__main__":
    main()
