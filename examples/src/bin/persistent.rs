//! PERSISTENT durability: a writer's samples outlive it, on disk. A *durability service*
//! stores what durable writers write and serves it to readers that join later. This program
//! runs the whole story in one process:
//!
//! 1. it starts a durability service on a store file (in a temporary directory);
//! 2. a PERSISTENT writer writes two rounds of readings from three sensors, waits until the
//!    service stored them, and goes away;
//! 3. the service stops and starts again from its file, as after a reboot;
//! 4. a reader that joins only now gets each sensor's latest reading from the service.
//!
//! ```sh
//! cargo run -p halyard-examples --bin persistent [DOMAIN]
//! ```
//!
//! The same service runs on its own as `halyard durability --store FILE`; and by default a
//! participant that creates a durable writer starts one for its own writers (see
//! `ParticipantOptions::durability`; here turned off, so that the standalone one is used).

use halyard::durability::{DurabilityConfig, DurabilityService, EmbeddedDurability};
use halyard::qos::{DurabilityKind, EndpointQos, ReliabilityKind};
use halyard::{DomainParticipant, GroupQos, ParticipantOptions};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

/// A temperature reading; each sensor is an instance (see keyed_instances).
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
            eprintln!("persistent: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let domain = domain_from_args()?;
    let dir = std::env::temp_dir().join(format!("halyard-persistent-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let stored_and_served = store_then_serve(domain, &dir.join("store.sqlite"));
    let _ = std::fs::remove_dir_all(&dir);
    stored_and_served
}

/// Participant options without the embedded durability service.
fn without_embedded_service() -> halyard::Result<ParticipantOptions> {
    Ok(ParticipantOptions {
        durability: EmbeddedDurability::Off,
        ..ParticipantOptions::from_env()?
    })
}

fn store_then_serve(domain: u32, store: &Path) -> Result<(), Box<dyn std::error::Error>> {
    // 1. The service: a participant of its own that stores what it receives in `store`.
    let config = DurabilityConfig {
        store: Some(store.to_path_buf()),
        participant: without_embedded_service()?,
        ..Default::default()
    };
    let service = DurabilityService::start(domain, config.clone())
        .map_err(|e| format!("cannot start the durability service: {e}"))?;

    // 2. The writer, in a block: at its end the writer and its participant are gone.
    {
        let participant = DomainParticipant::with_options(domain, without_embedded_service()?)?;
        let topic = participant.create_topic::<Reading>("PlantReadings")?;
        let mut qos = EndpointQos::writer_default();
        qos.durability = DurabilityKind::Persistent;
        // By default a writer that goes away disposes its instances (WRITER_DATA_LIFECYCLE),
        // and the service then forgets them: keep them.
        qos.writer_data_lifecycle.autodispose_unregistered_instances = false;
        let writer = participant
            .create_publisher(GroupQos::default())
            .create_datawriter(&topic, qos)?;
        for round in 0..2 {
            for sensor in 1..=3 {
                let celsius = 20.0 + f64::from(sensor) + f64::from(round) / 10.0;
                writer.write(&Reading { sensor, celsius })?;
            }
        }
        // Until the service acknowledges them, the samples live only in this writer.
        writer
            .wait_for_stored(1, Duration::from_secs(10))
            .map_err(|_| "the durability service did not store the readings within 10 s")?;
        println!("persistent: 6 readings written and stored; the writer leaves");
    }

    // 3. Stop the service and start it again from its file.
    let stopped = service.stop();
    let service = DurabilityService::start(domain, config)?;
    println!(
        "persistent: the service stored {} changes, and loaded {} back after its restart",
        stopped.stored,
        service.stats().loaded
    );

    // 4. The late reader. The service keeps, per instance, what the writer's
    // DURABILITY_SERVICE policy says: by default the last sample (KEEP_LAST 1).
    let participant = DomainParticipant::with_options(domain, without_embedded_service()?)?;
    let topic = participant.create_topic::<Reading>("PlantReadings")?;
    let mut qos = EndpointQos::reader_default();
    qos.reliability.kind = ReliabilityKind::Reliable;
    qos.durability = DurabilityKind::Persistent;
    let reader = participant
        .create_subscriber(GroupQos::default())
        .create_datareader(&topic, qos)?;
    let mut received = Vec::new();
    // At most 10 s: 100 waits of 100 ms.
    for _ in 0..100 {
        if received.len() == 3 {
            break;
        }
        reader.wait_for_data(Duration::from_millis(100));
        received.extend(reader.take(100)?.into_iter().filter_map(|s| s.data));
    }
    for r in &received {
        println!(
            "persistent: late reader got sensor {}: {:.1} °C",
            r.sensor, r.celsius
        );
    }
    // The second round's readings: sensor n read 20.1 + n °C.
    let latest = |r: &Reading| (r.celsius - (20.1 + f64::from(r.sensor))).abs() < 1e-9;
    if received.len() != 3 || !received.iter().all(latest) {
        return Err("the late reader should have got the latest reading of each sensor".into());
    }
    println!("persistent: the late reader got each sensor's latest reading from the service");
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
