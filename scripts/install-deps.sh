#!/usr/bin/env bash
# Install the system and Python dependencies Halyard's tests need on a fresh
# Debian 12 (bookworm) machine. Run as root. Idempotent: it installs only what
# is missing, and runs `apt-get update` only when an apt package is missing.
#
#   cyclonedds-tools  ddsperf (Cyclone DDS 0.10.x), the interop reference peer
#   cyclonedds-dev    Cyclone headers (and libddsc via dependency)
#   libddsc0debian    libddsc.so.0 (Cyclone 0.10 core incl. security plugins)
#   iproute2, nftables  network namespace / loss-injection helpers for tests
#   libfastrtps-dev   Fast DDS 2.9 (and Fast CDR) headers + libraries, for the
#                     benchmark's Fast DDS perf peer (bench/peers/fastdds)
#   g++, gcc, make    to build the benchmark peers (Fast DDS, raw UDP)
#   fastddsgen        Fast DDS 2.9's IDL code generator (2.3.0), for
#                     crates/halyard-idlc/corpus-test/tests/interop_fastddsgen.rs
#   libssl-dev, pkg-config, openssl  OpenSSL for the security plugins (the `openssl` crate)
#   python: cyclonedds  Cyclone 11 Python binding + `cyclonedds` CLI, used by
#                       tests/peers/*.py
#   python: stix2, stix2-validator, taxii2-client, medallion  reference STIX and TAXII
#                       tools, for the CTI node's tests (crates/halyard-cti/tests)
#   chromium, chromium-driver, python: selenium  the dashboard's browser tests
#                       (crates/halyard-cti/tests/py/test_dashboard.py)
#   npm: uplot, cytoscape  the dashboard's browser libraries (scripts/web-deps.sh)
#   python venv $HALYARD_SECURE_VENV (default /opt/halyard-cyclone010): the same
#                       binding built against Debian's Cyclone 0.10 (which has the DDS
#                       Security plugins; the PyPI wheel's Cyclone 11 has no security), for
#                       crates/halyard/tests/interop_cyclone_py_secure.rs
set -euo pipefail

log() { printf '[install-deps] %s\n' "$*"; }

if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
    log "not root: using sudo"
else
    SUDO=
fi

APT_PACKAGES=(cyclonedds-tools cyclonedds-dev libddsc0debian iproute2 nftables
              libfastrtps-dev fastddsgen g++ gcc make cmake libssl-dev pkg-config openssl
              python3-venv python3-dev chromium chromium-driver)

# Wait for any other apt/dpkg run (e.g. a background install) to finish instead
# of fighting over the dpkg lock.
wait_for_dpkg() {
    local waited=0
    while pgrep -x apt-get >/dev/null 2>&1 || pgrep -x apt >/dev/null 2>&1 \
          || pgrep -x dpkg >/dev/null 2>&1 || pgrep -x unattended-upgr >/dev/null 2>&1; do
        if [ "$waited" -eq 0 ]; then log "waiting for another apt/dpkg process to finish"; fi
        sleep 2
        waited=$((waited + 2))
        if [ "$waited" -ge 900 ]; then log "gave up waiting for dpkg lock after 900 s"; break; fi
    done
}

is_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

wait_for_dpkg
missing=()
for p in "${APT_PACKAGES[@]}"; do
    if is_installed "$p"; then
        log "apt: $p already installed ($(dpkg-query -W -f='${Version}' "$p"))"
    else
        missing+=("$p")
    fi
done

if [ "${#missing[@]}" -gt 0 ]; then
    log "apt: missing ${missing[*]}; running apt-get update"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update
    wait_for_dpkg
    log "apt: installing ${missing[*]}"
    $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

# Python binding (Cyclone DDS 11). Wait for a concurrent pip first.
PYTHON=${PYTHON:-python3}
waited=0
while pgrep -f 'pip[0-9.]* install' >/dev/null 2>&1; do
    if [ "$waited" -eq 0 ]; then log "waiting for another pip install to finish"; fi
    sleep 2
    waited=$((waited + 2))
    if [ "$waited" -ge 900 ]; then break; fi
done
if "$PYTHON" -c 'import cyclonedds' >/dev/null 2>&1; then
    log "pip: cyclonedds already importable ($("$PYTHON" -m pip show cyclonedds 2>/dev/null | sed -n 's/^Version: //p'))"
else
    log "pip: installing cyclonedds"
    "$PYTHON" -m pip install cyclonedds
fi
# pytest runs the Python package's tests (python/tests).
"$PYTHON" -c 'import pytest' >/dev/null 2>&1 || "$PYTHON" -m pip install pytest
# The CTI node's tests check what it produces and serves against the reference tools: the
# OASIS `stix2` library and `stix2-validator`, the `taxii2-client` package and the OASIS TAXII
# 2.1 reference server `medallion`.
for mod in stix2:stix2 stix2validator:stix2-validator taxii2client:taxii2-client medallion:medallion selenium:selenium; do
    if "$PYTHON" -c "import ${mod%%:*}" >/dev/null 2>&1; then
        log "pip: ${mod#*:} already importable"
    else
        log "pip: installing ${mod#*:}"
        "$PYTHON" -m pip install "${mod#*:}"
    fi
done

# The Python binding of Debian's Cyclone DDS 0.10, built from source in its own virtual
# environment: the wheel's bundled Cyclone 11 rejects <Security> ("unknown element").
# setup.py wants CYCLONEDDS_HOME/{include,lib}; Debian keeps the library in a multiarch dir.
SECURE_VENV=${HALYARD_SECURE_VENV:-/opt/halyard-cyclone010}
if "$SECURE_VENV/bin/python3" -c 'import cyclonedds.domain' >/dev/null 2>&1; then
    log "pip: secure cyclonedds binding already in $SECURE_VENV"
else
    cyclone_version=$(dpkg-query -W -f='${Version}' libddsc0debian | sed 's/-.*//')
    multiarch=$(gcc -print-multiarch)
    home=$(mktemp -d)
    mkdir -p "$home/bin"
    ln -s /usr/include "$home/include"
    ln -s "/usr/lib/$multiarch" "$home/lib"
    log "pip: building cyclonedds==$cyclone_version against Debian's libddsc into $SECURE_VENV"
    $SUDO "$PYTHON" -m venv "$SECURE_VENV"
    $SUDO env CYCLONEDDS_HOME="$home" "$SECURE_VENV/bin/pip" install --no-binary cyclonedds \
        "cyclonedds==$cyclone_version"
    rm -rf "$home"
fi

# The Rust lint tools the test script runs (rustup's default profile has them; a minimal one
# does not).
for component in clippy rustfmt; do
    if ! cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1; then
        log "rustup: adding $component"
        rustup component add "$component"
    fi
done

# The dashboard's browser libraries, embedded by the halyard-cti build.
bash "$(dirname "$0")/web-deps.sh"

log "ddsperf: $(command -v ddsperf || echo 'NOT FOUND')"
log "done"
