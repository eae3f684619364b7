//! What `halyard ls` and `halyard ps` share: their options, joining the domain to listen to
//! discovery for a while, and a snapshot of what was discovered, grouped by participant
//! (participants in GUID order, endpoints in GUID order), with the formatting of GUIDs,
//! locators, vendors and durations both commands print.
//!
//! The tool's own participant announces no endpoints and is never listed. Participants whose
//! endpoints were discovered but whose SPDP announcement was not (yet) are listed with what
//! their endpoints tell.

use halyard::{DomainParticipant, ParticipantOptions};
use halyard_wire::discovery::{EndpointData, ParticipantData};
use halyard_wire::{Guid, GuidPrefix, Locator, VendorId};
use std::collections::BTreeMap;
use std::time::Duration;

/// The longest discovery time accepted (an hour).
const MAX_DURATION: Duration = Duration::from_secs(3600);

/// Options of `ls` and `ps`.
#[derive(Clone, Debug)]
pub struct Args {
    /// DDS domain id.
    pub domain: u32,
    /// Print one JSON document instead of text.
    pub json: bool,
    /// How long to listen before printing (and between prints with `watch`).
    pub duration: Duration,
    /// Print again every `duration` until interrupted (`ls` only).
    pub watch: bool,
    /// Only topics whose name matches this pattern (`*` and `?` wildcards).
    pub topic: Option<String>,
    /// Show every QoS policy of each endpoint in the text output (JSON always has them).
    pub qos: bool,
}

/// A command-line mistake: what was wrong.
#[derive(Debug)]
pub struct BadArgs(pub String);

/// The value of option `name`: the next argument, or the error saying it is missing.
pub fn option_value(it: &mut std::slice::Iter<'_, String>, name: &str) -> Result<String, BadArgs> {
    it.next()
        .cloned()
        .ok_or_else(|| BadArgs(format!("{name} needs a value")))
}

/// Parses the options of `ls` (`allow_watch`) or `ps`; `default_duration` when `--duration`
/// is not given.
pub fn parse_args(
    args: &[String],
    allow_watch: bool,
    default_duration: Duration,
) -> Result<Args, BadArgs> {
    let mut a = Args {
        domain: 0,
        json: false,
        duration: default_duration,
        watch: false,
        topic: None,
        qos: false,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| option_value(&mut it, name);
        match arg.as_str() {
            o if is_domain_option(o) => a.domain = domain_or_hint(&value(arg)?)?,
            "-r" | "--runtime" | "--duration" => a.duration = parse_duration(&value(arg)?)?,
            "-t" | "--topic" => a.topic = Some(value(arg)?),
            "-q" | "--qos" => a.qos = true,
            "--json" => a.json = true,
            "-w" | "--watch" if allow_watch => a.watch = true,
            other => return Err(BadArgs(format!("unknown argument {other:?}"))),
        }
    }
    Ok(a)
}

/// Whether `arg` names the domain: `-d, --domain`, the spelling of every command of Halyard's
/// own, or an older spelling kept as an alias (`-i`, `--id`, `--domain-id`). `perf` and
/// `shapes` take their reference tools' options instead.
pub fn is_domain_option(arg: &str) -> bool {
    matches!(arg, "-d" | "--domain" | "-i" | "--id" | "--domain-id")
}

/// A domain id: 0..=232, the largest the RTPS port mapping allows with its default
/// parameters.
pub fn domain_id(v: &str) -> Result<u32, BadArgs> {
    v.parse()
        .ok()
        .filter(|d| *d <= 232)
        .ok_or_else(|| BadArgs(format!("bad domain id {v:?} (0..=232)")))
}

/// [`domain_id`] for `ls` and `ps`, where `-d` was once the duration: a value that is no
/// domain id but reads as a duration is told where the duration goes.
fn domain_or_hint(v: &str) -> Result<u32, BadArgs> {
    domain_id(v).map_err(|e| match parse_duration(v) {
        Ok(_) => BadArgs(format!("{}; the duration is -r, --duration", e.0)),
        Err(_) => e,
    })
}

/// A duration in seconds (`2.5`), or with a unit: `500ms`, `3s`, `1m`.
fn parse_duration(s: &str) -> Result<Duration, BadArgs> {
    let (number, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else {
        (s, 1.0)
    };
    number
        .parse::<f64>()
        .ok()
        .map(|n| n * scale)
        .filter(|&secs| secs > 0.0 && secs <= MAX_DURATION.as_secs_f64())
        .map(Duration::from_secs_f64)
        .ok_or_else(|| {
            BadArgs(format!(
                "bad duration {s:?} (e.g. 3, 2.5s, 500ms; at most 1 h)"
            ))
        })
}

/// True when `name` matches `pattern`, where `*` matches any run of characters and `?` any
/// one character.
pub fn matches_pattern(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Classic wildcard matching with one backtrack point (linear in practice).
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        match p.get(i) {
            Some('*') => {
                star = Some((i, j));
                i += 1;
            }
            Some(&c) if c == '?' || c == n[j] => {
                i += 1;
                j += 1;
            }
            _ => match star {
                Some((si, sj)) => {
                    i = si + 1;
                    j = sj + 1;
                    star = Some((si, sj + 1));
                }
                None => return false,
            },
        }
    }
    p[i.min(p.len())..].iter().all(|&c| c == '*')
}

/// Joins `domain` as a participant named `name` that announces no endpoint.
pub fn join(domain: u32, name: &str) -> Result<DomainParticipant, halyard::Error> {
    DomainParticipant::with_options(
        domain,
        ParticipantOptions {
            entity_name: Some(name.to_string()),
            ..ParticipantOptions::from_env()?
        },
    )
}

/// A discovered participant with its endpoints.
#[derive(Clone, Debug)]
pub struct Peer {
    /// Its GUID prefix.
    pub prefix: GuidPrefix,
    /// Its SPDP announcement, if received.
    pub data: Option<ParticipantData>,
    /// Its writers (DCPSPublication), in GUID order.
    pub writers: Vec<EndpointData>,
    /// Its readers (DCPSSubscription), in GUID order.
    pub readers: Vec<EndpointData>,
}

impl Peer {
    /// The participant's GUID.
    pub fn guid(&self) -> Guid {
        Guid::new(self.prefix, halyard_wire::EntityId::PARTICIPANT)
    }

    /// Its ENTITY_NAME, if announced.
    pub fn name(&self) -> Option<&str> {
        self.data.as_ref()?.entity_name.as_deref()
    }

    /// Its vendor id (from SPDP, else from an endpoint's announcement).
    pub fn vendor(&self) -> Option<VendorId> {
        self.data.as_ref().map(|d| d.vendor_id).or_else(|| {
            self.writers
                .iter()
                .chain(&self.readers)
                .find_map(|e| e.vendor_id)
        })
    }

    /// The value of property `name` (e.g. `__Hostname`), if announced.
    pub fn property(&self, name: &str) -> Option<&str> {
        let d = self.data.as_ref()?;
        d.properties
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Its host name (`__Hostname`).
    pub fn host(&self) -> Option<&str> {
        self.property(halyard::location::PROPERTY_HOSTNAME)
    }

    /// Its process id (`__Pid`), when announced as a number.
    pub fn pid(&self) -> Option<u64> {
        self.property(halyard::location::PROPERTY_PID)?.parse().ok()
    }

    /// Its process name (`__ProcessName`).
    pub fn process(&self) -> Option<&str> {
        self.property(halyard::location::PROPERTY_PROCESS_NAME)
    }

    /// Its unicast addresses (metatraffic and default locators), formatted, deduplicated.
    pub fn addresses(&self) -> Vec<String> {
        let Some(d) = &self.data else {
            return Vec::new();
        };
        let mut out: Vec<String> = Vec::new();
        for l in d.metatraffic_unicast.iter().chain(&d.default_unicast) {
            let s = locator(l);
            if !out.contains(&s) {
                out.push(s);
            }
        }
        out
    }

    /// The names of the topics of its endpoints, sorted, deduplicated.
    pub fn topics(&self) -> Vec<&str> {
        let mut t: Vec<&str> = self
            .writers
            .iter()
            .chain(&self.readers)
            .map(|e| e.topic_name.as_str())
            .collect();
        t.sort_unstable();
        t.dedup();
        t
    }
}

/// What was discovered, by participant in GUID order.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// The participants.
    pub peers: Vec<Peer>,
}

impl Snapshot {
    /// What `dp` has discovered now; endpoints of topics `topic` does not match are left
    /// out (their participants stay).
    pub fn take(dp: &DomainParticipant, topic: Option<&str>) -> Snapshot {
        let own = dp.guid_prefix();
        let mut peers: BTreeMap<[u8; 12], Peer> = BTreeMap::new();
        for p in dp.discovered_participants() {
            if p.guid.prefix == own {
                continue;
            }
            let prefix = p.guid.prefix;
            peers
                .entry(prefix.0)
                .or_insert_with(|| empty_peer(prefix))
                .data = Some(p);
        }
        let keep = |e: &EndpointData| topic.is_none_or(|t| matches_pattern(t, &e.topic_name));
        let mut endpoints = |list: Vec<EndpointData>, writers: bool| {
            for e in list.into_iter().filter(keep) {
                let prefix = e.participant_guid.map_or(e.guid.prefix, |g| g.prefix);
                if prefix == own {
                    continue;
                }
                let peer = peers.entry(prefix.0).or_insert_with(|| empty_peer(prefix));
                if writers {
                    peer.writers.push(e);
                } else {
                    peer.readers.push(e);
                }
            }
        };
        endpoints(dp.discovered_publications(), true);
        endpoints(dp.discovered_subscriptions(), false);
        let mut peers: Vec<Peer> = peers.into_values().collect();
        for p in &mut peers {
            p.writers.sort_by_key(|e| e.guid.to_bytes());
            p.readers.sort_by_key(|e| e.guid.to_bytes());
        }
        Snapshot { peers }
    }
}

fn empty_peer(prefix: GuidPrefix) -> Peer {
    Peer {
        prefix,
        data: None,
        writers: Vec::new(),
        readers: Vec::new(),
    }
}

/// A GUID as Cyclone DDS's tools print it: its 16 bytes as a UUID
/// (`01100a0b-0c0d-0e0f-1011-1213000001c1`).
pub fn guid(g: Guid) -> String {
    let b = g.to_bytes();
    let hex = |r: std::ops::Range<usize>| -> String {
        b.get(r)
            .unwrap_or_default()
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect()
    };
    format!(
        "{}-{}-{}-{}-{}",
        hex(0..4),
        hex(4..6),
        hex(6..8),
        hex(8..10),
        hex(10..16)
    )
}

/// A locator as `udp/ADDRESS:PORT` (IPv4 and IPv6 UDP), else `kind K/HEX:PORT`.
pub fn locator(l: &Locator) -> String {
    const UDPV4: i32 = 1;
    const UDPV6: i32 = 2;
    match l.kind {
        UDPV4 => {
            let [.., a, b, c, d] = l.address;
            format!("udp/{a}.{b}.{c}.{d}:{}", l.port)
        }
        UDPV6 => format!("udp/[{}]:{}", std::net::Ipv6Addr::from(l.address), l.port),
        k => {
            let hex: String = l.address.iter().map(|x| format!("{x:02x}")).collect();
            format!("kind {k}/{hex}:{}", l.port)
        }
    }
}

/// The vendor's product name for the ids the OMG assigned (DDSI-RTPS vendor id list) to the
/// implementations one meets most, else the id in hex.
pub fn vendor_name(v: VendorId) -> String {
    match v.0 {
        [0x01, 0x01] => "RTI Connext DDS".into(),
        [0x01, 0x02] => "ADLINK OpenSplice DDS".into(),
        [0x01, 0x03] => "OpenDDS".into(),
        [0x01, 0x0f] => "eProsima Fast DDS".into(),
        [0x01, 0x10] => "Eclipse Cyclone DDS".into(),
        [0x01, 0x11] => "GurumNetworks GurumDDS".into(),
        [0x01, 0x12] => "Atostek RustDDS".into(),
        [0x01, 0x99] => "Halyard".into(),
        [a, b] => format!("{a:02x}{b:02x}"),
    }
}

/// A DDS duration in seconds; `None` for DURATION_INFINITE.
pub fn seconds(d: halyard_wire::Duration) -> Option<f64> {
    (d != halyard_wire::Duration::INFINITE).then(|| d.to_nanos() as f64 / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_options_and_refuses_mistakes() {
        let a = parse_args(
            &strings(&["--id", "7", "--json", "-r", "500ms", "-t", "Sq*", "--watch"]),
            true,
            Duration::from_secs(3),
        )
        .unwrap();
        assert_eq!((a.domain, a.json, a.watch), (7, true, true));
        assert_eq!(a.duration, Duration::from_millis(500));
        assert_eq!(a.topic.as_deref(), Some("Sq*"));
        for bad in [
            &["--id"][..],
            &["--id", "x"],
            &["--id", "300"],
            &["--duration", "0"],
            &["--duration", "-1"],
            &["--duration", "2h"],
            &["--bogus"],
        ] {
            assert!(
                parse_args(&strings(bad), true, Duration::ZERO).is_err(),
                "{bad:?}"
            );
        }
        assert!(parse_args(&strings(&["--watch"]), false, Duration::ZERO).is_err());
        assert_eq!(parse_duration("1m").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("2.5").unwrap(), Duration::from_millis(2500));
    }

    #[test]
    fn the_domain_is_dash_d_with_the_old_spellings_as_aliases() {
        for opt in ["-d", "--domain", "-i", "--id", "--domain-id"] {
            let a = parse_args(&strings(&[opt, "193"]), true, Duration::ZERO).unwrap();
            assert_eq!(a.domain, 193, "{opt}");
        }
        // The duration is -r / --duration; a duration given to -d says so.
        let a = parse_args(&strings(&["-r", "2s", "-d", "7"]), false, Duration::ZERO).unwrap();
        assert_eq!((a.domain, a.duration), (7, Duration::from_secs(2)));
        let e = parse_args(&strings(&["-d", "500ms"]), true, Duration::ZERO).unwrap_err();
        assert!(e.0.contains("the duration is -r, --duration"), "{}", e.0);
        let e = parse_args(&strings(&["--domain", "x"]), true, Duration::ZERO).unwrap_err();
        assert_eq!(e.0, "bad domain id \"x\" (0..=232)");
    }

    #[test]
    fn wildcards() {
        assert!(matches_pattern("*", "anything"));
        assert!(matches_pattern("Sq*e", "Square"));
        assert!(matches_pattern("?ircle", "Circle"));
        assert!(matches_pattern("a*b*c", "axxbyyc"));
        assert!(!matches_pattern("a*b*c", "axxbyy"));
        assert!(!matches_pattern("Square", "Squares"));
        assert!(matches_pattern("", ""));
        assert!(!matches_pattern("", "x"));
    }

    #[test]
    fn formats_guids_and_locators() {
        let g = Guid::new(
            GuidPrefix([1, 0x10, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]),
            halyard_wire::EntityId::PARTICIPANT,
        );
        assert_eq!(guid(g), "01100203-0405-0607-0809-0a0b000001c1");
        assert_eq!(
            locator(&Locator::udpv4([127, 0, 0, 1], 7410)),
            "udp/127.0.0.1:7410"
        );
    }
}
