#!/usr/bin/env python3
"""Drive the Rust `bookshop` example with the official Python MCP client (`mcp` 2.3.0).

Usage: python tests/interop/python_bookshop.py [--cafile CA.pem] [--http2] <target> [<target> ...]

A target is the path of the bookshop binary (spawned over stdio) or the URL of a running
`bookshop --http` endpoint (`http://127.0.0.1:PORT/mcp`, or `https://...` when bookshop serves
TLS: the client, an `httpx2.AsyncClient` handed to the SDK's transport, then trusts the CA in
`--cafile` and nothing else, and speaks HTTP/2 with `--http2`, HTTP/1.1 without; the check
`tls.http_version` says which one every answer came in). Each target is driven once per client
mode (`legacy`, `2026-07-28`, `auto`). Every check prints one line,
`ok <transport>/<mode> <check>` or `FAIL <transport>/<mode> <check>: <detail>`, and the run ends
with exactly one `N passed, M failed` line (CI reads it). The exit code is 1 when anything failed.

The expectations are the "Handling errors" chapter (the rustdoc chapter `modelcontext::docs::handling_errors`): a plain tool
error is an `is_error` result carrying the message, an `McpError` is a JSON-RPC error, and a
missing resource is -32602 with the URI in `data`.
"""

from __future__ import annotations

import contextlib
import ssl
import sys
import traceback
from typing import Any, Awaitable, Callable

import anyio
import httpx2
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

MODES: list[tuple[str, str]] = [
    # (client mode, the protocol version it must end up on)
    ("legacy", "2025-11-25"),
    ("2026-07-28", "2026-07-28"),
    ("auto", "2026-07-28"),
]

MODE_TIMEOUT_S = 30.0  # a hang fails the mode instead of blocking CI
REQUEST_TIMEOUT_S = 10.0  # per request, inside the mode budget

MISSING = "No book titled 'Nothing' in the catalog."

# Every check, in order; any not reached (the session died or timed out) counts as failed.
CHECKS = [
    "protocol_version",
    "server_info",
    "list_tools.names",
    "list_tools.get_author.description",
    "list_tools.search_books.input_schema",
    "call_tool.get_author.found",
    "call_tool.get_author.missing",
    "call_tool.get_author_strict.missing",
    "call_tool.search_books.limit_too_big",
    "call_tool.get_author.wrong_type",
    "read_resource.found",
    "read_resource.missing",
    "read_resource.unknown",
    "list_prompts.review",
    "get_prompt.review",
]


class CheckFailed(Exception):
    pass


def expect(cond: bool, detail: str) -> None:
    if not cond:
        raise CheckFailed(detail)


class Report:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0
        self.seen: dict[str, set[str]] = {}

    def ok(self, mode: str, check: str) -> None:
        self.seen.setdefault(mode, set()).add(check)
        self.passed += 1
        print(f"ok {mode} {check}", flush=True)

    def fail(self, mode: str, check: str, detail: str) -> None:
        self.seen.setdefault(mode, set()).add(check)
        self.failed += 1
        detail = detail.replace("\n", "\\n")
        print(f"FAIL {mode} {check}: {detail}", flush=True)

    async def run(self, mode: str, check: str, body: Callable[[], Awaitable[None]]) -> None:
        try:
            await body()
        except CheckFailed as e:
            self.fail(mode, check, str(e))
        except MCPError as e:
            self.fail(mode, check, f"unexpected MCPError code={e.code} message={e.message!r} data={e.data!r}")
        except Exception as e:  # noqa: BLE001 - any other failure is a failed check, not a crash
            self.fail(mode, check, f"unexpected {type(e).__name__}: {e}")
        else:
            self.ok(mode, check)


def texts(content: list[Any]) -> list[str]:
    return [getattr(block, "text", None) for block in content]


def describe_content(content: list[Any]) -> str:
    return repr([(getattr(b, "type", type(b).__name__), getattr(b, "text", None)) for b in content])


async def expect_mcp_error(call: Awaitable[Any], code: int, message: str, data: Any = ..., *, what: str) -> None:
    try:
        result = await call
    except MCPError as e:
        expect(e.code == code, f"{what}: code {e.code} (message {e.message!r}), want {code}")
        expect(e.message == message, f"{what}: message {e.message!r}, want {message!r}")
        if data is not ...:
            expect(e.data == data, f"{what}: data {e.data!r}, want {data!r}")
        return
    raise CheckFailed(f"{what}: no MCPError raised; got a result {result!r}")


def is_url(target: str) -> bool:
    return target.startswith(("http://", "https://"))


def scheme(target: str) -> str:
    return target.split("://", 1)[0] if is_url(target) else "stdio"


class Https:
    """How https targets are reached: the CA to trust, HTTP/2 or not; and the HTTP versions
    the answers came in (httpx2 records each response's)."""

    def __init__(self, cafile: str | None, http2: bool) -> None:
        self.cafile = cafile
        self.http2 = http2
        self.versions: set[str] = set()

    def want_version(self) -> str:
        return "HTTP/2" if self.http2 else "HTTP/1.1"

    async def record(self, response: httpx2.Response) -> None:
        self.versions.add(response.http_version)


async def server_for(stack: contextlib.AsyncExitStack, target: str, https: Https) -> Any:
    """What `Client` connects to: the URL itself over http, a transport whose httpx2 client
    trusts `--cafile` over https (the SDK's own default client would trust the system store)."""
    if not is_url(target):
        return StdioServerParameters(command=target, args=[])
    if scheme(target) != "https":
        return target
    if https.cafile is None:
        raise CheckFailed(f"{target}: an https target needs --cafile")
    tls = ssl.create_default_context(cafile=https.cafile)
    http = httpx2.AsyncClient(
        verify=tls,
        http1=not https.http2,
        http2=https.http2,
        # The SDK's default timeouts (create_mcp_http_client): 30 s, and 300 s to read SSE.
        timeout=httpx2.Timeout(30.0, read=300.0),
        event_hooks={"response": [https.record]},
    )
    await stack.enter_async_context(http)
    return streamable_http_client(target, http_client=http)


async def check_mode(
    target: str, label: str, mode: str, want_version: str, report: Report, https: Https
) -> None:
    async with contextlib.AsyncExitStack() as stack:
        server = await server_for(stack, target, https)
        client = await stack.enter_async_context(
            Client(server, mode=mode, read_timeout_seconds=REQUEST_TIMEOUT_S)
        )
        await check_client(client, label, mode, want_version, report)
        if scheme(target) == "https":

            async def http_version() -> None:
                want = https.want_version()
                expect(https.versions == {want}, f"answers came in {sorted(https.versions)}, want {want}")

            https.versions.clear()
            await client.list_tools()
            await report.run(label, "tls.http_version", http_version)


async def check_client(client: Client, label: str, mode: str, want_version: str, report: Report) -> None:
    r = report.run

    async def protocol_version() -> None:
        got = client.protocol_version
        expect(got == want_version, f"negotiated {got!r}, want {want_version!r}")

    await r(label, "protocol_version", protocol_version)

    async def server_info() -> None:
        if mode in ("legacy", "auto"):
            info = client.server_info
            expect(info is not None, "server_info is None")
            expect(info.name == "Bookshop", f"server name {info.name!r}, want 'Bookshop'")
            return
        # A pinned client sends no discover and so knows no serverInfo: probe server/discover
        # by hand (at the end, so the first request of this connection was an ordinary one).
        raw = await client.session.send_discover(want_version)
        supported = raw.get("supportedVersions")
        expect(
            isinstance(supported, list) and want_version in supported,
            f"server/discover supportedVersions {supported!r} lacks {want_version!r}",
        )
        info = (raw.get("_meta") or {}).get("io.modelcontextprotocol/serverInfo") or {}
        expect(info.get("name") == "Bookshop", f"serverInfo stamp {info!r}, want name 'Bookshop'")

    if mode in ("legacy", "auto"):
        await r(label, "server_info", server_info)

    tools: dict[str, Any] = {}

    async def list_tools() -> None:
        result = await client.list_tools()
        tools.update({t.name: t for t in result.tools})
        want = {"get_author", "get_author_strict", "search_books"}
        expect(want <= tools.keys(), f"tools {sorted(tools)}, missing {sorted(want - tools.keys())}")

    await r(label, "list_tools.names", list_tools)

    async def get_author_description() -> None:
        expect("get_author" in tools, "get_author not listed")
        desc = tools["get_author"].description
        want = "Look up the author of a book in the catalog."
        expect(desc == want, f"description {desc!r}, want {want!r}")

    await r(label, "list_tools.get_author.description", get_author_description)

    async def search_books_schema() -> None:
        expect("search_books" in tools, "search_books not listed")
        schema = tools["search_books"].input_schema
        props = schema.get("properties") or {}
        limit = props.get("limit")
        expect(isinstance(limit, dict), f"no 'limit' property in {schema!r}")
        for key, want in (("minimum", 1), ("maximum", 50), ("default", 10)):
            expect(limit.get(key) == want, f"limit.{key} = {limit.get(key)!r}, want {want!r} (limit: {limit!r})")
        expect("query" in props, f"no 'query' property in {schema!r}")
        required = schema.get("required") or []
        expect("query" in required, f"required {required!r} lacks 'query'")
        expect("limit" not in required, f"required {required!r} has 'limit', which has a default")

    await r(label, "list_tools.search_books.input_schema", search_books_schema)

    async def get_author_found() -> None:
        res = await client.call_tool("get_author", {"title": "Dune"})
        expect(not res.is_error, f"is_error=True, content {describe_content(res.content)}")
        expect(texts(res.content) == ["Frank Herbert"], f"content {describe_content(res.content)}, want one text 'Frank Herbert'")

    await r(label, "call_tool.get_author.found", get_author_found)

    async def get_author_missing() -> None:
        res = await client.call_tool("get_author", {"title": "Nothing"})
        want = f"Error executing tool get_author: {MISSING}"
        expect(res.is_error is True, f"is_error={res.is_error!r}, content {describe_content(res.content)}")
        expect(
            len(res.content) == 1 and getattr(res.content[0], "type", None) == "text" and res.content[0].text == want,
            f"content {describe_content(res.content)}, want exactly one text block {want!r}",
        )
        expect(res.structured_content is None, f"structured_content {res.structured_content!r}, want None")

    await r(label, "call_tool.get_author.missing", get_author_missing)

    async def get_author_strict_missing() -> None:
        await expect_mcp_error(
            client.call_tool("get_author_strict", {"title": "Nothing"}),
            -32602,
            MISSING,
            what="get_author_strict",
        )

    await r(label, "call_tool.get_author_strict.missing", get_author_strict_missing)

    async def search_books_limit() -> None:
        res = await client.call_tool("search_books", {"query": "d", "limit": 999})
        expect(res.is_error is True, f"is_error={res.is_error!r}, content {describe_content(res.content)}")
        text = "\n".join(t or "" for t in texts(res.content))
        prefix = "Error executing tool search_books: "
        expect(text.startswith(prefix), f"text {text!r} does not start with {prefix!r}")
        expect("limit" in text and "50" in text, f"text {text!r} does not mention 'limit' and '50'")

    await r(label, "call_tool.search_books.limit_too_big", search_books_limit)

    async def get_author_wrong_type() -> None:
        res = await client.call_tool("get_author", {"title": 5})
        expect(res.is_error is True, f"is_error={res.is_error!r}, content {describe_content(res.content)}")
        text = "\n".join(t or "" for t in texts(res.content))
        prefix = "Error executing tool get_author: "
        expect(text.startswith(prefix), f"text {text!r} does not start with {prefix!r}")
        expect("title" in text, f"text {text!r} does not mention 'title'")

    await r(label, "call_tool.get_author.wrong_type", get_author_wrong_type)

    async def read_found() -> None:
        res = await client.read_resource("books://Dune")
        got = [getattr(c, "text", None) for c in res.contents]
        expect(got == ["Dune by Frank Herbert"], f"contents {res.contents!r}, want one text 'Dune by Frank Herbert'")

    await r(label, "read_resource.found", read_found)

    async def read_missing() -> None:
        await expect_mcp_error(
            client.read_resource("books://Nothing"),
            -32602,
            MISSING,
            {"uri": "books://Nothing"},
            what="books://Nothing",
        )

    await r(label, "read_resource.missing", read_missing)

    async def read_unknown() -> None:
        await expect_mcp_error(
            client.read_resource("nomatch://x"),
            -32602,
            "Unknown resource: nomatch://x",
            what="nomatch://x",
        )

    await r(label, "read_resource.unknown", read_unknown)

    async def prompts_listed() -> None:
        res = await client.list_prompts()
        names = [p.name for p in res.prompts]
        expect("review" in names, f"prompts {names!r} lack 'review'")

    await r(label, "list_prompts.review", prompts_listed)

    async def prompt_get() -> None:
        res = await client.get_prompt("review", {"title": "Dune"})
        msgs = res.messages
        expect(len(msgs) == 1, f"{len(msgs)} messages, want 1: {msgs!r}")
        msg = msgs[0]
        expect(msg.role == "user", f"role {msg.role!r}, want 'user'")
        text = getattr(msg.content, "text", None)
        expect(isinstance(text, str) and "Dune" in text, f"content {msg.content!r} does not contain 'Dune'")

    await r(label, "get_prompt.review", prompt_get)

    if mode not in ("legacy", "auto"):
        await r(label, "server_info", server_info)


def describe_leaves(e: BaseException) -> list[str]:
    """The innermost exceptions of anyio's nested ExceptionGroups, one `Type: message` each."""
    if isinstance(e, BaseExceptionGroup):
        return [leaf for sub in e.exceptions for leaf in describe_leaves(sub)]
    if isinstance(e, MCPError):
        return [f"MCPError code={e.code} message={e.message!r} data={e.data!r}"]
    return [f"{type(e).__name__}: {e}"]


async def main(targets: list[str], https: Https) -> int:
    report = Report()
    for target, (client_mode, want_version) in [(t, m) for t in targets for m in MODES]:
        transport = scheme(target) + ("-h2" if https.http2 and scheme(target) == "https" else "")
        mode = f"{transport}/{client_mode}"
        print(f"== {mode} ({target})", flush=True)
        try:
            with anyio.fail_after(MODE_TIMEOUT_S):
                await check_mode(target, mode, client_mode, want_version, report, https)
        except TimeoutError:
            report.fail(mode, "session", f"timed out after {MODE_TIMEOUT_S:.0f} s")
        except BaseException as e:  # noqa: BLE001 - ExceptionGroup from anyio, connection loss, ...
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            sys.stderr.write(traceback.format_exc())
            report.fail(mode, "session", "; ".join(describe_leaves(e)))
        seen = report.seen.get(mode, set())
        for check in CHECKS + (["tls.http_version"] if scheme(target) == "https" else []):
            if check not in seen:
                report.fail(mode, check, "not run (the session ended early)")
    print(f"{report.passed} passed, {report.failed} failed", flush=True)
    return 1 if report.failed else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    cafile = None
    if args[:1] == ["--cafile"] and len(args) >= 2:
        cafile, args = args[1], args[2:]
    http2 = args[:1] == ["--http2"]
    args = args[1:] if http2 else args
    if not args:
        sys.stderr.write(f"usage: {sys.argv[0]} [--cafile CA.pem] [--http2] <bookshop-binary | http(s)-url> ...\n")
        sys.exit(2)
    sys.exit(anyio.run(main, args, Https(cafile, http2)))
