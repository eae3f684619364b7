//! Fuzz target `rtps_message`: see `halyard_fuzz::wire_checks::check_rtps_message`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    halyard_fuzz::wire_checks::check_rtps_message(data);
});
