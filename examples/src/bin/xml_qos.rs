//! QoS from an XML file: the writer's and the reader's QoS come from the profile
//! `Examples::LateJoiners` of `examples/qos/example_qos.xml` (OMG DDS-XML, as Cyclone DDS,
//! Fast DDS and Connext read it) instead of code. The profile makes the writer keep its last
//! 5 samples for readers that join later (TRANSIENT_LOCAL durability): the writer writes 8
//! numbers, then a reader is created, and it gets the last 5.
//!
//! Both roles run in this program, as two participants:
//!
//! ```sh
//! cargo run -p halyard-examples --bin xml_qos [DOMAIN [QOS_FILE]]
//! ```

use halyard::{DomainParticipant, ParticipantOptions, QosProvider};
use std::process::ExitCode;
use std::time::Duration;

/// A number, the topic's type.
#[derive(halyard::Topic, Clone, Debug, Default)]
struct Number {
    /// The value.
    value: u32,
}

/// The profile used, `Library::Profile`.
const PROFILE: &str = "Examples::LateJoiners";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xml_qos: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let domain = domain_from_args()?;
    let file = std::env::args()
        .nth(2)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/qos/example_qos.xml").into());
    // Reads and checks the whole file: a mistake in it is an error naming file:line:column.
    let profiles = QosProvider::from_file(&file)?;
    let join = |domain| {
        ParticipantOptions::from_env()
            .and_then(|o| DomainParticipant::with_options(domain, o))
            .map_err(|e| format!("cannot join domain {domain}: {e}"))
    };

    // The writer: its publisher's QoS and its own come from the profile. A profile may hold
    // QoS for some topics only (`topic_filter`), hence the topic name.
    let publishing = join(domain)?;
    let topic = publishing.create_topic::<Number>("Numbers")?;
    let writer_qos = profiles.datawriter_qos(PROFILE, Some(topic.name()))?;
    println!(
        "xml_qos: {PROFILE} gives the writer {:?}, {:?}, {:?}",
        writer_qos.reliability.kind, writer_qos.durability, writer_qos.history
    );
    let writer = publishing
        .create_publisher(profiles.publisher_qos(PROFILE)?)
        .create_datawriter(&topic, writer_qos)?;
    for value in 0..8 {
        writer.write(&Number { value })?;
    }

    // The reader joins after the writing; the same profile gives it its QoS.
    let subscribing = join(domain)?;
    let topic = subscribing.create_topic::<Number>("Numbers")?;
    let reader = subscribing
        .create_subscriber(profiles.subscriber_qos(PROFILE)?)
        .create_datareader(
            &topic,
            profiles.datareader_qos(PROFILE, Some(topic.name()))?,
        )?;
    let mut received = Vec::new();
    // At most 10 s: 100 waits of 100 ms.
    for _ in 0..100 {
        if received.len() == 5 {
            break;
        }
        reader.wait_for_data(Duration::from_millis(100));
        received.extend(reader.take(100)?.into_iter().filter_map(|s| s.data));
    }
    let values: Vec<u32> = received.iter().map(|n| n.value).collect();
    println!("xml_qos: the late reader received {values:?}");
    if values != [3, 4, 5, 6, 7] {
        return Err("the late reader should have received the last 5 numbers, 3 to 7".into());
    }
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
