//! Proves the builtin plugins authenticate participants inside the protocol core: two
//! `halyard_core::Participant`s, each with [`BuiltinSecurity`] for an identity made by
//! `halyard security init`, run the PKI-DH handshake over the stateless channel of a lossy
//! in-memory network (seeded, replayable), are admitted, and only then match their endpoints.
//! A participant from another set-up, and one whose permissions do not let it join the domain,
//! are refused and never learn of an endpoint; both sides of a refused identity are told so.

use halyard_core::security::ParticipantSecurity;
use halyard_core::wire::qos::EndpointQos;
use halyard_core::wire::GuidPrefix;
use halyard_core::{Event, Instant, Participant, ParticipantConfig, ReaderSpec, WriterSpec};
use halyard_security::plugin::{BuiltinSecurity, PluginError, SecurityFiles};
use halyard_security::random::SeededRandom;
use halyard_security::setup::{self, InitOptions, KeyKind, Protection};
use std::path::{Path, PathBuf};

const NOW: i64 = 1_790_000_000;
const MS: u64 = 1_000_000;

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("halyard-auth-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn init(dir: &Path, names: &[&str], domains: Vec<u32>, seed: u64, add: bool) {
    init_allowing(dir, names, domains, seed, add, None)
}

fn init_allowing(
    dir: &Path,
    names: &[&str],
    domains: Vec<u32>,
    seed: u64,
    add: bool,
    allows: Option<Vec<&str>>,
) {
    let opts = InitOptions {
        participants: names.iter().map(|s| s.to_string()).collect(),
        protection: Protection {
            encrypt: true,
            origin_auth: false,
            none: false,
        },
        key: KeyKind::EcP256,
        days: 30,
        domains,
        allows: allows.map(|v| {
            v.iter()
                .map(|a| setup::AllowSpec::parse(a).expect("allow spec"))
                .collect()
        }),
        force: false,
        now: NOW,
    };
    let mut rng = SeededRandom::new(seed);
    let r = if add {
        setup::add(dir, &opts, &mut rng)
    } else {
        setup::init(dir, &opts, &mut rng)
    };
    r.expect("set-up");
}

/// A participant of `domain` (host number `idx`) with the identity `dir/name`, plugin domain
/// `plugin_domain`.
fn secure_participant(
    dir: &Path,
    name: &str,
    idx: u8,
    domain: u32,
    plugin_domain: u32,
    seed: u64,
) -> Result<Participant, PluginError> {
    secure_participant_sized(dir, name, idx, domain, plugin_domain, seed, 1472)
}

/// [`secure_participant`] with datagrams of up to `max_message_size` octets.
fn secure_participant_sized(
    dir: &Path,
    name: &str,
    idx: u8,
    domain: u32,
    plugin_domain: u32,
    seed: u64,
    max_message_size: usize,
) -> Result<Participant, PluginError> {
    let files = SecurityFiles::load(&dir.join(name))?;
    let mut candidate = [0u8; 12];
    candidate[11] = idx;
    let plugin = BuiltinSecurity::new(
        files,
        plugin_domain,
        GuidPrefix(candidate),
        Box::new(SeededRandom::new(seed ^ u64::from(idx))),
        Box::new(|| NOW + 60),
    )?;
    let mut cfg = ParticipantConfig::new(domain, plugin.guid_prefix());
    let loc = halyard_core::wire::Locator::udpv4([10, 0, 0, idx], 7410);
    cfg.metatraffic_unicast = vec![loc];
    cfg.default_unicast = vec![loc];
    cfg.spdp_destinations = vec![halyard_core::wire::Locator::udpv4([239, 255, 0, 1], 7400)];
    // Ethernet-sized datagrams: the 2-3 KB handshake messages go as DATA_FRAGs.
    cfg.max_message_size = max_message_size;
    cfg.fragment_size = 1344;
    let mut p = Participant::new(cfg, Instant::from_nanos(0));
    p.set_security(Box::new(plugin) as Box<dyn ParticipantSecurity>);
    Ok(p)
}

/// A broadcast network with seeded loss: every datagram reaches every other participant
/// (unless lost) after 1 ms.
struct Net {
    nodes: Vec<Participant>,
    events: Vec<Vec<Event>>,
    samples: Vec<usize>,
    /// Every datagram sent (when `tap` is on).
    wire: Vec<Vec<u8>>,
    tap: bool,
    /// An attacker on the wire: the percentage of SRTPS-protected datagrams it alters (one
    /// byte of the protected part), and whether it replays every protected datagram.
    tamper_percent: u64,
    replay: bool,
    /// Seeded faults on every datagram: the percentage duplicated, and the percentage held
    /// back one tick (so later datagrams overtake them).
    duplicate_percent: u64,
    reorder_percent: u64,
    held: Vec<(usize, Vec<u8>)>,
    now: u64,
    rng: u64,
    loss_percent: u64,
}

impl Net {
    fn new(nodes: Vec<Participant>, seed: u64, loss_percent: u64) -> Net {
        let n = nodes.len();
        Net {
            nodes,
            events: vec![Vec::new(); n],
            samples: vec![0; n],
            wire: Vec::new(),
            tap: false,
            tamper_percent: 0,
            replay: false,
            duplicate_percent: 0,
            reorder_percent: 0,
            held: Vec::new(),
            now: 0,
            rng: seed | 1,
            loss_percent,
        }
    }
    fn lost(&mut self) -> bool {
        self.roll() < self.loss_percent
    }
    /// A seeded number in 0..100.
    fn roll(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng % 100
    }
    fn run_until(&mut self, limit_ms: u64, mut done: impl FnMut(&Net) -> bool) -> bool {
        let end = self.now + limit_ms * MS;
        while self.now < end {
            let now = Instant::from_nanos(self.now);
            let mut flights = Vec::new();
            for (i, p) in self.nodes.iter_mut().enumerate() {
                p.handle_timeout(now);
                while let Some(t) = p.poll_transmit() {
                    flights.push((i, t.payload));
                }
                while let Some(e) = p.poll_event() {
                    self.events[i].push(e);
                }
                while p.poll_sample().is_some() {
                    self.samples[i] += 1;
                }
            }
            self.now += MS;
            let now = Instant::from_nanos(self.now);
            let mut flights: Vec<(usize, Vec<u8>)> = std::mem::take(&mut self.held)
                .into_iter()
                .chain(flights)
                .collect();
            if self.reorder_percent > 0 {
                let mut kept = Vec::with_capacity(flights.len());
                for f in flights {
                    if self.roll() < self.reorder_percent {
                        self.held.push(f);
                    } else {
                        kept.push(f);
                    }
                }
                flights = kept;
            }
            for (from, mut bytes) in flights {
                if self.tap {
                    self.wire.push(bytes.clone());
                }
                let protected = bytes.get(20) == Some(&0x33);
                let mut copies = 1;
                if (protected && self.replay)
                    || (self.duplicate_percent > 0 && self.roll() < self.duplicate_percent)
                {
                    copies = 2;
                }
                if protected && self.tamper_percent > 0 && self.roll() < self.tamper_percent {
                    let at = 24 + (self.roll() as usize * 7919) % (bytes.len() - 24);
                    bytes[at] ^= 0x01;
                }
                for to in 0..self.nodes.len() {
                    if to != from && !self.lost() {
                        for _ in 0..copies {
                            self.nodes[to].handle_datagram(now, &bytes);
                        }
                    }
                }
            }
            if done(self) {
                return true;
            }
        }
        false
    }
    fn saw(&self, i: usize, f: impl Fn(&Event) -> bool) -> bool {
        self.events[i].iter().any(f)
    }
}

/// Whether node 0's writer `w` and node 1's reader `r` both report their match.
fn pair_matched(n: &Net, w: halyard_core::wire::EntityId, r: halyard_core::wire::EntityId) -> bool {
    n.saw(
        1,
        |e| matches!(e, Event::SubscriptionMatched { reader, matched: true, .. } if *reader == r),
    ) && n.saw(
        0,
        |e| matches!(e, Event::PublicationMatched { writer, matched: true, .. } if *writer == w),
    )
}

/// A RELIABLE, KEEP_ALL writer on node 0 and reader on node 1: every sample must arrive
/// despite loss.
fn reliable_keep_all_pair(
    net: &mut Net,
    t0: Instant,
) -> (halyard_core::wire::EntityId, halyard_core::wire::EntityId) {
    use halyard_core::wire::qos::{History, ReliabilityKind};
    let mut keep_all = spec_w();
    keep_all.qos.history = History::KeepAll;
    let mut reliable = spec_r();
    reliable.qos.reliability.kind = ReliabilityKind::Reliable;
    reliable.qos.history = History::KeepAll;
    let w = net.nodes[0].create_writer(t0, keep_all);
    let r = net.nodes[1].create_reader(t0, reliable);
    (w, r)
}

fn spec_w() -> WriterSpec {
    WriterSpec {
        topic_name: "Square".into(),
        type_name: "ShapeType".into(),
        qos: EndpointQos::writer_default(),
        has_key: false,
    }
}

fn spec_r() -> ReaderSpec {
    ReaderSpec {
        topic_name: "Square".into(),
        type_name: "ShapeType".into(),
        qos: EndpointQos::reader_default(),
        has_key: false,
    }
}

#[test]
fn participants_of_one_set_up_authenticate_under_loss_then_match() {
    let dir = temp_dir("pair");
    init(&dir, &["alice", "bob"], vec![], 1, false);
    for seed in 1..=8u64 {
        let a = secure_participant(&dir, "alice", 1, 0, 0, seed).expect("alice");
        let b = secure_participant(&dir, "bob", 2, 0, 0, seed).expect("bob");
        let (pa, pb) = (a.guid_prefix(), b.guid_prefix());
        let mut net = Net::new(vec![a, b], seed, 20);
        let t0 = Instant::from_nanos(0);
        let w = net.nodes[0].create_writer(t0, spec_w());
        let r = net.nodes[1].create_reader(t0, spec_r());
        let matched = net.run_until(60_000, |n| {
            n.saw(0, |e| matches!(e, Event::PublicationMatched { writer, matched: true, .. } if *writer == w))
                && n.saw(1, |e| matches!(e, Event::SubscriptionMatched { reader, matched: true, .. } if *reader == r))
        });
        assert!(
            matched,
            "seed {seed}: alice and bob never matched; events {:?}",
            net.events
        );
        assert!(
            net.saw(
                0,
                |e| matches!(e, Event::ParticipantAuthenticated(p) if *p == pb)
            ),
            "seed {seed}"
        );
        assert!(
            net.saw(
                1,
                |e| matches!(e, Event::ParticipantAuthenticated(p) if *p == pa)
            ),
            "seed {seed}"
        );
        // The participant GUID prefixes carry the certificates' subject hash (bit 7 set).
        assert!(pa.0[0] & 0x80 != 0 && pb.0[0] & 0x80 != 0);
        // A handshake that completes, under loss too, warns no one.
        assert_eq!(
            (warnings(&net, 0), warnings(&net, 1)),
            (vec![], vec![]),
            "seed {seed}"
        );
    }
}

#[test]
fn a_participant_of_another_set_up_is_refused_and_learns_nothing() {
    let (dir, other) = (temp_dir("own"), temp_dir("other"));
    init(&dir, &["alice"], vec![], 2, false);
    init(&other, &["eve"], vec![], 3, false);
    for seed in 1..=4u64 {
        let a = secure_participant(&dir, "alice", 1, 0, 0, seed).expect("alice");
        let e = secure_participant(&other, "eve", 2, 0, 0, seed).expect("eve");
        let pe = e.guid_prefix();
        let mut net = Net::new(vec![a, e], seed, 10);
        let t0 = Instant::from_nanos(0);
        net.nodes[0].create_writer(t0, spec_w());
        net.nodes[1].create_reader(t0, spec_r());
        net.run_until(20_000, |_| false);
        assert!(
            !net.saw(1, |e| matches!(e, Event::PublicationDiscovered(_))),
            "seed {seed}: eve learnt of alice's writer"
        );
        assert!(
            !net.saw(
                0,
                |ev| matches!(ev, Event::ParticipantAuthenticated(p) if *p == pe)
            ),
            "seed {seed}: alice authenticated eve"
        );
    }
}

/// The [`Event::SecurityWarning`]s node `i` reported, with the participant each is about.
fn warnings(n: &Net, i: usize) -> Vec<(GuidPrefix, String)> {
    n.events[i]
        .iter()
        .filter_map(|e| match e {
            Event::SecurityWarning { prefix, what } => Some((*prefix, what.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn both_sides_of_a_refused_identity_are_told_once_with_the_likely_cause() {
    let (dir, other) = (temp_dir("warn-own"), temp_dir("warn-other"));
    init(&dir, &["alice"], vec![], 4, false);
    init(&other, &["eve"], vec![], 5, false);
    for seed in 1..=4u64 {
        let a = secure_participant(&dir, "alice", 1, 0, 0, seed).expect("alice");
        let e = secure_participant(&other, "eve", 2, 0, 0, seed).expect("eve");
        let (pa, pe) = (a.guid_prefix(), e.guid_prefix());
        let mut net = Net::new(vec![a, e], seed, 10);
        // Long enough for many resends: still one warning each.
        net.run_until(30_000, |_| false);
        let (wa, we) = (warnings(&net, 0), warnings(&net, 1));
        assert_eq!((wa.len(), we.len()), (1, 1), "seed {seed}: {wa:?} {we:?}");
        assert_eq!(
            (wa[0].0, we[0].0),
            (pe, pa),
            "seed {seed}: each names the other"
        );
        // The one who begins (the smaller GUID prefix) sends its certificate first: the
        // other refuses it at once, naming why; the first only sees its request unanswered.
        let (refuser, refused) = if pa < pe { (&we, &wa) } else { (&wa, &we) };
        assert!(
            refuser[0].1.contains("not accepted: certificate")
                && refuser[0]
                    .1
                    .contains("does not verify against the identity CA"),
            "seed {seed}: {}",
            refuser[0].1
        );
        assert!(
            refused[0].1.starts_with("identity not accepted by peer ")
                && refused[0]
                    .1
                    .contains("our handshake request has had no reply"),
            "seed {seed}: {}",
            refused[0].1
        );
        for w in [&refuser[0].1, &refused[0].1] {
            assert!(
                w.contains("check that both use the same identity CA"),
                "{w}"
            );
        }
    }
}

#[test]
fn a_participant_not_permitted_in_the_domain_is_refused_after_authenticating() {
    let dir = temp_dir("join");
    init(&dir, &["alice"], vec![0, 7], 4, false);
    // mallory's identity is genuine, but its permissions are for domain 7 only.
    init(&dir, &["mallory"], vec![7], 5, true);
    // Its own plugin refuses to join domain 0 ...
    match secure_participant(&dir, "mallory", 2, 0, 0, 1) {
        Err(PluginError::NotPermitted(why)) => assert!(why.contains("domain 0"), "{why}"),
        Err(e) => panic!("expected NotPermitted, got {e}"),
        Ok(_) => panic!("mallory's plugin let it join domain 0"),
    }
    // ... and a mallory that lies about its domain is refused by alice's access control.
    let a = secure_participant(&dir, "alice", 1, 0, 0, 1).expect("alice");
    let m = secure_participant(&dir, "mallory", 2, 0, 7, 1).expect("mallory, claiming domain 7");
    let pm = m.guid_prefix();
    let mut net = Net::new(vec![a, m], 9, 0);
    let t0 = Instant::from_nanos(0);
    net.nodes[0].create_writer(t0, spec_w());
    let refused = net.run_until(20_000, |n| {
        n.saw(0, |e| matches!(e, Event::ParticipantRefused { prefix, reason } if *prefix == pm && reason.contains("may not join domain 0")))
    });
    assert!(
        refused,
        "alice did not refuse mallory; events {:?}",
        net.events[0]
    );
    assert!(
        !net.saw(1, |e| matches!(e, Event::PublicationDiscovered(_))),
        "mallory learnt of alice's writer"
    );
}

#[test]
fn a_remote_endpoint_its_permissions_do_not_grant_is_never_matched() {
    let dir = temp_dir("topic");
    // mallory may only subscribe; its core (which, unlike the DCPS API, does not check its own
    // permissions) creates a writer anyway: alice's access control must refuse it.
    init_allowing(
        &dir,
        &["alice", "mallory"],
        vec![],
        6,
        false,
        Some(vec!["alice:pubsub:*", "mallory:sub:*"]),
    );
    let a = secure_participant(&dir, "alice", 1, 0, 0, 2).expect("alice");
    let m = secure_participant(&dir, "mallory", 2, 0, 0, 2).expect("mallory");
    let mut net = Net::new(vec![a, m], 11, 10);
    let t0 = Instant::from_nanos(0);
    let r = net.nodes[0].create_reader(t0, spec_r());
    let w = net.nodes[1].create_writer(t0, spec_w());
    let refused = net.run_until(20_000, |n| {
        n.saw(0, |e| matches!(e, Event::EndpointRefused { guid, reason } if guid.entity == w && reason.contains("may not publish")))
    });
    assert!(
        refused,
        "alice did not refuse mallory's writer; events {:?}",
        net.events[0]
    );
    net.run_until(2_000, |_| false);
    assert!(
        !net.saw(0, |e| matches!(e, Event::SubscriptionMatched { reader, matched: true, .. } if *reader == r)),
        "alice's reader matched a writer mallory may not have"
    );
    // mallory's own reader is allowed: alice's local check agrees.
    assert!(net.nodes[0]
        .check_local_endpoint("Square", &[], false)
        .is_ok());
}

/// A set-up whose governance asks for rtps protection `kind` (and nothing else).
fn init_rtps(dir: &Path, names: &[&str], kind: &str, seed: u64) {
    let opts = InitOptions {
        participants: names.iter().map(|s| s.to_string()).collect(),
        protection: Protection {
            encrypt: false,
            origin_auth: false,
            none: true,
        },
        key: KeyKind::EcP256,
        days: 30,
        domains: vec![],
        allows: None,
        force: false,
        now: NOW,
    };
    setup::init(dir, &opts, &mut SeededRandom::new(seed)).expect("set-up");
    let kind = match kind {
        "SIGN" => halyard_security::access::ProtectionKind::Sign,
        _ => halyard_security::access::ProtectionKind::Encrypt,
    };
    setup::set_rtps_protection(dir, kind).expect("rtps protection");
}

/// Recognisable sample bytes.
const MARK: [u8; 12] = *b"halyard-mark";

/// Writes `n` samples carrying [`MARK`] (four-octet aligned) with node 0's writer `w`.
fn write_marked(net: &mut Net, w: halyard_core::wire::EntityId, n: u8) {
    for i in 0..n {
        let now = Instant::from_nanos(net.now);
        let change = halyard_core::NewChange {
            kind: halyard_core::ChangeKind::Alive,
            key_hash: [0; 16],
            payload: std::sync::Arc::new([&[0, 1, 0, 0, i, 0, 0, 0][..], &MARK].concat()),
            timestamp: None,
            original: None,
        };
        net.nodes[0].write(now, w, change).expect("write");
    }
}

#[test]
fn rtps_protection_wraps_every_user_message() {
    for kind in ["SIGN", "ENCRYPT"] {
        let dir = temp_dir(&format!("rtps-{kind}"));
        init_rtps(&dir, &["alice", "bob"], kind, 7);
        let a = secure_participant(&dir, "alice", 1, 0, 0, 3).expect("alice");
        let b = secure_participant(&dir, "bob", 2, 0, 0, 3).expect("bob");
        let mut net = Net::new(vec![a, b], 5, 10);
        net.tap = true;
        let t0 = Instant::from_nanos(0);
        let (w, r) = reliable_keep_all_pair(&mut net, t0);
        let matched = net.run_until(30_000, |n| {
            n.saw(1, |e| matches!(e, Event::SubscriptionMatched { reader, matched: true, .. } if *reader == r))
        });
        assert!(
            matched,
            "{kind}: no match under rtps protection; stats {:?}",
            net.nodes[1].stats()
        );
        write_marked(&mut net, w, 10);
        let got = net.run_until(10_000, |n| n.samples[1] >= 10);
        assert!(got, "{kind}: bob got {} of 10 samples", net.samples[1]);
        // An eavesdropper sees no plain user data, heartbeat or acknowledgement: every message
        // of a user endpoint is SRTPS-protected (the non-secure builtin endpoints, SPDP and
        // SEDP included, stay outside rtps protection, as in Cyclone DDS).
        let (mut protected, mut marks) = (0, 0);
        for d in &net.wire {
            if d.get(20) == Some(&0x33) {
                protected += 1;
                // Every copy of a sample's mark (a datagram may carry several samples).
                marks += d.windows(MARK.len()).filter(|x| *x == MARK).count();
                continue;
            }
            let m = halyard_core::wire::Message::parse(d).expect("RTPS");
            for sm in m.submessages().flatten() {
                use halyard_core::wire::{EntityId as E, Submessage as S};
                let writer = match sm {
                    S::Data(x) => x.writer_id,
                    S::Heartbeat(x) => x.writer_id,
                    S::AckNack(x) => x.writer_id,
                    S::Gap(x) => x.writer_id,
                    _ => continue,
                };
                assert!(
                    writer.is_builtin() && writer != E::UNKNOWN,
                    "{kind}: a plain submessage of user writer {writer:?} went on the wire"
                );
            }
        }
        assert!(
            protected > 10,
            "{kind}: only {protected} protected messages"
        );
        // SIGN (GMAC) leaves the samples readable, ENCRYPT (GCM) does not.
        if kind == "SIGN" {
            assert!(
                marks >= 10,
                "SIGN: the samples should travel in clear, signed"
            );
        } else {
            assert_eq!(marks, 0, "ENCRYPT: a sample's bytes appear in clear");
        }
    }
}

#[test]
fn tampered_and_replayed_protected_messages_are_dropped_counted_and_never_delivered() {
    let dir = temp_dir("attack");
    init_rtps(&dir, &["alice", "bob"], "ENCRYPT", 8);
    let a = secure_participant(&dir, "alice", 1, 0, 0, 4).expect("alice");
    let b = secure_participant(&dir, "bob", 2, 0, 0, 4).expect("bob");
    let mut net = Net::new(vec![a, b], 6, 5);
    net.tamper_percent = 10;
    net.replay = true;
    let t0 = Instant::from_nanos(0);
    let (w, r) = reliable_keep_all_pair(&mut net, t0);
    let matched = net.run_until(60_000, |n| pair_matched(n, w, r));
    assert!(
        matched,
        "no match under attack; stats {:?}",
        net.nodes[1].stats()
    );
    let n = 30u8;
    for i in 0..n {
        let now = Instant::from_nanos(net.now);
        let change = halyard_core::NewChange {
            kind: halyard_core::ChangeKind::Alive,
            key_hash: [0; 16],
            payload: std::sync::Arc::new(vec![0, 1, 0, 0, i]),
            timestamp: None,
            original: None,
        };
        net.nodes[0].write(now, w, change).expect("write");
    }
    net.run_until(30_000, |net| net.samples[1] >= n as usize);
    net.run_until(2_000, |_| false);
    let rejected = net.nodes[0].stats().secure_rejected + net.nodes[1].stats().secure_rejected;
    assert_eq!(
        net.samples[1], n as usize,
        "every sample exactly once despite tampering and replays"
    );
    // Every protected datagram is replayed: the replays are rejected by the replay window
    // (kept for Halyard peers) and counted, with the tampered ones. Without the window only
    // the tampered ones would be (6 in this run).
    assert!(
        rejected > 20,
        "tampered and replayed messages must be counted: {rejected}"
    );
}

/// A set-up protecting everything (rtps, discovery, liveliness, metadata, data) with
/// `encrypt` (else SIGN) and `origin_auth`, as `halyard security init --protect ...` makes it.
fn init_full(dir: &Path, names: &[&str], encrypt: bool, origin_auth: bool, seed: u64) {
    let opts = InitOptions {
        participants: names.iter().map(|s| s.to_string()).collect(),
        protection: Protection {
            encrypt,
            origin_auth,
            none: false,
        },
        key: KeyKind::EcP256,
        days: 30,
        domains: vec![],
        allows: None,
        force: false,
        now: NOW,
    };
    setup::init(dir, &opts, &mut SeededRandom::new(seed)).expect("set-up");
}

#[test]
fn full_protection_hides_discovery_metadata_and_data_and_delivers_every_sample() {
    let levels = [(false, false), (true, false), (true, true)];
    for (encrypt, origin) in levels {
        let what = format!("encrypt={encrypt} origin_auth={origin}");
        let dir = temp_dir(&format!("full-{encrypt}-{origin}"));
        init_full(&dir, &["alice", "bob"], encrypt, origin, 9);
        let a = secure_participant(&dir, "alice", 1, 0, 0, 3).expect("alice");
        let b = secure_participant(&dir, "bob", 2, 0, 0, 3).expect("bob");
        let mut net = Net::new(vec![a, b], 11, 10);
        net.tap = true;
        let t0 = Instant::from_nanos(0);
        let (w, r) = reliable_keep_all_pair(&mut net, t0);
        let matched = net.run_until(30_000, |n| pair_matched(n, w, r));
        assert!(
            matched,
            "{what}: no match under full protection; stats {:?} / {:?}; events {:?}",
            net.nodes[0].stats(),
            net.nodes[1].stats(),
            net.events[1]
        );
        write_marked(&mut net, w, 10);
        let got = net.run_until(10_000, |n| n.samples[1] >= 10);
        assert!(
            got,
            "{what}: bob got {} of 10 samples; stats {:?}",
            net.samples[1],
            net.nodes[1].stats()
        );
        // No plain submessage of a user endpoint, and no plain announcement of the topic.
        let mut marks = 0;
        for d in &net.wire {
            // Every copy of a sample's mark (a datagram may carry several samples).
            marks += d.windows(MARK.len()).filter(|x| *x == MARK).count();
            if encrypt {
                assert!(
                    !d.windows(6).any(|x| x == b"Square"),
                    "{what}: the topic name travelled in clear"
                );
            }
        }
        if encrypt {
            assert_eq!(marks, 0, "{what}: a sample's bytes appear in clear");
        } else {
            assert!(marks >= 10, "{what}: SIGN leaves samples readable");
        }
    }
}

/// The handshake, the key exchanges (participant and endpoint crypto tokens) and a protected
/// reliable stream under seeded loss, duplication and reordering, at full ENCRYPT with origin
/// authentication: every sample arrives, for every seed (printed on failure; replay one with
/// HALYARD_AUTH_SEED).
#[test]
fn handshake_and_key_exchange_survive_loss_duplication_and_reordering() {
    let seeds: Vec<u64> = match std::env::var("HALYARD_AUTH_SEED") {
        Ok(s) => vec![u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex seed")],
        Err(_) => (1..=6).map(|i| 0x5eed_0000 + i).collect(),
    };
    let dir = temp_dir("faults");
    init_full(&dir, &["alice", "bob"], true, true, 12);
    for seed in seeds {
        let a = secure_participant(&dir, "alice", 1, 0, 0, seed).expect("alice");
        let b = secure_participant(&dir, "bob", 2, 0, 0, seed).expect("bob");
        let mut net = Net::new(vec![a, b], seed, 15);
        net.duplicate_percent = 10;
        net.reorder_percent = 20;
        let t0 = Instant::from_nanos(0);
        let (w, r) = reliable_keep_all_pair(&mut net, t0);
        let matched = net.run_until(60_000, |n| pair_matched(n, w, r));
        assert!(
            matched,
            "seed {seed:#x}: no match; stats {:?} / {:?}",
            net.nodes[0].stats(),
            net.nodes[1].stats()
        );
        write_marked(&mut net, w, 30);
        let got = net.run_until(30_000, |n| n.samples[1] >= 30);
        assert!(
            got,
            "seed {seed:#x}: bob got {} of 30 samples; stats {:?}",
            net.samples[1],
            net.nodes[1].stats()
        );
        assert_eq!(
            net.samples[1], 30,
            "seed {seed:#x}: a sample was delivered twice"
        );
    }
}

/// Protection lengthens a message: a datagram packed near the 64 KB limit with many samples
/// (each then SEC_PREFIX-protected, the whole then SRTPS-protected) would no longer fit and
/// was dropped every time (a benchmark's 1 KB stream delivered nothing). It is now split:
/// every sample arrives, no datagram exceeds UDP's limit, nothing fails to be protected.
#[test]
fn messages_that_protection_lengthens_past_a_datagram_are_split_not_dropped() {
    let dir = temp_dir("split");
    init_full(&dir, &["alice", "bob"], true, true, 13);
    let a = secure_participant_sized(&dir, "alice", 1, 0, 0, 4, 64_000).expect("alice");
    let b = secure_participant_sized(&dir, "bob", 2, 0, 0, 4, 64_000).expect("bob");
    let mut net = Net::new(vec![a, b], 17, 0);
    net.tap = true;
    let t0 = Instant::from_nanos(0);
    let (w, r) = reliable_keep_all_pair(&mut net, t0);
    let matched = net.run_until(30_000, |n| pair_matched(n, w, r));
    assert!(matched, "no match");
    // Let the key exchange settle, then write a burst the writer batches into big datagrams.
    net.run_until(500, |_| false);
    net.nodes[0]
        .set_writer_batching(
            w,
            Some(halyard_core::BatchPolicy {
                max_bytes: 64_000,
                max_flush_delay: std::time::Duration::from_millis(1),
            }),
        )
        .expect("batching");
    net.wire.clear();
    let now = Instant::from_nanos(net.now);
    for i in 0..300u32 {
        let mut payload = vec![0, 1, 0, 0];
        payload.extend_from_slice(&i.to_le_bytes());
        payload.resize(1024, 0x5a);
        let change = halyard_core::NewChange {
            kind: halyard_core::ChangeKind::Alive,
            key_hash: [0; 16],
            payload: std::sync::Arc::new(payload),
            timestamp: None,
            original: None,
        };
        net.nodes[0].write(now, w, change).expect("write");
    }
    let got = net.run_until(10_000, |n| n.samples[1] >= 300);
    assert!(
        got,
        "bob got {} of 300; alice {:?}",
        net.samples[1],
        net.nodes[0].stats()
    );
    assert_eq!(net.nodes[0].stats().secure_send_failed, 0);
    let biggest = net.wire.iter().map(Vec::len).max().unwrap_or(0);
    assert!(biggest <= 65_507, "a {biggest}-octet datagram");
    assert!(
        biggest > 30_000,
        "the burst was not packed into big datagrams ({biggest} octets at most): the test proves nothing"
    );
}
