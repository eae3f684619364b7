//! DATA from a writer that discovery has not announced yet, or has just forgotten.
//!
//! The two directions of SEDP are independent: a remote writer that has discovered one of our
//! readers sends it DATA at once, while our side may not have received that writer's own
//! announcement yet. A reliable reader loses nothing by dropping such DATA (once matched, the
//! writer's HEARTBEATs make it ask again), but a best-effort reader would lose the first
//! samples a writer writes as soon as it matched: "start the subscriber, then publish, see
//! nothing" — every DDS has this race, and it is most of what a new user meets first.
//!
//! Early DATA. A DATA from a user writer we know nothing of (no SEDP announcement, not one of
//! ours) is parked ([`EarlyData`]), bounded in samples, bytes and age. When that writer is
//! later matched with a best-effort reader, the parked samples go to that reader, in
//! sequence-number order, through the ordinary delivery path: matching has judged the QoS,
//! partitions and type by then, so nothing is delivered that an instant discovery would not
//! have delivered. A sample only goes to a reader that existed when it arrived (entity keys
//! are allocated in increasing order, so the key bound recorded at arrival tells), and only
//! to the reader it was addressed to when it named one. Parked samples are never removed on
//! delivery (another reader may match the same writer a moment later); they leave by age or
//! when the bounds need room, oldest first. DATA_FRAG is not parked: a large sample's
//! fragments are repaired or, best effort, lost as before.
//!
//! Late DATA. Discovery and data come in on different sockets, handled by different receive
//! threads: a writer that writes and leaves at once (a tool that publishes and exits) can
//! have its goodbye (SEDP and SPDP disposals) handled before its last samples, when the
//! thread of the data socket is starved for a moment. So the proxies of a writer that is
//! forgotten are kept a while ([`Draining`], [`DRAIN_PERIOD`], bounded in writers), with its
//! liveliness lease cleared, and DATA from it that arrives meanwhile is delivered through
//! them, to the readers it was matched with, in order, once.
//!
//! Secure participants do neither: such a submessage would skip the checks the security
//! plugin makes on submessages of endpoints it knows (and a peer it no longer admits must not
//! be heard).

use crate::reader::{InlineQos, WriterProxy};
use crate::time::Instant;
use halyard_wire::{EntityId, Guid, SequenceNumber, Time};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

/// Most samples parked at once.
pub const MAX_PARKED_SAMPLES: usize = 1024;
/// Most payload bytes parked at once.
pub const MAX_PARKED_BYTES: usize = 4 << 20;
/// How long a parked sample waits for its writer's discovery.
pub const PARKED_SAMPLE_LIFETIME: Duration = Duration::from_secs(2);

/// The parts of a received DATA submessage that delivery needs.
#[derive(Clone, Debug)]
pub(crate) struct DataParts<'a> {
    /// The reader it was addressed to (`EntityId::UNKNOWN`: every matched reader).
    pub(crate) reader_id: EntityId,
    pub(crate) sn: SequenceNumber,
    pub(crate) key_flag: bool,
    pub(crate) inline: InlineQos,
    /// The serialized payload as received (`None`: the DATA had none).
    pub(crate) payload: Option<&'a [u8]>,
    /// The message's INFO_TS, if any.
    pub(crate) timestamp: Option<Time>,
    /// A GROUP set end's member writers, as a Halyard writer names them.
    pub(crate) members: Option<Arc<[EntityId]>>,
}

/// One DATA submessage received before its writer was discovered, owned.
#[derive(Clone, Debug)]
pub(crate) struct ParkedData {
    writer: Guid,
    reader_id: EntityId,
    sn: SequenceNumber,
    key_flag: bool,
    inline: InlineQos,
    payload: Option<Vec<u8>>,
    timestamp: Option<Time>,
    members: Option<Arc<[EntityId]>>,
    arrived: Instant,
    /// Local readers whose entity key is below this existed when it arrived.
    readers_below: u32,
}

impl ParkedData {
    /// A parked copy of DATA `d` of `writer` that arrived at `arrived`, when local entity keys
    /// below `readers_below` were in use.
    pub(crate) fn new(
        writer: Guid,
        d: &DataParts<'_>,
        arrived: Instant,
        readers_below: u32,
    ) -> Self {
        ParkedData {
            writer,
            reader_id: d.reader_id,
            sn: d.sn,
            key_flag: d.key_flag,
            inline: d.inline,
            payload: d.payload.map(<[u8]>::to_vec),
            timestamp: d.timestamp,
            members: d.members.clone(),
            arrived,
            readers_below,
        }
    }

    /// The DATA as delivery takes it.
    pub(crate) fn parts(&self) -> DataParts<'_> {
        DataParts {
            reader_id: self.reader_id,
            sn: self.sn,
            key_flag: self.key_flag,
            inline: self.inline,
            payload: self.payload.as_deref(),
            timestamp: self.timestamp,
            members: self.members.clone(),
        }
    }

    fn bytes(&self) -> usize {
        self.payload.as_ref().map_or(0, Vec::len)
    }
}

/// The parked samples, oldest first.
#[derive(Debug, Default)]
pub(crate) struct EarlyData {
    parked: VecDeque<ParkedData>,
    bytes: usize,
    /// Samples parked since the participant started.
    parked_total: u64,
    /// Parked samples that left unused (aged out, or pushed out by the bounds).
    expired_total: u64,
}

impl EarlyData {
    /// Parks `d`, making room by dropping the oldest samples (and any older than their
    /// lifetime). A payload larger than the whole byte bound is not parked.
    pub(crate) fn park(&mut self, now: Instant, d: ParkedData) {
        let len = d.bytes();
        if len > MAX_PARKED_BYTES {
            self.expired_total += 1;
            return;
        }
        self.expire(now);
        while self.parked.len() >= MAX_PARKED_SAMPLES || self.bytes + len > MAX_PARKED_BYTES {
            if !self.drop_oldest() {
                break;
            }
        }
        self.bytes += len;
        self.parked.push_back(d);
        self.parked_total += 1;
        debug_assert!(self.parked.len() <= MAX_PARKED_SAMPLES && self.bytes <= MAX_PARKED_BYTES);
        debug_assert_eq!(
            self.bytes,
            self.parked.iter().map(ParkedData::bytes).sum::<usize>()
        );
    }

    /// The samples of `writer` that local reader `reader` may be given, in sequence-number
    /// order (copies: the parked ones stay for other readers).
    pub(crate) fn for_reader(
        &mut self,
        now: Instant,
        writer: &Guid,
        reader: EntityId,
    ) -> Vec<ParkedData> {
        self.expire(now);
        let reader_key = entity_key(reader);
        let mut out: Vec<ParkedData> = self
            .parked
            .iter()
            .filter(|d| {
                d.writer == *writer
                    && reader_key < d.readers_below
                    && (d.reader_id == EntityId::UNKNOWN || d.reader_id == reader)
            })
            .cloned()
            .collect();
        out.sort_by_key(|d| d.sn);
        out.dedup_by_key(|d| d.sn);
        out
    }

    /// Drops every parked sample of `writer` (its announcement arrived and it matched no
    /// reader that could use them, or it is gone).
    pub(crate) fn forget(&mut self, writer: &Guid) {
        let before = self.parked.len();
        let mut bytes = 0;
        self.parked.retain(|d| {
            let keep = d.writer != *writer;
            if !keep {
                bytes += d.bytes();
            }
            keep
        });
        self.bytes -= bytes;
        self.expired_total += (before - self.parked.len()) as u64;
    }

    /// Samples parked so far, and those that left unused.
    pub(crate) fn totals(&self) -> (u64, u64) {
        (self.parked_total, self.expired_total)
    }

    fn expire(&mut self, now: Instant) {
        while self
            .parked
            .front()
            .is_some_and(|d| now.saturating_duration_since(d.arrived) > PARKED_SAMPLE_LIFETIME)
        {
            self.drop_oldest();
        }
    }

    fn drop_oldest(&mut self) -> bool {
        let Some(d) = self.parked.pop_front() else {
            return false;
        };
        self.bytes -= d.bytes();
        self.expired_total += 1;
        true
    }
}

/// How long the proxies of a forgotten writer still take its DATA.
pub const DRAIN_PERIOD: Duration = Duration::from_secs(2);
/// Most forgotten writers whose proxies are kept.
pub const MAX_DRAINING_WRITERS: usize = 256;

/// The proxies of writers forgotten a moment ago, by writer: since when (stamped with the
/// first time seen after it was forgotten: the code that forgets a writer has no clock), and
/// each local reader it was matched with, with that reader's proxy of it.
#[derive(Default)]
pub(crate) struct Draining {
    writers: BTreeMap<Guid, Drained>,
}

/// One forgotten writer's proxies.
pub(crate) struct Drained {
    since: Option<Instant>,
    /// Each local reader it was matched with, and that reader's proxy of it.
    pub(crate) proxies: Vec<(EntityId, WriterProxy)>,
}

impl Draining {
    /// Keeps `proxy`, reader `reader`'s proxy of `writer`, which was just forgotten.
    pub(crate) fn keep(&mut self, writer: Guid, reader: EntityId, mut proxy: WriterProxy) {
        if !self.writers.contains_key(&writer) && self.writers.len() >= MAX_DRAINING_WRITERS {
            // The oldest goes (one not stamped yet is the newest).
            let oldest = self
                .writers
                .iter()
                .filter_map(|(g, d)| d.since.map(|t| (t, *g)))
                .min()
                .map(|(_, g)| g);
            if let Some(g) = oldest.or_else(|| self.writers.keys().next().copied()) {
                self.writers.remove(&g);
            }
        }
        // Forgotten: nothing it sends may revive it.
        proxy.lease = None;
        let entry = self.writers.entry(writer).or_insert_with(|| Drained {
            since: None,
            proxies: Vec::new(),
        });
        entry.proxies.retain(|(r, _)| *r != reader);
        entry.proxies.push((reader, proxy));
        debug_assert!(self.writers.len() <= MAX_DRAINING_WRITERS);
    }

    /// Takes the proxies of `writer`, if it was forgotten less than [`DRAIN_PERIOD`] ago
    /// (give them back with [`Draining::put_back`]).
    pub(crate) fn take(&mut self, now: Instant, writer: &Guid) -> Option<Drained> {
        self.expire(now);
        self.writers.remove(writer)
    }

    /// Gives back what [`Draining::take`] took (with the readers still there).
    pub(crate) fn put_back(&mut self, writer: Guid, d: Drained) {
        if !d.proxies.is_empty() {
            self.writers.insert(writer, d);
        }
    }

    /// `writer` is discovered again: its old proxies go.
    pub(crate) fn forget(&mut self, writer: &Guid) {
        self.writers.remove(writer);
    }

    /// Stamps what was kept since the last call, and drops what is older than
    /// [`DRAIN_PERIOD`].
    pub(crate) fn expire(&mut self, now: Instant) {
        self.writers.retain(|_, d| {
            let since = *d.since.get_or_insert(now);
            now.saturating_duration_since(since) <= DRAIN_PERIOD
        });
    }

    /// True when nothing is kept.
    pub(crate) fn is_empty(&self) -> bool {
        self.writers.is_empty()
    }
}

/// The 24-bit key of a local entity id (allocated in increasing order).
pub(crate) fn entity_key(e: EntityId) -> u32 {
    u32::from_be_bytes([0, e.0[0], e.0[1], e.0[2]])
}

#[cfg(test)]
mod tests {
    use super::*;
    use halyard_wire::GuidPrefix;

    fn data(writer: u8, sn: i64, len: usize, at_ms: u64, readers_below: u32) -> ParkedData {
        let payload = vec![0u8; len];
        let parts = DataParts {
            reader_id: EntityId::UNKNOWN,
            sn: SequenceNumber(sn),
            key_flag: false,
            inline: InlineQos::default(),
            payload: Some(&payload),
            timestamp: None,
            members: None,
        };
        let writer = Guid::new(GuidPrefix([writer; 12]), EntityId::new(1, 2));
        ParkedData::new(writer, &parts, at(at_ms), readers_below)
    }

    fn at(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    #[test]
    fn a_reader_gets_its_writers_samples_in_order_once_and_only_if_it_existed() {
        let mut e = EarlyData::default();
        e.park(at(0), data(1, 2, 10, 0, 5));
        e.park(at(1), data(1, 1, 10, 1, 5));
        e.park(at(1), data(1, 1, 10, 1, 5)); // a duplicate datagram
        e.park(at(2), data(2, 1, 10, 2, 5));
        let w = data(1, 0, 0, 0, 0).writer;
        let got = e.for_reader(at(3), &w, EntityId::new(4, 7));
        assert_eq!(
            got.iter().map(|d| d.sn.0).collect::<Vec<_>>(),
            [1, 2],
            "ordered, deduplicated, this writer's only"
        );
        // A reader created after the samples arrived gets none of them.
        assert!(e.for_reader(at(3), &w, EntityId::new(5, 7)).is_empty());
        // They stay for another reader until they expire.
        assert_eq!(e.for_reader(at(4), &w, EntityId::new(3, 7)).len(), 2);
        assert!(e.for_reader(at(2_100), &w, EntityId::new(3, 7)).is_empty());
        assert_eq!(e.totals(), (4, 4));
    }

    #[test]
    fn the_bounds_push_out_the_oldest_and_forget_frees_bytes() {
        let mut e = EarlyData::default();
        for sn in 1..=(MAX_PARKED_SAMPLES as i64 + 10) {
            e.park(at(0), data(1, sn, 8, 0, 9));
        }
        assert_eq!(e.parked.len(), MAX_PARKED_SAMPLES);
        assert_eq!(e.parked.front().map(|d| d.sn.0), Some(11));
        let big = MAX_PARKED_BYTES / 2 + 1;
        e.park(at(0), data(2, 1, big, 0, 9));
        e.park(at(0), data(2, 2, big, 0, 9));
        assert!(e.bytes <= MAX_PARKED_BYTES);
        assert_eq!(
            e.parked.len(),
            1,
            "the second half-bound sample pushed out all else"
        );
        e.park(at(0), data(3, 1, MAX_PARKED_BYTES + 1, 0, 9));
        assert_eq!(
            e.parked.len(),
            1,
            "a sample larger than the bound is not parked"
        );
        let w2 = data(2, 0, 0, 0, 0).writer;
        e.forget(&w2);
        assert_eq!((e.parked.len(), e.bytes), (0, 0));
    }

    #[test]
    fn a_sample_addressed_to_one_reader_goes_to_that_reader_only() {
        let mut e = EarlyData::default();
        let mut d = data(1, 1, 4, 0, 9);
        d.reader_id = EntityId::new(3, 7);
        let w = d.writer;
        e.park(at(0), d);
        assert!(e.for_reader(at(1), &w, EntityId::new(4, 7)).is_empty());
        assert_eq!(e.for_reader(at(1), &w, EntityId::new(3, 7)).len(), 1);
    }
}
