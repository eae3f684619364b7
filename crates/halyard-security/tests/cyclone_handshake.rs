//! Proves Halyard's PKI-DH authentication interoperates with Cyclone DDS 0.10's builtin plugin,
//! live: a Halyard protocol core with [`BuiltinSecurity`] (identity "alice" of a `security
//! init` set-up) and a `ddsperf` process (identity "bob" of the same set-up, configured by
//! `cyclone-config`) meet on loopback. Halyard must authenticate Cyclone (it verified
//! Cyclone's signature, certificate and permissions), and Cyclone must authenticate Halyard:
//! the evidence is the participant crypto tokens Cyclone then sends over its volatile secure
//! channel, which only a peer that completed the handshake receives, protected with the
//! key-exchange keys both sides derive from the handshake's shared secret. The test decodes
//! them with the keys Halyard derived, so the shared secret is proven equal on both sides.
//!
//! Skips (printing why) when `ddsperf` is not installed, unless `CI` is set.

// This test is the I/O driver of a protocol core: it reads the clocks the core may not.
#![allow(clippy::disallowed_methods)]

use halyard_core::security::{Admission, ParticipantSecurity, Rejected, SecurityOutput};
use halyard_core::wire::discovery::ParticipantData;
use halyard_core::wire::{EntityId, GuidPrefix, Message, Submessage, Submessages, VendorId};
use halyard_core::{Event, Instant, Participant, ParticipantConfig};
use halyard_security::crypto::{KeyMaterial, ReceiverCrypto};
use halyard_security::plugin::{BuiltinSecurity, SecurityFiles};
use halyard_security::random::OsRandom;
use halyard_security::setup::{self, InitOptions, KeyKind, Protection};
use halyard_security::token::{ParticipantGenericMessage, GMCLASSID_PARTICIPANT_CRYPTO_TOKENS};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const LO: &str =
    r#"<General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General>"#;

fn ddsperf_available() -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("ddsperf").is_file()));
    if !found {
        if std::env::var_os("CI").is_some() {
            panic!("ddsperf (cyclonedds-tools) is not installed but CI is set; run scripts/install-deps.sh");
        }
        eprintln!("SKIP: ddsperf not found in PATH (install cyclonedds-tools via scripts/install-deps.sh)");
    }
    found
}

fn wall_clock() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Shares the plugin between the core and the test (which reads the shared secret).
struct Shared(Arc<Mutex<BuiltinSecurity>>);

impl ParticipantSecurity for Shared {
    fn announce(&self, data: &mut ParticipantData) {
        self.0.lock().unwrap().announce(data)
    }
    fn discovered(
        &mut self,
        now: Instant,
        remote: &ParticipantData,
        out: &mut SecurityOutput,
    ) -> Admission {
        self.0.lock().unwrap().discovered(now, remote, out)
    }
    fn stateless_message(
        &mut self,
        now: Instant,
        source: GuidPrefix,
        payload: &[u8],
        out: &mut SecurityOutput,
    ) {
        self.0
            .lock()
            .unwrap()
            .stateless_message(now, source, payload, out)
    }
    fn handle_timeout(&mut self, now: Instant, out: &mut SecurityOutput) {
        self.0.lock().unwrap().handle_timeout(now, out)
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.0.lock().unwrap().poll_timeout()
    }
    fn forget(&mut self, remote: GuidPrefix) {
        self.0.lock().unwrap().forget(remote)
    }
    fn accepts_plain_submessage(&self, _: GuidPrefix, _: EntityId, _: EntityId, _: bool) -> bool {
        true
    }
    fn unprotect_submessage(
        &mut self,
        _: GuidPrefix,
        _: &[u8],
        _: &mut Vec<u8>,
    ) -> Result<usize, Rejected> {
        Err(Rejected("not yet"))
    }
}

/// Decodes a protected submessage of Cyclone's volatile secure writer with the key-exchange
/// keys of the handshake: the class id of the generic message inside, if it decodes.
fn decode_volatile(kx: &KeyMaterial, bytes: &[u8]) -> Option<String> {
    let mut rx = ReceiverCrypto::new(kx.clone()).ok()?;
    let mut plain = Vec::new();
    rx.decode_submessage(bytes, &mut plain).ok()?;
    for sm in Submessages::over(&plain).flatten() {
        if let Submessage::Data(d) = sm {
            if d.writer_id == EntityId::P2P_VOLATILE_SECURE_WRITER {
                let m = ParticipantGenericMessage::from_payload(d.payload?).ok()?;
                return Some(m.message_class_id);
            }
        }
    }
    None
}

/// With these certificates, alice's GUID prefix sorts before bob's: the participant named
/// `halyard` is the initiator when it is alice.
#[test]
fn halyard_initiates_and_cyclone_replies() {
    authenticate_each_other("alice", "bob", 17);
}

#[test]
fn cyclone_initiates_and_halyard_replies() {
    authenticate_each_other("bob", "alice", 18);
}

fn authenticate_each_other(halyard: &str, cyclone_name: &str, domain: u32) {
    if !ddsperf_available() {
        return;
    }
    let dir: PathBuf = std::env::temp_dir().join(format!(
        "halyard-cyclone-auth-{}-{domain}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let opts = InitOptions {
        participants: vec!["alice".into(), "bob".into()],
        protection: Protection {
            encrypt: true,
            origin_auth: false,
            none: false,
        },
        key: KeyKind::EcP256,
        days: 30,
        domains: vec![],
        allows: None,
        force: false,
        now: wall_clock(),
    };
    setup::init(&dir, &opts, &mut OsRandom).expect("security init");
    let peer = setup::cyclone_config(&dir.join(cyclone_name)).expect("cyclone-config");
    let mut cyclone = Command::new("ddsperf")
        .args(["-D", "20", "-i", &domain.to_string(), "sub"])
        .env("CYCLONEDDS_URI", format!("{LO}{peer}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("ddsperf starts");

    let files = SecurityFiles::load(&dir.join(halyard)).expect("identity files");
    let mut candidate = [0u8; 12];
    candidate[..4].copy_from_slice(&std::process::id().to_le_bytes());
    let plugin = BuiltinSecurity::new(
        files,
        domain,
        GuidPrefix(candidate),
        Box::new(OsRandom),
        Box::new(wall_clock),
    )
    .expect("plugin");
    let prefix = plugin.guid_prefix();
    let plugin = Arc::new(Mutex::new(plugin));
    let iface = halyard_net::select_interface(Some("lo")).expect("loopback");
    let transport = halyard_net::UdpTransport::open(domain, iface).expect("sockets");
    let mut cfg = ParticipantConfig::new(domain, prefix);
    cfg.metatraffic_unicast = vec![transport.unicast_locator];
    cfg.default_unicast = vec![transport.unicast_locator];
    cfg.metatraffic_multicast = vec![transport.spdp_locator];
    cfg.spdp_destinations = vec![transport.spdp_locator];
    let start = std::time::Instant::now();
    let now = || Instant::from_nanos(start.elapsed().as_nanos() as u64);
    let mut p = Participant::new(cfg, now());
    p.set_security(Box::new(Shared(plugin.clone())));
    let sockets = transport
        .receivers(Duration::from_millis(2))
        .expect("receivers");

    let mut cyclone_prefix = None;
    let mut authenticated = false;
    let mut cyclone_tokens = std::collections::BTreeSet::new();
    let mut buf = vec![0u8; 65536];
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::time::Instant::now() < deadline
        && !(authenticated && cyclone_tokens.contains(GMCLASSID_PARTICIPANT_CRYPTO_TOKENS))
    {
        p.handle_timeout(now());
        while let Some(t) = p.poll_transmit() {
            transport.send(&t.destinations, &t.payload);
        }
        while let Some(e) = p.poll_event() {
            match e {
                Event::ParticipantDiscovered(d) if d.vendor_id == VendorId::CYCLONE => {
                    cyclone_prefix = Some(d.guid.prefix)
                }
                Event::ParticipantAuthenticated(q) if Some(q) == cyclone_prefix => {
                    authenticated = true
                }
                Event::ParticipantRefused { reason, .. } => {
                    panic!("Halyard refused Cyclone: {reason}")
                }
                _ => {}
            }
        }
        for s in &sockets[..2] {
            while let Ok(n) = s.recv(&mut buf) {
                let bytes = &buf[..n];
                // The driver looks at Cyclone's protected submessages before the core does.
                if let (Some(cp), Ok(m)) = (cyclone_prefix, Message::parse(bytes)) {
                    let secret = plugin.lock().unwrap().shared_secret(cp).cloned();
                    if let (true, Some(secret)) = (m.header.guid_prefix == cp, secret) {
                        let kx = KeyMaterial::derive_key_exchange(
                            &secret.challenge1,
                            &secret.challenge2,
                            &secret.shared_secret,
                        )
                        .expect("key-exchange keys");
                        let mut subs = m.submessages();
                        loop {
                            let raw = subs.remaining();
                            let Some(Ok(sm)) = subs.next() else { break };
                            if matches!(sm, Submessage::Unknown { id: 0x31 }) {
                                if let Some(class) = decode_volatile(&kx, raw) {
                                    cyclone_tokens.insert(class);
                                }
                            }
                        }
                    }
                }
                p.handle_datagram(now(), bytes);
            }
        }
    }
    let _ = cyclone.kill();
    let _ = cyclone.wait();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        cyclone_prefix.is_some(),
        "Cyclone's participant was never discovered"
    );
    assert!(
        authenticated,
        "Halyard did not authenticate Cyclone within 20 s"
    );
    eprintln!("decoded from Cyclone's volatile secure writer: {cyclone_tokens:?}");
    assert!(
        cyclone_tokens.contains(GMCLASSID_PARTICIPANT_CRYPTO_TOKENS),
        "Cyclone sent no participant crypto tokens Halyard could decode with the handshake's \
         key-exchange keys (it did not authenticate Halyard, or the shared secrets differ); \
         decoded: {cyclone_tokens:?}"
    );
}
