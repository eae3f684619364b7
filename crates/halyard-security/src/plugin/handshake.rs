//! The PKI-DH handshake with each remote participant over the stateless channel: who begins,
//! the messages, their resends (see the state table in the parent module).

use super::*;
use crate::auth::AuthError;

/// The first resend delay of an unanswered handshake message (it doubles up to
/// [`MAX_RESEND`]).
const FIRST_RESEND: Duration = Duration::from_millis(200);
/// The longest resend delay.
const MAX_RESEND: Duration = Duration::from_secs(2);
/// AuthRequests kept from participants not discovered yet.
const MAX_EARLY_AUTH_REQUESTS: usize = 64;
/// How long after a peer's discovery its handshake may stay unfinished, the peer alive,
/// before the user is told that it does not accept our identity. Between live participants
/// a handshake takes milliseconds, and several resends of an unanswered message fall within
/// it; a peer whose lease ends first is forgotten, not reported.
pub(super) const UNANSWERED_WARNING: Duration = Duration::from_secs(5);
/// The longest process name or host name of a peer put in a warning.
const MAX_LABEL_PART: usize = 64;

/// Whether `e` refuses a peer's certificate itself (rather than a message of the handshake).
fn refuses_certificate(e: &AuthError) -> bool {
    matches!(
        e,
        AuthError::WrongCa { .. } | AuthError::Expired { .. } | AuthError::NotYetValid { .. }
    )
}

/// What the user is advised when a certificate is refused, by either side.
const ADVICE: &str = "check that both use the same identity CA and that neither certificate \
                      has expired";

/// A peer as the user can recognise it: its GUID prefix and, when its SPDP announcement
/// gives them (Halyard and Cyclone DDS do), its process name, pid and host.
fn peer_label(remote: &ParticipantData) -> String {
    let hex: String = remote
        .guid
        .prefix
        .0
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    // Peer input, printed on a terminal: printable characters only, bounded.
    let prop = |name: &str| {
        remote
            .properties
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| {
                v.chars()
                    .filter(|c| !c.is_control())
                    .take(MAX_LABEL_PART)
                    .collect::<String>()
            })
    };
    match (prop("__ProcessName"), prop("__Pid"), prop("__Hostname")) {
        (Some(name), Some(pid), Some(host)) => format!("{hex} ({name} pid {pid} on {host})"),
        (Some(name), Some(pid), None) => format!("{hex} ({name} pid {pid})"),
        _ => hex,
    }
}

impl BuiltinSecurity {
    pub(super) fn message(
        &mut self,
        to: GuidPrefix,
        class: &str,
        related: MessageIdentity,
        token: DataHolder,
    ) -> ParticipantGenericMessage {
        self.next_sn += 1;
        let me = Guid::new(self.guid_prefix(), EntityId::P2P_STATELESS_MESSAGE_WRITER);
        ParticipantGenericMessage {
            message_identity: MessageIdentity {
                source_guid: me.to_bytes(),
                sequence_number: self.next_sn,
            },
            related_message_identity: related,
            destination_participant_guid: Guid::new(to, EntityId::PARTICIPANT).to_bytes(),
            destination_endpoint_guid: [0; 16],
            source_endpoint_guid: [0; 16],
            message_class_id: class.to_owned(),
            message_data: vec![token],
        }
    }

    /// Queues `m` for sending (and again, with a new sequence number, if it is resent).
    pub(super) fn send(out: &mut SecurityOutput, to: GuidPrefix, m: &ParticipantGenericMessage) {
        if let Ok(payload) = m.to_payload() {
            out.stateless.push((to, payload));
        }
    }

    /// Sends a handshake message that is resent until answered.
    pub(super) fn send_until_answered(
        &mut self,
        now: Instant,
        to: GuidPrefix,
        m: ParticipantGenericMessage,
        out: &mut SecurityOutput,
    ) {
        Self::send(out, to, &m);
        if let Some(p) = self.peers.get_mut(&to) {
            p.last = Some(m.clone());
            p.resend = Some(Resend {
                message: m,
                at: now + FIRST_RESEND,
                delay: FIRST_RESEND,
            });
        }
    }

    /// The handshake with `from` is complete: access control decides.
    pub(super) fn completed(
        &mut self,
        from: GuidPrefix,
        secret: SharedSecret,
        identity: Option<PeerIdentity>,
    ) {
        let (decision, permissions) = match &identity {
            Some(id) => self.judge(id),
            None => (
                Admission::Refused("the handshake named no peer identity".into()),
                None,
            ),
        };
        if let Some(p) = self.peers.get_mut(&from) {
            p.phase = Phase::Done;
            p.resend = None;
            p.secret = Some(secret);
            p.identity = identity;
            p.admission = decision;
            p.permissions = permissions;
        }
    }

    pub(super) fn on_auth_request(&mut self, from: GuidPrefix, token: &DataHolder) {
        let accepted = match self.peers.get_mut(&from) {
            Some(p) => p.remote.receive_auth_request(token).is_ok(),
            None if self.early_auth_requests.len() < MAX_EARLY_AUTH_REQUESTS => {
                self.early_auth_requests.insert(from, token.clone());
                true
            }
            None => true,
        };
        if !accepted {
            self.rejected += 1;
        }
    }

    /// Tells the user `what` about `peer`, once (`SecurityOutput::warnings`).
    pub(super) fn warn(&mut self, peer: GuidPrefix, what: String, out: &mut SecurityOutput) {
        if let Some(p) = self.peers.get_mut(&peer) {
            if !p.warned {
                p.warned = true;
                out.warnings.push((peer, what));
            }
        }
    }

    pub(super) fn on_handshake(
        &mut self,
        now: Instant,
        from: GuidPrefix,
        m: &ParticipantGenericMessage,
        out: &mut SecurityOutput,
    ) {
        let Some(token) = m.message_data.first() else {
            self.rejected += 1;
            return;
        };
        let wall = (self.wall_clock)();
        let Some(peer) = self.peers.get_mut(&from) else {
            return;
        };
        // Its certificate, refused by us: said at once (the peer only sees silence).
        let mut refused: Option<AuthError> = None;
        // Any message of its refused, kept for the unfinished-handshake warning.
        let mut refusal: Option<String> = None;
        let phase = std::mem::replace(&mut peer.phase, Phase::Failed);
        let (phase, next) = match (phase, token.class_id.as_str()) {
            (Phase::WaitRequest, CLASS_ID_REQUEST) => match Handshake::begin_reply(
                &self.local,
                &peer.remote,
                token,
                &self.files.permissions,
                &self.pdata,
                &self.options,
                wall,
                self.rng.as_mut(),
            ) {
                Ok((hs, reply)) => (Phase::WaitFinal(Box::new(hs)), Next::Reply(reply)),
                Err(e) => {
                    let why = format!("its handshake Request was refused: {e}");
                    out.notices.push((from, why.clone()));
                    refusal = Some(why);
                    refused = refuses_certificate(&e).then_some(e);
                    (Phase::WaitRequest, Next::Reject)
                }
            },
            // Our Reply was lost: the initiator asks again.
            (p @ Phase::WaitFinal(_), CLASS_ID_REQUEST) => (p, Next::Repeat),
            (Phase::WaitReply(mut hs), CLASS_ID_REPLY) => match hs.process(token, wall) {
                Ok(Step::SendFinal { message, secret }) => {
                    let identity = hs.peer().cloned();
                    (Phase::Done, Next::Final(message, secret, identity))
                }
                Ok(Step::Completed(_)) => (Phase::WaitReply(hs), Next::Reject),
                Err(e) => {
                    let why = format!("its handshake Reply was refused: {e}");
                    out.notices.push((from, why.clone()));
                    refusal = Some(why);
                    refused = refuses_certificate(&e).then_some(e);
                    (Phase::WaitReply(hs), Next::Reject)
                }
            },
            // Our Final was lost: the replier repeats its Reply.
            (Phase::Done, CLASS_ID_REPLY) => (Phase::Done, Next::Repeat),
            (Phase::WaitFinal(mut hs), CLASS_ID_FINAL) => match hs.process(token, wall) {
                Ok(Step::Completed(secret)) => {
                    let identity = hs.peer().cloned();
                    (Phase::Done, Next::Completed(secret, identity))
                }
                Ok(Step::SendFinal { .. }) => (Phase::WaitFinal(hs), Next::Reject),
                Err(e) => {
                    let why = format!("its handshake Final was refused: {e}");
                    out.notices.push((from, why.clone()));
                    refusal = Some(why);
                    (Phase::WaitFinal(hs), Next::Reject)
                }
            },
            // Repeats of a completed exchange (Cyclone resends its Final).
            (Phase::Done, CLASS_ID_FINAL | CLASS_ID_REQUEST) => (Phase::Done, Next::Nothing),
            (p, _) => (p, Next::Reject),
        };
        peer.phase = phase;
        if refusal.is_some() {
            peer.refusal = refusal;
        }
        let last = peer.last.clone();
        if let Some(e) = refused {
            let what = format!(
                "identity of peer {} not accepted: {e}; {ADVICE}",
                peer.label
            );
            self.warn(from, what, out);
        }
        match next {
            Next::Nothing => {}
            Next::Reject => self.rejected += 1,
            Next::Repeat => {
                if let Some(last) = last {
                    Self::send(out, from, &last);
                }
            }
            Next::Reply(reply) => {
                let reply = self.message(from, GMCLASSID_AUTH_HANDSHAKE, m.message_identity, reply);
                self.send_until_answered(now, from, reply, out);
            }
            Next::Final(token, secret, identity) => {
                let fin = self.message(from, GMCLASSID_AUTH_HANDSHAKE, m.message_identity, token);
                Self::send(out, from, &fin);
                if let Some(p) = self.peers.get_mut(&from) {
                    p.last = Some(fin);
                }
                self.completed(from, secret, identity);
                self.report(from, out);
            }
            Next::Completed(secret, identity) => {
                self.completed(from, secret, identity);
                self.report(from, out);
            }
        }
    }

    pub(super) fn report(&mut self, peer: GuidPrefix, out: &mut SecurityOutput) {
        let Some(p) = self.peers.get(&peer) else {
            return;
        };
        let admission = p.admission.clone();
        if admission == Admission::Admitted {
            self.start_key_exchange(peer, out);
        }
        out.admissions.push((peer, admission));
    }

    pub(super) fn on_discovered(
        &mut self,
        now: Instant,
        remote: &ParticipantData,
        out: &mut SecurityOutput,
    ) -> Admission {
        let prefix = remote.guid.prefix;
        if let Some(p) = self.peers.get(&prefix) {
            return p.admission.clone();
        }
        let Some(encoded) = &remote.identity_token else {
            return if self.rule.allow_unauthenticated_participants {
                Admission::Admitted
            } else {
                Admission::Refused(
                    "it announced no identity and the governance does not allow \
                     unauthenticated participants"
                        .into(),
                )
            };
        };
        let endianness = if encoded.little_endian {
            Endianness::Little
        } else {
            Endianness::Big
        };
        let token = match DataHolder::from_parameter_value(&encoded.cdr, endianness) {
            Ok(t) => t,
            Err(e) => return Admission::Refused(format!("its identity token: {e}")),
        };
        let early = self.early_auth_requests.remove(&prefix);
        let remote_identity = match self.local.validate_remote_identity(
            &token,
            prefix.0,
            early.as_ref(),
            self.rng.as_mut(),
        ) {
            Ok(r) => r,
            Err(e) => return Admission::Refused(format!("its identity: {e}")),
        };
        let role = remote_identity.role();
        let auth_request = remote_identity.auth_request().cloned();
        self.peers.insert(
            prefix,
            Peer {
                remote: remote_identity,
                phase: Phase::WaitRequest,
                since: now,
                label: peer_label(remote),
                warned: false,
                refusal: None,
                last: None,
                resend: None,
                admission: Admission::Pending,
                secret: None,
                identity: None,
                permissions: None,
                kx: None,
                participant: None,
                participant_sent: None,
                fast_dds: remote.vendor_id == halyard_core::wire::VendorId([1, 15]),
                endpoint_keys: BTreeMap::new(),
                replay_window: remote.vendor_id == halyard_core::wire::VendorId::HALYARD,
            },
        );
        if let Some(req) = auth_request {
            let m = self.message(
                prefix,
                GMCLASSID_AUTH_REQUEST,
                MessageIdentity::default(),
                req,
            );
            Self::send(out, prefix, &m);
        }
        if role == HandshakeRole::Initiator {
            let perm = self.files.permissions.clone();
            let Some(peer) = self.peers.get(&prefix) else {
                return Admission::Pending;
            };
            match Handshake::begin_request(
                &self.local,
                &peer.remote,
                &perm,
                &self.pdata,
                &self.options,
                self.rng.as_mut(),
            ) {
                Ok((hs, request)) => {
                    if let Some(p) = self.peers.get_mut(&prefix) {
                        p.phase = Phase::WaitReply(Box::new(hs));
                    }
                    let m = self.message(
                        prefix,
                        GMCLASSID_AUTH_HANDSHAKE,
                        MessageIdentity::default(),
                        request,
                    );
                    self.send_until_answered(now, prefix, m, out);
                }
                Err(e) => {
                    if let Some(p) = self.peers.get_mut(&prefix) {
                        p.phase = Phase::Failed;
                        p.admission = Admission::Refused(format!("handshake: {e}"));
                        return p.admission.clone();
                    }
                }
            }
        }
        Admission::Pending
    }

    pub(super) fn on_stateless_message(
        &mut self,
        now: Instant,
        source: GuidPrefix,
        payload: &[u8],
        out: &mut SecurityOutput,
    ) {
        let Ok(m) = ParticipantGenericMessage::from_payload(payload) else {
            self.rejected += 1;
            return;
        };
        let me = Guid::new(self.guid_prefix(), EntityId::PARTICIPANT).to_bytes();
        if m.destination_participant_guid != me && m.destination_participant_guid != [0; 16] {
            return;
        }
        match (m.message_class_id.as_str(), m.message_data.first()) {
            (GMCLASSID_AUTH_REQUEST, Some(t)) if t.class_id == CLASS_ID_AUTH_REQUEST => {
                self.on_auth_request(source, t)
            }
            (GMCLASSID_AUTH_HANDSHAKE, Some(_)) => self.on_handshake(now, source, &m, out),
            _ => self.rejected += 1,
        }
    }

    pub(super) fn on_handshake_timeout(&mut self, now: Instant, out: &mut SecurityOutput) {
        let mut due = Vec::new();
        for (prefix, p) in self.peers.iter_mut() {
            if let Some(r) = p.resend.as_mut().filter(|r| r.at <= now) {
                r.delay = (r.delay * 2).min(MAX_RESEND);
                r.at = now + r.delay;
                due.push((*prefix, r.message.clone()));
            }
        }
        for (prefix, mut m) in due {
            self.next_sn += 1;
            m.message_identity.sequence_number = self.next_sn;
            Self::send(out, prefix, &m);
        }
        self.warn_unfinished(now, out);
    }

    /// Tells the user about each peer whose handshake is still unfinished
    /// [`UNANSWERED_WARNING`] after its discovery: it does not accept our identity.
    fn warn_unfinished(&mut self, now: Instant, out: &mut SecurityOutput) {
        for (prefix, p) in self.peers.iter_mut() {
            let Some(due) = unfinished_warning_due(p) else {
                continue;
            };
            if now < due {
                continue;
            }
            let secs = UNANSWERED_WARNING.as_secs();
            let what = match (&p.refusal, &p.phase) {
                // The handshake stalls on our side: say what we refused.
                (Some(why), _) => format!(
                    "no handshake with peer {} {secs} s after discovery: {why}",
                    p.label
                ),
                (None, phase) => {
                    let how = match phase {
                        Phase::WaitReply(_) => "our handshake request has had no reply",
                        Phase::WaitFinal(_) => "our handshake reply has had no answer",
                        _ => "it has not begun the handshake",
                    };
                    format!(
                        "identity not accepted by peer {}: {how} {secs} s after discovery, \
                         though it is alive (a peer that refuses an identity does not say \
                         so); {ADVICE}",
                        p.label
                    )
                }
            };
            p.warned = true;
            out.warnings.push((*prefix, what));
        }
    }

    pub(super) fn next_handshake_timeout(&self) -> Option<Instant> {
        let resends = self
            .peers
            .values()
            .filter_map(|p| p.resend.as_ref().map(|r| r.at));
        let warnings = self.peers.values().filter_map(unfinished_warning_due);
        resends.chain(warnings).min()
    }
}

/// When the user is to be told that `p` leaves our handshake unfinished, if ever: a peer
/// still pending, not yet reported.
fn unfinished_warning_due(p: &Peer) -> Option<Instant> {
    let unfinished = matches!(
        p.phase,
        Phase::WaitRequest | Phase::WaitReply(_) | Phase::WaitFinal(_)
    );
    (unfinished && !p.warned && p.admission == Admission::Pending)
        .then(|| p.since + UNANSWERED_WARNING)
}
