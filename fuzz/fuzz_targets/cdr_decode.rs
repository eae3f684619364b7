//! Fuzz target `cdr_decode`: see `halyard_fuzz::cdr_check::check_cdr`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    halyard_fuzz::cdr_check::check_cdr(data);
});
