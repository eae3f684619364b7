//! Cryptographic protection: our participant keys, the key exchange over the volatile secure
//! channel, and rtps protection of whole messages (see the parent module).

use super::*;

/// Key id of our participant key material (key-exchange keys use 0).
const PARTICIPANT_KEY_ID: u32 = 1;

/// The crypto transform for a protection kind (Cyclone: SIGN -> AES256-GMAC, ENCRYPT ->
/// AES256-GCM).
pub(super) fn transform_kind(k: ProtectionKind) -> TransformKind {
    match k {
        ProtectionKind::None => TransformKind::None,
        ProtectionKind::Sign | ProtectionKind::SignWithOriginAuthentication => {
            TransformKind::Aes256Gmac
        }
        ProtectionKind::Encrypt | ProtectionKind::EncryptWithOriginAuthentication => {
            TransformKind::Aes256Gcm
        }
    }
}

fn is_volatile(e: EntityId) -> bool {
    e == EntityId::P2P_VOLATILE_SECURE_WRITER || e == EntityId::P2P_VOLATILE_SECURE_READER
}

/// Whether rtps protection covers an endpoint's traffic: user endpoints and the secure
/// builtin ones. The other builtin endpoints (SPDP, SEDP, participant messages, and the
/// stateless and volatile secure channels, which must work before any key is known) are
/// never rtps-protected (as in Cyclone DDS's `maybe_rtps_protected`).
fn rtps_protected_entity(e: EntityId) -> bool {
    if e == EntityId::UNKNOWN {
        return false;
    }
    !e.is_builtin()
        || [
            EntityId::SEDP_PUBLICATIONS_SECURE_WRITER,
            EntityId::SEDP_PUBLICATIONS_SECURE_READER,
            EntityId::SEDP_SUBSCRIPTIONS_SECURE_WRITER,
            EntityId::SEDP_SUBSCRIPTIONS_SECURE_READER,
            EntityId::P2P_MESSAGE_SECURE_WRITER,
            EntityId::P2P_MESSAGE_SECURE_READER,
            EntityId::SPDP_RELIABLE_SECURE_WRITER,
            EntityId::SPDP_RELIABLE_SECURE_READER,
        ]
        .contains(&e)
}

/// What rtps protection makes of a message: (some submessage is of an rtps-protected
/// endpoint, some submessage must go plain: SPDP, the handshake, the key exchange).
fn rtps_kinds(message: &[u8]) -> (bool, bool) {
    let Ok(m) = halyard_core::wire::Message::parse(message) else {
        return (false, true);
    };
    rtps_kinds_of(m.submessages())
}

/// [`rtps_kinds`] of a message's submessages. Only the submessage headers and the endpoint
/// ids are read (`Submessages::next_raw`): this runs on every datagram sent, and a datagram of
/// small samples holds a thousand submessages.
fn rtps_kinds_of(mut submessages: halyard_core::wire::Submessages<'_>) -> (bool, bool) {
    let (mut protected, mut plain) = (false, false);
    // Consecutive submessages are mostly of one pair of endpoints: judge each pair once.
    let mut last: Option<([EntityId; 2], bool, bool)> = None;
    while let Some(raw) = submessages.next_raw() {
        let Ok(raw) = raw else {
            return (protected, true);
        };
        // A protected submessage (SEC_PREFIX … SEC_POSTFIX) has no endpoint ids here: it is
        // judged by the endpoint it belongs to (the volatile channel's are flagged when they
        // are protected).
        let Some(e) = raw.endpoints else {
            continue;
        };
        let ids = [e.writer, e.reader];
        let (p, must_be_plain) = match last {
            Some((l, p, m)) if l == ids => (p, m),
            _ => {
                let m = ids.iter().any(|e| {
                    [
                        EntityId::SPDP_WRITER,
                        EntityId::SPDP_READER,
                        EntityId::P2P_STATELESS_MESSAGE_WRITER,
                        EntityId::P2P_STATELESS_MESSAGE_READER,
                        EntityId::P2P_VOLATILE_SECURE_WRITER,
                        EntityId::P2P_VOLATILE_SECURE_READER,
                    ]
                    .contains(e)
                });
                let p = ids.iter().any(|e| rtps_protected_entity(*e));
                last = Some((ids, p, m));
                (p, m)
            }
        };
        plain |= must_be_plain;
        protected |= p;
    }
    (protected, plain)
}

/// The decoder of the key material a CryptoToken carries (`replay`: our replay window on).
pub(super) fn receiver_from_token(
    token: &DataHolder,
    replay: bool,
) -> Result<ReceiverCrypto, crate::crypto::CryptoError> {
    let props: Vec<(&str, &[u8])> = token
        .binary_properties
        .iter()
        .map(|b| (b.name.as_str(), b.value.as_slice()))
        .collect();
    let mut rx = keymat_from_token_parts(&token.class_id, &props).and_then(ReceiverCrypto::new)?;
    rx.set_replay_protection(replay);
    Ok(rx)
}

/// The reason a protected submessage or message was dropped.
pub(super) fn why_rejected(e: crate::crypto::CryptoError) -> Rejected {
    use crate::crypto::CryptoError as E;
    Rejected(match e {
        E::TamperedOrWrongKey => "protected data failed its MAC (tampered, or a wrong key)",
        E::Replayed => "protected data replayed (an initialization vector seen before)",
        E::UnknownKeyId { .. } => "protected data names a key we do not have",
        E::MissingReceiverSpecificMac { .. } => "protected data lacks our receiver-specific MAC",
        E::KindMismatch { .. } => "protected data uses another transformation kind",
        _ => "protected data is malformed",
    })
}

impl BuiltinSecurity {
    /// Makes our participant key material, of the kind rtps protection asks for.
    pub(super) fn with_participant_keys(mut self) -> Self {
        let kind = transform_kind(self.rule.rtps_protection_kind);
        if kind != TransformKind::None {
            let km = KeyMaterial::generate(kind, PARTICIPANT_KEY_ID, self.rng.as_mut());
            if let Ok(sender) = SenderCrypto::new(km.clone(), self.rng.as_mut()) {
                self.participant_keys = Some((km, sender));
            }
        }
        self
    }

    /// After admitting `peer`: the key-exchange keys, and our participant crypto tokens to it.
    pub(super) fn start_key_exchange(&mut self, peer: GuidPrefix, out: &mut SecurityOutput) {
        let Some(p) = self.peers.get_mut(&peer) else {
            return;
        };
        let Some(secret) = &p.secret else {
            return;
        };
        let Ok(kx) = KeyMaterial::derive_key_exchange(
            &secret.challenge1,
            &secret.challenge2,
            &secret.shared_secret,
        ) else {
            return;
        };
        let (Ok(tx), Ok(mut rx)) = (
            SenderCrypto::new(kx.clone(), self.rng.as_mut()),
            ReceiverCrypto::new(kx),
        ) else {
            return;
        };
        rx.set_replay_protection(p.replay_window);
        p.kx = Some((tx, rx));
        // Without rtps protection there is no participant key material, but the tokens
        // message still goes (empty): Cyclone DDS completes a handshake, and only then
        // matches the peer's access-controlled endpoints, once it has the peer's tokens.
        let Some((km, _)) = &self.participant_keys else {
            if !p.fast_dds {
                self.send_participant_tokens(peer, Vec::new(), out);
            }
            return;
        };
        // Origin authentication: this peer's copy has its own receiver-specific key, and
        // each message protected for it carries a MAC under that key.
        let km = if self.rule.rtps_protection_kind.is_origin_authenticated() {
            self.next_key_id = self.next_key_id.wrapping_add(1).max(2);
            let copy = km.with_receiver_specific_key(self.next_key_id, self.rng.as_mut());
            if let Some(p) = self.peers.get_mut(&peer) {
                p.participant_sent = Some(copy.clone());
            }
            copy
        } else {
            km.clone()
        };
        let (class, name, bytes) = keymat_token_parts(&km);
        let token = DataHolder::new(class).with_binary(name, &bytes);
        self.send_participant_tokens(peer, vec![token], out);
    }

    /// Queues our participant crypto tokens message for `peer`.
    fn send_participant_tokens(
        &mut self,
        peer: GuidPrefix,
        message_data: Vec<DataHolder>,
        out: &mut SecurityOutput,
    ) {
        self.next_sn += 1;
        let me = Guid::new(self.guid_prefix(), EntityId::P2P_VOLATILE_SECURE_WRITER);
        let m = ParticipantGenericMessage {
            message_identity: MessageIdentity {
                source_guid: me.to_bytes(),
                sequence_number: self.next_sn,
            },
            related_message_identity: MessageIdentity::default(),
            destination_participant_guid: Guid::new(peer, EntityId::PARTICIPANT).to_bytes(),
            destination_endpoint_guid: [0; 16],
            source_endpoint_guid: [0; 16],
            message_class_id: GMCLASSID_PARTICIPANT_CRYPTO_TOKENS.to_owned(),
            message_data,
        };
        if let Ok(payload) = m.to_payload() {
            out.volatile.push((peer, payload));
        }
    }

    pub(super) fn on_volatile_message(
        &mut self,
        _now: Instant,
        source: GuidPrefix,
        payload: &[u8],
        _out: &mut SecurityOutput,
    ) {
        let Ok(m) = ParticipantGenericMessage::from_payload(payload) else {
            self.rejected += 1;
            return;
        };
        let me = Guid::new(self.guid_prefix(), EntityId::PARTICIPANT).to_bytes();
        if m.destination_participant_guid != me {
            return;
        }
        if m.message_class_id == GMCLASSID_DATAWRITER_CRYPTO_TOKENS
            || m.message_class_id == GMCLASSID_DATAREADER_CRYPTO_TOKENS
        {
            self.on_endpoint_tokens(source, &m);
            return;
        }
        if m.message_class_id != GMCLASSID_PARTICIPANT_CRYPTO_TOKENS {
            return;
        }
        let Some(token) = m.message_data.first() else {
            // No tokens: the peer protects nothing with a participant key (rtps protection
            // NONE); one that should have sent keys fails its rtps-protected traffic instead.
            return;
        };
        let Some(p) = self.peers.get_mut(&source) else {
            self.rejected += 1;
            return;
        };
        match receiver_from_token(token, p.replay_window) {
            Ok(rx) => p.participant = Some(rx),
            Err(_) => self.rejected += 1,
        }
    }

    pub(super) fn protect_volatile_submessage(
        &mut self,
        local: EntityId,
        destination: Option<GuidPrefix>,
        plain: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool, Rejected> {
        if !is_volatile(local) {
            // Encrypted, the submessage no longer shows whose it is: remember that this
            // datagram holds one rtps protection covers.
            self.rtps_entity_in_datagram |= rtps_protected_entity(local);
            return self.protect_endpoint_submessage(local, destination, plain, out);
        }
        self.volatile_in_datagram = true;
        let kx = destination
            .and_then(|d| self.peers.get_mut(&d))
            .and_then(|p| p.kx.as_mut())
            .ok_or(Rejected(
                "volatile secure message for a participant without key-exchange keys",
            ))?;
        kx.0.encode_submessage(plain, &[], out)
            .map(|_| true)
            .map_err(|_| Rejected("volatile secure submessage could not be encoded"))
    }

    pub(super) fn unprotect_any_submessage(
        &mut self,
        source: GuidPrefix,
        bytes: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<usize, Rejected> {
        let header = peek_submessage_header(bytes).map_err(|_| Rejected("malformed SEC_PREFIX"))?;
        let p = self
            .peers
            .get_mut(&source)
            .ok_or(Rejected("protected submessage from an unknown participant"))?;
        let id = header.transformation_key_id;
        let rx = if id == 0 {
            p.kx.as_mut().map(|kx| &mut kx.1)
        } else if p.endpoint_keys.contains_key(&id) {
            p.endpoint_keys.get_mut(&id)
        } else {
            p.participant.as_mut()
        };
        let rx = rx.ok_or(Rejected("no key for this protected submessage"))?;
        rx.decode_submessage_overwriting(bytes, out)
            .map_err(why_rejected)
    }

    /// What both forms of whole-message protection start from. Takes this datagram's flags
    /// (they start afresh with every datagram); `None` when the datagram goes unprotected: it
    /// carries a volatile secure submessage (key-exchange keys must reach a peer that may not
    /// have our participant keys yet), or we have no participant keys. Otherwise: whether an
    /// rtps-protected entity's submessage is in it, our participant sender, and, under origin
    /// authentication, the keys of each participant the message is for (a MAC each).
    fn message_protection(
        &mut self,
        destination: Option<GuidPrefix>,
    ) -> Option<(bool, &mut SenderCrypto, Vec<&KeyMaterial>)> {
        let hidden_protected = std::mem::take(&mut self.rtps_entity_in_datagram);
        if std::mem::take(&mut self.volatile_in_datagram) {
            return None;
        }
        let (_, sender) = self.participant_keys.as_mut()?;
        let receivers = self
            .peers
            .iter()
            .filter(|(g, _)| destination.is_none_or(|d| **g == d))
            .filter_map(|(_, p)| p.participant_sent.as_ref())
            .collect();
        Some((hidden_protected, sender, receivers))
    }

    pub(super) fn protect_whole_message(
        &mut self,
        destination: Option<GuidPrefix>,
        message: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool, Rejected> {
        let Some((hidden_protected, sender, receivers)) = self.message_protection(destination)
        else {
            return Ok(false);
        };
        let (protected, plain) = rtps_kinds(message);
        if !(protected || hidden_protected) || plain {
            return Ok(false);
        }
        let (Some(header), Some(body)) = (message.get(..20), message.get(20..)) else {
            return Ok(false);
        };
        let mut h = [0u8; 20];
        h.copy_from_slice(header);
        sender
            .encode_rtps_message(&h, body, &receivers, out)
            .map(|_| true)
            .map_err(|_| Rejected("message could not be protected"))
    }

    /// Octets [`BuiltinSecurity::protect_whole_message_in_place`] wants between the RTPS
    /// header and the submessages (0 without rtps protection).
    pub(super) fn whole_message_headroom(&self) -> usize {
        self.participant_keys
            .as_ref()
            .map_or(0, |(_, sender)| sender.message_headroom())
    }

    /// [`BuiltinSecurity::protect_whole_message`] in place: `buf` is the RTPS header,
    /// `headroom` free octets, then the submessages (see
    /// [`SenderCrypto::encode_rtps_message_in_place`]). `Ok(false)`: not protected, `buf`
    /// unchanged.
    pub(super) fn protect_whole_message_in_place(
        &mut self,
        destination: Option<GuidPrefix>,
        buf: &mut Vec<u8>,
        headroom: usize,
    ) -> Result<bool, Rejected> {
        let Some((hidden_protected, sender, receivers)) = self.message_protection(destination)
        else {
            return Ok(false);
        };
        let Some(subs) = buf.get(20 + headroom..) else {
            return Ok(false);
        };
        let (protected, plain) = rtps_kinds_of(halyard_core::wire::Submessages::over(subs));
        if !(protected || hidden_protected) || plain {
            return Ok(false);
        }
        sender
            .encode_rtps_message_in_place(buf, headroom, &receivers)
            .map(|_| true)
            .map_err(|_| Rejected("message could not be protected"))
    }

    pub(super) fn unprotect_whole_message(
        &mut self,
        source: GuidPrefix,
        message: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), Rejected> {
        let rx = self
            .peers
            .get_mut(&source)
            .and_then(|p| p.participant.as_mut())
            .ok_or(Rejected(
                "protected message from a participant whose keys we lack",
            ))?;
        rx.decode_rtps_message_overwriting(message, out)
            .map_err(why_rejected)
    }

    pub(super) fn plain_submessage_acceptable(
        &self,
        source: GuidPrefix,
        remote: EntityId,
        local: EntityId,
        in_protected_message: bool,
    ) -> bool {
        // Under rtps protection a peer that has our keys must protect what rtps protection
        // covers (user and secure builtin endpoints); the other builtin endpoints always
        // come plain. Before its keys arrive a peer cannot protect.
        let rtps_ok = in_protected_message
            || self.rule.rtps_protection_kind == ProtectionKind::None
            || !(rtps_protected_entity(remote) || rtps_protected_entity(local))
            || self
                .peers
                .get(&source)
                .is_none_or(|p| p.participant.is_none());
        rtps_ok
            && !(is_volatile(remote) || is_volatile(local))
            && self.plain_endpoint_submessage_acceptable(source, remote, local)
    }
}
