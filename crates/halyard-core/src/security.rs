//! DDS Security 1.1 in the protocol core: where the security plugins plug in.
//!
//! The core knows nothing of certificates, tokens or ciphers. A participant given a
//! [`ParticipantSecurity`] (the builtin plugins of crate `halyard-security` implement it)
//! does four things differently:
//!
//! * **It announces itself as secure.** Its SPDP sample carries what the plugin adds (the
//!   identity and permissions tokens, PID_PARTICIPANT_SECURITY_INFO, the builtin endpoint
//!   bits of the secure endpoints).
//! * **It admits a remote participant before it discovers its endpoints.** A participant
//!   announced by SPDP is handed to the plugin ([`ParticipantSecurity::discovered`]), which
//!   answers with an [`Admission`]: until it is admitted, none of the builtin SEDP or
//!   participant-message endpoints is matched with it, so it learns nothing of our endpoints
//!   and we deliver nothing of its. A refused participant stays refused until it announces
//!   itself differently.
//! * **It runs the stateless message channel** (DDS Security §7.4.3): the builtin
//!   ParticipantStatelessMessage writer and reader, best effort, carrying the authentication
//!   handshake. The reader is an ordinary best-effort builtin reader (so DATA_FRAG
//!   reassembly works as for any reader); the writer keeps no history and sends each
//!   message to its one destination, fragmented when it exceeds a datagram. Payloads are
//!   opaque here: the plugin encodes and decodes ParticipantGenericMessages.
//! * **It lets the plugin run timers** (handshake resends) through [`Participant::poll_timeout`]
//!   and [`Participant::handle_timeout`].
//! * **It lets the plugin protect what goes out and check what comes in.** Each outgoing
//!   datagram passes the plugin once, in [`Participant::poll_transmit`]: each submessage of a
//!   local endpoint may be replaced by its protected form (SEC_PREFIX … SEC_POSTFIX), then
//!   the whole message by its protected form (SRTPS_PREFIX … SRTPS_POSTFIX), for the
//!   destination named by INFO_DST (none: several participants). On receipt a protected
//!   message is decoded before it is walked, a protected submessage where it stands, and a
//!   plain submessage the plugin requires protected is dropped; every rejection is counted
//!   (`Stats::secure_rejected`). Without a plugin none of this costs more than a branch.
//!
//! * **It runs the volatile secure channel** (DDS Security §7.4.4) over which the plugin
//!   exchanges crypto tokens.
//!
//! What endpoints add (metadata, data, discovery and liveliness protection) is in
//! `endpoint_security`.

use crate::event::{Event, ReceivedSample};
use crate::outbox::Transmit;
use crate::participant::{Participant, Receiver};
use crate::reader::{Reader, ReaderSpec, WriterProxy};
use crate::time::Instant;
use crate::writer::{NewChange, ReaderProxy, Writer, WriterSpec};
pub use halyard_wire::discovery::SecurityInfo;
use halyard_wire::discovery::{builtin_endpoint as be, ContentFilterProperty, ParticipantData};
use halyard_wire::qos::{EndpointQos, History, Reliability, ReliabilityKind};
use halyard_wire::{Data, DataFrag, EntityId, Guid, GuidPrefix, Message, Submessage, Submessages};

/// What the security plugin says of a remote participant.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Admission {
    /// Authenticated (or allowed without authentication by the governance): match it.
    Admitted,
    /// The handshake is under way: do not match it yet.
    Pending,
    /// Refused, for the reason given (invalid identity, handshake failed, not permitted).
    Refused(String),
}

/// What a plugin call asks the core to do.
#[derive(Debug, Default)]
pub struct SecurityOutput {
    /// ParticipantStatelessMessage payloads (encapsulation header included) to send to each
    /// participant's stateless reader.
    pub stateless: Vec<(GuidPrefix, Vec<u8>)>,
    /// Admission decisions reached (after a handshake step, or a timeout).
    pub admissions: Vec<(GuidPrefix, Admission)>,
    /// ParticipantVolatileMessageSecure payloads (encapsulation header included) for each
    /// participant: written to the reliable volatile secure writer, which delivers each to
    /// that participant's reader only.
    pub volatile: Vec<(GuidPrefix, Vec<u8>)>,
    /// Why something a participant sent was refused (a handshake message that failed
    /// validation, say), reported as [`Event::SecurityNotice`]s: rare, and what a user needs
    /// to know when two participants do not authenticate each other.
    pub notices: Vec<(GuidPrefix, String)>,
    /// What the user must be told even when no security log is asked for, reported as
    /// [`Event::SecurityWarning`]s: a participant that does not accept our identity (the
    /// handshake it leaves unanswered while it stays alive), or whose identity does not
    /// verify against ours. Nothing else tells the refused side why it sees no one: the
    /// handshake has no refusal message. At most one per remote participant.
    pub warnings: Vec<(GuidPrefix, String)>,
}

/// The security plugins of one participant, as the protocol core uses them. Implementations
/// do no I/O and read no clock: `now` is the core's monotonic time; a plugin that needs the
/// wall clock (certificate validity) is given one by whoever creates it.
pub trait ParticipantSecurity: Send {
    /// Adds the security parameters to our SPDP announcement: tokens, security info, and the
    /// builtin endpoint bits of the secure endpoints (the core sets the stateless ones).
    fn announce(&self, data: &mut ParticipantData);
    /// A remote participant announced itself (for the first time, or with changed data).
    fn discovered(
        &mut self,
        now: Instant,
        remote: &ParticipantData,
        out: &mut SecurityOutput,
    ) -> Admission;
    /// A ParticipantStatelessMessage payload arrived from `source`'s stateless writer.
    fn stateless_message(
        &mut self,
        now: Instant,
        source: GuidPrefix,
        payload: &[u8],
        out: &mut SecurityOutput,
    );
    /// A ParticipantVolatileMessageSecure payload arrived from `source`'s volatile secure
    /// writer (crypto tokens), already decoded from its protection.
    fn volatile_message(
        &mut self,
        _now: Instant,
        _source: GuidPrefix,
        _payload: &[u8],
        _out: &mut SecurityOutput,
    ) {
    }
    /// Timers due at `now` (handshake resends, handshake time-outs).
    fn handle_timeout(&mut self, now: Instant, out: &mut SecurityOutput);
    /// When [`ParticipantSecurity::handle_timeout`] is next due, if ever.
    fn poll_timeout(&self) -> Option<Instant>;
    /// A remote participant left or its lease expired: forget its handshake, its keys and
    /// its endpoints.
    fn forget(&mut self, remote: GuidPrefix);

    /// Protects one outgoing submessage (header included) of local endpoint `local`, sent to
    /// `destination` (`None`: several participants), appending the protected form
    /// (SEC_PREFIX … SEC_POSTFIX) to `out`. `Ok(false)`: send it as it is.
    fn protect_submessage(
        &mut self,
        _local: EntityId,
        _destination: Option<GuidPrefix>,
        _plain: &[u8],
        _out: &mut Vec<u8>,
    ) -> Result<bool, Rejected> {
        Ok(false)
    }
    /// Whether [`ParticipantSecurity::protect_submessage`] may protect submessages of local
    /// endpoint `local` (`false` lets the core skip it and copy nothing).
    fn may_protect_submessage(&self, _local: EntityId) -> bool {
        true
    }
    /// Protects a whole outgoing message (header included; rtps protection), appending the
    /// protected message to `out`. `Ok(false)`: send it as it is.
    fn protect_message(
        &mut self,
        _destination: Option<GuidPrefix>,
        _message: &[u8],
        _out: &mut Vec<u8>,
    ) -> Result<bool, Rejected> {
        Ok(false)
    }
    /// Octets [`ParticipantSecurity::protect_message_in_place`] wants free between the RTPS
    /// header and the submessages of a message whose submessages the core protects (0: it
    /// does not protect messages in place; the core then uses
    /// [`ParticipantSecurity::protect_message`]).
    fn message_headroom(&self) -> usize {
        0
    }
    /// Protects a whole outgoing message (rtps protection) where it lies, with no copy: `buf`
    /// is the RTPS header, `headroom` free octets (what
    /// [`ParticipantSecurity::message_headroom`] asked for), then the submessages; on
    /// `Ok(true)` it is the protected message. `Ok(false)`: not protected and `buf` unchanged
    /// (the core removes the headroom and sends it plain). On `Err` it must not be sent.
    fn protect_message_in_place(
        &mut self,
        _destination: Option<GuidPrefix>,
        _buf: &mut Vec<u8>,
        _headroom: usize,
    ) -> Result<bool, Rejected> {
        Ok(false)
    }
    /// Decodes the protected submessage at the start of `bytes` (SEC_PREFIX … SEC_POSTFIX)
    /// from `source` into `out`, replacing what it held; returns the bytes it spans. The core
    /// passes the same buffer for every submessage and does not empty it: an implementation
    /// may write over its old octets rather than initialise them again (or clear it first).
    fn unprotect_submessage(
        &mut self,
        _source: GuidPrefix,
        _bytes: &[u8],
        _out: &mut Vec<u8>,
    ) -> Result<usize, Rejected> {
        Err(Rejected("protected submessages are not supported"))
    }
    /// Decodes a protected message (SRTPS_PREFIX after the header) from `source` into `out`
    /// (the plain message, header included), replacing what it held; as with
    /// [`ParticipantSecurity::unprotect_submessage`], `out` is reused from one datagram to the
    /// next without being emptied.
    fn unprotect_message(
        &mut self,
        _source: GuidPrefix,
        _message: &[u8],
        _out: &mut Vec<u8>,
    ) -> Result<(), Rejected> {
        Err(Rejected("protected messages are not supported"))
    }
    /// Whether a plain (not SRTPS-protected) message from `source` may be handled; `false`
    /// drops it (the plugin requires `source` to protect what it sends, as rtps protection
    /// asks).
    fn accepts_plain_message(&self, _source: GuidPrefix, _message: &[u8]) -> bool {
        true
    }
    /// Access control for one of our endpoints: may this participant publish (`writer`) or
    /// subscribe to `topic` in `partitions`? `Err` says why not.
    fn check_local_endpoint(
        &self,
        _topic: &str,
        _partitions: &[String],
        _writer: bool,
    ) -> Result<(), String> {
        Ok(())
    }
    /// Access control for a remote endpoint `source` announced: may it publish (`writer`) or
    /// subscribe to `topic` in `partitions`? `Err` says why not (it is then not matched).
    fn check_remote_endpoint(
        &self,
        _source: GuidPrefix,
        _topic: &str,
        _partitions: &[String],
        _writer: bool,
    ) -> Result<(), String> {
        Ok(())
    }
    /// A local endpoint (user, or one of the secure builtin ones, whose `topic` is then the
    /// builtin topic's name, e.g. `DCPSPublicationsSecure`) was created: the plugin makes its
    /// keys and answers with the security attributes announced for it in SEDP
    /// (PID_ENDPOINT_SECURITY_INFO). `None`: it is not protected and announces none.
    fn register_local_endpoint(
        &mut self,
        _local: EntityId,
        _topic: &str,
        _writer: bool,
    ) -> Option<SecurityInfo> {
        None
    }
    /// A local endpoint was deleted: forget its keys.
    fn unregister_local_endpoint(&mut self, _local: EntityId) {}
    /// Remote endpoint `remote` (announcing `info`; `None` for builtin endpoints and for
    /// peers that announce none) is about to be matched with our endpoint `local`. The
    /// plugin registers the pairing and queues our endpoint crypto tokens for it in
    /// `out.volatile`. `Err` says why the two may not be matched (security attributes that
    /// differ).
    fn match_remote_endpoint(
        &mut self,
        _now: Instant,
        _local: EntityId,
        _remote: Guid,
        _info: Option<SecurityInfo>,
        _out: &mut SecurityOutput,
    ) -> Result<(), String> {
        Ok(())
    }
    /// Remote endpoint `remote` is gone (or unmatched from every local endpoint).
    fn forget_remote_endpoint(&mut self, _remote: Guid) {}
    /// Whether local writer `local` encodes its serialized payloads
    /// ([`ParticipantSecurity::encode_payload`]; `false` lets the core skip the call).
    fn protects_payload(&self, _local: EntityId) -> bool {
        false
    }
    /// Data protection: encodes the serialized payload (of a DATA) or the fragments (of a
    /// DATA_FRAG) that local writer `local` sends, appending the encoded form to `out`.
    /// `Ok(false)`: send it as it is.
    fn encode_payload(
        &mut self,
        _local: EntityId,
        _plain: &[u8],
        _out: &mut Vec<u8>,
    ) -> Result<bool, Rejected> {
        Ok(false)
    }
    /// Data protection: decodes the serialized payload of a sample of remote writer
    /// `writer`, appending the plain payload to `out`. `Ok(false)`: it is not protected,
    /// deliver it as it is. `Err`: drop it (counted).
    fn decode_payload(
        &mut self,
        _writer: Guid,
        _encoded: &[u8],
        _out: &mut Vec<u8>,
    ) -> Result<bool, Rejected> {
        Ok(false)
    }
    /// Liveliness protection: participant messages (liveliness assertions) go over the
    /// secure participant-message writer instead of the plain one.
    fn liveliness_protected(&self) -> bool {
        false
    }
    /// Whether a plain (not SEC_PREFIX-protected) submessage between `source`'s endpoint
    /// `remote` and our endpoint `local` (`UNKNOWN` when addressed to all) may be accepted;
    /// `in_protected_message`: it came inside an SRTPS-protected message.
    fn accepts_plain_submessage(
        &self,
        _source: GuidPrefix,
        _remote: EntityId,
        _local: EntityId,
        _in_protected_message: bool,
    ) -> bool {
        true
    }
}

/// Why the security plugin refused to protect or decode something (counted, then dropped).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Rejected(pub &'static str);

/// Where a remote participant stands with our security plugin.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) enum PeerSecurity {
    /// No security on our side: matched as soon as discovered.
    NotSecured,
    /// See [`Admission`].
    Is(Admission),
}

impl PeerSecurity {
    pub(crate) fn admitted(&self) -> bool {
        matches!(
            self,
            PeerSecurity::NotSecured | PeerSecurity::Is(Admission::Admitted)
        )
    }
}

fn stateless_qos() -> EndpointQos {
    let mut q = EndpointQos::reader_default();
    q.history = History::KeepLast(1);
    q.reliability = Reliability {
        kind: ReliabilityKind::BestEffort,
        max_blocking_time: halyard_wire::Duration::ZERO,
    };
    q
}

impl Participant {
    /// Gives this participant its security plugins (before it is first driven): it then
    /// announces itself as secure, runs the stateless channel and admits remote participants
    /// through `plugin`.
    pub fn set_security(&mut self, plugin: Box<dyn ParticipantSecurity>) {
        let id = EntityId::P2P_STATELESS_MESSAGE_READER;
        let spec = ReaderSpec {
            topic_name: String::new(),
            type_name: String::new(),
            qos: stateless_qos(),
            has_key: false,
        };
        let reader = Reader::new(Guid::new(self.prefix, id), spec, self.cfg.hash_seed);
        self.readers.insert(id, reader);
        self.create_volatile_endpoints();
        self.security = Some(plugin);
        self.create_secure_builtin_endpoints();
    }

    /// The builtin ParticipantVolatileMessageSecure writer and reader (DDS Security §7.4.4):
    /// reliable, VOLATILE, KEEP_ALL. Each message is for one participant: the writer gives
    /// every matched reader a filter on the message's destination, so the others get GAPs,
    /// and it addresses every datagram to one participant (so the plugin can protect it with
    /// that participant's key-exchange keys).
    fn create_volatile_endpoints(&mut self) {
        let mut qos = stateless_qos();
        qos.reliability = Reliability {
            kind: ReliabilityKind::Reliable,
            max_blocking_time: halyard_wire::Duration::ZERO,
        };
        qos.history = History::KeepAll;
        let wid = EntityId::P2P_VOLATILE_SECURE_WRITER;
        let spec = WriterSpec {
            topic_name: String::new(),
            type_name: String::new(),
            qos: qos.clone(),
            has_key: false,
        };
        let mut writer = Writer::new(Guid::new(self.prefix, wid), spec, true, self.cfg.hash_seed);
        writer.per_reader = true;
        writer.set_filter_compiler(Some(std::sync::Arc::new(destination_filter)));
        self.writers.insert(wid, writer);
        let rid = EntityId::P2P_VOLATILE_SECURE_READER;
        let spec = ReaderSpec {
            topic_name: String::new(),
            type_name: String::new(),
            qos,
            has_key: false,
        };
        self.readers.insert(
            rid,
            Reader::new(Guid::new(self.prefix, rid), spec, self.cfg.hash_seed),
        );
    }

    /// Matches the volatile secure endpoints with admitted participant `data`'s.
    fn match_volatile(&mut self, now: Instant, data: &ParticipantData) {
        let prefix = data.guid.prefix;
        let locs = self.metatraffic_locators(data);
        let rg = Guid::new(prefix, EntityId::P2P_VOLATILE_SECURE_READER);
        if data.builtin_endpoints & be::PARTICIPANT_VOLATILE_MESSAGE_SECURE_READER != 0 {
            if let Some(w) = self.writers.get_mut(&EntityId::P2P_VOLATILE_SECURE_WRITER) {
                if !w.set_proxy_locators(&rg, &locs, None) {
                    w.add_proxy(now, ReaderProxy::new(rg, locs.clone(), true), false);
                    w.refresh_proxy_filter(&rg, Some(&destination_property(prefix)));
                }
            }
        }
        let wg = Guid::new(prefix, EntityId::P2P_VOLATILE_SECURE_WRITER);
        let rid = EntityId::P2P_VOLATILE_SECURE_READER;
        if data.builtin_endpoints & be::PARTICIPANT_VOLATILE_MESSAGE_SECURE_WRITER != 0 {
            let epoch = self.next_count_epoch();
            if let Some(rd) = self.readers.get_mut(&rid) {
                match rd.proxies.get_mut(&wg) {
                    Some(p) => p.locators = locs,
                    None => {
                        rd.proxies
                            .insert(wg, WriterProxy::new(wg, locs, true, false, epoch));
                    }
                }
                let idx = self.writer_index.entry(wg).or_default();
                if !idx.contains(&rid) {
                    idx.push(rid);
                }
            }
        }
    }

    /// Unmatches the volatile secure endpoints of participant `prefix`.
    fn unmatch_volatile(&mut self, prefix: GuidPrefix) {
        if let Some(w) = self.writers.get_mut(&EntityId::P2P_VOLATILE_SECURE_WRITER) {
            w.remove_proxy(&Guid::new(prefix, EntityId::P2P_VOLATILE_SECURE_READER));
        }
        self.unmatch_remote_writer(
            EntityId::P2P_VOLATILE_SECURE_READER,
            Guid::new(prefix, EntityId::P2P_VOLATILE_SECURE_WRITER),
        );
    }

    /// Removes remote writer `wg` from our reader `reader` (a builtin pairing).
    fn unmatch_remote_writer(&mut self, reader: EntityId, wg: Guid) {
        if let Some(rd) = self.readers.get_mut(&reader) {
            rd.proxies.remove(&wg);
        }
        self.writer_index.remove(&wg);
    }

    /// Whether this participant runs security plugins.
    pub fn is_secure(&self) -> bool {
        self.security.is_some()
    }

    /// Access control for a local endpoint about to be created (always allowed without
    /// security): `Err` says why this participant may not publish or subscribe to `topic`.
    pub fn check_local_endpoint(
        &self,
        topic: &str,
        partitions: &[String],
        writer: bool,
    ) -> Result<(), String> {
        match &self.security {
            Some(sec) => sec.check_local_endpoint(topic, partitions, writer),
            None => Ok(()),
        }
    }

    /// Access control for moving local endpoint `id` to `partitions` (always allowed without
    /// security, or for an unknown endpoint): `Err` says why not.
    pub fn check_local_partitions(
        &self,
        id: EntityId,
        partitions: &[String],
    ) -> Result<(), String> {
        if self.security.is_none() {
            return Ok(());
        }
        if let Some(w) = self.writers.get(&id) {
            return self.check_local_endpoint(&w.spec.topic_name, partitions, true);
        }
        match self.readers.get(&id) {
            Some(r) => self.check_local_endpoint(&r.spec.topic_name, partitions, false),
            None => Ok(()),
        }
    }

    /// Access control for a remote endpoint announced in SEDP.
    pub(crate) fn security_check_remote(
        &self,
        ed: &halyard_wire::discovery::EndpointData,
        writer: bool,
    ) -> Result<(), String> {
        match &self.security {
            Some(sec) => {
                sec.check_remote_endpoint(ed.guid.prefix, &ed.topic_name, &ed.qos.partition, writer)
            }
            None => Ok(()),
        }
    }

    /// Adds the security parameters to our own SPDP data.
    pub(crate) fn announce_security(&self, data: &mut ParticipantData) {
        if let Some(sec) = &self.security {
            data.builtin_endpoints |= be::PARTICIPANT_STATELESS_MESSAGE_WRITER
                | be::PARTICIPANT_STATELESS_MESSAGE_READER
                | self.secure_builtin_bits();
            sec.announce(data);
        }
    }

    /// A remote participant was discovered or changed: matches its stateless writer, asks
    /// the plugin, and matches the builtin endpoints if it is admitted. Without security it
    /// is matched at once.
    pub(crate) fn admit_participant(&mut self, now: Instant, data: &ParticipantData) {
        let prefix = data.guid.prefix;
        let Some(sec) = self.security.as_mut() else {
            self.match_builtin(now, data);
            return;
        };
        let mut out = SecurityOutput::default();
        let admission = sec.discovered(now, data, &mut out);
        self.match_stateless(data);
        self.set_admission(now, prefix, admission);
        self.apply_security_output(now, out);
    }

    /// Records `admission` for `prefix`, matching or unmatching its builtin endpoints.
    fn set_admission(&mut self, now: Instant, prefix: GuidPrefix, admission: Admission) {
        let Some(r) = self.remote.get_mut(&prefix) else {
            return;
        };
        let was = r.security.admitted();
        r.security = PeerSecurity::Is(admission.clone());
        let data = r.data.clone();
        match admission {
            Admission::Admitted => {
                self.match_builtin(now, &data);
                self.match_volatile(now, &data);
                self.match_secure_builtin(now, &data);
                if !was {
                    self.push_event(Event::ParticipantAuthenticated(prefix));
                }
            }
            Admission::Pending => {}
            Admission::Refused(reason) => {
                if was {
                    self.unmatch_builtin(now, prefix, false);
                    self.unmatch_volatile(prefix);
                }
                self.push_event(Event::ParticipantRefused { prefix, reason });
            }
        }
    }

    /// Matches our stateless reader with `data`'s stateless writer (when it announces one).
    fn match_stateless(&mut self, data: &ParticipantData) {
        let wg = Guid::new(data.guid.prefix, EntityId::P2P_STATELESS_MESSAGE_WRITER);
        let rid = EntityId::P2P_STATELESS_MESSAGE_READER;
        if data.builtin_endpoints & be::PARTICIPANT_STATELESS_MESSAGE_WRITER == 0 {
            return;
        }
        let locs = self.metatraffic_locators(data);
        let epoch = self.next_count_epoch();
        if let Some(rd) = self.readers.get_mut(&rid) {
            match rd.proxies.get_mut(&wg) {
                Some(p) => p.locators = locs,
                None => {
                    rd.proxies
                        .insert(wg, WriterProxy::new(wg, locs, false, false, epoch));
                }
            }
            let idx = self.writer_index.entry(wg).or_default();
            if !idx.contains(&rid) {
                idx.push(rid);
            }
        }
    }

    /// Forgets `prefix` in the stateless channel and the plugin (it left).
    pub(crate) fn forget_security_peer(&mut self, prefix: GuidPrefix) {
        let Some(sec) = self.security.as_mut() else {
            return;
        };
        // The plugin forgets the peer's endpoints with it.
        sec.forget(prefix);
        self.unmatch_volatile(prefix);
        self.unmatch_remote_writer(
            EntityId::P2P_STATELESS_MESSAGE_READER,
            Guid::new(prefix, EntityId::P2P_STATELESS_MESSAGE_WRITER),
        );
    }

    /// A sample of our stateless or volatile secure reader: to the plugin.
    pub(crate) fn on_security_sample(&mut self, now: Instant, s: &ReceivedSample) {
        let Some(sec) = self.security.as_mut() else {
            return;
        };
        let mut out = SecurityOutput::default();
        let (from, payload) = (s.writer.prefix, &s.payload[..]);
        if s.reader == EntityId::P2P_VOLATILE_SECURE_READER {
            sec.volatile_message(now, from, payload, &mut out);
        } else {
            sec.stateless_message(now, from, payload, &mut out);
        }
        self.apply_security_output(now, out);
    }

    /// The plugin's timers.
    pub(crate) fn security_timeouts(&mut self, now: Instant) {
        let Some(sec) = self.security.as_mut() else {
            return;
        };
        if sec.poll_timeout().is_none_or(|t| t > now) {
            return;
        }
        let mut out = SecurityOutput::default();
        sec.handle_timeout(now, &mut out);
        self.apply_security_output(now, out);
    }

    /// When the plugin's timers are next due.
    pub(crate) fn security_deadline(&self) -> Option<Instant> {
        self.security.as_ref().and_then(|s| s.poll_timeout())
    }

    pub(crate) fn apply_security_output(&mut self, now: Instant, out: SecurityOutput) {
        for (prefix, what) in out.notices {
            self.push_event(Event::SecurityNotice { prefix, what });
        }
        for (prefix, what) in out.warnings {
            self.push_event(Event::SecurityWarning { prefix, what });
        }
        for (dst, payload) in out.stateless {
            self.send_stateless(dst, &payload);
        }
        // Admissions first: a volatile message for a just-admitted participant needs its
        // reader matched before it is written (VOLATILE: a late reader gets nothing old).
        for (prefix, admission) in out.admissions {
            self.set_admission(now, prefix, admission);
        }
        for (_dst, payload) in out.volatile {
            let change = NewChange {
                kind: crate::event::ChangeKind::Alive,
                key_hash: [0; 16],
                payload: std::sync::Arc::new(payload),
                timestamp: None,
                original: None,
            };
            // The destination is in the message; the writer's filters route it. A full
            // history (a peer that stopped acknowledging) drops the message: the plugin
            // sends tokens again when that peer is admitted again.
            if self
                .write(now, EntityId::P2P_VOLATILE_SECURE_WRITER, change)
                .is_err()
            {
                self.stats.secure_send_failed += 1;
            }
        }
    }

    /// Sends one stateless message to `dst`'s stateless reader: a DATA, or DATA_FRAGs when it
    /// does not fit in one datagram. No history, no repair: the plugin resends.
    fn send_stateless(&mut self, dst: GuidPrefix, payload: &[u8]) {
        let Some(r) = self.remote.get(&dst) else {
            return;
        };
        let dests = self.metatraffic_locators(&r.data.clone());
        if dests.is_empty() {
            return;
        }
        self.stateless_sn += 1;
        let sn = self.stateless_sn;
        let reader_id = EntityId::P2P_STATELESS_MESSAGE_READER;
        let writer_id = EntityId::P2P_STATELESS_MESSAGE_WRITER;
        // Room for the RTPS header, INFO_DST and a DATA header (with slack).
        let single_room = self.cfg.max_message_size.saturating_sub(20 + 16 + 24 + 16);
        if payload.len() <= single_room {
            let mut mb = self.out.start(Some(dst));
            let empty = mb.len();
            mb.data(&Data {
                reader_id,
                writer_id,
                writer_sn: sn,
                inline_qos: None,
                payload: Some(payload),
                key_flag: false,
                non_standard_flag: false,
            });
            self.out.push(mb, empty, &dests);
            return;
        }
        let frag = self.cfg.fragment_size.clamp(64, u16::MAX as usize);
        let Ok(sample_size) = u32::try_from(payload.len()) else {
            return;
        };
        for (i, chunk) in payload.chunks(frag).enumerate() {
            let mut mb = self.out.start(Some(dst));
            let empty = mb.len();
            mb.data_frag(&DataFrag {
                reader_id,
                writer_id,
                writer_sn: sn,
                fragment_starting_num: i as u32 + 1,
                fragments_in_submessage: 1,
                fragment_size: frag as u16,
                sample_size,
                inline_qos: None,
                payload: chunk,
                key_flag: false,
            });
            self.out.push(mb, empty, &dests);
        }
    }
}

/// The (sender's, receiver's) endpoints of a submessage, for the protection checks: the
/// writer and the reader for writer-to-reader submessages, the reader and the writer for
/// ACKNACK and NACK_FRAG. `None` for INFO_* and unknown submessages.
/// When no submessage of `subs` is one that `sec` may protect: `Some` with the destination
/// the message's last INFO_DST names (`None` in it: none, or GUIDPREFIX_UNKNOWN). `None` when
/// one may be protected, or the walk found something it leaves to the full parse.
fn all_plain(
    sec: &dyn crate::security::ParticipantSecurity,
    mut subs: Submessages<'_>,
) -> Option<Option<GuidPrefix>> {
    use halyard_wire::message::id;
    let mut destination = None;
    // Consecutive submessages are mostly of one endpoint: ask the plugin once per run.
    let mut last: Option<(EntityId, bool, bool)> = None;
    while let Some(raw) = subs.next_raw() {
        let raw = raw.ok()?;
        if raw.id == id::INFO_DST {
            let p = GuidPrefix(raw.body.get(..12)?.try_into().ok()?);
            destination = (p != GuidPrefix::UNKNOWN).then_some(p);
            continue;
        }
        let Some(e) = raw.endpoints else {
            continue;
        };
        let from = match raw.id {
            id::ACKNACK | id::NACK_FRAG => e.reader,
            _ => e.writer,
        };
        let (submessage, payload) = match last {
            Some((l, s, p)) if l == from => (s, p),
            _ => (sec.may_protect_submessage(from), sec.protects_payload(from)),
        };
        if submessage || (payload && matches!(raw.id, id::DATA | id::DATA_FRAG)) {
            return None;
        }
        last = Some((from, submessage, payload));
    }
    Some(destination)
}

/// Where the serialized payload (of a DATA) or the fragments (of a DATA_FRAG) begin in
/// submessage `whole`, if it carries any.
fn payload_offset(sm: &Submessage<'_>, whole: &[u8]) -> Option<usize> {
    let payload = match sm {
        Submessage::Data(d) => d.payload?,
        Submessage::DataFrag(d) => d.payload,
        _ => return None,
    };
    let at = (payload.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    (!payload.is_empty() && at + payload.len() <= whole.len()).then_some(at)
}

/// Appends DATA or DATA_FRAG `whole` of local writer `writer`, whose payload begins at
/// `payload_at`, to `out` with the payload encoded (data protection): the same header and
/// fields, the encoded payload, the submessage length made to fit; `whole` as it is when the
/// plugin does not encode it.
fn append_encoded_data(
    sec: &mut dyn ParticipantSecurity,
    writer: EntityId,
    whole: &[u8],
    payload_at: usize,
    out: &mut Vec<u8>,
) -> Result<(), Rejected> {
    let base = out.len();
    out.extend_from_slice(&whole[..payload_at]);
    let r = sec
        .encode_payload(writer, &whole[payload_at..], out)
        .and_then(|encoded| {
            if !encoded {
                out.extend_from_slice(&whole[payload_at..]);
                return Ok(());
            }
            // Our plugin's encoded payloads need no padding (it pads the plain payload); any
            // other's get it.
            out.resize(out.len().next_multiple_of(4), 0);
            let len = u16::try_from(out.len() - base - 4)
                .map_err(|_| Rejected("an encoded submessage is longer than 65535 octets"))?;
            let bytes = match whole[1] & 1 != 0 {
                true => len.to_le_bytes(),
                false => len.to_be_bytes(),
            };
            out[base + 2..base + 4].copy_from_slice(&bytes);
            Ok(())
        });
    if r.is_err() {
        out.truncate(base);
    }
    r
}

/// Appends submessage `plain` of local endpoint `local` to `out` protected (SEC_PREFIX ..
/// SEC_POSTFIX), or as it is when the plugin does not protect it.
fn append_protected(
    sec: &mut dyn ParticipantSecurity,
    local: EntityId,
    destination: Option<GuidPrefix>,
    plain: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), Rejected> {
    if !sec.protect_submessage(local, destination, plain, out)? {
        out.extend_from_slice(plain);
    }
    Ok(())
}

fn endpoints_of(sm: &Submessage<'_>) -> Option<(EntityId, EntityId)> {
    Some(match sm {
        Submessage::Data(d) => (d.writer_id, d.reader_id),
        Submessage::DataFrag(d) => (d.writer_id, d.reader_id),
        Submessage::Heartbeat(h) => (h.writer_id, h.reader_id),
        Submessage::HeartbeatFrag(h) => (h.writer_id, h.reader_id),
        Submessage::Gap(g) => (g.writer_id, g.reader_id),
        Submessage::AckNack(a) => (a.reader_id, a.writer_id),
        Submessage::NackFrag(n) => (n.reader_id, n.writer_id),
        _ => return None,
    })
}

impl Participant {
    /// Decodes a protected message from `source`: `None` when `bytes` is not one (and need
    /// not be), `Some(Err)` when it must be dropped (counted).
    pub(crate) fn unprotect_message(
        &mut self,
        source: GuidPrefix,
        bytes: &[u8],
        out: &mut Vec<u8>,
    ) -> Option<Result<(), ()>> {
        let sec = self.security.as_mut()?;
        let protected = bytes.get(20) == Some(&halyard_wire::message::id::SRTPS_PREFIX);
        if !protected {
            if !sec.accepts_plain_message(source, bytes) {
                self.stats.secure_rejected += 1;
                return Some(Err(()));
            }
            return None;
        }
        match sec.unprotect_message(source, bytes, out) {
            Ok(()) => Some(Ok(())),
            Err(_) => {
                self.stats.secure_rejected += 1;
                Some(Err(()))
            }
        }
    }

    /// Decodes the protected submessage at the start of `raw`; the bytes it spans, or `None`
    /// (counted) when it cannot be decoded.
    pub(crate) fn unprotect_submessage(
        &mut self,
        source: GuidPrefix,
        raw: &[u8],
        out: &mut Vec<u8>,
    ) -> Option<usize> {
        let result = match self.security.as_mut() {
            Some(sec) => sec.unprotect_submessage(source, raw, out),
            None => Err(Rejected("not secure")),
        };
        match result {
            Ok(n) => Some(n),
            Err(_) => {
                self.stats.secure_rejected += 1;
                None
            }
        }
    }

    /// Whether a plain submessage may be handled (always, without security).
    #[inline]
    pub(crate) fn plain_submessage_allowed(&mut self, rx: &Receiver, sm: &Submessage<'_>) -> bool {
        // Without security: one branch on the receive path.
        let Some(sec) = self.security.as_ref() else {
            return true;
        };
        let Some((remote, local)) = endpoints_of(sm) else {
            return true;
        };
        if sec.accepts_plain_submessage(rx.src, remote, local, rx.rtps_protected) {
            return true;
        }
        self.stats.secure_rejected += 1;
        false
    }

    /// Applies the plugin's protection to an outgoing datagram: each submessage of a
    /// protected local endpoint, then the whole message. Protection makes a message longer;
    /// one that would no longer fit a datagram (or an SRTPS body) is split, each part starting
    /// with the INFO_DST and INFO_TS in force, and the parts after the first are queued to go
    /// next. `false`: it could not be protected and must not be sent (counted).
    pub(crate) fn protect_transmit(&mut self, t: &mut Transmit) -> bool {
        let Some(sec) = self.security.as_mut() else {
            return true;
        };
        let Ok(msg) = Message::parse(&t.payload) else {
            return true;
        };
        let total = t.payload.len();
        let header = &t.payload[..20];
        // Room the plugin asks for between the header and the submessages, to protect the
        // message in place after its submessages (none: the message is copied to protect it).
        let headroom = sec.message_headroom();
        // The message with its submessages protected, made only once a submessage is (so a
        // message protected only whole is not copied first); the parts already split off,
        // protected whole.
        let mut part: Option<Part> = None;
        let mut done: Vec<Vec<u8>> = Vec::new();
        let mut destination = None;
        let (mut info_dst, mut info_ts): (&[u8], &[u8]) = (&[], &[]);
        // Octets of the INFO_DST / INFO_TS the message starts with, while no other submessage
        // came: a part holding only those is not split off (the next part repeats them).
        let mut leading_infos = Some(0usize);
        let mut subs: Submessages<'_> = msg.submessages();
        // Most datagrams hold no submessage to protect (a stream of DATA of a writer without
        // submessage protection): a walk over the submessage headers finds that out without
        // parsing each one, and the message goes straight to whole-message protection.
        if let Some(dst) = all_plain(sec.as_ref(), msg.submessages()) {
            destination = dst;
            subs = Submessages::over(&[]);
        }
        loop {
            let raw = subs.remaining();
            let Some(Ok(sm)) = subs.next() else {
                if let Some(p) = part.as_mut() {
                    p.bytes.extend_from_slice(subs.remaining());
                }
                break;
            };
            let whole = &raw[..raw.len() - subs.remaining().len()];
            let from = endpoints_of(&sm).map(|(from, _)| from);
            let local = from.filter(|l| sec.may_protect_submessage(*l));
            // Data protection: a DATA's payload, a DATA_FRAG's fragments, encoded.
            let encode = from
                .filter(|w| sec.protects_payload(*w))
                .and_then(|w| Some((w, payload_offset(&sm, whole)?)));
            let (dst_before, ts_before) = (info_dst, info_ts);
            match sm {
                Submessage::InfoDst(p) => {
                    destination = (p != GuidPrefix::UNKNOWN).then_some(p);
                    info_dst = whole;
                    if let Some(part) = part.as_mut() {
                        part.destination = destination;
                    }
                }
                Submessage::InfoTs(_) => info_ts = whole,
                _ => {}
            }
            let infos_before = leading_infos;
            if part.is_none() {
                leading_infos = match sm {
                    Submessage::InfoDst(_) | Submessage::InfoTs(_) => {
                        leading_infos.map(|n| n + whole.len())
                    }
                    _ => None,
                };
            }
            if local.is_none() && encode.is_none() {
                if let Some(p) = part.as_mut() {
                    p.bytes.extend_from_slice(whole);
                }
                continue;
            }
            let out = &mut self.out;
            let p = part.get_or_insert_with(|| Part {
                bytes: {
                    let mut v = out.buffer();
                    v.extend_from_slice(header);
                    v.resize(20 + headroom, 0);
                    v.extend_from_slice(&t.payload[20..total - raw.len()]);
                    v
                },
                // Its submessages begin after the INFO_DST / INFO_TS it starts with, if it
                // starts with nothing else.
                start: 20 + headroom + infos_before.unwrap_or(0),
                headroom,
                destination,
            });
            let room = match encode {
                Some(_) => SUBMESSAGE_PROTECTION_ROOM + PAYLOAD_PROTECTION_ROOM,
                None => SUBMESSAGE_PROTECTION_ROOM,
            };
            if p.bytes.len() + whole.len() + room > PROTECTED_PART_LIMIT && p.bytes.len() > p.start
            {
                // It would not fit protected: what came before goes as one datagram, this
                // submessage starts the next (after the INFO_DST and INFO_TS in force).
                let mut next = self.out.buffer();
                next.extend_from_slice(header);
                next.resize(20 + headroom, 0);
                next.extend_from_slice(dst_before);
                next.extend_from_slice(ts_before);
                let start = next.len();
                let finished = std::mem::replace(
                    p,
                    Part {
                        bytes: next,
                        start,
                        headroom,
                        destination,
                    },
                );
                match protect_whole(sec.as_mut(), finished, &mut self.out) {
                    Ok(m) => done.push(m),
                    Err(()) => {
                        self.stats.secure_send_failed += 1;
                        return false;
                    }
                }
            }
            let protected = match local {
                // Encoded straight into the part when the submessage is not protected too.
                None => encode.map_or(Ok(()), |(w, at)| {
                    append_encoded_data(sec.as_mut(), w, whole, at, &mut p.bytes)
                }),
                Some(local) => {
                    let sub = match encode {
                        Some((w, at)) => {
                            let encoded = &mut self.encoded_submessage;
                            encoded.clear();
                            append_encoded_data(sec.as_mut(), w, whole, at, encoded)
                                .map(|()| &encoded[..])
                        }
                        None => Ok(whole),
                    };
                    sub.and_then(|sub| {
                        append_protected(sec.as_mut(), local, destination, sub, &mut p.bytes)
                    })
                }
            };
            if protected.is_err() {
                self.stats.secure_send_failed += 1;
                return false;
            }
        }
        let last = match part {
            Some(p) => protect_whole(sec.as_mut(), p, &mut self.out),
            None => {
                let mut message = self.out.buffer();
                match sec.protect_message(destination, &t.payload, &mut message) {
                    Ok(true) => Ok(message),
                    Ok(false) => {
                        self.out.recycle(message);
                        Ok(std::mem::take(&mut t.payload))
                    }
                    Err(_) => {
                        self.out.recycle(message);
                        Err(())
                    }
                }
            }
        };
        let Ok(last) = last else {
            self.stats.secure_send_failed += 1;
            return false;
        };
        done.push(last);
        let mut parts = done.into_iter();
        if let Some(first) = parts.next() {
            // The plain datagram's buffer goes back to the free list for the next one.
            let plain = std::mem::replace(&mut t.payload, first);
            self.out.recycle(plain);
        }
        for p in parts {
            self.secure_pending.push_back(Transmit {
                destinations: t.destinations.clone(),
                payload: p,
            });
        }
        true
    }
}

/// The longest a message may grow to with its submessages protected before it is split: room
/// for the whole-message protection after it (SRTPS_PREFIX, INFO_SRC, SEC_BODY, SRTPS_POSTFIX
/// and receiver-specific MACs) within an SRTPS body's 16-bit length and a UDP datagram.
const PROTECTED_PART_LIMIT: usize = 62_000;

/// What protecting one submessage adds at most, receiver-specific MACs aside (SEC_PREFIX,
/// SEC_BODY's header and length, SEC_POSTFIX and its common MAC).
const SUBMESSAGE_PROTECTION_ROOM: usize = 128;

/// What encoding a DATA's payload or a DATA_FRAG's fragments adds at most (data protection):
/// the CryptoHeader (20), the ciphertext's length (4) and the CryptoFooter without
/// receiver-specific MACs (20), with slack.
pub(crate) const PAYLOAD_PROTECTION_ROOM: usize = 48;

/// A message being protected: its bytes, where its submessages begin (after the header, the
/// headroom and the INFO_DST / INFO_TS it starts with), the free octets left after the header
/// for protecting it in place, and the participant it is for.
struct Part {
    bytes: Vec<u8>,
    start: usize,
    headroom: usize,
    destination: Option<GuidPrefix>,
}

/// Protects `part` whole (rtps protection), or returns it as it is; the buffer not returned
/// goes back to `out`'s free list.
fn protect_whole(
    sec: &mut dyn ParticipantSecurity,
    part: Part,
    out: &mut crate::outbox::Outbox,
) -> Result<Vec<u8>, ()> {
    if part.headroom > 0 {
        let mut bytes = part.bytes;
        return match sec.protect_message_in_place(part.destination, &mut bytes, part.headroom) {
            Ok(true) => Ok(bytes),
            Ok(false) => {
                let end = (20 + part.headroom).min(bytes.len());
                bytes.drain(20.min(end)..end);
                Ok(bytes)
            }
            Err(_) => {
                out.recycle(bytes);
                Err(())
            }
        };
    }
    let mut message = out.buffer();
    let r = sec.protect_message(part.destination, &part.bytes, &mut message);
    let (keep, spare) = match r {
        Ok(true) => (Ok(message), part.bytes),
        Ok(false) => (Ok(part.bytes), message),
        Err(_) => (Err(()), message),
    };
    out.recycle(spare);
    keep
}

/// The filter class of a volatile secure writer's per-reader destination filter.
const DESTINATION_FILTER_CLASS: &str = "HALYARD_DESTINATION";

/// The destination filter of participant `prefix`'s volatile secure reader.
fn destination_property(prefix: GuidPrefix) -> ContentFilterProperty {
    ContentFilterProperty {
        content_filtered_topic_name: String::new(),
        related_topic_name: String::new(),
        filter_class_name: DESTINATION_FILTER_CLASS.into(),
        filter_expression: prefix.0.iter().map(|b| format!("{b:02x}")).collect(),
        expression_parameters: Vec::new(),
    }
}

/// Compiles a destination filter: a ParticipantGenericMessage passes when its
/// `destination_participant_guid` (payload bytes 52..68: encapsulation 4, two message
/// identities of 24, then the GUID) is that participant's, or unset (all zero).
fn destination_filter(p: &ContentFilterProperty) -> Option<crate::writer::SampleFilter> {
    if p.filter_class_name != DESTINATION_FILTER_CLASS || p.filter_expression.len() != 24 {
        return None;
    }
    let mut prefix = [0u8; 12];
    for (i, b) in prefix.iter_mut().enumerate() {
        *b = u8::from_str_radix(p.filter_expression.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    let guid = Guid::new(GuidPrefix(prefix), EntityId::PARTICIPANT).to_bytes();
    Some(std::sync::Arc::new(move |payload: &[u8]| {
        payload
            .get(52..68)
            .is_some_and(|d| d == guid || d == [0u8; 16])
    }))
}
