#!/usr/bin/env bash
# Runs Halyard's whole test suite: installs the real peers it tests against (Cyclone DDS
# ddsperf, the cyclonedds Python package) and the Rust lint tools, checks the repository's
# rules (formatting; clippy with warnings as errors, which includes the clock ban and the ban
# on randomly seeded maps of clippy.toml), then runs every crate's unit, simulation and interop
# tests. All traffic stays on loopback (HALYARD_INTERFACE=lo, Cyclone configured for lo).
#
# Every step runs even if an earlier one failed; the script fails if any did.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh || exit 1
export HALYARD_INTERFACE=lo
# Every simulated-network test runs this many seeds.
export HALYARD_SIM_SEEDS=${HALYARD_SIM_SEEDS:-1000}
export CYCLONEDDS_URI='<General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General>'

failed=()
step() {
    echo "=== test.sh: $*" >&2
    local t0=$SECONDS
    "$@" || failed+=("$*")
    echo "=== test.sh: $((SECONDS - t0)) s: $*" >&2
}
# A test that hangs must fail its step, not run into CI's time limit: each test step has a
# ceiling (SIGTERM, then SIGKILL 30 s later), well above what it takes here (the simulation
# tests about 3 minutes, the other tests about 18 with their build).
limit() {
    timeout --kill-after=30 "$@"
}

step cargo fmt --all -- --check
step cargo clippy --workspace --all-targets -- -D warnings
# Public documentation builds without broken links or markup.
RUSTDOCFLAGS="-D warnings" step cargo doc --workspace --no-deps --quiet
# The protocol core and the wire crate run their tests with their invariants checked (debug
# assertions and overflow checks on, at release speed: Cargo.toml's `sim` profile).
step limit 1500 cargo test --profile sim -p halyard-core -p halyard-wire --no-fail-fast -- --test-threads=2
# Every other crate's tests, built with Cargo.toml's `ci` profile (release optimisation, no
# link-time optimisation: the test binaries build in a third of the time).
step limit 2700 cargo test --profile ci --workspace --exclude halyard-core --exclude halyard-wire \
    --no-fail-fast -- --test-threads=2
# The Python package (python/, PyO3; not a workspace member): lint, build and install it with
# pip (maturin), then its pytest suite, which talks to the cyclonedds Python package.
step cargo fmt --manifest-path python/Cargo.toml -- --check
step cargo clippy --manifest-path python/Cargo.toml --all-targets -- -D warnings
# Built without link-time optimisation too (the package's own release profile has it): the
# tests need it working, not at its fastest.
CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 step python3 -m pip install ./python
# The test of `halyard idl --lang python` output needs the halyard binary built above.
HALYARD_BIN=$PWD/target/ci/halyard HALYARD_REQUIRE_BIN=1 step limit 600 python3 -m pytest python/tests -q

if [ "${#failed[@]}" -gt 0 ]; then
    printf 'test.sh: FAILED: %s\n' "${failed[@]}" >&2
    exit 1
fi
echo "test.sh: all steps passed" >&2
