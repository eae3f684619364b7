//! DDS Security: alice writes, bob reads, and everything between them is authenticated and
//! encrypted. A third participant without an identity, eve, joins the same domain and
//! receives nothing.
//!
//! The program first makes what `halyard security init DIR --participant alice
//! --participant bob` makes, in a temporary directory: an identity CA and a permissions CA,
//! a signed *governance* (what the domain protects: here, everything encrypted) and, for
//! each participant, an identity certificate with its key and signed *permissions* (what it
//! may publish and subscribe: here, every topic). All three participants run in this
//! program:
//!
//! ```sh
//! cargo run -p halyard-examples --bin secure_pair [DOMAIN]
//! ```

use halyard::qos::{EndpointQos, History, ReliabilityKind};
use halyard::{DomainParticipant, GroupQos, ParticipantOptions};
use halyard_security::random::OsRandom;
use halyard_security::setup::{self, InitOptions, KeyKind, Protection};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

/// A secret message, the topic's type.
#[derive(halyard::Topic, Clone, Debug, Default)]
struct Secret {
    /// The text.
    text: String,
}

/// How many secrets alice writes.
const COUNT: usize = 3;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("secure_pair: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let domain = domain_from_args()?;
    let dir = std::env::temp_dir().join(format!("halyard-secure-pair-{}", std::process::id()));
    let options = InitOptions {
        participants: vec!["alice".into(), "bob".into()],
        protection: Protection {
            encrypt: true,
            origin_auth: false,
            none: false,
        },
        key: KeyKind::EcP256,
        // Certificates and permissions valid for a day, in this domain only.
        days: 1,
        domains: vec![domain],
        allows: None,
        force: true,
        now: i64::from(halyard::wall_clock().seconds),
    };
    setup::init(&dir, &options, &mut OsRandom)
        .map_err(|e| format!("cannot make the security set-up: {e}"))?;
    println!("secure_pair: identities made in {}", dir.display());
    let exchanged = exchange(domain, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    exchanged
}

/// alice writes to bob while eve listens.
fn exchange(domain: u32, dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    // A participant with an identity (`DIR/NAME`, as `HALYARD_SECURITY=DIR/NAME` would give
    // it) authenticates every peer and is matched only with peers that authenticated.
    let secured = |name: &str| {
        let options = ParticipantOptions {
            security: Some(dir.join(name)),
            ..ParticipantOptions::from_env().map_err(|e| e.to_string())?
        };
        DomainParticipant::with_options(domain, options)
            .map_err(|e| format!("{name} cannot join domain {domain}: {e}"))
    };
    let (alice, bob) = (secured("alice")?, secured("bob")?);
    // No identity (unless HALYARD_SECURITY names one): eve cannot take part.
    let eve =
        ParticipantOptions::from_env().and_then(|o| DomainParticipant::with_options(domain, o))?;

    let topic = alice.create_topic::<Secret>("Secrets")?;
    let writer = alice
        .create_publisher(GroupQos::default())
        .create_datawriter(&topic, EndpointQos::writer_default())?;
    // Reliable, and keeping every secret until taken (the default keeps only the last).
    let mut qos = EndpointQos::reader_default();
    qos.reliability.kind = ReliabilityKind::Reliable;
    qos.history = History::KeepLast(10);
    let read_secrets = |p: &DomainParticipant| -> halyard::Result<_> {
        let topic = p.create_topic::<Secret>("Secrets")?;
        p.create_subscriber(GroupQos::default())
            .create_datareader(&topic, qos.clone())
    };
    let (bob_reader, eve_reader) = (read_secrets(&bob)?, read_secrets(&eve)?);

    // The authentication handshake comes before matching: allow it some time.
    writer
        .wait_for_matched(1, Duration::from_secs(20))
        .map_err(|_| "bob's reader did not match alice's writer within 20 s")?;
    for i in 0..COUNT {
        writer.write(&Secret {
            text: format!("secret {i}"),
        })?;
    }
    writer.wait_for_acknowledgments(Duration::from_secs(10))?;

    let mut received = Vec::new();
    // At most 10 s: 100 waits of 100 ms.
    for _ in 0..100 {
        if received.len() == COUNT {
            break;
        }
        bob_reader.wait_for_data(Duration::from_millis(100));
        received.extend(bob_reader.take(100)?.into_iter().filter_map(|s| s.data));
    }
    for secret in &received {
        println!("secure_pair: bob received {:?}", secret.text);
    }
    let eve_got = eve_reader.take(100)?.len();
    let matched = writer.publication_matched_status()?.current_count;
    println!("secure_pair: eve received {eve_got}; alice's writer matched {matched} reader(s)");
    if received.len() != COUNT || eve_got != 0 || matched != 1 {
        return Err("expected bob alone to receive every secret".into());
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
