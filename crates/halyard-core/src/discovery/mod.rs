//! Discovery (RTPS 2.5 §8.5): SPDP announcements and leases, SEDP publication and subscription
//! exchange over the builtin reliable endpoints, and endpoint matching.
//!
//! Builtin SEDP endpoints reuse the ordinary writer and reader machinery (reliable,
//! TRANSIENT_LOCAL, KEEP_LAST 1 per endpoint GUID); their received samples are routed here
//! instead of to the application. This module holds the builtin endpoints, the choice of a
//! peer's locators and the bookkeeping of remote participants; [`spdp`] the participant
//! announcements, [`sedp`] the endpoint announcements, [`endpoints`] the matching of endpoints,
//! [`qos_change`] QoS changed at run time, [`content_filter`] the content filters readers
//! announce and writers apply.

mod content_filter;
mod endpoints;
mod qos_change;
mod sedp;
mod spdp;
pub mod typelookup;

pub use qos_change::QosChangeError;
use sedp::WriterGone;

use crate::config::Ipv4Net;
use crate::event::Event;
use crate::participant::Participant;
use crate::reader::{Reader, ReaderSpec, WriterProxy};
use crate::time::Instant;
use crate::writer::{ReaderProxy, Writer, WriterSpec};
use halyard_wire::discovery::{builtin_endpoint as be, EndpointData, ParticipantData};
use halyard_wire::qos::{DurabilityKind, EndpointQos, History, Reliability, ReliabilityKind};
use halyard_wire::{EntityId, Guid, GuidPrefix, Locator};

fn builtin_qos() -> EndpointQos {
    let mut q = EndpointQos::writer_default();
    q.durability = DurabilityKind::TransientLocal;
    q.history = History::KeepLast(1);
    q.reliability = Reliability {
        kind: ReliabilityKind::Reliable,
        max_blocking_time: halyard_wire::Duration::from_nanos(100_000_000),
    };
    q
}

/// The builtin writer/reader pairs matched with every remote participant that announces
/// them: SEDP publications, SEDP subscriptions, and the participant message (liveliness)
/// endpoints.
const BUILTIN_PAIRS: [(EntityId, EntityId, u32, u32); 3] = [
    (
        EntityId::SEDP_PUBLICATIONS_WRITER,
        EntityId::SEDP_PUBLICATIONS_READER,
        be::PUBLICATIONS_ANNOUNCER,
        be::PUBLICATIONS_DETECTOR,
    ),
    (
        EntityId::SEDP_SUBSCRIPTIONS_WRITER,
        EntityId::SEDP_SUBSCRIPTIONS_READER,
        be::SUBSCRIPTIONS_ANNOUNCER,
        be::SUBSCRIPTIONS_DETECTOR,
    ),
    (
        EntityId::P2P_MESSAGE_WRITER,
        EntityId::P2P_MESSAGE_READER,
        be::PARTICIPANT_MESSAGE_DATA_WRITER,
        be::PARTICIPANT_MESSAGE_DATA_READER,
    ),
];

fn udp_only(v: &[Locator]) -> Vec<Locator> {
    v.iter()
        .copied()
        .filter(|l| l.as_udpv4().is_some())
        .collect()
}

/// Of a peer's unicast locators, the one to use: the first in a network we reach directly
/// (`reachable`: our interface's subnet, loopback when we use loopback); when none is, all of
/// them (we cannot tell which works). With no networks known, all of them.
fn select_unicast(candidates: &[Locator], reachable: &[Ipv4Net]) -> Vec<Locator> {
    let udp = udp_only(candidates);
    let direct = udp.iter().find(|l| {
        l.as_udpv4()
            .is_some_and(|(ip, _)| reachable.iter().any(|n| n.contains(ip)))
    });
    match direct {
        Some(l) => vec![*l],
        None => udp,
    }
}

impl Participant {
    pub(crate) fn create_builtin_endpoints(&mut self) {
        for (w, r, _, _) in BUILTIN_PAIRS {
            self.create_builtin_pair(w, r);
        }
        self.create_typelookup_endpoints();
    }

    /// Creates builtin writer `w` and reader `r` that are reliable, VOLATILE and keyless (the
    /// TypeLookup service's, see [`typelookup`]).
    pub(crate) fn create_volatile_builtin_pair(&mut self, w: EntityId, r: EntityId) {
        let mut qos = builtin_qos();
        qos.durability = DurabilityKind::Volatile;
        qos.history = History::KeepLast(64);
        let spec = WriterSpec {
            topic_name: String::new(),
            type_name: String::new(),
            qos: qos.clone(),
            has_key: false,
        };
        let writer = Writer::new(Guid::new(self.prefix, w), spec, true, self.cfg.hash_seed);
        self.writers.insert(w, writer);
        let rspec = ReaderSpec {
            topic_name: String::new(),
            type_name: String::new(),
            qos,
            has_key: false,
        };
        self.readers.insert(
            r,
            Reader::new(Guid::new(self.prefix, r), rspec, self.cfg.hash_seed),
        );
    }

    /// Creates builtin writer `w` and reader `r` (reliable, TRANSIENT_LOCAL, KEEP_LAST 1 per
    /// key): the SEDP and participant-message endpoints, plain or secure.
    pub(crate) fn create_builtin_pair(&mut self, w: EntityId, r: EntityId) {
        let spec = WriterSpec {
            topic_name: String::new(),
            type_name: String::new(),
            qos: builtin_qos(),
            has_key: true,
        };
        let writer = Writer::new(Guid::new(self.prefix, w), spec, true, self.cfg.hash_seed);
        self.writers.insert(w, writer);
        let rspec = ReaderSpec {
            topic_name: String::new(),
            type_name: String::new(),
            qos: builtin_qos(),
            has_key: true,
        };
        self.readers.insert(
            r,
            Reader::new(Guid::new(self.prefix, r), rspec, self.cfg.hash_seed),
        );
    }

    /// Starts leaving: deletes every application writer (those whose reliable readers have
    /// not acknowledged everything linger, see [`Participant::delete_writer`]) and reader. Call
    /// [`Participant::shutdown`] once [`Participant::lingering_writers`] is zero or the
    /// linger time is up.
    pub fn begin_shutdown(&mut self, now: Instant) {
        let ids: Vec<EntityId> = self.user_writers();
        for id in ids {
            self.delete_writer(now, id);
        }
        let ids: Vec<EntityId> = self.user_readers();
        for id in ids {
            self.delete_reader(now, id);
        }
    }

    /// Leaves now: what [`Participant::begin_shutdown`] does, then every writer still
    /// lingering is withdrawn, and the SPDP announcement and every SEDP one are disposed.
    pub fn shutdown(&mut self, now: Instant) {
        self.begin_shutdown(now);
        self.finish_lingering(now, true);
        self.announce_departure();
    }

    /// Of a peer's unicast locators, the one to use (see [`select_unicast`]).
    pub(crate) fn select_unicast(&self, candidates: &[Locator]) -> Vec<Locator> {
        select_unicast(candidates, &self.cfg.reachable_networks)
    }

    pub(crate) fn metatraffic_locators(&self, data: &ParticipantData) -> Vec<Locator> {
        let u = self.select_unicast(&data.metatraffic_unicast);
        if u.is_empty() {
            udp_only(&data.metatraffic_multicast)
        } else {
            u
        }
    }

    /// Brings the builtin SEDP proxies for a remote participant in line with its SPDP data:
    /// adds the ones it announces, drops the ones it no longer announces, and points the
    /// remaining ones at its current metatraffic locators. Idempotent.
    pub(crate) fn match_builtin(&mut self, now: Instant, data: &ParticipantData) {
        self.match_builtin_pairs(now, data, &BUILTIN_PAIRS);
        self.match_builtin_pairs(now, data, &typelookup::TL_PAIRS);
    }

    /// [`Participant::match_builtin`] for the pairs given; returns the pairings it added
    /// (local endpoint, remote endpoint).
    pub(crate) fn match_builtin_pairs(
        &mut self,
        now: Instant,
        data: &ParticipantData,
        pairs: &[(EntityId, EntityId, u32, u32)],
    ) -> Vec<(EntityId, Guid)> {
        let locs = self.metatraffic_locators(data);
        let prefix = data.guid.prefix;
        let mut added = Vec::new();
        for &(w, r, announcer, detector) in pairs {
            let rg = Guid::new(prefix, r);
            if let Some(wr) = self.writers.get_mut(&w) {
                if data.builtin_endpoints & detector == 0 {
                    wr.remove_proxy(&rg);
                } else if !wr.set_proxy_locators(&rg, &locs, None) {
                    wr.add_proxy(now, ReaderProxy::new(rg, locs.clone(), true), true);
                    added.push((w, rg));
                    // Our announcements go to the new peer at once, with a HEARTBEAT, rather
                    // than after its first ACKNACK: on a lossy link that saves a round trip.
                    // (A VOLATILE builtin writer, TypeLookup's, owes a new peer nothing.)
                    if wr.spec.qos.durability != DurabilityKind::Volatile {
                        wr.push_history(now, &mut self.out, &self.cfg, rg);
                    }
                }
            }
            let wg = Guid::new(prefix, w);
            if data.builtin_endpoints & announcer == 0 {
                if let Some(rd) = self.readers.get_mut(&r) {
                    rd.proxies.remove(&wg);
                }
                self.writer_index.remove(&wg);
                continue;
            }
            let known = match self
                .readers
                .get_mut(&r)
                .and_then(|rd| rd.proxies.get_mut(&wg))
            {
                Some(p) => {
                    p.locators = locs.clone();
                    true
                }
                None => false,
            };
            if known {
                continue;
            }
            let epoch = self.next_count_epoch();
            if let Some(rd) = self.readers.get_mut(&r) {
                rd.proxies
                    .insert(wg, WriterProxy::new(wg, locs.clone(), true, false, epoch));
                let idx = self.writer_index.entry(wg).or_default();
                if !idx.contains(&r) {
                    idx.push(r);
                }
                added.push((r, wg));
            }
            // A pre-emptive ACKNACK makes the remote writer send its history promptly.
            self.send_acknack(now, r, wg);
        }
        added
    }

    /// Re-derives the locators of the proxies of a remote participant's user endpoints (they
    /// may come from its SPDP default locators, which changed).
    fn refresh_user_locators(&mut self, prefix: GuidPrefix) {
        let lo = Guid::new(prefix, EntityId([0; 4]));
        let hi = Guid::new(prefix, EntityId([0xff; 4]));
        let readers: Vec<(Guid, Vec<Locator>, Option<Locator>)> = self
            .remote_readers
            .range(lo..=hi)
            .map(|(g, ed)| (*g, self.user_locators(ed), self.user_multicast(ed)))
            .collect();
        for (g, locs, mc) in readers {
            for w in self.writers.values_mut().filter(|w| !w.builtin) {
                w.set_proxy_locators(&g, &locs, mc);
            }
        }
        let writers: Vec<(Guid, Vec<Locator>)> = self
            .remote_writers
            .range(lo..=hi)
            .map(|(g, ed)| (*g, self.user_locators(ed)))
            .collect();
        for (g, locs) in writers {
            for r in self.writer_index.get(&g).into_iter().flatten() {
                if let Some(p) = self
                    .readers
                    .get_mut(r)
                    .and_then(|rd| rd.proxies.get_mut(&g))
                {
                    p.locators = locs.clone();
                }
            }
        }
    }

    /// Forgets remote participant `prefix`: it said `goodbye` (an SPDP disposal), or its lease
    /// expired.
    pub(crate) fn remove_participant(&mut self, now: Instant, prefix: GuidPrefix, goodbye: bool) {
        if self.remote.remove(&prefix).is_none() {
            return;
        }
        self.unmatch_builtin(now, prefix, goodbye);
        self.forget_security_peer(prefix);
        self.push_event(Event::ParticipantLost(prefix));
    }

    /// Forgets a remote participant's endpoints and unmatches its builtin ones (it left,
    /// saying `goodbye` or not, or the security plugin no longer admits it).
    pub(crate) fn unmatch_builtin(&mut self, now: Instant, prefix: GuidPrefix, goodbye: bool) {
        let writers: Vec<Guid> = self
            .remote_writers
            .range(Guid::new(prefix, EntityId([0; 4]))..=Guid::new(prefix, EntityId([0xff; 4])))
            .map(|(g, _)| *g)
            .collect();
        for g in writers {
            self.forget_remote_writer(now, g, WriterGone::ParticipantGone { goodbye });
        }
        let readers: Vec<Guid> = self
            .remote_readers
            .range(Guid::new(prefix, EntityId([0; 4]))..=Guid::new(prefix, EntityId([0xff; 4])))
            .map(|(g, _)| *g)
            .collect();
        for g in readers {
            self.forget_remote_reader(g);
        }
        let secure = crate::endpoint_security::SECURE_BUILTIN_PAIRS;
        let all = BUILTIN_PAIRS
            .into_iter()
            .chain(secure)
            .chain(typelookup::TL_PAIRS);
        for (w, r, _, _) in all {
            if let Some(wr) = self.writers.get_mut(&w) {
                wr.remove_proxy(&Guid::new(prefix, r));
            }
            let wg = Guid::new(prefix, w);
            if let Some(rd) = self.readers.get_mut(&r) {
                rd.proxies.remove(&wg);
            }
            self.writer_index.remove(&wg);
        }
    }

    /// Discovered remote participants.
    pub fn remote_participants(&self) -> Vec<ParticipantData> {
        self.remote.values().map(|r| r.data.clone()).collect()
    }

    /// Discovered remote writers.
    pub fn remote_publications(&self) -> Vec<EndpointData> {
        self.remote_writers.values().cloned().collect()
    }

    /// Discovered remote readers.
    pub fn remote_subscriptions(&self) -> Vec<EndpointData> {
        self.remote_readers.values().cloned().collect()
    }
}
