//! QoS changed at run time (DDS 1.4 §2.2.3, the "Changeable" column), locally or by a peer.
//!
//! A local change may touch only the changeable policies (DEADLINE, LATENCY_BUDGET,
//! OWNERSHIP_STRENGTH, TIME_BASED_FILTER, PARTITION, TRANSPORT_PRIORITY, LIFESPAN, the data
//! lifecycles, USER/TOPIC/GROUP_DATA); any other difference is refused naming the policy, and
//! nothing changes. An accepted change takes effect at once (deadline timers, time filter,
//! lifespan of later writes), is re-announced by SEDP, and every pairing of the endpoint is
//! judged again, as is every pairing of a remote endpoint that re-announces itself:
//! - a matched pair that the new QoS makes incompatible, or whose partitions no longer meet,
//!   is unmatched (and an incompatible one is reported as such);
//! - a pair that was not matched and now can be is matched, as at discovery.

use super::endpoints::remote_side;
use crate::event::Event;
use crate::matching::{immutable_change, pairing, Pairing};
use crate::participant::Participant;
use crate::time::Instant;
use halyard_wire::qos::EndpointQos;
use halyard_wire::{EntityId, Guid};

/// Why a QoS change was refused.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum QosChangeError {
    /// No such local endpoint.
    UnknownEndpoint,
    /// The change touches a policy that cannot change once the entity exists.
    Immutable(crate::event::QosPolicyId),
    /// The security plugin's access control does not grant the new partitions (why).
    NotAllowedBySecurity(String),
}

impl Participant {
    /// Changes a local writer's QoS (see the module documentation). The caller validated
    /// `qos` for consistency.
    pub fn set_writer_qos(
        &mut self,
        now: Instant,
        id: EntityId,
        qos: EndpointQos,
    ) -> Result<(), QosChangeError> {
        let seed = self.cfg.hash_seed;
        let w = self
            .writers
            .get_mut(&id)
            .filter(|w| !id.is_builtin() && w.linger_until.is_none())
            .ok_or(QosChangeError::UnknownEndpoint)?;
        if let Some(policy) = immutable_change(&w.spec.qos, &qos) {
            return Err(QosChangeError::Immutable(policy));
        }
        if w.spec.qos.partition != qos.partition {
            let topic = w.spec.topic_name.clone();
            self.check_local_endpoint(&topic, &qos.partition, true)
                .map_err(QosChangeError::NotAllowedBySecurity)?;
        }
        let Some(w) = self.writers.get_mut(&id) else {
            return Err(QosChangeError::UnknownEndpoint);
        };
        w.set_qos(now, qos, seed);
        let traits = crate::admission::WriterTraits::of(&w.spec.qos);
        let guid = w.guid;
        if traits.is_default() {
            self.writer_traits.remove(&guid);
        } else {
            self.writer_traits.insert(guid, traits);
        }
        self.announce_writer(now, id);
        let remotes: Vec<Guid> = self.remote_readers.keys().copied().collect();
        for r in remotes {
            self.rejudge_with_remote_reader(now, id, r);
        }
        for r in self.user_readers() {
            self.rejudge_local(id, r);
        }
        Ok(())
    }

    /// Changes a local reader's QoS (see the module documentation). The caller validated
    /// `qos` for consistency.
    pub fn set_reader_qos(
        &mut self,
        now: Instant,
        id: EntityId,
        qos: EndpointQos,
    ) -> Result<(), QosChangeError> {
        let seed = self.cfg.hash_seed;
        let r = self
            .readers
            .get_mut(&id)
            .filter(|_| !id.is_builtin())
            .ok_or(QosChangeError::UnknownEndpoint)?;
        if let Some(policy) = immutable_change(&r.spec.qos, &qos) {
            return Err(QosChangeError::Immutable(policy));
        }
        if r.spec.qos.partition != qos.partition {
            let topic = r.spec.topic_name.clone();
            self.check_local_endpoint(&topic, &qos.partition, false)
                .map_err(QosChangeError::NotAllowedBySecurity)?;
        }
        let Some(r) = self.readers.get_mut(&id) else {
            return Err(QosChangeError::UnknownEndpoint);
        };
        r.admission.set_qos(now, &qos, seed);
        r.spec.qos = qos;
        self.announce_reader(now, id);
        let remotes: Vec<Guid> = self.remote_writers.keys().copied().collect();
        for w in remotes {
            self.rejudge_with_remote_writer(now, id, w);
        }
        for w in self.matchable_writers() {
            self.rejudge_local(w, id);
        }
        Ok(())
    }

    /// Judges local writer `writer` and remote reader `reader` again.
    pub(super) fn rejudge_with_remote_reader(
        &mut self,
        now: Instant,
        writer: EntityId,
        reader: Guid,
    ) {
        let (Some(w), Some(ed)) = (self.writers.get(&writer), self.remote_readers.get(&reader))
        else {
            return;
        };
        if !w.proxies.contains_key(&reader) {
            if w.linger_until.is_none() {
                self.match_remote_reader(now, writer, reader);
            }
            return;
        }
        let verdict = pairing(w.side(), remote_side(ed));
        if verdict == Pairing::Compatible {
            // A durability service's reader announces whether it catches up from relays
            // again once configured (its name changes): the proxy follows.
            let service = crate::relay::is_service_reader(ed);
            let catches_up = crate::relay::catches_up_from_relays(ed);
            if let Some(w) = self.writers.get_mut(&writer) {
                w.refresh_service_reader(&reader, service, catches_up);
            }
            return;
        }
        if let Some(w) = self.writers.get_mut(&writer) {
            w.remove_proxy(&reader);
        }
        self.push_event(Event::PublicationMatched {
            writer,
            reader,
            matched: false,
        });
        // Its acknowledgments no longer hold anything back.
        self.push_event(Event::WriterAcknowledged { writer });
        if let Pairing::Incompatible(policy) = verdict {
            self.push_event(Event::OfferedIncompatibleQos {
                writer,
                reader,
                policy,
            });
        }
    }

    /// Judges local reader `reader` and remote writer `writer` again.
    pub(super) fn rejudge_with_remote_writer(
        &mut self,
        now: Instant,
        reader: EntityId,
        writer: Guid,
    ) {
        let (Some(r), Some(ed)) = (self.readers.get(&reader), self.remote_writers.get(&writer))
        else {
            return;
        };
        if !r.proxies.contains_key(&writer) {
            self.match_remote_writer(now, reader, writer);
            return;
        }
        let verdict = pairing(remote_side(ed), r.side());
        if verdict == Pairing::Compatible {
            return;
        }
        let gated = self
            .readers
            .get_mut(&reader)
            .and_then(|r| r.proxies.remove(&writer))
            .and_then(|p| p.group_publisher);
        if let Some(publisher) = gated {
            // A GROUP set it is a member of now misses its part for this reader.
            self.note_group_writer_gone(now, writer, publisher, &[reader]);
        }
        if let Some(v) = self.writer_index.get_mut(&writer) {
            v.retain(|&x| x != reader);
        }
        self.push_event(Event::SubscriptionMatched {
            reader,
            writer,
            matched: false,
        });
        if let Pairing::Incompatible(policy) = verdict {
            self.push_event(Event::RequestedIncompatibleQos {
                reader,
                writer,
                policy,
            });
        }
    }

    /// Judges a local writer and a local reader of this participant again.
    fn rejudge_local(&mut self, w: EntityId, r: EntityId) {
        let matched = self.local_matches.get(&w).is_some_and(|v| v.contains(&r));
        if !matched {
            self.try_match_local(w, r);
            return;
        }
        let (Some(wr), Some(rd)) = (self.writers.get(&w), self.readers.get(&r)) else {
            return;
        };
        let (wg, rg) = (wr.guid, rd.guid);
        let verdict = pairing(wr.side(), rd.side());
        if verdict == Pairing::Compatible {
            return;
        }
        if let Some(v) = self.local_matches.get_mut(&w) {
            v.retain(|&x| x != r);
        }
        self.push_event(Event::PublicationMatched {
            writer: w,
            reader: rg,
            matched: false,
        });
        self.push_event(Event::SubscriptionMatched {
            reader: r,
            writer: wg,
            matched: false,
        });
        if let Pairing::Incompatible(policy) = verdict {
            self.local_incompatible(w, wg, r, rg, policy);
        }
    }
}
