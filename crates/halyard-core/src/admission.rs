//! What a local reader admits, per instance: OWNERSHIP (EXCLUSIVE, DDS 1.4 §2.2.3.9–10),
//! DESTINATION_ORDER BY_SOURCE_TIMESTAMP (§2.2.3.17), TIME_BASED_FILTER (§2.2.3.12) and the
//! requested DEADLINE (§2.2.3.7).
//!
//! Design. Samples leave the reliability layer in order per writer; before they reach the
//! application each one passes [`Admission::admit`], which keeps, per instance, the owning
//! writer and its strength, the newest source timestamp, when a sample was last admitted and
//! the deadline timer. A reader with none of these policies skips all of it (one branch).
//!
//! - Ownership: an instance's owner is the strongest writer that wrote it and is still in
//!   the running (ties go to the lower GUID, so every reader picks the same owner). The owner
//!   loses the instance when it unregisters it, when it loses liveliness or is unmatched
//!   ([`Admission::writer_lost`]), or when the instance misses its deadline; the next writer
//!   to write the instance then owns it. Samples, disposals and unregistrations of other
//!   writers are filtered out.
//! - By source timestamp: a change older than the newest one admitted for its instance is
//!   filtered out, so every reader ends with the same final value whatever the arrival order.
//! - Time-based filter: at most one data sample per instance per minimum separation,
//!   measured on source timestamps (as Cyclone DDS does): a sample stamped less than the
//!   separation after the last one admitted of its instance is dropped. A sample without a
//!   source timestamp is measured on its reception time instead (against the last such
//!   sample). The instance's lifecycle changes (dispose, unregister) always pass. Source
//!   timestamps make the decision the writer's as well: a Halyard writer applies the same rule
//!   ([`within_separation`]) to what it sends each Halyard reader (see `writer::time_filter`),
//!   and from one writer's stream both pick the same samples, whatever the network did to
//!   them.
//! - Deadline: an instance that is alive and gets no data within the period is reported each
//!   period ([`Admission::expire`]), from its first sample of a live writer (history that a
//!   durability service's relay delivers starts no deadline).
//!
//! Bounds: at most `max_instances` instances are tracked (the reader's RESOURCE_LIMITS, or
//! [`crate::config::MAX_ADMISSION_INSTANCES`]); a sample of an instance beyond that is refused
//! and counted. An instance unregistered by all its writers is forgotten.

use crate::deadline::{DeadlineQueue, Key};
use crate::event::{ChangeKind, ReceivedSample};
use crate::time::{wire_to_std, Instant};
use crate::{seeded_map, SeededMap};
use halyard_wire::qos::{DestinationOrderKind, EndpointQos, OwnershipKind};
use halyard_wire::{Duration as WireDuration, Guid, Time};
use std::time::Duration;

/// Computes the key hash of a serialized sample (the reader's type knows how): a whole sample,
/// or only its key when the second argument is true (a disposal's or unregistration's
/// payload); `None` when the payload does not decode.
pub type KeyFn = std::sync::Arc<dyn Fn(&[u8], bool) -> Option<[u8; 16]> + Send + Sync>;

/// What a reader needs to know of a matched writer's QoS.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct WriterTraits {
    /// OWNERSHIP_STRENGTH.
    pub(crate) strength: i32,
    /// LIFESPAN (`None` = infinite).
    pub(crate) lifespan: Option<Duration>,
}

impl WriterTraits {
    /// The traits of a writer with `qos`.
    pub(crate) fn of(qos: &EndpointQos) -> Self {
        WriterTraits {
            strength: qos.ownership_strength,
            lifespan: finite(qos.lifespan),
        }
    }

    /// True if nothing distinguishes it from a writer with default QoS.
    pub(crate) fn is_default(&self) -> bool {
        self.strength == 0 && self.lifespan.is_none()
    }
}

/// A wire duration as a std one, `None` if infinite.
pub(crate) fn finite(d: WireDuration) -> Option<Duration> {
    (d != WireDuration::INFINITE).then(|| wire_to_std(d))
}

/// A source timestamp that can be measured: present and not TIME_INVALID.
pub(crate) fn source_stamp(ts: Option<Time>) -> Option<Time> {
    ts.filter(|t| *t != Time::INVALID)
}

/// True if a sample stamped `ts` comes less than `separation` after `last`, the source
/// timestamp of the last sample of its instance that went through: TIME_BASED_FILTER drops it
/// (DDS 1.4 §2.2.3.12). Readers ([`Admission::admit`]) and writers filtering for Halyard
/// readers decide with this one rule.
pub(crate) fn within_separation(last: Time, ts: Time, separation: Duration) -> bool {
    let separation_ns = i64::try_from(separation.as_nanos()).unwrap_or(i64::MAX);
    ts.to_nanos() < last.to_nanos().saturating_add(separation_ns)
}

/// Why a sample was not admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Filtered {
    /// Another writer owns the instance.
    NotOwner,
    /// Older than the newest change of its instance (BY_SOURCE_TIMESTAMP).
    OutOfOrder,
    /// Within the minimum separation after the last sample of its instance.
    TimeFilter,
    /// The instance is beyond the number of instances tracked.
    TooManyInstances,
}

#[derive(Default)]
struct InstanceState {
    /// The owning writer and its strength (EXCLUSIVE).
    owner: Option<(Guid, i32)>,
    /// Newest source timestamp admitted (BY_SOURCE_TIMESTAMP).
    newest: Option<Time>,
    /// Source timestamp of the last data sample admitted (TIME_BASED_FILTER).
    last_stamp: Option<Time>,
    /// When a data sample without source timestamp was last admitted (TIME_BASED_FILTER).
    last_admitted: Option<Instant>,
    /// Writers that wrote the instance and did not unregister it (at most a few).
    writers: Vec<Guid>,
}

/// A reader's per-instance admission state.
pub(crate) struct Admission {
    exclusive: bool,
    by_source: bool,
    min_separation: Option<Duration>,
    deadline: Option<DeadlineQueue>,
    key_fn: Option<KeyFn>,
    has_key: bool,
    max_instances: usize,
    instances: SeededMap<Key, InstanceState>,
}

impl Admission {
    /// The admission state of a reader with `qos`.
    pub(crate) fn new(qos: &EndpointQos, has_key: bool, hash_seed: u64) -> Self {
        let max_instances = match qos.resource_limits.max_instances {
            n if n > 0 => n as usize,
            _ => crate::config::MAX_ADMISSION_INSTANCES,
        };
        Admission {
            exclusive: qos.ownership == OwnershipKind::Exclusive,
            by_source: qos.destination_order == DestinationOrderKind::BySourceTimestamp,
            min_separation: Some(wire_to_std(qos.time_based_filter)).filter(|d| !d.is_zero()),
            deadline: finite(qos.deadline).map(|p| DeadlineQueue::new(p, hash_seed)),
            key_fn: None,
            has_key,
            max_instances,
            instances: seeded_map(hash_seed),
        }
    }

    /// Takes the changeable reader QoS at run time: TIME_BASED_FILTER and DEADLINE (the
    /// instances' due times are re-timed; a newly finite deadline counts from `now` for every
    /// instance that has writers).
    pub(crate) fn set_qos(&mut self, now: Instant, qos: &EndpointQos, hash_seed: u64) {
        self.min_separation = Some(wire_to_std(qos.time_based_filter)).filter(|d| !d.is_zero());
        match (finite(qos.deadline), self.deadline.as_mut()) {
            (None, _) => self.deadline = None,
            (Some(period), Some(d)) => d.set_period(now, period),
            (Some(period), None) => {
                let mut d = DeadlineQueue::new(period, hash_seed);
                for (key, inst) in self.instances.iter() {
                    if !inst.writers.is_empty() {
                        d.arm(now, *key);
                    }
                }
                self.deadline = Some(d);
            }
        }
    }

    /// Sets how keys are computed from payloads that come without a key hash.
    pub(crate) fn set_key_fn(&mut self, f: Option<KeyFn>) {
        self.key_fn = f;
    }

    /// True if any per-instance policy is in force (otherwise everything is admitted).
    pub(crate) fn active(&self) -> bool {
        self.exclusive || self.by_source || self.min_separation.is_some() || self.deadline.is_some()
    }

    /// Decides whether `s`, from a writer with `traits`, reaches the application at `now`.
    /// Fills in `s.key_hash` when it had to compute the key.
    pub(crate) fn admit(
        &mut self,
        now: Instant,
        s: &mut ReceivedSample,
        traits: WriterTraits,
    ) -> Result<(), Filtered> {
        let key = match (s.key_hash, self.has_key, &self.key_fn) {
            (Some(k), _, _) => k,
            (None, false, _) => [0; 16],
            (None, true, Some(f)) => match f(&s.payload, s.kind != ChangeKind::Alive) {
                Some(k) => {
                    s.key_hash = Some(k);
                    k
                }
                // Undecodable: the cache refuses it and counts it.
                None => return Ok(()),
            },
            (None, true, None) => return Ok(()),
        };
        if !self.instances.contains_key(&key) && self.instances.len() >= self.max_instances {
            return Err(Filtered::TooManyInstances);
        }
        let inst = self.instances.entry(key).or_default();
        // Decided first, applied once every filter passed.
        let mut take_over = false;
        if self.exclusive {
            match inst.owner {
                // The owner's strength may have changed (set_qos): it is kept current.
                Some((owner, _)) if owner == s.writer => take_over = true,
                Some((owner, strength))
                    if traits.strength < strength
                        || (traits.strength == strength && s.writer > owner) =>
                {
                    return Err(Filtered::NotOwner);
                }
                // Unowned, or a stronger writer: it takes the instance over.
                _ => take_over = true,
            }
        }
        if self.by_source {
            if let Some(ts) = s.source_timestamp {
                if inst.newest.is_some_and(|n| ts < n) {
                    return Err(Filtered::OutOfOrder);
                }
                inst.newest = Some(ts);
            }
        }
        if s.kind == ChangeKind::Alive {
            if let Some(sep) = self.min_separation {
                match source_stamp(s.source_timestamp) {
                    Some(ts) => {
                        if inst
                            .last_stamp
                            .is_some_and(|last| within_separation(last, ts, sep))
                        {
                            return Err(Filtered::TimeFilter);
                        }
                        inst.last_stamp = Some(ts);
                    }
                    None => {
                        if inst.last_admitted.is_some_and(|t| now < t + sep) {
                            return Err(Filtered::TimeFilter);
                        }
                        inst.last_admitted = Some(now);
                    }
                }
            }
        }
        if take_over {
            inst.owner = Some((s.writer, traits.strength));
        }
        match s.kind {
            ChangeKind::Alive => {
                if !inst.writers.contains(&s.writer) {
                    inst.writers.push(s.writer);
                }
                // A durability service's relay delivers history, not updates: the deadline
                // runs from the live writers' samples.
                if let (Some(d), None) = (self.deadline.as_mut(), s.original) {
                    d.arm(now, key);
                }
            }
            ChangeKind::Disposed => {
                if let Some(d) = self.deadline.as_mut() {
                    d.disarm(&key);
                }
            }
            ChangeKind::Unregistered | ChangeKind::DisposedUnregistered => {
                inst.writers.retain(|w| *w != s.writer);
                if inst.owner.is_some_and(|(o, _)| o == s.writer) {
                    inst.owner = None;
                }
                if inst.writers.is_empty() || self.exclusive {
                    if let Some(d) = self.deadline.as_mut() {
                        d.disarm(&key);
                    }
                }
                if inst.writers.is_empty() && !self.by_source {
                    self.instances.remove(&key);
                }
            }
        }
        Ok(())
    }

    /// A writer lost liveliness or was unmatched: it owns nothing any more, and an instance
    /// left without writers has no deadline (it is not alive).
    pub(crate) fn writer_lost(&mut self, writer: Guid) {
        if !self.active() {
            return;
        }
        for (key, inst) in self.instances.iter_mut() {
            if inst.owner.is_some_and(|(o, _)| o == writer) {
                inst.owner = None;
            }
            let before = inst.writers.len();
            inst.writers.retain(|w| *w != writer);
            if before > 0 && inst.writers.is_empty() {
                if let Some(d) = self.deadline.as_mut() {
                    d.disarm(key);
                }
            }
        }
    }

    /// When the next deadline falls due.
    pub(crate) fn next_timeout(&self) -> Option<Instant> {
        self.deadline.as_ref().and_then(DeadlineQueue::next)
    }

    /// Instances that missed their deadline by `now` (each once per missed period). Their
    /// owner loses them: the next writer to write one owns it.
    pub(crate) fn expire(&mut self, now: Instant, missed: &mut Vec<Key>) {
        let Some(d) = self.deadline.as_mut() else {
            return;
        };
        let from = missed.len();
        d.expire(now, missed);
        if self.exclusive {
            for k in &missed[from..] {
                if let Some(inst) = self.instances.get_mut(k) {
                    inst.owner = None;
                }
            }
        }
    }

    /// The owner of an instance, if it has one (EXCLUSIVE ownership).
    pub(crate) fn owner(&self, key: &Key) -> Option<Guid> {
        self.instances
            .get(key)
            .and_then(|i| i.owner.map(|(g, _)| g))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use halyard_wire::{EntityId, GuidPrefix, SequenceNumber};
    use std::sync::Arc;

    fn guid(n: u8) -> Guid {
        Guid::new(GuidPrefix([n; 12]), EntityId([0, 0, 1, 2]))
    }

    fn sample(writer: Guid, key: u8, kind: ChangeKind, ts: i64) -> ReceivedSample {
        ReceivedSample {
            reader: EntityId([0, 0, 1, 7]),
            writer,
            sn: SequenceNumber(1),
            kind,
            key_hash: Some([key; 16]),
            payload: Arc::new(Vec::new()),
            source_timestamp: Some(Time::from_nanos(ts)),
            lifespan_expiry: None,
            group: None,
            group_seq: None,
            original: None,
        }
    }

    fn strength(s: i32) -> WriterTraits {
        WriterTraits {
            strength: s,
            lifespan: None,
        }
    }

    #[test]
    fn the_strongest_writer_owns_an_instance_until_it_unregisters() {
        let mut q = EndpointQos::reader_default();
        q.ownership = OwnershipKind::Exclusive;
        let mut a = Admission::new(&q, true, 1);
        let t = Instant::from_nanos(0);
        let (weak, strong) = (guid(1), guid(2));
        let alive = ChangeKind::Alive;
        assert!(a
            .admit(t, &mut sample(weak, 1, alive, 1), strength(5))
            .is_ok());
        assert!(a
            .admit(t, &mut sample(strong, 1, alive, 2), strength(10))
            .is_ok());
        assert_eq!(
            a.admit(t, &mut sample(weak, 1, alive, 3), strength(5)),
            Err(Filtered::NotOwner)
        );
        // Another instance is the weak writer's.
        assert!(a
            .admit(t, &mut sample(weak, 2, alive, 3), strength(5))
            .is_ok());
        let unreg = ChangeKind::Unregistered;
        assert!(a
            .admit(t, &mut sample(strong, 1, unreg, 4), strength(10))
            .is_ok());
        assert!(a
            .admit(t, &mut sample(weak, 1, alive, 5), strength(5))
            .is_ok());
        assert_eq!(a.owner(&[1; 16]), Some(weak));
        a.writer_lost(weak);
        assert_eq!(a.owner(&[1; 16]), None);
    }

    #[test]
    fn deadline_misses_hand_the_instance_over() {
        let mut q = EndpointQos::reader_default();
        q.ownership = OwnershipKind::Exclusive;
        q.deadline = WireDuration::from_nanos(100_000_000);
        let mut a = Admission::new(&q, true, 1);
        let ms = |n: u64| Instant::from_nanos(n * 1_000_000);
        let (weak, strong) = (guid(1), guid(2));
        let alive = ChangeKind::Alive;
        assert!(a
            .admit(ms(0), &mut sample(strong, 1, alive, 1), strength(10))
            .is_ok());
        assert_eq!(
            a.admit(ms(50), &mut sample(weak, 1, alive, 2), strength(5)),
            Err(Filtered::NotOwner)
        );
        assert_eq!(a.next_timeout(), Some(ms(100)));
        let mut missed = Vec::new();
        a.expire(ms(100), &mut missed);
        assert_eq!(missed, vec![[1; 16]]);
        assert!(a
            .admit(ms(120), &mut sample(weak, 1, alive, 3), strength(5))
            .is_ok());
        assert_eq!(a.owner(&[1; 16]), Some(weak));
        assert!(a
            .admit(ms(130), &mut sample(strong, 1, alive, 4), strength(10))
            .is_ok());
        assert_eq!(a.owner(&[1; 16]), Some(strong));
    }

    #[test]
    fn source_order_and_time_filter() {
        let mut q = EndpointQos::reader_default();
        q.destination_order = DestinationOrderKind::BySourceTimestamp;
        q.time_based_filter = WireDuration::from_nanos(10_000_000);
        let mut a = Admission::new(&q, true, 1);
        let ms = |n: u64| Instant::from_nanos(n * 1_000_000);
        // Source timestamps, in milliseconds.
        let at = |n: i64| n * 1_000_000;
        let w = guid(1);
        let alive = ChangeKind::Alive;
        assert!(a
            .admit(ms(0), &mut sample(w, 1, alive, at(100)), strength(0))
            .is_ok());
        assert_eq!(
            a.admit(ms(20), &mut sample(guid(2), 1, alive, at(99)), strength(0)),
            Err(Filtered::OutOfOrder)
        );
        // Received 30 ms later but stamped 5 ms later: within the separation.
        assert_eq!(
            a.admit(ms(30), &mut sample(w, 1, alive, at(105)), strength(0)),
            Err(Filtered::TimeFilter)
        );
        // Received 1 ms later (a repair overtaken, say) but stamped 10 ms later: through.
        assert!(a
            .admit(ms(31), &mut sample(w, 1, alive, at(110)), strength(0))
            .is_ok());
        // Another instance has its own separation.
        assert!(a
            .admit(ms(31), &mut sample(w, 2, alive, at(111)), strength(0))
            .is_ok());
        // A disposal always passes the time filter.
        let disp = ChangeKind::Disposed;
        assert!(a
            .admit(ms(32), &mut sample(w, 1, disp, at(112)), strength(0))
            .is_ok());
        assert_eq!(
            a.admit(ms(33), &mut sample(w, 1, alive, at(113)), strength(0)),
            Err(Filtered::TimeFilter)
        );
    }

    #[test]
    fn a_sample_without_source_timestamp_is_measured_on_its_reception() {
        let mut q = EndpointQos::reader_default();
        q.time_based_filter = WireDuration::from_nanos(10_000_000);
        let mut a = Admission::new(&q, true, 1);
        let ms = |n: u64| Instant::from_nanos(n * 1_000_000);
        let untimed = |key| {
            let mut s = sample(guid(1), key, ChangeKind::Alive, 0);
            s.source_timestamp = None;
            s
        };
        assert!(a.admit(ms(0), &mut untimed(1), strength(0)).is_ok());
        assert_eq!(
            a.admit(ms(9), &mut untimed(1), strength(0)),
            Err(Filtered::TimeFilter)
        );
        assert!(a.admit(ms(10), &mut untimed(1), strength(0)).is_ok());
        let mut invalid = untimed(1);
        invalid.source_timestamp = Some(Time::INVALID);
        assert_eq!(
            a.admit(ms(15), &mut invalid, strength(0)),
            Err(Filtered::TimeFilter)
        );
    }

    #[test]
    fn within_separation_is_strict_and_saturates() {
        let t = |n: i64| Time::from_nanos(n * 1_000_000);
        let sep = Duration::from_millis(100);
        assert!(within_separation(t(1000), t(1099), sep));
        assert!(!within_separation(t(1000), t(1100), sep));
        // Older than the last one: within.
        assert!(within_separation(t(1000), t(900), sep));
        assert!(within_separation(t(1000), t(1_000_000_000), Duration::MAX));
    }
}
