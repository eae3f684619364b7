//! Fuzz target `core_datagram`: see `halyard_fuzz::core_harness::run`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    halyard_fuzz::core_harness::run(data);
});
