//! DomainParticipant, Topic, Publisher and Subscriber (DDS 1.4 §2.2.2.2).

use crate::builtin::{
    BuiltinReader, BuiltinTopic, ParticipantBuiltinTopicData, PublicationBuiltinTopicData,
    SubscriptionBuiltinTopicData,
};
use crate::clock::wall_clock;
use crate::error::{Error, Result};
use crate::group::{group_writers, inherit, Group};
use crate::history::{KeyFn, ReaderCache};
use crate::listener::{DataReaderListener, DataWriterListener};
use crate::qos::{
    validate, DataReaderQos, DataWriterQos, DomainParticipantQos, GroupQos, PublisherQos,
    SubscriberQos,
};
use crate::reader::DataReader;
use crate::runtime::Shared;
use crate::status::{ReaderState, WriterState};
use crate::writer::DataWriter;
use halyard_cdr::TopicType;
use halyard_core::config::{Ipv4Net, MAX_FRAGMENT_SIZE, MIN_FRAGMENT_SIZE};
use halyard_core::xtypes;
use halyard_core::{Participant, ParticipantConfig, ReaderSpec, WriterSpec};
use halyard_net::{select_interface, UdpTransport};
use halyard_wire::discovery::{EndpointData, ParticipantData};
use halyard_wire::qos::{EndpointQos, PresentationAccessScope};
use halyard_wire::{GuidPrefix, Locator};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Options for creating a participant (Halyard's configuration, beyond DDS QoS). The library
/// takes its configuration in code only: [`ParticipantOptions::default`] reads no environment
/// variable; [`ParticipantOptions::from_env`] is the opt-in to the `HALYARD_*` variables the
/// `halyard` tools and the Python package honour.
#[derive(Clone, Debug, Default)]
pub struct ParticipantOptions {
    /// Network interface name or IPv4 address (default: the first up, multicast-capable,
    /// non-loopback interface).
    pub interface: Option<String>,
    /// Participant USER_DATA.
    pub user_data: Vec<u8>,
    /// Participant entity name.
    pub entity_name: Option<String>,
    /// Extra unicast SPDP destinations (initial peers), e.g. `127.0.0.1:7410`.
    pub initial_peers: Vec<std::net::SocketAddrV4>,
    /// Discover by unicast to `initial_peers` only: no SPDP multicast is sent or announced,
    /// and user data goes by unicast only (for networks without multicast).
    pub disable_multicast: bool,
    /// Keep multicast for discovery but send user data by unicast only, even to readers of
    /// several participants that share the multicast group (for networks where multicast is
    /// costly, such as WiFi). By default, new data for such readers goes out once, to the
    /// group (239.255.0.1, port 7401 + 250 × domain), as Cyclone DDS does.
    pub unicast_user_data: bool,
    /// Seeded drop / duplicate / reorder of this participant's datagrams, on send and on
    /// receive: for testing reliability against real peers. `None` in production.
    pub fault_injection: Option<halyard_net::FaultConfig>,
    /// Bytes per second all best-effort writers of the participant may send together (like a
    /// Connext flow controller or a Fast DDS throughput controller; `None`: no limit). A
    /// best-effort writer also paces itself to what its Halyard readers report they receive,
    /// and [`crate::DataWriter::set_bandwidth_limit`] limits one writer.
    pub bandwidth_limit: Option<u64>,
    /// How long a deleted writer (or the writers of a participant being deleted, or of a
    /// process that exits normally) keeps serving matched reliable readers that have not yet
    /// acknowledged all it wrote (Cyclone DDS's WriterLingerDuration). `None`: 1 s; zero: no
    /// lingering. Deleting a writer blocks up to this long (not inside a listener).
    pub writer_linger: Option<std::time::Duration>,
    /// The DDS Security identity of the participant: a `DIR/NAME` directory made by `halyard
    /// security init` (default: none). With it the participant authenticates every peer
    /// (PKI-DH) and enforces the governance's and permissions' access control; without it, it
    /// runs unsecured. Needs the cargo feature `security` (otherwise the participant is
    /// refused with [`Error::Unsupported`]).
    pub security: Option<std::path::PathBuf>,
    /// Write every DDS Security decision (peers authenticated or refused, endpoints refused,
    /// with the reason) to standard error, one line each (default: off).
    pub security_log: bool,
    /// The embedded durability service (see [`crate::durability`]). Off by default; when on,
    /// a participant starts one on its first TRANSIENT or PERSISTENT writer, which keeps that
    /// participant's durable samples after their writers are deleted, for as long as the
    /// participant lives (PERSISTENT ones in a store file, across restarts too). Needs the
    /// cargo feature `durability` (otherwise such a writer is refused with
    /// [`Error::Unsupported`]).
    pub durability: crate::durability::EmbeddedDurability,
    /// What a commit of the embedded durability service's store survives.
    #[cfg(feature = "durability")]
    pub durability_sync: crate::durability::SyncLevel,
    /// When the embedded durability service commits what it received (and then acknowledges
    /// it to the writers).
    #[cfg(feature = "durability")]
    pub durability_commit: crate::durability::CommitPolicy,
    /// Tuning of the protocol core (fragment size, limits ...); `None` = defaults. SPDP is
    /// announced at least three times per lease: `spdp_interval` is capped at a third of
    /// `lease_duration`.
    pub tuning: Option<fn(&mut ParticipantConfig)>,
}

/// Checks the core configuration after tuning, and keeps announcements within the lease: peers
/// renew our lease only when they hear from us, so an interval close to the lease lets a late
/// timer expire it.
fn validate_config(cfg: &mut ParticipantConfig) -> Result<()> {
    if cfg.lease_duration < std::time::Duration::from_millis(100) {
        return Err(Error::BadParameter(
            "lease_duration must be at least 100 ms",
        ));
    }
    if cfg.fragment_size < MIN_FRAGMENT_SIZE
        || cfg.fragment_size > MAX_FRAGMENT_SIZE
        || cfg.fragment_size + 200 > cfg.max_message_size
    {
        return Err(Error::BadParameter(
            "fragment_size must be 512..=65535 and fit a datagram (max_message_size)",
        ));
    }
    if cfg.max_message_size > 65_000 {
        return Err(Error::BadParameter(
            "max_message_size must fit a UDP datagram (<= 65000)",
        ));
    }
    cfg.spdp_interval = cfg.spdp_interval.min(cfg.lease_duration / 3);
    Ok(())
}

/// A DDS DomainParticipant: the factory of topics, publishers and subscribers, with its own
/// sockets and threads. Cloning gives another handle to the same participant.
#[derive(Clone)]
pub struct DomainParticipant {
    pub(crate) shared: Arc<Shared>,
    pub(crate) _guard: Arc<ShutdownGuard>,
    /// The embedded durability service, once started (after `_guard`: the participant's
    /// writers linger with it still acknowledging).
    #[cfg(feature = "durability")]
    embedded: Arc<std::sync::Mutex<Option<crate::durability::DurabilityService>>>,
    options: Arc<ParticipantOptions>,
    domain_id: u32,
}

pub(crate) struct ShutdownGuard(Arc<Shared>);

impl Drop for ShutdownGuard {
    fn drop(&mut self) {
        self.0.shutdown();
    }
}

static PARTICIPANT_COUNTER: AtomicU32 = AtomicU32::new(0);

/// 64 bits from the OS's random source (std seeds its hash maps from it).
fn os_entropy() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
}

/// splitmix64's finaliser: spreads the bits of `x`.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A GUID prefix unique to this participant: Halyard's vendor id, 32 bits of time, process
/// and OS entropy, the process id and a per-process counter.
fn new_guid_prefix() -> GuidPrefix {
    let pid = std::process::id();
    let t = wall_clock().to_nanos() as u64;
    let n = PARTICIPANT_COUNTER.fetch_add(1, Ordering::Relaxed);
    let x =
        t ^ ((pid as u64) << 32) ^ (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ os_entropy();
    let z = mix(x.wrapping_add(0x9E37_79B9_7F4A_7C15));
    let mut p = [0u8; 12];
    p[0..2].copy_from_slice(&[0x01, 0x99]);
    p[2..6].copy_from_slice(&(z as u32).to_be_bytes());
    p[6..10].copy_from_slice(&pid.to_be_bytes());
    p[10..12].copy_from_slice(&(n as u16).to_be_bytes());
    GuidPrefix(p)
}

/// On a link whose MTU is well below a 64 KB datagram (Ethernet's 1500), a large datagram
/// becomes dozens of IP fragments and losing any one loses it all: at 1 % packet loss a
/// 64 KB datagram is lost 36 % of the time, at 10 % nearly always. There, fragments are sized
/// to one IP packet and a datagram carries at most 10 of them (as Cyclone DDS does: 1344-byte
/// fragments in 14720-byte messages on Ethernet). Loopback (MTU 65536) keeps the defaults.
fn size_datagrams_for_mtu(cfg: &mut ParticipantConfig, mtu: u32) {
    const IP_UDP_HEADERS: usize = 28;
    /// RTPS header, INFO_DST, INFO_TS and the DATA_FRAG header, rounded up.
    const RTPS_OVERHEAD: usize = 128;
    let packet = (mtu as usize).saturating_sub(IP_UDP_HEADERS);
    if packet >= cfg.fragment_size + RTPS_OVERHEAD || packet < 576 {
        return;
    }
    cfg.fragment_size = (packet - RTPS_OVERHEAD).max(MIN_FRAGMENT_SIZE);
    cfg.max_message_size = (10 * packet).min(cfg.max_message_size);
}

/// The environment variable naming a DDS Security identity directory (`DIR/NAME` made by
/// `halyard security init`), read by [`ParticipantOptions::from_env`].
pub const SECURITY_ENV: &str = "HALYARD_SECURITY";

/// The builtin security plugins for the identity directory `dir` in `domain_id`. Refuses a
/// governance that asks for protection the plugins do not provide (none today: every kind of
/// DDS Security 1.1 is implemented): a participant asked to be protected never runs
/// unprotected.
#[cfg(feature = "security")]
fn security_plugins(
    dir: &std::path::Path,
    domain_id: u32,
) -> Result<halyard_security::plugin::BuiltinSecurity> {
    use crate::error::SecurityError;
    use halyard_security::plugin::{BuiltinSecurity, SecurityFiles};
    let files = SecurityFiles::load(dir)
        .map_err(|e| Error::Security(SecurityError::caused_by(e.to_string(), e)))?;
    let plugins = BuiltinSecurity::new(
        files,
        domain_id,
        new_guid_prefix(),
        Box::new(halyard_security::random::OsRandom),
        Box::new(|| wall_clock().to_nanos().div_euclid(1_000_000_000)),
    )
    .map_err(|e| {
        let what = format!("{}: {e}", dir.display());
        Error::Security(SecurityError::caused_by(what, e))
    })?;
    if let Some(detail) = plugins.unsupported_protection() {
        return Err(Error::Unsupported {
            feature: "a DDS Security protection kind the governance asks for",
            detail,
        });
    }
    Ok(plugins)
}

impl DomainParticipant {
    /// Asserts the liveliness of this participant's LIVELINESS MANUAL_BY_PARTICIPANT writers
    /// (remote readers learn it from a participant message); writing with any of them does
    /// the same.
    pub fn assert_liveliness(&self) {
        self.shared.drive(|st, now| st.core.assert_liveliness(now));
    }

    /// Joins `domain_id` with default options ([`ParticipantOptions::default`]: no
    /// environment variable is read; [`ParticipantOptions::from_env`] is the opt-in).
    pub fn new(domain_id: u32) -> Result<DomainParticipant> {
        Self::with_options(domain_id, ParticipantOptions::default())
    }

    /// Joins `domain_id` with options.
    pub fn with_options(domain_id: u32, opts: ParticipantOptions) -> Result<DomainParticipant> {
        #[cfg(feature = "security")]
        let security = match &opts.security {
            Some(dir) => Some(security_plugins(dir, domain_id)?),
            None => None,
        };
        #[cfg(not(feature = "security"))]
        if opts.security.is_some() {
            return Err(Error::Unsupported {
                feature: "security",
                detail: "a participant with a security identity needs halyard built with its \
                         cargo feature \"security\"",
            });
        }
        let iface = select_interface(opts.interface.as_deref()).map_err(Error::Interface)?;
        let mtu = halyard_net::interface_mtu(&iface.name);
        // Peers' addresses in our interface's subnet are the ones we reach directly.
        let reachable = Ipv4Net {
            address: iface.address.octets(),
            prefix_len: iface.prefix_len,
        };
        let transport = UdpTransport::open(domain_id, iface).map_err(Error::Transport)?;
        // A secure participant's GUID prefix begins with its certificate's subject hash.
        #[cfg(feature = "security")]
        let prefix = security
            .as_ref()
            .map_or_else(new_guid_prefix, |s| s.guid_prefix());
        #[cfg(not(feature = "security"))]
        let prefix = new_guid_prefix();
        let mut cfg = ParticipantConfig::new(domain_id, prefix);
        cfg.reachable_networks = vec![reachable];
        if let Some(linger) = opts.writer_linger {
            cfg.writer_linger = linger;
        }
        if opts.bandwidth_limit == Some(0) {
            return Err(Error::BadParameter(
                "bandwidth_limit must be positive (None: no limit)",
            ));
        }
        cfg.bandwidth_limit = opts.bandwidth_limit;
        if let Some(mtu) = mtu {
            size_datagrams_for_mtu(&mut cfg, mtu);
        }
        cfg.metatraffic_unicast = vec![transport.unicast_locator];
        cfg.default_unicast = vec![transport.unicast_locator];
        if !opts.disable_multicast {
            cfg.metatraffic_multicast = vec![transport.spdp_locator];
            cfg.spdp_destinations = vec![transport.spdp_locator];
            if !opts.unicast_user_data {
                cfg.default_multicast = vec![transport.data_multicast_locator];
                cfg.data_multicast = true;
            }
        } else if opts.initial_peers.is_empty() {
            return Err(Error::BadParameter(
                "disable_multicast needs at least one initial peer",
            ));
        }
        for p in &opts.initial_peers {
            cfg.spdp_destinations
                .push(Locator::udpv4(p.ip().octets(), p.port()));
        }
        // Hash maps keyed by what peers send are seeded with entropy peers cannot know.
        cfg.hash_seed = os_entropy();
        cfg.user_data = opts.user_data.clone();
        cfg.entity_name = opts.entity_name.clone();
        cfg.properties = crate::location::process_properties();
        if let Some(tune) = opts.tuning {
            tune(&mut cfg);
        }
        validate_config(&mut cfg)?;
        #[cfg_attr(not(feature = "security"), allow(unused_mut))]
        let mut core = Participant::new(cfg, halyard_core::Instant::default());
        #[cfg(feature = "security")]
        if let Some(plugins) = security {
            core.set_security(Box::new(plugins));
        }
        let shared = Shared::new(core, transport);
        shared.lock().security_log = opts.security_log;
        shared.drive(|st, now| st.core.handle_timeout(now));
        if let Some(fc) = opts.fault_injection {
            fc.validate().map_err(Error::BadParameter)?;
            shared.lock().faults = Some(halyard_net::FaultInjector::new(fc));
        }
        shared.start_threads().map_err(Error::Thread)?;
        Ok(DomainParticipant {
            _guard: Arc::new(ShutdownGuard(shared.clone())),
            shared,
            #[cfg(feature = "durability")]
            embedded: Arc::new(std::sync::Mutex::new(None)),
            options: Arc::new(opts),
            domain_id,
        })
    }

    /// Starts the embedded durability service if the options ask for one and it is not
    /// running yet (see [`ParticipantOptions::durability`]); without the cargo feature
    /// `durability`, options that ask for one are refused.
    #[cfg(not(feature = "durability"))]
    pub(crate) fn ensure_embedded_durability(&self) -> Result<()> {
        match self.options.durability {
            crate::durability::EmbeddedDurability::Off => Ok(()),
            _ => Err(Error::Unsupported {
                feature: "durability",
                detail: "an embedded durability service (ParticipantOptions::durability) for a \
                         TRANSIENT or PERSISTENT writer needs halyard built with its cargo \
                         feature \"durability\"",
            }),
        }
    }

    /// Starts the embedded durability service if the options ask for one and it is not
    /// running yet (see [`ParticipantOptions::durability`]).
    #[cfg(feature = "durability")]
    pub(crate) fn ensure_embedded_durability(&self) -> Result<()> {
        let mut slot = self.embedded.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_some() {
            return Ok(());
        }
        let Some(store) = self.options.durability.resolve(self.domain_id) else {
            return Ok(());
        };
        // The owner's transport and security settings, not its identity: the service is a
        // participant of its own (tools such as ddsperf read USER_DATA as the owner's).
        let mut participant = (*self.options).clone();
        participant.durability = crate::durability::EmbeddedDurability::Off;
        participant.entity_name = Some("halyard embedded durability service".into());
        participant.user_data = Vec::new();
        // Its readers take user data by unicast. The service runs on its writers' host: a
        // group address its readers shared with others would have those writers multicast,
        // and every participant of the host that joined the group (the writer's own, other
        // processes' services) receive, parse and discard each datagram.
        participant.unicast_user_data = true;
        let config = crate::durability::DurabilityConfig {
            store,
            sync: self.options.durability_sync,
            commit: self.options.durability_commit,
            participant,
            only_participant: Some(self.guid_prefix()),
            ..Default::default()
        };
        *slot = Some(crate::durability::DurabilityService::start_embedded(
            self.domain_id,
            config,
            &self.shared,
        )?);
        Ok(())
    }

    /// What the embedded durability service did so far (`None` if it is not running).
    #[cfg(feature = "durability")]
    pub fn embedded_durability_stats(&self) -> Option<crate::durability::ServiceStats> {
        let slot = self.embedded.lock().unwrap_or_else(|p| p.into_inner());
        slot.as_ref().map(|s| s.stats())
    }

    /// The domain id.
    pub fn domain_id(&self) -> u32 {
        self.domain_id
    }

    /// This participant's GUID prefix.
    pub fn guid_prefix(&self) -> GuidPrefix {
        self.shared.lock().core.guid_prefix()
    }

    /// The unicast locator peers reach us at.
    pub fn unicast_locator(&self) -> Locator {
        self.shared.transport.unicast_locator
    }

    /// Creates (or refers to) a topic.
    pub fn create_topic<T: TopicType>(&self, name: &str) -> Result<Topic<T>> {
        crate::check_topic_name(name).map_err(Error::BadTopicName)?;
        if let Some(d) = T::type_description() {
            self.shared
                .lock()
                .core
                .register_type(T::type_name(), d.type_information, d.type_objects)
                .map_err(Error::BadTypeDescription)?;
        }
        Ok(Topic {
            name: name.to_string(),
            type_name: T::type_name().to_string(),
            _t: PhantomData,
        })
    }

    /// Creates a content-filtered topic: readers created from it
    /// (`Subscriber::create_datareader_filtered`) see only the samples of `topic` that
    /// `expression` (the DDS SQL filter grammar, `%n` for `params[n]`) accepts. A bad
    /// expression is `Error::BadFilter`, which says which token is wrong and why.
    pub fn create_contentfilteredtopic<T: TopicType + halyard_cdr::Reflect>(
        &self,
        name: &str,
        topic: &Topic<T>,
        expression: &str,
        params: Vec<String>,
    ) -> Result<crate::filter::ContentFilteredTopic<T>> {
        crate::check_topic_name(name).map_err(Error::BadTopicName)?;
        Ok(crate::filter::ContentFilteredTopic::new(
            name, topic, expression, params,
        )?)
    }

    /// Creates a publisher (partitions and group data apply to its writers).
    pub fn create_publisher(&self, qos: PublisherQos) -> Publisher {
        Publisher {
            group: Group::new(self.clone(), GroupQos::from(&qos), true),
        }
    }

    /// Creates a subscriber.
    pub fn create_subscriber(&self, qos: SubscriberQos) -> Subscriber {
        Subscriber {
            group: Group::new(self.clone(), GroupQos::from(&qos), false),
        }
    }

    /// The participant's QoS: its USER_DATA (set with [`ParticipantOptions::user_data`]).
    pub fn qos(&self) -> DomainParticipantQos {
        DomainParticipantQos::default().user_data(self.options.user_data.clone())
    }

    /// Fetches, through the TypeLookup service of the discovered participants (XTypes 1.3
    /// §7.6.3.3), the TypeObjects of `roots` and of every type they refer to, transitively;
    /// returns them with their identifiers (roots first) once all are known, each checked
    /// against its hash. Types this participant registered or learnt before need no request.
    /// Asks again every 500 ms for what is still missing (a request reaches only the
    /// participants matched when it is sent); `Error::Timeout` if `timeout` passes first.
    /// Only hashed identifiers (`EK_MINIMAL`, `EK_COMPLETE`) can be looked up. Needs the cargo
    /// feature `typelookup` (otherwise [`Error::Unsupported`]).
    pub fn lookup_type(
        &self,
        roots: &[xtypes::TypeIdentifier],
        timeout: Duration,
    ) -> Result<Vec<(xtypes::TypeIdentifier, xtypes::TypeObject)>> {
        #[cfg(not(feature = "typelookup"))]
        {
            let _ = (roots, timeout);
            Err(Error::Unsupported {
                feature: "typelookup",
                detail: "looking types up through TypeLookup needs halyard built with its \
                         cargo feature \"typelookup\"",
            })
        }
        #[cfg(feature = "typelookup")]
        self.request_type_closure(roots, timeout)
    }

    /// [`DomainParticipant::lookup_type`]'s requests and wait.
    #[cfg(feature = "typelookup")]
    fn request_type_closure(
        &self,
        roots: &[xtypes::TypeIdentifier],
        timeout: Duration,
    ) -> Result<Vec<(xtypes::TypeIdentifier, xtypes::TypeObject)>> {
        let mut next_ask: Option<halyard_core::Instant> = None;
        let mut refused = None;
        let found = self.shared.drive_until(timeout, |st, now| {
            let c = st.core.type_closure(roots);
            if c.missing.is_empty() {
                return Some(c.found);
            }
            if next_ask.is_none_or(|t| now >= t) {
                if let Err(e) = st.core.request_types(now, &c.missing) {
                    refused = Some(e);
                    return Some(Vec::new());
                }
                next_ask = Some(now + Duration::from_millis(500));
            }
            None
        });
        match (refused, found) {
            (Some(halyard_core::TypeLookupError::NotAHash), _) => Err(Error::BadParameter(
                "only hashed TypeIdentifiers can be looked up",
            )),
            (Some(_), _) => Err(Error::BadParameter(
                "too many TypeIdentifiers in one lookup",
            )),
            (None, Some(found)) => Ok(found),
            (None, None) => Err(Error::Timeout),
        }
    }

    /// [`DomainParticipant::lookup_type`] for the types a TypeInformation names (as
    /// discovery reports it for a remote endpoint): its complete type first, then its
    /// minimal type, with everything they refer to.
    pub fn lookup_type_information(
        &self,
        info: &xtypes::TypeInformation,
        timeout: Duration,
    ) -> Result<Vec<(xtypes::TypeIdentifier, xtypes::TypeObject)>> {
        let roots = [
            info.complete.typeid_with_size.type_id.clone(),
            info.minimal.typeid_with_size.type_id.clone(),
        ];
        self.lookup_type(&roots, timeout)
    }

    /// DCPSParticipant: the remote participants discovered so far.
    pub fn discovered_participants(&self) -> Vec<ParticipantData> {
        self.shared.lock().core.remote_participants()
    }

    /// DCPSPublication: the remote writers discovered so far.
    pub fn discovered_publications(&self) -> Vec<EndpointData> {
        self.shared.lock().core.remote_publications()
    }

    /// DCPSSubscription: the remote readers discovered so far.
    pub fn discovered_subscriptions(&self) -> Vec<EndpointData> {
        self.shared.lock().core.remote_subscriptions()
    }

    /// A reader of the DCPSParticipant builtin topic (seeded with what is already known).
    pub fn builtin_participant_reader(&self) -> BuiltinReader<ParticipantBuiltinTopicData> {
        BuiltinReader::new(self.clone(), BuiltinTopic::Participant)
    }

    /// A reader of the DCPSPublication builtin topic.
    pub fn builtin_publication_reader(&self) -> BuiltinReader<PublicationBuiltinTopicData> {
        BuiltinReader::new(self.clone(), BuiltinTopic::Publication)
    }

    /// A reader of the DCPSSubscription builtin topic.
    pub fn builtin_subscription_reader(&self) -> BuiltinReader<SubscriptionBuiltinTopicData> {
        BuiltinReader::new(self.clone(), BuiltinTopic::Subscription)
    }

    /// What fault injection did so far (`None` without fault injection).
    pub fn fault_stats(&self) -> Option<halyard_net::FaultStats> {
        self.shared.lock().faults.as_ref().map(|f| f.stats)
    }

    /// Counters of received, malformed and dropped traffic.
    pub fn stats(&self) -> halyard_core::Stats {
        self.shared.lock().core.stats()
    }
}

/// A topic: a name bound to a type.
pub struct Topic<T> {
    pub(crate) name: String,
    pub(crate) type_name: String,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for Topic<T> {
    fn clone(&self) -> Self {
        Topic {
            name: self.name.clone(),
            type_name: self.type_name.clone(),
            _t: PhantomData,
        }
    }
}

impl<T> Topic<T> {
    /// The topic `name` of type `type_name` (for types known at run time).
    pub(crate) fn named(name: &str, type_name: &str) -> Self {
        Topic {
            name: name.to_string(),
            type_name: type_name.to_string(),
            _t: PhantomData,
        }
    }

    /// The topic name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The registered type name.
    pub fn type_name(&self) -> &str {
        &self.type_name
    }
}

/// A publisher: groups writers under one PARTITION / GROUP_DATA / PRESENTATION, and their
/// coherent sets.
pub struct Publisher {
    group: Group,
}

impl Publisher {
    /// Begins a coherent set (DDS 1.4 `begin_coherent_changes`; calls nest, the set ends at
    /// the outermost [`Publisher::end_coherent_changes`]): what this publisher's writers
    /// write until then reaches each reader that asked for coherent access (PRESENTATION
    /// coherent_access) whole or not at all: one set per writer at INSTANCE or TOPIC scope;
    /// at GROUP scope one set across all the publisher's writers, which a subscriber with
    /// GROUP coherent access gets into all its readers in one step. Writers whose own
    /// PRESENTATION is not coherent write as usual.
    pub fn begin_coherent_changes(&self) -> Result<()> {
        if self.group.open() == 1 {
            let group = self.group.id;
            let whole_group = self.group.group_coherent();
            self.group.participant.shared.drive(|st, _| {
                if whole_group {
                    st.core.begin_group_coherent_set(group);
                } else {
                    for id in group_writers(st, group) {
                        st.core.begin_coherent_set(id);
                    }
                }
            });
        }
        Ok(())
    }

    /// Ends the coherent set begun by [`Publisher::begin_coherent_changes`] (at the
    /// outermost call): readers now get it. `Error::PreconditionNotMet` without a begin.
    pub fn end_coherent_changes(&self) -> Result<()> {
        let depth = self
            .group
            .close("end_coherent_changes without begin_coherent_changes")?;
        if depth == 0 {
            let group = self.group.id;
            let whole_group = self.group.group_coherent();
            self.group.participant.shared.drive(|st, now| {
                if whole_group {
                    st.core.end_group_coherent_set(now, group);
                } else {
                    for id in group_writers(st, group) {
                        st.core.end_coherent_set(now, id);
                    }
                }
            });
        }
        Ok(())
    }

    /// The publisher's QoS.
    pub fn qos(&self) -> PublisherQos {
        PublisherQos::from(&self.group.qos())
    }

    /// Changes the publisher's PARTITION and GROUP_DATA (both changeable): every writer it
    /// created takes them, is announced again and is matched again (readers of partitions it
    /// left are unmatched, readers of partitions it joined are matched).
    pub fn set_qos(&self, qos: PublisherQos) -> Result<()> {
        self.group.set_qos(GroupQos::from(&qos))
    }

    /// Creates a DataWriter. QoS is validated; unimplemented values are refused.
    pub fn create_datawriter<T: TopicType>(
        &self,
        topic: &Topic<T>,
        qos: DataWriterQos,
    ) -> Result<DataWriter<T>> {
        self.create_datawriter_with_listener(topic, qos, None)
    }

    /// Creates a DataWriter whose listener is in place before it can match anything.
    pub fn create_datawriter_with_listener<T: TopicType>(
        &self,
        topic: &Topic<T>,
        qos: DataWriterQos,
        listener: Option<Arc<dyn DataWriterListener>>,
    ) -> Result<DataWriter<T>> {
        // It applies the content filters of its readers (those it can compile for `T`).
        let compiler = crate::filter::writer_filter_compiler::<T>();
        self.create_writer(topic, T::has_key(), Some(compiler), qos, listener)
    }

    /// Creates a writer of `topic` (typed, or untyped with the type support's `has_key`);
    /// `compiler` compiles its readers' content filters (`None`: it filters nothing).
    pub(crate) fn create_writer<T, U>(
        &self,
        topic: &Topic<U>,
        has_key: bool,
        compiler: Option<halyard_core::FilterCompiler>,
        qos: DataWriterQos,
        listener: Option<Arc<dyn DataWriterListener>>,
    ) -> Result<DataWriter<T>> {
        let mut qos = EndpointQos::from(&qos);
        validate(&qos, true)?;
        if qos.durability >= halyard_wire::qos::DurabilityKind::Transient {
            self.group.participant.ensure_embedded_durability()?;
        }
        inherit(
            &mut qos,
            &self.group.qos(),
            &[halyard_core::matching::XCDR1],
        );
        let shared = &self.group.participant.shared;
        shared
            .lock()
            .core
            .check_local_endpoint(&topic.name, &qos.partition, true)
            .map_err(Error::NotAllowedBySecurity)?;
        let spec = WriterSpec {
            topic_name: topic.name.clone(),
            type_name: topic.type_name.clone(),
            qos: qos.clone(),
            has_key,
        };
        let in_set = self.group.is_open();
        let enabled = self.group.qos().entity_factory.autoenable_created_entities;
        let entity = self.group.id;
        let id = shared.drive(|st, now| {
            let id = st.core.create_writer_disabled(now, spec);
            st.core.set_endpoint_group(id, entity);
            if enabled {
                st.core.enable_writer(now, id);
            }
            if in_set {
                // A writer created while a set is open writes into it.
                st.core.begin_coherent_set(id);
            }
            st.core
                .set_writer_filter_compiler(id, compiler)
                .map_err(crate::writer::refused_write)?;
            // Before the pump: events raised during creation refer to `id`.
            st.writers
                .insert(id, WriterState::new(qos.clone(), self.group.id, listener));
            Ok::<_, Error>(id)
        })?;
        Ok(DataWriter::new(
            self.group.participant.clone(),
            id,
            qos,
            enabled,
            has_key,
        ))
    }
}

/// A subscriber: groups readers under one PARTITION / GROUP_DATA / PRESENTATION.
pub struct Subscriber {
    group: Group,
}

impl Subscriber {
    /// Begins access (DDS 1.4 `begin_access`; calls nest, access ends at the outermost
    /// [`Subscriber::end_access`]). Each coherent set reaches the readers' caches in one step
    /// (at GROUP scope, the caches of all the subscriber's readers at once). With PRESENTATION
    /// access scope GROUP (coherent or ordered access), nothing new reaches the subscriber's
    /// readers while access is open: what arrives meanwhile is held and reaches them, in the
    /// order it came, at the outermost `end_access`. Reading the readers one after the other
    /// between begin and end access thus sees each GROUP set whole or not at all. Keep access
    /// short, and do not wait for data inside it: a wait (`wait_for_data`, a WaitSet on the
    /// subscriber's readers) cannot see what is held until access ends.
    pub fn begin_access(&self) -> Result<()> {
        let holds = self.holds_access();
        let group = self.group.id;
        // Under the participant's lock, so that no sample is handed over between the
        // nesting count and the hold.
        self.group.participant.shared.drive(|st, _| {
            if self.group.open() == 1 && holds {
                st.core.begin_access(group);
            }
        });
        Ok(())
    }

    /// Ends access begun by [`Subscriber::begin_access`] (at the outermost call, what was held
    /// reaches the readers now); `Error::PreconditionNotMet` without a begin.
    pub fn end_access(&self) -> Result<()> {
        let group = self.group.id;
        self.group.participant.shared.drive(|st, _| {
            let depth = self.group.close("end_access without begin_access")?;
            if depth == 0 {
                st.core.end_access(group);
            }
            Ok(())
        })
    }

    /// True if its PRESENTATION asks for coherent or ordered access at GROUP scope: its
    /// access holds what arrives.
    fn holds_access(&self) -> bool {
        let p = self.group.qos().presentation;
        p.access_scope == PresentationAccessScope::Group && (p.coherent_access || p.ordered_access)
    }

    /// The readers of this subscriber that hold samples not yet read (DDS 1.4
    /// `get_datareaders` for NOT_READ samples), as [`DataReader::instance_handle`]s.
    ///
    /// With PRESENTATION ordered access at GROUP scope the list has one entry per unread
    /// sample, in the order to read them (a reader appears as often as it has samples): each
    /// publisher's samples in the order it made them across its writers (PID_GROUP_SEQ_NUM),
    /// samples of different publishers in the order they arrived. Reading one sample from each
    /// listed reader in turn (`take(1)` / `read(1)`) then follows that order. DDS asks for
    /// this to be called between [`Subscriber::begin_access`] and
    /// [`Subscriber::end_access`]: without it, `Error::PreconditionNotMet`.
    pub fn get_datareaders(&self) -> Result<Vec<crate::status::InstanceHandle>> {
        let p = self.group.qos().presentation;
        let ordered = p.ordered_access && p.access_scope == PresentationAccessScope::Group;
        if ordered && !self.group.is_open() {
            return Err(Error::PreconditionNotMet(
                "get_datareaders with GROUP ordered access outside begin_access/end_access",
            ));
        }
        let prefix = self.group.participant.guid_prefix();
        let group = self.group.id;
        let st = self.group.participant.shared.lock();
        let handle = |id| crate::status::InstanceHandle::from(halyard_wire::Guid::new(prefix, id));
        let mut ids: Vec<_> = st
            .readers
            .iter()
            .filter(|(_, r)| r.group == group)
            .collect();
        if !ordered {
            return Ok(ids
                .into_iter()
                .filter(|(_, r)| r.cache.has_unread())
                .map(|(&id, _)| handle(id))
                .collect());
        }
        ids.sort_by_key(|(&id, _)| id);
        let mut unread: Vec<(crate::history::Unread, halyard_wire::EntityId)> = ids
            .into_iter()
            .flat_map(|(&id, r)| r.cache.unread().map(move |u| (u, id)))
            .collect();
        unread.sort_by_key(|((at, _), _)| *at);
        crate::history::group_order(&mut unread, |((_, seq), _)| *seq);
        Ok(unread.into_iter().map(|(_, id)| handle(id)).collect())
    }

    /// The subscriber's QoS.
    pub fn qos(&self) -> SubscriberQos {
        SubscriberQos::from(&self.group.qos())
    }

    /// Changes the subscriber's PARTITION and GROUP_DATA (both changeable): every reader it
    /// created takes them, is announced again and is matched again.
    pub fn set_qos(&self, qos: SubscriberQos) -> Result<()> {
        self.group.set_qos(GroupQos::from(&qos))
    }

    /// Creates a DataReader. QoS is validated; unimplemented values are refused.
    pub fn create_datareader<T: TopicType>(
        &self,
        topic: &Topic<T>,
        qos: DataReaderQos,
    ) -> Result<DataReader<T>> {
        self.create_datareader_with_listener(topic, qos, None)
    }

    /// Creates a DataReader whose listener is in place before it can match anything.
    pub fn create_datareader_with_listener<T: TopicType>(
        &self,
        topic: &Topic<T>,
        qos: DataReaderQos,
        listener: Option<Arc<dyn DataReaderListener>>,
    ) -> Result<DataReader<T>> {
        self.create_reader(topic, qos, listener, None)
    }

    /// Creates a DataReader of a content-filtered topic: samples its filter rejects never
    /// reach the reader's cache (nor its listener, nor its statuses). The reader announces the
    /// filter, so writers that can apply it (Halyard's do) do not even send those samples.
    pub fn create_datareader_filtered<T: TopicType + halyard_cdr::Reflect>(
        &self,
        topic: &crate::filter::ContentFilteredTopic<T>,
        qos: DataReaderQos,
        listener: Option<Arc<dyn DataReaderListener>>,
    ) -> Result<DataReader<T>> {
        self.create_reader(&topic.related, qos, listener, Some(topic))
    }

    fn create_reader<T: TopicType>(
        &self,
        topic: &Topic<T>,
        qos: DataReaderQos,
        listener: Option<Arc<dyn DataReaderListener>>,
        filtered: Option<&crate::filter::ContentFilteredTopic<T>>,
    ) -> Result<DataReader<T>> {
        let key_fn: Option<KeyFn> = if T::has_key() {
            Some(Arc::new(crate::reader::key_of::<T>))
        } else {
            None
        };
        let endpoint = crate::reader::ReaderSupport {
            has_key: T::has_key(),
            key_fn,
            filter: None,
        };
        self.create_reader_filtered_with(topic, endpoint, qos, listener, filtered)
    }

    /// Creates a reader of `topic` (typed, or untyped) with what `endpoint` says of its type,
    /// reading only what `filtered`'s filter accepts, and announcing it, when given.
    pub(crate) fn create_reader_filtered_with<T, U>(
        &self,
        topic: &Topic<U>,
        mut endpoint: crate::reader::ReaderSupport,
        qos: DataReaderQos,
        listener: Option<Arc<dyn DataReaderListener>>,
        filtered: Option<&crate::filter::ContentFilteredTopic<U>>,
    ) -> Result<DataReader<T>> {
        endpoint.filter = filtered.map(|t| t.sample_filter());
        let shared = self.group.participant.shared.clone();
        self.create_reader_with(
            topic,
            endpoint,
            qos,
            listener,
            |core, now, spec| match filtered {
                Some(t) => t.attach(&shared, |property| {
                    core.create_reader_disabled(now, spec, Some(property))
                }),
                None => core.create_reader_disabled(now, spec, None),
            },
        )
    }

    /// Creates a reader of `topic` (typed, or untyped) with what `endpoint` says of its type;
    /// `create` makes the core's (disabled) reader.
    pub(crate) fn create_reader_with<T, U>(
        &self,
        topic: &Topic<U>,
        endpoint: crate::reader::ReaderSupport,
        qos: DataReaderQos,
        listener: Option<Arc<dyn DataReaderListener>>,
        create: impl FnOnce(
            &mut Participant,
            halyard_core::Instant,
            ReaderSpec,
        ) -> halyard_wire::EntityId,
    ) -> Result<DataReader<T>> {
        let crate::reader::ReaderSupport {
            has_key,
            key_fn,
            filter,
        } = endpoint;
        let mut qos = EndpointQos::from(&qos);
        validate(&qos, false)?;
        use halyard_core::matching::{XCDR1, XCDR2};
        inherit(&mut qos, &self.group.qos(), &[XCDR1, XCDR2]);
        let shared = &self.group.participant.shared;
        shared
            .lock()
            .core
            .check_local_endpoint(&topic.name, &qos.partition, false)
            .map_err(Error::NotAllowedBySecurity)?;
        let spec = ReaderSpec {
            topic_name: topic.name.clone(),
            type_name: topic.type_name.clone(),
            qos: qos.clone(),
            has_key,
        };
        let enabled = self.group.qos().entity_factory.autoenable_created_entities;
        let entity = self.group.id;
        let id = shared.drive(|st, now| {
            let id = create(&mut st.core, now, spec);
            st.core.set_endpoint_group(id, entity);
            if enabled {
                st.core.enable_reader(now, id);
            }
            st.core.set_reader_key_fn(id, key_fn.clone());
            let seed = st.core.config().hash_seed;
            let mut state = ReaderState::new(ReaderCache::new(qos, key_fn, seed), self.group.id);
            state.listener = listener;
            state.filter = filter;
            let credit = state.cache.credit();
            // Before the pump: samples and events raised during creation refer to `id`.
            st.readers.insert(id, state);
            st.core.set_reader_credit(now, id, credit);
            id
        });
        Ok(DataReader::new(self.group.participant.clone(), id, enabled))
    }
}
