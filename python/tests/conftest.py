"""Shared fixtures: the command line the package is compared with, and a run of it."""

import os
import subprocess

import pytest


@pytest.fixture(scope="session")
def cli():
    """Runs ``rust-gpu-sim`` (``RUST_GPU_SIM_BIN``, set by scripts/python-tests.sh) with
    ``args``, failing the test on a non-zero exit."""
    binary = os.environ.get("RUST_GPU_SIM_BIN")
    assert binary and os.path.exists(binary), "set RUST_GPU_SIM_BIN to the rust-gpu-sim binary (scripts/python-tests.sh does)"

    def run(*args, cwd=None):
        result = subprocess.run([binary, *map(str, args)], cwd=cwd, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        return result

    return run
