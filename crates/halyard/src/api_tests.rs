//! Proves the API's error contract over loopback: errors keep their causes as `source()`, a
//! refused write keeps its own error, a deleted entity answers `AlreadyDeleted` to every call
//! (status getters included), a cargo feature that is off refuses what it provides with
//! `Unsupported` naming it, and only `ParticipantOptions::from_env` reads the environment.

use crate::qos::Durability;
use crate::{
    DataReaderQos, DataWriterQos, DomainParticipant, Error, ParticipantOptions, PublisherQos,
    SubscriberQos,
};
use std::error::Error as _;

#[derive(halyard_derive::Topic, Clone, Debug, Default)]
struct Probe {
    #[key]
    id: u32,
    text: String,
}

/// A domain of its own, so that these tests' participants do not meet other tests' ones.
const DOMAIN: u32 = 151;

/// A participant on loopback with `options` (which read nothing from the environment).
fn participant(options: ParticipantOptions) -> DomainParticipant {
    DomainParticipant::with_options(
        DOMAIN,
        ParticipantOptions {
            interface: Some("lo".into()),
            ..options
        },
    )
    .expect("participant on lo")
}

fn is_deleted<T: std::fmt::Debug>(r: crate::Result<T>) {
    assert!(matches!(r, Err(Error::AlreadyDeleted)), "{r:?}");
}

#[test]
fn wrapped_causes_are_the_errors_source() {
    let e = Error::from(halyard_cdr::CdrError::Truncated);
    let cause = e
        .source()
        .and_then(|s| s.downcast_ref::<halyard_cdr::CdrError>());
    assert!(
        matches!(cause, Some(halyard_cdr::CdrError::Truncated)),
        "{e:?}"
    );
    let e = Error::Thread(std::io::Error::other("no threads"));
    assert!(e.source().is_some_and(|s| s.is::<std::io::Error>()));
    let e = DomainParticipant::with_options(
        DOMAIN,
        ParticipantOptions {
            interface: Some("no-such-if0".into()),
            ..Default::default()
        },
    )
    .err()
    .expect("no such interface");
    let cause = e
        .source()
        .and_then(|s| s.downcast_ref::<halyard_net::InterfaceError>());
    assert!(
        matches!(cause, Some(halyard_net::InterfaceError::NotFound(n)) if n == "no-such-if0"),
        "{e:?}"
    );
    assert!(Error::AlreadyDeleted.source().is_none());
}

#[cfg(feature = "durability")]
#[test]
fn a_store_error_reaches_its_store_error_through_source() {
    let dir = std::env::temp_dir().join(format!("halyard-api-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("not-a-store.sqlite");
    std::fs::write(&file, b"this is not a Halyard store, nor a SQLite database").unwrap();
    let config = crate::durability::DurabilityConfig {
        store: Some(file.clone()),
        participant: ParticipantOptions {
            interface: Some("lo".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    let e = crate::durability::DurabilityService::start(DOMAIN, config)
        .err()
        .expect("a file that is not a store is refused");
    assert!(matches!(e, Error::Store(_)), "{e:?}");
    let cause = e
        .source()
        .and_then(|s| s.downcast_ref::<crate::durability::StoreError>());
    assert!(cause.is_some(), "{e:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(feature = "security")]
#[test]
fn a_security_error_keeps_the_plugins_error_as_its_source() {
    let e = DomainParticipant::with_options(
        DOMAIN,
        ParticipantOptions {
            interface: Some("lo".into()),
            security: Some("/nonexistent/alice".into()),
            ..Default::default()
        },
    )
    .err()
    .expect("no identity there");
    let Error::Security(why) = &e else {
        panic!("expected a Security error, got {e:?}");
    };
    assert!(why.what().contains("/nonexistent"), "{why}");
    let cause = e.source().and_then(|s| s.source());
    assert!(
        cause.is_some_and(|c| c.is::<halyard_security::plugin::PluginError>()),
        "{e:?}"
    );
}

#[test]
fn a_refused_write_keeps_its_own_error() {
    let dp = participant(ParticipantOptions {
        // Samples above 1 KiB are refused by the core.
        tuning: Some(|cfg| cfg.max_sample_size = 1024),
        ..Default::default()
    });
    let topic = dp.create_topic::<Probe>("ApiTestsRefusedWrite").unwrap();
    let mut q = DataWriterQos::default();
    q.resource_limits.max_instances = Some(1);
    let w = dp
        .create_publisher(PublisherQos::default())
        .create_datawriter(&topic, q)
        .unwrap();
    w.write(&Probe {
        id: 1,
        text: "one".into(),
    })
    .unwrap();
    let second_instance = w.write(&Probe {
        id: 2,
        text: "two".into(),
    });
    assert!(
        matches!(second_instance, Err(Error::OutOfResources(_))),
        "{second_instance:?}"
    );
    let too_large = w.write(&Probe {
        id: 1,
        text: "x".repeat(4096),
    });
    assert!(
        matches!(too_large, Err(Error::OutOfResources(_))),
        "{too_large:?}"
    );
    // The writer still works.
    w.write(&Probe {
        id: 1,
        text: "again".into(),
    })
    .unwrap();
}

#[test]
fn a_deleted_entity_answers_already_deleted_to_every_call() {
    let dp = participant(ParticipantOptions::default());
    let topic = dp.create_topic::<Probe>("ApiTestsDeleted").unwrap();
    let w = dp
        .create_publisher(PublisherQos::default())
        .create_datawriter(&topic, DataWriterQos::default())
        .unwrap();
    let r = dp
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&topic, DataReaderQos::default())
        .unwrap();
    assert!(w.publication_matched_status().is_ok());
    assert!(w.stats().is_ok());
    assert!(r.subscription_matched_status().is_ok());
    assert!(r.stats().is_ok());
    // Their state goes, as when their participant deletes them, while the handles remain.
    let writer = w.participant_and_id().1;
    let reader = halyard_wire::EntityId(r.instance_handle().0[12..].try_into().unwrap());
    {
        let mut st = dp.shared.lock();
        st.writers.remove(&writer);
        st.readers.remove(&reader);
    }
    is_deleted(w.publication_matched_status());
    is_deleted(w.offered_incompatible_qos_status());
    is_deleted(w.liveliness_lost_status());
    is_deleted(w.offered_deadline_missed_status());
    is_deleted(w.stats());
    is_deleted(w.set_listener(None));
    is_deleted(w.qos());
    is_deleted(r.subscription_matched_status());
    is_deleted(r.requested_incompatible_qos_status());
    is_deleted(r.liveliness_changed_status());
    is_deleted(r.requested_deadline_missed_status());
    is_deleted(r.stats());
    is_deleted(r.set_listener(Some(crate::listener::on_data_available(|| {}))));
    is_deleted(r.qos());
    is_deleted(r.take(1));
}

#[test]
fn the_library_default_starts_no_embedded_durability_service() {
    let dp = participant(ParticipantOptions::default());
    let topic = dp.create_topic::<Probe>("ApiTestsNoEmbedded").unwrap();
    let q = DataWriterQos::default().durability(Durability::Transient);
    let _w = dp
        .create_publisher(PublisherQos::default())
        .create_datawriter(&topic, q)
        .expect("a TRANSIENT writer without an embedded service");
    #[cfg(feature = "durability")]
    assert!(dp.embedded_durability_stats().is_none());
}

/// `Unsupported` naming `feature`.
#[allow(dead_code)]
fn is_unsupported<T: std::fmt::Debug>(r: crate::Result<T>, feature: &str) {
    match r {
        Err(Error::Unsupported { feature: f, detail }) => {
            assert_eq!(f, feature);
            assert!(
                detail.contains(&format!("cargo feature \"{feature}\"")),
                "{detail}"
            );
        }
        other => panic!("expected Unsupported {{ feature: {feature:?} }}, got {other:?}"),
    }
}

#[cfg(not(feature = "security"))]
#[test]
fn without_security_a_security_identity_is_refused() {
    let r = DomainParticipant::with_options(
        DOMAIN,
        ParticipantOptions {
            interface: Some("lo".into()),
            security: Some("/some/identity".into()),
            ..Default::default()
        },
    );
    is_unsupported(r.map(|_| ()), "security");
}

#[cfg(not(feature = "durability"))]
#[test]
fn without_durability_an_embedded_service_is_refused() {
    let dp = participant(ParticipantOptions {
        durability: crate::durability::EmbeddedDurability::StateDirectory,
        ..Default::default()
    });
    let topic = dp.create_topic::<Probe>("ApiTestsNoStore").unwrap();
    let publisher = dp.create_publisher(PublisherQos::default());
    let q = DataWriterQos::default().durability(Durability::Persistent);
    is_unsupported(
        publisher.create_datawriter(&topic, q).map(|_| ()),
        "durability",
    );
    // A volatile writer needs no service.
    publisher
        .create_datawriter(&topic, DataWriterQos::default())
        .expect("a volatile writer");
}

#[cfg(not(feature = "xml"))]
#[test]
fn without_xml_qos_profiles_are_refused() {
    let xml = r#"<dds><qos_library name="L"><qos_profile name="P"/></qos_library></dds>"#;
    is_unsupported(crate::QosProvider::from_str(xml, "<inline>"), "xml");
}

#[cfg(not(feature = "typelookup"))]
#[test]
fn without_typelookup_a_type_lookup_is_refused() {
    let dp = participant(ParticipantOptions::default());
    let r = dp.lookup_type(&[], std::time::Duration::from_millis(10));
    is_unsupported(r, "typelookup");
}

/// Set in the child process of `only_from_env_reads_the_environment`.
const CHILD_ENV: &str = "HALYARD_API_TESTS_ENV_CHILD";

/// Runs `environment_child` in a process of its own: it sets process-wide variables, which
/// would race the other tests of this binary.
#[test]
fn only_from_env_reads_the_environment() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "api_tests::environment_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .output()
        .expect("run the child");
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("1 passed"), "the child ran nothing: {said}");
}

#[test]
#[ignore = "the child process of only_from_env_reads_the_environment"]
fn environment_child() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    std::env::set_var("HALYARD_INTERFACE", "no-such-if0");
    std::env::set_var("HALYARD_SECURITY", "/nonexistent/alice");
    std::env::set_var("HALYARD_SECURITY_LOG", "1");
    std::env::set_var("HALYARD_DURABILITY_STORE", "/nonexistent/store.sqlite");
    std::env::remove_var("HALYARD_DURABILITY");
    std::env::remove_var("HALYARD_DURABILITY_SYNC");
    std::env::remove_var("HALYARD_DURABILITY_COMMIT");

    // The defaults read nothing: a participant is neither secured nor bound to the named
    // interface (it fails, if at all, for want of a multicast interface on this host).
    let defaults = ParticipantOptions::default();
    assert_eq!(defaults.interface, None);
    assert_eq!(defaults.security, None);
    assert!(!defaults.security_log);
    assert_eq!(
        defaults.durability,
        crate::durability::EmbeddedDurability::Off
    );
    if let Err(
        e @ (Error::Security(_) | Error::Interface(halyard_net::InterfaceError::NotFound(_))),
    ) = DomainParticipant::new(DOMAIN)
    {
        panic!("DomainParticipant::new read the environment: {e:?}");
    }

    // from_env honours every variable.
    let env = ParticipantOptions::from_env().expect("options from the environment");
    assert_eq!(env.interface.as_deref(), Some("no-such-if0"));
    assert_eq!(
        env.security.as_deref(),
        Some(std::path::Path::new("/nonexistent/alice"))
    );
    assert!(env.security_log);
    assert_eq!(
        env.durability,
        crate::durability::EmbeddedDurability::On {
            store: Some("/nonexistent/store.sqlite".into())
        }
    );
    std::env::remove_var("HALYARD_SECURITY");
    let e = DomainParticipant::with_options(DOMAIN, ParticipantOptions::from_env().unwrap())
        .err()
        .expect("the interface HALYARD_INTERFACE names does not exist");
    assert!(
        matches!(&e, Error::Interface(halyard_net::InterfaceError::NotFound(n)) if n == "no-such-if0"),
        "{e:?}"
    );
    std::env::set_var("HALYARD_INTERFACE", "");
    assert_eq!(ParticipantOptions::from_env().unwrap().interface, None);

    // The durability variables: off, the default store, and a value refused by name.
    std::env::remove_var("HALYARD_DURABILITY_STORE");
    assert_eq!(
        ParticipantOptions::from_env().unwrap().durability,
        crate::durability::EmbeddedDurability::StateDirectory
    );
    std::env::set_var("HALYARD_DURABILITY", "OFF");
    std::env::set_var("HALYARD_DURABILITY_SYNC", "fast");
    assert_eq!(
        ParticipantOptions::from_env().unwrap().durability,
        crate::durability::EmbeddedDurability::Off
    );
    std::env::remove_var("HALYARD_DURABILITY");
    #[cfg(feature = "durability")]
    {
        match ParticipantOptions::from_env() {
            Err(Error::BadEnvironment { variable, reason }) => {
                assert_eq!(variable, "HALYARD_DURABILITY_SYNC");
                assert!(reason.contains("fast"), "{reason}");
            }
            other => panic!("expected BadEnvironment, got {other:?}"),
        }
        std::env::set_var("HALYARD_DURABILITY_SYNC", "full");
        std::env::set_var("HALYARD_DURABILITY_COMMIT", "sample");
        let env = ParticipantOptions::from_env().unwrap();
        assert_eq!(env.durability_sync, crate::durability::SyncLevel::Full);
        assert_eq!(
            env.durability_commit,
            crate::durability::CommitPolicy::PerSample
        );
    }
}
