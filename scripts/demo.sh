#!/usr/bin/env bash
# Halyard's main job on this machine: a threat-intelligence sharing community of three
# organisations in two sectors (`halyard-cti demo`), each node its own process with its own
# DDS Security identity, fed with generated STIX, printing each node's dashboard and TAXII
# URLs and logins and the community's delivery figures until Ctrl-C. Options go to `halyard-cti demo`
# (`--seconds S` to stop by itself, `--base-port 0` if ports 8441-8443 are taken).
# Traffic stays on loopback unless HALYARD_INTERFACE says otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/web-deps.sh || echo "[demo] going on without the dashboard's plots and graphs" >&2
cargo build --release -p halyard-cti
export HALYARD_INTERFACE="${HALYARD_INTERFACE:-lo}"
exec ./target/release/halyard-cti demo "$@"
