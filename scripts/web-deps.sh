#!/usr/bin/env bash
# The dashboard's browser libraries (uPlot, Cytoscape.js), installed with npm from
# crates/halyard-cti/web/package-lock.json into crates/halyard-cti/web/node_modules, where the
# halyard-cti build embeds them from. Idempotent: runs `npm ci` only when node_modules is
# missing or older than the lock file. Without npm it says so and exits 1.
set -euo pipefail
cd "$(dirname "$0")/../crates/halyard-cti/web"
if [ -f node_modules/.package-lock.json ] && [ node_modules/.package-lock.json -nt package-lock.json ]; then
    echo "[web-deps] dashboard libraries already installed in crates/halyard-cti/web/node_modules"
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "[web-deps] npm is not installed: the dashboard will have no plots or graphs" >&2
    echo "[web-deps] (Debian: apt-get install npm), then run: bash scripts/web-deps.sh" >&2
    exit 1
fi
echo "[web-deps] npm ci (uPlot, Cytoscape.js) into crates/halyard-cti/web/node_modules"
npm ci --no-audit --no-fund --loglevel=error
