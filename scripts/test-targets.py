#!/usr/bin/env python3
"""Fails when a target that `cargo test` skips has a test after all.

Targets with nothing to test are marked `test = false` (and libraries with no doc tests
`doctest = false`) so that `cargo test --workspace` does not compile and link them a second
time in test mode. A `#[test]` added to such a target later would then never run, silently;
this check (run by .ci/run) names it instead. Reads the targets from `cargo metadata`:
- `test = false`: the target's sources may hold no `#[test]` and no `#[cfg(test)]` (a library:
  every `.rs` file under its directory but the binaries'; a binary: its file and the modules
  it declares beside it);
- `doctest = false`: the library's sources may hold no code block in a doc comment.
"""
import json
import pathlib
import re
import subprocess
import sys

TEST = re.compile(r"#\[(test|cfg\(test\))\]")
DOC_BLOCK = re.compile(r"^\s*//[/!].*```")
MOD = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", re.M)


def library_files(src: pathlib.Path) -> list[pathlib.Path]:
    root = src.parent
    return [
        f
        for f in root.rglob("*.rs")
        if f != root / "main.rs" and "bin" not in f.relative_to(root).parts
    ]


def binary_files(src: pathlib.Path) -> list[pathlib.Path]:
    files = [src]
    for name in MOD.findall(src.read_text()):
        for candidate in (src.parent / f"{name}.rs", src.parent / name / "mod.rs"):
            if candidate.is_file():
                files.append(candidate)
    return files


def main() -> int:
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--no-deps", "--format-version", "1"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    problems = []
    for package in meta["packages"]:
        for target in package["targets"]:
            src = pathlib.Path(target["src_path"])
            is_lib = any(k in ("lib", "rlib", "proc-macro") for k in target["kind"])
            files = library_files(src) if is_lib else binary_files(src)
            where = f"{package['name']} ({'lib' if is_lib else target['name']})"
            if not target.get("test", True):
                for f in files:
                    if TEST.search(f.read_text()):
                        problems.append(f"{f}: a test in {where}, which is marked `test = false`")
            if is_lib and not target.get("doctest", True):
                for f in files:
                    for number, line in enumerate(f.read_text().splitlines(), 1):
                        if DOC_BLOCK.match(line):
                            problems.append(
                                f"{f}:{number}: a doc-comment code block in {where}, which is marked `doctest = false`"
                            )
                            break
    for problem in problems:
        print(f"test-targets: {problem}: remove the marking from its Cargo.toml", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
