//! Keyed instances and dispose: one topic carries many *instances*, one per value of the
//! type's key (here, one per sensor). The writer sends three rounds of readings from three
//! sensors, then disposes sensor 2 (it no longer exists); the reader then holds each
//! sensor's latest reading and its *instance state*: ALIVE, or NOT_ALIVE_DISPOSED.
//!
//! Both roles run in this program, as two participants of the same domain:
//!
//! ```sh
//! cargo run -p halyard-examples --bin keyed_instances [DOMAIN]
//! ```

use halyard::qos::{EndpointQos, ReliabilityKind};
use halyard::{DomainParticipant, GroupQos, InstanceState, ParticipantOptions, Selector};
use std::process::ExitCode;
use std::time::Duration;

/// A temperature reading. `#[key]` makes `sensor` the key: samples with the same sensor are
/// successive values of the same instance.
#[derive(halyard::Topic, Clone, Debug, Default)]
struct Reading {
    /// Which sensor (the key).
    #[key]
    sensor: u32,
    /// Degrees Celsius.
    celsius: f64,
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("keyed_instances: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let domain = domain_from_args()?;
    let join = |domain| {
        ParticipantOptions::from_env()
            .and_then(|o| DomainParticipant::with_options(domain, o))
            .map_err(|e| format!("cannot join domain {domain}: {e}"))
    };
    let (publishing, subscribing) = (join(domain)?, join(domain)?);

    let topic = publishing.create_topic::<Reading>("Readings")?;
    let writer = publishing
        .create_publisher(GroupQos::default())
        .create_datawriter(&topic, EndpointQos::writer_default())?;
    // HISTORY is per instance: with the default, KEEP_LAST 1, the reader keeps the latest
    // reading of each sensor (a new one replaces the previous one of the same sensor only).
    let mut qos = EndpointQos::reader_default();
    qos.reliability.kind = ReliabilityKind::Reliable;
    let reader = subscribing
        .create_subscriber(GroupQos::default())
        .create_datareader(&subscribing.create_topic::<Reading>("Readings")?, qos)?;
    writer.wait_for_matched(1, Duration::from_secs(10))?;

    for round in 0..3 {
        for sensor in 1..=3 {
            let celsius = 20.0 + f64::from(sensor) + f64::from(round) / 10.0;
            writer.write(&Reading { sensor, celsius })?;
        }
    }
    // Disposing says the instance no longer exists; only the key of the sample matters.
    writer.dispose(&Reading {
        sensor: 2,
        ..Default::default()
    })?;
    writer.wait_for_acknowledgments(Duration::from_secs(10))?;

    let mut states = Vec::new();
    for sensor in 1..=3 {
        // An instance is named by its handle, which the key gives. `read` (unlike `take`)
        // leaves the samples in the reader's cache.
        let key = Reading {
            sensor,
            ..Default::default()
        };
        let only_this = Selector {
            instance: Some(reader.lookup_instance(&key)?),
            ..Default::default()
        };
        let samples = reader.read_with(10, only_this)?;
        let Some(last) = samples.last() else {
            return Err(format!("nothing received for sensor {sensor}").into());
        };
        let latest = samples.iter().rev().find_map(|s| s.data.as_ref());
        let celsius = latest.map_or("none".into(), |r| format!("{:.1} °C", r.celsius));
        let state = last.info.instance_state;
        println!("keyed_instances: sensor {sensor}: latest reading {celsius}, {state:?}");
        states.push(state);
    }
    use InstanceState::{Alive, NotAliveDisposed};
    if states != [Alive, NotAliveDisposed, Alive] {
        return Err(format!("expected sensor 2 alone disposed, got {states:?}").into());
    }
    println!("keyed_instances: sensors 1 and 3 alive, sensor 2 disposed");
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
