#!/usr/bin/env bash
# Halyard's main job on this machine: a reliable publish/subscribe between two processes
# (latency by ping/pong, then throughput by pub/sub), printing what was delivered and measured.
# Traffic stays on loopback unless HALYARD_INTERFACE says otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p halyard-cli
exec ./target/release/halyard demo "${1:-5}"
