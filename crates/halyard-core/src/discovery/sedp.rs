//! SEDP (RTPS 2.5 §8.5.4): announcing and retracting local endpoints over the builtin
//! publications and subscriptions writers, and taking in what remote participants announce.

use crate::event::{ChangeKind, Event, ReceivedSample};
use crate::participant::Participant;
use crate::reader::Arrival;
use crate::time::Instant;
use crate::writer::NewChange;
use halyard_wire::discovery::{parse_key_guid, EndpointData};
use halyard_wire::param::{pid, ParameterListWriter};
use halyard_wire::qos::EndpointQos;
use halyard_wire::{EntityId, Guid, ProtocolVersion, SequenceNumber, VendorId};
use std::sync::Arc;

/// Why a remote writer is forgotten.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum WriterGone {
    /// Its participant is gone (lease expired, or it said goodbye: `goodbye`): its readers
    /// also see it lose liveliness.
    ParticipantGone {
        /// It said goodbye (an SPDP disposal): what it sent before may still be on its way.
        goodbye: bool,
    },
    /// It was deleted (SEDP dispose), or its participant left saying goodbye.
    Retracted,
}

impl Participant {
    fn endpoint_data_writer(&self, id: EntityId) -> Option<EndpointData> {
        let w = self.writers.get(&id)?;
        let mut ed = self.endpoint_data(w.guid, &w.spec.topic_name, &w.spec.type_name, &w.spec.qos);
        ed.group_entity = w.group;
        if w.relay {
            ed.entity_name = Some(crate::relay::RELAY_WRITER_NAME.to_string());
        }
        Some(ed)
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
            content_filter: None,
            group_entity: None,
            security_info: self.endpoint_security_info(guid.entity),
            type_information: self.announced_type_information(ty),
        }
    }

    pub(crate) fn announce_writer(&mut self, now: Instant, id: EntityId) {
        if let Some(ed) = self.endpoint_data_writer(id) {
            let sedp = self.sedp_writer_for(id, true);
            self.publish_sedp(now, sedp, &ed);
        }
    }

    pub(crate) fn announce_reader(&mut self, now: Instant, id: EntityId) {
        let Some(r) = self.readers.get(&id) else {
            return;
        };
        let mut ed = self.endpoint_data(r.guid, &r.spec.topic_name, &r.spec.type_name, &r.spec.qos);
        ed.content_filter = r.content_filter.clone();
        ed.group_entity = r.group;
        if r.holds_acks {
            let name = match (r.catches_up, r.scope) {
                (_, Some(scope)) => crate::relay::scoped_reader_name(scope),
                (true, None) => crate::relay::SERVICE_READER_NAME.to_string(),
                (false, None) => crate::relay::SCOPED_SERVICE_READER_NAME.to_string(),
            };
            ed.entity_name = Some(name);
        }
        let sedp = self.sedp_writer_for(id, false);
        let sn = self.publish_sedp(now, sedp, &ed);
        if let Some(r) = self.readers.get_mut(&id) {
            r.announced_sn = sn;
        }
    }

    /// Writes `ed` with builtin writer `writer`; returns its sequence number.
    fn publish_sedp(
        &mut self,
        now: Instant,
        writer: EntityId,
        ed: &EndpointData,
    ) -> Option<SequenceNumber> {
        let mut payload = Vec::with_capacity(512);
        ed.emit(&mut payload);
        let change = NewChange {
            kind: ChangeKind::Alive,
            key_hash: ed.guid.to_bytes(),
            payload: Arc::new(payload),
            timestamp: None,
            original: None,
        };
        // KEEP_LAST(1) per endpoint: never blocks on history; flow control is not applied
        // to discovery.
        let w = self.writers.get_mut(&writer)?;
        w.write(now, &mut self.out, &self.cfg, change, None).ok()
    }

    pub(crate) fn retract_endpoint(&mut self, now: Instant, guid: Guid) {
        let is_writer = guid.entity.is_writer();
        let sedp = self.sedp_writer_for(guid.entity, is_writer);
        let mut key = vec![0, 3, 0, 0];
        let mut pl = ParameterListWriter::new(&mut key);
        pl.guid(pid::ENDPOINT_GUID, guid);
        pl.finish();
        let change = NewChange {
            kind: ChangeKind::DisposedUnregistered,
            key_hash: guid.to_bytes(),
            payload: Arc::new(key),
            timestamp: None,
            original: None,
        };
        if let Some(w) = self.writers.get_mut(&sedp) {
            let _ = w.write(now, &mut self.out, &self.cfg, change, None);
        }
        // Readers of this participant matched with a deleted local writer forget it.
        if is_writer {
            self.local_matches.remove(&guid.entity);
        }
        self.unregister_endpoint_security(guid.entity);
    }

    /// False for a SEDP sample that `on_sedp_sample` could not use (its payload does not
    /// parse, names an endpoint of another participant than its writer's, or its inline key
    /// hash names another endpoint than its payload): such a sample was damaged in transit
    /// (RTPS has no checksum of its own) and must be received again. The key-hash check
    /// matters because a flipped bit in an endpoint GUID still parses, and the peer would be
    /// matched with an endpoint that does not exist, for good (swarm simulation seed
    /// 0x6ec1b04232f62810). Samples for other readers are always acceptable.
    pub(crate) fn builtin_sample_acceptable(
        &self,
        reader: EntityId,
        writer: Guid,
        a: &Arrival,
    ) -> bool {
        if reader != EntityId::SEDP_PUBLICATIONS_READER
            && reader != EntityId::SEDP_SUBSCRIPTIONS_READER
            && !crate::endpoint_security::is_secure_sedp_reader(reader)
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
        let is_pub = s.reader == EntityId::SEDP_PUBLICATIONS_READER
            || s.reader == EntityId::SEDP_PUBLICATIONS_SECURE_READER;
        if s.kind != ChangeKind::Alive {
            let guid = s
                .key_hash
                .map(Guid::from_bytes)
                .or_else(|| parse_key_guid(&s.payload).ok().flatten());
            if let Some(g) = guid {
                if is_pub {
                    self.forget_remote_writer(now, g, WriterGone::Retracted);
                } else {
                    self.forget_remote_reader(g);
                }
            }
            return;
        }
        let mut ed = match EndpointData::parse(&s.payload) {
            Ok(e) => e,
            Err(_) => {
                self.stats.malformed_discovery += 1;
                return;
            }
        };
        // A TypeInformation that does not decode is counted and dropped; the endpoint is kept
        // and matched by type name, as one that sent none.
        if ed
            .type_information
            .as_ref()
            .is_some_and(|t| decode_type_information(t).is_none())
        {
            self.stats.malformed_type_information += 1;
            ed.type_information = None;
        }
        if ed.guid.prefix != s.writer.prefix || !self.remote.contains_key(&ed.guid.prefix) {
            return;
        }
        // Access control: an endpoint its participant's permissions do not grant is treated as
        // never announced (and one that lost its grant, by a changed partition, as gone).
        if let Err(reason) = self.security_check_remote(&ed, is_pub) {
            self.stats.secure_rejected += 1;
            self.push_event(Event::EndpointRefused {
                guid: ed.guid,
                reason,
            });
            if is_pub {
                self.forget_remote_writer(now, ed.guid, WriterGone::Retracted);
            } else {
                self.forget_remote_reader(ed.guid);
            }
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
            self.note_service_peer(&ed, false);
            self.remote_writers.insert(ed.guid, ed.clone());
            self.draining.forget(&ed.guid);
            let traits = crate::admission::WriterTraits::of(&ed.qos);
            if traits.is_default() {
                self.writer_traits.remove(&ed.guid);
            } else {
                self.writer_traits.insert(ed.guid, traits);
            }
            // A known writer may have re-announced itself with new QoS: every pairing is
            // judged again.
            for r in self.user_readers() {
                self.rejudge_with_remote_writer(now, r, ed.guid);
            }
        } else {
            if !self.remote_readers.contains_key(&ed.guid) && known >= self.cfg.max_remote_endpoints
            {
                self.stats.discovery_refused += 1;
                return;
            }
            self.push_event(Event::SubscriptionDiscovered(Box::new(ed.clone())));
            self.note_service_peer(&ed, true);
            self.remote_readers.insert(ed.guid, ed.clone());
            // ... and may have announced another content filter.
            for w in self.user_writers() {
                self.rejudge_with_remote_reader(now, w, ed.guid);
                self.refresh_remote_filter(w, ed.guid);
            }
        }
    }

    pub(super) fn forget_remote_writer(&mut self, now: Instant, g: Guid, why: WriterGone) {
        let Some(ed) = self.remote_writers.remove(&g) else {
            // Retracted before we discovered it: a pending group set may name it.
            self.note_unknown_writer_gone(now, g);
            return;
        };
        self.security_forget_endpoint(g);
        self.writer_traits.remove(&g);
        self.forget_parked(&g);
        self.push_event(Event::PublicationLost(g));
        // A writer that left on purpose (deleted, or its participant said goodbye) may have
        // DATA still on its way; one whose lease expired may be alive on the other side of a
        // partition and match again, and must not be heard meanwhile.
        let drain = self.security.is_none()
            && matches!(
                why,
                WriterGone::Retracted | WriterGone::ParticipantGone { goodbye: true }
            );
        // The readers of GROUP coherent subscribers it leaves (see `group_coherent`).
        let mut gated = Vec::new();
        for r in self.writer_index.remove(&g).unwrap_or_default() {
            if let Some(rd) = self.readers.get_mut(&r) {
                if let Some(p) = rd.proxies.remove(&g) {
                    if p.group_publisher.is_some() {
                        gated.push(r);
                    }
                    if matches!(why, WriterGone::ParticipantGone { .. }) {
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
                    // What it sent before leaving may still be on its way. A coherent set
                    // it left open is discarded whole, not completed late.
                    if drain && p.coherent.is_none() {
                        self.draining.keep(g, r, p);
                    }
                }
            }
        }
        let publisher = ed.group_entity.map(|e| Guid::new(g.prefix, e));
        if let (Some(publisher), true) = (
            publisher,
            crate::group_coherent::is_group_coherent(&ed.qos.presentation),
        ) {
            self.note_group_writer_gone(now, g, publisher, &gated);
        }
        // After its last events, which it hides.
        self.service_peers.remove(&g);
    }

    pub(super) fn forget_remote_reader(&mut self, g: Guid) {
        if self.remote_readers.remove(&g).is_none() {
            return;
        }
        self.security_forget_endpoint(g);
        self.forget_waiting_reader(g);
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
        // After its last events, which it hides.
        self.service_peers.remove(&g);
    }
}

/// Decodes a PID_TYPE_INFORMATION value (in its parameter list's byte order); `None` if it
/// does not decode. XCDR2 values in a parameter list may be followed by up to 3 bytes of
/// padding, which the decoder allows.
pub(crate) fn decode_type_information(
    t: &halyard_wire::discovery::TypeInformationBytes,
) -> Option<halyard_xtypes::TypeInformation> {
    let order = if t.little_endian {
        halyard_cdr::Endianness::Little
    } else {
        halyard_cdr::Endianness::Big
    };
    halyard_xtypes::TypeInformation::from_xcdr2_endian(&t.xcdr2, order).ok()
}
