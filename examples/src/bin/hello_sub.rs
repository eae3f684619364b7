//! Hello, world! — the subscriber: reads the 10 greetings `hello_pub` writes to the topic
//! "HelloWorld", and ends once it has them all (or after 30 s, with a failure).
//!
//! Run it with `hello_pub` in another terminal, in either order:
//!
//! ```sh
//! cargo run -p halyard-examples --bin hello_sub
//! cargo run -p halyard-examples --bin hello_pub
//! ```
//!
//! The optional argument is the DDS domain id (default 0). `hello_pub` explains the
//! participant, the topic and QoS.

use halyard::qos::{EndpointQos, History, ReliabilityKind};
use halyard::{DomainParticipant, GroupQos, ParticipantOptions};
use std::process::ExitCode;
use std::time::Duration;

/// The topic's type: the same as `hello_pub`'s (the same name, the same members).
#[derive(halyard::Topic, Clone, Debug, Default)]
struct Greeting {
    /// 0, 1, 2 ...
    index: u32,
    /// The text.
    message: String,
}

/// How many greetings to wait for.
const COUNT: u32 = 10;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hello_sub: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let domain = domain_from_args()?;
    let participant = ParticipantOptions::from_env()
        .and_then(|o| DomainParticipant::with_options(domain, o))
        .map_err(|e| format!("cannot join domain {domain}: {e}"))?;
    let topic = participant.create_topic::<Greeting>("HelloWorld")?;

    // A Subscriber groups readers; a DataReader receives the samples of one topic into its
    // cache. A reader is BEST_EFFORT by default (what is lost stays lost): ask for RELIABLE,
    // and keep up to 10 samples until they are taken.
    let mut qos = EndpointQos::reader_default();
    qos.reliability.kind = ReliabilityKind::Reliable;
    qos.history = History::KeepLast(10);
    let subscriber = participant.create_subscriber(GroupQos::default());
    let reader = subscriber.create_datareader(&topic, qos)?;

    println!("hello_sub: waiting for greetings in domain {domain}");
    let mut received = 0;
    // At most 30 s: 300 waits of 100 ms (a wait returns at once when data is there).
    for _ in 0..300 {
        if received == COUNT {
            break;
        }
        if !reader.wait_for_data(Duration::from_millis(100)) {
            continue;
        }
        // `take` removes the samples from the cache. Each has its data and a SampleInfo
        // (source timestamp, writer, instance state ...); `data` is None for a notice without
        // data (an instance disposed or left by its writers; see keyed_instances).
        for sample in reader.take(100)? {
            if let Some(greeting) = sample.data {
                println!("hello_sub: received {:?}", greeting.message);
                received += 1;
            }
        }
    }
    if received < COUNT {
        return Err(format!("received {received} of {COUNT} greetings within 30 s").into());
    }
    println!("hello_sub: received all {COUNT} greetings");
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
