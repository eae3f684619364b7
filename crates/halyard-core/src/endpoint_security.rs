//! DDS Security for endpoints: what the core does for metadata, data, discovery and
//! liveliness protection (the participant-level parts are in [`crate::security`]).
//!
//! * **Registration.** Every local endpoint of a secure participant is registered with the
//!   plugin when it is created ([`ParticipantSecurity::register_local_endpoint`]); the plugin
//!   makes its keys and answers with the security attributes the endpoint announces in SEDP
//!   (PID_ENDPOINT_SECURITY_INFO). The secure builtin endpoints (secure SEDP publications and
//!   subscriptions, secure participant messages) are registered the same way under their
//!   builtin topic names.
//! * **Secure discovery.** An endpoint whose attributes say "discovery protected" is announced
//!   (and retracted) over the secure SEDP writers instead of the plain ones; what the secure
//!   SEDP readers receive is handled as any SEDP sample.
//! * **Matching.** Before a remote endpoint is matched with a local one, the plugin sees the
//!   pairing ([`ParticipantSecurity::match_remote_endpoint`]): it refuses attributes that
//!   differ from ours, and queues our endpoint crypto tokens for the remote endpoint over the
//!   volatile secure channel. Until the remote's tokens arrive its protected submessages cannot
//!   be decoded and are dropped (counted); reliability repairs them.
//! * **Metadata protection** needs nothing here: every outgoing submessage of a local endpoint
//!   passes the plugin in the transmit pass ([`Participant::protect_transmit`]).
//! * **Data protection.** A payload-protected writer's history holds plain payloads; the
//!   transmit pass encodes the serialized payload of each DATA, and the fragments of each
//!   DATA_FRAG on their own, as they go on the wire (what Cyclone DDS 0.10 and Fast DDS 2.9
//!   do, and expect: the DATA_FRAG's sampleSize and fragmentSize stay those of the plain
//!   sample). A writer leaves room for the encoding in every datagram
//!   ([`crate::security::PAYLOAD_PROTECTION_ROOM`]). Received DATA payloads and DATA_FRAG
//!   fragments of a payload-protected remote writer are decoded as they arrive, before
//!   reassembly ([`Participant::decode_received`]); one that does not decode is dropped and
//!   counted (reliability asks for it again). Writers do not filter for remote readers on
//!   content they encode (the readers filter themselves).
//! * **Liveliness protection.** Participant messages go over the secure participant-message
//!   writer.

use crate::event::Event;
use crate::participant::Participant;
use crate::security::{SecurityInfo, SecurityOutput};
use crate::time::Instant;
use halyard_wire::discovery::{builtin_endpoint as be, ParticipantData};
use halyard_wire::{EntityId, Guid};

/// The secure builtin writer/reader pairs (DDS Security 1.1 §7.4.5-7.4.6), the builtin
/// endpoint bits that announce them, and the builtin topic the plugin knows them by.
pub(crate) const SECURE_BUILTIN_PAIRS: [(EntityId, EntityId, u32, u32); 3] = [
    (
        EntityId::SEDP_PUBLICATIONS_SECURE_WRITER,
        EntityId::SEDP_PUBLICATIONS_SECURE_READER,
        be::SECURE_PUBLICATION_WRITER,
        be::SECURE_PUBLICATION_READER,
    ),
    (
        EntityId::SEDP_SUBSCRIPTIONS_SECURE_WRITER,
        EntityId::SEDP_SUBSCRIPTIONS_SECURE_READER,
        be::SECURE_SUBSCRIPTION_WRITER,
        be::SECURE_SUBSCRIPTION_READER,
    ),
    (
        EntityId::P2P_MESSAGE_SECURE_WRITER,
        EntityId::P2P_MESSAGE_SECURE_READER,
        be::SECURE_PARTICIPANT_MESSAGE_WRITER,
        be::SECURE_PARTICIPANT_MESSAGE_READER,
    ),
];

/// The builtin topic name of a secure builtin endpoint.
fn secure_builtin_topic(e: EntityId) -> &'static str {
    if e == EntityId::SEDP_PUBLICATIONS_SECURE_WRITER
        || e == EntityId::SEDP_PUBLICATIONS_SECURE_READER
    {
        "DCPSPublicationsSecure"
    } else if e == EntityId::SEDP_SUBSCRIPTIONS_SECURE_WRITER
        || e == EntityId::SEDP_SUBSCRIPTIONS_SECURE_READER
    {
        "DCPSSubscriptionsSecure"
    } else {
        "DCPSParticipantMessageSecure"
    }
}

/// EndpointSecurityAttributesMask bits (DDS Security 1.1 §7.4.1.5).
const IS_VALID: u32 = 1 << 31;
const IS_DISCOVERY_PROTECTED: u32 = 1 << 2;
const IS_PAYLOAD_PROTECTED: u32 = 1 << 4;

fn has(info: Option<SecurityInfo>, bit: u32) -> bool {
    info.is_some_and(|i| i.attributes & IS_VALID != 0 && i.attributes & bit != 0)
}

/// Whether `e` is one of the secure SEDP readers.
pub(crate) fn is_secure_sedp_reader(e: EntityId) -> bool {
    e == EntityId::SEDP_PUBLICATIONS_SECURE_READER
        || e == EntityId::SEDP_SUBSCRIPTIONS_SECURE_READER
}

impl Participant {
    /// Creates the secure builtin endpoints (as Cyclone DDS does, whatever the governance
    /// protects) and registers them with the plugin.
    pub(crate) fn create_secure_builtin_endpoints(&mut self) {
        for (w, r, _, _) in SECURE_BUILTIN_PAIRS {
            self.create_builtin_pair(w, r);
            self.register_endpoint_security(w, secure_builtin_topic(w), true);
            self.register_endpoint_security(r, secure_builtin_topic(r), false);
        }
    }

    /// The builtin endpoint bits of the secure builtin endpoints (when secure).
    pub(crate) fn secure_builtin_bits(&self) -> u32 {
        if self.security.is_none() {
            return 0;
        }
        SECURE_BUILTIN_PAIRS
            .iter()
            .fold(0, |acc, (_, _, a, d)| acc | a | d)
    }

    /// Matches the secure builtin endpoints with admitted participant `data`'s, and tells the
    /// plugin of each new pairing (it sends our tokens for them).
    pub(crate) fn match_secure_builtin(&mut self, now: Instant, data: &ParticipantData) {
        if self.security.is_none() {
            return;
        }
        let added = self.match_builtin_pairs(now, data, &SECURE_BUILTIN_PAIRS);
        for (local, remote) in added {
            self.security_match(now, local, remote, None);
        }
    }

    /// Registers local endpoint `id` of `topic` with the plugin, remembering the attributes
    /// it announces.
    pub(crate) fn register_endpoint_security(&mut self, id: EntityId, topic: &str, writer: bool) {
        let Some(sec) = self.security.as_mut() else {
            return;
        };
        match sec.register_local_endpoint(id, topic, writer) {
            Some(info) => {
                self.endpoint_security.insert(id, info);
            }
            None => {
                self.endpoint_security.remove(&id);
            }
        }
    }

    /// Forgets local endpoint `id` in the plugin (it was withdrawn).
    pub(crate) fn unregister_endpoint_security(&mut self, id: EntityId) {
        if let Some(sec) = self.security.as_mut() {
            sec.unregister_local_endpoint(id);
            self.endpoint_security.remove(&id);
        }
    }

    /// The security attributes local endpoint `id` announces, if any.
    pub(crate) fn endpoint_security_info(&self, id: EntityId) -> Option<SecurityInfo> {
        self.endpoint_security.get(&id).copied()
    }

    /// The SEDP writer that announces local endpoint `id`: the secure one when its
    /// discovery is protected.
    pub(crate) fn sedp_writer_for(&self, id: EntityId, is_writer: bool) -> EntityId {
        let secure = has(self.endpoint_security_info(id), IS_DISCOVERY_PROTECTED);
        match (is_writer, secure) {
            (true, false) => EntityId::SEDP_PUBLICATIONS_WRITER,
            (true, true) => EntityId::SEDP_PUBLICATIONS_SECURE_WRITER,
            (false, false) => EntityId::SEDP_SUBSCRIPTIONS_WRITER,
            (false, true) => EntityId::SEDP_SUBSCRIPTIONS_SECURE_WRITER,
        }
    }

    /// Whether local writer `id`'s payloads are encoded (data protection).
    pub(crate) fn payload_protected(&self, id: EntityId) -> bool {
        has(self.endpoint_security_info(id), IS_PAYLOAD_PROTECTED)
    }

    /// Asks the plugin whether remote endpoint `remote` (announcing `info`) may be matched
    /// with our `local`, and sends the tokens it queues. `false`: refused (an event says why).
    pub(crate) fn security_match(
        &mut self,
        now: Instant,
        local: EntityId,
        remote: Guid,
        info: Option<SecurityInfo>,
    ) -> bool {
        let Some(sec) = self.security.as_mut() else {
            return true;
        };
        let mut out = SecurityOutput::default();
        match sec.match_remote_endpoint(now, local, remote, info, &mut out) {
            Ok(()) => {
                self.apply_security_output(now, out);
                true
            }
            Err(reason) => {
                self.stats.secure_rejected += 1;
                self.push_event(Event::EndpointRefused {
                    guid: remote,
                    reason,
                });
                false
            }
        }
    }

    /// Tells the plugin a remote endpoint is gone.
    pub(crate) fn security_forget_endpoint(&mut self, remote: Guid) {
        if let Some(sec) = self.security.as_mut() {
            sec.forget_remote_endpoint(remote);
        }
    }

    /// Decodes into `out` the serialized payload (of a DATA) or the fragments (of a
    /// DATA_FRAG: `fragments` octets of the sample) that remote writer `writer` encoded
    /// under data protection. `Ok(false)`: it is not protected; use it as it is. `Err`: it
    /// does not decode and is dropped (counted).
    ///
    /// A DATA_FRAG's fragments are encoded each on their own (as Cyclone DDS 0.10 and
    /// Fast DDS 2.9 do), padded to four octets by Cyclone and by us but not by Fast DDS, whose
    /// submessage padding then follows a signed payload's footer: a last fragment that does
    /// not decode with the padding is tried without it.
    pub(crate) fn decode_received(
        &mut self,
        writer: Guid,
        encoded: &[u8],
        fragments: Option<usize>,
        out: &mut Vec<u8>,
    ) -> Result<bool, ()> {
        let Some(sec) = self.security.as_mut() else {
            return Ok(false);
        };
        if encoded.is_empty() || writer.prefix == self.prefix {
            return Ok(false);
        }
        let base = out.len();
        let mut result = sec.decode_payload(writer, encoded, out);
        let pad = fragments.map_or(0, |n| (4 - n % 4) % 4);
        if result.is_err() && pad > 0 && encoded.len() > pad {
            out.truncate(base);
            result = sec.decode_payload(writer, &encoded[..encoded.len() - pad], out);
        }
        match (result, fragments) {
            (Ok(false), _) => Ok(false),
            (Ok(true), None) => Ok(true),
            (Ok(true), Some(n)) if out.len() - base >= n => {
                out.truncate(base + n);
                Ok(true)
            }
            _ => {
                out.truncate(base);
                self.stats.secure_rejected += 1;
                Err(())
            }
        }
    }

    /// The writer participant messages (liveliness) go over.
    pub(crate) fn participant_message_writer(&self) -> EntityId {
        match &self.security {
            Some(sec) if sec.liveliness_protected() => EntityId::P2P_MESSAGE_SECURE_WRITER,
            _ => EntityId::P2P_MESSAGE_WRITER,
        }
    }
}
