#!/usr/bin/env python3
"""Fails when a workspace crate's `rust-version` is lower than what its resolved dependencies need.

`rust-version` is a promise to users: "this builds with that toolchain". It is a lie as soon as
one dependency in Cargo.lock asks for a newer one. This compares each workspace member's
declared version with the highest `rust-version` among the packages it can pull in (normal,
build and dev dependencies, for this host), and prints the offenders.

    python3 scripts/check-rust-version.py
"""
import json
import subprocess
import sys


def version(text):
    """'1.85' and '1.85.0' compare equal; missing parts are zero."""
    parts = [int(p) for p in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def metadata():
    host = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    triple = next(line.split(": ", 1)[1] for line in host.splitlines() if line.startswith("host: "))
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked", "--filter-platform", triple],
        capture_output=True, text=True, check=True,
    ).stdout
    return json.loads(out)


def reachable(root, nodes):
    """Every package id that building `root` and its tests can compile: the root's own
    dev-dependencies count, a dependency's dev-dependencies do not (they are never built)."""
    seen, stack = set(), [root]
    while stack:
        node = stack.pop()
        for dep in nodes[node]["deps"]:
            kinds = {k["kind"] for k in dep["dep_kinds"]}
            if node != root and kinds == {"dev"}:
                continue
            if dep["pkg"] not in seen:
                seen.add(dep["pkg"])
                stack.append(dep["pkg"])
    return seen


def main():
    meta = metadata()
    packages = {p["id"]: p for p in meta["packages"]}
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    failures = 0
    for member in meta["workspace_members"]:
        package = packages[member]
        declared = package.get("rust_version")
        if declared is None:
            print(f"{package['name']}: no rust-version declared")
            failures += 1
            continue
        needs = [
            (version(packages[dep]["rust_version"]), packages[dep]["name"], packages[dep]["version"])
            for dep in reachable(member, nodes)
            if packages[dep].get("rust_version") and dep not in meta["workspace_members"]
        ]
        highest = max(needs, default=((0, 0, 0), "nothing", ""))
        if highest[0] > version(declared):
            need = ".".join(str(p) for p in highest[0])
            print(f"{package['name']}: declares rust-version {declared}, "
                  f"but {highest[1]} {highest[2]} needs {need}")
            failures += 1
        else:
            print(f"{package['name']}: rust-version {declared} covers its dependencies "
                  f"(highest: {highest[1]} {highest[2]})")
    if failures:
        print(f"rust-version check: {failures} crate(s) claim an older toolchain than they need")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
