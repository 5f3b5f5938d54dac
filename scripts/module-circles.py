#!/usr/bin/env python3
"""Finds circles between the modules of a crate (default: simulations/src): module A uses
module B and B, through any path, uses A. A module is a file (`x.rs` or `x/mod.rs`); a
reference is any `crate::...`, `super::...` or `self::...` path in its code (use items, with
their brace groups, and paths written inline), resolved to the deepest module it names and,
through a `mod.rs`'s `pub use` re-exports, to the module that defines the item. A module
declaring its children is not a reference. Prints each circle and exits 1 if there is one.

    python3 scripts/module-circles.py [crate/src]
"""

import re
import sys
from pathlib import Path

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else "simulations/src")


def module_of(path: Path) -> tuple:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


FILES = {module_of(p): p for p in ROOT.rglob("*.rs")}


def code_of(text: str) -> str:
    """The text without comments, strings and `#[cfg(test)]` modules."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r'r#*"(?:.|\n)*?"#*', '""', text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    text = re.sub(r"'(?:\\.|[^'\\])'", "' '", text)
    # Tests may use what they test from anywhere: the unit under test is the code.
    match = re.search(r"#\[cfg\(test\)\]\s*mod\s+tests\s*\{", text)
    if match:
        text = text[: match.start()]
    return text


def use_paths(tree: str) -> list:
    """The full paths of a use tree (`a::{b, c::{d, e}}` -> a::b, a::c::d, a::c::e)."""
    tokens = re.findall(r"[A-Za-z_][A-Za-z_0-9]*|::|\{|\}|,|\*", tree)
    out = []

    def parse(i, prefix):
        path = list(prefix)
        while i < len(tokens):
            t = tokens[i]
            if t == "::":
                i += 1
            elif t == "{":
                i += 1
                while tokens[i] != "}":
                    i = parse(i, path)
                    if tokens[i] == ",":
                        i += 1
                return i + 1
            elif t in (",", "}"):
                break
            elif t == "as":
                i += 2
            elif t == "*":
                i += 1
            else:
                path.append(t)
                i += 1
        if path != list(prefix):
            out.append(path)
        return i

    parse(0, [])
    return out


def absolute(module: tuple, path: list):
    """`path` as seen from `module`, from the crate's root; None for another crate's."""
    if not path:
        return None
    head, rest = path[0], path[1:]
    if head == "crate":
        return list(rest)
    if head in ("super", "self"):
        base = list(module)
        while path and path[0] in ("super", "self"):
            if path[0] == "super":
                base = base[:-1]
            path = path[1:]
        return base + list(path)
    # A path from a module of this file's scope (`use x::y` where x is a child).
    if tuple(module) + (head,) in FILES:
        return list(module) + path
    return None


REEXPORTS = {}  # (module, name) -> path it re-exports


def collect_reexports():
    for module, path in FILES.items():
        code = code_of(path.read_text())
        for tree in re.findall(r"\bpub\s+use\s+([^;]+);", code):
            for p in use_paths(tree):
                full = absolute(module, p)
                if full:
                    REEXPORTS[(module, p[-1])] = full


def resolve(path: list, depth=0) -> tuple:
    """The deepest module `path` names, following re-exports of a parent's `pub use`."""
    best = ()
    for n in range(len(path), 0, -1):
        if tuple(path[:n]) in FILES:
            best = tuple(path[:n])
            break
    rest = path[len(best):]
    if rest and (best, rest[0]) in REEXPORTS and depth < 8:
        return resolve(REEXPORTS[(best, rest[0])] + rest[1:], depth + 1)
    return best


def edges():
    graph = {m: set() for m in FILES}
    for module, path in FILES.items():
        code = code_of(path.read_text())
        paths = []
        for tree in re.findall(r"\buse\s+([^;]+);", code):
            paths += use_paths(tree)
        paths += [p.split("::") for p in re.findall(r"\b(?:crate|super|self)(?:::[A-Za-z_][A-Za-z_0-9]*)+", code)]
        for p in paths:
            full = absolute(module, p)
            if full is None:
                continue
            target = resolve(full)
            # Not itself, its own children (declared here) or an ancestor's re-export it
            # resolves through.
            if target == module or target[: len(module)] == module and len(target) > len(module):
                continue
            if target == () or target not in FILES:
                continue
            graph[module].add(target)
    return graph


def circles(graph):
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            strong(v)
    return found


collect_reexports()
graph = edges()
found = circles(graph)
name = lambda m: "::".join(m) or "(crate)"
for component in found:
    members = sorted(component)
    print("circle: " + ", ".join(name(m) for m in members))
    for m in members:
        inside = sorted(name(t) for t in graph[m] if t in component)
        print(f"  {name(m)} -> {', '.join(inside)}")
print(f"{len(FILES)} modules of {ROOT}, {sum(len(v) for v in graph.values())} uses between them, {len(found)} circles")
sys.exit(1 if found else 0)
