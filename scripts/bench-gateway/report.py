"""Writes the gateway section of BENCHMARKS.md from a run of scripts/bench-gateway/run.sh.

Usage: report.py RUN_DIR MACHINE_MD BENCHMARKS_MD

The section replaces the file's previous gateway section, or is appended when there is none;
the rest of the file is left as it is.
"""

import json
import os
import re
import sys
from collections import defaultdict

TITLE = "## Gateway (issue: compose/proxy/mcp serve)"
FLOOR, OURS = "floor", "mcp-serve"
NAMES = {
    FLOOR: "floor's own HTTP server (no gateway)",
    OURS: "**`mcp serve`** in front of the stdio floor",
    "supergateway": "supergateway in front of the stdio floor",
    "fastmcp": "FastMCP's proxy in front of the stdio floor",
}
CELLS = {"http_c1": "HTTP C=1", "http_c32": "HTTP C=32"}


def load_runs(run):
    runs, order = defaultdict(list), []
    with open(os.path.join(run, "results.jsonl")) as f:
        for line in f:
            if line.strip():
                record = json.loads(line)
                server, cell = record["label"].split("/")[:2]
                if server not in order:
                    order.append(server)
                runs[(server, cell)].append(record)
    return runs, order


def mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def ratio(a, b):
    return None if a is None or not b else a / b


def fmt_ratio(x):
    return "-" if x is None else f"{x:.2f}x"


def fmt_rate(x):
    if x is None:
        return "-"
    return f"{x / 1000:.1f}k" if x >= 1000 else f"{x:.0f}"


def fmt_us(x):
    if x is None:
        return "-"
    return f"{x / 1000:.1f} ms" if x >= 10000 else f"{x:,.0f} µs"


class Run:
    def __init__(self, run):
        self.runs, self.order = load_runs(run)

    def records(self, server, cell):
        return self.runs.get((server, cell), [])

    def field(self, server, cell, key):
        return mean([r.get(key) for r in self.records(server, cell)])

    def rate(self, server, cell):
        return self.field(server, cell, "calls_per_s")

    def rounds(self, server, cell):
        rates = [r["calls_per_s"] for r in self.records(server, cell)]
        return " / ".join(fmt_rate(v) for v in rates)

    def errors(self, server, cell):
        return sum(r.get("errors", 0) + r.get("mismatches", 0) for r in self.records(server, cell))

    def noisy(self, server, cell):
        return any((r.get("foreign_cpu_pct") or 0) > 10 for r in self.records(server, cell))

    def peak_rss_mb(self, server):
        values = [r.get("rss_peak_kb") for c in CELLS for r in self.records(server, c)]
        values = [v for v in values if v]
        return max(values) / 1024 if values else None


def results_table(run):
    lines = ["| server | " + " | ".join(
        f"{t}: calls/s (rounds) | {t}: p50 / p99" for t in CELLS.values()) +
        " | server CPU µs/call C=1 / C=32 | peak RSS (with upstream) |",
        "|---|" + "---:|" * (2 * len(CELLS) + 2)]
    for server in run.order:
        cells = []
        for cell in CELLS:
            rate = run.rate(server, cell)
            if rate is None:
                cells += ["-", "-"]
                continue
            marks = " †" if run.noisy(server, cell) else ""
            bad = run.errors(server, cell)
            marks += f" **{bad} errors**" if bad else ""
            cells.append(f"{fmt_rate(rate)} ({run.rounds(server, cell)}){marks}")
            cells.append(f"{fmt_us(run.field(server, cell, 'p50_us'))} / "
                         f"{fmt_us(run.field(server, cell, 'p99_us'))}")
        cpu = [run.field(server, c, "server_cpu_us_per_call") for c in CELLS]
        cells.append(" / ".join("-" if v is None else f"{v:.1f}" for v in cpu))
        rss = run.peak_rss_mb(server)
        cells.append("-" if rss is None else f"{rss:.1f} MiB")
        lines.append(f"| {NAMES.get(server, server)} | " + " | ".join(cells) + " |")
    return lines


def idle_memory(run_dir):
    path = os.path.join(run_dir, "idle.jsonl")
    idle = {}
    if os.path.exists(path):
        for line in open(path):
            if line.strip():
                record = json.loads(line)
                idle[record["label"].split("/")[0]] = record
    return idle


def target_rows(run, idle):
    rows = []

    def target(name, value, goal, ok):
        status = "not measured" if ok is None else ("met" if ok else "MISSED")
        rows.append(f"| {name} | {value} | {goal} | {status} |")

    for cell, need in (("http_c1", 0.8), ("http_c32", 0.7)):
        r = ratio(run.rate(OURS, cell), run.rate(FLOOR, cell))
        target(f"{CELLS[cell]}: throughput", f"{fmt_ratio(r)} the floor's direct HTTP",
               f">= {need}x", None if r is None else r >= need)
    p99 = ratio(run.field(OURS, "http_c32", "p99_us"), run.field(FLOOR, "http_c32", "p99_us"))
    target("HTTP C=32: p99 latency", f"{fmt_ratio(p99)} the floor's direct HTTP", "<= 2x",
           None if p99 is None else p99 <= 2)
    for peer in ("supergateway", "fastmcp"):
        for cell in CELLS:
            r = ratio(run.rate(OURS, cell), run.rate(peer, cell))
            target(f"{CELLS[cell]}: throughput against {NAMES[peer].split(' in ')[0]}",
                   fmt_ratio(r), ">= 10x", None if r is None else r >= 10)
    ours, bench = idle.get(OURS), idle.get("bench_server")
    if ours and bench:
        r = ratio(ours["rss_kb"], bench["rss_kb"])
        value = (f"{fmt_ratio(r)}: {ours['rss_kb'] / 1024:.1f} MiB vs bench_server "
                 f"{bench['rss_kb'] / 1024:.1f} MiB (with the floor child: "
                 f"{ours['tree_rss_kb'] / 1024:.1f} MiB)")
        target("idle RSS of `mcp serve` with one stdio upstream", value, "<= 2x bench_server", r <= 2)
    else:
        target("idle RSS of `mcp serve` with one stdio upstream", "-", "<= 2x bench_server", None)
    return rows


def peers_lines(run_dir):
    path = os.path.join(run_dir, "peers.txt")
    lines = []
    for line in open(path) if os.path.exists(path) else []:
        name, status, detail = line.rstrip("\n").split("|", 2)
        state = "" if status == "ok" else "**not measured**: "
        lines.append(f"- {name}: {state}{detail}")
    return lines


def section(run_dir, machine_md):
    run = Run(run_dir)
    idle = idle_memory(run_dir)
    rounds = max((len(run.records(s, c)) for s in run.order for c in CELLS), default=0)
    lines = [TITLE, ""]
    lines.append(
        "Generated by `bash scripts/bench.sh gateway` (`scripts/bench-gateway/`): HTTP "
        "`tools/call add` through the harness's load generator, at C=1 and C=32, against the "
        "floor's own Streamable HTTP server and against three gateways, each in front of the "
        "floor's stdio server (`server-floor`, started by the gateway as its child): `mcp serve "
        "--http 127.0.0.1:PORT --stdio -- server-floor` (release, the harness's profile), "
        "supergateway (`--stdio … --outputTransport streamableHttp --stateful`) and FastMCP's "
        "proxy (`create_proxy(StdioTransport(…))` served with streamable-http, "
        "`scripts/bench-gateway/fastmcp_proxy.py`). A fresh server for every cell; "
        f"{rounds} interleaved round(s), mean shown, each round in brackets. Peak RSS is that of "
        "the server's process tree (gateway plus its floor child). † = another process used "
        ">10% of the machine during that cell. Raw JSON lines: "
        f"`{os.path.relpath(run_dir)}/results.jsonl`.")
    lines += ["", open(machine_md).read().rstrip(), ""]
    lines += peers_lines(run_dir) + [""]
    lines += results_table(run) + [""]
    lines.append("Idle memory: VmRSS of the server after one session of 10 calls and 2 s idle; "
                 "`bench_server` is our bench server (`crates/modelcontext-bench`) over HTTP.")
    lines += ["", "| target | measured | goal | status |", "|---|---|---|---|"]
    lines += target_rows(run, idle) + [""]
    return "\n".join(lines)


def splice(path, text):
    old = open(path).read() if os.path.exists(path) else ""
    pattern = re.compile(re.escape(TITLE) + r".*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(old):
        new = pattern.sub(lambda _: text + "\n", old, count=1)
    else:
        new = old.rstrip("\n") + "\n\n" + text + "\n"
    with open(path, "w") as f:
        f.write(new)


def main():
    run_dir, machine_md, out = sys.argv[1:4]
    splice(out, section(run_dir, machine_md))


if __name__ == "__main__":
    main()
