//! A subscriber with no compiled-in type: it finds a writer of the topic, learns the writer's
//! type at run time and prints each sample as JSON. This is what `halyard sub TOPIC` does.
//!
//! How it learns the type (DDS-XTypes): a writer announces in discovery a *TypeInformation*,
//! hashes naming its type; the *TypeLookup* service of the writer's participant answers with
//! the *TypeObjects* those hashes name (the type's description: members, keys, nested
//! types); from them a registry builds a *dynamic type*, which decodes samples.
//!
//! Run it with `hello_pub` (its default topic is hello_pub's, HelloWorld):
//!
//! ```sh
//! cargo run -p halyard-examples --bin dynamic_sub [DOMAIN [TOPIC]]
//! cargo run -p halyard-examples --bin hello_pub
//! ```

use halyard::cdr::Extensibility;
use halyard::qos::{EndpointQos, History, ReliabilityKind};
use halyard::xtypes::{dynamic, DynamicType, TypeInformation, TypeRegistry};
use halyard::{
    DomainParticipant, DynamicKeySupport, EndpointTypeInformation, GroupQos, ParticipantOptions,
};
use halyard::{UntypedTopic, UntypedType};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// How many samples to print before ending.
const COUNT: usize = 10;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dynamic_sub: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let domain = domain_from_args()?;
    let topic_name = std::env::args()
        .nth(2)
        .unwrap_or_else(|| "HelloWorld".into());
    let participant = ParticipantOptions::from_env()
        .and_then(|o| DomainParticipant::with_options(domain, o))
        .map_err(|e| format!("cannot join domain {domain}: {e}"))?;

    println!("dynamic_sub: waiting for a writer of {topic_name} in domain {domain}");
    let (type_name, info) = writer_type(&participant, &topic_name)?;
    // The TypeObjects, from the writer's participant; each is checked against its hash.
    let objects = participant.lookup_type_information(&info, Duration::from_secs(10))?;
    let mut registry = TypeRegistry::new();
    for (id, object) in objects {
        registry.insert(&id, object)?;
    }
    // The complete TypeObject has the member names (the minimal one only their ids).
    let ty = registry.build(&info.complete.typeid_with_size.type_id)?;
    println!(
        "dynamic_sub: the type of {topic_name}:\n{}",
        halyard::xtypes::to_idl(&ty)
    );

    // An *untyped* reader: its samples stay serialized bytes, which the dynamic type decodes.
    let topic = untyped_topic(&participant, &topic_name, &type_name, &ty)?;
    let mut qos = EndpointQos::reader_default();
    qos.reliability.kind = ReliabilityKind::Reliable;
    qos.history = History::KeepLast(10);
    let reader = participant
        .create_subscriber(GroupQos::default())
        .create_untyped_datareader(&topic, qos, None)?;
    let mut printed = 0;
    // At most 30 s: 300 waits of 100 ms.
    for _ in 0..300 {
        if printed == COUNT {
            break;
        }
        reader.wait_for_data(Duration::from_millis(100));
        for bytes in reader.take(100)?.into_iter().filter_map(|s| s.data) {
            let value = dynamic::decode(&ty, &bytes)?;
            println!("{}", dynamic::to_json(&ty, &value)?);
            printed += 1;
        }
    }
    if printed < COUNT {
        return Err(format!("printed {printed} of {COUNT} samples within 30 s").into());
    }
    println!("dynamic_sub: printed {COUNT} samples");
    Ok(())
}

/// The type name and TypeInformation a writer of `topic` announced, from discovery (the
/// writers other participants announced, DDS's DCPSPublication); waits up to 30 s for one.
fn writer_type(
    participant: &DomainParticipant,
    topic: &str,
) -> Result<(String, TypeInformation), Box<dyn std::error::Error>> {
    // 300 looks, 100 ms apart.
    for _ in 0..300 {
        let writers = participant.discovered_publications();
        if let Some(writer) = writers.into_iter().find(|w| w.topic_name == topic) {
            let Some(info) = writer.decoded_type_information() else {
                return Err(format!(
                    "the writer of {topic} announced no type information: give the type as \
                     IDL instead (`halyard sub {topic} --idl FILE`)"
                )
                .into());
            };
            return Ok((writer.type_name, info));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!("no writer of {topic} found within 30 s").into())
}

/// An untyped topic of the dynamic type `ty`: it is matched by `type_name`, and the dynamic
/// type computes the keys of a keyed type (the instance each sample belongs to).
fn untyped_topic(
    participant: &DomainParticipant,
    topic: &str,
    type_name: &str,
    ty: &DynamicType,
) -> halyard::Result<UntypedTopic> {
    let top = ty.resolved().as_struct();
    let extensibility = top.map_or(Extensibility::Final, |s| s.extensibility);
    let untyped = if top.is_some_and(|s| s.has_key()) {
        let keys = Arc::new(DynamicKeySupport::new(ty.clone()));
        UntypedType::keyed(type_name, extensibility, keys)
    } else {
        UntypedType::keyless(type_name, extensibility)
    };
    participant.create_untyped_topic(topic, untyped)
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
