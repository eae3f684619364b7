//! Proves the core's side of DDS Security (`halyard_core::security`) with a stand-in plugin
//! whose "handshake" is a two-message exchange over the stateless channel: a participant is
//! matched only once its plugin admits it, the stateless channel carries messages (large ones
//! as fragments) under loss, and refused or unsecured participants never see our endpoints
//! nor we theirs.
//!
//! The stand-in is not cryptography: it checks a community name in the identity token's
//! bytes. The real PKI-DH plugin lives in crate `halyard-security`.

use crate::net::*;
use halyard_core::security::{Admission, ParticipantSecurity, Rejected, SecurityOutput};
use halyard_core::wire::discovery::{EncodedToken, ParticipantData};
use halyard_core::wire::{EntityId, GuidPrefix, Message, Submessage};
use halyard_core::{Event, Instant};
use std::collections::BTreeMap;
use std::time::Duration;

/// Size of the stand-in's hello: larger than a datagram, so it travels as DATA_FRAGs.
const HELLO_LEN: usize = 5000;
const RESEND: Duration = Duration::from_millis(300);

struct StandIn {
    /// Whether it protects submessages of SEDP and user endpoints (with the stand-in cipher).
    protect: bool,
    /// Whether it encodes the payloads of user writers (data protection).
    payload: bool,
    community: Vec<u8>,
    local: GuidPrefix,
    /// Peers we said hello to and await the answer of, with the next resend time.
    waiting: BTreeMap<GuidPrefix, Instant>,
    admitted: Vec<GuidPrefix>,
}

impl StandIn {
    fn new(community: &str, local: GuidPrefix) -> Box<StandIn> {
        Box::new(StandIn {
            protect: false,
            payload: false,
            community: community.as_bytes().to_vec(),
            local,
            waiting: BTreeMap::new(),
            admitted: Vec::new(),
        })
    }
    fn hello(&self) -> Vec<u8> {
        let mut m = vec![0, 1, 0, 0, b'H'];
        m.extend_from_slice(&self.community);
        m.resize(HELLO_LEN, 0xab);
        m
    }
    fn admit(&mut self, p: GuidPrefix, out: &mut SecurityOutput) {
        self.waiting.remove(&p);
        if !self.admitted.contains(&p) {
            self.admitted.push(p);
            out.admissions.push((p, Admission::Admitted));
        }
    }
}

impl ParticipantSecurity for StandIn {
    fn announce(&self, data: &mut ParticipantData) {
        data.identity_token = Some(EncodedToken {
            little_endian: true,
            cdr: self.community.clone(),
        });
    }
    fn discovered(
        &mut self,
        now: Instant,
        remote: &ParticipantData,
        out: &mut SecurityOutput,
    ) -> Admission {
        let p = remote.guid.prefix;
        // An admitted participant stays admitted when it announces itself again (as the real
        // plugin does): a damaged announcement must not undo an authentication.
        if self.admitted.contains(&p) {
            return Admission::Admitted;
        }
        match &remote.identity_token {
            None => return Admission::Refused("no identity token".into()),
            Some(t) if t.cdr != self.community => {
                return Admission::Refused("not of our community".into())
            }
            Some(_) => {}
        }
        // The participant with the smaller prefix begins.
        if self.local < p && !self.waiting.contains_key(&p) {
            out.stateless.push((p, self.hello()));
            self.waiting.insert(p, now + RESEND);
        }
        Admission::Pending
    }
    fn stateless_message(
        &mut self,
        _now: Instant,
        source: GuidPrefix,
        payload: &[u8],
        out: &mut SecurityOutput,
    ) {
        match payload.get(4) {
            Some(b'H')
                if payload.len() == HELLO_LEN && payload[5..].starts_with(&self.community) =>
            {
                out.stateless.push((source, vec![0, 1, 0, 0, b'A']));
                self.admit(source, out);
            }
            Some(b'H') => out
                .admissions
                .push((source, Admission::Refused("bad hello".into()))),
            Some(b'A') if self.waiting.contains_key(&source) => self.admit(source, out),
            _ => {}
        }
    }
    fn handle_timeout(&mut self, now: Instant, out: &mut SecurityOutput) {
        let hello = self.hello();
        for (p, t) in self.waiting.iter_mut() {
            if *t <= now {
                out.stateless.push((*p, hello.clone()));
                *t = now + RESEND;
            }
        }
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.waiting.values().min().copied()
    }
    fn forget(&mut self, remote: GuidPrefix) {
        self.waiting.remove(&remote);
        self.admitted.retain(|p| *p != remote);
    }
    fn protect_submessage(
        &mut self,
        local: EntityId,
        _destination: Option<GuidPrefix>,
        plain: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool, Rejected> {
        if !self.protect || !protected_entity(local) {
            return Ok(false);
        }
        stand_in_seal(&self.community, plain, out);
        Ok(true)
    }
    fn unprotect_submessage(
        &mut self,
        _source: GuidPrefix,
        bytes: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<usize, Rejected> {
        stand_in_open(&self.community, bytes, out)
    }
    fn protects_payload(&self, local: EntityId) -> bool {
        self.payload && !local.is_builtin()
    }
    fn encode_payload(
        &mut self,
        local: EntityId,
        plain: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool, Rejected> {
        if !self.protects_payload(local) {
            return Ok(false);
        }
        // Not padded to four octets: the core pads the submessage.
        out.extend_from_slice(PAYLOAD_MAGIC);
        out.extend_from_slice(&(plain.len() as u32).to_le_bytes());
        out.extend(plain.iter().map(|b| b ^ 0xa5));
        out.extend_from_slice(&checksum(plain).to_le_bytes());
        Ok(true)
    }
    fn decode_payload(
        &mut self,
        writer: halyard_core::wire::Guid,
        encoded: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool, Rejected> {
        if !self.payload || writer.entity.is_builtin() {
            return Ok(false);
        }
        let bad = Rejected("stand-in: payload not encoded, or tampered");
        if encoded.get(..4) != Some(PAYLOAD_MAGIC) {
            return Err(bad);
        }
        let len = u32::from_le_bytes(encoded[4..8].try_into().map_err(|_| bad)?) as usize;
        let body = encoded.get(8..8 + len).ok_or(bad)?;
        let sum = encoded.get(8 + len..12 + len).ok_or(bad)?;
        // Only the submessage's padding may follow.
        if encoded.len() - (12 + len) > 3 {
            return Err(bad);
        }
        let base = out.len();
        out.extend(body.iter().map(|b| b ^ 0xa5));
        if sum != checksum(&out[base..]).to_le_bytes() {
            out.truncate(base);
            return Err(bad);
        }
        Ok(true)
    }
    fn accepts_plain_submessage(
        &self,
        _source: GuidPrefix,
        remote: EntityId,
        local: EntityId,
        _in_protected_message: bool,
    ) -> bool {
        !self.protect || !(protected_entity(remote) || protected_entity(local))
    }
}

/// What the stand-in's encoded payloads start with.
const PAYLOAD_MAGIC: &[u8; 4] = b"PAY!";

/// SEDP and user endpoints are protected; SPDP, the stateless channel and liveliness not
/// (nor ENTITYID_UNKNOWN, "every reader").
fn protected_entity(e: EntityId) -> bool {
    (!e.is_builtin() && e != EntityId::UNKNOWN)
        || [
            EntityId::SEDP_PUBLICATIONS_WRITER,
            EntityId::SEDP_PUBLICATIONS_READER,
            EntityId::SEDP_SUBSCRIPTIONS_WRITER,
            EntityId::SEDP_SUBSCRIPTIONS_READER,
        ]
        .contains(&e)
}

/// The stand-in cipher (not cryptography): SEC_PREFIX carrying the community's checksum,
/// SEC_BODY with the submessage XORed and its length, SEC_POSTFIX with a checksum of it.
fn stand_in_seal(community: &[u8], plain: &[u8], out: &mut Vec<u8>) {
    let body_len = (4 + plain.len()).next_multiple_of(4);
    out.extend_from_slice(&[0x31, 0x01, 4, 0]);
    out.extend_from_slice(&checksum(community).to_le_bytes());
    out.extend_from_slice(&[0x30, 0x01]);
    out.extend_from_slice(&(body_len as u16).to_le_bytes());
    out.extend_from_slice(&(plain.len() as u32).to_le_bytes());
    out.extend(plain.iter().map(|b| b ^ 0x5a));
    out.resize(out.len() + body_len - 4 - plain.len(), 0);
    out.extend_from_slice(&[0x32, 0x01, 4, 0]);
    out.extend_from_slice(&checksum(plain).to_le_bytes());
}

fn stand_in_open(community: &[u8], bytes: &[u8], out: &mut Vec<u8>) -> Result<usize, Rejected> {
    out.clear(); // the core hands in its reused buffer: replace what it holds
    let bad = Rejected("stand-in: malformed or tampered");
    let u32_at = |i: usize| -> Result<u32, Rejected> {
        Ok(u32::from_le_bytes(
            bytes
                .get(i..i + 4)
                .ok_or(bad)?
                .try_into()
                .map_err(|_| bad)?,
        ))
    };
    if bytes.get(..4) != Some(&[0x31, 0x01, 4, 0]) || u32_at(4)? != checksum(community) {
        return Err(bad);
    }
    if bytes.get(8..10) != Some(&[0x30, 0x01]) {
        return Err(bad);
    }
    let body_len = usize::from(u16::from_le_bytes([bytes[10], bytes[11]]));
    let len = u32_at(12)? as usize;
    let plain: Vec<u8> = bytes
        .get(16..16 + len)
        .ok_or(bad)?
        .iter()
        .map(|b| b ^ 0x5a)
        .collect();
    let post = 12 + body_len;
    if bytes.get(post..post + 4) != Some(&[0x32, 0x01, 4, 0])
        || u32_at(post + 4)? != checksum(&plain)
    {
        return Err(bad);
    }
    out.extend_from_slice(&plain);
    Ok(post + 8)
}

fn checksum(b: &[u8]) -> u32 {
    b.iter().fold(0x811c_9dc5u32, |h, &x| {
        (h ^ u32::from(x)).wrapping_mul(0x0100_0193)
    })
}

fn secure(net: &mut SimNet, idx: u8, community: &str) -> usize {
    let mut cfg = node_config(idx);
    // Ethernet-sized datagrams, so the hello travels as four DATA_FRAGs.
    cfg.max_message_size = 1472;
    cfg.fragment_size = 1344;
    let prefix = cfg.guid_prefix;
    net.add_secure_node(cfg, StandIn::new(community, prefix))
}

#[test]
fn admitted_participants_match_and_exchange_data_under_loss() {
    for_each_seed("security_admitted_participants_match", 50, |seed| {
        let mut net = SimNet::new(
            seed,
            Faults {
                jitter_ns: 200_000,
                ..Faults::lossy(0.2)
            },
        );
        let a = secure(&mut net, 1, "blue");
        let b = secure(&mut net, 2, "blue");
        let pb = net.p(b).guid_prefix();
        let (w, r) = square_pair(&mut net, a, b);
        let ok = net.run_until(60 * SEC, |n| {
            n.node(a).saw(|e| matches!(e, Event::PublicationMatched { writer, matched: true, .. } if *writer == w))
                && n.node(b).saw(|e| matches!(e, Event::SubscriptionMatched { reader, matched: true, .. } if *reader == r))
        });
        assert!(
            ok,
            "seed {seed:#x}: secure participants never matched; stats {:?}",
            net.stats
        );
        assert!(
            net.node(a)
                .saw(|e| matches!(e, Event::ParticipantAuthenticated(p) if *p == pb)),
            "seed {seed:#x}: matched without being authenticated"
        );
        // No endpoint was discovered before the participant was admitted.
        let admitted_at = net.node(a).events.iter().find_map(|(t, e)| {
            matches!(e, Event::ParticipantAuthenticated(p) if *p == pb).then_some(*t)
        });
        let first_endpoint = net
            .node(a)
            .events
            .iter()
            .find_map(|(t, e)| matches!(e, Event::SubscriptionDiscovered(_)).then_some(*t));
        assert!(
            first_endpoint.is_some_and(|t| Some(t) >= admitted_at),
            "seed {seed:#x}: an endpoint was discovered at {first_endpoint:?}, before admission at {admitted_at:?}"
        );
    });
}

#[test]
fn refused_and_unsecured_participants_never_match() {
    for_each_seed("security_refused_never_match", 30, |seed| {
        let mut net = SimNet::new(seed, Faults::lossy(0.1));
        let a = secure(&mut net, 1, "blue");
        let intruder = secure(&mut net, 2, "red");
        let plain = net.add_node(node_config(3));
        let now = net.instant();
        let w = net.p(a).create_writer(
            now,
            halyard_core::WriterSpec {
                topic_name: "Square".into(),
                type_name: "ShapeType".into(),
                qos: halyard_core::wire::qos::EndpointQos::writer_default(),
                has_key: true,
            },
        );
        for n in [intruder, plain] {
            net.p(n).create_reader(
                now,
                halyard_core::ReaderSpec {
                    topic_name: "Square".into(),
                    type_name: "ShapeType".into(),
                    qos: halyard_core::wire::qos::EndpointQos::reader_default(),
                    has_key: true,
                },
            );
        }
        net.flush();
        net.run_for(20 * SEC);
        let (pi, pp) = (net.p(intruder).guid_prefix(), net.p(plain).guid_prefix());
        for (who, p) in [("intruder", pi), ("unsecured", pp)] {
            assert!(
                net.node(a)
                    .saw(|e| matches!(e, Event::ParticipantRefused { prefix, .. } if *prefix == p)),
                "seed {seed:#x}: the {who} participant was not refused"
            );
        }
        assert!(
            net.p(a).matched_readers(w).is_empty(),
            "seed {seed:#x}: a refused reader matched"
        );
        for n in [intruder, plain] {
            assert!(
                !net.node(n)
                    .saw(|e| matches!(e, Event::PublicationDiscovered(_))),
                "seed {seed:#x}: node {n} learnt of the secure participant's writer"
            );
        }
    });
}

#[test]
fn protected_submessages_carry_a_reliable_stream_and_tampering_is_dropped() {
    for_each_seed("security_protected_stream", 30, |seed| {
        protected_stream(seed, Faults::lossy(0.1), true);
    });
}

/// Regression (seed 0xf1120875b5ae9014), with random corruption of every kind of datagram (SPDP
/// included): the reader's participant took a damaged vendor id from the writer's SPDP
/// announcement, so its volatile reader synchronised on the first HEARTBEAT it heard, as it does
/// with other vendors' writers; the writer's proxy of the reader had no locator (a damaged
/// default locator) until after all 50 samples were written, so that first HEARTBEAT announced
/// them all, and the reader skipped and acknowledged every one. Writers now hold DATA back from
/// a volatile reader until it has heard where its stream starts (`first_sync` proves it).
/// Passes with TRANSIENT_LOCAL endpoints too. With protection off this seed takes another path
/// that still fails: the reader's SEDP announcement arrives with its reliability kind flipped to
/// BEST_EFFORT (see docs/known-issues.md).
#[test]
fn reproducer_secure_stream_after_random_corruption() {
    let faults = Faults {
        corrupt: 0.05,
        ..Faults::lossy(0.1)
    };
    protected_stream(0xf112_0875_b5ae_9014, faults, false);
}

/// A reliable stream of 50 samples between two participants whose stand-in protects SEDP and
/// user submessages; with `tamper`, one protected datagram in ten has a bit of its protected
/// body flipped on the way.
fn protected_stream(seed: u64, faults: Faults, tamper: bool) {
    {
        let mut net = SimNet::new(seed, faults);
        protected_pair(&mut net, true, false);
        // An eavesdropper's view: no datagram may carry a plain SEDP or user submessage.
        let leaks = std::rc::Rc::new(std::cell::Cell::new(0u32));
        let seen = leaks.clone();
        let tampered = std::rc::Rc::new(std::cell::Cell::new(0u32));
        let flipped = tampered.clone();
        let mut protected_seen = 0u32;
        net.tamper = Some(Box::new(move |_, _, bytes| {
            // The attacker: a bit of every tenth protected body (SEC_BODY), flipped.
            if let Some(at) = sec_body_offset(bytes) {
                protected_seen += 1;
                if tamper && protected_seen.is_multiple_of(10) {
                    bytes[at] ^= 0x10;
                    flipped.set(flipped.get() + 1);
                }
            }
            let Ok(m) = Message::parse(bytes) else { return };
            for sm in m.submessages().flatten() {
                let plain_user = match sm {
                    Submessage::Data(d) => protected_entity(d.writer_id),
                    Submessage::Heartbeat(h) => protected_entity(h.writer_id),
                    Submessage::AckNack(a) => protected_entity(a.reader_id),
                    _ => false,
                };
                if plain_user {
                    seen.set(seen.get() + 1);
                }
            }
        }));
        let (w, r) = matched_pair(
            &mut net,
            "Secret",
            reliable_keep_all_writer(),
            reliable_keep_all_reader(),
        );
        let n = 50;
        for i in 0..n {
            write_retrying(&mut net, 0, w, [0; 16], indexed_payload(i, 200));
        }
        let ok = net.run_until(120 * SEC, |n2| {
            n2.node(1).samples.len() as u64 >= n && n2.nodes[0].p.writer_all_acked(w)
        });
        assert!(
            ok,
            "seed {seed:#x}: got {} of {n} samples; {:?}; stats {:?} / {:?}; events of node 0 {:?}",
            net.node(1).samples.len(),
            net.stats,
            net.node(0).p.stats(),
            net.node(1).p.stats(),
            net.node(0).events
        );
        let got: Vec<Option<u64>> = net
            .node(1)
            .samples
            .iter()
            .filter(|(_, s)| s.reader == r)
            .map(|(_, s)| parse_indexed(&s.payload))
            .collect();
        assert_exactly_once_in_order(seed, &got, n);
        assert_eq!(
            leaks.get(),
            0,
            "seed {seed:#x}: plain SEDP or user submessages went on the wire"
        );
        if tampered.get() > 0 {
            let rejected = net.p(0).stats().secure_rejected + net.p(1).stats().secure_rejected;
            assert!(
                rejected > 0,
                "seed {seed:#x}: {} corruptions and no protected submessage rejected",
                net.stats.corrupted
            );
        }
    }
}

/// Regression: a DATA that nearly fills a protected datagram (63000 B samples) was sent after
/// a datagram of its own holding only the INFO_DST and INFO_TS before it (the part that would
/// "not fit" with the DATA was split off though the next part repeats them): one useless
/// datagram per sample, sent plain under rtps protection. Every datagram must carry something
/// besides INFO_*, and every sample must arrive (repairs under 10 % loss included).
#[test]
fn a_large_protected_data_is_not_preceded_by_a_datagram_of_infos_alone() {
    for_each_seed_scaled("security_large_protected_data", 100, 3, |seed| {
        let mut net = SimNet::new(seed, Faults::lossy(0.1));
        protected_pair(&mut net, true, false);
        let infos_only = std::rc::Rc::new(std::cell::Cell::new(0u32));
        let seen = infos_only.clone();
        net.tamper = Some(Box::new(move |_, _, bytes| {
            let Ok(m) = Message::parse(bytes) else { return };
            let only_infos = m
                .submessages()
                .all(|sm| matches!(sm, Ok(Submessage::InfoDst(_) | Submessage::InfoTs(_))));
            if only_infos {
                seen.set(seen.get() + 1);
            }
        }));
        let (w, r) = matched_pair(
            &mut net,
            "Large",
            reliable_keep_all_writer(),
            reliable_keep_all_reader(),
        );
        let n = 10;
        for i in 0..n {
            write_retrying(&mut net, 0, w, [0; 16], indexed_payload(i, 63_000));
        }
        deliver_all(&mut net, seed, w, n, 60 * SEC);
        let got: Vec<Option<u64>> = net
            .node(1)
            .samples
            .iter()
            .filter(|(_, s)| s.reader == r)
            .map(|(_, s)| parse_indexed(&s.payload))
            .collect();
        assert_exactly_once_in_order(seed, &got, n);
        assert_eq!(
            infos_only.get(),
            0,
            "seed {seed:#x}: datagrams holding only INFO_DST / INFO_TS went on the wire"
        );
    });
}

/// Data protection with samples larger than a datagram (10 % loss, with and without
/// submessage protection): each DATA_FRAG's fragments are encoded on their own, its
/// sampleSize and fragmentSize those of the plain sample (what Cyclone DDS and Fast DDS send
/// and expect; encoding the whole sample and cutting the encoded bytes into fragments did not
/// interoperate), and every sample arrives whole, in order, exactly once. The samples' length
/// is not a multiple of four (the last fragment is padded).
#[test]
fn payload_protected_samples_travel_as_fragments_encoded_each_on_their_own() {
    for_each_seed_scaled("security_payload_protected_fragments", 100, 4, |seed| {
        let mut net = SimNet::new(seed, Faults::lossy(0.1));
        protected_pair(&mut net, seed % 2 == 1, true);
        const LEN: usize = 100_005;
        // An eavesdropper's view of the plain DATA_FRAGs of the user writer (with submessage
        // protection on, there are none to see).
        let frags = std::rc::Rc::new(std::cell::Cell::new(0u32));
        let bad = std::rc::Rc::new(std::cell::RefCell::new(Vec::<String>::new()));
        let (seen, wrong) = (frags.clone(), bad.clone());
        net.tamper = Some(Box::new(move |_, _, bytes| {
            let Ok(m) = Message::parse(bytes) else { return };
            for sm in m.submessages().flatten() {
                match sm {
                    Submessage::DataFrag(df) if !df.writer_id.is_builtin() => {
                        seen.set(seen.get() + 1);
                        let n = df.fragments_len();
                        // The fragments encoded, padded to four octets.
                        let encoded_len = df
                            .payload
                            .get(4..8)
                            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
                        let ok = df.sample_size as usize == LEN
                            && df.payload.starts_with(PAYLOAD_MAGIC)
                            && encoded_len == Some(n.next_multiple_of(4));
                        if !ok {
                            wrong.borrow_mut().push(format!(
                                "DATA_FRAG {}+{} size {} of {}: {} octets",
                                df.fragment_starting_num,
                                df.fragments_in_submessage,
                                df.fragment_size,
                                df.sample_size,
                                df.payload.len()
                            ));
                        }
                    }
                    Submessage::Data(d)
                        if !d.writer_id.is_builtin()
                            && d.payload.is_some_and(|p| !p.starts_with(PAYLOAD_MAGIC)) =>
                    {
                        wrong.borrow_mut().push("a plain DATA payload".into());
                    }
                    _ => {}
                }
            }
        }));
        let (w, r) = matched_pair(
            &mut net,
            "Large",
            reliable_keep_all_writer(),
            reliable_keep_all_reader(),
        );
        let n = 6u64;
        let sample = |i: u64| {
            let mut p = indexed_payload(i, LEN - 5);
            p.push(0x77);
            assert_eq!(p.len(), LEN);
            p
        };
        for i in 0..n {
            write_retrying(&mut net, 0, w, [0; 16], sample(i));
        }
        deliver_all(&mut net, seed, w, n, 120 * SEC);
        let got: Vec<&[u8]> = net
            .node(1)
            .samples
            .iter()
            .filter(|(_, s)| s.reader == r)
            .map(|(_, s)| &s.payload[..])
            .collect();
        let indexes: Vec<Option<u64>> = got
            .iter()
            .map(|p| parse_indexed(&p[..p.len().saturating_sub(1)]))
            .collect();
        assert_exactly_once_in_order(seed, &indexes, n);
        for (i, p) in got.iter().enumerate() {
            assert!(
                *p == &sample(i as u64)[..],
                "seed {seed:#x}: sample {i} arrived altered ({} octets)",
                p.len()
            );
        }
        assert!(
            bad.borrow().is_empty(),
            "seed {seed:#x}: not encoded fragment by fragment: {:?}",
            bad.borrow()
        );
        let protect = seed % 2 == 1;
        assert!(
            protect || frags.get() > 0,
            "seed {seed:#x}: no DATA_FRAG went on the wire"
        );
    });
}

/// Two participants (nodes 0 and 1) whose stand-ins protect SEDP and user submessages when
/// `protect`, and user writers' payloads when `payload`.
fn protected_pair(net: &mut SimNet, protect: bool, payload: bool) {
    for idx in [1, 2] {
        let cfg = node_config(idx);
        let mut plugin = StandIn::new("blue", cfg.guid_prefix);
        plugin.protect = protect;
        plugin.payload = payload;
        net.add_secure_node(cfg, plugin);
    }
}

/// Runs until node 1 holds `n` samples and node 0's writer `w` is acknowledged (within
/// `limit` nanoseconds of simulated time), or fails with both participants' statistics.
fn deliver_all(net: &mut SimNet, seed: u64, w: EntityId, n: u64, limit: u64) {
    let ok = net.run_until(limit, |n2| {
        n2.node(1).samples.len() as u64 >= n && n2.nodes[0].p.writer_all_acked(w)
    });
    assert!(
        ok,
        "seed {seed:#x}: got {} of {n} samples; stats {:?} / {:?}",
        net.node(1).samples.len(),
        net.node(0).p.stats(),
        net.node(1).p.stats()
    );
}

/// Where the body of the first SEC_BODY submessage of a datagram starts, if it has one.
fn sec_body_offset(bytes: &[u8]) -> Option<usize> {
    let mut at = 20;
    while at + 4 <= bytes.len() {
        let (id, flags) = (bytes[at], bytes[at + 1]);
        let raw = [bytes[at + 2], bytes[at + 3]];
        let len = if flags & 1 != 0 {
            u16::from_le_bytes(raw)
        } else {
            u16::from_be_bytes(raw)
        } as usize;
        if id == 0x30 && len > 8 && at + 4 + len <= bytes.len() {
            return Some(at + 4 + len / 2);
        }
        if len == 0 {
            return None;
        }
        at += 4 + len;
    }
    None
}
