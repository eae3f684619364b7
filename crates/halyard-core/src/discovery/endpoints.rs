//! Endpoint matching: a remote or local writer with a local reader (and the reverse) when
//! topic, type, partitions and QoS agree, and the locators their traffic goes to. Different
//! XTypes types of one type name are judged by `typelookup::assign` (matched, refused, or
//! decided later when the remote type has been looked up).

use super::typelookup::assign::Gate;
use super::udp_only;
use crate::event::{Event, QosPolicyId};
use crate::matching::{pairing, Pairing, Side};
use crate::participant::Participant;
use crate::reader::WriterProxy;
use crate::time::Instant;
use crate::writer::ReaderProxy;
use halyard_wire::discovery::EndpointData;
use halyard_wire::qos::{DurabilityKind, ReliabilityKind};
use halyard_wire::{EntityId, Guid, Locator, VendorId};

/// Samples past its first missing one that a reader of another vendor is assumed to keep
/// (Cyclone DDS's PrimaryReorderMaxSamples default).
const FOREIGN_READER_REORDER_WINDOW: usize = 128;

impl Participant {
    /// Locators to reach a remote endpoint: its own, else its participant's defaults.
    pub(super) fn user_locators(&self, ed: &EndpointData) -> Vec<Locator> {
        let own = self.select_unicast(&ed.unicast_locators);
        if !own.is_empty() {
            return own;
        }
        let Some(p) = self.remote.get(&ed.guid.prefix) else {
            return Vec::new();
        };
        let u = self.select_unicast(&p.data.default_unicast);
        if !u.is_empty() {
            return u;
        }
        // Multicast only when the peer offers no unicast locator: one group, as for unicast.
        let m = udp_only(&ed.multicast_locators);
        let m = if m.is_empty() {
            udp_only(&p.data.default_multicast)
        } else {
            m
        };
        m.into_iter().take(1).collect()
    }

    /// The multicast locator a remote reader also listens on (its own, else its participant's
    /// default), when we send user data by multicast at all (`data_multicast`).
    pub(super) fn user_multicast(&self, ed: &EndpointData) -> Option<Locator> {
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

    /// Matches local writer `writer` with remote reader `reader` when topic, type and
    /// partitions agree; incompatible QoS is reported, not matched.
    pub(crate) fn match_remote_reader(&mut self, now: Instant, writer: EntityId, reader: Guid) {
        let (Some(w), Some(ed)) = (self.writers.get(&writer), self.remote_readers.get(&reader))
        else {
            return;
        };
        if w.proxies.contains_key(&reader) {
            return;
        }
        if crate::relay::service_reader_scope(ed).is_some_and(|s| s != self.guid_prefix()) {
            // A durability service keeping another participant's writers only.
            return;
        }
        match pairing(w.side(), remote_side(ed)) {
            Pairing::Unrelated => return,
            Pairing::Incompatible(policy) => {
                self.push_event(Event::OfferedIncompatibleQos {
                    writer,
                    reader,
                    policy,
                });
                return;
            }
            Pairing::Compatible => {}
        }
        if w.history_deferred {
            // A relay whose history its driver holds back: the reader is owed that history,
            // so it matches once the driver wrote it (`complete_relay_history`).
            self.wait_for_relay_history(writer, reader);
            return;
        }
        let local_type = w.spec.type_name.clone();
        match self.type_gate(now, writer, &local_type, reader, false) {
            Gate::Match => {}
            Gate::Wait => return,
            Gate::Refuse(_) => {
                self.push_event(Event::OfferedIncompatibleQos {
                    writer,
                    reader,
                    policy: QosPolicyId::TypeConsistencyEnforcement,
                });
                return;
            }
        }
        let Some(ed) = self.remote_readers.get(&reader) else {
            return;
        };
        let info = ed.security_info;
        if !self.security_match(now, writer, reader, info) {
            return;
        }
        let Some(ed) = self.remote_readers.get(&reader) else {
            return;
        };
        let reliable = ed.qos.reliability.kind == ReliabilityKind::Reliable;
        let durable = ed.qos.durability >= DurabilityKind::TransientLocal;
        let mut proxy = ReaderProxy::new(reader, self.user_locators(ed), reliable);
        proxy.multicast = self.user_multicast(ed);
        proxy.reorder_window = self.reorder_window_of(reader);
        proxy.time_filter = self.time_filter_of(ed).map(crate::writer::TimeFilter::new);
        proxy.durability_service = crate::relay::is_service_reader(ed);
        proxy.catches_up = crate::relay::catches_up_from_relays(ed);
        // This process's embedded service's reader: fed in memory by a reliable writer.
        let fed = reliable
            && proxy.durability_service
            && self.fed_service == Some(reader.prefix)
            && self
                .writers
                .get(&writer)
                .is_some_and(|w| w.is_reliable() && !w.relay && !w.builtin);
        if fed {
            proxy.fed = true;
            proxy.locators.clear();
            proxy.multicast = None;
        }
        // A writer that encodes its payloads cannot filter on their content: the reader does.
        let announced = match self.payload_protected(writer) {
            true => None,
            false => ed.content_filter.clone(),
        };
        if let Some(w) = self.writers.get_mut(&writer) {
            // Before anything is sent to the reader: its filter applies from the first sample.
            proxy.filter = w.compile_filter(announced.as_ref());
            w.add_proxy(now, proxy, durable);
        }
        if fed {
            self.feed_history(writer, reader);
        }
        self.push_event(Event::PublicationMatched {
            writer,
            reader,
            matched: true,
        });
    }

    /// Whether remote participant `prefix` is a Halyard one.
    pub(crate) fn is_halyard(&self, prefix: halyard_wire::GuidPrefix) -> bool {
        self.remote
            .get(&prefix)
            .is_some_and(|p| p.data.vendor_id == VendorId::HALYARD)
    }

    /// How many samples past its first missing one a remote reader keeps: Halyard's readers
    /// `reader_max_pending_samples`; Cyclone DDS's 128 (its PrimaryReorderMaxSamples default,
    /// beyond which it drops samples and asks for them again), assumed for other vendors too.
    fn reorder_window_of(&self, reader: Guid) -> Option<usize> {
        let vendor = self.remote.get(&reader.prefix).map(|p| p.data.vendor_id);
        if vendor == Some(VendorId::HALYARD) {
            None
        } else {
            Some(FOREIGN_READER_REORDER_WINDOW)
        }
    }

    /// The minimum separation (TIME_BASED_FILTER) a local writer applies for remote reader `ed`:
    /// the one it announces, if not zero and if it is a Halyard reader, which measures it as the
    /// writer does (see `crate::writer`'s `time_filter` module); readers of other vendors get
    /// every sample and filter them themselves.
    pub(super) fn time_filter_of(&self, ed: &EndpointData) -> Option<std::time::Duration> {
        let halyard = self
            .remote
            .get(&ed.guid.prefix)
            .is_some_and(|p| p.data.vendor_id == VendorId::HALYARD);
        let separation = crate::time::wire_to_std(ed.qos.time_based_filter);
        (halyard && !separation.is_zero()).then_some(separation)
    }

    /// Matches local reader `reader` with remote writer `writer` when topic, type and
    /// partitions agree; incompatible QoS is reported, not matched.
    pub(super) fn match_remote_writer(&mut self, now: Instant, reader: EntityId, writer: Guid) {
        let (Some(r), Some(ed)) = (self.readers.get(&reader), self.remote_writers.get(&writer))
        else {
            return;
        };
        if r.proxies.contains_key(&writer) {
            return;
        }
        if r.scope.is_some_and(|s| s != writer.prefix) && self.is_halyard(writer.prefix) {
            // A scoped service reader: that writer does not match it either (it reads the
            // scope in the reader's name).
            return;
        }
        match pairing(remote_side(ed), r.side()) {
            Pairing::Unrelated => return,
            Pairing::Incompatible(policy) => {
                self.push_event(Event::RequestedIncompatibleQos {
                    reader,
                    writer,
                    policy,
                });
                return;
            }
            Pairing::Compatible => {}
        }
        let local_type = r.spec.type_name.clone();
        match self.type_gate(now, reader, &local_type, writer, true) {
            Gate::Match => {}
            Gate::Wait => return,
            Gate::Refuse(_) => {
                self.push_event(Event::RequestedIncompatibleQos {
                    reader,
                    writer,
                    policy: QosPolicyId::TypeConsistencyEnforcement,
                });
                return;
            }
        }
        let Some(ed) = self.remote_writers.get(&writer) else {
            return;
        };
        let info = ed.security_info;
        if !self.security_match(now, reader, writer, info) {
            return;
        }
        let (Some(r), Some(ed)) = (self.readers.get(&reader), self.remote_writers.get(&writer))
        else {
            return;
        };
        let reliable = r.is_reliable() && ed.qos.reliability.kind == ReliabilityKind::Reliable;
        let volatile = r.spec.qos.durability == DurabilityKind::Volatile;
        let foreign = self
            .remote
            .get(&writer.prefix)
            .is_some_and(|p| p.data.vendor_id != VendorId::HALYARD);
        let locs = self.user_locators(ed);
        let lease = crate::liveliness::Lease::new(&ed.qos.liveliness, now);
        let coherent =
            r.spec.qos.presentation.coherent_access && ed.qos.presentation.coherent_access;
        // A reliable reader with a content filter is sent GAPs for what a Halyard writer
        // filtered out: within a set those are not missing members (RTPS 2.5 §8.7.6).
        let gaps_filtered = reliable && r.content_filter.is_some();
        // GROUP coherent access on both sides: the writer's sets are assembled with those of
        // the other writers of its publisher.
        let group_publisher = (r.group.is_some()
            && crate::group_coherent::is_group_coherent(&r.spec.qos.presentation)
            && crate::group_coherent::is_group_coherent(&ed.qos.presentation))
        .then_some(ed.group_entity)
        .flatten()
        .map(|g| Guid::new(writer.prefix, g));
        let ordered_publisher = (r.group.is_some()
            && crate::group_coherent::is_group_ordered(&r.spec.qos.presentation)
            && crate::group_coherent::is_group_ordered(&ed.qos.presentation))
        .then_some(ed.group_entity)
        .flatten()
        .map(|g| Guid::new(writer.prefix, g));
        let epoch = self.next_count_epoch();
        if let Some(r) = self.readers.get_mut(&reader) {
            let mut proxy = WriterProxy::new(writer, locs, reliable, volatile && foreign, epoch);
            proxy.reports_reception = !foreign;
            proxy.lease = lease;
            proxy.ordered_publisher = ordered_publisher;
            if r.holds_acks && reliable {
                proxy.unreleased = Some(Default::default());
            }
            if coherent {
                let held = self.cfg.reader_max_pending_samples;
                proxy.coherent = Some(crate::coherent::CoherentGate::new(held, !gaps_filtered));
                proxy.group_publisher = group_publisher;
            }
            let lease = lease.map(|l| l.duration);
            r.proxies.insert(writer, proxy);
            // The next liveliness check is due by the end of its first lease.
            if let Some(lease) = lease {
                self.check_liveliness_at(now + lease);
            }
        }
        self.writer_index.entry(writer).or_default().push(reader);
        self.push_event(Event::SubscriptionMatched {
            reader,
            writer,
            matched: true,
        });
        self.push_event(Event::LivelinessChanged {
            reader,
            writer,
            alive: true,
        });
        if reliable {
            self.send_acknack(now, reader, writer);
        } else {
            // What the writer sent before we discovered it: a best-effort reader would
            // otherwise never get it.
            self.deliver_parked(now, reader, writer);
        }
    }

    /// Ids of the application's (non-builtin) readers.
    pub(super) fn user_readers(&self) -> Vec<EntityId> {
        self.readers
            .keys()
            .copied()
            .filter(|e| !e.is_builtin())
            .collect()
    }

    /// Ids of the application's (non-builtin) writers, lingering ones included.
    pub(super) fn user_writers(&self) -> Vec<EntityId> {
        self.writers
            .keys()
            .copied()
            .filter(|e| !e.is_builtin())
            .collect()
    }

    /// Ids of the application's writers that may match new readers: not lingering (a deleted
    /// writer only finishes with the readers it has).
    pub(super) fn matchable_writers(&self) -> Vec<EntityId> {
        self.writers
            .iter()
            .filter(|(e, w)| !e.is_builtin() && w.linger_until.is_none())
            .map(|(e, _)| *e)
            .collect()
    }

    pub(crate) fn match_local_writer(&mut self, now: Instant, id: EntityId) {
        let remotes: Vec<Guid> = self.remote_readers.keys().copied().collect();
        for g in remotes {
            self.match_remote_reader(now, id, g);
        }
        let readers: Vec<EntityId> = self.user_readers();
        for r in readers {
            self.try_match_local(id, r);
        }
    }

    pub(crate) fn match_local_reader(&mut self, now: Instant, id: EntityId) {
        let remotes: Vec<Guid> = self.remote_writers.keys().copied().collect();
        for g in remotes {
            self.match_remote_writer(now, id, g);
        }
        let writers: Vec<EntityId> = self.matchable_writers();
        for w in writers {
            self.try_match_local(w, id);
        }
    }

    /// Matches a local writer with a local reader of this same participant (delivered directly).
    pub(super) fn try_match_local(&mut self, w: EntityId, r: EntityId) {
        let (Some(wr), Some(rd)) = (self.writers.get(&w), self.readers.get(&r)) else {
            return;
        };
        if wr.relay && rd.holds_acks {
            // A durability service's reader and its own relay: what the relay holds is what
            // that service stored.
            return;
        }
        let (wg, rg) = (wr.guid, rd.guid);
        let policy = match pairing(wr.side(), rd.side()) {
            Pairing::Unrelated => return,
            Pairing::Incompatible(policy) => Some(policy),
            Pairing::Compatible => None,
        };
        if let Some(policy) = policy {
            self.local_incompatible(w, wg, r, rg, policy);
            return;
        }
        self.local_matches.entry(w).or_default().push(r);
        self.refresh_local_filter(w, r);
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
        // A local writer is alive when matched, as a remote one is (its liveliness then
        // follows its own, see `crate::liveliness`).
        self.push_event(Event::LivelinessChanged {
            reader: r,
            writer: wg,
            alive: true,
        });
    }

    /// Reports a local writer and a local reader incompatible, on both sides.
    pub(super) fn local_incompatible(
        &mut self,
        w: EntityId,
        wg: Guid,
        r: EntityId,
        rg: Guid,
        policy: crate::event::QosPolicyId,
    ) {
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
    }
}

/// A remote endpoint as matching sees it.
pub(super) fn remote_side(ed: &EndpointData) -> Side<'_> {
    Side {
        topic: &ed.topic_name,
        type_name: &ed.type_name,
        qos: &ed.qos,
    }
}
