//! ddsperf's view of its peers: participants whose USER_DATA starts with `DDSPerf:`, a pong
//! writer in each one's GUID partition, and the check that each peer matched every endpoint it
//! should within 5 s.

use super::{lock, Perf, PerfType};
use halyard::{DataWriter, GuidPrefix, PublisherQos};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// ddsperf's GUID partition string: 32 hex digits in 4 groups of 8 joined by `_`.
pub fn guid_partition(prefix: GuidPrefix) -> String {
    let mut b = [0u8; 16];
    b[..12].copy_from_slice(&prefix.0);
    b[12..].copy_from_slice(&[0, 0, 1, 0xc1]);
    let hex: Vec<String> = b
        .chunks(4)
        .map(|c| c.iter().map(|x| format!("{x:02x}")).collect())
        .collect();
    hex.join("_")
}

// ddsperf's match mask bits: which of a peer's endpoints matched ours.
const MM_RD_DATA: u32 = 1;
const MM_RD_PING: u32 = 2;
const MM_RD_PONG: u32 = 4;
const MM_WR_DATA: u32 = 8;
const MM_WR_PING: u32 = 16;
const MM_WR_PONG: u32 = 32;
const MM_ALL: u32 = 63;

pub(super) fn match_mask_names(mask: u32) -> String {
    let names = [
        (MM_RD_DATA, "data reader"),
        (MM_RD_PING, "ping reader"),
        (MM_RD_PONG, "pong reader"),
        (MM_WR_DATA, "data writer"),
        (MM_WR_PING, "ping writer"),
        (MM_WR_PONG, "pong writer"),
    ];
    names
        .iter()
        .filter(|(b, _)| mask & b != 0)
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// How long a discovered peer has to match all endpoints (ddsperf: 5 s).
const MATCH_DEADLINE: Duration = Duration::from_secs(5);

/// A ddsperf peer.
pub(super) struct Peer<T: PerfType> {
    pub(super) name: String,
    pub(super) pong_writer: Arc<DataWriter<T>>,
    /// The pong writer's publisher, in the peer's GUID partition.
    _publisher: halyard::Publisher,
    has_reader: bool,
    tdisc: Instant,
    /// Expected endpoints of this peer not matched yet (MM_* bits).
    pub(super) unmatched: u32,
    deadline_passed: bool,
}

/// What a peer's USER_DATA `DDSPerf:S:PID:HOST` says: whether it subscribes, its process
/// id and host.
fn parse_user_data(user_data: &[u8]) -> Option<(bool, i64, String)> {
    let ud = String::from_utf8_lossy(user_data).to_string();
    let mut parts = ud.splitn(4, ':');
    if parts.next() != Some("DDSPerf") {
        return None;
    }
    let has_reader = parts.next()?.parse::<i32>().ok()?;
    let pid = parts.next()?.parse::<i64>().ok()?;
    let host = parts.next()?.to_string();
    Some((has_reader != 0, pid, host))
}

impl<T: PerfType> Perf<T> {
    /// Tracks ddsperf peers (user data `DDSPerf:S:PID:HOST`): a pong writer in each one's
    /// GUID partition, `new`/`gone` lines. Returns true when the peer set changed.
    pub(super) fn discover(&self, pong_t: &halyard::Topic<T>) -> bool {
        // A listener answers nobody, so it has no peers to track or match.
        if self.a.listen {
            return false;
        }
        let mut changed = false;
        let discovered = self.dp.discovered_participants();
        for p in &discovered {
            let prefix = p.guid.prefix;
            let Some((has_reader, pid, host)) = parse_user_data(&p.user_data) else {
                continue;
            };
            if prefix == self.own || lock(&self.peers).contains_key(&prefix) {
                continue;
            }
            let name = format!("{host}:{}", pid as u32);
            println!("{} participant {name}: new", self.prefix);
            let q = super::writer_qos(&self.a, &super::keep_last1(&self.a));
            let publisher = self
                .dp
                .create_publisher(PublisherQos::default().partition([guid_partition(prefix)]));
            match publisher.create_datawriter(pong_t, q) {
                Ok(w) => {
                    let mut unmatched = MM_ALL;
                    if !has_reader {
                        unmatched &= !MM_RD_DATA;
                    }
                    if !self.a.sub {
                        unmatched &= !MM_WR_DATA;
                    }
                    let peer = Peer {
                        name,
                        pong_writer: Arc::new(w),
                        _publisher: publisher,
                        has_reader,
                        tdisc: Instant::now(),
                        unmatched,
                        deadline_passed: false,
                    };
                    lock(&self.peers).insert(prefix, peer);
                    changed = true;
                }
                Err(e) => println!("{} error: cannot create pong writer: {e}", self.prefix),
            }
        }
        lock(&self.peers).retain(|k, v| {
            let keep = discovered.iter().any(|p| p.guid.prefix == *k);
            if !keep {
                println!("{} participant {}: gone", self.prefix, v.name);
                changed = true;
            }
            keep
        });
        changed
    }

    /// ddsperf's matching check: every expected endpoint of every peer must match within
    /// 5 s of discovering it (`failed to match in 5.000s` otherwise). Matches are sticky.
    pub(super) fn check_matching(&self) {
        let mut peers = lock(&self.peers);
        if peers.values().all(|p| p.unmatched == 0) {
            return;
        }
        let pubs = self.dp.discovered_publications();
        let subs = self.dp.discovered_subscriptions();
        let own_part = guid_partition(self.own);
        let [data, ping, pong] = &self.names;
        for (prefix, p) in peers.iter_mut() {
            if p.unmatched == 0 {
                continue;
            }
            let peer_part = guid_partition(*prefix);
            let mut found = 0;
            for e in pubs.iter().filter(|e| e.guid.prefix == *prefix) {
                if &e.topic_name == data && self.a.sub {
                    found |= MM_WR_DATA;
                } else if &e.topic_name == ping {
                    found |= MM_WR_PING;
                } else if &e.topic_name == pong && e.qos.partition.contains(&own_part) {
                    found |= MM_WR_PONG;
                }
            }
            for e in subs.iter().filter(|e| e.guid.prefix == *prefix) {
                if &e.topic_name == data && p.has_reader {
                    found |= MM_RD_DATA;
                } else if &e.topic_name == ping {
                    found |= MM_RD_PING;
                } else if &e.topic_name == pong && e.qos.partition.contains(&peer_part) {
                    found |= MM_RD_PONG;
                }
            }
            p.unmatched &= !found;
            if p.unmatched != 0 && !p.deadline_passed && p.tdisc.elapsed() > MATCH_DEADLINE {
                p.deadline_passed = true;
                println!(
                    "{} participant {}: failed to match in {:.3}s",
                    self.prefix,
                    p.name,
                    MATCH_DEADLINE.as_secs_f64()
                );
            }
        }
    }

    /// Peers that matched every endpoint they should.
    pub(super) fn matched_peers(&self) -> usize {
        lock(&self.peers)
            .values()
            .filter(|p| p.unmatched == 0)
            .count()
    }
}
