//! The readers of `halyard sub`: as many as the topic's writers need, and each sample printed
//! once.
//!
//! A reader's QoS is fixed when it is created, but `sub` is often started before any writer
//! exists, and what the writers will offer is unknown then. One reader cannot match them all:
//! a RELIABLE reader does not match a BEST_EFFORT writer, a TRANSIENT_LOCAL one does not match
//! a VOLATILE writer, a SHARED one no EXCLUSIVE writer, and partitions must meet. So `sub`
//! keeps a set of readers, each requesting one *class* of QoS (reliability, durability,
//! ownership, partitions), and adds one whenever discovery shows a writer of the topic that no
//! reader of its class serves:
//!
//! - at start, a RELIABLE, VOLATILE reader in the default partition (the options override
//!   each part), which every reliable writer started later matches, and one reader for the
//!   class of each writer already seen;
//! - then, for every writer discovered, a reader of exactly what it offers (its reliability,
//!   its durability, so a durable writer's history is received, its ownership and its
//!   partitions), unless a reader of that class exists. A best-effort writer thus gets a
//!   best-effort reader, a TRANSIENT_LOCAL writer a TRANSIENT_LOCAL one.
//!
//! A writer may match several of these readers (a best-effort reader matches reliable
//! writers too, a volatile one durable writers): every sample is printed once, the others
//! dropped by (writer, sequence number). Options the user gave (`--reliable`,
//! `--best-effort`, `--durability`, `--partition`) fix that part of every class; a writer
//! they make incompatible is reported once on stderr.
//!
//! Readers are also added for writers that register the topic's type under another name
//! when `--idl` gives the type and `--type` does not pin the name (the IDL's `M::T` may be
//! announced as `M_T`), if the writer's type information, when it has some, is ours.
//! At most [`MAX_READERS`] readers.

use crate::dyntopic::{Common, Resolved};
use halyard::{
    Condition, DataReaderQos, DomainParticipant, EndpointTypeInformation, InstanceHandle, Sample,
    Subscriber, SubscriberQos, UntypedDataReader, UntypedTopic, WaitSet,
};
use halyard_core::matching::{pairing, Pairing, Side, XCDR1, XCDR2};
use halyard_wire::discovery::EndpointData;
use halyard_wire::qos::{DurabilityKind, EndpointQos, History, OwnershipKind, ReliabilityKind};
use halyard_wire::{Duration as WireDuration, Guid};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// Most readers `sub` creates for one topic.
pub const MAX_READERS: usize = 16;
/// Sequence numbers above a writer's contiguous floor remembered for deduplication.
const MAX_SEEN_ABOVE_FLOOR: usize = 65_536;
/// Writers whose samples are remembered for deduplication.
const MAX_WRITERS_TRACKED: usize = 4096;

/// What a reader's class fixes.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Class {
    type_name: String,
    reliability: ReliabilityKind,
    durability: DurabilityKind,
    ownership: OwnershipKind,
    partitions: Vec<String>,
}

struct Lane {
    class: Class,
    qos: EndpointQos,
    reader: UntypedDataReader,
    /// The reader's subscriber, in the class's partitions (after the reader: dropped after it).
    _subscriber: Subscriber,
}

/// The readers of one `sub`.
pub struct Readers<'a> {
    dp: &'a DomainParticipant,
    common: &'a Common,
    resolved: &'a Resolved,
    topic_name: String,
    topics: BTreeMap<String, UntypedTopic>,
    lanes: Vec<Lane>,
    waitset: WaitSet,
    /// Writers reported as not servable (so each is reported once).
    reported: BTreeSet<Guid>,
    /// Writers every reader class of which exists (so discovery is judged once a writer).
    served: BTreeSet<Guid>,
    /// May lanes take another type name than the resolved one?
    other_names: bool,
    seen: Dedup,
    full_reported: bool,
}

impl<'a> Readers<'a> {
    /// The first readers: the default class, and the classes of the writers in `writers`.
    /// `other_names`: writers of the topic that register another type name may be read as
    /// the resolved type (see the module's documentation).
    pub fn new(
        dp: &'a DomainParticipant,
        common: &'a Common,
        resolved: &'a Resolved,
        other_names: bool,
    ) -> Result<Self, halyard::Error> {
        let topic_name = common.topic.clone().unwrap_or_default();
        let mut r = Readers {
            dp,
            common,
            resolved,
            topic_name,
            topics: BTreeMap::new(),
            lanes: Vec::new(),
            waitset: WaitSet::new(),
            reported: BTreeSet::new(),
            served: BTreeSet::new(),
            other_names,
            seen: Dedup::default(),
            full_reported: false,
        };
        let first = r.default_class();
        r.add(first)?;
        r.adapt()?;
        Ok(r)
    }

    /// How many readers there are.
    pub fn len(&self) -> usize {
        self.lanes.len()
    }

    /// The class of a reader created before any writer is known.
    fn default_class(&self) -> Class {
        Class {
            type_name: self.resolved.type_name.clone(),
            reliability: self.common.reliability.unwrap_or(ReliabilityKind::Reliable),
            durability: self.common.durability.unwrap_or(DurabilityKind::Volatile),
            ownership: OwnershipKind::Shared,
            partitions: self.common.partitions.clone(),
        }
    }

    /// The class that serves writer `w`, as the options allow.
    fn class_of(&self, w: &EndpointData) -> Class {
        let mut partitions = if self.common.partitions.is_empty() {
            w.qos.partition.clone()
        } else {
            self.common.partitions.clone()
        };
        partitions.sort();
        partitions.dedup();
        Class {
            type_name: w.type_name.clone(),
            reliability: self.common.reliability.unwrap_or(w.qos.reliability.kind),
            durability: self.common.durability.unwrap_or(w.qos.durability),
            ownership: w.qos.ownership,
            partitions,
        }
    }

    fn qos_of(&self, c: &Class) -> EndpointQos {
        let mut q = EndpointQos::reader_default();
        q.reliability.kind = c.reliability;
        q.durability = c.durability;
        q.ownership = c.ownership;
        q.partition = c.partitions.clone();
        q.history = self.common.history.unwrap_or(History::KeepAll);
        // Whatever latency budget a writer offers is acceptable to a tool that prints.
        q.latency_budget = WireDuration::INFINITE;
        q.data_representation = vec![XCDR1, XCDR2];
        q
    }

    fn add(&mut self, class: Class) -> Result<(), halyard::Error> {
        let qos = self.qos_of(&class);
        let topic = match self.topics.get(&class.type_name) {
            Some(t) => t.clone(),
            None => {
                let mut r = self.resolved.clone();
                r.type_name = class.type_name.clone();
                let t = self
                    .dp
                    .create_untyped_topic(&self.topic_name, r.untyped())?;
                self.topics.insert(class.type_name.clone(), t.clone());
                t
            }
        };
        // PARTITION is a subscriber's policy: each class's reader has its own subscriber.
        let subscriber = self
            .dp
            .create_subscriber(SubscriberQos::default().partition(qos.partition.clone()));
        let reader =
            subscriber.create_untyped_datareader(&topic, DataReaderQos::from(&qos), None)?;
        self.waitset
            .attach_condition(reader.create_readcondition(false))?;
        self.lanes.push(Lane {
            class,
            qos,
            reader,
            _subscriber: subscriber,
        });
        Ok(())
    }

    /// Adds a reader for every writer of the topic that none serves yet; reports (once) the
    /// writers the options keep from being served.
    pub fn adapt(&mut self) -> Result<(), halyard::Error> {
        let own = self.dp.guid_prefix();
        let writers: Vec<EndpointData> = self
            .dp
            .discovered_publications()
            .into_iter()
            .filter(|w| {
                w.topic_name == self.topic_name
                    && w.guid.prefix != own
                    && !self.served.contains(&w.guid)
            })
            .collect();
        for w in writers {
            if !self.readable(&w) {
                continue;
            }
            let class = self.class_of(&w);
            if self.lanes.iter().any(|l| l.class == class) {
                self.served.insert(w.guid);
                continue;
            }
            if self.lanes.len() >= MAX_READERS {
                if !self.full_reported {
                    self.full_reported = true;
                    eprintln!(
                        "halyard sub: {} readers already; writers that need another QoS are \
                         not read",
                        MAX_READERS
                    );
                }
                continue;
            }
            let qos = self.qos_of(&class);
            let side = |q| Side {
                topic: &self.topic_name,
                type_name: &w.type_name,
                qos: q,
            };
            match pairing(side(&w.qos), side(&qos)) {
                Pairing::Compatible => {
                    self.add(class)?;
                    self.served.insert(w.guid);
                }
                Pairing::Incompatible(policy) => {
                    self.report(&w, &format!("offers {policy:?} QoS the options exclude"))
                }
                Pairing::Unrelated => self.report(&w, "is in no partition the options name"),
            }
        }
        Ok(())
    }

    /// True when writer `w` writes a type these readers decode.
    fn readable(&mut self, w: &EndpointData) -> bool {
        if w.type_name == self.resolved.type_name {
            return true;
        }
        if !self.other_names {
            return false;
        }
        let ours = self
            .resolved
            .description
            .as_ref()
            .and_then(|d| halyard::xtypes::TypeInformation::from_xcdr2(&d.type_information).ok())
            .map(|i| i.complete.typeid_with_size.type_id);
        match (w.decoded_type_information(), ours) {
            (Some(theirs), Some(ours)) if theirs.complete.typeid_with_size.type_id != ours => {
                self.report(
                    w,
                    &format!("writes type {} (not the --idl type)", w.type_name),
                );
                false
            }
            _ => true,
        }
    }

    fn report(&mut self, w: &EndpointData, why: &str) {
        if self.reported.insert(w.guid) {
            eprintln!(
                "halyard sub: writer {} of {} {why}; not read",
                crate::discovery::guid(w.guid),
                self.topic_name
            );
        }
    }

    /// Waits up to `timeout` for data on any reader; true if some arrived.
    pub fn wait(&self, timeout: Duration) -> bool {
        self.waitset
            .wait(timeout)
            .is_ok_and(|c: Vec<Condition>| !c.is_empty())
    }

    /// Takes what every reader has, each sample once (the first reader to deliver a writer's
    /// sample prints it).
    pub fn take(&mut self, max: usize) -> Result<Vec<Sample<Vec<u8>>>, halyard::Error> {
        let mut out = Vec::new();
        for lane in &self.lanes {
            for s in lane.reader.take(max)? {
                if self
                    .seen
                    .first_time(s.info.publication_handle, s.info.sequence_number.0)
                {
                    out.push(s);
                }
            }
        }
        Ok(out)
    }

    /// The writers some reader matches now.
    pub fn matched_writers(&self) -> BTreeSet<InstanceHandle> {
        self.lanes
            .iter()
            .filter_map(|l| l.reader.matched_publications().ok())
            .flatten()
            .collect()
    }

    /// The QoS of each reader, for the start-up message.
    pub fn describe(&self) -> String {
        self.lanes
            .iter()
            .map(|l| describe_qos(&l.qos))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// `reliable volatile [partitions]` and so on.
pub fn describe_qos(q: &EndpointQos) -> String {
    let r = match q.reliability.kind {
        ReliabilityKind::Reliable => "reliable",
        ReliabilityKind::BestEffort => "best-effort",
    };
    let d = match q.durability {
        DurabilityKind::Volatile => "volatile",
        DurabilityKind::TransientLocal => "transient-local",
        DurabilityKind::Transient => "transient",
        DurabilityKind::Persistent => "persistent",
    };
    let mut s = format!("{r} {d}");
    if q.ownership == OwnershipKind::Exclusive {
        s.push_str(" exclusive");
    }
    if !q.partition.is_empty() {
        s.push_str(&format!(" partitions {:?}", q.partition));
    }
    s
}

/// Which (writer, sequence number) pairs were printed already. Per writer: every sequence
/// number up to a floor, and those seen above it (bounded).
#[derive(Default)]
struct Dedup {
    writers: BTreeMap<InstanceHandle, Seen>,
}

#[derive(Default)]
struct Seen {
    floor: i64,
    above: BTreeSet<i64>,
}

impl Dedup {
    /// True the first time sample (or lifecycle notice) `sn` of writer `writer` shows up.
    fn first_time(&mut self, writer: InstanceHandle, sn: i64) -> bool {
        if sn <= 0 {
            // A notice made up by the reader (no writer's sequence number): keep it.
            return true;
        }
        if !self.writers.contains_key(&writer) && self.writers.len() >= MAX_WRITERS_TRACKED {
            self.writers.pop_first();
        }
        let w = self.writers.entry(writer).or_default();
        if sn <= w.floor || !w.above.insert(sn) {
            return false;
        }
        while w.above.first() == Some(&(w.floor + 1)) {
            w.above.pop_first();
            w.floor += 1;
        }
        if w.above.len() > MAX_SEEN_ABOVE_FLOOR {
            // Forget the oldest gap: what is below it is taken as seen.
            if let Some(first) = w.above.pop_first() {
                w.floor = first;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_writers_sample_passes_once_whatever_the_order() {
        let mut d = Dedup::default();
        let order = [3, 1, 2, 2, 1, 5, 4, 3, 6];
        let passed: Vec<i64> = order
            .iter()
            .filter(|&&sn| d.first_time(InstanceHandle([1; 16]), sn))
            .copied()
            .collect();
        assert_eq!(passed, [3, 1, 2, 5, 4, 6]);
        assert_eq!(d.writers[&InstanceHandle([1; 16])].floor, 6);
        assert!(
            d.first_time(InstanceHandle([2; 16]), 1),
            "another writer's sample 1"
        );
        assert!(
            d.first_time(InstanceHandle([1; 16]), 0),
            "a notice without sequence number"
        );
        assert!(d.first_time(InstanceHandle([1; 16]), 0));
    }
}
