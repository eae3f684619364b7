//! Deterministic simulated network for `halyard-core`: virtual time, seeded faults, and an
//! event loop that drives several sans-I/O participants against each other.
//!
//! Seeds: `HALYARD_SIM_SEED=<n or 0xhex>` replays one seed; otherwise each test loops over
//! `HALYARD_SIM_SEEDS` seeds (default 50 so CI stays fast; long swarm runs set e.g.
//! `HALYARD_SIM_SEEDS=10000`). A failing test prints `seed = 0x...` before re-raising the panic.
//! `HALYARD_SIM_TRACE=1` prints every delivered datagram's submessages with virtual time (for
//! replaying one seed; DATA payloads are summarised by length).
#![allow(dead_code)]

use halyard_core::wire::qos::{EndpointQos, History, ReliabilityKind};
use halyard_core::wire::{GuidPrefix, Locator};
use halyard_core::{Event, Instant, Participant, ParticipantConfig, ReceivedSample};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::time::Duration;

/// The SPDP multicast locator every simulated node listens on.
pub const SPDP_MULTICAST: [u8; 4] = [239, 255, 0, 1];
/// Nanoseconds in a millisecond.
pub const MS: u64 = 1_000_000;
/// Nanoseconds in a second.
pub const SEC: u64 = 1_000_000_000;

/// splitmix64: small, fast, deterministic; good enough to draw faults from.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.unit() < p
    }
    /// Uniform in [lo, hi] (inclusive); `lo` if the range is empty.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            lo
        } else {
            lo + self.next_u64() % (hi - lo + 1)
        }
    }
}

/// Per-datagram faults. All probabilities are per datagram per destination.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    pub loss: f64,
    pub duplicate: f64,
    /// Probability that a datagram gets an extra random delay in `0..=reorder_delay_ns`.
    pub reorder: f64,
    pub reorder_delay_ns: u64,
    pub latency_ns: u64,
    pub jitter_ns: u64,
    /// Probability of flipping one random bit of the datagram.
    pub corrupt: f64,
}

impl Faults {
    /// A clean LAN: 100 µs latency, no faults.
    pub fn none() -> Faults {
        Faults {
            latency_ns: 100_000,
            ..Faults::default()
        }
    }
    /// The reliable-stream mix: up to 30 % loss and 5 % duplication drawn from `r`, 20 %
    /// reordering by up to 5 ms, 100 µs latency with 500 µs jitter, no corruption.
    pub fn stream_mix(r: &mut Rng) -> Faults {
        Faults {
            loss: r.unit() * 0.30,
            duplicate: r.unit() * 0.05,
            reorder: 0.2,
            reorder_delay_ns: 5 * MS,
            latency_ns: 100_000,
            jitter_ns: 500_000,
            corrupt: 0.0,
        }
    }
    /// Only random loss on top of a clean LAN.
    pub fn lossy(loss: f64) -> Faults {
        Faults {
            loss,
            ..Faults::none()
        }
    }
}

/// Drop everything between nodes of `a` and nodes of `b` while `from <= now < until`.
#[derive(Clone, Debug)]
pub struct Partition {
    pub a: Vec<usize>,
    pub b: Vec<usize>,
    pub from: u64,
    pub until: u64,
}

/// One simulated host: a participant plus everything it reported, stamped with virtual time.
pub struct Node {
    pub p: Participant,
    pub alive: bool,
    pub events: Vec<(u64, Event)>,
    pub samples: Vec<(u64, ReceivedSample)>,
    /// Outgoing link capacity in bytes per second (None: unlimited).
    pub capacity: Option<u64>,
    link_free_at: u64,
    /// A receiver that drains its socket at `.0` bytes per second into a `.1`-byte buffer
    /// (None: it takes everything at once): datagrams that find the buffer full are dropped,
    /// as a kernel drops what overflows a socket's receive buffer.
    pub receive_limit: Option<(u64, u64)>,
    rx_busy_until: u64,
    /// Datagrams dropped for a full receive buffer.
    pub rx_overflows: u64,
    /// Datagrams this node handed to the network (one per send, however many receive it).
    pub datagrams_sent: u64,
}

impl Node {
    /// True if some recorded event satisfies `f`.
    pub fn saw(&self, f: impl Fn(&Event) -> bool) -> bool {
        self.events.iter().any(|(_, e)| f(e))
    }
}

struct Flight {
    at: u64,
    seq: u64,
    /// The sender's host number (its GUID prefix's last byte).
    from: u8,
    to: usize,
    bytes: Vec<u8>,
}

/// One submessage a node received, as recorded by [`SimNet::record`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// Virtual time of delivery (ns).
    pub at: u64,
    /// Sending host number, receiving node index.
    pub from: u8,
    pub to: usize,
    /// FNV-1a of the parsed submessage (every field, payload included).
    pub digest: u64,
    /// What it was, for reports.
    pub line: String,
}

impl PartialEq for Flight {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Flight {}
impl PartialOrd for Flight {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Flight {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// Counters of what the network did.
#[derive(Clone, Copy, Debug, Default)]
pub struct NetStats {
    pub sent: u64,
    pub delivered: u64,
    pub lost: u64,
    pub duplicated: u64,
    pub corrupted: u64,
    pub partitioned: u64,
}

/// A crafted-fault hook, see [`SimNet::tamper`].
pub type Tamper = Box<dyn FnMut(usize, usize, &mut Vec<u8>)>;

/// The simulated network with virtual time.
pub struct SimNet {
    pub seed: u64,
    pub now: u64,
    pub rng: Rng,
    pub nodes: Vec<Node>,
    pub faults: Faults,
    pub partitions: Vec<Partition>,
    pub stats: NetStats,
    pub steps: u64,
    pub max_steps: u64,
    /// Crafted faults: called on every datagram copy (`from`, `to`, bytes) after the random
    /// faults; it may rewrite the bytes.
    pub tamper: Option<Tamper>,
    /// When `Some`, every submessage delivered is appended (see [`Delivery`]): two runs of
    /// one seed must record the same list.
    pub record: Option<Vec<Delivery>>,
    /// Datagrams sent to each locator (by any node), whether a node listens there or not.
    pub sent_to: std::collections::BTreeMap<Locator, u64>,
    queue: BinaryHeap<Reverse<Flight>>,
    seq: u64,
}

/// The configuration of simulated node `idx` (1-based host number 10.0.0.idx).
pub fn node_config(idx: u8) -> ParticipantConfig {
    let mut prefix = [0u8; 12];
    prefix[0] = 0x01;
    prefix[1] = 0x99;
    prefix[11] = idx;
    let mut cfg = ParticipantConfig::new(0, GuidPrefix(prefix));
    let mc = Locator::udpv4(SPDP_MULTICAST, 7400);
    cfg.metatraffic_unicast = vec![Locator::udpv4([10, 0, 0, idx], 7410)];
    cfg.default_unicast = vec![Locator::udpv4([10, 0, 0, idx], 7411)];
    cfg.metatraffic_multicast = vec![mc];
    cfg.spdp_destinations = vec![mc];
    cfg.reachable_networks = vec![halyard_core::config::Ipv4Net {
        address: [10, 0, 0, idx],
        prefix_len: 24,
    }];
    cfg
}

impl SimNet {
    pub fn new(seed: u64, faults: Faults) -> SimNet {
        SimNet {
            seed,
            now: 0,
            rng: Rng::new(seed),
            nodes: Vec::new(),
            faults,
            partitions: Vec::new(),
            stats: NetStats::default(),
            steps: 0,
            max_steps: 20_000_000,
            tamper: None,
            record: None,
            sent_to: std::collections::BTreeMap::new(),
            queue: BinaryHeap::new(),
            seq: 0,
        }
    }

    pub fn instant(&self) -> Instant {
        Instant::from_nanos(self.now)
    }

    /// Adds a node whose participant starts now; returns its index.
    pub fn add_node(&mut self, cfg: ParticipantConfig) -> usize {
        let p = Participant::new(cfg, self.instant());
        self.push_node(p)
    }

    /// Adds a node whose participant runs the security plugin `plugin`.
    pub fn add_secure_node(
        &mut self,
        cfg: ParticipantConfig,
        plugin: Box<dyn halyard_core::security::ParticipantSecurity>,
    ) -> usize {
        let mut p = Participant::new(cfg, self.instant());
        p.set_security(plugin);
        self.push_node(p)
    }

    fn push_node(&mut self, p: Participant) -> usize {
        self.nodes.push(Node {
            p,
            alive: true,
            events: Vec::new(),
            samples: Vec::new(),
            capacity: None,
            link_free_at: 0,
            receive_limit: None,
            rx_busy_until: 0,
            rx_overflows: 0,
            datagrams_sent: 0,
        });
        let i = self.nodes.len() - 1;
        self.flush();
        i
    }

    /// Removes a node from the network without a goodbye (crash / cable pulled).
    pub fn kill(&mut self, i: usize) {
        self.nodes[i].alive = false;
    }

    pub fn node(&self, i: usize) -> &Node {
        &self.nodes[i]
    }

    /// Mutable access to a node's participant for application actions; call `flush` after
    /// (the `run_*` functions do it too).
    pub fn p(&mut self, i: usize) -> &mut Participant {
        &mut self.nodes[i].p
    }

    /// `Participant::write` on node `i`, checking what the write reports of its deadlines
    /// (`take_write_due`): a driver that trusts it must miss no deadline, so no deadline after
    /// the write may fall before both the timeout known before it and the one it reports.
    pub fn write(
        &mut self,
        i: usize,
        now: Instant,
        writer: halyard_core::wire::EntityId,
        change: halyard_core::NewChange,
    ) -> Result<halyard_core::wire::SequenceNumber, halyard_core::WriteError> {
        let seed = self.seed;
        let p = &mut self.nodes[i].p;
        let _ = p.take_write_due();
        let before = p.poll_timeout();
        let written = p.write(now, writer, change);
        let after = p.poll_timeout();
        let earliest = |a: Option<Instant>, b: Option<Instant>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match p.take_write_due() {
            halyard_core::WriteDue::Writes(due) => {
                let known = earliest(before, due);
                assert!(
                    after.is_none() || known.is_some_and(|k| after.is_some_and(|a| a >= k)),
                    "seed {seed:#x}: a write reported {due:?} with {before:?} known, \
                     but the next timeout is {after:?}"
                );
            }
            halyard_core::WriteDue::Nothing => {
                panic!("seed {seed:#x}: a write reported no write")
            }
            halyard_core::WriteDue::Unknown => {}
        }
        written
    }

    fn destinations(&self, loc: &Locator) -> Vec<usize> {
        let mut v = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            let c = n.p.config();
            let hit = c.metatraffic_unicast.contains(loc)
                || c.default_unicast.contains(loc)
                || c.metatraffic_multicast.contains(loc)
                || c.default_multicast.contains(loc);
            if hit {
                v.push(i);
            }
        }
        v
    }

    fn partitioned(&self, from: usize, to: usize) -> bool {
        self.partitions.iter().any(|p| {
            self.now >= p.from
                && self.now < p.until
                && ((p.a.contains(&from) && p.b.contains(&to))
                    || (p.b.contains(&from) && p.a.contains(&to)))
        })
    }

    fn delay(&mut self) -> u64 {
        let f = &self.faults;
        let (lat, jit, reo, reo_d) = (f.latency_ns, f.jitter_ns, f.reorder, f.reorder_delay_ns);
        let mut d = lat + self.rng.range(0, jit);
        if self.rng.chance(reo) {
            d += self.rng.range(0, reo_d);
        }
        d
    }

    fn enqueue(&mut self, at: u64, from: usize, to: usize, bytes: Vec<u8>) {
        self.seq += 1;
        let from = self.nodes[from].p.guid_prefix().0[11];
        self.queue.push(Reverse(Flight {
            at,
            seq: self.seq,
            from,
            to,
            bytes,
        }));
    }

    /// When node `to` has taken in a `len`-byte datagram arriving at `at` (its receive buffer
    /// drained at its rate), or `None` if the buffer is full and the datagram is dropped.
    fn drained_at(&mut self, to: usize, at: u64, len: usize) -> Option<u64> {
        let node = &mut self.nodes[to];
        let Some((rate, buffer)) = node.receive_limit else {
            return Some(at);
        };
        let rate = rate.max(1);
        let backlog = node.rx_busy_until.saturating_sub(at).saturating_mul(rate) / SEC;
        if backlog + len as u64 > buffer {
            node.rx_overflows += 1;
            return None;
        }
        node.rx_busy_until = node.rx_busy_until.max(at) + (len as u64).saturating_mul(SEC) / rate;
        Some(node.rx_busy_until)
    }

    /// Sends one datagram from node `from`, applying faults.
    fn send(&mut self, from: usize, dests: &[Locator], payload: &[u8]) {
        self.nodes[from].datagrams_sent += dests.len() as u64;
        let mut targets: Vec<usize> = Vec::new();
        for l in dests {
            *self.sent_to.entry(*l).or_default() += 1;
            for t in self.destinations(l) {
                if t != from && !targets.contains(&t) {
                    targets.push(t);
                }
            }
        }
        // Link capacity: serialize the datagram onto the sender's link once.
        let departure = match self.nodes[from].capacity {
            Some(bps) if bps > 0 => {
                let start = self.now.max(self.nodes[from].link_free_at);
                let tx = (payload.len() as u64).saturating_mul(SEC) / bps;
                self.nodes[from].link_free_at = start + tx;
                start + tx
            }
            _ => self.now,
        };
        for to in targets {
            self.stats.sent += 1;
            if self.partitioned(from, to) {
                self.stats.partitioned += 1;
                continue;
            }
            if self.rng.chance(self.faults.loss) {
                self.stats.lost += 1;
                if trace_enabled() {
                    let host = self.nodes[from].p.guid_prefix().0[11];
                    for (line, _) in submessage_lines(payload) {
                        if let Some(line) = line {
                            let t = self.now as f64 / 1e6;
                            eprintln!("{t:12.3} ms h{host}->h{}: LOST {line}", to + 1);
                        }
                    }
                }
                continue;
            }
            let copies = if self.rng.chance(self.faults.duplicate) {
                2
            } else {
                1
            };
            if copies == 2 {
                self.stats.duplicated += 1;
            }
            for _ in 0..copies {
                let mut bytes = payload.to_vec();
                if self.rng.chance(self.faults.corrupt) && !bytes.is_empty() {
                    let bit = self.rng.range(0, bytes.len() as u64 * 8 - 1);
                    bytes[(bit / 8) as usize] ^= 1 << (bit % 8);
                    self.stats.corrupted += 1;
                    if trace_enabled() {
                        let t = self.now as f64 / 1e6;
                        eprintln!(
                            "{t:12.3} ms h{}->h{}: corrupting bit {} of byte {} (of {})",
                            from + 1,
                            to + 1,
                            bit % 8,
                            bit / 8,
                            bytes.len()
                        );
                    }
                }
                if let Some(t) = self.tamper.as_mut() {
                    t(from, to, &mut bytes);
                }
                let at = departure + self.delay();
                let Some(at) = self.drained_at(to, at, bytes.len()) else {
                    continue;
                };
                self.enqueue(at, from, to, bytes);
            }
        }
    }

    /// Moves every node's queued datagrams into the network and collects events and samples.
    pub fn flush(&mut self) {
        for i in 0..self.nodes.len() {
            if !self.nodes[i].alive {
                // A dead node's output goes nowhere.
                while let Some(t) = self.nodes[i].p.poll_transmit() {
                    self.nodes[i].p.recycle(t.payload);
                }
                continue;
            }
            while let Some(t) = self.nodes[i].p.poll_transmit() {
                self.send(i, &t.destinations, &t.payload);
                self.nodes[i].p.recycle(t.payload);
            }
            let now = self.now;
            let n = &mut self.nodes[i];
            while let Some(e) = n.p.poll_event() {
                n.events.push((now, e));
            }
            while let Some(s) = n.p.poll_sample() {
                n.samples.push((now, s));
            }
        }
    }

    /// The time of the next network or timer action, if any.
    fn next_time(&self) -> Option<u64> {
        let mut t = self.queue.peek().map(|Reverse(f)| f.at);
        for n in self.nodes.iter().filter(|n| n.alive) {
            if let Some(d) = n.p.poll_timeout() {
                let d = d.as_nanos().max(self.now);
                t = Some(t.map_or(d, |x| x.min(d)));
            }
        }
        t
    }

    /// Runs every action due at or before `limit`, then sets the clock to `limit`.
    pub fn run_until_time(&mut self, limit: u64) {
        while let Some(t) = self.next_time() {
            if t > limit {
                break;
            }
            self.step_at(t);
        }
        self.now = self.now.max(limit);
    }

    /// Runs for `d` nanoseconds of virtual time.
    pub fn run_for(&mut self, d: u64) {
        let limit = self.now + d;
        self.run_until_time(limit);
    }

    /// Runs until `cond` holds (checked after every step) or `timeout` virtual ns elapse;
    /// returns whether `cond` held.
    pub fn run_until(&mut self, timeout: u64, mut cond: impl FnMut(&SimNet) -> bool) -> bool {
        let limit = self.now + timeout;
        loop {
            if cond(self) {
                return true;
            }
            match self.next_time() {
                Some(t) if t <= limit => self.step_at(t),
                _ => {
                    self.now = self.now.max(limit);
                    return cond(self);
                }
            }
        }
    }

    fn step_at(&mut self, t: u64) {
        self.steps += 1;
        assert!(
            self.steps <= self.max_steps,
            "seed {:#x}: step bound {} exceeded at t={}ns",
            self.seed,
            self.max_steps,
            self.now
        );
        self.now = self.now.max(t);
        let now = self.instant();
        let due = self.queue.peek().is_some_and(|Reverse(f)| f.at <= self.now);
        if due {
            let Reverse(f) = self.queue.pop().expect("peeked");
            if self.nodes[f.to].alive {
                if trace_enabled() {
                    trace_datagram(self.now, f.from, f.to, &f.bytes);
                }
                if let Some(log) = self.record.as_mut() {
                    for (line, digest) in submessage_lines(&f.bytes) {
                        log.push(Delivery {
                            at: self.now,
                            from: f.from,
                            to: f.to,
                            digest,
                            line: line.unwrap_or_else(|| "INFO".into()),
                        });
                    }
                }
                self.stats.delivered += 1;
                self.nodes[f.to].p.handle_datagram(now, &f.bytes);
            }
        } else {
            for n in self.nodes.iter_mut().filter(|n| n.alive) {
                if n.p.poll_timeout().is_some_and(|d| d.as_nanos() <= self.now) {
                    n.p.handle_timeout(now);
                }
            }
        }
        self.flush();
    }
}

fn trace_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("HALYARD_SIM_TRACE").is_some())
}

/// One line per submessage of a datagram: `(line, digest)`. The digest covers every field
/// (payload bytes included), so two runs that deliver the same submessages record the same
/// digests; INFO_TS and INFO_DST get no line of their own in traces (`line` is `None`).
fn submessage_lines(bytes: &[u8]) -> Vec<(Option<String>, u64)> {
    use halyard_core::wire::{Message, Submessage};
    let Ok(m) = Message::parse(bytes) else {
        let line = format!("unparsable ({} bytes)", bytes.len());
        return vec![(Some(line), fnv1a(bytes))];
    };
    m.submessages()
        .map(|sm| {
            let digest = fnv1a(format!("{sm:?}").as_bytes());
            let line = match sm {
                Ok(Submessage::Data(d)) => format!(
                    "DATA {:?}->{:?} sn {} ({} B)",
                    d.writer_id,
                    d.reader_id,
                    d.writer_sn.0,
                    d.payload.map_or(0, |p| p.len())
                ),
                Ok(Submessage::DataFrag(d)) => format!(
                    "DATA_FRAG {:?}->{:?} sn {} frags {}+{} of {} B",
                    d.writer_id,
                    d.reader_id,
                    d.writer_sn.0,
                    d.fragment_starting_num,
                    d.fragments_in_submessage,
                    d.sample_size
                ),
                Ok(Submessage::InfoTs(_)) | Ok(Submessage::InfoDst(_)) => return (None, digest),
                Ok(other) => format!("{other:?}"),
                Err(e) => format!("bad submessage: {e:?}"),
            };
            (Some(line), digest)
        })
        .collect()
}

/// FNV-1a, 64 bits: a digest that is the same in every run and on every machine.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Prints one datagram's submessages (see `HALYARD_SIM_TRACE`).
fn trace_datagram(now: u64, from: u8, to: usize, bytes: &[u8]) {
    let t = now as f64 / 1e6;
    for (line, _) in submessage_lines(bytes) {
        if let Some(line) = line {
            eprintln!("{t:12.3} ms h{from}->h{}: {line}", to + 1);
        }
    }
}

/// Seeds to run: `HALYARD_SIM_SEED` alone, or `HALYARD_SIM_SEEDS` (default `default_n`) seeds.
pub fn seeds(default_n: u64) -> Vec<u64> {
    if let Ok(s) = std::env::var("HALYARD_SIM_SEED") {
        let s = s.trim();
        let v = match s.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16),
            None => s.parse(),
        };
        return vec![v.expect("HALYARD_SIM_SEED must be a decimal or 0x-hex u64")];
    }
    let n = std::env::var("HALYARD_SIM_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_n);
    let mut r = Rng::new(0xA11CE);
    (0..n).map(|_| r.next_u64()).collect()
}

/// The commit under test (for failure reports): `git rev-parse --short HEAD`, or "unknown".
fn commit() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// Runs `body` for each seed; on panic prints the seed, the commit and how to replay it, and
/// re-raises.
pub fn for_each_seed(name: &str, default_n: u64, body: impl Fn(u64)) {
    for_each_seed_in(name, seeds(default_n), body)
}

/// As [`for_each_seed`], over one seed in `divisor` of those `HALYARD_SIM_SEEDS` asks for
/// (at least `min`): for tests that cost many times a usual one per seed.
pub fn for_each_seed_scaled(name: &str, divisor: u64, min: u64, body: impl Fn(u64)) {
    let all = seeds(min * divisor);
    let n = (all.len() as u64 / divisor).max(min) as usize;
    for_each_seed_in(name, all.into_iter().take(n).collect(), body)
}

fn for_each_seed_in(name: &str, seeds: Vec<u64>, body: impl Fn(u64)) {
    for seed in seeds {
        if let Err(e) = catch_unwind(AssertUnwindSafe(|| body(seed))) {
            eprintln!(
                "{name}: seed = {seed:#x} at commit {}  (replay: HALYARD_SIM_SEED={seed:#x} cargo test --release -p halyard-core --test sim {name})",
                commit()
            );
            resume_unwind(e);
        }
    }
}

/// Reliable KEEP_ALL QoS for a writer.
pub fn reliable_keep_all_writer() -> EndpointQos {
    let mut q = EndpointQos::writer_default();
    q.history = History::KeepAll;
    q.reliability.kind = ReliabilityKind::Reliable;
    q
}

/// Reliable KEEP_ALL QoS for a reader.
pub fn reliable_keep_all_reader() -> EndpointQos {
    let mut q = EndpointQos::reader_default();
    q.history = History::KeepAll;
    q.reliability.kind = ReliabilityKind::Reliable;
    q
}

/// A payload carrying `index`: CDR encapsulation header, index as 8 LE bytes, then `len - 8`
/// bytes derived from the index (so corruption or mix-ups are detectable).
///
/// `len` is rounded up to a multiple of 4: a DATA submessage is padded to 4 bytes on the wire
/// and the receiver cannot tell padding from payload (XCDR records it in the encapsulation
/// options, which is the serializer's job, not the core's), so unaligned payloads would come
/// back with up to 3 extra zero bytes.
pub fn indexed_payload(index: u64, len: usize) -> Vec<u8> {
    let len = len.max(8).next_multiple_of(4);
    let mut v = Vec::with_capacity(4 + len);
    v.extend_from_slice(&[0, 1, 0, 0]);
    v.extend_from_slice(&index.to_le_bytes());
    let mut r = Rng::new(index.wrapping_mul(0x2545_F491_4F6C_DD1D));
    let mut word = 0u64;
    for j in 0..len - 8 {
        if j % 8 == 0 {
            word = r.next_u64();
        }
        v.push((word >> (8 * (j % 8))) as u8);
    }
    v
}

/// The index in an `indexed_payload`, if its content is intact.
/// The indices (see [`indexed_payload`]) of the samples reader `r` of node `node` got, in
/// delivery order.
pub fn indices_delivered(net: &SimNet, node: usize, r: halyard_core::wire::EntityId) -> Vec<u64> {
    net.node(node)
        .samples
        .iter()
        .filter(|(_, s)| s.reader == r)
        .map(|(_, s)| parse_indexed(&s.payload).expect("intact"))
        .collect()
}

pub fn parse_indexed(p: &[u8]) -> Option<u64> {
    if p.len() < 12 || p[..4] != [0, 1, 0, 0] {
        return None;
    }
    let index = u64::from_le_bytes(p[4..12].try_into().ok()?);
    (indexed_payload(index, p.len() - 4) == p).then_some(index)
}

/// Duration helper.
pub fn dur_ms(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

/// Outcome of [`reliable_stream`].
pub struct StreamOutcome {
    pub net: SimNet,
    pub writer_node: usize,
    pub reader_node: usize,
    pub writer: halyard_core::wire::EntityId,
    pub reader: halyard_core::wire::EntityId,
    /// Payload indices delivered to the reader, in delivery order (`None`: content not intact).
    pub delivered: Vec<Option<u64>>,
}

/// Reliable KEEP_ALL stream of `n` samples from node 1 to node 2 under `faults`, then the
/// network heals and the run continues until everything is delivered and acknowledged (or
/// `converge_ns` of virtual time pass). Sample sizes are drawn from the seed in 8..2000 bytes.
/// The writer's flow-control high-water mark is lowered to 64 KiB so `Err(Full)` happens.
pub fn reliable_stream(seed: u64, faults: Faults, n: u64, converge_ns: u64) -> StreamOutcome {
    reliable_stream_batched(seed, faults, n, converge_ns, None)
}

/// [`reliable_stream`] with the writer batching under `batch`.
pub fn reliable_stream_batched(
    seed: u64,
    faults: Faults,
    n: u64,
    converge_ns: u64,
    batch: Option<halyard_core::BatchPolicy>,
) -> StreamOutcome {
    use halyard_core::{NewChange, ReaderSpec, WriteError, WriterSpec};
    let mut app = Rng::new(seed ^ 0xA5A5_5A5A_0F0F_F0F0);
    let mut net = SimNet::new(seed, faults);
    let mut c1 = node_config(1);
    c1.writer_high_water_bytes = 64 * 1024;
    let a = net.add_node(c1);
    let b = net.add_node(node_config(2));
    let now = net.instant();
    let topic = |s: &str| s.to_string();
    let w = net.p(a).create_writer(
        now,
        WriterSpec {
            topic_name: topic("Stream"),
            type_name: topic("Blob"),
            qos: reliable_keep_all_writer(),
            has_key: false,
        },
    );
    let r = net.p(b).create_reader(
        now,
        ReaderSpec {
            topic_name: topic("Stream"),
            type_name: topic("Blob"),
            qos: reliable_keep_all_reader(),
            has_key: false,
        },
    );
    net.p(a)
        .set_writer_batching(w, batch)
        .expect("batching on a known writer");
    net.flush();
    // Corruption starts once the endpoints matched. A bit flip in a SEDP announcement that
    // still parses (in a topic name or a QoS value) cannot be detected: RTPS has no checksum
    // of its own and relies on UDP's, which catches every single-bit error on a real network.
    // Such an announcement leaves the endpoints unmatched for good (seed 0x5d6fd5069c5381b6),
    // which is not the property under test. The damage that can be detected in discovery is
    // proven repaired in sedp_corrupt and spdp_lease_corrupt.
    let corrupt = std::mem::take(&mut net.faults.corrupt);
    let matched = net.run_until(120 * SEC, |n| {
        n.node(a)
            .saw(|e| matches!(e, Event::PublicationMatched { matched: true, .. }))
            && n.node(b)
                .saw(|e| matches!(e, Event::SubscriptionMatched { matched: true, .. }))
    });
    assert!(
        matched,
        "seed {seed:#x}: writer and reader did not match within 120 s virtual; {:?}",
        net.stats
    );
    net.faults.corrupt = corrupt;
    for i in 0..n {
        let len = app.range(8, 2000) as usize;
        let change = NewChange {
            kind: halyard_core::ChangeKind::Alive,
            key_hash: [0; 16],
            payload: std::sync::Arc::new(indexed_payload(i, len)),
            timestamp: None,
            original: None,
        };
        let mut tries = 0u32;
        loop {
            let now = net.instant();
            match net.write(a, now, w, change.clone()) {
                Ok(sn) => {
                    assert_eq!(
                        sn.0,
                        i as i64 + 1,
                        "seed {seed:#x}: unexpected sequence number"
                    );
                    break;
                }
                Err(WriteError::Full) => {
                    tries += 1;
                    assert!(
                        tries < 200_000,
                        "seed {seed:#x}: write {i} blocked for 200 s virtual; {:?}",
                        net.stats
                    );
                    net.flush();
                    net.run_for(MS);
                }
                Err(e) => panic!("seed {seed:#x}: write {i} failed: {e:?}"),
            }
        }
        net.flush();
        net.run_for(app.range(0, 200_000));
    }
    net.faults = Faults::none();
    net.partitions.clear();
    // With corruption a sample may be legitimately skipped (a bit flip in an ACKNACK or GAP
    // cannot be detected without a checksum), so convergence means "all acknowledged" then.
    let need = if net.stats.corrupted > 0 { 0 } else { n };
    let done = net.run_until(converge_ns, |net| {
        net.node(b).samples.len() as u64 >= need && net.nodes[a].p.writer_all_acked(w)
    });
    let delivered = net
        .node(b)
        .samples
        .iter()
        .map(|(_, s)| parse_indexed(&s.payload))
        .collect();
    let out = StreamOutcome {
        net,
        writer_node: a,
        reader_node: b,
        writer: w,
        reader: r,
        delivered,
    };
    if !done {
        let got = out.delivered.len();
        let acked = out.net.nodes[a].p.writer_all_acked(w);
        panic!("seed {seed:#x}: no convergence within {converge_ns} ns after healing: {got}/{n} delivered, all_acked={acked}, {:?}", out.net.stats);
    }
    out
}

/// Asserts the reliable KEEP_ALL property: indices 0..n delivered exactly once, in order.
pub fn assert_exactly_once_in_order(seed: u64, delivered: &[Option<u64>], n: u64) {
    for (pos, d) in delivered.iter().enumerate() {
        assert_eq!(*d, Some(pos as u64), "seed {seed:#x}: delivery #{pos} carries {d:?} (expected index {pos}; None = corrupted content)");
    }
    assert_eq!(
        delivered.len() as u64,
        n,
        "seed {seed:#x}: delivered {} samples, expected {n}",
        delivered.len()
    );
}

/// The safety property that survives undetectable corruption: samples whose content is intact
/// and that arrive at their own sequence number are delivered in strictly increasing order, at
/// most once. A delivery with corrupted content, or with intact content at another sequence
/// number (a bit flip in the DATA header: RTPS has no checksum of its own, UDP's catches this
/// on real networks), is counted as corrupted. Returns how many deliveries were.
pub fn assert_intact_in_order(seed: u64, out: &StreamOutcome) -> usize {
    let mut last: Option<u64> = None;
    let mut bad = 0;
    for (pos, (_, s)) in out.net.node(out.reader_node).samples.iter().enumerate() {
        let Some(i) = parse_indexed(&s.payload).filter(|&i| s.sn.0 == i as i64 + 1) else {
            bad += 1;
            continue;
        };
        assert!(
            last.is_none_or(|l| i > l),
            "seed {seed:#x}: delivery #{pos}: index {i} after {last:?}"
        );
        last = Some(i);
    }
    bad
}

/// A default-QoS writer on node `a` and reader on node `b`, on topic `Square` / type
/// `ShapeType`, created now and announced (the network is flushed); returns (writer, reader).
/// Runs until node `a` reports writer `w` matched and node `b` reader `r` matched, at most
/// `timeout` virtual ns; returns whether both did.
pub fn run_until_pair_matched(
    net: &mut SimNet,
    (a, w): (usize, halyard_core::wire::EntityId),
    (b, r): (usize, halyard_core::wire::EntityId),
    timeout: u64,
) -> bool {
    net.run_until(timeout, |n| {
        n.node(a).saw(|e| matches!(e, Event::PublicationMatched { writer, matched: true, .. } if *writer == w))
            && n.node(b).saw(|e| matches!(e, Event::SubscriptionMatched { reader, matched: true, .. } if *reader == r))
    })
}

pub fn square_pair(
    net: &mut SimNet,
    a: usize,
    b: usize,
) -> (halyard_core::wire::EntityId, halyard_core::wire::EntityId) {
    let now = net.instant();
    let w = net.p(a).create_writer(
        now,
        halyard_core::WriterSpec {
            topic_name: "Square".into(),
            type_name: "ShapeType".into(),
            qos: EndpointQos::writer_default(),
            has_key: true,
        },
    );
    let r = net.p(b).create_reader(
        now,
        halyard_core::ReaderSpec {
            topic_name: "Square".into(),
            type_name: "ShapeType".into(),
            qos: EndpointQos::reader_default(),
            has_key: true,
        },
    );
    net.flush();
    (w, r)
}

/// Two nodes (indices 0 and 1) with a writer on node 0 and a reader on node 1 on topic
/// `topic`/`Blob`; runs until both sides report the match (panics with the seed otherwise).
pub fn matched_pair(
    net: &mut SimNet,
    topic: &str,
    wq: EndpointQos,
    rq: EndpointQos,
) -> (halyard_core::wire::EntityId, halyard_core::wire::EntityId) {
    let now = net.instant();
    let w = net.p(0).create_writer(
        now,
        halyard_core::WriterSpec {
            topic_name: topic.into(),
            type_name: "Blob".into(),
            qos: wq,
            has_key: false,
        },
    );
    let r = net.p(1).create_reader(
        now,
        halyard_core::ReaderSpec {
            topic_name: topic.into(),
            type_name: "Blob".into(),
            qos: rq,
            has_key: false,
        },
    );
    net.flush();
    let seed = net.seed;
    let ok = net.run_until(120 * SEC, |n| {
        n.node(0)
            .saw(|e| matches!(e, Event::PublicationMatched { matched: true, .. }))
            && n.node(1)
                .saw(|e| matches!(e, Event::SubscriptionMatched { matched: true, .. }))
    });
    assert!(
        ok,
        "seed {seed:#x}: no match within 120 s virtual; {:?}",
        net.stats
    );
    (w, r)
}

/// Writes `payload` from `writer` on node `node`, retrying on `Err(Full)` as time advances.
pub fn write_retrying(
    net: &mut SimNet,
    node: usize,
    writer: halyard_core::wire::EntityId,
    key_hash: [u8; 16],
    payload: Vec<u8>,
) -> i64 {
    let change = halyard_core::NewChange {
        kind: halyard_core::ChangeKind::Alive,
        key_hash,
        payload: std::sync::Arc::new(payload),
        timestamp: None,
        original: None,
    };
    for _ in 0..1_000_000 {
        let now = net.instant();
        match net.write(node, now, writer, change.clone()) {
            Ok(sn) => {
                net.flush();
                return sn.0;
            }
            Err(halyard_core::WriteError::Full) => net.run_for(MS),
            Err(e) => panic!("seed {:#x}: write failed: {e:?}", net.seed),
        }
    }
    panic!("seed {:#x}: write blocked for 1000 s virtual", net.seed);
}
