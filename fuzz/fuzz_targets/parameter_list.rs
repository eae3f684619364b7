//! Fuzz target `parameter_list`: see `halyard_fuzz::wire_checks::check_parameter_list`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    halyard_fuzz::wire_checks::check_parameter_list(data);
});
