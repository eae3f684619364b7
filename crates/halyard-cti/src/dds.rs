//! The node's DDS side: one topic per TLP level, one partition per sector, the QoS of seed 000
//! (RELIABLE, KEEP_ALL within configured ResourceLimits, PERSISTENT), a durability service in
//! the process, and DDS Security from the organisation's identity.
//!
//! Design. Protection is decided per topic by the community's governance document (see
//! [`crate::community`]), so the marking chooses the topic: `CtiTlpClear` and `CtiTlpGreen`
//! are signed, `CtiTlpAmber` encrypted, `CtiTlpRed` encrypted with origin authentication.
//! AMBER+STRICT never leaves the organisation and has no topic. The sector chooses the
//! partition: the node has one writer and one reader per (marking, sector) pair, so a received
//! sample's sector is the sector of the reader that took it, and the permissions document,
//! which names the partitions an organisation may read and write, keeps a node outside a
//! sector from either.
//!
//! Every version of an object is one sample of the instance keyed by the STIX id, written
//! with the object's `modified` time as its source timestamp; revocation and deletion dispose
//! of the instance. PERSISTENT writers are stored by the durability service each node runs
//! (a participant of its own with the same identity, on `durability.sqlite`), so a node that
//! joins late or restarts gets what it missed from any live member of its sectors; its
//! database recognises the versions it already has.
//!
//! Receiving never trusts the peer: each sample is parsed and validated again by the node
//! ([`crate::node::Node::receive`]); invalid ones are counted and dropped.

use crate::config::Config;
use crate::node::{Incoming, Node, Outgoing, Sharer};
use crate::presence;
use halyard::durability::{DurabilityConfig, DurabilityService, EmbeddedDurability};
use halyard::qos::{Durability, History, ResourceLimits};
use halyard::{
    DataReader, DataReaderQos, DataWriter, DataWriterQos, DomainParticipant, InstanceState,
    ParticipantOptions, PublisherQos, SubscriberQos, Time,
};
use halyard_stix::marking::Tlp;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

/// The DDS type of the topics, generated from `idl/cti.idl` by Halyard's IDL compiler.
#[allow(missing_docs)] // generated; the IDL file documents the fields
pub mod types {
    include!(concat!(env!("OUT_DIR"), "/cti.rs"));
}

pub use types::cti::StixObject as StixSample;

pub use crate::config::SHARED_TLPS;

/// The topic of a marking (`None` for AMBER+STRICT, which is never shared).
pub fn topic_name(tlp: Tlp) -> Option<&'static str> {
    Some(match tlp {
        Tlp::Clear => "CtiTlpClear",
        Tlp::Green => "CtiTlpGreen",
        Tlp::Amber => "CtiTlpAmber",
        Tlp::Red => "CtiTlpRed",
        Tlp::AmberStrict => return None,
    })
}

/// Why DDS could not start.
#[derive(Debug)]
pub struct DdsError(pub String);

impl std::fmt::Display for DdsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DdsError {}

fn dds_err(what: &str) -> impl Fn(halyard::Error) -> DdsError + '_ {
    move |e| DdsError(format!("{what}: {e}"))
}

/// The node's participant, writers, readers and durability service.
pub struct Dds {
    participant: DomainParticipant,
    service: std::sync::Mutex<Option<DurabilityService>>,
    writers: BTreeMap<(Tlp, String), DataWriter<StixSample>>,
    /// Readers not yet handed to their receiving threads.
    readers: std::sync::Mutex<Vec<(Tlp, String, DataReader<StixSample>)>>,
    origin: String,
    /// Members seen before, listed as gone once discovery drops them.
    gone: std::sync::Mutex<BTreeMap<String, Vec<String>>>,
    stop: Arc<AtomicBool>,
    threads: std::sync::Mutex<Vec<JoinHandle<()>>>,
}

fn participant_options(cfg: &Config, name: &str) -> Result<ParticipantOptions, DdsError> {
    let mut o = ParticipantOptions::from_env().map_err(dds_err("participant options"))?;
    o.durability = EmbeddedDurability::Off;
    o.entity_name = Some(name.to_string());
    if let Some(i) = &cfg.node.interface {
        o.interface = Some(i.clone());
    }
    if let Some(s) = &cfg.node.security {
        o.security = Some(s.clone());
    }
    Ok(o)
}

/// The writers' and readers' QoS: RELIABLE, KEEP_ALL, PERSISTENT, the configured limits, and
/// the durability service keeping every version too.
fn limits(cfg: &Config) -> ResourceLimits {
    let l = &cfg.limits;
    let cap = |v: usize| Some(u32::try_from(v).unwrap_or(u32::MAX));
    ResourceLimits {
        max_samples: cap(l.max_samples),
        max_instances: cap(l.max_instances),
        max_samples_per_instance: cap(l.max_versions),
    }
}

fn writer_qos(cfg: &Config) -> DataWriterQos {
    let l = &cfg.limits;
    let cap = |v: usize| Some(u32::try_from(v).unwrap_or(u32::MAX));
    // The writer's own history is small: once it is full, what every reader and durability
    // service acknowledged is dropped, oldest first (the services keep it all, on disk).
    let history = ResourceLimits {
        max_samples: cap(l.writer_history),
        max_instances: cap(l.max_instances),
        max_samples_per_instance: cap(l.writer_history.min(l.max_versions)),
    };
    DataWriterQos::default()
        .reliable()
        .keep_all()
        .durability(Durability::Persistent)
        .resource_limits(history)
        .durability_service(halyard::qos::DurabilityService {
            service_cleanup_delay: Duration::ZERO,
            history: History::KeepAll,
            resource_limits: limits(cfg),
        })
        .max_blocking_time(Duration::from_secs(10))
        // A node that stops (or restarts) unregisters its instances; that must never read as
        // a deletion: only an explicit revocation or deletion disposes of an object.
        .autodispose_unregistered_instances(false)
}

fn reader_qos(cfg: &Config) -> DataReaderQos {
    DataReaderQos::default()
        .reliable()
        .keep_all()
        .durability(Durability::Persistent)
        .resource_limits(limits(cfg))
}

impl Dds {
    /// Joins the domain with the organisation's identity, starts the durability service on
    /// the node's store directory, and creates a writer and a reader per (marking, sector).
    pub fn start(cfg: &Config) -> Result<Dds, DdsError> {
        std::fs::create_dir_all(&cfg.node.store)
            .map_err(|e| DdsError(format!("{}: {e}", cfg.node.store.display())))?;
        let org = &cfg.node.organisation;
        let service = DurabilityService::start(
            cfg.node.domain,
            DurabilityConfig {
                store: Some(cfg.durability_path()),
                participant: participant_options(cfg, &format!("halyard-cti {org} durability"))?,
                ..Default::default()
            },
        )
        .map_err(dds_err("durability service"))?;
        let participant = DomainParticipant::with_options(
            cfg.node.domain,
            participant_options(cfg, &format!("halyard-cti {org}"))?,
        )
        .map_err(dds_err("participant"))?;
        let mut writers = BTreeMap::new();
        let mut readers = Vec::new();
        for tlp in SHARED_TLPS {
            let Some(name) = topic_name(tlp) else {
                continue;
            };
            let topic = participant
                .create_topic::<StixSample>(name)
                .map_err(dds_err(name))?;
            // The node's readers take what other organisations share: its own writers filter
            // its own objects out for them, so they neither travel nor take room in a reader.
            // (Organisation names are letters, digits, '-', '_' and '.': a safe literal.)
            let from_others = participant
                .create_contentfilteredtopic(
                    &format!("{name}FromOthers"),
                    &topic,
                    "origin <> %0",
                    vec![format!("'{org}'")],
                )
                .map_err(dds_err(name))?;
            for sector in &cfg.sectors {
                let publisher =
                    participant.create_publisher(PublisherQos::default().partition([sector]));
                let w = publisher
                    .create_datawriter(&topic, writer_qos(cfg))
                    .map_err(dds_err(&format!("writer {name} in {sector}")))?;
                writers.insert((tlp, sector.clone()), w);
                let subscriber =
                    participant.create_subscriber(SubscriberQos::default().partition([sector]));
                let r = subscriber
                    .create_datareader_filtered(&from_others, reader_qos(cfg), None)
                    .map_err(dds_err(&format!("reader {name} in {sector}")))?;
                readers.push((tlp, sector.clone(), r));
            }
        }
        Ok(Dds {
            participant,
            service: std::sync::Mutex::new(Some(service)),
            writers,
            readers: std::sync::Mutex::new(readers),
            origin: org.clone(),
            gone: std::sync::Mutex::default(),
            stop: Arc::new(AtomicBool::new(false)),
            threads: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// The participant (for discovery listings).
    pub fn participant(&self) -> &DomainParticipant {
        &self.participant
    }

    /// Starts delivering what the readers receive to `node` (one thread per reader).
    pub fn start_receiving(&self, node: Weak<Node>) {
        let mut threads = self.threads.lock().unwrap_or_else(|p| p.into_inner());
        let readers = std::mem::take(&mut *self.readers.lock().unwrap_or_else(|p| p.into_inner()));
        for (tlp, sector, reader) in readers {
            let node = node.clone();
            let stop = self.stop.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("cti-rx-{}-{sector}", tlp.as_str()))
                .spawn(move || receive_loop(&reader, tlp, &sector, &node, &stop));
            match spawned {
                Ok(h) => threads.push(h),
                Err(e) => eprintln!("halyard-cti: cannot start a receiving thread: {e}"),
            }
        }
    }

    /// Stops the receiving threads and the durability service.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|p| p.into_inner()));
        for h in threads {
            let _ = h.join();
        }
        let service = self
            .service
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(s) = service {
            s.stop();
        }
    }
}

impl Drop for Dds {
    fn drop(&mut self) {
        self.stop();
    }
}

fn receive_loop(
    reader: &DataReader<StixSample>,
    tlp: Tlp,
    sector: &str,
    node: &Weak<Node>,
    stop: &AtomicBool,
) {
    // The reader's content filter keeps the node's own objects out. A disposal carries no
    // data: the node finds the object by the instance it came as.
    while !stop.load(Ordering::Relaxed) {
        if !reader.wait_for_data(Duration::from_millis(200)) {
            continue;
        }
        let samples = match reader.take(4096) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("halyard-cti: reading {} in {sector}: {e}", tlp.as_str());
                continue;
            }
        };
        let Some(node) = node.upgrade() else { return };
        let mut batch = Vec::with_capacity(samples.len());
        for s in samples {
            match s.data {
                Some(d) if s.info.valid_data => {
                    batch.push(Incoming {
                        key: d.id,
                        stix_type: d.stix_type,
                        tlp_field: d.tlp,
                        tlp,
                        sector: sector.to_string(),
                        origin: d.origin,
                        shared_at_ns: d.shared_at_ns,
                        json: d.json,
                        instance: s.info.instance_handle.0,
                    });
                }
                _ if !s.info.valid_data
                    && s.info.instance_state == InstanceState::NotAliveDisposed =>
                {
                    node.receive_dispose_instance(&s.info.instance_handle.0, tlp, sector);
                }
                _ => {}
            }
        }
        if !batch.is_empty() {
            node.receive(batch);
        }
    }
}

/// The node's [`Sharer`] over DDS.
impl Sharer for Dds {
    fn share(&self, out: &[Outgoing]) -> Result<(), String> {
        for o in out {
            let w = self
                .writers
                .get(&(o.tlp, o.sector.clone()))
                .ok_or_else(|| format!("no writer for {} in {}", o.tlp.as_str(), o.sector))?;
            let obj = &o.object;
            let sample = StixSample {
                id: obj.id.clone(),
                stix_type: obj.stix_type.clone(),
                spec_version: obj.spec_version.clone(),
                created: obj.created.clone().unwrap_or_default(),
                modified: obj.modified.clone().unwrap_or_default(),
                created_by_ref: obj.created_by_ref.clone().unwrap_or_default(),
                tlp: o.tlp.as_str().to_string(),
                origin: self.origin.clone(),
                revoked: obj.revoked,
                shared_at_ns: o.shared_at_ns,
                json: obj.to_json_string(),
            };
            let ts = source_time(obj.modified.as_deref(), o.shared_at_ns);
            w.write_w_timestamp(&sample, ts)
                .map_err(|e| format!("writing {} to {}: {e}", obj.id, o.sector))?;
            if obj.revoked {
                w.dispose_w_timestamp(&sample, ts)
                    .map_err(|e| format!("disposing of {} in {}: {e}", obj.id, o.sector))?;
            }
        }
        Ok(())
    }

    fn dispose(&self, id: &str, tlp: Tlp, sector: &str) -> Result<(), String> {
        let w = self
            .writers
            .get(&(tlp, sector.to_string()))
            .ok_or_else(|| format!("no writer for {} in {sector}", tlp.as_str()))?;
        let key = StixSample {
            id: id.to_string(),
            stix_type: String::new(),
            spec_version: String::new(),
            created: String::new(),
            modified: String::new(),
            created_by_ref: String::new(),
            tlp: String::new(),
            origin: self.origin.clone(),
            revoked: true,
            shared_at_ns: 0,
            json: String::new(),
        };
        w.dispose(&key)
            .map_err(|e| format!("disposing of {id}: {e}"))
    }

    fn presence(&self) -> Vec<presence::Member> {
        let hex = |p: &halyard::GuidPrefix| p.0.iter().map(|b| format!("{b:02x}")).collect();
        let participants: Vec<presence::SeenParticipant> = self
            .participant
            .discovered_participants()
            .into_iter()
            .map(|p| presence::SeenParticipant {
                prefix: hex(&p.guid.prefix),
                name: p.entity_name.clone(),
                secure: p.security_info.is_some() || p.identity_token.is_some(),
                lease_secs: f64::from(p.lease_duration.seconds)
                    + f64::from(p.lease_duration.fraction) / 4_294_967_296.0,
            })
            .filter(|p| {
                let own = p.name.as_deref().and_then(presence::organisation_of);
                own.is_none_or(|(org, _)| org != self.origin)
            })
            .collect();
        let cti_topics: Vec<&str> = SHARED_TLPS.iter().filter_map(|t| topic_name(*t)).collect();
        let readers: Vec<presence::SeenReader> = self
            .participant
            .discovered_subscriptions()
            .into_iter()
            .filter(|r| cti_topics.contains(&r.topic_name.as_str()))
            .map(|r| presence::SeenReader {
                prefix: hex(&r.guid.prefix),
                partitions: r.qos.partition.clone(),
            })
            .collect();
        let mut deliveries = Vec::new();
        for ((_, sector), w) in &self.writers {
            for d in w.delivery_report().unwrap_or_default() {
                if !d.matched || d.durability_service {
                    continue;
                }
                if let halyard::Reception::Acknowledged { acknowledged, owed } = d.reception {
                    deliveries.push(presence::SeenDelivery {
                        sector: sector.clone(),
                        prefix: hex(&d.reader.prefix),
                        acknowledged,
                        owed,
                    });
                }
            }
        }
        let mut gone = self.gone.lock().unwrap_or_else(|p| p.into_inner());
        presence::assemble(&participants, &readers, &deliveries, &mut gone)
    }

    fn acknowledged(&self, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        self.writers.values().all(|w| {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            w.wait_for_acknowledgments(left).is_ok()
        })
    }
}

/// The source timestamp of a version: its `modified` time, so that readers order an object's
/// versions as STIX does; the sharing time when it has none.
fn source_time(modified: Option<&str>, shared_at_ns: i64) -> Time {
    let ns = modified
        .and_then(halyard_stix::time::parse_rfc3339)
        .and_then(|n| i64::try_from(n).ok())
        .filter(|&n| n > 0)
        .unwrap_or(shared_at_ns);
    Time::from_nanos(ns)
}
