#!/usr/bin/env bash
# Fails if a workspace manifest lists a dependency that its package's code never names.
# For every package (cargo metadata) and every dependency of it (normal, dev and build), the
# crate's name ('-' -> '_', or its rename) must appear as a path (`name::`), in a `use name`
# or an `extern crate name` on a line that is not a comment, in one of the package's .rs files:
# src/, build.rs, tests/, examples/, benches/ and every target's own path (an example that
# lives outside the package). No tool to install: cargo and python3 (both CI has), a second
# or so. Run by .ci/run after the tests.
#
#   scripts/unused-deps.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo metadata --no-deps --format-version 1 | python3 -c '
import json, os, re, sys

def rust_files(paths):
    for path in paths:
        if os.path.isfile(path):
            yield path
        for root, _, names in os.walk(path):
            yield from (os.path.join(root, n) for n in names if n.endswith(".rs"))

def code_lines(path):
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.strip()
        if not line.startswith("//"):
            yield line

unused = []
for package in json.load(sys.stdin)["packages"]:
    root = os.path.dirname(package["manifest_path"])
    places = [os.path.join(root, p) for p in ("src", "build.rs", "tests", "examples", "benches")]
    places += [t["src_path"] for t in package["targets"]]
    lines = [l for f in sorted(set(rust_files(places))) for l in code_lines(f)]
    for dep in package["dependencies"]:
        name = (dep.get("rename") or dep["name"]).replace("-", "_")
        named = re.compile(r"(^|[^\w:])" + name + r"::|\buse " + name + r"\b|\bextern crate " + name + r"\b")
        if not any(named.search(l) for l in lines):
            kind = {None: "dependencies", "dev": "dev-dependencies", "build": "build-dependencies"}[dep["kind"]]
            manifest = os.path.relpath(package["manifest_path"])
            crate = dep["name"]
            unused.append(f"{manifest}: [{kind}] {crate} is never used")
for line in unused:
    print("unused-deps:", line, file=sys.stderr)
if unused:
    sys.exit(1)
print("unused-deps: every dependency of every workspace manifest is used")
'
