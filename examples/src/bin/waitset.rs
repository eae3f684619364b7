//! A WaitSet loop: the reading thread blocks on a WaitSet until one of its conditions
//! triggers, then handles what triggered. Three kinds of condition:
//!
//! - a ReadCondition: the reader holds unread samples;
//! - a StatusCondition: a status of an entity changed (here the reader's SUBSCRIPTION_MATCHED:
//!   a writer matched it, or left);
//! - a GuardCondition: the application triggers it (here, the writing thread says "done").
//!
//! The writer runs in a second thread, with a participant of its own:
//!
//! ```sh
//! cargo run -p halyard-examples --bin waitset [DOMAIN]
//! ```

use halyard::qos::{EndpointQos, History, ReliabilityKind};
use halyard::{
    Condition, DomainParticipant, GroupQos, GuardCondition, ParticipantOptions, StatusMask, WaitSet,
};
use std::process::ExitCode;
use std::time::Duration;

/// A numbered tick.
#[derive(halyard::Topic, Clone, Debug, Default)]
struct Tick {
    /// 0, 1, 2 ...
    number: u32,
}

/// How many ticks the writer sends.
const COUNT: u32 = 5;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("waitset: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let domain = domain_from_args()?;
    let participant = ParticipantOptions::from_env()
        .and_then(|o| DomainParticipant::with_options(domain, o))
        .map_err(|e| format!("cannot join domain {domain}: {e}"))?;
    let topic = participant.create_topic::<Tick>("Ticks")?;
    let mut qos = EndpointQos::reader_default();
    qos.reliability.kind = ReliabilityKind::Reliable;
    qos.history = History::KeepLast(10);
    let reader = participant
        .create_subscriber(GroupQos::default())
        .create_datareader(&topic, qos)?;

    // The conditions, attached to one WaitSet. `true`: only samples not read yet trigger the
    // ReadCondition. A StatusCondition triggers on the statuses it is enabled for.
    let unread = reader.create_readcondition(true);
    let matched = reader.status_condition();
    matched.set_enabled_statuses(StatusMask::SUBSCRIPTION_MATCHED);
    let done = GuardCondition::new();
    let waitset = WaitSet::new();
    waitset.attach_condition(unread.clone())?;
    waitset.attach_condition(matched)?;
    waitset.attach_condition(done.clone())?;

    let writing = std::thread::spawn(move || {
        let written = write_ticks(domain);
        done.set_trigger_value(true);
        written
    });

    let (mut received, mut finished) = (0, false);
    // At most 30 wakes; each wait gives up after 1 s (Error::Timeout) if nothing triggers.
    for _ in 0..30 {
        if finished {
            break;
        }
        let triggered = match waitset.wait(Duration::from_secs(1)) {
            Ok(triggered) => triggered,
            Err(halyard::Error::Timeout) => continue,
            Err(e) => return Err(e.into()),
        };
        for condition in triggered {
            match condition {
                // Reading the status also resets the condition's trigger.
                Condition::Status(_) => {
                    let status = reader.subscription_matched_status()?;
                    println!("waitset: {} writer(s) matched", status.current_count);
                }
                // Taking through the condition takes what it selects: the unread samples.
                Condition::Read(_) => {
                    for sample in reader.take_w_condition(100, &unread)? {
                        if let Some(tick) = sample.data {
                            println!("waitset: tick {}", tick.number);
                            received += 1;
                        }
                    }
                }
                Condition::Guard(_) => finished = true,
            }
        }
    }
    writing
        .join()
        .map_err(|_| "the writing thread panicked")??;
    if !finished || received != COUNT {
        return Err(format!("received {received} of {COUNT} ticks").into());
    }
    println!("waitset: received all {COUNT} ticks");
    Ok(())
}

/// The writing thread: its own participant and writer; writes the ticks once the reader
/// matched and returns once the reader acknowledged them.
fn write_ticks(domain: u32) -> halyard::Result<()> {
    let participant =
        ParticipantOptions::from_env().and_then(|o| DomainParticipant::with_options(domain, o))?;
    let topic = participant.create_topic::<Tick>("Ticks")?;
    let writer = participant
        .create_publisher(GroupQos::default())
        .create_datawriter(&topic, EndpointQos::writer_default())?;
    writer.wait_for_matched(1, Duration::from_secs(10))?;
    for number in 0..COUNT {
        writer.write(&Tick { number })?;
        std::thread::sleep(Duration::from_millis(100));
    }
    writer.wait_for_acknowledgments(Duration::from_secs(10))
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
