#!/usr/bin/env python3
"""Turns the conformance suite's result directories into conformance/RESULTS.md and a verdict.

Run by scripts/conformance.sh. For each run (`<role>-<revision>`), every scenario's
checks.json is read; a scenario passes when none of its checks is a FAILURE (WARNING and
INFO do not fail). Scored scenarios are those the suite's requirements/<revision>.yaml lists
under `server:` / `client:`; a scored scenario that produced no results counts as failed.
Exits 1 on a scored failure that expected-failures.yml does not list, or on a listed scenario
that now passes (a stale entry), as the suite's own --expected-failures does; and on an
unscored scenario that expected-unscored-passes.yml lists for the run but that failed (a
regression nothing else would catch). Unscored passes missing from that list are reported.
Standard library only.
"""

import argparse
import json
import os
import re
import sys

TIMESTAMP = re.compile(r"-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$")
RUNS = ["server-2025-11-25", "server-2026-07-28", "client-2025-11-25", "client-2026-07-28"]


def read_requirements(path):
    """{'server': [...], 'client': [...]} scored, and {(leg, scenario): reason} not scored."""
    scored = {"server": [], "client": []}
    not_scored = {}
    section = None
    entry = {}
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.split("#", 1)[0].rstrip()
            if not line.strip():
                continue
            if not line.startswith(" "):
                section = line.rstrip(":").strip()
                continue
            item = re.match(r"^\s*-\s+(.*)$", line)
            if section in scored and item:
                scored[section].append(item.group(1).strip())
            elif section == "not_scored":
                field = re.match(r"^\s*(?:-\s+)?(\w+):\s*(.*)$", line)
                if not field:
                    continue
                if item:
                    entry = {}
                entry[field.group(1)] = field.group(2).strip()
                if {"scenario", "leg", "reason"} <= entry.keys():
                    not_scored[(entry["leg"], entry["scenario"])] = entry["reason"]
    return scored, not_scored


def read_expected(path):
    """{'server': {scenario: reason}, 'client': {...}}: `- scenario  # reason` lines."""
    expected = {"server": {}, "client": {}}
    if not os.path.exists(path):
        return expected
    section = None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            if not raw.strip() or raw.lstrip().startswith("#"):
                continue
            if not raw.startswith(" ") and not raw.startswith("-"):
                section = raw.split(":", 1)[0].strip()
                continue
            item = re.match(r"^\s*-\s+([^#\s]+)\s*(?:#\s*(.*))?$", raw.rstrip())
            if item and section in expected:
                expected[section][item.group(1)] = (item.group(2) or "").strip()
    return expected


def read_expected_passes(path):
    """{run: set(scenario)}: `run:` headers, then `  - scenario` lines."""
    passes = {}
    if not os.path.exists(path):
        return passes
    run = None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.split("#", 1)[0].rstrip()
            if not line.strip():
                continue
            if not line.startswith(" ") and line.endswith(":"):
                run = line[:-1].strip()
                passes.setdefault(run, set())
                continue
            item = re.match(r"^\s*-\s+(\S+)$", line)
            if item and run is not None:
                passes[run].add(item.group(1))
    return passes


def read_run(directory):
    """{scenario: [checks]} for one run's output directory."""
    results = {}
    if not os.path.isdir(directory):
        return results
    for dirpath, _, files in os.walk(directory):
        if "checks.json" not in files:
            continue
        rel = os.path.relpath(dirpath, directory)
        name = TIMESTAMP.sub("", rel)
        if name.startswith("server-"):
            name = name[len("server-"):]
        try:
            with open(os.path.join(dirpath, "checks.json"), encoding="utf-8") as f:
                results[name] = json.load(f)
        except (OSError, ValueError) as e:
            results[name] = [{"id": "checks-json-unreadable", "status": "FAILURE",
                              "errorMessage": str(e)}]
    return results


def summarize(checks):
    counts = {"SUCCESS": 0, "FAILURE": 0, "WARNING": 0}
    failing = []
    for check in checks:
        status = check.get("status")
        if status in counts:
            counts[status] += 1
        if status == "FAILURE":
            failing.append(check.get("id", "?"))
    return counts, failing


def cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", required=True)
    parser.add_argument("--requirements", required=True)
    parser.add_argument("--expected", required=True)
    parser.add_argument("--expected-passes", required=True)
    parser.add_argument("--suite-version", required=True)
    parser.add_argument("--node-version", required=True)
    parser.add_argument("--output", required=True)
    args = parser.parse_args()

    expected = read_expected(args.expected)
    expected_passes = read_expected_passes(args.expected_passes)
    problems = []
    notices = []
    totals = {"passed": 0, "failed": 0, "expected": 0}
    lines = [
        "# Conformance results",
        "",
        "Generated by `bash scripts/conformance.sh` (do not edit by hand): the official suite",
        f"`@modelcontextprotocol/conformance@{args.suite_version}` (Node {args.node_version})",
        "against `conformance-server` and `conformance-client`. A scenario passes when none of",
        "its checks fails (warnings are SHOULD-level and do not fail). *Scored* scenarios are",
        "the requirement set's; the others (extensions, pending, added after the release) run",
        "for visibility only, each run's in a table of its own. Expected failures, with their",
        "reasons, are in `conformance/expected-failures.yml`; the unscored scenarios that must",
        "keep passing are in `conformance/expected-unscored-passes.yml`.",
        "",
    ]
    summary_rows = []
    sections = []
    for run in RUNS:
        role, revision = run.split("-", 1)
        scored_all, not_scored = read_requirements(
            os.path.join(args.requirements, f"{revision}.yaml"))
        scored = scored_all[role]
        results = read_run(os.path.join(args.results, run))
        status_file = os.path.join(args.results, f"{run}.status")
        suite_exit = "not run"
        if os.path.exists(status_file):
            with open(status_file, encoding="utf-8") as f:
                rc, seconds = f.read().split()
                suite_exit = f"exit {rc}, {seconds} s"
        guarded = expected_passes.get(run, set())
        names = list(scored) + sorted(set(results) - set(scored) | guarded - set(scored))
        rows = []
        unscored_rows = []
        counts_run = {"passed": 0, "failed": 0, "expected": 0, "unscored_failed": 0,
                      "unscored": 0, "checks_passed": 0, "checks_failed": 0}
        for name in names:
            checks = results.get(name)
            is_scored = name in scored
            reason = "scored" if is_scored else not_scored.get((role, name), "not scored")
            if checks is None:
                counts, failing = {"SUCCESS": 0, "FAILURE": 1, "WARNING": 0}, ["(no results)"]
            else:
                counts, failing = summarize(checks)
            counts_run["checks_passed"] += counts["SUCCESS"]
            counts_run["checks_failed"] += counts["FAILURE"]
            ok = not failing
            note = expected[role].get(name)
            if not is_scored:
                counts_run["unscored"] += 1
                verdict = "pass" if ok else "fail (not scored)"
                if not ok:
                    counts_run["unscored_failed"] += 1
                if not ok and name in guarded:
                    verdict = "**FAIL (expected to pass)**"
                    problems.append(f"{run}: unscored {name} used to pass and now fails: "
                                    f"{', '.join(failing)}")
                elif ok and name not in guarded:
                    notices.append(f"{run}: unscored {name} passes; add it to "
                                   "expected-unscored-passes.yml to guard it")
            elif ok and note is not None:
                verdict = "**pass, but listed as expected failure (stale)**"
                problems.append(f"{run}: {name} passes but expected-failures.yml lists it")
                counts_run["passed"] += 1
            elif ok:
                verdict = "pass"
                counts_run["passed"] += 1
            elif note is not None:
                verdict = f"expected failure: {note}"
                counts_run["expected"] += 1
            else:
                verdict = "**FAIL**"
                counts_run["failed"] += 1
                problems.append(f"{run}: {name} failed: {', '.join(failing)}")
            row = (f"| {cell(name)} | {reason} | {counts['SUCCESS']} | {counts['FAILURE']} "
                   f"| {counts['WARNING']} | {cell(verdict)} | {cell(', '.join(failing))} |")
            (rows if is_scored else unscored_rows).append(row)
        for key in ("passed", "failed", "expected"):
            totals[key] += counts_run[key]
        summary_rows.append(
            f"| {run} | {counts_run['passed']} | {counts_run['failed']} "
            f"| {counts_run['expected']} | {counts_run['unscored'] - counts_run['unscored_failed']}"
            f" / {counts_run['unscored']} | {counts_run['checks_passed']} "
            f"| {counts_run['checks_failed']} | {suite_exit} |")
        header = [
            "| scenario | scoring | checks passed | failed | warnings | result | failing checks |",
            "|---|---|---|---|---|---|---|",
        ]
        sections += [f"## {run}", "", "### Scored", "", *header, *rows, ""]
        if unscored_rows:
            sections += [f"### Not scored ({run})", "", *header, *unscored_rows, ""]
    lines += [
        "## Summary",
        "",
        "| run | scored passed | scored failed | expected failures | unscored passing "
        "| checks passed | checks failed | suite |",
        "|---|---|---|---|---|---|---|---|",
        *summary_rows,
        "",
        *sections,
    ]
    with open(args.output, "w", encoding="utf-8") as f:
        f.write("\n".join(lines).rstrip() + "\n")

    for notice in notices:
        print(f"conformance: note: {notice}")
    for problem in problems:
        print(f"conformance: {problem}")
    print(f"conformance: wrote {os.path.relpath(args.output)}; "
          f"{totals['expected']} expected failure(s)")
    print(f"conformance: {totals['passed']} passed, {totals['failed']} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
