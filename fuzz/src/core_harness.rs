//! The `core_datagram` harness: one `halyard_core::Participant` (domain 0, fixed GUID prefix,
//! fake locators) with a reliable reader and a reliable writer (holding a small and a
//! fragmented sample), fed the fuzz input as a sequence of datagrams with timeouts between.
//!
//! Input format (see [`split`]): byte 0 = number of split points k (mod 32); then k split
//! offsets (u16 LE each); then one byte time step (x 10 ms, between datagrams); the rest is the
//! datagram bytes, cut at the split offsets (taken modulo the remaining length and sorted).

use halyard_core::wire::qos::{EndpointQos, History, ReliabilityKind};
use halyard_core::wire::{GuidPrefix, Locator};
use halyard_core::{ChangeKind, Instant, NewChange, Participant, ParticipantConfig, ReaderSpec, WriterSpec};
use std::sync::Arc;

/// Our GUID prefix: the INFO_DST destination of the Cyclone captures, so that their
/// directed submessages reach us.
pub const PREFIX: [u8; 12] = [0x01, 0x10, 0xac, 0x02, 0x28, 0x89, 0x21, 0x9f, 0x9c, 0xc0, 0x44, 0x12];
/// Reader topic: the ddsperf reliable data topic (Cyclone publishes it in the captures).
pub const READER_TOPIC: &str = "DDSPerfRDataKS";
/// Writer topic: ddsperf ping (Cyclone subscribes to it in the captures).
pub const WRITER_TOPIC: &str = "DDSPerfRPingKS";
/// Type of both.
pub const TYPE_NAME: &str = "KeyedSeq";
/// At most this many datagrams per input.
pub const MAX_DATAGRAMS: usize = 32;

/// Milliseconds to nanoseconds.
pub const MS: u64 = 1_000_000;

/// The configuration of the fuzzed participant (also used by the seed generator).
pub fn config() -> ParticipantConfig {
    let mut cfg = ParticipantConfig::new(0, GuidPrefix(PREFIX));
    let mc = Locator::udpv4([239, 255, 0, 1], 7400);
    cfg.metatraffic_unicast = vec![Locator::udpv4([127, 0, 0, 1], 7410)];
    cfg.default_unicast = vec![Locator::udpv4([127, 0, 0, 1], 7411)];
    cfg.metatraffic_multicast = vec![mc];
    cfg.default_multicast = vec![Locator::udpv4([239, 255, 0, 1], 7401)];
    cfg.spdp_destinations = vec![mc];
    // Small fragments so that a modest sample of our writer is fragmented.
    cfg.fragment_size = 1_000;
    cfg.max_message_size = 1_400;
    cfg
}

fn reliable(mut q: EndpointQos) -> EndpointQos {
    q.reliability.kind = ReliabilityKind::Reliable;
    q.history = History::KeepAll;
    q
}

/// The reader and writer specs (reliable, KEEP_ALL, keyed).
pub fn specs() -> (ReaderSpec, WriterSpec) {
    (
        ReaderSpec {
            topic_name: READER_TOPIC.into(),
            type_name: TYPE_NAME.into(),
            qos: reliable(EndpointQos::reader_default()),
            has_key: true,
        },
        WriterSpec {
            topic_name: WRITER_TOPIC.into(),
            type_name: TYPE_NAME.into(),
            qos: reliable(EndpointQos::writer_default()),
            has_key: true,
        },
    )
}

/// A KeyedSeq sample (CDR_LE) with `baggage` bytes of baggage.
pub fn keyed_seq(seq: u32, keyval: u32, baggage: usize) -> Vec<u8> {
    let mut v = vec![0, 1, 0, 0];
    v.extend_from_slice(&seq.to_le_bytes());
    v.extend_from_slice(&keyval.to_le_bytes());
    v.extend_from_slice(&(baggage as u32).to_le_bytes());
    v.extend((0..baggage).map(|i| i as u8));
    while v.len() % 4 != 0 {
        v.push(0);
    }
    v
}

/// Builds the participant with its reader and writer, the writer holding two samples.
pub fn participant(now: Instant) -> Participant {
    let mut p = Participant::new(config(), now);
    let (rs, ws) = specs();
    p.create_reader(now, rs);
    let w = p.create_writer(now, ws);
    for (i, len) in [(1u32, 16usize), (2, 3_000)] {
        let mut kh = [0u8; 16];
        kh[..4].copy_from_slice(&i.to_be_bytes());
        let change = NewChange {
            kind: ChangeKind::Alive,
            key_hash: kh,
            payload: Arc::new(keyed_seq(i, i, len)),
            timestamp: None,
            original: None,
        };
        let _ = p.write(now, w, change);
    }
    drain(&mut p);
    p
}

/// Polls every output out of the participant.
pub fn drain(p: &mut Participant) {
    while let Some(t) = p.poll_transmit() {
        p.recycle(t.payload);
    }
    while p.poll_event().is_some() {}
    while p.poll_sample().is_some() {}
}

/// Splits the input into (time step in ns, datagrams).
pub fn split(data: &[u8]) -> (u64, Vec<&[u8]>) {
    let Some((&k, rest)) = data.split_first() else {
        return (0, Vec::new());
    };
    let k = (k as usize) % MAX_DATAGRAMS;
    let Some(offsets) = rest.get(..2 * k) else {
        return (0, Vec::new());
    };
    let Some((&step, body)) = rest[2 * k..].split_first() else {
        return (0, Vec::new());
    };
    let mut cuts: Vec<usize> = offsets
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]) as usize % (body.len() + 1))
        .collect();
    cuts.sort_unstable();
    let mut out = Vec::with_capacity(k + 1);
    let mut start = 0;
    for c in cuts.into_iter().chain(std::iter::once(body.len())) {
        out.push(&body[start..c]);
        start = c;
    }
    (step as u64 * 10 * MS, out)
}

/// The inverse of [`split`] for seed generation: datagrams (at most 32) and a time step byte.
pub fn join(datagrams: &[Vec<u8>], step: u8) -> Vec<u8> {
    assert!(!datagrams.is_empty() && datagrams.len() <= MAX_DATAGRAMS);
    let total: usize = datagrams.iter().map(Vec::len).sum();
    assert!(total < 65_536, "seed too large for u16 split offsets");
    let mut out = vec![(datagrams.len() - 1) as u8];
    let mut at = 0usize;
    for d in &datagrams[..datagrams.len() - 1] {
        at += d.len();
        out.extend_from_slice(&(at as u16).to_le_bytes());
    }
    out.push(step);
    for d in datagrams {
        out.extend_from_slice(d);
    }
    out
}

/// The fuzz entry: never panics, whatever the datagrams.
pub fn run(data: &[u8]) {
    let (step, datagrams) = split(data);
    let mut now = Instant::from_nanos(1_000 * MS);
    let mut p = participant(now);
    for d in datagrams {
        p.handle_datagram(now, d);
        drain(&mut p);
        now = Instant::from_nanos(now.as_nanos() + step);
        p.handle_timeout(now);
        drain(&mut p);
    }
    // Let timers run: heartbeats, acknowledgments, NACK responses, then lease expiry.
    for dt in [1, 100, 1_000, 30_000] {
        now = Instant::from_nanos(now.as_nanos() + dt * MS);
        p.handle_timeout(now);
        drain(&mut p);
    }
    let _ = p.stats();
    let _ = p.poll_timeout();
}
