"""Shared fixtures: the command line the package is compared with, and a run of it."""

import os
import subprocess

import pytest


def command(variable):
    """Runs the binary that ``variable`` names (set by python/tests/pytest.rs and
    scripts/gpu-check.sh) with ``args``, failing the test on a non-zero exit."""
    binary = os.environ.get(variable)
    assert binary and os.path.exists(binary), f"set {variable} to the binary (python/tests/pytest.rs does)"

    def run(*args, cwd=None):
        result = subprocess.run([binary, *map(str, args)], cwd=cwd, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        return result

    return run


@pytest.fixture(scope="session")
def cli():
    """``rust-gpu-sim``."""
    return command("RUST_GPU_SIM_BIN")


@pytest.fixture(scope="session")
def barkley_cli():
    """``barkley`` (examples/barkley)."""
    return command("BARKLEY_BIN")
