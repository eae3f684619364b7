#!/usr/bin/env bash
# Runs Halyard's whole test suite: installs the real peers it tests against (Cyclone DDS
# ddsperf, the cyclonedds Python package), then every crate's unit, simulation and interop
# tests. All traffic stays on loopback (HALYARD_INTERFACE=lo, Cyclone configured for lo).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
export HALYARD_INTERFACE=lo
# Every simulated-network test runs this many seeds (about 25 s in release on 2 cores).
export HALYARD_SIM_SEEDS=${HALYARD_SIM_SEEDS:-1000}
export CYCLONEDDS_URI='<General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General>'
cargo build --release --workspace
cargo test --release --workspace --no-fail-fast -- --test-threads=2
