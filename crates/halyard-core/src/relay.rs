//! What the protocol core does for durability services (DDS 1.4 DURABILITY TRANSIENT and
//! PERSISTENT): relay writers, held acknowledgments, and delivering each sample once.
//!
//! Design. A durability service subscribes to durable topics and serves what it stored to
//! readers that come later. Three things in the core make that correct:
//!
//! - **Held acknowledgments.** A service's reader must not acknowledge a sample before the
//!   service stored it: the writer would forget it, and a crash of the service between the
//!   acknowledgment and the store would lose it. A reader whose acknowledgments are held
//!   ([`Participant::hold_acknowledgments`]) remembers, per writer, the sequence numbers it
//!   delivered; its ACKNACK base stops at the first one not yet released
//!   ([`Participant::release_acknowledgments`], called once the store committed it), and the
//!   bitmap does not name what it received beyond it. The writer keeps those changes and its
//!   `wait_for_acknowledgments` means "stored".
//! - **Relay writers.** A service's writer ([`Participant::set_writer_relay`]) holds the stored
//!   samples, each sent with PID_ORIGINAL_WRITER_INFO (its first writer and sequence number).
//!   A reader gets the history held when it matched; what the service stores later reaches
//!   that reader from its original writer, so the relay sends it a GAP instead (every live
//!   sample would otherwise travel twice). Another service's reader gets everything, so that
//!   services catch up from each other, unless that service keeps only its own
//!   participant's writers ([`Participant::set_reader_catches_up`]).
//! - **Deferred history.** While no matched reader needs a relay's changes as they are
//!   stored (every reader got them from their writers, and none catches up from relays),
//!   the driver may keep them in its store only ([`Participant::defer_relay_history`]):
//!   the relay holds nothing for them, which saves a history entry per stored sample. A
//!   reader that matches then waits, [`crate::Event::RelayHistoryWanted`] asks the driver
//!   to write what it held back, and [`Participant::complete_relay_history`] matches the
//!   waiting readers against the whole history, in order.
//! - **Once per sample.** A reader that is not VOLATILE may get a sample from its writer and
//!   from one or more services. It remembers, per original writer, the sequence numbers it
//!   delivered ([`SeenSamples`], a few ranges per writer) and drops the copies.
//! - **Out of sight.** A service's readers and relays are endpoints of the domain (discovery
//!   lists them, and `halyard ls` shows them by their entity names), but to an application
//!   they are the infrastructure its durable data go through, not peers: an application
//!   writer matched by a service's reader, or an application reader matched by a relay,
//!   gets no status from it. The participant remembers which remote endpoints are a
//!   service's ([`Participant::note_service_peer`], from their entity names) and drops the
//!   events whose peer is one: PUBLICATION_MATCHED and SUBSCRIPTION_MATCHED, OFFERED_ and
//!   REQUESTED_INCOMPATIBLE_QOS (a service makes a reader of each durability kind for a topic,
//!   and the PERSISTENT one does not match a TRANSIENT writer), LIVELINESS_CHANGED and
//!   SAMPLE_LOST. Their readers still count where "stored" is meant
//!   (`wait_for_acknowledgments`; [`Participant::writer_service_readers`] lists them), and
//!   readers still get a relay's history. The DEADLINE of an instance a relay delivered
//!   follows its instance state as for any writer (an instance its writer unregistered has
//!   none).

use crate::participant::Participant;
use crate::time::Instant;
use crate::writer::{NewChange, WriteError};
use halyard_wire::{EntityId, Guid, GuidPrefix, SequenceNumber};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The PID_ENTITY_NAME a durability service's reader announces: relays send such a reader
/// every change, not only the history held when it matched, so that services catch up from
/// each other (one that was cut off from a writer gets its samples from another service).
pub const SERVICE_READER_NAME: &str = "halyard.durability_service";

/// The PID_ENTITY_NAME a relay writer announces: a durability service counts it among the
/// topic's channels (it learns topics from other services) but not among the writers whose
/// liveliness delays the cleanup of disposed instances.
pub const RELAY_WRITER_NAME: &str = "halyard.durability_relay";

/// The PID_ENTITY_NAME of the reader of a durability service that keeps only its own
/// participant's writers (an embedded one, see [`Participant::set_reader_catches_up`]): a
/// service for the writers it matches (a TRANSIENT or PERSISTENT KEEP_ALL writer drops what
/// it acknowledged instead of blocking), but relays treat it as any reader.
pub const SCOPED_SERVICE_READER_NAME: &str = "halyard.durability_service.scoped";

/// True if remote reader `ed` is a durability service's (either name, scoped or not).
pub(crate) fn is_service_reader(ed: &halyard_wire::discovery::EndpointData) -> bool {
    match ed.entity_name.as_deref() {
        Some(SERVICE_READER_NAME | SCOPED_SERVICE_READER_NAME) => true,
        Some(name) => name
            .strip_prefix(SCOPED_SERVICE_READER_NAME)
            .is_some_and(|rest| rest.starts_with(':')),
        None => false,
    }
}

/// The name a scoped service reader announces: [`SCOPED_SERVICE_READER_NAME`], then `:` and
/// the GUID prefix of the participant whose writers it keeps, in hexadecimal.
pub(crate) fn scoped_reader_name(scope: GuidPrefix) -> String {
    let hex: String = scope.0.iter().map(|b| format!("{b:02x}")).collect();
    format!("{SCOPED_SERVICE_READER_NAME}:{hex}")
}

/// The participant a remote scoped service reader keeps the writers of, if its name says
/// (see [`scoped_reader_name`]): writers of other participants do not match it.
pub(crate) fn service_reader_scope(
    ed: &halyard_wire::discovery::EndpointData,
) -> Option<GuidPrefix> {
    let hex = ed
        .entity_name
        .as_deref()?
        .strip_prefix(SCOPED_SERVICE_READER_NAME)?
        .strip_prefix(':')?;
    if hex.len() != 24 || !hex.is_ascii() {
        return None;
    }
    let mut prefix = [0u8; 12];
    for (i, b) in prefix.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(GuidPrefix(prefix))
}

/// True if remote reader `ed` is a service's that catches up from relays.
pub(crate) fn catches_up_from_relays(ed: &halyard_wire::discovery::EndpointData) -> bool {
    ed.entity_name.as_deref() == Some(SERVICE_READER_NAME)
}

/// True if discovered endpoint `ed` is a durability service's (a reader, scoped or not, or a
/// relay writer), by the entity name it announces: infrastructure that durable data go
/// through, not an application's peer (see the module, "Out of sight").
pub fn is_service_endpoint(ed: &halyard_wire::discovery::EndpointData) -> bool {
    is_service_reader(ed) || is_relay_writer(ed)
}

/// True if remote writer `ed` is a durability service's relay.
pub(crate) fn is_relay_writer(ed: &halyard_wire::discovery::EndpointData) -> bool {
    ed.entity_name.as_deref() == Some(RELAY_WRITER_NAME)
}

/// A durability service's reader matched with a local writer, as
/// [`Participant::writer_service_readers`] lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServiceReader {
    /// The service's reader.
    pub reader: Guid,
    /// It is this participant's embedded service's, fed in memory
    /// ([`Participant::set_fed_service`]): it lives and dies with this process.
    pub fed: bool,
    /// It showed it matched the writer too (an ACKNACK; a fed reader at once).
    pub synced: bool,
    /// It acknowledged everything the writer wrote: the service stored it.
    pub stored_all: bool,
}

/// How long readers wait for a relay's history before it is asked for again.
const HISTORY_WANTED_AGAIN: std::time::Duration = std::time::Duration::from_secs(1);

/// Writers a reader remembers delivered samples of (the oldest is forgotten beyond).
const MAX_WRITERS_REMEMBERED: usize = 4096;
/// Disjoint ranges remembered per writer (the lowest is forgotten beyond).
const MAX_RANGES_PER_WRITER: usize = 64;

/// The sequence numbers a reader delivered, per original writer, as sorted disjoint
/// inclusive ranges: contiguous streams cost one range per writer.
#[derive(Debug, Default)]
pub(crate) struct SeenSamples {
    writers: BTreeMap<Guid, Vec<(i64, i64)>>,
}

impl SeenSamples {
    /// Records `sn` of `writer`; false if it was delivered before (a copy).
    pub(crate) fn first_time(&mut self, writer: Guid, sn: SequenceNumber) -> bool {
        if !self.writers.contains_key(&writer) && self.writers.len() >= MAX_WRITERS_REMEMBERED {
            self.writers.pop_first();
        }
        let ranges = self.writers.entry(writer).or_default();
        insert(ranges, sn.0)
    }
}

/// Inserts `sn` into sorted disjoint inclusive `ranges`; false if already there.
fn insert(ranges: &mut Vec<(i64, i64)>, sn: i64) -> bool {
    // Fast path: the next of a contiguous stream.
    if let Some(last) = ranges.last_mut() {
        if last.1.checked_add(1) == Some(sn) {
            last.1 = sn;
            return true;
        }
        if sn > last.1 {
            ranges.push((sn, sn));
            trim(ranges);
            return true;
        }
    }
    // The first range ending at or after `sn`.
    let i = ranges.partition_point(|r| r.1 < sn);
    if ranges.get(i).is_some_and(|r| r.0 <= sn) {
        return false;
    }
    let joins_prev = i > 0 && ranges[i - 1].1.checked_add(1) == Some(sn);
    let joins_next = ranges
        .get(i)
        .is_some_and(|r| sn.checked_add(1) == Some(r.0));
    match (joins_prev, joins_next) {
        (true, true) => {
            ranges[i - 1].1 = ranges[i].1;
            ranges.remove(i);
        }
        (true, false) => ranges[i - 1].1 = sn,
        (false, true) => ranges[i].0 = sn,
        (false, false) => ranges.insert(i, (sn, sn)),
    }
    trim(ranges);
    true
}

fn trim(ranges: &mut Vec<(i64, i64)>) {
    if ranges.len() > MAX_RANGES_PER_WRITER {
        ranges.remove(0);
    }
}

impl Participant {
    /// Remembers whether remote endpoint `ed` (a `reader` or a writer) is a durability
    /// service's: a reader with a service's entity name, or a relay. Called as it is
    /// discovered, before it is matched, and again whenever it announces itself again.
    pub(crate) fn note_service_peer(
        &mut self,
        ed: &halyard_wire::discovery::EndpointData,
        reader: bool,
    ) {
        let service = match reader {
            true => is_service_reader(ed),
            false => is_relay_writer(ed),
        };
        if service {
            self.service_peers.insert(ed.guid);
        } else {
            self.service_peers.remove(&ed.guid);
        }
    }

    /// True for an event an application must not see: one whose peer is a durability
    /// service's endpoint (see the module, "Out of sight").
    pub(crate) fn hidden_from_application(&self, e: &crate::Event) -> bool {
        use crate::Event as E;
        if self.service_peers.is_empty() {
            return false;
        }
        let peer = match e {
            E::PublicationMatched { reader, .. } | E::OfferedIncompatibleQos { reader, .. } => {
                reader
            }
            E::SubscriptionMatched { writer, .. }
            | E::RequestedIncompatibleQos { writer, .. }
            | E::LivelinessChanged { writer, .. }
            | E::SampleLost { writer, .. } => writer,
            _ => return false,
        };
        self.service_peers.contains(peer)
    }

    /// True if remote endpoint `guid` is a durability service's (see the module, "Out of
    /// sight").
    pub fn is_service_peer(&self, guid: &Guid) -> bool {
        self.service_peers.contains(guid)
    }

    /// The durability services' readers local writer `writer` matched (they are not among
    /// the readers its matched status counts; see the module, "Out of sight").
    pub fn writer_service_readers(&self, writer: EntityId) -> Vec<ServiceReader> {
        let Some(w) = self.writers.get(&writer) else {
            return Vec::new();
        };
        w.proxies
            .values()
            .filter(|p| p.durability_service)
            .map(|p| ServiceReader {
                reader: p.guid,
                fed: p.fed,
                synced: !p.reliable || p.fed || (p.synced && p.acknack_counts.seen()),
                stored_all: p.acked_below > w.last_sn,
            })
            .collect()
    }

    /// Makes local reader `reader` acknowledge only what is released (see the module): a
    /// durability service's reader, whose acknowledgment then means "stored". Applies to the
    /// writers it matches from now on and to those it has matched.
    /// Such a reader gets copies too (the service's store recognises them, and releases
    /// them). It announces itself as a service's reader ([`SERVICE_READER_NAME`]), again if it was
    /// announced already.
    pub fn hold_acknowledgments(&mut self, now: Instant, reader: EntityId) {
        let Some(r) = self.readers.get_mut(&reader) else {
            return;
        };
        r.holds_acks = true;
        // It sees every copy: each must be released, and the store recognises copies.
        r.seen = None;
        for p in r.proxies.values_mut().filter(|p| p.reliable) {
            p.unreleased.get_or_insert_with(Default::default);
        }
        if r.announced_sn.is_some() {
            self.announce_reader(now, reader);
        }
    }

    /// Whether held reader `reader` catches up from relays: they send it every change they
    /// hold and store later (services catch up from each other; the default, announced as
    /// [`SERVICE_READER_NAME`]). A service that keeps only its own participant's writers (an
    /// embedded one) gets those from the writers themselves: `false` (announced as
    /// [`SCOPED_SERVICE_READER_NAME`]) makes relays treat its reader as any other (the
    /// history held at matching, GAPs after), which spares every relay sending it each
    /// stored sample a second time; writers still see a service. Announced again if it was
    /// already.
    pub fn set_reader_catches_up(&mut self, now: Instant, reader: EntityId, catches_up: bool) {
        let Some(r) = self.readers.get_mut(&reader) else {
            return;
        };
        if r.catches_up == catches_up {
            return;
        }
        r.catches_up = catches_up;
        if r.announced_sn.is_some() {
            self.announce_reader(now, reader);
        }
    }

    /// Scopes held reader `reader` to the writers of participant `scope` (an embedded
    /// service keeping its own participant's writers; `None`: every writer). Its announcement
    /// names the scope ([`SCOPED_SERVICE_READER_NAME`], `:` and the participant's GUID prefix
    /// in hexadecimal), so Halyard writers of other participants do not match it, and it
    /// matches no Halyard writer of another participant either: they spare sending it every
    /// sample the service would not keep. Writers of other vendors know nothing of it and
    /// still match; the reader takes their samples as before. Call it before the reader is
    /// enabled (matching is not undone); it implies [`Participant::set_reader_catches_up`]
    /// `false`.
    pub fn set_reader_scope(&mut self, now: Instant, reader: EntityId, scope: Option<GuidPrefix>) {
        let Some(r) = self.readers.get_mut(&reader) else {
            return;
        };
        if r.scope == scope {
            return;
        }
        r.scope = scope;
        if scope.is_some() {
            r.catches_up = false;
        }
        if r.announced_sn.is_some() {
            self.announce_reader(now, reader);
        }
    }

    /// Releases the acknowledgment of every change of `writer` delivered to `reader` up to
    /// and including `sn` (the service stored them), and acknowledges at once what that
    /// frees. Changes delivered later stay held.
    pub fn release_acknowledgments(
        &mut self,
        now: Instant,
        reader: EntityId,
        writer: Guid,
        sn: SequenceNumber,
    ) {
        let Some(p) = self
            .readers
            .get_mut(&reader)
            .and_then(|r| r.proxies.get_mut(&writer))
        else {
            return;
        };
        let Some(q) = p.unreleased.as_mut() else {
            return;
        };
        let before = q.len();
        while q.front().is_some_and(|&f| f <= sn) {
            q.pop_front();
        }
        if q.len() != before {
            self.send_acknack(now, reader, writer);
        }
    }

    /// Lets relay `writer` not be written what its service stores, for now: true if so (it
    /// was already, or it has no reader that catches up from relays, which needs every
    /// change as it is stored). Its history then stays with the driver, and a reader that
    /// matches meanwhile waits: [`crate::Event::RelayHistoryWanted`] asks the driver to write
    /// that history, then to call [`Participant::complete_relay_history`]. False for a
    /// writer that is not a relay releasing its payloads ([`Participant::write_released`]
    /// is how the history is written back).
    pub fn defer_relay_history(&mut self, writer: EntityId) -> bool {
        let Some(w) = self.writers.get_mut(&writer) else {
            return false;
        };
        if !w.relay || !w.releases_payloads() {
            return false;
        }
        if !w.history_deferred {
            w.history_deferred = !w.proxies.values().any(|p| p.catches_up);
        }
        w.history_deferred
    }

    /// Ends the deferral of relay `writer` (its driver wrote the history it held back) and
    /// matches the readers that waited for it: each gets the whole history.
    pub fn complete_relay_history(&mut self, now: Instant, writer: EntityId) {
        let Some(w) = self.writers.get_mut(&writer) else {
            return;
        };
        w.history_deferred = false;
        for reader in std::mem::take(&mut w.waiting_readers) {
            self.match_remote_reader(now, writer, reader);
        }
    }

    /// Remote reader `reader` matches relay `writer`, whose history is deferred: it waits,
    /// and the driver is asked for the history (once per deferral).
    pub(crate) fn wait_for_relay_history(&mut self, writer: EntityId, reader: Guid) {
        let Some(w) = self.writers.get_mut(&writer) else {
            return;
        };
        if w.waiting_readers.contains(&reader) {
            return;
        }
        w.waiting_readers.push(reader);
        if w.waiting_readers.len() == 1 {
            w.history_wanted_at = None;
            self.push_event(crate::Event::RelayHistoryWanted { writer });
        }
    }

    /// Reports [`crate::Event::RelayHistoryWanted`] again for relays whose readers still
    /// wait [`HISTORY_WANTED_AGAIN`] after it was last reported (a report the driver missed,
    /// say: the event queue was full): called on timeouts.
    pub(crate) fn remind_relay_history(&mut self, now: Instant) {
        let mut due = Vec::new();
        for &id in &self.releasing {
            let Some(w) = self.writers.get_mut(&id) else {
                continue;
            };
            if w.waiting_readers.is_empty() {
                continue;
            }
            match w.history_wanted_at {
                None => w.history_wanted_at = Some(now),
                Some(at) if now >= at + HISTORY_WANTED_AGAIN => {
                    w.history_wanted_at = Some(now);
                    due.push(id);
                }
                Some(_) => {}
            }
        }
        for writer in due {
            self.push_event(crate::Event::RelayHistoryWanted { writer });
        }
    }

    /// Remote reader `reader` is gone: it waits for no relay's history any more.
    pub(crate) fn forget_waiting_reader(&mut self, reader: Guid) {
        for &id in &self.releasing {
            if let Some(w) = self.writers.get_mut(&id) {
                w.waiting_readers.retain(|&r| r != reader);
            }
        }
    }

    /// Drops every change of instance `key` that relay `writer` holds (a durability service
    /// purging an instance after its SERVICE_CLEANUP_DELAY); returns how many there were.
    pub fn remove_instance(&mut self, writer: EntityId, key: &[u8; 16]) -> usize {
        self.writers
            .get_mut(&writer)
            .map_or(0, |w| w.remove_instance(key))
    }

    /// Drops the change of relay `writer` written with locator `stored_at` for instance
    /// `key` ([`Participant::write_stored`], [`Participant::write_released`]): its service's
    /// store removed that sample (a KEEP_LAST eviction, a state change a later one made
    /// obsolete), and readers that ask for it now get a GAP. A relay evicts nothing itself:
    /// its history is what its store keeps. False if the relay did not hold it.
    pub fn remove_stored(&mut self, writer: EntityId, key: &[u8; 16], stored_at: u64) -> bool {
        self.writers
            .get_mut(&writer)
            .is_some_and(|w| w.remove_stored(key, stored_at))
    }

    /// Makes local writer `writer` a relay (see the module and `Writer::set_relay`). Unknown
    /// writers are ignored.
    /// A relay announces itself as one ([`RELAY_WRITER_NAME`]); set this before enabling it.
    pub fn set_writer_relay(&mut self, writer: EntityId) {
        if let Some(w) = self.writers.get_mut(&writer) {
            w.set_relay();
        }
    }

    /// Makes relay `writer` hold only the metadata of the changes written with a locator
    /// ([`Participant::write_stored`], [`Participant::write_released`]) once every reliable
    /// reader acknowledged them, and ask for their bytes back ([`Event::PayloadsWanted`])
    /// when a reader wants one: a service's relay then keeps its history's metadata in
    /// memory, its store the bytes. Unknown writers are ignored.
    ///
    /// [`Event::PayloadsWanted`]: crate::Event::PayloadsWanted
    pub fn set_relay_releases_payloads(&mut self, writer: EntityId) {
        if let Some(w) = self.writers.get_mut(&writer) {
            w.set_releases_payloads();
            if !self.releasing.contains(&writer) {
                self.releasing.push(writer);
            }
        }
    }

    /// [`Participant::write`] of a change whose bytes the driver also keeps, at `stored_at`
    /// (a store row, say): a relay that releases payloads drops them from memory once its
    /// readers acknowledged the change, and asks for them by that locator.
    pub fn write_stored(
        &mut self,
        now: Instant,
        writer: EntityId,
        change: NewChange,
        stored_at: u64,
    ) -> Result<SequenceNumber, WriteError> {
        let sn = self.write(now, writer, change)?;
        if let Some(w) = self.writers.get_mut(&writer) {
            w.set_stored_at(sn, stored_at);
        }
        Ok(sn)
    }

    /// Adds to relay `writer` (which releases payloads) a change whose `len` bytes the
    /// driver keeps at `stored_at`, without them: `change.payload` is ignored, and readers
    /// get the bytes when they ask (a stored history loaded at start costs no memory for
    /// its bytes). Nothing is sent at once. `Err(UnknownWriter)` for a writer that does not
    /// release payloads.
    pub fn write_released(
        &mut self,
        now: Instant,
        writer: EntityId,
        change: NewChange,
        stored_at: u64,
        len: usize,
    ) -> Result<SequenceNumber, WriteError> {
        let cfg = &self.cfg;
        self.writers
            .get_mut(&writer)
            .ok_or(WriteError::UnknownWriter)?
            .write_released(now, cfg, change, stored_at, len)
    }

    /// Up to `max` of relay `writer`'s released changes that readers asked for, lowest
    /// first, with their locators: read their bytes and give them to
    /// [`Participant::restore_payloads`].
    pub fn take_wanted_payloads(
        &mut self,
        writer: EntityId,
        max: usize,
    ) -> Vec<(SequenceNumber, u64)> {
        self.writers
            .get_mut(&writer)
            .map_or_else(Vec::new, |w| w.take_wanted(max))
    }

    /// Gives relay `writer` back the payloads taken with
    /// [`Participant::take_wanted_payloads`] (`None`: no longer kept; the change is dropped
    /// and readers that asked for it get a GAP), and serves the readers waiting for them.
    pub fn restore_payloads(
        &mut self,
        now: Instant,
        writer: EntityId,
        payloads: Vec<(SequenceNumber, Option<Arc<Vec<u8>>>)>,
    ) {
        let Some(w) = self.writers.get_mut(&writer) else {
            return;
        };
        w.restore(now, &mut self.out, &self.cfg, payloads);
    }

    /// The relays that release their payloads ([`Participant::set_relay_releases_payloads`]).
    pub fn releasing_relays(&self) -> &[EntityId] {
        &self.releasing
    }

    /// The driver could not read the payloads of `sns` of relay `writer` now (taken with
    /// [`Participant::take_wanted_payloads`]): they stay wanted, and
    /// [`crate::Event::PayloadsWanted`] is reported again after the next datagram or
    /// timeout, so the readers waiting for them are not sent a GAP.
    pub fn payloads_unavailable(&mut self, writer: EntityId, sns: &[SequenceNumber]) {
        if let Some(w) = self.writers.get_mut(&writer) {
            w.fetch_failed(sns);
        }
    }

    /// Reports [`crate::Event::PayloadsWanted`] for each releasing relay that has wanted
    /// payloads since it last did.
    pub(crate) fn notice_wanted_payloads(&mut self) {
        for i in 0..self.releasing.len() {
            let id = self.releasing[i];
            if self
                .writers
                .get_mut(&id)
                .is_some_and(|w| w.take_fetch_notice())
            {
                self.push_event(crate::Event::PayloadsWanted { writer: id });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use halyard_wire::GuidPrefix;

    fn w(n: u8) -> Guid {
        Guid::new(GuidPrefix([n; 12]), EntityId([0, 0, 1, 2]))
    }

    #[test]
    fn a_contiguous_stream_is_one_range_and_copies_are_refused() {
        let mut s = SeenSamples::default();
        for sn in 1..=1000 {
            assert!(s.first_time(w(1), SequenceNumber(sn)));
        }
        assert_eq!(s.writers[&w(1)], vec![(1, 1000)]);
        for sn in [1, 500, 1000] {
            assert!(!s.first_time(w(1), SequenceNumber(sn)), "{sn} is a copy");
        }
        assert!(
            s.first_time(w(2), SequenceNumber(5)),
            "another writer's 5 is new"
        );
    }

    #[test]
    fn holes_fill_in_any_order_and_merge() {
        let mut ranges = Vec::new();
        for sn in [5, 1, 3, 2, 10, 4, 9] {
            assert!(insert(&mut ranges, sn));
        }
        assert_eq!(ranges, vec![(1, 5), (9, 10)]);
        assert!(!insert(&mut ranges, 3));
        assert!(!insert(&mut ranges, 9));
        assert!(insert(&mut ranges, 8));
        assert!(insert(&mut ranges, 6));
        assert!(insert(&mut ranges, 7));
        assert_eq!(ranges, vec![(1, 10)]);
    }

    #[test]
    fn ranges_and_writers_stay_bounded() {
        let mut ranges = Vec::new();
        for i in 0..1000 {
            insert(&mut ranges, i * 3);
        }
        assert_eq!(ranges.len(), MAX_RANGES_PER_WRITER);
        let mut s = SeenSamples::default();
        for i in 0..(MAX_WRITERS_REMEMBERED as u32 + 10) {
            let g = Guid::new(GuidPrefix([0; 12]), EntityId(i.to_be_bytes()));
            s.first_time(g, SequenceNumber(1));
        }
        assert_eq!(s.writers.len(), MAX_WRITERS_REMEMBERED);
    }
}
