#!/bin/sh
# The nasm OpenH264's build assembles its x86 SIMD code with (.cargo/config.toml sets NASM to
# this script): the one scripts/setup.sh unpacked into .tools, else the system's. With neither,
# this fails like a missing nasm, and OpenH264 builds its C code alone (the host build warns).
tools="$(dirname "$0")/../.tools/nasm/usr/bin/nasm"
if [ -x "$tools" ]; then
    exec "$tools" "$@"
fi
exec nasm "$@"
