//! `halyard shapes`: the OMG dds-rtps interoperability suite's `shape_main`, on Halyard.
//!
//! The suite's harness starts a publisher and a subscriber of `ShapeType` samples (a color
//! key, a position and a size) with QoS chosen by command-line options and judges each test
//! by the lines they print. This application takes the same options with the same defaults
//! (see [`options`]), prints the same lines (entity creation, listener calls, one line per
//! sample: `%-10s %-10s %03d %03d [%d]`), moves its shape the same way and ends the same way
//! (SIGINT or `--num-iterations`, then `Done.`, exit 0; a bad command line exits 1, a failed
//! initialisation 2). What Halyard does not implement is reported with "not supported", which
//! the harness counts as an unsupported feature, never as a pass. TRANSIENT and PERSISTENT
//! (`-D t|p`) are served by the publisher's embedded durability service and by any
//! `halyard durability` service running in the domain.

mod options;
mod run;

use options::{parse, usage, Stop};

/// Runs `halyard shapes ARGS`; returns the exit code.
pub fn main(args: &[String]) -> i32 {
    match parse(args) {
        Err(Stop::Help) => {
            print!("{}", usage("halyard shapes"));
            0
        }
        Err(Stop::Bad(msg)) => {
            println!("{msg}");
            print!("{}", usage("halyard shapes"));
            1
        }
        Ok((opts, warnings)) => {
            for w in warnings {
                println!("{w}");
            }
            run::run(opts)
        }
    }
}
