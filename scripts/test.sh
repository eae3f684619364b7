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
# ceiling (SIGTERM, then SIGKILL 30 s later), well above what the step takes here.
limit() {
    timeout --kill-after=30 "$@"
}

step cargo fmt --all -- --check
# --locked here and on the Python package's clippy below: a Cargo.lock that no longer matches
# its manifests fails the step ("cannot update the lock file ... because --locked was
# passed") instead of being rewritten, as `pip install ./python` (maturin builds without
# --locked) would rewrite python/Cargo.lock. The check rides on steps that resolve and fetch
# the dependencies anyway, so it needs no network access of its own (a separate
# `cargo metadata --locked` step would resolve again, and `git diff --exit-code` after the
# install needs a git checkout and sees the change only after the build). Bring a stale lock
# up to date with `cargo metadata --manifest-path python/Cargo.toml --format-version 1`
# (which changes only what the manifests require) and commit it.
step cargo clippy --locked --workspace --all-targets -- -D warnings
# Public documentation builds without broken links or markup.
RUSTDOCFLAGS="-D warnings" step cargo doc --workspace --no-deps --quiet
# The protocol core and the wire crate run their tests with their invariants checked (debug
# assertions and overflow checks on, at release speed: Cargo.toml's `sim` profile).
step limit 1500 cargo test --profile sim -p halyard-core -p halyard-wire --no-fail-fast -- --test-threads=2
# Every other crate's tests, built with Cargo.toml's `ci` profile (release optimisation, no
# link-time optimisation: the test binaries build in a third of the time).
step limit 2700 cargo test --profile ci --workspace --exclude halyard-core --exclude halyard-wire \
    --no-fail-fast -- --test-threads=2
# The core DDS, `halyard` without its default features (security, durability, xml,
# typelookup): it links none of OpenSSL, AWS-LC or SQLite, lints clean, builds, and passes its
# unit tests (which include the refusals of what the missing features provide) and the API
# tests that need no feature. Built with the `ci` profile, whose dependencies the step above
# built already.
no_native_deps() {
    ! cargo tree --locked -p halyard --no-default-features -e normal --prefix none |
        grep -E '^(openssl|openssl-sys|aws-lc-rs|aws-lc-sys|rusqlite|libsqlite3-sys) '
}
step no_native_deps
step cargo clippy --locked -p halyard --no-default-features --all-targets -- -D warnings
step cargo build --profile ci -p halyard --no-default-features
step limit 600 cargo test --profile ci -p halyard --no-default-features --lib --test api \
    --no-fail-fast -- --test-threads=2
# The Python package (python/, PyO3; not a workspace member): lint, build and install it with
# pip (maturin), then its pytest suite, which talks to the cyclonedds Python package.
step cargo fmt --manifest-path python/Cargo.toml -- --check
step cargo clippy --locked --manifest-path python/Cargo.toml --all-targets -- -D warnings
# Built without link-time optimisation too (the package's own release profile has it): the
# tests need it working, not at its fastest.
CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 step python3 -m pip install ./python
# The test of `halyard idl --lang python` output needs the halyard binary built above.
HALYARD_BIN=$PWD/target/ci/halyard HALYARD_REQUIRE_BIN=1 step limit 600 python3 -m pytest python/tests -q
# The CTI node against the reference STIX and TAXII tools (stix2, stix2-validator,
# taxii2-client, medallion): the ci-profile halyard-cti binary built by the workspace test step.
HALYARD_CTI_BIN=$PWD/target/ci/halyard-cti step limit 600 python3 -m pytest crates/halyard-cti/tests/py -q

if [ "${#failed[@]}" -gt 0 ]; then
    printf 'test.sh: FAILED: %s\n' "${failed[@]}" >&2
    exit 1
fi
echo "test.sh: all steps passed" >&2
