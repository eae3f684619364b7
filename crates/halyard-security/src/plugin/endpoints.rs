//! Endpoint cryptography: metadata (submessage) and data (payload) protection of user
//! endpoints and of the secure builtin endpoints (discovery and liveliness protection),
//! with the endpoint crypto tokens exchanged over the volatile secure channel.
//!
//! # Keys (as Cyclone DDS 0.10's `crypto_key_factory.c` makes them)
//!
//! * A local **writer** whose topic rule asks for metadata protection gets a *message* key
//!   material; one whose rule asks for data protection a *payload* key material. A local
//!   **reader** gets a message key material only (for its ACKNACKs and NACK_FRAGs). The secure
//!   builtin endpoints take their kind from the domain rule's discovery (SEDP) or liveliness
//!   (participant messages) protection kind.
//! * Every key material has its own sender key id, from one counter (the participant key
//!   material is id 1). A receiver finds the key of a protected submessage or payload by the
//!   key id in its CryptoHeader, per remote participant.
//! * **Origin authentication** (SIGN/ENCRYPT_WITH_ORIGIN_AUTHENTICATION metadata): each remote
//!   endpoint matched with a local one is sent a copy of the message key material with its
//!   own receiver-specific key, and every protected submessage carries one receiver-specific
//!   MAC per remote endpoint it is for.
//!
//! # Tokens (Cyclone `ddsi_security_exchange.c`, `crypto_key_exchange.c`)
//!
//! When a remote endpoint is matched with a local endpoint that has keys, a
//! ParticipantGenericMessage of class `dds.sec.datawriter_crypto_tokens` (from a writer) or
//! `dds.sec.datareader_crypto_tokens` (from a reader) goes to the remote participant over the
//! volatile secure channel: destination participant and endpoint = the remote's, source
//! endpoint = ours, message data = one CryptoToken per key material (a writer's message key
//! material first, then its payload key material). An endpoint without keys sends nothing.
//!
//! # Matching
//!
//! Two endpoints whose announced security attributes both carry the valid bit must announce
//! the same attributes (Cyclone `SECURITY_INFO_COMPATIBLE`); otherwise they are not matched.
//! A remote endpoint that announces none is assumed to be protected as ours is.

use super::*;
use crate::access::{mask, BuiltinSecureTopic, EndpointSecurityInfo};
use crate::token::{GMCLASSID_DATAREADER_CRYPTO_TOKENS, GMCLASSID_DATAWRITER_CRYPTO_TOKENS};
use halyard_core::wire::discovery::SecurityInfo;

/// IS_VALID in every security attribute mask.
const IS_VALID: u32 = 1 << 31;

/// One of our endpoints, as the crypto plugin knows it.
pub(super) struct LocalEndpoint {
    writer: bool,
    info: EndpointSecurityInfo,
    /// Metadata protection kind (submessages).
    metadata: ProtectionKind,
    /// The message key material's encoder.
    message: Option<SenderCrypto>,
    /// The payload key material's encoder (writers with data protection).
    payload: Option<SenderCrypto>,
    /// The message key material each matched remote endpoint was sent (with its
    /// receiver-specific key under origin authentication).
    remotes: BTreeMap<Guid, KeyMaterial>,
}

/// A remote endpoint matched with one of ours.
pub(super) struct RemoteEndpoint {
    /// It protects its submessages.
    submessages: bool,
    /// It protects its payloads.
    payloads: bool,
}

/// The crypto transform of a data protection kind.
fn payload_transform(k: BasicProtectionKind) -> TransformKind {
    match k {
        BasicProtectionKind::None => TransformKind::None,
        BasicProtectionKind::Sign => TransformKind::Aes256Gmac,
        BasicProtectionKind::Encrypt => TransformKind::Aes256Gcm,
    }
}

fn attrs(i: EndpointSecurityInfo) -> SecurityInfo {
    SecurityInfo {
        attributes: i.endpoint_security_attributes,
        plugin_attributes: i.plugin_endpoint_security_attributes,
    }
}

/// Whether two attribute masks may be matched (equal, or either not valid).
fn compatible(a: u32, b: u32) -> bool {
    a == b || a & IS_VALID == 0 || b & IS_VALID == 0
}

impl BuiltinSecurity {
    /// A fresh sender key id.
    fn next_key_id(&mut self) -> u32 {
        self.next_key_id = self.next_key_id.wrapping_add(1).max(2);
        self.next_key_id
    }

    fn sender(&mut self, kind: TransformKind) -> Option<SenderCrypto> {
        if kind == TransformKind::None {
            return None;
        }
        let id = self.next_key_id();
        let km = KeyMaterial::generate(kind, id, self.rng.as_mut());
        SenderCrypto::new(km, self.rng.as_mut()).ok()
    }

    pub(super) fn register_local(
        &mut self,
        local: EntityId,
        topic: &str,
        writer: bool,
    ) -> Option<SecurityInfo> {
        let builtin = match topic {
            "DCPSPublicationsSecure" | "DCPSSubscriptionsSecure" => Some((
                BuiltinSecureTopic::Discovery,
                self.rule.discovery_protection_kind,
            )),
            "DCPSParticipantMessageSecure" => Some((
                BuiltinSecureTopic::ParticipantMessage,
                self.rule.liveliness_protection_kind,
            )),
            _ => None,
        };
        let (info, metadata, data) = match builtin {
            Some((t, kind)) => (
                self.rule.builtin_endpoint_security_info(t),
                kind,
                BasicProtectionKind::None,
            ),
            None => {
                let rule = self.rule.topic_rule(topic)?;
                (
                    rule.endpoint_security_info(),
                    rule.metadata_protection_kind,
                    rule.data_protection_kind,
                )
            }
        };
        let message = self.sender(protection::transform_kind(metadata));
        let payload = match writer {
            true => self.sender(payload_transform(data)),
            false => None,
        };
        self.local_endpoints.insert(
            local,
            LocalEndpoint {
                writer,
                info,
                metadata,
                message,
                payload,
                remotes: BTreeMap::new(),
            },
        );
        Some(attrs(info))
    }

    pub(super) fn unregister_local(&mut self, local: EntityId) {
        self.local_endpoints.remove(&local);
    }

    pub(super) fn match_remote(
        &mut self,
        local: EntityId,
        remote: Guid,
        info: Option<SecurityInfo>,
        out: &mut SecurityOutput,
    ) -> Result<(), String> {
        let Some(ep) = self.local_endpoints.get(&local) else {
            return Ok(());
        };
        let ours = attrs(ep.info);
        if let Some(theirs) = info {
            if !compatible(ours.attributes, theirs.attributes)
                || !compatible(ours.plugin_attributes, theirs.plugin_attributes)
            {
                return Err(format!(
                    "its security attributes {:#010x}/{:#010x} differ from ours {:#010x}/{:#010x} \
                     (the participants' governance documents disagree on this topic)",
                    theirs.attributes,
                    theirs.plugin_attributes,
                    ours.attributes,
                    ours.plugin_attributes
                ));
            }
        }
        let effective = match info {
            Some(i) if i.attributes & IS_VALID != 0 => i.attributes,
            _ => ours.attributes,
        };
        self.remote_endpoints.insert(
            remote,
            RemoteEndpoint {
                submessages: effective & mask::ENDPOINT_IS_SUBMESSAGE_PROTECTED != 0,
                payloads: effective & mask::ENDPOINT_IS_PAYLOAD_PROTECTED != 0,
            },
        );
        self.send_endpoint_tokens(local, remote, out);
        Ok(())
    }

    /// Sends local endpoint `local`'s tokens to remote endpoint `remote` (nothing when it has
    /// no keys).
    fn send_endpoint_tokens(&mut self, local: EntityId, remote: Guid, out: &mut SecurityOutput) {
        let origin = {
            let Some(ep) = self.local_endpoints.get(&local) else {
                return;
            };
            ep.metadata.is_origin_authenticated()
        };
        let rs_id = match origin {
            true => Some(self.next_key_id()),
            false => None,
        };
        let Some(ep) = self.local_endpoints.get_mut(&local) else {
            return;
        };
        let mut keymats = Vec::new();
        if let Some(m) = &ep.message {
            let km = match rs_id {
                Some(id) => m
                    .key_material()
                    .with_receiver_specific_key(id, self.rng.as_mut()),
                None => m.key_material().clone(),
            };
            ep.remotes.insert(remote, km.clone());
            keymats.push(km);
        }
        if let Some(p) = &ep.payload {
            keymats.push(p.key_material().clone());
        }
        if keymats.is_empty() {
            return;
        }
        let class = match ep.writer {
            true => GMCLASSID_DATAWRITER_CRYPTO_TOKENS,
            false => GMCLASSID_DATAREADER_CRYPTO_TOKENS,
        };
        let message_data = keymats
            .iter()
            .map(|km| {
                let (class, name, bytes) = keymat_token_parts(km);
                DataHolder::new(class).with_binary(name, &bytes)
            })
            .collect();
        self.next_sn += 1;
        let me = self.guid_prefix();
        let m = ParticipantGenericMessage {
            message_identity: MessageIdentity {
                source_guid: Guid::new(me, EntityId::P2P_VOLATILE_SECURE_WRITER).to_bytes(),
                sequence_number: self.next_sn,
            },
            related_message_identity: MessageIdentity::default(),
            destination_participant_guid: Guid::new(remote.prefix, EntityId::PARTICIPANT)
                .to_bytes(),
            destination_endpoint_guid: remote.to_bytes(),
            source_endpoint_guid: Guid::new(me, local).to_bytes(),
            message_class_id: class.to_owned(),
            message_data,
        };
        if let Ok(payload) = m.to_payload() {
            out.volatile.push((remote.prefix, payload));
        }
    }

    pub(super) fn forget_remote(&mut self, remote: Guid) {
        self.remote_endpoints.remove(&remote);
        for ep in self.local_endpoints.values_mut() {
            ep.remotes.remove(&remote);
        }
    }

    /// Endpoint crypto tokens from `source` (over the volatile channel): its key materials,
    /// kept by sender key id.
    pub(super) fn on_endpoint_tokens(&mut self, source: GuidPrefix, m: &ParticipantGenericMessage) {
        let dst = Guid::from_bytes(m.destination_endpoint_guid);
        if dst.prefix != self.guid_prefix() || !self.local_endpoints.contains_key(&dst.entity) {
            return;
        }
        if m.message_data.is_empty() || m.message_data.len() > 2 {
            self.rejected += 1;
            return;
        }
        let Some(peer) = self.peers.get_mut(&source) else {
            self.rejected += 1;
            return;
        };
        for token in &m.message_data {
            match protection::receiver_from_token(token, peer.replay_window) {
                Ok(rx) => {
                    let id = rx.key_material().sender_key_id;
                    // A bound: a peer's endpoints, each at most two key materials.
                    if peer.endpoint_keys.len() >= MAX_ENDPOINT_KEYS_PER_PEER
                        && !peer.endpoint_keys.contains_key(&id)
                    {
                        self.rejected += 1;
                        return;
                    }
                    peer.endpoint_keys.insert(id, rx);
                }
                Err(_) => {
                    self.rejected += 1;
                    return;
                }
            }
        }
    }

    /// Whether our endpoint `local` protects its submessages (it has a message key material).
    pub(super) fn protects_submessages_of(&self, local: EntityId) -> bool {
        self.local_endpoints
            .get(&local)
            .is_some_and(|ep| ep.message.is_some())
    }

    /// Protects a submessage of one of our endpoints with its message key material.
    pub(super) fn protect_endpoint_submessage(
        &mut self,
        local: EntityId,
        destination: Option<GuidPrefix>,
        plain: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool, Rejected> {
        let Some(ep) = self.local_endpoints.get_mut(&local) else {
            return Ok(false);
        };
        let Some(sender) = ep.message.as_mut() else {
            return Ok(false);
        };
        let receivers: Vec<&KeyMaterial> = ep
            .remotes
            .iter()
            .filter(|(g, km)| {
                km.receiver_specific_key_id != 0 && destination.is_none_or(|d| g.prefix == d)
            })
            .map(|(_, km)| km)
            .collect();
        sender
            .encode_submessage(plain, &receivers, out)
            .map(|_| true)
            .map_err(|_| Rejected("submessage could not be protected"))
    }

    /// Whether local writer `local` encodes its payloads (data protection).
    pub(super) fn protects_local_payload(&self, local: EntityId) -> bool {
        self.local_endpoints
            .get(&local)
            .is_some_and(|ep| ep.payload.is_some())
    }

    pub(super) fn encode_local_payload(
        &mut self,
        local: EntityId,
        plain: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool, Rejected> {
        let Some(sender) = self
            .local_endpoints
            .get_mut(&local)
            .and_then(|ep| ep.payload.as_mut())
        else {
            return Ok(false);
        };
        // RTPS pads a submessage to four octets, and a signed payload's footer is found from
        // its end: the plain payload is padded to four octets first (CDR ignores trailing
        // padding; a fragment's receiver knows its length), so that the encoded one needs
        // none.
        sender
            .encode_serialized_payload_padded(plain, out)
            .map(|_| true)
            .map_err(|_| Rejected("payload could not be protected"))
    }

    pub(super) fn decode_remote_payload(
        &mut self,
        writer: Guid,
        encoded: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool, Rejected> {
        if !self
            .remote_endpoints
            .get(&writer)
            .is_some_and(|r| r.payloads)
        {
            return Ok(false);
        }
        let header = crate::crypto::CryptoHeader::read(encoded)
            .map_err(|_| Rejected("protected payload without a CryptoHeader"))?;
        let rx = self
            .peers
            .get_mut(&writer.prefix)
            .and_then(|p| p.endpoint_keys.get_mut(&header.transformation_key_id))
            .ok_or(Rejected("protected payload of a key we were not sent"))?;
        rx.decode_serialized_payload(encoded, out)
            .map(|_| true)
            .map_err(protection::why_rejected)
    }

    /// Whether a plain submessage between `source`'s endpoint `remote` and our `local` may be
    /// accepted: not when either side protects its submessages.
    pub(super) fn plain_endpoint_submessage_acceptable(
        &self,
        source: GuidPrefix,
        remote: EntityId,
        local: EntityId,
    ) -> bool {
        let ours = self
            .local_endpoints
            .get(&local)
            .is_some_and(|ep| ep.message.is_some());
        let theirs = self
            .remote_endpoints
            .get(&Guid::new(source, remote))
            .is_some_and(|r| r.submessages);
        !ours && !theirs
    }
}

/// At most this many endpoint key materials are kept per remote participant.
const MAX_ENDPOINT_KEYS_PER_PEER: usize = 8192;
