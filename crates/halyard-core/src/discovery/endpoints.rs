//! Endpoint matching: a remote or local writer with a local reader (and the reverse) when
//! topic, type, partitions and QoS agree, and the locators their traffic goes to.

use the ordinary writer and reader machinery (reliable,
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
    pid, ParameterList, ParameterListWriter, STATUS_INFO_DISPOSED, STATUS_INFO_UNREGISTERED,
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
            let mut proxy = ReaderProxy::new(remote, locs, reliable);
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
}
