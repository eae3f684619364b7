//! `DataWriter<T>` (DDS 1.4 §2.2.2.4.2).

use crate::clock::wall_clock;
use crate::condition::{StatusCondition, Target};
use crate::error::{Error, Result};
use crate::group::keep_current;
use crate::listener::{DataWriterListener, StatusMask};
use crate::participant::DomainParticipant;
use crate::qos::{validate, DataWriterQos};
use crate::status::{
    DeadlineMissedStatus, IncompatibleQosStatus, InstanceHandle, LivelinessLostStatus,
    MatchedStatus, WriterStats,
};
use halyard_cdr::{key_hash, serialize, serialize_key, DataRepresentation, TopicType};
#[cfg(doc)]
use halyard_core::Reception;
use halyard_core::{time::wire_to_std, ChangeKind, NewChange, ReaderDelivery, WriteError};
use halyard_wire::qos::EndpointQos;
use halyard_wire::{EntityId, Time};
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

/// Samples at least this large are serialized into a reused buffer when the participant has
/// one (see `halyard_core::Participant::take_buffer`); smaller ones into a fresh allocation,
/// which is cheaper than taking the lock for it.
const LARGE_SAMPLE_BYTES: usize = 32 * 1024;

/// Instances a keyed writer registers at most when RESOURCE_LIMITS.max_instances is unlimited.
pub const MAX_REGISTERED_INSTANCES: usize = 1 << 22;

/// Writer batching settings for [`DataWriter::set_batching`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batching {
    /// Largest datagram a batch grows to, in bytes (capped by the participant's maximum
    /// message size, 65000 by default).
    pub max_bytes: usize,
    /// Longest a sample waits in an unfilled batch.
    pub max_flush_delay: Duration,
}

impl Default for Batching {
    /// Datagrams up to 64000 bytes, sent at the latest 1 ms after their first sample.
    fn default() -> Self {
        Batching {
            max_bytes: 64_000,
            max_flush_delay: Duration::from_millis(1),
        }
    }
}

/// Key-only payloads (of a dispose or unregister, which also carry PID_KEY_HASH) are at
/// least this long.
const MIN_KEY_PAYLOAD: usize = 20;

/// Pads a serialized key (encapsulation header included) with zero bytes to
/// [`MIN_KEY_PAYLOAD`]. Fast DDS 2.x takes a key-only payload of at most 16 bytes as the
/// instance's key hash, overwriting the PID_KEY_HASH that came with it: the instance of a
/// short key (a 4-byte id; "BLUE" in the OMG suite) was then one it never saw, and its
/// readers missed every dispose and unregister. A longer payload it ignores, keeping the key
/// hash. CDR readers stop at the end of the key and ignore what follows (Halyard's and Cyclone
/// DDS's do).
fn pad_key_payload(buf: &mut Vec<u8>) {
    if buf.len() < MIN_KEY_PAYLOAD {
        buf.resize(MIN_KEY_PAYLOAD, 0);
    }
}

/// Writes samples of `T` to a topic. Thread-safe; clone-free sharing via `Arc` if needed.
///
/// `T` is a [`TopicType`] for typed writers; the methods that do not depend on the type
/// (QoS, statuses, listeners, matching) are also those of an untyped writer
/// ([`crate::UntypedDataWriter`], a `DataWriter<Untyped>` underneath).
pub struct DataWriter<T> {
    participant: DomainParticipant,
    id: EntityId,
    /// Whether the topic type has a key (from the type, or the untyped type support).
    has_key: bool,
    /// The immutable policies the write path needs (the whole QoS is in the writer's state).
    reliable: bool,
    max_blocking: Duration,
    max_instances: usize,
    /// Encoding chosen from DATA_REPRESENTATION (its first entry).
    representation: DataRepresentation,
    /// The size of the last sample serialized: the next buffer starts that large, so a large
    /// sample is not grown by doubling (each step a fresh allocation and copy: for 10 MiB,
    /// about 20 MiB of page faults and copies).
    size_hint: std::sync::atomic::AtomicUsize,
    /// False until `enable` for a writer created disabled (ENTITY_FACTORY).
    enabled: std::sync::atomic::AtomicBool,
    _t: PhantomData<fn(T)>,
}

impl<T> DataWriter<T> {
    pub(crate) fn new(
        participant: DomainParticipant,
        id: EntityId,
        qos: EndpointQos,
        enabled: bool,
        has_key: bool,
    ) -> Self {
        let representation = match qos.data_representation.first() {
            Some(&halyard_core::matching::XCDR2) => DataRepresentation::Xcdr2,
            _ => DataRepresentation::Xcdr1,
        };
        let max_instances = match qos.resource_limits.max_instances {
            n if n > 0 => n as usize,
            _ => MAX_REGISTERED_INSTANCES,
        };
        DataWriter {
            participant,
            id,
            has_key,
            reliable: qos.reliability.kind == halyard_wire::qos::ReliabilityKind::Reliable,
            max_blocking: wire_to_std(qos.reliability.max_blocking_time),
            max_instances,
            representation,
            size_hint: std::sync::atomic::AtomicUsize::new(64),
            enabled: std::sync::atomic::AtomicBool::new(enabled),
            _t: PhantomData,
        }
    }

    /// Enables a writer its publisher created disabled (ENTITY_FACTORY
    /// autoenable_created_entities false): it is announced and matched now. Until then
    /// writing is refused with [`Error::NotEnabled`]. Enabling an enabled writer does nothing.
    pub fn enable(&self) -> Result<()> {
        use std::sync::atomic::Ordering::SeqCst;
        if self.enabled.swap(true, SeqCst) {
            return Ok(());
        }
        let id = self.id;
        self.participant
            .shared
            .drive(|st, now| st.core.enable_writer(now, id));
        Ok(())
    }

    /// True once the writer is enabled.
    pub fn is_enabled(&self) -> bool {
        self.enabled.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn check_enabled(&self) -> Result<()> {
        if self.is_enabled() {
            Ok(())
        } else {
            Err(Error::NotEnabled)
        }
    }

    /// The writer's QoS as it stands.
    pub fn qos(&self) -> Result<DataWriterQos> {
        self.with_state(|w| DataWriterQos::from(&w.qos))
    }

    /// Changes the writer's QoS at run time (DDS 1.4 `set_qos`). Only the changeable policies
    /// may differ from [`DataWriter::qos`]: DEADLINE, LATENCY_BUDGET, OWNERSHIP_STRENGTH,
    /// TRANSPORT_PRIORITY, LIFESPAN, WRITER_DATA_LIFECYCLE and USER/TOPIC DATA; changing any
    /// other is refused with [`Error::ImmutablePolicy`] naming it. No data representation
    /// keeps the current one; PARTITION and GROUP_DATA are the publisher's
    /// ([`crate::Publisher::set_qos`]). The change is announced by SEDP and every match is
    /// judged again: readers it no longer satisfies are unmatched (with
    /// OFFERED_INCOMPATIBLE_QOS), readers it now satisfies are matched.
    pub fn set_qos(&self, qos: DataWriterQos) -> Result<()> {
        let mut qos = EndpointQos::from(&qos);
        validate(&qos, true)?;
        let id = self.id;
        self.participant.shared.drive(|st, now| {
            let current = &st.writers.get(&id).ok_or(Error::AlreadyDeleted)?.qos;
            keep_current(&mut qos, current);
            apply_qos(st, now, id, qos)
        })
    }

    /// The writer's participant and entity id (the durability module's methods need them).
    pub(crate) fn participant_and_id(&self) -> (&DomainParticipant, EntityId) {
        (&self.participant, self.id)
    }

    /// What unregistering means under the writer's current WRITER_DATA_LIFECYCLE.
    pub(crate) fn unregister_kind(&self) -> ChangeKind {
        let autodispose = self
            .with_state(|w| {
                w.qos
                    .writer_data_lifecycle
                    .autodispose_unregistered_instances
            })
            .unwrap_or(true);
        if autodispose {
            ChangeKind::DisposedUnregistered
        } else {
            ChangeKind::Unregistered
        }
    }

    /// Submits a dispose or unregister of the instance `key` whose serialized key (its
    /// encapsulation header included) is `key_payload`.
    pub(crate) fn key_change_serialized(
        &self,
        kind: ChangeKind,
        key: [u8; 16],
        mut key_payload: Vec<u8>,
        timestamp: Time,
    ) -> Result<()> {
        if !self.has_key {
            return Err(Error::BadParameter(
                "dispose/unregister need a keyed topic type",
            ));
        }
        pad_key_payload(&mut key_payload);
        if kind != ChangeKind::Disposed {
            let id = self.id;
            let mut st = self.participant.shared.lock();
            if let Some(w) = st.writers.get_mut(&id) {
                w.instances.remove(&key);
            }
        }
        self.submit(kind, key, key_payload, timestamp, None)
    }

    /// Hands a change to the core, waiting up to RELIABILITY.max_blocking_time while the
    /// writer's history or flow-control window is full.
    ///
    /// `instance_key`: for a keyed writer to register the instance of the sample written
    /// (kept until unregistered, bounded by RESOURCE_LIMITS.max_instances), makes its
    /// serialized key; called only for an instance not yet registered.
    pub(crate) fn submit(
        &self,
        kind: ChangeKind,
        key: [u8; 16],
        payload: Vec<u8>,
        timestamp: Time,
        instance_key: Option<&dyn Fn() -> Result<Vec<u8>>>,
    ) -> Result<()> {
        self.check_enabled()?;
        let change = NewChange {
            kind,
            key_hash: key,
            payload: Arc::new(payload),
            timestamp: Some(timestamp),
            original: None,
        };
        let id = self.id;
        let max_blocking = self.max_blocking;
        // Registered under the lock the write takes anyway (no second lock per write).
        let mut to_register = instance_key.filter(|_| self.has_key);
        let mut asked_commit = false;
        let written = self
            .participant
            .shared
            .drive_until_after(max_blocking, true, |st, now| {
                if let Some(make_key) = to_register.take() {
                    if let Err(e) = self.register(st, key, make_key) {
                        return Some(Err(e));
                    }
                }
                match st.core.write(now, id, change.clone()) {
                    Ok(_) => Some(Ok(())),
                    Err(WriteError::Full) => {
                        // Once per write: what the service then commits is all it was fed.
                        if !asked_commit {
                            asked_commit = st.ask_service_commit(id);
                        }
                        None
                    }
                    Err(e) => Some(Err(refused_write(e))),
                }
            });
        written.unwrap_or(Err(Error::Timeout))
    }

    /// Records the instance of a sample written, refusing one beyond
    /// RESOURCE_LIMITS.max_instances.
    fn register(
        &self,
        st: &mut crate::runtime::State,
        key: [u8; 16],
        make_key: &dyn Fn() -> Result<Vec<u8>>,
    ) -> Result<()> {
        let max = self.max_instances;
        let Some(w) = st.writers.get_mut(&self.id) else {
            return Err(Error::AlreadyDeleted);
        };
        if w.instances.contains_key(&key) {
            return Ok(());
        }
        if w.instances.len() >= max {
            return Err(Error::OutOfResources(
                "RESOURCE_LIMITS.max_instances instances are registered",
            ));
        }
        let mut buf = make_key()?;
        pad_key_payload(&mut buf);
        w.instances.insert(key, buf);
        Ok(())
    }

    /// Turns writer batching on (`Some`) or off (`None`, which sends what is pending).
    ///
    /// With batching, samples small enough to share a datagram are gathered and sent together
    /// (each keeps its own DATA submessage and timestamp, so any reader understands them): when
    /// the batch reaches [`Batching::max_bytes`], when its first sample has waited
    /// [`Batching::max_flush_delay`], on [`DataWriter::flush`], and before the writer sends
    /// anything else. It trades a little latency for far fewer system calls per sample, like
    /// Cyclone DDS's WriteBatch or RTI Connext's BATCH QoS.
    pub fn set_batching(&self, batching: Option<Batching>) -> Result<()> {
        if let Some(b) = &batching {
            if b.max_bytes == 0 {
                return Err(Error::BadParameter("batching max_bytes must be positive"));
            }
        }
        let policy = batching.map(|b| halyard_core::BatchPolicy {
            max_bytes: b.max_bytes,
            max_flush_delay: b.max_flush_delay,
        });
        let id = self.id;
        self.participant
            .shared
            .drive(|st, _| st.core.set_writer_batching(id, policy))
            .map_err(refused_write)
    }

    /// Limits a best-effort writer to `bytes_per_second` (`None`: no limit of its own), like
    /// Connext's flow controllers and Fast DDS's throughput controllers: its samples wait whole
    /// until the limit lets their datagrams go; a KEEP_LAST writer drops a sample still
    /// waiting when a newer one comes (counted in [`WriterStats::paced_drops`]), a KEEP_ALL
    /// writer's `write` waits (up to max_blocking_time). A reliable writer is paced by its
    /// readers' acknowledgments instead: this is refused for it.
    pub fn set_bandwidth_limit(&self, bytes_per_second: Option<u64>) -> Result<()> {
        if self.reliable {
            return Err(Error::Unsupported {
                feature: "bandwidth limit",
                detail: "a reliable writer is paced by its readers' acknowledgments",
            });
        }
        if bytes_per_second == Some(0) {
            return Err(Error::BadParameter(
                "a bandwidth limit must be positive (None: no limit)",
            ));
        }
        let id = self.id;
        self.participant
            .shared
            .drive(|st, now| {
                st.core
                    .set_writer_bandwidth_limit(now, id, bytes_per_second)
            })
            .map_err(refused_write)
    }

    /// What this writer counted so far, as one snapshot.
    pub fn stats(&self) -> Result<WriterStats> {
        let st = self.participant.shared.lock();
        if !st.writers.contains_key(&self.id) {
            return Err(Error::AlreadyDeleted);
        }
        Ok(WriterStats {
            paced_drops: st.core.writer_paced_drops(self.id),
            filtered_out: st.core.writer_filtered_out(self.id),
            time_filtered_out: st.core.writer_time_filtered_out(self.id),
        })
    }

    /// Sends the samples a batch holds now (a no-op without batching).
    pub fn flush(&self) -> Result<()> {
        let id = self.id;
        self.participant
            .shared
            .drive(|st, _| st.core.flush_writer(id))
            .map_err(refused_write)
    }

    /// Blocks until every matched reliable reader acknowledged all samples, or `timeout`. The
    /// readers of the durability services that keep a TRANSIENT or PERSISTENT writer's samples
    /// are among them: a service acknowledges only what it stored.
    pub fn wait_for_acknowledgments(&self, timeout: Duration) -> Result<()> {
        self.check_enabled()?;
        let id = self.id;
        let mut asked_commit = false;
        if self.participant.shared.wait_until(timeout, |st| {
            let acked = st.core.writer_all_acked(id);
            if !acked && !asked_commit {
                asked_commit = st.ask_service_commit(id);
            }
            acked
        }) {
            Ok(())
        } else {
            Err(Error::Timeout)
        }
    }

    /// What this writer knows of each reader's reception (a Halyard extension): the readers
    /// matched now, then the last [`halyard_core::MAX_DEPARTED_READERS`] that left, each as it
    /// stood when it left. A reliable reader's acknowledgments say how much of what it was
    /// owed it has ([`Reception::Acknowledged`]); what a best-effort reader received cannot be
    /// known ([`Reception::Unknown`]); a reader of this participant is handed every change as
    /// it is written ([`Reception::Local`]). A durability service's readers are marked as such.
    ///
    /// A program that writes and exits can report truthfully which readers acknowledged
    /// everything, even one that took what it wanted and left first:
    ///
    /// ```no_run
    /// # fn f(w: &halyard::DataWriter<halyard::Untyped>) -> halyard::Result<()> {
    /// let _ = w.wait_for_acknowledgments(std::time::Duration::from_secs(5));
    /// let report = w.delivery_report()?;
    /// let complete = report.iter().filter(|r| !r.durability_service && r.has_everything()).count();
    /// println!("{complete} readers have every sample");
    /// # Ok(()) }
    /// ```
    pub fn delivery_report(&self) -> Result<Vec<ReaderDelivery>> {
        let st = self.participant.shared.lock();
        if !st.writers.contains_key(&self.id) {
            return Err(Error::AlreadyDeleted);
        }
        Ok(st.core.writer_deliveries(self.id))
    }

    /// Sets (or clears) the listener.
    pub fn set_listener(&self, listener: Option<Arc<dyn DataWriterListener>>) -> Result<()> {
        let mut st = self.participant.shared.lock();
        let w = st.writers.get_mut(&self.id).ok_or(Error::AlreadyDeleted)?;
        w.listener = listener;
        Ok(())
    }

    /// The writer's StatusCondition (all statuses enabled initially).
    pub fn status_condition(&self) -> StatusCondition {
        StatusCondition::new(self.participant.shared.clone(), Target::Writer(self.id))
    }

    /// Runs `f` on the writer's state; `AlreadyDeleted` if it is gone.
    fn with_state<R>(&self, f: impl FnOnce(&crate::status::WriterState) -> R) -> Result<R> {
        let st = self.participant.shared.lock();
        st.writers.get(&self.id).map(f).ok_or(Error::AlreadyDeleted)
    }

    /// Reads a status (`f`) and resets its changed flag; `AlreadyDeleted` if the writer is gone.
    fn status<S>(
        &self,
        bit: StatusMask,
        f: impl FnOnce(&mut crate::status::WriterState) -> S,
    ) -> Result<S> {
        let mut st = self.participant.shared.lock();
        let w = st.writers.get_mut(&self.id).ok_or(Error::AlreadyDeleted)?;
        w.changes.0 &= !bit.0;
        Ok(f(w))
    }

    /// PUBLICATION_MATCHED status.
    pub fn publication_matched_status(&self) -> Result<MatchedStatus> {
        self.status(StatusMask::PUBLICATION_MATCHED, |w| w.matched.clone())
    }

    /// The handles of the readers matched now (DDS `get_matched_subscriptions`), without
    /// resetting the PUBLICATION_MATCHED status.
    pub fn matched_subscriptions(&self) -> Result<Vec<InstanceHandle>> {
        self.with_state(|w| w.matched.matched_handles())
    }

    /// The writer's instance handle (its GUID), as readers' `matched_publications` list it.
    pub fn instance_handle(&self) -> InstanceHandle {
        let prefix = self.participant.guid_prefix();
        InstanceHandle::from(halyard_wire::Guid::new(prefix, self.id))
    }

    /// OFFERED_INCOMPATIBLE_QOS status.
    pub fn offered_incompatible_qos_status(&self) -> Result<IncompatibleQosStatus> {
        self.status(StatusMask::OFFERED_INCOMPATIBLE_QOS, |w| {
            w.incompatible.clone()
        })
    }

    /// LIVELINESS_LOST status (reading it resets `total_count_change`).
    pub fn liveliness_lost_status(&self) -> Result<LivelinessLostStatus> {
        self.status(StatusMask::LIVELINESS_LOST, |w| w.liveliness_lost.read())
    }

    /// Asserts this writer's liveliness (LIVELINESS MANUAL_BY_TOPIC: a HEARTBEAT with the
    /// liveliness flag to its readers; MANUAL_BY_PARTICIPANT: asserts the participant;
    /// AUTOMATIC: nothing to do). Writing asserts it too.
    pub fn assert_liveliness(&self) -> Result<()> {
        self.check_enabled()?;
        let id = self.id;
        self.participant
            .shared
            .drive(|st, now| st.core.assert_writer_liveliness(now, id))
            .map_err(refused_write)
    }

    /// OFFERED_DEADLINE_MISSED status (reading it resets `total_count_change`).
    pub fn offered_deadline_missed_status(&self) -> Result<DeadlineMissedStatus> {
        self.status(StatusMask::OFFERED_DEADLINE_MISSED, |w| {
            w.deadline_missed.read()
        })
    }

    /// Blocks until at least `n` readers are matched in both directions (a reliable reader
    /// counts once it acknowledged us, so samples written now are not lost to it), or `timeout`.
    /// Durability services' readers are no application readers and do not count (see
    /// [`DataWriter::durability_services`]); [`DataWriter::wait_for_acknowledgments`] waits
    /// for them.
    pub fn wait_for_matched(&self, n: u32, timeout: Duration) -> Result<()> {
        let id = self.id;
        if self.participant.shared.wait_until(timeout, |st| {
            st.core.writer_synced_readers(id) >= n as usize
        }) {
            Ok(())
        } else {
            Err(Error::Timeout)
        }
    }
}

/// The methods that serialize samples of a Rust [`TopicType`].
impl<T: TopicType> DataWriter<T> {
    /// Writes a sample stamped with the current time.
    pub fn write(&self, sample: &T) -> Result<()> {
        self.write_w_timestamp(sample, wall_clock())
    }

    /// Writes a sample with an explicit source timestamp.
    pub fn write_w_timestamp(&self, sample: &T, timestamp: Time) -> Result<()> {
        use std::sync::atomic::Ordering::Relaxed;
        let hint = self.size_hint.load(Relaxed);
        // A large sample goes into a buffer the participant already paged in, if it has one.
        let pooled = (hint >= LARGE_SAMPLE_BYTES)
            .then(|| self.participant.shared.lock().core.take_buffer(hint))
            .flatten();
        let mut buf = pooled.unwrap_or_else(|| Vec::with_capacity(hint));
        serialize(sample, self.representation, &mut buf)?;
        self.size_hint.store(buf.len(), Relaxed);
        let kh = if T::has_key() {
            key_hash(sample)?
        } else {
            [0; 16]
        };
        let key_of = || self.serialized_key(sample);
        self.submit(ChangeKind::Alive, kh, buf, timestamp, Some(&key_of))
    }

    /// Writes an already serialized sample (encapsulation header included) with its key hash.
    /// Used by tools that relay data without decoding it.
    pub fn write_serialized(&self, payload: Vec<u8>, key: [u8; 16], timestamp: Time) -> Result<()> {
        self.submit(ChangeKind::Alive, key, payload, timestamp, None)
    }

    /// Registers an instance; returns its handle (the key hash).
    pub fn register_instance(&self, sample: &T) -> Result<InstanceHandle> {
        Ok(InstanceHandle(key_hash(sample)?))
    }

    /// Unregisters the instance of `sample`; with WRITER_DATA_LIFECYCLE
    /// autodispose_unregistered_instances (the default) this disposes it too.
    pub fn unregister_instance(&self, sample: &T) -> Result<()> {
        self.unregister_instance_w_timestamp(sample, wall_clock())
    }

    /// Unregisters the instance of `sample` with an explicit source timestamp.
    pub fn unregister_instance_w_timestamp(&self, sample: &T, timestamp: Time) -> Result<()> {
        self.key_change(sample, self.unregister_kind(), timestamp)
    }

    /// Disposes the instance of `sample`.
    pub fn dispose(&self, sample: &T) -> Result<()> {
        self.dispose_w_timestamp(sample, wall_clock())
    }

    /// Disposes the instance of `sample` with an explicit source timestamp.
    pub fn dispose_w_timestamp(&self, sample: &T, timestamp: Time) -> Result<()> {
        self.key_change(sample, ChangeKind::Disposed, timestamp)
    }

    fn key_change(&self, sample: &T, kind: ChangeKind, timestamp: Time) -> Result<()> {
        let buf = self.serialized_key(sample)?;
        self.key_change_serialized(kind, key_hash(sample)?, buf, timestamp)
    }

    /// The serialized key of `sample` (encapsulation header included).
    fn serialized_key(&self, sample: &T) -> Result<Vec<u8>> {
        let mut buf = Vec::with_capacity(32);
        serialize_key(sample, self.representation, &mut buf)?;
        Ok(buf)
    }
}

impl<T> Drop for DataWriter<T> {
    /// Deletes the writer. One whose matched reliable readers have not acknowledged all it
    /// wrote lingers first (`ParticipantOptions::writer_linger`, 1 s by default): this blocks
    /// until they have, or the time is up. Inside a listener it does not block (the thread
    /// that would receive the acknowledgments is this one); the writer lingers all the same.
    fn drop(&mut self) {
        let id = self.id;
        let shared = &self.participant.shared;
        // Deleting a writer unregisters its instances (and, with autodispose, disposes them).
        let registered: Vec<([u8; 16], Vec<u8>)> = shared
            .lock()
            .writers
            .get_mut(&id)
            .map(|w| w.instances.drain().collect())
            .unwrap_or_default();
        let kind = self.unregister_kind();
        let now = wall_clock();
        for (key, payload) in registered {
            let _ = self.submit(kind, key, payload, now, None);
        }
        let linger = shared.drive(|st, now| {
            st.core.delete_writer(now, id);
            st.writers.remove(&id);
            st.core.config().writer_linger
        });
        if !shared.in_listener() {
            shared.wait_until(linger, |st| !st.core.writer_lingering(id));
        }
    }
}

/// The API error of a write the core refused. A full history is not refused: the write waits
/// for room (up to max_blocking_time, then [`Error::Timeout`]).
pub(crate) fn refused_write(e: WriteError) -> Error {
    match e {
        WriteError::UnknownWriter => Error::AlreadyDeleted,
        WriteError::TooLarge => {
            Error::OutOfResources("sample larger than the configured maximum sample size")
        }
        WriteError::Full => Error::Timeout,
    }
}

/// Applies a writer QoS change (already validated and completed) in the core and in the
/// writer's state.
pub(crate) fn apply_qos(
    st: &mut crate::runtime::State,
    now: halyard_core::Instant,
    id: EntityId,
    qos: EndpointQos,
) -> Result<()> {
    st.core
        .set_writer_qos(now, id, qos.clone())
        .map_err(Error::from)?;
    if let Some(w) = st.writers.get_mut(&id) {
        w.qos = qos;
    }
    Ok(())
}
