//! Discovery (RTPS 2.5 §8.5): SPDP announcements and leases, SEDP publication and subscription
//! exchange over the builtin reliable endpoints, and endpoint matching.
//!
//! Builtin SEDP endpoints reuse the ordinary writer and reader machinery (reliable,
//! TRANSIENT_LOCAL, KEEP_LAST 1 per endpoint GUID); their received samples are routed here
//! instead of to the application. This module holds SPDP and the builtin endpoints; [`sedp`]
//! the endpoint announcements, [`endpoints`] the matching of endpoints.

mod endpoints;
mod sedp;

use sedp::WriterGone;

use crate::event::Event;
use crate::participant::{Participant, RemoteParticipant};
use crate::reader::{Reader, ReaderSpec, WriterProxy};
use crate::time::{wire_to_std, Instant};
use crate::writer::{ReaderProxy, Writer, WriterSpec};
use halyard_wire::discovery::{
    builtin_endpoint as be, parse_key_guid, EndpointData, ParticipantData,
};
use halyard_wire::param::{
    pid, ParameterList, ParameterListWriter, STATUS_INFO_DISPOSED, STATUS_INFO_UNREGISTERED,
};
use halyard_wire::qos::{DurabilityKind, EndpointQos, History, Reliability, ReliabilityKind};
use halyard_wire::{Data, EntityId, Guid, GuidPrefix, Locator, ProtocolVersion, VendorId};

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

const SEDP_PAIRS: [(EntityId, EntityId, u32, u32); 2] = [
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
];

fn udp_only(v: &[Locator]) -> Vec<Locator> {
    v.iter()
        .copied()
        .filter(|l| l.as_udpv4().is_some())
        .collect()
}

impl Participant {
    pub(crate) fn create_builtin_endpoints(&mut self) {
        for (w, r, _, _) in SEDP_PAIRS {
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
            self.readers
                .insert(r, Reader::new(Guid::new(self.prefix, r), rspec));
        }
    }

    fn own_participant_data(&self) -> ParticipantData {
        ParticipantData {
            guid: Guid::new(self.prefix, EntityId::PARTICIPANT),
            protocol_version: ProtocolVersion::V2_5,
            vendor_id: VendorId::HALYARD,
            domain_id: Some(self.cfg.domain_id),
            domain_tag: String::new(),
            expects_inline_qos: false,
            metatraffic_unicast: self.cfg.metatraffic_unicast.clone(),
            metatraffic_multicast: self.cfg.metatraffic_multicast.clone(),
            default_unicast: self.cfg.default_unicast.clone(),
            default_multicast: self.cfg.default_multicast.clone(),
            builtin_endpoints: be::PARTICIPANT_ANNOUNCER
                | be::PARTICIPANT_DETECTOR
                | be::PUBLICATIONS_ANNOUNCER
                | be::PUBLICATIONS_DETECTOR
                | be::SUBSCRIPTIONS_ANNOUNCER
                | be::SUBSCRIPTIONS_DETECTOR,
            lease_duration: halyard_wire::Duration::from_nanos(
                self.cfg.lease_duration.as_nanos() as i64
            ),
            manual_liveliness_count: 0,
            user_data: self.cfg.user_data.clone(),
            entity_name: self.cfg.entity_name.clone(),
        }
    }

    /// Sends our SPDP sample to the SPDP destinations, or only to `to` (a new peer).
    pub(crate) fn announce_participant(&mut self, to: Option<Vec<Locator>>) {
        let mut payload = Vec::with_capacity(256);
        self.own_participant_data().emit(&mut payload);
        self.send_spdp(&payload, 0, to);
    }

    fn send_spdp(&mut self, payload: &[u8], status: u32, to: Option<Vec<Locator>>) {
        self.spdp_sn += 1;
        let mut qos = Vec::with_capacity(48);
        let mut pl = ParameterListWriter::new(&mut qos);
        pl.raw(
            pid::KEY_HASH,
            &Guid::new(self.prefix, EntityId::PARTICIPANT).to_bytes(),
        );
        if status != 0 {
            pl.raw(pid::STATUS_INFO, &status.to_be_bytes());
        }
        pl.finish();
        let dests = to.unwrap_or_else(|| {
            let mut d = self.cfg.spdp_destinations.clone();
            for r in self.remote.values() {
                for l in udp_only(&r.data.metatraffic_unicast) {
                    if !d.contains(&l) {
                        d.push(l);
                    }
                }
            }
            d
        });
        let mut mb = self.out.start(None);
        mb.data(&Data {
            reader_id: EntityId::UNKNOWN,
            writer_id: EntityId::SPDP_WRITER,
            writer_sn: self.spdp_sn,
            inline_qos: Some(ParameterList::new(&qos, true)),
            payload: Some(payload),
            key_flag: status != 0,
            non_standard_flag: false,
        });
        self.out.push(mb, 0, &dests);
    }

    /// Announces that this participant is leaving (SPDP dispose + SEDP disposals).
    pub fn shutdown(&mut self, now: Instant) {
        let ids: Vec<EntityId> = self.user_writers();
        for id in ids {
            self.delete_writer(now, id);
        }
        let ids: Vec<EntityId> = self.user_readers();
        for id in ids {
            self.delete_reader(now, id);
        }
        let mut key = vec![0, 3, 0, 0];
        let mut pl = ParameterListWriter::new(&mut key);
        pl.guid(
            pid::PARTICIPANT_GUID,
            Guid::new(self.prefix, EntityId::PARTICIPANT),
        );
        pl.finish();
        self.send_spdp(&key, STATUS_INFO_DISPOSED | STATUS_INFO_UNREGISTERED, None);
    }

    pub(crate) fn on_spdp(&mut self, now: Instant, d: &Data<'_>) {
        let Some(payload) = d.payload else { return };
        let status = d.inline_qos.and_then(|q| q.status_info().ok()).unwrap_or(0);
        if status & (STATUS_INFO_DISPOSED | STATUS_INFO_UNREGISTERED) != 0 || d.key_flag {
            if let Ok(Some(g)) = parse_key_guid(payload) {
                self.remove_participant(g.prefix);
            }
            return;
        }
        let data = match ParticipantData::parse(payload) {
            Ok(p) => p,
            Err(_) => {
                self.stats.malformed_discovery += 1;
                return;
            }
        };
        let prefix = data.guid.prefix;
        if prefix == self.prefix
            || data.domain_id.is_some_and(|id| id != self.cfg.domain_id)
            || !data.domain_tag.is_empty()
        {
            return;
        }
        if let Some(r) = self.remote.get_mut(&prefix) {
            r.prev_lease = wire_to_std(r.data.lease_duration);
            if r.data != data {
                // Locators or the builtin endpoint set changed (a real change, or a damaged
                // announcement that the next one undoes): every proxy follows the latest.
                r.data = data.clone();
                self.push_event(Event::ParticipantDiscovered(Box::new(data.clone())));
                self.match_builtin(now, &data);
                self.refresh_user_locators(prefix);
            }
            if let Some(r) = self.remote.get_mut(&prefix) {
                r.lease_deadline = now + r.lease();
            }
            return;
        }
        if self.remote.len() >= self.cfg.max_remote_participants {
            self.stats.discovery_refused += 1;
            return;
        }
        let reply_to = udp_only(&data.metatraffic_unicast);
        self.remote.insert(
            prefix,
            RemoteParticipant {
                data: data.clone(),
                lease_deadline: now + wire_to_std(data.lease_duration),
                prev_lease: wire_to_std(data.lease_duration),
            },
        );
        self.push_event(Event::ParticipantDiscovered(Box::new(data.clone())));
        self.match_builtin(now, &data);
        if !reply_to.is_empty() {
            self.announce_participant(Some(reply_to));
        }
    }

    fn metatraffic_locators(data: &ParticipantData) -> Vec<Locator> {
        let u = udp_only(&data.metatraffic_unicast);
        if u.is_empty() {
            udp_only(&data.metatraffic_multicast)
        } else {
            u
        }
    }

    /// Brings the builtin SEDP proxies for a remote participant in line with its SPDP data:
    /// adds the ones it announces, drops the ones it no longer announces, and points the
    /// remaining ones at its current metatraffic locators. Idempotent.
    fn match_builtin(&mut self, now: Instant, data: &ParticipantData) {
        let locs = Self::metatraffic_locators(data);
        let prefix = data.guid.prefix;
        for (w, r, announcer, detector) in SEDP_PAIRS {
            let rg = Guid::new(prefix, r);
            if let Some(wr) = self.writers.get_mut(&w) {
                if data.builtin_endpoints & detector == 0 {
                    wr.remove_proxy(&rg);
                } else if !wr.set_proxy_locators(&rg, &locs, None) {
                    wr.add_proxy(now, ReaderProxy::new(rg, locs.clone(), true), true);
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
            }
            // A pre-emptive ACKNACK makes the remote writer send its history promptly.
            self.send_acknack(now, r, wg);
        }
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

    pub(crate) fn remove_participant(&mut self, prefix: GuidPrefix) {
        if self.remote.remove(&prefix).is_none() {
            return;
        }
        let writers: Vec<Guid> = self
            .remote_writers
            .range(Guid::new(prefix, EntityId([0; 4]))..=Guid::new(prefix, EntityId([0xff; 4])))
            .map(|(g, _)| *g)
            .collect();
        for g in writers {
            self.forget_remote_writer(g, WriterGone::ParticipantGone);
        }
        let readers: Vec<Guid> = self
            .remote_readers
            .range(Guid::new(prefix, EntityId([0; 4]))..=Guid::new(prefix, EntityId([0xff; 4])))
            .map(|(g, _)| *g)
            .collect();
        for g in readers {
            self.forget_remote_reader(g);
        }
        for (w, r, _, _) in SEDP_PAIRS {
            if let Some(wr) = self.writers.get_mut(&w) {
                wr.remove_proxy(&Guid::new(prefix, r));
            }
            let wg = Guid::new(prefix, w);
            if let Some(rd) = self.readers.get_mut(&r) {
                rd.proxies.remove(&wg);
            }
            self.writer_index.remove(&wg);
        }
        self.push_event(Event::ParticipantLost(prefix));
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
