#!/usr/bin/env bash
# Times the README's set-up and test command on a machine made as fresh as this one can be:
# no Rust toolchain of the project's (an empty RUSTUP_HOME), no crates (an empty CARGO_HOME),
# no pip cache, Chromium and its driver removed (as root; the set-up installs them again).
# Clones this repository's committed state into /tmp/fresh/repo. Takes the whole machine for a
# few minutes: run it on a quiet one.
#
#   sudo scripts/fresh-machine-time.sh
set -uo pipefail
rm -rf /tmp/fresh && mkdir -p /tmp/fresh
export RUSTUP_HOME=/tmp/fresh/rustup CARGO_HOME=/tmp/fresh/cargo PIP_NO_CACHE_DIR=1
mkdir -p $CARGO_HOME/bin && cp ~/.cargo/bin/rustup $CARGO_HOME/bin/
for t in cargo rustc rustdoc cargo-clippy clippy-driver rustfmt cargo-fmt; do ln -sf rustup $CARGO_HOME/bin/$t; done
export PATH=$CARGO_HOME/bin:$PATH
DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq chromium chromium-driver >/dev/null 2>&1
command -v chromium chromedriver && echo "chromium still there"
git clone -q "$(cd "$(dirname "$0")/.." && pwd)" /tmp/fresh/repo && cd /tmp/fresh/repo
echo "load before: $(cat /proc/loadavg)"
t0=$(date +%s.%N)
scripts/setup.sh; s=$?
t1=$(date +%s.%N)
cargo test --workspace > /tmp/fresh/test.log 2>&1; r=$?
t2=$(date +%s.%N)
echo "setup exit $s: $(echo "$t1 - $t0" | bc) s; cargo test --workspace exit $r: $(echo "$t2 - $t1" | bc) s; total $(echo "$t2 - $t0" | bc) s"
grep -E "^test result" /tmp/fresh/test.log | awk '{p+=$4; f+=$6; i+=$8} END {print p" passed "f" failed "i" ignored"}'
