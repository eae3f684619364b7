//! Hello, world! — the publisher: once a subscriber is there, writes 10 greetings to the
//! topic "HelloWorld", and ends when the subscriber has acknowledged all of them.
//!
//! Run it with `hello_sub` (or `dynamic_sub`) in another terminal, in either order:
//!
//! ```sh
//! cargo run -p halyard-examples --bin hello_sub
//! cargo run -p halyard-examples --bin hello_pub
//! ```
//!
//! The optional argument is the DDS domain id (default 0). `HALYARD_INTERFACE=lo` keeps the
//! traffic on this machine.

use halyard::qos::{EndpointQos, History};
use halyard::{DomainParticipant, GroupQos, ParticipantOptions};
use std::process::ExitCode;
use std::time::Duration;

/// The data type of the topic. `#[derive(halyard::Topic)]` generates its encoding (CDR, what
/// DDS sends on the wire) and its XTypes type description, which the writer announces so
/// that readers can check the type, or learn it (as `dynamic_sub` does).
#[derive(halyard::Topic, Clone, Debug, Default)]
struct Greeting {
    /// 0, 1, 2 ...
    index: u32,
    /// The text.
    message: String,
}

/// How many greetings to write.
const COUNT: u32 = 10;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hello_pub: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let domain = domain_from_args()?;

    // A DomainParticipant is this program's membership of a DDS domain: it finds the other
    // participants of the same domain id (no broker, no configuration: they announce
    // themselves by multicast) and owns the sockets and threads. It uses the network
    // interface HALYARD_INTERFACE names, else the first non-loopback one: the
    // options come from the HALYARD_* variables (`from_env`), as the halyard tools' do.
    let participant = ParticipantOptions::from_env()
        .and_then(|o| DomainParticipant::with_options(domain, o))
        .map_err(|e| format!("cannot join domain {domain}: {e}"))?;

    // A Topic names a stream of data of one type: writers and readers of the same topic
    // name (and a compatible type) are matched with each other.
    let topic = participant.create_topic::<Greeting>("HelloWorld")?;

    // A Publisher groups writers; a DataWriter writes the samples of one topic. How it does
    // is its QoS (quality of service), a set of policies: a writer is RELIABLE by default
    // (what a reader missed is sent again). Keeping the last 10 samples (HISTORY) lets it
    // send any of them again, not only the last.
    let mut qos = EndpointQos::writer_default();
    qos.history = History::KeepLast(10);
    let publisher = participant.create_publisher(GroupQos::default());
    let writer = publisher.create_datawriter(&topic, qos)?;

    // With the default DURABILITY (VOLATILE), a reader gets only what is written after it
    // matched: wait for one before writing.
    println!("hello_pub: waiting for a subscriber in domain {domain}");
    writer
        .wait_for_matched(1, Duration::from_secs(30))
        .map_err(|_| "no subscriber matched within 30 s")?;
    for index in 0..COUNT {
        let greeting = Greeting {
            index,
            message: format!("Hello, world! ({index})"),
        };
        writer.write(&greeting)?;
        println!("hello_pub: wrote {:?}", greeting.message);
        std::thread::sleep(Duration::from_millis(100));
    }

    // A reliable reader acknowledges what it received: wait for that before exiting, so that
    // we know the greetings arrived.
    writer
        .wait_for_acknowledgments(Duration::from_secs(10))
        .map_err(|_| "the subscriber did not acknowledge every greeting within 10 s")?;
    println!("hello_pub: all {COUNT} greetings acknowledged");
    Ok(())
}

/// The domain id: the first argument, else 0.
fn domain_from_args() -> Result<u32, String> {
    match std::env::args().nth(1) {
        None => Ok(0),
        Some(a) => a
            .parse()
            .map_err(|_| format!("bad domain id {a:?}: give a number such as 0")),
    }
}
