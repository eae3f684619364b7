//! One DomainParticipant's protocol state: the sans-I/O entry points (`handle_*`, `poll_*`)
//! and the dispatch of received submessages to local writers and readers.

use crate::admission::{Filtered, KeyFn, WriterTraits};
use crate::buffers::BufferPool;
use crate::config::{
    ParticipantConfig, COUNT_EPOCH_STEP, MAX_QUEUED_EVENTS, MAX_SEDP_REJECTS,
    MAX_SEDP_REJECTS_TRACKED,
};
use crate::event::{ChangeKind, Event, ReceivedSample};
use crate::outbox::{Outbox, Transmit};
use crate::pacing::TokenBucket;
use crate::reader::{Arrival, InlineQos, Reader, ReaderSpec, Sink};
use crate::time::Instant;
use crate::unmatched_data::{DataParts, Draining, EarlyData, ParkedData};
use crate::writer::{BatchPolicy, NewChange, WriteError, Writer, WriterSpec};
use crate::{seeded_map, SeededMap};
use halyard_wire::discovery::ParticipantData;
use halyard_wire::{
    AckNack, Data, DataFrag, EntityId, Gap, Guid, GuidPrefix, Header, Heartbeat, HeartbeatFrag,
    Message, NackFrag, ProtocolVersion, ReceptionReport, SequenceNumber, Submessage, Time,
    VendorId,
};
use std::collections::{BTreeMap, VecDeque};

/// Counters of what was received and dropped; malformed input never panics, it is counted.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// Datagrams received.
    pub datagrams: u64,
    /// Datagrams whose RTPS header was invalid.
    pub malformed_messages: u64,
    /// Submessages that failed to parse (the rest of their message is dropped).
    pub malformed_submessages: u64,
    /// Discovery samples that failed to parse.
    pub malformed_discovery: u64,
    /// Inline QoS lists that failed to parse.
    pub malformed_inline_qos: u64,
    /// Samples or fragments for no matched reader.
    pub unmatched_data: u64,
    /// Samples received from a writer before its discovery, kept for the best-effort readers
    /// it would match (see the `unmatched_data` module).
    pub parked_data: u64,
    /// Parked samples handed to a best-effort reader once its writer matched.
    pub parked_data_delivered: u64,
    /// Samples received from a writer just after its discovery forgot it (its goodbye came
    /// first, on another socket), delivered to the readers it was matched with.
    pub drained_data: u64,
    /// Remote participants or endpoints refused because a limit was reached.
    pub discovery_refused: u64,
    /// Outgoing datagrams dropped because the transmit queue was full.
    pub transmits_dropped: u64,
    /// Bytes held by samples in reassembly (bounded by `max_reassembly_bytes`).
    pub reassembly_bytes: u64,
    /// Samples not delivered because another writer owns their instance (EXCLUSIVE).
    pub filtered_not_owner: u64,
    /// Samples not delivered because they are older than their instance's newest change
    /// (DESTINATION_ORDER BY_SOURCE_TIMESTAMP).
    pub filtered_out_of_order: u64,
    /// Samples not delivered because of a reader's TIME_BASED_FILTER.
    pub filtered_by_time: u64,
    /// Samples not delivered because their reader tracks too many instances already.
    pub filtered_too_many_instances: u64,
    /// Samples a reader got again, from a durability service or another, and dropped.
    pub duplicates_dropped: u64,
    /// Protected messages or submessages that failed to decode (tampered, replayed, unknown
    /// key), and plain ones the security plugin requires to be protected: dropped.
    pub secure_rejected: u64,
    /// Outgoing datagrams the security plugin could not protect: not sent.
    pub secure_send_failed: u64,
    /// Remote endpoints whose PID_TYPE_INFORMATION did not decode: kept without it.
    pub malformed_type_information: u64,
    /// Pairings of endpoints that both announce TypeInformation with different types,
    /// matched by type name alone because assignability could not be judged: the peer has no
    /// TypeLookup service, its types did not arrive in time, too many decisions were pending,
    /// or a type uses what Halyard cannot model yet (see `discovery::typelookup::assign`).
    pub type_name_fallback_matches: u64,
    /// Pairings of endpoints of different types matched because the reader's type is
    /// assignable from the writer's (XTypes 1.3 §7.2.4).
    pub type_assignable_matches: u64,
    /// Refusals of pairings by type (counted each time the pairing is judged again, as on a
    /// re-announcement): not assignable, DISALLOW_TYPE_COERCION with different types, or
    /// FORCE_TYPE_VALIDATION without the writer's type; reported as incompatible
    /// TYPE_CONSISTENCY_ENFORCEMENT QoS.
    pub type_not_assignable: u64,
    /// TypeLookup requests or replies that did not decode.
    pub typelookup_malformed: u64,
    /// TypeObjects in TypeLookup replies whose hash is not their identifier: dropped.
    pub typelookup_bad_objects: u64,
    /// TypeLookup samples our builtin writers could not take.
    pub typelookup_dropped: u64,
}

pub(crate) struct RemoteParticipant {
    pub(crate) data: ParticipantData,
    pub(crate) lease_deadline: Instant,
    /// The lease duration of the announcement before `data`'s.
    pub(crate) prev_lease: std::time::Duration,
    /// Until it shows it knows us: when our SPDP sample goes to it by unicast again, and the
    /// delay before that (see `ParticipantConfig::spdp_reply_retry`).
    pub(crate) reannounce: Option<(Instant, std::time::Duration)>,
    /// When anything was last heard from it (renews its AUTOMATIC writers' liveliness).
    pub(crate) last_heard: Instant,
    /// When it last asserted MANUAL_BY_PARTICIPANT liveliness (a PMD of kind MANUAL, or data
    /// from one of its MANUAL_BY_PARTICIPANT writers).
    pub(crate) manual_asserted: Instant,
    /// Whether our security plugin admits it (see [`crate::security`]).
    pub(crate) security: crate::security::PeerSecurity,
}

impl RemoteParticipant {
    /// The lease in force: the longer of the last two announced. A lease changes only once two
    /// announcements agree, so one damaged announcement (a tiny lease would drop a live peer,
    /// a huge one keep a dead peer forever) is undone by the next.
    pub(crate) fn lease(&self) -> std::time::Duration {
        crate::time::wire_to_std(self.data.lease_duration).max(self.prev_lease)
    }
}

/// State of the receiver while walking one message (RTPS 2.5 §8.3.4).
pub(crate) struct Receiver {
    pub(crate) src: GuidPrefix,
    pub(crate) for_us: bool,
    pub(crate) timestamp: Option<Time>,
    /// The message came SRTPS-protected (decoded by the security plugin).
    pub(crate) rtps_protected: bool,
}

/// What writes did to the participant's deadlines (see [`Participant::take_write_due`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WriteDue {
    /// No write.
    #[default]
    Nothing,
    /// Writes, each of which moved only its own writer's deadlines: the earliest of those
    /// deadlines after the writes (`None`: they have none). Deadlines a write moved later
    /// are not reported; a timer that wakes early finds nothing due.
    Writes(Option<Instant>),
    /// A write may have moved any deadline: ask [`Participant::poll_timeout`].
    Unknown,
}

impl WriteDue {
    /// This one followed by a write that left `due` as its writer's earliest deadline.
    fn and(self, due: Option<Instant>) -> WriteDue {
        match self {
            WriteDue::Nothing => WriteDue::Writes(due),
            WriteDue::Writes(d) => WriteDue::Writes(crate::time::earliest(d, due)),
            WriteDue::Unknown => WriteDue::Unknown,
        }
    }
}

/// The sans-I/O protocol state of one participant.
pub struct Participant {
    pub(crate) cfg: ParticipantConfig,
    pub(crate) prefix: GuidPrefix,
    pub(crate) out: Outbox,
    pub(crate) events: VecDeque<Event>,
    pub(crate) samples: VecDeque<ReceivedSample>,
    pub(crate) writers: BTreeMap<EntityId, Writer>,
    /// Writers that sent fragment repairs while the current datagram was handled.
    repairing: Vec<EntityId>,
    /// Relays that release their payloads (see [`crate::relay`]): checked for wanted ones
    /// after each datagram and timeout.
    pub(crate) releasing: Vec<EntityId>,
    pub(crate) readers: BTreeMap<EntityId, Reader>,
    /// Remote writer GUID -> local readers matched with it.
    pub(crate) writer_index: SeededMap<Guid, Vec<EntityId>>,
    pub(crate) remote: BTreeMap<GuidPrefix, RemoteParticipant>,
    pub(crate) remote_writers: BTreeMap<Guid, halyard_wire::discovery::EndpointData>,
    pub(crate) remote_readers: BTreeMap<Guid, halyard_wire::discovery::EndpointData>,
    /// Local writer -> local readers (same participant) it delivers to directly.
    pub(crate) local_matches: BTreeMap<EntityId, Vec<EntityId>>,
    /// Samples of an open coherent set held for readers of this participant (by writer).
    pub(crate) local_sets: BTreeMap<EntityId, Vec<ReceivedSample>>,
    /// The embedded durability service of this process whose readers are fed in memory
    /// (see [`Participant::set_fed_service`]), and the changes handed to them, not yet polled.
    pub(crate) fed_service: Option<GuidPrefix>,
    /// Remote endpoints that are durability services' (their readers, their relays): what
    /// they do reaches no application status (see [`crate::relay`], "Out of sight").
    pub(crate) service_peers: std::collections::BTreeSet<Guid>,
    pub(crate) fed: VecDeque<ReceivedSample>,
    /// Local publishers and subscribers (see [`crate::group_coherent`]).
    pub(crate) groups: BTreeMap<EntityId, crate::group_coherent::LocalGroup>,
    /// GROUP coherent sets held for local subscribers until complete.
    pub(crate) group_sets:
        BTreeMap<crate::group_coherent::GroupSetKey, crate::group_coherent::PendingGroupSet>,
    /// Per (subscriber, remote publisher): the last group set released or discarded.
    pub(crate) released_group_sets: BTreeMap<(EntityId, Guid), SequenceNumber>,
    /// Remote writers of GROUP coherent publishers that left (see
    /// [`crate::group_coherent::Departed`]).
    pub(crate) departed: BTreeMap<Guid, crate::group_coherent::Departed>,
    /// Subscribers the application accesses, with the samples held for their readers
    /// meanwhile (see [`crate::group_access`]).
    pub(crate) access: BTreeMap<EntityId, VecDeque<ReceivedSample>>,
    next_entity_key: u32,
    pub(crate) spdp_sn: SequenceNumber,
    pub(crate) spdp_next: Instant,
    /// Periodic SPDP announcements made so far (the first ones are faster).
    pub(crate) spdp_sent: u32,
    /// Deleted writers still lingering.
    lingering: usize,
    /// The participant-wide bandwidth limit its best-effort writers share, if configured.
    bandwidth: Option<TokenBucket>,
    pub(crate) stats: Stats,
    delivered: Vec<ReceivedSample>,
    /// Shared by every reassembly of this participant (`max_reassembly_bytes`).
    reassembly_budget: crate::reassembly::ReassemblyBudget,
    /// Large buffers kept for reuse (see [`crate::buffers`]).
    buffers: BufferPool,
    /// Seed of the next writer proxy's counters (see `WriterProxy::new`).
    count_epoch: i32,
    /// SEDP samples (writer, sequence number) refused as damaged, with how often.
    sedp_rejects: SeededMap<(Guid, SequenceNumber), u8>,
    /// Ownership strength and lifespan of the writers (local and remote) whose QoS differs
    /// from the default there; the others are absent.
    pub(crate) writer_traits: SeededMap<Guid, WriterTraits>,
    /// Scratch list of instances that missed a deadline.
    missed: Vec<[u8; 16]>,
    /// The next liveliness check (see [`crate::liveliness`]), if any lease is finite.
    pub(crate) liveliness_next: Option<Instant>,
    /// When this participant last asserted MANUAL_BY_PARTICIPANT liveliness.
    pub(crate) manual_asserted: Instant,
    /// When the next PMD of kind AUTOMATIC is due (AUTOMATIC writers with a finite lease).
    pub(crate) pmd_auto_next: Option<Instant>,
    /// What writes did to [`Participant::poll_timeout`] since [`Participant::take_write_due`].
    write_due: WriteDue,
    /// The security plugins, if this participant is secure (see [`crate::security`]).
    pub(crate) security: Option<Box<dyn crate::security::ParticipantSecurity>>,
    /// Datagrams the security plugin's protection split off a longer one, sent next.
    pub(crate) secure_pending: VecDeque<Transmit>,
    /// A DATA or DATA_FRAG with its payload encoded (data protection) before the plugin
    /// protects it as a submessage, kept from one to the next so that it does not allocate.
    pub(crate) encoded_submessage: Vec<u8>,
    /// Buffers a received protected message and a protected submessage are decoded into,
    /// kept from one datagram to the next so that decoding does not allocate (and touch
    /// fresh pages) per datagram; each at most about a datagram long.
    pub(crate) unprotect_buffers: [Vec<u8>; 2],
    /// The security attributes each local endpoint announces (secure participants only).
    pub(crate) endpoint_security:
        std::collections::BTreeMap<EntityId, crate::security::SecurityInfo>,
    /// The last sequence number of the stateless message writer.
    pub(crate) stateless_sn: SequenceNumber,
    /// Registered types, TypeLookup requests and the objects learnt (see
    /// [`crate::discovery::typelookup`]).
    pub(crate) types: crate::discovery::typelookup::TypeService,
    /// DATA received from writers not discovered yet (see [`crate::unmatched_data`]).
    early: EarlyData,
    /// The proxies of writers just forgotten (see [`crate::unmatched_data`]).
    pub(crate) draining: Draining,
}

impl Participant {
    /// Creates the participant; the first SPDP announcement is due at `now`.
    pub fn new(cfg: ParticipantConfig, now: Instant) -> Participant {
        let cfg_reassembly_bytes = cfg.max_reassembly_bytes;
        let (cfg_bandwidth, cfg_max_message) = (cfg.bandwidth_limit, cfg.max_message_size);
        let buffers = BufferPool::default();
        let seed = cfg.hash_seed;
        let header = Header {
            version: ProtocolVersion::V2_5,
            vendor: VendorId::HALYARD,
            guid_prefix: cfg.guid_prefix,
        };
        let mut p = Participant {
            prefix: cfg.guid_prefix,
            out: Outbox::new(header, cfg.max_message_size),
            cfg,
            events: VecDeque::new(),
            samples: VecDeque::new(),
            writers: BTreeMap::new(),
            repairing: Vec::new(),
            releasing: Vec::new(),
            readers: BTreeMap::new(),
            writer_index: seeded_map(seed),
            remote: BTreeMap::new(),
            remote_writers: BTreeMap::new(),
            remote_readers: BTreeMap::new(),
            local_matches: BTreeMap::new(),
            local_sets: BTreeMap::new(),
            fed_service: None,
            service_peers: std::collections::BTreeSet::new(),
            fed: VecDeque::new(),
            groups: BTreeMap::new(),
            group_sets: BTreeMap::new(),
            released_group_sets: BTreeMap::new(),
            departed: BTreeMap::new(),
            access: BTreeMap::new(),
            next_entity_key: 1,
            spdp_sn: SequenceNumber(0),
            spdp_next: now,
            spdp_sent: 0,
            lingering: 0,
            bandwidth: cfg_bandwidth
                .map(|rate| TokenBucket::new(rate as f64, cfg_max_message, now)),
            stats: Stats::default(),
            delivered: Vec::new(),
            count_epoch: 0,
            reassembly_budget: crate::reassembly::ReassemblyBudget::new(
                cfg_reassembly_bytes,
                buffers.clone(),
            ),
            buffers,
            sedp_rejects: seeded_map(seed),
            writer_traits: seeded_map(seed),
            missed: Vec::new(),
            liveliness_next: None,
            manual_asserted: now,
            pmd_auto_next: None,
            write_due: WriteDue::Nothing,
            security: None,
            endpoint_security: std::collections::BTreeMap::new(),
            secure_pending: VecDeque::new(),
            encoded_submessage: Vec::new(),
            unprotect_buffers: Default::default(),
            stateless_sn: SequenceNumber(0),
            types: Default::default(),
            early: EarlyData::default(),
            draining: Draining::default(),
        };
        p.create_builtin_endpoints();
        p
    }

    /// Our GUID prefix.
    pub fn guid_prefix(&self) -> GuidPrefix {
        self.prefix
    }

    /// The configuration in force.
    pub fn config(&self) -> &ParticipantConfig {
        &self.cfg
    }

    /// Receive and drop counters.
    pub fn stats(&self) -> Stats {
        let mut s = self.stats;
        s.transmits_dropped = self.out.dropped;
        s.reassembly_bytes = self.reassembly_budget.used() as u64;
        s.parked_data = self.early.totals().0;
        s
    }

    pub(crate) fn allocate_entity(&mut self, kind: u8) -> EntityId {
        let id = EntityId::new(self.next_entity_key, kind);
        self.next_entity_key += 1;
        id
    }

    /// Creates a local DataWriter, announces it by SEDP and matches it.
    pub fn create_writer(&mut self, now: Instant, spec: WriterSpec) -> EntityId {
        let id = self.create_writer_disabled(now, spec);
        self.enable_writer(now, id);
        id
    }

    /// Creates a local DataWriter that is neither announced nor matched until
    /// [`Participant::enable_writer`] (ENTITY_FACTORY autoenable_created_entities false).
    pub fn create_writer_disabled(&mut self, now: Instant, spec: WriterSpec) -> EntityId {
        let kind = if spec.has_key {
            EntityId::KIND_WRITER_WITH_KEY
        } else {
            EntityId::KIND_WRITER_NO_KEY
        };
        let id = self.allocate_entity(kind);
        self.register_endpoint_security(id, &spec.topic_name, true);
        let guid = Guid::new(self.prefix, id);
        let traits = WriterTraits::of(&spec.qos);
        if !traits.is_default() {
            self.writer_traits.insert(guid, traits);
        }
        let mut writer = Writer::new(guid, spec, false, self.cfg.hash_seed);
        if self.security.is_some() && self.payload_protected(id) {
            writer.payload_room = crate::security::PAYLOAD_PROTECTION_ROOM;
        }
        writer.set_buffer_pool(self.buffers.clone());
        writer.own_liveliness.last = now;
        self.writers.insert(id, writer);
        id
    }

    /// Enables a writer created disabled: it is announced and matched (call it once).
    pub fn enable_writer(&mut self, now: Instant, id: EntityId) {
        let Some(w) = self.writers.get_mut(&id) else {
            return;
        };
        w.own_liveliness.last = now;
        self.announce_writer(now, id);
        self.match_local_writer(now, id);
        self.writer_liveliness_changed(now);
    }

    /// Creates a local DataReader, announces it by SEDP and matches it (a reader of a
    /// content-filtered topic: [`Participant::create_reader_filtered`]).
    pub fn create_reader(&mut self, now: Instant, spec: ReaderSpec) -> EntityId {
        self.create_reader_filtered(now, spec, None)
    }

    /// Creates a local DataReader (announcing `filter`, if any, as its content filter) that
    /// is neither announced nor matched until [`Participant::enable_reader`]
    /// (ENTITY_FACTORY autoenable_created_entities false).
    pub fn create_reader_disabled(
        &mut self,
        _now: Instant,
        spec: ReaderSpec,
        filter: Option<halyard_wire::discovery::ContentFilterProperty>,
    ) -> EntityId {
        let kind = if spec.has_key {
            EntityId::KIND_READER_WITH_KEY
        } else {
            EntityId::KIND_READER_NO_KEY
        };
        let id = self.allocate_entity(kind);
        self.register_endpoint_security(id, &spec.topic_name, false);
        let guid = Guid::new(self.prefix, id);
        let mut reader = Reader::new(guid, spec, self.cfg.hash_seed);
        reader.content_filter = filter;
        self.readers.insert(id, reader);
        id
    }

    /// Enables a reader created disabled: it is announced and matched (call it once).
    pub fn enable_reader(&mut self, now: Instant, id: EntityId) {
        if self.readers.contains_key(&id) {
            self.announce_reader(now, id);
            self.match_local_reader(now, id);
        }
    }

    /// Deletes a local writer: unmatches it and disposes its SEDP announcement. A writer whose
    /// reliable readers have not acknowledged all it wrote lingers first, up to
    /// `writer_linger`: it takes no more samples and matches no new readers, but keeps
    /// announcing (a HEARTBEAT goes out at once) and repairing until every reliable reader
    /// acknowledged everything or the time is up; then it is withdrawn. Poll
    /// [`Participant::writer_lingering`] to know when.
    pub fn delete_writer(&mut self, now: Instant, id: EntityId) {
        let linger = self.cfg.writer_linger;
        let Some(w) = self.writers.get_mut(&id) else {
            return;
        };
        if w.linger_until.is_some() {
            return;
        }
        // What a batch still holds goes out before the writer disappears.
        w.flush_batch(&mut self.out);
        w.stop_deadlines();
        let writer = w.guid;
        let lingers = !w.all_acked() && !linger.is_zero();
        if lingers {
            w.start_linger(now, now + linger, &mut self.out, &self.cfg);
            self.lingering += 1;
        }
        // Its local readers lose it now: they take nothing more from it, nor the members of
        // a coherent set it left open (incomplete).
        self.local_sets.remove(&id);
        for reader in self.local_matches.remove(&id).unwrap_or_default() {
            self.push_event(Event::SubscriptionMatched {
                reader,
                writer,
                matched: false,
            });
        }
        if !lingers {
            self.withdraw_writer(now, id);
        }
    }

    /// Removes a writer for good and disposes its SEDP announcement.
    fn withdraw_writer(&mut self, now: Instant, id: EntityId) {
        if let Some(w) = self.writers.remove(&id) {
            self.releasing.retain(|&r| r != id);
            self.writer_traits.remove(&w.guid);
            if w.linger_until.is_some() {
                self.lingering -= 1;
            }
            self.retract_endpoint(now, Guid::new(self.prefix, id));
        }
    }

    /// Withdraws the lingering writers that are done: all acknowledged, or out of time
    /// (`force`: all of them, at shutdown).
    pub(crate) fn finish_lingering(&mut self, now: Instant, force: bool) {
        if self.lingering == 0 {
            return;
        }
        let done: Vec<EntityId> = self
            .writers
            .iter()
            .filter(|(_, w)| {
                w.linger_until
                    .is_some_and(|until| force || now >= until || w.all_acked())
            })
            .map(|(id, _)| *id)
            .collect();
        for id in done {
            self.withdraw_writer(now, id);
        }
    }

    /// True while deleted writer `id` lingers (see [`Participant::delete_writer`]).
    pub fn writer_lingering(&self, id: EntityId) -> bool {
        self.writers
            .get(&id)
            .is_some_and(|w| w.linger_until.is_some())
    }

    /// Deleted writers still lingering.
    pub fn lingering_writers(&self) -> usize {
        self.lingering
    }

    /// Deletes a local reader.
    pub fn delete_reader(&mut self, now: Instant, id: EntityId) {
        // Its last word to each reliable writer: what it received. A writer waiting for
        // acknowledgments (a tool that writes, then exits) thus learns that the reader had
        // everything, even when the reader leaves before a HEARTBEAT would have asked.
        let reliable: Vec<Guid> = self.readers.get(&id).map_or_else(Vec::new, |r| {
            r.proxies
                .iter()
                .filter(|(_, p)| p.reliable)
                .map(|(g, _)| *g)
                .collect()
        });
        for writer in reliable {
            self.send_acknack(now, id, writer);
        }
        let Some(r) = self.readers.remove(&id) else {
            return;
        };
        self.forget_held_for(id);
        self.forget_type_consistency(id);
        for w in r.proxies.keys() {
            if let Some(v) = self.writer_index.get_mut(w) {
                v.retain(|&x| x != id);
            }
        }
        let guid = Guid::new(self.prefix, id);
        let mut unmatched = Vec::new();
        for (&w, v) in self.local_matches.iter_mut() {
            let before = v.len();
            v.retain(|&x| x != id);
            if v.len() < before {
                unmatched.push(w);
            }
        }
        for writer in unmatched {
            if let Some(w) = self.writers.get_mut(&writer) {
                w.forget_local_filter(id);
            }
            self.push_event(Event::PublicationMatched {
                writer,
                reader: guid,
                matched: false,
            });
        }
        self.retract_endpoint(now, guid);
    }

    /// Writes a change. `Err(Full)` means: wait for [`Event::WriterAcknowledged`] and retry.
    pub fn write(
        &mut self,
        now: Instant,
        writer: EntityId,
        change: NewChange,
    ) -> Result<SequenceNumber, WriteError> {
        // Data protection encodes the payload as it goes on the wire (each DATA, each
        // DATA_FRAG's fragments: see `Participant::protect_transmit`); the history and local
        // readers hold the plain one.
        // Until this write is through, anything may have moved (an error, local readers).
        let due_before = std::mem::replace(&mut self.write_due, WriteDue::Unknown);
        let queued = self.queued_samples();
        let w = self
            .writers
            .get_mut(&writer)
            .filter(|w| w.linger_until.is_none())
            .ok_or(WriteError::UnknownWriter)?;
        // Its group marks, if it has GROUP access (one branch for any other writer).
        let p = &w.spec.qos.presentation;
        let group_mark = match w.group {
            Some(g) if p.access_scope == halyard_wire::qos::PresentationAccessScope::Group => {
                self.groups.get(&g).and_then(|lg| lg.next_mark(p))
            }
            _ => None,
        };
        let mut local = self
            .local_matches
            .get(&writer)
            .filter(|v| !v.is_empty())
            .cloned();
        // Local readers get the sample through the bounded sample queue: a driver that does
        // not poll it holds the writer back rather than losing samples.
        let local_count = local.as_ref().map_or(0, Vec::len);
        let held = self.local_sets.get(&writer).map_or(0, Vec::len);
        if queued + held + local_count > MAX_QUEUED_EVENTS {
            return Err(WriteError::Full);
        }
        let copy = local.as_ref().map(|_| change.clone());
        let fed_copy = w.feeds().then(|| change.clone());
        w.next_group_mark = group_mark;
        let written = w.write(
            now,
            &mut self.out,
            &self.cfg,
            change,
            self.bandwidth.as_mut(),
        );
        w.next_group_mark = None;
        let sn = written?;
        let publisher = w.group;
        if let (Some(mark), Some(g)) = (group_mark, publisher.and_then(|g| self.groups.get_mut(&g)))
        {
            g.commit(mark);
        }
        // Local readers whose content filter rejects the sample do not get it.
        if let (Some(v), Some(c)) = (local.as_mut(), copy.as_ref()) {
            w.retain_local_accepting(v, c);
        }
        // Writing asserts the writer's liveliness (on the writer in hand: no second lookup).
        let note = w.note_asserted(now);
        // Only this writer's deadlines moved, unless the write revived its liveliness, went
        // to local readers or into a group's coherent set.
        let only_this_writer = !note.0 && local.is_none() && group_mark.is_none();
        let due = only_this_writer.then(|| w.next_due(self.bandwidth.as_ref()));
        self.after_assertion(now, note);
        if let Some(due) = due {
            self.write_due = due_before.and(due);
        }
        if let Some(c) = fed_copy {
            self.feed(writer, sn, &c);
        }
        if let (Some(readers), Some(c)) = (local, copy) {
            let src = Guid::new(self.prefix, writer);
            for r in readers {
                let s = ReceivedSample {
                    // Kept while held for the set, for the group order.
                    group: group_mark.and_then(|(set, gsn)| {
                        Some(crate::group_coherent::GroupMark {
                            set: set?,
                            gsn,
                            end: false,
                            broken: false,
                            contiguous: true,
                            members: None,
                        })
                    }),
                    group_seq: publisher
                        .zip(group_mark)
                        .map(|(g, (_, gsn))| (Guid::new(self.prefix, g), gsn)),
                    ..written_sample(r, src, sn, &c)
                };
                if self.holds_for_set(writer, r) {
                    self.local_sets.entry(writer).or_default().push(s);
                } else {
                    self.deliver_to_application(now, ReceivedSample { group: None, ..s });
                }
            }
        }
        Ok(sn)
    }

    /// Turns writer batching on or off for `writer` (turning it off sends what is pending).
    pub fn set_writer_batching(
        &mut self,
        writer: EntityId,
        policy: Option<BatchPolicy>,
    ) -> Result<(), WriteError> {
        let w = self
            .writers
            .get_mut(&writer)
            .ok_or(WriteError::UnknownWriter)?;
        w.set_batching(&mut self.out, policy);
        Ok(())
    }

    /// Sends `writer`'s pending batch now.
    pub fn flush_writer(&mut self, writer: EntityId) -> Result<(), WriteError> {
        let w = self
            .writers
            .get_mut(&writer)
            .ok_or(WriteError::UnknownWriter)?;
        w.flush_batch(&mut self.out);
        Ok(())
    }

    /// True if a write of `len` bytes would be accepted now.
    pub fn writer_can_accept(&self, writer: EntityId, len: usize) -> bool {
        self.writers
            .get(&writer)
            .is_some_and(|w| w.can_accept(&self.cfg, len))
    }

    /// True when every matched reliable reader acknowledged all of `writer`'s changes.
    pub fn writer_all_acked(&self, writer: EntityId) -> bool {
        self.writers.get(&writer).is_none_or(|w| w.all_acked())
    }

    /// True when a reader that a durability service feeds in memory
    /// ([`Participant::set_fed_service`]) is among the slowest to acknowledge `writer`'s
    /// changes: the service's next commit frees room in the writer's history. A blocked
    /// write, or a wait for acknowledgments, then asks the service to commit at once rather
    /// than at the end of its batch.
    pub fn writer_waits_on_fed(&self, writer: EntityId) -> bool {
        self.writers.get(&writer).is_some_and(|w| w.waits_on_fed())
    }

    /// What `writer` knows of each reader's reception: the readers matched now (local ones
    /// too), then the last ones that left, as they stood when they left (see
    /// [`crate::ReaderDelivery`]). Empty for an unknown writer.
    pub fn writer_deliveries(&self, writer: EntityId) -> Vec<crate::ReaderDelivery> {
        let Some(w) = self.writers.get(&writer) else {
            return Vec::new();
        };
        let local = self.local_matches.get(&writer).into_iter().flatten();
        local
            .map(|&r| crate::ReaderDelivery {
                reader: Guid::new(self.prefix, r),
                matched: true,
                durability_service: false,
                reception: crate::Reception::Local,
            })
            .chain(w.deliveries())
            .collect()
    }

    /// Matched readers of `writer` that have shown they matched it too: best-effort readers
    /// count at once, reliable readers once they sent an ACKNACK. Local readers always count;
    /// durability services' readers never do (see [`Participant::writer_service_readers`]).
    pub fn writer_synced_readers(&self, writer: EntityId) -> usize {
        let local = self.local_matches.get(&writer).map_or(0, Vec::len);
        local + self.writers.get(&writer).map_or(0, |w| w.synced_readers())
    }

    /// Changes held in a writer's history.
    pub fn writer_history_len(&self, writer: EntityId) -> usize {
        self.writers.get(&writer).map_or(0, |w| w.history_len())
    }

    /// Payload bytes a writer's history holds in memory (released payloads do not count:
    /// see [`Participant::set_relay_releases_payloads`]).
    pub fn writer_history_bytes(&self, writer: EntityId) -> usize {
        self.writers.get(&writer).map_or(0, |w| w.history_bytes())
    }

    /// Remote and local readers matched with a local writer.
    pub fn matched_readers(&self, writer: EntityId) -> Vec<Guid> {
        let mut v: Vec<Guid> = self
            .writers
            .get(&writer)
            .map(|w| w.proxies.keys().copied().collect())
            .unwrap_or_default();
        for r in self.local_matches.get(&writer).into_iter().flatten() {
            v.push(Guid::new(self.prefix, *r));
        }
        v
    }

    /// Writers matched with a local reader.
    pub fn matched_writers(&self, reader: EntityId) -> Vec<Guid> {
        let mut v: Vec<Guid> = self
            .readers
            .get(&reader)
            .map(|r| r.proxies.keys().copied().collect())
            .unwrap_or_default();
        for (w, rs) in &self.local_matches {
            if rs.contains(&reader) {
                v.push(Guid::new(self.prefix, *w));
            }
        }
        v
    }

    /// The next datagram to send, if any.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        if let Some(t) = self.secure_pending.pop_front() {
            return Some(t);
        }
        loop {
            let mut t = self.out.pop()?;
            if self.security.is_none() || self.protect_transmit(&mut t) {
                return Some(t);
            }
        }
    }

    /// Gives a sent datagram's buffer back for reuse.
    pub fn recycle(&mut self, buf: Vec<u8>) {
        self.out.recycle(buf)
    }

    /// Datagrams waiting to be sent.
    pub fn queued_transmits(&self) -> usize {
        self.out.len() + self.secure_pending.len()
    }

    /// The next event, if any.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Feeds the reliable durability-service readers of participant `service` (this
    /// process's embedded durability service) in memory from now on: a reliable writer
    /// (not a relay, not a builtin one) matched with one sends it nothing, hands it its history at the match and then each change it writes
    /// ([`Participant::poll_fed`]), and counts as acknowledged what the service says it
    /// stored ([`Participant::fed_ack`]). ACKNACKs and NACKs from such a reader are ignored.
    /// Readers matched before the call stay on the wire. `None` stops it for later matches.
    pub fn set_fed_service(&mut self, service: Option<GuidPrefix>) {
        self.fed_service = service;
    }

    /// The next change handed to a fed reader (`reader`: its entity in the service's
    /// participant; `writer`: the local writer), if any. The driver must poll these after
    /// every call, as it polls samples: they wait here until it does.
    pub fn poll_fed(&mut self) -> Option<ReceivedSample> {
        self.fed.pop_front()
    }

    /// The service stored every change of local writer `writer` below `next` for its fed
    /// reader `reader`: they count as acknowledged by it. False if that acknowledged nothing
    /// new (or there is no such fed reader).
    pub fn fed_ack(&mut self, writer: EntityId, reader: Guid, next: SequenceNumber) -> bool {
        self.writers
            .get_mut(&writer)
            .is_some_and(|w| w.fed_ack(&reader, next))
    }

    /// Hands change `sn` of local writer `writer` to its fed readers.
    fn feed(&mut self, writer: EntityId, sn: SequenceNumber, c: &NewChange) {
        let Some(w) = self.writers.get(&writer) else {
            return;
        };
        let src = Guid::new(self.prefix, writer);
        for r in w.fed_readers(sn) {
            self.fed.push_back(written_sample(r.entity, src, sn, c));
        }
    }

    /// Hands fed reader `reader` (alone: the writer's other fed readers have it) the history
    /// writer `writer` holds for it (at the match).
    pub(crate) fn feed_history(&mut self, writer: EntityId, reader: Guid) {
        let Some(w) = self.writers.get(&writer) else {
            return;
        };
        let src = Guid::new(self.prefix, writer);
        for (sn, c) in w.fed_history(&reader) {
            self.fed
                .push_back(written_sample(reader.entity, src, sn, c));
        }
    }

    /// The next received sample, if any.
    pub fn poll_sample(&mut self) -> Option<ReceivedSample> {
        self.samples.pop_front()
    }

    /// Gives back the payload buffer of a received sample the application is done with: a
    /// large one serves the next large sample's reassembly, saving its page faults.
    pub fn recycle_payload(&mut self, buf: Vec<u8>) {
        self.buffers.put(buf);
    }

    /// An empty buffer with room for at least `len` bytes from the participant's pool of
    /// large buffers (samples it finished sending or receiving), if it has one: serializing a
    /// large sample into it costs no page faults.
    pub fn take_buffer(&mut self, len: usize) -> Option<Vec<u8>> {
        let mut buf = self.buffers.take_at_least(len)?;
        buf.clear();
        Some(buf)
    }

    /// Counter seed for a new writer proxy: each proxy generation starts [`COUNT_EPOCH_STEP`]
    /// above the last, so a peer that still remembers an earlier generation's counts accepts
    /// the new ones.
    pub(crate) fn next_count_epoch(&mut self) -> i32 {
        self.count_epoch = self.count_epoch.wrapping_add(COUNT_EPOCH_STEP);
        self.count_epoch
    }

    pub(crate) fn push_event(&mut self, e: Event) {
        // A writer that lost liveliness or was unmatched owns no instance any more.
        match &e {
            Event::LivelinessChanged {
                reader,
                writer,
                alive: false,
            }
            | Event::SubscriptionMatched {
                reader,
                writer,
                matched: false,
            } => {
                if let Some(r) = self.readers.get_mut(reader) {
                    r.admission.writer_lost(*writer);
                }
            }
            _ => {}
        }
        if self.hidden_from_application(&e) {
            // What the reader's cache still needs to know: the relay no longer writes.
            if let Event::SubscriptionMatched {
                reader,
                writer,
                matched: false,
            }
            | Event::LivelinessChanged {
                reader,
                writer,
                alive: false,
            } = e
            {
                if self.events.len() < MAX_QUEUED_EVENTS {
                    self.events.push_back(Event::RelayGone { reader, writer });
                }
            }
            return;
        }
        if self.events.len() < MAX_QUEUED_EVENTS {
            self.events.push_back(e);
        }
    }

    /// Sets how many more samples a local reader's application can take in (`None` =
    /// unlimited) and delivers held samples up to that credit. Reliable samples beyond the
    /// credit stay unacknowledged in the core, which back-pressures their writers. Returns
    /// whether held samples were released (then poll samples, transmits and events).
    pub fn set_reader_credit(
        &mut self,
        now: Instant,
        reader: EntityId,
        credit: Option<usize>,
    ) -> bool {
        // What the core still holds for the reader took its credit already.
        let held = self.held_for_reader(reader);
        let queued = self.queued_samples();
        let Some(rd) = self.readers.get_mut(&reader) else {
            return false;
        };
        rd.credit = credit.map(|c| c.saturating_sub(held));
        let mut released = Vec::new();
        for (g, proxy) in rd.proxies.iter_mut() {
            let mut sink = Sink::new(reader, &mut self.delivered, &mut rd.credit, queued);
            if proxy.release(reader, &mut sink) {
                released.push(*g);
            }
        }
        // Tell the writers at once so they free their history without waiting for a heartbeat.
        let any = !released.is_empty();
        for w in released {
            self.send_acknack(now, reader, w);
        }
        self.route_deliveries(now);
        any
    }

    /// When `handle_timeout` must be called next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut t = self.spdp_deadline();
        let shared = self.bandwidth.as_ref();
        for w in self.writers.values() {
            if let Some(d) = w.next_due(shared) {
                t = t.min(d);
            }
        }
        for r in self.remote.values() {
            t = t.min(r.lease_deadline);
        }
        for d in [
            self.liveliness_next,
            self.pmd_auto_next,
            self.security_deadline(),
            self.type_decisions_due(),
        ]
        .into_iter()
        .flatten()
        {
            t = t.min(d);
        }
        for r in self.readers.values() {
            if let Some(d) = r.admission.next_timeout() {
                t = t.min(d);
            }
        }
        if let Some(d) = self.group_sets_deadline() {
            t = t.min(d);
        }
        Some(t)
    }

    /// What the [`Participant::write`]s since the last call did to the deadlines
    /// [`Participant::poll_timeout`] reports, and forgets it.
    ///
    /// A driver that wrote and did nothing else to the participant since its last
    /// `poll_timeout` may use [`WriteDue::Writes`] instead of calling `poll_timeout` again
    /// (which visits every endpoint and remote participant): on the path of every write.
    pub fn take_write_due(&mut self) -> WriteDue {
        std::mem::take(&mut self.write_due)
    }

    /// Runs timers: SPDP announcements, heartbeats, lease expiry.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.spdp_timeouts(now);
        self.draining.expire(now);
        self.security_timeouts(now);
        for w in self.writers.values_mut() {
            w.on_timeout(now, &mut self.out, &self.cfg, self.bandwidth.as_mut());
        }
        self.finish_lingering(now, false);
        let expired: Vec<GuidPrefix> = self
            .remote
            .iter()
            .filter(|(_, r)| r.lease_deadline <= now)
            .map(|(p, _)| *p)
            .collect();
        for p in expired {
            self.remove_participant(now, p, false);
        }
        self.deadline_timeouts(now);
        self.liveliness_timeouts(now);
        self.type_decision_timeouts(now, false);
        self.notice_wanted_payloads();
        self.remind_relay_history(now);
        // An expired lease or type decision may have ended a pairing a group set waited
        // for, and a set may have waited long enough for an undiscovered member.
        self.release_group_sets(now);
        self.prune_departed(now);
    }

    /// Reports the instances that missed a DEADLINE (readers' requested, writers' offered).
    fn deadline_timeouts(&mut self, now: Instant) {
        let mut missed = std::mem::take(&mut self.missed);
        let mut events = Vec::new();
        for (&id, r) in self.readers.iter_mut() {
            missed.clear();
            r.admission.expire(now, &mut missed);
            events.extend(
                missed
                    .iter()
                    .map(|&instance| Event::RequestedDeadlineMissed {
                        reader: id,
                        instance,
                    }),
            );
        }
        for (&id, w) in self.writers.iter_mut() {
            missed.clear();
            w.expire_deadlines(now, &mut missed);
            events.extend(missed.iter().map(|&instance| Event::OfferedDeadlineMissed {
                writer: id,
                instance,
            }));
        }
        missed.clear();
        self.missed = missed;
        for e in events {
            self.push_event(e);
        }
    }

    /// Processes one received datagram. Malformed input is counted and dropped.
    pub fn handle_datagram(&mut self, now: Instant, bytes: &[u8]) {
        if self.security.is_none() {
            return self.handle_datagram_into(now, bytes, &mut [Vec::new(), Vec::new()]);
        }
        // Not emptied: the plugin decodes over their old octets (no pass to initialise them).
        let mut buffers = std::mem::take(&mut self.unprotect_buffers);
        self.handle_datagram_into(now, bytes, &mut buffers);
        self.unprotect_buffers = buffers;
    }

    /// [`Participant::handle_datagram`], decoding protected data into `buffers` (their old
    /// contents are overwritten).
    fn handle_datagram_into(&mut self, now: Instant, bytes: &[u8], buffers: &mut [Vec<u8>; 2]) {
        let [plain_message, plain] = buffers;
        self.stats.datagrams += 1;
        let msg = match Message::parse(bytes) {
            Ok(m) => m,
            Err(_) => {
                self.stats.malformed_messages += 1;
                return;
            }
        };
        let sender = msg.header.guid_prefix;
        if sender == self.prefix {
            return;
        }
        // A whole message protected by its sender (SRTPS_PREFIX first): decoded by the
        // security plugin, then handled as if it had arrived plain.
        let mut rtps_protected = false;
        let msg = match self.unprotect_message(sender, bytes, plain_message) {
            Some(Ok(())) => match Message::parse(plain_message) {
                Ok(m) => {
                    rtps_protected = true;
                    m
                }
                Err(_) => {
                    self.stats.malformed_messages += 1;
                    return;
                }
            },
            Some(Err(())) => return,
            None => msg,
        };
        let mut rx = Receiver {
            src: sender,
            for_us: true,
            timestamp: None,
            rtps_protected,
        };
        // A submessage addressed to us by name proves the sender knows us.
        let mut addressed = false;
        let mut subs = msg.submessages();
        loop {
            let raw = subs.remaining();
            let Some(sm) = subs.next() else {
                break;
            };
            let Ok(sm) = sm else {
                self.stats.malformed_submessages += 1;
                break;
            };
            match sm {
                Submessage::InfoTs(t) => rx.timestamp = t,
                Submessage::InfoDst(p) => {
                    addressed |= p == self.prefix;
                    rx.for_us = p == GuidPrefix::UNKNOWN || p == self.prefix;
                }
                Submessage::InfoSrc(s) => rx.src = s.guid_prefix,
                Submessage::Unknown {
                    id: halyard_wire::message::id::SEC_PREFIX,
                } => {
                    // SEC_PREFIX … SEC_POSTFIX: one protected submessage.
                    match self.unprotect_submessage(rx.src, raw, plain) {
                        Some(consumed) => {
                            subs.skip_bytes(
                                consumed.saturating_sub(raw.len() - subs.remaining().len()),
                            );
                            if rx.for_us {
                                self.handle_plain_submessages(now, &rx, plain);
                            }
                        }
                        None => {
                            // Undecodable (a key not received yet, or tampered): skipped by
                            // its framing, SEC_PREFIX, one body submessage, SEC_POSTFIX, and
                            // the rest of the message handled (Cyclone DDS sends a handshake's
                            // Final beside an ACKNACK protected with keys derived from that
                            // Final). A message whose framing does not hold is dropped.
                            let _body = subs.next();
                            let postfix = subs.next();
                            if !matches!(
                                postfix,
                                Some(Ok(Submessage::Unknown {
                                    id: halyard_wire::message::id::SEC_POSTFIX
                                }))
                            ) {
                                break;
                            }
                        }
                    }
                }
                _ if !rx.for_us => {}
                sm => {
                    if self.plain_submessage_allowed(&rx, &sm) {
                        self.dispatch_submessage(now, &rx, &msg.header, sm);
                    }
                }
            }
        }
        // One HEARTBEAT per repaired reader, after all the repairs this datagram asked for.
        while let Some(id) = self.repairing.pop() {
            if let Some(w) = self.writers.get_mut(&id) {
                w.send_repair_heartbeats(now, &mut self.out);
            }
        }
        if let Some(r) = self.remote.get_mut(&sender) {
            r.lease_deadline = now + r.lease();
            r.last_heard = now;
        }
        if addressed {
            self.known_by(sender);
        }
        self.route_deliveries(now);
        self.finish_lingering(now, false);
        self.notice_wanted_payloads();
    }

    /// Handles one received submessage that is not an INFO_* and is for us.
    fn dispatch_submessage(
        &mut self,
        now: Instant,
        rx: &Receiver,
        header: &Header,
        sm: Submessage<'_>,
    ) {
        match sm {
            Submessage::Data(d) => self.on_data(now, rx, &d),
            Submessage::DataFrag(df) => self.on_data_frag(now, rx, &df),
            Submessage::Heartbeat(hb) => self.on_heartbeat(now, rx, &hb),
            Submessage::HeartbeatFrag(hf) => self.on_heartbeat_frag(now, rx, &hf),
            Submessage::AckNack(an) => self.on_acknack(now, rx, &an),
            Submessage::NackFrag(nf) => self.on_nackfrag(now, rx, &nf),
            Submessage::Gap(g) => self.on_gap(now, rx, &g),
            Submessage::Vendor {
                id: halyard_wire::message::id::HALYARD_RECEPTION_REPORT,
                flags,
                body,
            } if header.vendor == VendorId::HALYARD => {
                self.on_reception_report(now, rx, flags, body)
            }
            Submessage::Vendor {
                id: halyard_wire::message::id::HALYARD_NACK,
                flags,
                body,
            } if header.vendor == VendorId::HALYARD && self.security.is_none() => {
                // A secure participant takes no unprotected NACK (see `send_acknack`).
                self.on_halyard_nack(now, rx, flags, body)
            }
            _ => {}
        }
    }

    /// Handles the submessages a protected submessage decoded to (no INFO_* among them
    /// changes the receiver: a protected submessage is a single submessage).
    fn handle_plain_submessages(&mut self, now: Instant, rx: &Receiver, plain: &[u8]) {
        let header = Header {
            version: ProtocolVersion::V2_5,
            vendor: VendorId::UNKNOWN,
            guid_prefix: rx.src,
        };
        for sm in halyard_wire::Submessages::over(plain) {
            match sm {
                Ok(Submessage::InfoTs(_) | Submessage::InfoDst(_) | Submessage::InfoSrc(_)) => {}
                Ok(sm) => self.dispatch_submessage(now, rx, &header, sm),
                Err(_) => {
                    self.stats.malformed_submessages += 1;
                    break;
                }
            }
        }
    }

    fn route_deliveries(&mut self, now: Instant) {
        if self.delivered.is_empty() {
            return;
        }
        let delivered = std::mem::take(&mut self.delivered);
        for s in delivered {
            match s.reader {
                EntityId::SEDP_PUBLICATIONS_READER
                | EntityId::SEDP_SUBSCRIPTIONS_READER
                | EntityId::SEDP_PUBLICATIONS_SECURE_READER
                | EntityId::SEDP_SUBSCRIPTIONS_SECURE_READER => self.on_sedp_sample(now, s),
                EntityId::P2P_MESSAGE_READER | EntityId::P2P_MESSAGE_SECURE_READER => {
                    self.on_participant_message(now, &s)
                }
                EntityId::TL_SVC_REQUEST_READER => {
                    if s.kind == ChangeKind::Alive {
                        self.on_typelookup_request(now, &s.payload)
                    }
                }
                EntityId::TL_SVC_REPLY_READER => {
                    if s.kind == ChangeKind::Alive {
                        self.on_typelookup_reply(now, &s.payload)
                    }
                }
                EntityId::P2P_STATELESS_MESSAGE_READER | EntityId::P2P_VOLATILE_SECURE_READER => {
                    self.on_security_sample(now, &s)
                }
                _ => {
                    if s.group.is_some() {
                        self.on_group_sample(now, s)
                    } else {
                        self.deliver_to_application(now, s)
                    }
                }
            }
        }
        // Discovery may have unmatched a pairing a group set waited for.
        self.release_group_sets(now);
    }

    /// Hands a sample of a user reader to the application, past the reader's per-instance
    /// QoS ([`crate::admission`]); stamps its lifespan expiry.
    pub(crate) fn deliver_to_application(&mut self, now: Instant, mut s: ReceivedSample) {
        let traits = if self.writer_traits.is_empty() {
            WriterTraits::default()
        } else {
            self.writer_traits
                .get(&s.writer)
                .copied()
                .unwrap_or_default()
        };
        if let (Some(life), Some(ts)) = (traits.lifespan, s.source_timestamp) {
            let life = i64::try_from(life.as_nanos()).unwrap_or(i64::MAX);
            s.lifespan_expiry = Some(Time::from_nanos(ts.to_nanos().saturating_add(life)));
        }
        let Some(r) = self.readers.get_mut(&s.reader) else {
            return;
        };
        let group = r.group;
        if let Some(seen) = r.seen.as_mut() {
            let (writer, sn) = s.original.unwrap_or((s.writer, s.sn));
            // A group mark carries no sample (and its writer's number is its own).
            if s.group.as_ref().is_none_or(|g| !g.end) && !seen.first_time(writer, sn) {
                self.stats.duplicates_dropped += 1;
                return;
            }
        }
        if r.admission.active() {
            if let Err(why) = r.admission.admit(now, &mut s, traits) {
                let counter = match why {
                    Filtered::NotOwner => &mut self.stats.filtered_not_owner,
                    Filtered::OutOfOrder => &mut self.stats.filtered_out_of_order,
                    Filtered::TimeFilter => &mut self.stats.filtered_by_time,
                    Filtered::TooManyInstances => &mut self.stats.filtered_too_many_instances,
                };
                *counter += 1;
                return;
            }
        }
        self.hand_over(group, s);
    }

    /// Sets how a local reader computes instance keys from payloads that come without a key
    /// hash (Cyclone DDS, for one, sends none): its ownership, source order, time filter and
    /// deadline are per instance.
    pub fn set_reader_key_fn(&mut self, reader: EntityId, f: Option<KeyFn>) {
        if let Some(r) = self.readers.get_mut(&reader) {
            r.admission.set_key_fn(f);
        }
    }

    /// The writer that owns an instance of a local reader (EXCLUSIVE ownership), if any.
    pub fn instance_owner(&self, reader: EntityId, instance: &[u8; 16]) -> Option<Guid> {
        self.readers.get(&reader)?.admission.owner(instance)
    }

    fn readers_for(&self, writer: &Guid, reader_id: EntityId) -> Vec<EntityId> {
        match self.writer_index.get(writer) {
            Some(v) if reader_id == EntityId::UNKNOWN => v.clone(),
            Some(v) => v.iter().copied().filter(|&r| r == reader_id).collect(),
            None => Vec::new(),
        }
    }

    fn inline_qos_of(
        &mut self,
        qos: Option<halyard_wire::param::ParameterList<'_>>,
    ) -> Option<InlineQos> {
        let Some(q) = qos else {
            return Some(InlineQos::default());
        };
        match (
            q.key_hash(),
            q.status_info(),
            q.coherent_set(),
            q.group_coherent_set(),
            q.group_seq_num(),
            q.original_writer(),
        ) {
            (Ok(key_hash), Ok(status), Ok(coherent), Ok(group), Ok(gsn), Ok(original)) => {
                Some(InlineQos {
                    key_hash,
                    status,
                    coherent,
                    group,
                    gsn,
                    original,
                })
            }
            _ => {
                self.stats.malformed_inline_qos += 1;
                None
            }
        }
    }

    fn on_data(&mut self, now: Instant, rx: &Receiver, d: &Data<'_>) {
        let writer = Guid::new(rx.src, d.writer_id);
        if d.writer_id == EntityId::SPDP_WRITER {
            self.on_spdp(now, d);
            return;
        }
        let Some(inline) = self.inline_qos_of(d.inline_qos) else {
            return;
        };
        // A Halyard writer's GROUP set end (a marker: neither data, nor key, nor status) names
        // the set's member writers.
        let marker = d.payload.is_none() && !d.key_flag && inline.status == 0;
        let mut members = None;
        if let (true, Some(_), Some(q)) = (marker, inline.group, d.inline_qos) {
            if self.is_halyard(rx.src) {
                match q.group_members(crate::group_coherent::MAX_GROUP_MEMBERS) {
                    Ok(m) => members = m.map(std::sync::Arc::from),
                    Err(_) => {
                        self.stats.malformed_inline_qos += 1;
                        return;
                    }
                }
            }
        }
        let parts = DataParts {
            reader_id: d.reader_id,
            sn: d.writer_sn,
            key_flag: d.key_flag,
            inline,
            payload: d.payload,
            timestamp: rx.timestamp,
            members,
        };
        let readers = self.readers_for(&writer, d.reader_id);
        if readers.is_empty() {
            if self.deliver_draining(now, writer, &parts) {
                return;
            }
            self.stats.unmatched_data += 1;
            if self.may_park(&writer) {
                let key_bound = self.next_entity_key;
                self.early
                    .park(now, ParkedData::new(writer, &parts, now, key_bound));
            }
            return;
        }
        self.deliver_data(now, writer, readers, &parts);
    }

    /// True when a DATA of `writer` that no reader takes is one to park (see
    /// [`crate::unmatched_data`]): a user writer of another participant that discovery has not
    /// announced yet, received by a participant without security.
    fn may_park(&self, writer: &Guid) -> bool {
        self.security.is_none()
            && !writer.entity.is_builtin()
            && writer.prefix != self.prefix
            && !self.remote_writers.contains_key(writer)
    }

    /// Hands reader `reader`, just matched with `writer` best effort, what `writer` sent before
    /// its discovery completed (see [`crate::unmatched_data`]).
    pub(crate) fn deliver_parked(&mut self, now: Instant, reader: EntityId, writer: Guid) {
        for d in self.early.for_reader(now, &writer, reader) {
            self.stats.parked_data_delivered += 1;
            self.deliver_data(now, writer, vec![reader], &d.parts());
        }
    }

    /// Delivers DATA of `writer`, forgotten a moment ago, through the proxies its readers had
    /// (see [`crate::unmatched_data`]); false if there are none.
    fn deliver_draining(&mut self, now: Instant, writer: Guid, d: &DataParts<'_>) -> bool {
        if self.draining.is_empty() {
            return false;
        }
        let Some(mut drained) = self.draining.take(now, &writer) else {
            return false;
        };
        // The proxies go back into their readers for this one delivery.
        let mut readers = Vec::new();
        for (r, proxy) in std::mem::take(&mut drained.proxies) {
            if let Some(rd) = self.readers.get_mut(&r) {
                rd.proxies.insert(writer, proxy);
                readers.push(r);
            }
        }
        let targets: Vec<EntityId> = readers
            .iter()
            .copied()
            .filter(|&r| d.reader_id == EntityId::UNKNOWN || d.reader_id == r)
            .collect();
        self.stats.drained_data += 1;
        self.deliver_data(now, writer, targets, d);
        for r in readers {
            if let Some(p) = self
                .readers
                .get_mut(&r)
                .and_then(|rd| rd.proxies.remove(&writer))
            {
                drained.proxies.push((r, p));
            }
        }
        self.draining.put_back(writer, drained);
        true
    }

    /// Drops what was parked for `writer` (it is gone).
    pub(crate) fn forget_parked(&mut self, writer: &Guid) {
        self.early.forget(writer);
    }

    /// Delivers one DATA of `writer` to `readers` (decoding a protected payload first).
    fn deliver_data(
        &mut self,
        now: Instant,
        writer: Guid,
        readers: Vec<EntityId>,
        d: &DataParts<'_>,
    ) {
        let (key_hash, status) = (d.inline.key_hash, d.inline.status);
        let kind = if status != 0 {
            ChangeKind::from_status_info(status)
        } else if d.key_flag {
            ChangeKind::Disposed
        } else {
            ChangeKind::Alive
        };
        let payload = d.payload.unwrap_or(&[]);
        // Data protection: the payload decoded (one branch without security).
        let mut plain = None;
        if self.security.is_some() {
            // Allocated by the plugin only if it decodes (most secure writers encode nothing).
            let mut out = Vec::new();
            match self.decode_received(writer, payload, None, &mut out) {
                Ok(true) => plain = Some(out),
                Ok(false) => {}
                Err(()) => return,
            }
        }
        // Neither data, nor key, nor status: a marker (a coherent set's end), not a sample.
        let marker = d.payload.is_none() && !d.key_flag && status == 0;
        let n = readers.len();
        for (i, r) in readers.into_iter().enumerate() {
            if d.reader_id != EntityId::UNKNOWN {
                self.note_repair(now, r, writer, d.sn);
            }
            // The decoded payload goes to the last reader, copies to the others.
            let bytes = match i + 1 < n {
                true => plain.clone(),
                false => plain.take(),
            };
            let arrival = Arrival {
                kind,
                key_hash,
                payload: bytes.unwrap_or_else(|| payload.to_vec()),
                timestamp: d.timestamp,
                coherent: d.inline.coherent,
                marker,
                group: d.inline.group,
                gsn: d.inline.gsn,
                contiguous: false,
                original: d.inline.original,
                members: d.members.clone(),
            };
            self.deliver_arrival(now, r, writer, d.sn, arrival);
        }
    }

    fn deliver_arrival(
        &mut self,
        now: Instant,
        reader: EntityId,
        writer: Guid,
        sn: SequenceNumber,
        arrival: Arrival,
    ) {
        if !self.builtin_sample_acceptable(reader, writer, &arrival) {
            // Treated as lost, not delivered: the reliable builtin reader keeps asking for it,
            // so the writer resends it. Accepting it would acknowledge an announcement we
            // threw away, and the writer would never send it again. A sample that arrives
            // unusable again and again is not damage but something we cannot parse: it is
            // then accepted (and dropped by discovery) so it does not block the channel.
            let key = (writer, sn);
            let seen = self.sedp_rejects.get(&key).copied().unwrap_or(0);
            if seen < MAX_SEDP_REJECTS {
                if self.sedp_rejects.len() >= MAX_SEDP_REJECTS_TRACKED {
                    self.sedp_rejects.clear();
                }
                self.sedp_rejects.insert(key, seen + 1);
                self.stats.malformed_discovery += 1;
                return;
            }
            self.sedp_rejects.remove(&key);
        }
        let queued = self.queued_samples();
        let Some(rd) = self.readers.get_mut(&reader) else {
            return;
        };
        let Some(proxy) = rd.proxies.get_mut(&writer) else {
            return;
        };
        // Data asserts its writer's liveliness.
        let revived = proxy.lease.as_mut().map(|l| (l.assert(now), l.kind));
        let mut sink = Sink::new(reader, &mut self.delivered, &mut rd.credit, queued);
        let lost = proxy.on_sample(&self.cfg, reader, sn, arrival, &mut sink);
        let gated = proxy.coherent.is_some();
        if let Some((revived, kind)) = revived {
            self.liveliness_asserted(now, reader, writer, revived, kind);
        }
        if gated {
            self.report_dropped_sets(reader, writer);
        }
        if lost > 0 {
            self.push_event(Event::SampleLost {
                reader,
                writer,
                count: lost,
            });
        }
    }

    fn on_data_frag(&mut self, now: Instant, rx: &Receiver, df: &DataFrag<'_>) {
        let writer = Guid::new(rx.src, df.writer_id);
        let Some(inline) = self.inline_qos_of(df.inline_qos) else {
            return;
        };
        let readers = self.readers_for(&writer, df.reader_id);
        if readers.is_empty() {
            self.stats.unmatched_data += 1;
            return;
        }
        // Data protection: the fragments decoded (one branch without security).
        let mut plain = Vec::new();
        let mut decoded = *df;
        if self.security.is_some() {
            let n = df.fragments_len();
            match self.decode_received(writer, df.payload, Some(n), &mut plain) {
                Ok(true) => decoded.payload = &plain,
                Ok(false) => {}
                Err(()) => return,
            }
        }
        let df = &decoded;
        for r in readers {
            let Some(rd) = self.readers.get_mut(&r) else {
                continue;
            };
            let Some(proxy) = rd.proxies.get_mut(&writer) else {
                continue;
            };
            if df.reader_id != EntityId::UNKNOWN && df.fragments_in_submessage > 0 {
                let first = df.fragment_starting_num;
                let last = first.saturating_add(u32::from(df.fragments_in_submessage) - 1);
                proxy.note_repair(now, df.writer_sn, Some(first..=last));
            }
            if let Some((sn, arrival)) =
                proxy.on_fragment(&self.cfg, &self.reassembly_budget, df, inline, rx.timestamp)
            {
                self.deliver_arrival(now, r, writer, sn, arrival);
            }
            self.report_reception(now, r, writer);
        }
    }

    fn on_heartbeat(&mut self, now: Instant, rx: &Receiver, hb: &Heartbeat) {
        let writer = Guid::new(rx.src, hb.writer_id);
        for r in self.readers_for(&writer, hb.reader_id) {
            let queued = self.queued_samples();
            let Some(rd) = self.readers.get_mut(&r) else {
                continue;
            };
            let Some(proxy) = rd.proxies.get_mut(&writer) else {
                continue;
            };
            // A HEARTBEAT with the liveliness flag asserts a MANUAL_BY_TOPIC writer.
            let revived = proxy
                .lease
                .as_mut()
                .filter(|_| hb.liveliness_flag)
                .map(|l| (l.assert(now), l.kind));
            let (lost, ack) = proxy.on_heartbeat(
                r,
                hb.first_sn,
                hb.last_sn,
                hb.count,
                hb.final_flag,
                &mut Sink::new(r, &mut self.delivered, &mut rd.credit, queued),
            );
            if lost > 0 {
                self.push_event(Event::SampleLost {
                    reader: r,
                    writer,
                    count: lost,
                });
            }
            if let Some((revived, kind)) = revived {
                self.liveliness_asserted(now, r, writer, revived, kind);
            }
            if ack {
                self.send_acknack(now, r, writer);
            }
        }
    }

    fn on_heartbeat_frag(&mut self, now: Instant, rx: &Receiver, hf: &HeartbeatFrag) {
        let writer = Guid::new(rx.src, hf.writer_id);
        for r in self.readers_for(&writer, hf.reader_id) {
            self.send_acknack(now, r, writer);
        }
    }

    /// Tells reader `r`'s proxy of `writer` that a repair addressed to it arrived.
    fn note_repair(&mut self, now: Instant, r: EntityId, writer: Guid, sn: SequenceNumber) {
        if let Some(p) = self
            .readers
            .get_mut(&r)
            .and_then(|rd| rd.proxies.get_mut(&writer))
        {
            p.note_repair(now, sn, None);
        }
    }

    /// Sends an ACKNACK (and NACK_FRAGs) from local reader `r` to `writer`.
    pub(crate) fn send_acknack(&mut self, now: Instant, r: EntityId, writer: Guid) {
        // Halyard's NACK goes unprotected: not from a secure participant (its ACKNACKs may
        // be protected, and a plain NACK would be a way around that).
        let halyard = self.security.is_none() && self.is_halyard(writer.prefix);
        let Some(rd) = self.readers.get_mut(&r) else {
            return;
        };
        let Some(proxy) = rd.proxies.get_mut(&writer) else {
            return;
        };
        if !proxy.reliable {
            return;
        }
        let an: AckNack = proxy.acknack(r, now);
        let beyond = halyard.then(|| proxy.nack_beyond(r, now)).flatten();
        let nfs = proxy.nack_frags(r, now);
        let dests = proxy.locators.clone();
        let mut mb = self.out.start(Some(writer.prefix));
        mb.acknack(&an);
        if let Some(nack) = &beyond {
            mb.halyard_nack(nack);
        }
        for nf in &nfs {
            mb.nack_frag(nf);
        }
        self.out.push(mb, 0, &dests);
    }

    fn on_acknack(&mut self, now: Instant, rx: &Receiver, an: &AckNack) {
        let reader = Guid::new(rx.src, an.reader_id);
        let Some(w) = self.writers.get_mut(&an.writer_id) else {
            return;
        };
        let advanced = w.on_acknack(now, &mut self.out, &self.cfg, reader, an);
        if advanced {
            self.push_event(Event::WriterAcknowledged {
                writer: an.writer_id,
            });
        }
    }

    fn on_nackfrag(&mut self, now: Instant, rx: &Receiver, nf: &NackFrag) {
        let reader = Guid::new(rx.src, nf.reader_id);
        if let Some(w) = self.writers.get_mut(&nf.writer_id) {
            w.on_nackfrag(now, &mut self.out, &self.cfg, reader, nf);
            if w.owes_repair_heartbeat() && !self.repairing.contains(&nf.writer_id) {
                self.repairing.push(nf.writer_id);
            }
        }
    }

    /// A Halyard reader's NACK beyond its ACKNACK's reach (see `reader`'s `nack_beyond`).
    fn on_halyard_nack(&mut self, now: Instant, rx: &Receiver, flags: u8, body: &[u8]) {
        let Ok(nack) = AckNack::parse_halyard_nack(flags, body) else {
            self.stats.malformed_submessages += 1;
            return;
        };
        let reader = Guid::new(rx.src, nack.reader_id);
        if let Some(w) = self.writers.get_mut(&nack.writer_id) {
            w.on_halyard_nack(now, &mut self.out, &self.cfg, reader, &nack);
        }
    }

    /// A Halyard best-effort reader's reception report to one of our writers.
    fn on_reception_report(&mut self, now: Instant, rx: &Receiver, flags: u8, body: &[u8]) {
        let Ok(report) = ReceptionReport::parse(flags, body) else {
            self.stats.malformed_submessages += 1;
            return;
        };
        let reader = Guid::new(rx.src, report.reader_id);
        if let Some(w) = self.writers.get_mut(&report.writer_id) {
            w.on_reception_report(now, &self.cfg, reader, &report);
        }
    }

    /// Sends best-effort reader `r`'s reception report on `writer`, when one is due.
    fn report_reception(&mut self, now: Instant, r: EntityId, writer: Guid) {
        let interval = self.cfg.reception_report_interval;
        let Some(proxy) = self
            .readers
            .get_mut(&r)
            .and_then(|rd| rd.proxies.get_mut(&writer))
        else {
            return;
        };
        let Some(report) = proxy.reception_report(r, now, interval) else {
            return;
        };
        let dests = proxy.locators.clone();
        let mut mb = self.out.start(Some(writer.prefix));
        mb.reception_report(&report);
        self.out.push(mb, 0, &dests);
    }

    /// Sets (`Some(bytes per second)`) or clears the bandwidth limit of best-effort writer
    /// `writer` (see [`crate::pacing`]; reliable writers are paced by acknowledgments).
    pub fn set_writer_bandwidth_limit(
        &mut self,
        now: Instant,
        writer: EntityId,
        limit: Option<u64>,
    ) -> Result<(), WriteError> {
        let w = self
            .writers
            .get_mut(&writer)
            .ok_or(WriteError::UnknownWriter)?;
        w.set_bandwidth_limit(now, &self.cfg, limit);
        Ok(())
    }

    /// Samples best-effort writer `writer` dropped whole before sending them (a KEEP_LAST
    /// writer's sample superseded while it waited for its pacer).
    pub fn writer_paced_drops(&self, writer: EntityId) -> u64 {
        self.writers.get(&writer).map_or(0, |w| w.paced_drops())
    }

    /// The rate best-effort writer `writer` is paced at now, in bytes per second (`None`: not
    /// paced by itself).
    pub fn writer_paced_rate(&self, writer: EntityId) -> Option<f64> {
        self.writers.get(&writer).and_then(|w| w.paced_rate())
    }

    fn on_gap(&mut self, now: Instant, rx: &Receiver, g: &Gap) {
        let writer = Guid::new(rx.src, g.writer_id);
        for r in self.readers_for(&writer, g.reader_id) {
            let queued = self.queued_samples();
            let Some(rd) = self.readers.get_mut(&r) else {
                continue;
            };
            let Some(proxy) = rd.proxies.get_mut(&writer) else {
                continue;
            };
            if g.reader_id != EntityId::UNKNOWN {
                proxy.note_gap_repair(now, g.gap_start, &g.gap_list);
            }
            proxy.on_gap(
                &self.cfg,
                r,
                g.gap_start,
                &g.gap_list,
                &mut Sink::new(r, &mut self.delivered, &mut rd.credit, queued),
            );
        }
    }
}

/// Change `sn` of local writer `writer`, as reader `reader` of this process gets it (a reader
/// of the participant, or a fed one of its embedded service): the payload shared, not copied.
fn written_sample(
    reader: EntityId,
    writer: Guid,
    sn: SequenceNumber,
    c: &NewChange,
) -> ReceivedSample {
    ReceivedSample {
        reader,
        writer,
        sn,
        kind: c.kind,
        key_hash: Some(c.key_hash),
        payload: std::sync::Arc::clone(&c.payload),
        source_timestamp: c.timestamp,
        lifespan_expiry: None,
        group: None,
        group_seq: None,
        original: c.original,
    }
}
