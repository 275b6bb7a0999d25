#!/usr/bin/env python3
"""Regenerates the seed corpora in fuzz/corpus/<target>/ from the vendored test suites (testdata/) and literal
JSON-RPC lines. Deterministic; run from anywhere: python3 fuzz/scripts/seed_corpus.py"""
import hashlib, json, os, random, shutil

HERE = os.path.dirname(os.path.abspath(__file__))
FUZZ = os.path.dirname(HERE)
TESTDATA = os.path.join(FUZZ, "..", "testdata")
CORPUS = os.path.join(FUZZ, "corpus")
rng = random.Random(8)

LINES = [
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}',
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
    b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
    b'{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"now","arguments":{}}}',
    b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"later","arguments":{}}}',
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"x"}}',
    b'{"jsonrpc":"2.0","id":4,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":5,"method":"resources/list","params":{"cursor":"bogus"}}',
    b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"now","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":7}}}',
    b'{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}',
    b'{"jsonrpc":"2.0","id":8,"method":"subscriptions/listen","params":{}}',
    b'{"jsonrpc":"2.0","id":9,"result":{}}',
    b'{"jsonrpc":"2.0","id":10,"error":{"code":-32601,"message":"Method not found","data":"x"}}',
    b'{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}',
    b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
    b'{"jsonrpc":"1.0","id":11,"method":"ping"}',
    b'[{"jsonrpc":"2.0","id":12,"method":"ping"}]',
    b'{"jsonrpc":"2.0","id":13,"method":"ping","id":14}',
    b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":9223372036854775807,"method":"logging/setLevel","params":{"level":"debug"}}',
    b'{"jsonrpc":"2.0","id":"\\u0000\\ud83d\\ude00","method":"prompts/get","params":{"name":"nope"}}',
    b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}',
    b'not json',
    b'{"jsonrpc":"2.0","id":15,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}}',
]

def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

def jsonsuite(pick):
    d = os.path.join(TESTDATA, "JSONTestSuite", "test_parsing")
    names = sorted(os.listdir(d))
    return [(n, open(os.path.join(d, n), "rb").read()) for n in rng.sample(names, pick)]

def uritemplates():
    out = []
    for f in ["spec-examples.json", "extended-tests.json", "negative-tests.json"]:
        suite = json.load(open(os.path.join(TESTDATA, "uritemplate-test", f)))
        for group in suite.values():
            for case in group["testcases"]:
                expected = case[1]
                if isinstance(expected, list):
                    expected = expected[0]
                out.append((case[0], expected if isinstance(expected, str) else ""))
    return out

for target in os.listdir(CORPUS) if os.path.isdir(CORPUS) else []:
    shutil.rmtree(os.path.join(CORPUS, target))

# jsonrpc_decode: literal lines and a sample of JSONTestSuite.
for i, line in enumerate(LINES):
    write("jsonrpc_decode", f"line-{i:02}", line)
for name, data in jsonsuite(24):
    write("jsonrpc_decode", name, data)

# stdio_framing: [limit/4, chunk seed, max chunk] + a stream of lines.
for i in range(30):
    lines = rng.sample(LINES, rng.randint(1, 5))
    sep = rng.choice([b"\n", b"\r\n", b"\n\n", b"\n \t\n"])
    stream = sep.join(lines) + rng.choice([b"", b"\n", b"\r\n"])
    if i % 5 == 0:
        stream = b"x" * rng.randint(200, 600) + b"\n" + stream  # oversized first line
    write("stdio_framing", f"seed-{i:02}", bytes([rng.randint(10, 80), rng.randint(0, 255), rng.randint(1, 64)]) + stream)

# engine_dispatch: scripts of frames (the harness appends a ping).
write("engine_dispatch", "empty", b"")
for i in range(30):
    lines = [LINES[0], LINES[1]] if i % 2 == 0 else []
    lines += rng.sample(LINES, rng.randint(1, 8))
    if i % 7 == 0:
        lines.append(b"y" * 600)
    write("engine_dispatch", f"script-{i:02}", b"\n".join(lines) + b"\n")

# sse_decode: [limit/4, chunk seed, max chunk] + an event stream.
SSE = [
    b"id: 1\nevent: message\nretry: 1500\ndata: {\"a\":1}\n\n",
    b"data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\r",
    b"\xef\xbb\xbf: hi\r\nid: 1\r\ndata: {\"x\":\"\xc3\xa9\"}\r\n\r\nevent: ping\ndata\n\n",
    b": keep-alive\n\n:\nfoo: bar\ndata:x\n\n",
    b"data:  two\ndata:none\ndata\n\n",
    b"id: prime-1\ndata:\n\nretry: 10\n\n",
    b"retry: 1s\nid: a\x00b\ndata: x\n\n",
    b"data: " + b"x" * 300 + b"\n\ndata: ok\n\n",
    b"data: aaaaaaaa\n" * 10 + b"\n",
    b"data: half",
    b"id: s1-4\nevent: message\ndata: line one\ndata: line two\ndata: three\n\n: keep-alive\n\nretry: 3000\n\nid: badid\ndata:\n\n",
    b"\xef\xbb",
    b"\xef\xbb\xbf\xef\xbb\xbfdata: twice\n\n",
]
for i in range(26):
    body = SSE[i % len(SSE)] if i < len(SSE) else b"".join(rng.sample(SSE, 3))
    write("sse_decode", f"seed-{i:02}", bytes([rng.randint(4, 80), rng.randint(0, 255), rng.randint(1, 16)]) + body)

# uri_template_parse and uri_template_match: the RFC 6570 suite.
cases = uritemplates()
seen = set()
picked = [c for c in cases if not (c[0] in seen or seen.add(c[0]))]
rng.shuffle(picked)
for i, (template, _) in enumerate(picked[:40]):
    write("uri_template_parse", f"rfc-{i:02}", template.encode())
MATCH = [
    ("books://{title}", "books://dune"),
    ("books://{title}", "books://..%2F..%2Fetc%2Fpasswd"),
    ("files://{+path}", "files://a/../../etc/passwd"),
    ("files://{+path}", "files://C:%5Cwindows"),
    ("files://{/path*}/edit", "files:///a/b/edit"),
    ("file:///{+path}", "file:///%00x"),
    ("s://{a}-{b}", "s://x-y-z"),
    ("s://{a}/{a}", "s://x/x"),
    ("s://x{?a,b}{&c}", "s://x?c=3&a=1&a=2"),
    ("s://x{;a,b}", "s://x;a=%2e%2e;b"),
    ("s://{.ext}", "s://.tar.gz"),
    ("s://{#frag}", "s://#..%5C.."),
    ("s://{x,y}", "s://%zz,1"),
    ("s://{var:3}", "s://%E2%82%AC"),
]
for i, (t, u) in enumerate(MATCH):
    write("uri_template_match", f"lit-{i:02}", f"{t}\n{u}".encode())
for i, (t, u) in enumerate([c for c in picked if c[1]][:20]):
    write("uri_template_match", f"rfc-{i:02}", f"{t}\n{u}".encode())

# http_headers: allow-list lines and header values.
HEADERS = [
    "H:localhost\nO:http://localhost:5173",
    "H:LOCALHOST:8000\nO:https://127.0.0.1",
    "H:[::1]:3000\nO:http://[::1]",
    "H:[::1]evil\nO:http://[::1]evil.example",
    "H:evil.example.com\nO:http://evil.example.com",
    "H:127.0.0.1.nip.io\nO:null",
    "H:localhost.evil.com\nO:file://localhost",
    "h:mcp.example.com\no:https://app.example.com\nH:mcp.example.com:443\nO:https://app.example.com",
    "h:mcp.example.com:8080\nH:mcp.example.com:8080\nO:https://other.example.com",
    "h:MCP.Example.com\nH:mcp.example.COM\nO:HTTPS://APP.EXAMPLE.COM",
    "off\nH:anything\nO:http://evil",
    "O:http://localhost:",
    "H:localhost:\nO:http://localhost/",
    "H:[::1\nO:http://[::1]/",
    "H:\nO:",
    "O:http://user@localhost",
    "H:localhost:80:80",
    "h:[::1]x\nH:[::1]x",
    "H:127.0.0.1:99999999999999999999",
]
for i, h in enumerate(HEADERS):
    write("http_headers", f"seed-{i:02}", h.encode())

# schema_validate: schema line + instance line.
SCHEMAS = [
    ('{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}', '{"a":"x"}'),
    ('{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}', '{"a":1}'),
    ('{"$ref":"https://example.com/schema.json"}', '{}'),
    ('{"$ref":"file:///etc/passwd"}', '{}'),
    ('{"$ref":"#/$defs/x","$defs":{"x":{"type":"integer"}}}', '3'),
    ('{"$ref":"#"}', '{}'),
    ('{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}', '{}'),
    ('{"type":"string","pattern":"^(a+)+$"}', '"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"'),
    ('{"type":"string","pattern":"(?<=a)b\\\\1"}', '"ab"'),
    ('{"type":"string","pattern":"["}', '"x"'),
    ('{"type":"string","format":"email"}', '"a@b"'),
    ('{"enum":[1,2,3,"a",null,{"x":[]}]}', '{"x":[]}'),
    ('{"type":"array","items":{"type":"array","items":{"type":"array","items":{"type":"integer"}}}}', '[[[1,2],[3]],[[4]]]'),
    ('{"properties":{"a":{"properties":{"a":{"properties":{"a":{"const":1}}}}}}}', '{"a":{"a":{"a":2}}}'),
    ('{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}', '{}'),
    ('{"$schema":"https://example.com/unknown"}', '{}'),
    ('{"$id":"http://example.com/root","$ref":"other"}', '{}'),
    ('{"minLength":4294967296}', '"x"'),
    ('{"multipleOf":1e-300}', '1e300'),
    ('{"dependentSchemas":{"a":{"required":["b"]}},"unevaluatedProperties":false}', '{"a":1}'),
    ('{"anyOf":[{"type":"integer"},{"type":"string"}],"not":{"const":""}}', '""'),
    ('{"type":"object","additionalProperties":false,"properties":{}}', '{"x":1}'),
    ('{"contentEncoding":"base64","contentMediaType":"application/json"}', '"e30="'),
    ('{"$dynamicRef":"#meta","$dynamicAnchor":"meta"}', '{}'),
]
for i, (s, inst) in enumerate(SCHEMAS):
    write("schema_validate", f"seed-{i:02}", f"{s}\n{inst}".encode())
for name, data in jsonsuite(8):
    if data.lstrip().startswith(b"{"):
        write("schema_validate", name, data)

# The four targets added later draw from their own generator, so the seeds above stay as they were.
rng2 = random.Random(9)

# message_roundtrip: [revision, definition] + bytes for `Unstructured`: every definition of the
# target's table in both revisions, with random bytes (the generator makes any bytes an instance).
for rev in range(2):
    for d in range(45):
        write("message_roundtrip", f"seed-{rev}-{d:02}", bytes([rev, d]) + rng2.randbytes(rng2.choice([16, 96, 400])))

# sse_roundtrip: [limit/8, chunk seed, max chunk] + bytes for `Unstructured`.
for i in range(24):
    body = rng2.randbytes(rng2.choice([8, 64, 256])) if i % 3 else b"".join(LINES[i % len(LINES) : i % len(LINES) + 3])
    write("sse_roundtrip", f"seed-{i:02}", bytes([rng2.randint(0, 40), rng2.randint(0, 255), rng2.randint(1, 32)]) + body)

# http_request: whole HTTP/1.1 exchanges, as a client writes them.
MODERN_META = b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
def post(body, headers=b"", accept=b"application/json, text/event-stream", ctype=b"application/json", host=b"localhost"):
    return (b"POST /mcp HTTP/1.1\r\nHost: " + host + b"\r\nAccept: " + accept + b"\r\nContent-Type: " + ctype
            + b"\r\n" + headers + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
def modern(method, params=b"", name=None, rid=b"1"):
    sep = b"," if params else b""
    body = b'{"jsonrpc":"2.0","id":' + rid + b',"method":"' + method + b'","params":{' + params + sep + MODERN_META + b"}}"
    headers = b"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: " + method + b"\r\n"
    if name:
        headers += b"Mcp-Name: " + name + b"\r\n"
    return post(body, headers)
HTTP = [
    post(LINES[0]),
    post(LINES[0]) + post(LINES[1]) + post(LINES[2]),
    modern(b"server/discover"),
    modern(b"tools/list"),
    modern(b"tools/call", b'"name":"now","arguments":{}', b"now"),
    modern(b"tools/call", b'"name":"later","arguments":{}', b"later"),
    modern(b"tools/call", b'"name":"later"', b"now"),
    modern(b"tools/call", b'"name":"nope"', b"nope"),
    modern(b"subscriptions/listen", b'"notifications":{"toolsListChanged":true}'),
    modern(b"resources/read", b'"uri":"file:///x"', b"file:///x"),
    modern(b"prompts/get", b'"name":"p"', b"p"),
    post(b'{"jsonrpc":"2.0","method":"notifications/initialized"}'),
    post(b'{"jsonrpc":"2.0","id":9,"result":{}}'),
    post(b"not json"),
    post(b'{"jsonrpc":"2.0","id":4,"method":"ping"}'),
    post(b'{"jsonrpc":"2.0","id":4,"method":"ping"}', b"Mcp-Session-Id: 0123456789abcdef\r\n"),
    post(LINES[0], host=b"evil.example"),
    post(LINES[0], b"Origin: http://evil.example\r\n"),
    post(LINES[0], accept=b"text/html"),
    post(LINES[0], ctype=b"text/plain"),
    post(b"{" * 3000),
    b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        + hex(len(LINES[6]))[2:].encode() + b"\r\n" + LINES[6] + b"\r\n0\r\n\r\n",
    b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{}",
    b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}",
    b"GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n",
    b"GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: x\r\nLast-Event-ID: 0/1\r\n\r\n",
    b"DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: x\r\n\r\n",
    b"OPTIONS /mcp HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n\r\n",
    b"HEAD /mcp HTTP/1.1\r\nHost: [::1]\r\n\r\n",
    b"POST /mcp HTTP/1.0\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\r\n" + LINES[6],
    b"GET / HTTP/1.1\r\n\r\n",
    b"garbage\r\n\r\n",
]
for i, raw in enumerate(HTTP):
    write("http_request", f"seed-{i:02}", raw)

# bearer_token: [mode] + header value (0), token (1), or `Unstructured` bytes (2: signed, 3: forged).
HEADERS = [b"Bearer abc", b"bearer  a.b.c", b"BEARER eyJhbGciOiJFZERTQSJ9.e30.c2ln", b"Basic Zm9vOmJhcg==",
           b"Bearer ", b"Bearer a=b", b"Bearer abc==", b"Bearer \x80", b"Bearer a b", b"  Bearer   x  "]
TOKENS = [b"eyJhbGciOiJub25lIn0.e30.", b"eyJhbGciOiJIUzI1NiJ9.e30.AAAA", b"a.b", b"...", b"eyJ9.eyJ9.eyJ9",
          b"eyJhbGciOiJSUzI1NiIsImtpZCI6InJzYSJ9.eyJpc3MiOiJ4In0.AAAA"]
for i, h in enumerate(HEADERS):
    write("bearer_token", f"header-{i:02}", b"\x00" + h)
for i, t in enumerate(TOKENS):
    write("bearer_token", f"token-{i:02}", b"\x01" + t)
write("bearer_token", "signed-pristine", b"\x02")
for i in range(8):
    write("bearer_token", f"signed-{i:02}", b"\x02" + rng2.randbytes(rng2.choice([4, 16, 48])))
for i in range(6):
    write("bearer_token", f"forged-{i:02}", b"\x03" + rng2.randbytes(rng2.choice([2, 8, 24])))
