//! Discovery (RTPS 2.5 §8.5): SPDP announcements and leases, SEDP publication and subscription
//! exchange over the builtin reliable endpoints, and endpoint matching.
//!
//! Builtin SEDP endpoints reuse the ordinary writer and reader machinery (reliable,
//! TRANSIENT_LOCAL, KEEP_LAST 1 per endpoint GUID); their received samples are routed here
//! instead of to the application.

use crate::event::{ChangeKind, Event, ReceivedSample};
use crate::matching::{incompatible_policy, partitions_match};
use crate::participant::{Participant, RemoteParticipant};
use crate::reader::{Arrival, Reader, ReaderSpec, WriterProxy};
use crate::time::{wire_to_std, Instant};
use crate::writer::{NewChange, ReaderProxy, Writer, WriterSpec};
use halyard_wire::discovery::{
    builtin_endpoint as be, parse_key_guid, EndpointData, ParticipantData,
};
use halyard_wire::param::{
    pid, ParameterListWriter, STATUS_INFO_DISPOSED, STATUS_INFO_UNREGISTERED,
};
use halyard_wire::qos::{DurabilityKind, EndpointQos, History, Reliability, ReliabilityKind};
use halyard_wire::{
    Data, EntityId, Guid, GuidPrefix, Locator, ProtocolVersion, SequenceNumber, VendorId,
};
use std::sync::Arc;

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
            self.writers
                .insert(w, Writer::new(Guid::new(self.prefix, w), spec, true));
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
        mb.data(
            EntityId::UNKNOWN,
            EntityId::SPDP_WRITER,
            SequenceNumber(self.spdp_sn),
            Some(&qos),
            Some(payload),
            status != 0,
        );
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

    fn endpoint_data_writer(&self, id: EntityId) -> Option<EndpointData> {
        let w = self.writers.get(&id)?;
        Some(self.endpoint_data(w.guid, &w.spec.topic_name, &w.spec.type_name, &w.spec.qos))
    }

    fn endpoint_data(&self, guid: Guid, topic: &str, ty: &str, qos: &EndpointQos) -> EndpointData {
        EndpointData {
            guid,
            participant_guid: Some(Guid::new(self.prefix, EntityId::PARTICIPANT)),
            topic_name: topic.to_string(),
            type_name: ty.to_string(),
            qos: qos.clone(),
            unicast_locators: Vec::new(),
            multicast_locators: Vec::new(),
            expects_inline_qos: false,
            protocol_version: Some(ProtocolVersion::V2_5),
            vendor_id: Some(VendorId::HALYARD),
            type_max_size_serialized: None,
            entity_name: None,
        }
    }

    pub(crate) fn announce_writer(&mut self, now: Instant, id: EntityId) {
        if let Some(ed) = self.endpoint_data_writer(id) {
            self.publish_sedp(now, EntityId::SEDP_PUBLICATIONS_WRITER, &ed);
        }
    }

    pub(crate) fn announce_reader(&mut self, now: Instant, id: EntityId) {
        let Some(r) = self.readers.get(&id) else {
            return;
        };
        let ed = self.endpoint_data(r.guid, &r.spec.topic_name, &r.spec.type_name, &r.spec.qos);
        self.publish_sedp(now, EntityId::SEDP_SUBSCRIPTIONS_WRITER, &ed);
    }

    fn publish_sedp(&mut self, now: Instant, writer: EntityId, ed: &EndpointData) {
        let mut payload = Vec::with_capacity(512);
        ed.emit(&mut payload);
        let change = NewChange {
            kind: ChangeKind::Alive,
            key_hash: ed.guid.to_bytes(),
            payload: Arc::new(payload),
            timestamp: None,
        };
        if let Some(w) = self.writers.get_mut(&writer) {
            // KEEP_LAST(1) per endpoint: never blocks on history; flow control is not applied
            // to discovery.
            let _ = w.write(now, &mut self.out, &self.cfg, change);
        }
    }

    pub(crate) fn retract_endpoint(&mut self, now: Instant, guid: Guid, is_writer: bool) {
        let sedp = if is_writer {
            EntityId::SEDP_PUBLICATIONS_WRITER
        } else {
            EntityId::SEDP_SUBSCRIPTIONS_WRITER
        };
        let mut key = vec![0, 3, 0, 0];
        let mut pl = ParameterListWriter::new(&mut key);
        pl.guid(pid::ENDPOINT_GUID, guid);
        pl.finish();
        let change = NewChange {
            kind: ChangeKind::DisposedUnregistered,
            key_hash: guid.to_bytes(),
            payload: Arc::new(key),
            timestamp: None,
        };
        if let Some(w) = self.writers.get_mut(&sedp) {
            let _ = w.write(now, &mut self.out, &self.cfg, change);
        }
        // Readers of this participant matched with a deleted local writer forget it.
        if is_writer {
            self.local_matches.remove(&guid.entity);
        }
    }

    pub(crate) fn on_spdp(&mut self, now: Instant, d: &Data<'_>) {
        let Some(payload) = d.payload else { return };
        let status = d.inline_qos.and_then(|q| q.status_info().ok()).unwrap_or(0);
        if status & (STATUS_INFO_DISPOSED | STATUS_INFO_UNREGISTERED) != 0 || d.key_flag {
            if let Ok(Some(g)) = parse_key_guid(payload) {
                self.remove_participant(now, g.prefix);
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
                    wr.add_proxy(now, ReaderProxy::new(rg, locs.clone(), true, 1), true);
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

    pub(crate) fn remove_participant(&mut self, now: Instant, prefix: GuidPrefix) {
        if self.remote.remove(&prefix).is_none() {
            return;
        }
        let writers: Vec<Guid> = self
            .remote_writers
            .range(Guid::new(prefix, EntityId([0; 4]))..=Guid::new(prefix, EntityId([0xff; 4])))
            .map(|(g, _)| *g)
            .collect();
        for g in writers {
            self.forget_remote_writer(now, g, true);
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

    /// False for a SEDP sample that `on_sedp_sample` could not use (its payload does not
    /// parse, names an endpoint of another participant than its writer's, or its inline key
    /// hash names another endpoint than its payload): such a sample was damaged in transit
    /// (RTPS has no checksum of its own) and must be received again. The key-hash check
    /// matters because a flipped bit in an endpoint GUID still parses, and the peer would be
    /// matched with an endpoint that does not exist, for good (sim_swarm seed
    /// 0x6ec1b04232f62810). Samples for other readers are always acceptable.
    pub(crate) fn builtin_sample_acceptable(
        &self,
        reader: EntityId,
        writer: Guid,
        a: &Arrival,
    ) -> bool {
        if reader != EntityId::SEDP_PUBLICATIONS_READER
            && reader != EntityId::SEDP_SUBSCRIPTIONS_READER
        {
            return true;
        }
        if a.kind != ChangeKind::Alive {
            let guid = a
                .key_hash
                .map(Guid::from_bytes)
                .or_else(|| parse_key_guid(&a.payload).ok().flatten());
            return guid.is_some_and(|g| g.prefix == writer.prefix);
        }
        EndpointData::parse(&a.payload).is_ok_and(|ed| {
            ed.guid.prefix == writer.prefix && a.key_hash.is_none_or(|k| k == ed.guid.to_bytes())
        })
    }

    pub(crate) fn on_sedp_sample(&mut self, now: Instant, s: ReceivedSample) {
        let is_pub = s.reader == EntityId::SEDP_PUBLICATIONS_READER;
        if s.kind != ChangeKind::Alive {
            let guid = s
                .key_hash
                .map(Guid::from_bytes)
                .or_else(|| parse_key_guid(&s.payload).ok().flatten());
            if let Some(g) = guid {
                if is_pub {
                    self.forget_remote_writer(now, g, false);
                } else {
                    self.forget_remote_reader(g);
                }
            }
            return;
        }
        let ed = match EndpointData::parse(&s.payload) {
            Ok(e) => e,
            Err(_) => {
                self.stats.malformed_discovery += 1;
                return;
            }
        };
        if ed.guid.prefix != s.writer.prefix || !self.remote.contains_key(&ed.guid.prefix) {
            return;
        }
        let known = self.remote_writers.len() + self.remote_readers.len();
        if is_pub {
            if !self.remote_writers.contains_key(&ed.guid) && known >= self.cfg.max_remote_endpoints
            {
                self.stats.discovery_refused += 1;
                return;
            }
            self.push_event(Event::PublicationDiscovered(Box::new(ed.clone())));
            self.remote_writers.insert(ed.guid, ed.clone());
            let readers: Vec<EntityId> = self.user_readers();
            for r in readers {
                self.try_match(now, ed.guid, r, false);
            }
        } else {
            if !self.remote_readers.contains_key(&ed.guid) && known >= self.cfg.max_remote_endpoints
            {
                self.stats.discovery_refused += 1;
                return;
            }
            self.push_event(Event::SubscriptionDiscovered(Box::new(ed.clone())));
            self.remote_readers.insert(ed.guid, ed.clone());
            let writers: Vec<EntityId> = self.user_writers();
            for w in writers {
                self.try_match(now, ed.guid, w, true);
            }
        }
    }

    fn forget_remote_writer(&mut self, _now: Instant, g: Guid, lease_expired: bool) {
        if self.remote_writers.remove(&g).is_none() {
            return;
        }
        self.push_event(Event::PublicationLost(g));
        for r in self.writer_index.remove(&g).unwrap_or_default() {
            if let Some(rd) = self.readers.get_mut(&r) {
                if rd.proxies.remove(&g).is_some() {
                    if lease_expired {
                        self.push_event(Event::LivelinessChanged {
                            reader: r,
                            writer: g,
                            alive: false,
                        });
                    }
                    self.push_event(Event::SubscriptionMatched {
                        reader: r,
                        writer: g,
                        matched: false,
                    });
                }
            }
        }
    }

    fn forget_remote_reader(&mut self, g: Guid) {
        if self.remote_readers.remove(&g).is_none() {
            return;
        }
        self.push_event(Event::SubscriptionLost(g));
        let ids: Vec<EntityId> = self.user_writers();
        for w in ids {
            let removed = self
                .writers
                .get_mut(&w)
                .is_some_and(|wr| wr.remove_proxy(&g));
            if removed {
                self.push_event(Event::PublicationMatched {
                    writer: w,
                    reader: g,
                    matched: false,
                });
                self.push_event(Event::WriterAcknowledged { writer: w });
            }
        }
    }

    /// Locators to reach a remote endpoint: its own, else its participant's defaults.
    fn user_locators(&self, ed: &EndpointData) -> Vec<Locator> {
        let own = udp_only(&ed.unicast_locators);
        if !own.is_empty() {
            return own;
        }
        let Some(p) = self.remote.get(&ed.guid.prefix) else {
            return Vec::new();
        };
        let u = udp_only(&p.data.default_unicast);
        if !u.is_empty() {
            return u;
        }
        let m = udp_only(&ed.multicast_locators);
        if !m.is_empty() {
            return m;
        }
        udp_only(&p.data.default_multicast)
    }

    /// The multicast locator a remote reader also listens on (its own, else its participant's
    /// default), when we send user data by multicast at all (`data_multicast`).
    fn user_multicast(&self, ed: &EndpointData) -> Option<Locator> {
        if !self.cfg.data_multicast {
            return None;
        }
        // Only a real group address (224.0.0.0/4): a unicast address announced as a
        // multicast locator would reach one of the readers that seem to share it.
        let group = |v: &[Locator]| {
            v.iter()
                .copied()
                .find(|l| l.as_udpv4().is_some_and(|(ip, _)| ip[0] & 0xf0 == 0xe0))
        };
        group(&ed.multicast_locators).or_else(|| {
            let p = self.remote.get(&ed.guid.prefix)?;
            group(&p.data.default_multicast)
        })
    }

    /// Matches remote endpoint `remote` with local endpoint `local` (a writer if
    /// `local_is_writer`), raising incompatible-QoS events on failure.
    fn try_match(&mut self, now: Instant, remote: Guid, local: EntityId, local_is_writer: bool) {
        if local_is_writer {
            let (Some(w), Some(ed)) = (self.writers.get(&local), self.remote_readers.get(&remote))
            else {
                return;
            };
            if w.proxies.contains_key(&remote)
                || w.spec.topic_name != ed.topic_name
                || w.spec.type_name != ed.type_name
            {
                return;
            }
            if !partitions_match(&w.spec.qos.partition, &ed.qos.partition) {
                return;
            }
            if let Some(policy) = incompatible_policy(&w.spec.qos, &ed.qos) {
                self.push_event(Event::OfferedIncompatibleQos {
                    writer: local,
                    reader: remote,
                    policy,
                });
                return;
            }
            let reliable = ed.qos.reliability.kind == ReliabilityKind::Reliable;
            let durable = ed.qos.durability >= DurabilityKind::TransientLocal;
            let locs = self.user_locators(ed);
            let mut proxy = ReaderProxy::new(remote, locs, reliable, 1);
            proxy.multicast = self.user_multicast(ed);
            if let Some(w) = self.writers.get_mut(&local) {
                w.add_proxy(now, proxy, durable);
            }
            self.push_event(Event::PublicationMatched {
                writer: local,
                reader: remote,
                matched: true,
            });
        } else {
            let (Some(r), Some(ed)) = (self.readers.get(&local), self.remote_writers.get(&remote))
            else {
                return;
            };
            if r.proxies.contains_key(&remote)
                || r.spec.topic_name != ed.topic_name
                || r.spec.type_name != ed.type_name
            {
                return;
            }
            if !partitions_match(&ed.qos.partition, &r.spec.qos.partition) {
                return;
            }
            if let Some(policy) = incompatible_policy(&ed.qos, &r.spec.qos) {
                self.push_event(Event::RequestedIncompatibleQos {
                    reader: local,
                    writer: remote,
                    policy,
                });
                return;
            }
            let reliable = r.is_reliable() && ed.qos.reliability.kind == ReliabilityKind::Reliable;
            let volatile = r.spec.qos.durability == DurabilityKind::Volatile;
            let foreign = self
                .remote
                .get(&remote.prefix)
                .is_some_and(|p| p.data.vendor_id != VendorId::HALYARD);
            let locs = self.user_locators(ed);
            let epoch = self.next_count_epoch();
            if let Some(r) = self.readers.get_mut(&local) {
                r.proxies.insert(
                    remote,
                    WriterProxy::new(remote, locs, reliable, volatile && foreign, epoch),
                );
            }
            self.writer_index.entry(remote).or_default().push(local);
            self.push_event(Event::SubscriptionMatched {
                reader: local,
                writer: remote,
                matched: true,
            });
            self.push_event(Event::LivelinessChanged {
                reader: local,
                writer: remote,
                alive: true,
            });
            if reliable {
                self.send_acknack(now, local, remote);
            }
        }
    }

    /// Ids of the application's (non-builtin) readers.
    fn user_readers(&self) -> Vec<EntityId> {
        self.readers
            .keys()
            .copied()
            .filter(|e| !e.is_builtin())
            .collect()
    }

    /// Ids of the application's (non-builtin) writers.
    fn user_writers(&self) -> Vec<EntityId> {
        self.writers
            .keys()
            .copied()
            .filter(|e| !e.is_builtin())
            .collect()
    }

    pub(crate) fn match_local_writer(&mut self, now: Instant, id: EntityId) {
        let remotes: Vec<Guid> = self.remote_readers.keys().copied().collect();
        for g in remotes {
            self.try_match(now, g, id, true);
        }
        let readers: Vec<EntityId> = self.user_readers();
        for r in readers {
            self.try_match_local(id, r);
        }
    }

    pub(crate) fn match_local_reader(&mut self, now: Instant, id: EntityId) {
        let remotes: Vec<Guid> = self.remote_writers.keys().copied().collect();
        for g in remotes {
            self.try_match(now, g, id, false);
        }
        let writers: Vec<EntityId> = self.user_writers();
        for w in writers {
            self.try_match_local(w, id);
        }
    }

    /// Matches a local writer with a local reader of this same participant (delivered directly).
    fn try_match_local(&mut self, w: EntityId, r: EntityId) {
        let (Some(wr), Some(rd)) = (self.writers.get(&w), self.readers.get(&r)) else {
            return;
        };
        if wr.spec.topic_name != rd.spec.topic_name || wr.spec.type_name != rd.spec.type_name {
            return;
        }
        if !partitions_match(&wr.spec.qos.partition, &rd.spec.qos.partition) {
            return;
        }
        let (wg, rg) = (wr.guid, rd.guid);
        if let Some(policy) = incompatible_policy(&wr.spec.qos, &rd.spec.qos) {
            self.push_event(Event::OfferedIncompatibleQos {
                writer: w,
                reader: rg,
                policy,
            });
            self.push_event(Event::RequestedIncompatibleQos {
                reader: r,
                writer: wg,
                policy,
            });
            return;
        }
        self.local_matches.entry(w).or_default().push(r);
        self.push_event(Event::PublicationMatched {
            writer: w,
            reader: rg,
            matched: true,
        });
        self.push_event(Event::SubscriptionMatched {
            reader: r,
            writer: wg,
            matched: true,
        });
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
