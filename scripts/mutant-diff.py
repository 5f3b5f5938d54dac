#!/usr/bin/env python3
"""Prints the diff of one mutant from `cargo mutants --list --diff --json` output.

    scripts/mutant-diff.py LIST_JSON NAME

NAME as cargo-mutants names it (FILE:LINE:COL: WHAT). Exits non-zero, saying so, where the list
has no such mutant. Used by scripts/mutants-gpu.sh and scripts/mutants-host-gpu.sh.
"""
import json
import sys

if len(sys.argv) != 3:
    sys.exit("usage: scripts/mutant-diff.py LIST_JSON NAME")
list_json, name = sys.argv[1], sys.argv[2]
for mutant in json.load(open(list_json)):
    if mutant["name"] == name:
        sys.stdout.write(mutant["diff"])
        break
else:
    sys.exit("not listed by cargo mutants: " + name)
