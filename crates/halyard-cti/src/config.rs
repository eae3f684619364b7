//! The node's configuration file (TOML): who the organisation is, the sectors it shares in,
//! what it shares where (by TLP marking), where it keeps its data, where it listens, its
//! limits, its sanitisation rules and review policy, and the remote TAXII collections it
//! polls.
//!
//! Everything is checked when the file is read ([`Config::load`]): an unknown key, a sector
//! named twice, a sharing rule naming a sector the node is not in, a limit of zero, a bad
//! address — each is refused with the file, the key and the reason. Relative paths are taken
//! relative to the configuration file's directory, so a community directory can be moved.

use halyard_stix::marking::Tlp;
use halyard_stix::sanitize::Rules;
use serde::Deserialize;
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// The markings that leave an organisation, each on a topic of its own (AMBER+STRICT stays
/// in the organisation: TLP 2.0).
pub const SHARED_TLPS: [Tlp; 4] = [Tlp::Clear, Tlp::Green, Tlp::Amber, Tlp::Red];

/// A configuration that could not be used: which file, and what is wrong.
#[derive(Debug)]
pub struct ConfigError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason)
    }
}

impl std::error::Error for ConfigError {}

/// The whole configuration of one node.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The organisation and its DDS participation.
    pub node: NodeSection,
    /// The sectors (sharing communities) the organisation belongs to: each is a DDS
    /// partition.
    #[serde(default)]
    pub sectors: Vec<String>,
    /// What is shared where.
    #[serde(default)]
    pub sharing: Sharing,
    /// Addresses the node listens on.
    #[serde(default)]
    pub listen: Listen,
    /// Bounds on input and on the DDS histories.
    #[serde(default)]
    pub limits: Limits,
    /// Rules that remove or generalise personal and internal data before sharing.
    #[serde(default)]
    pub sanitize: Rules,
    /// Which objects wait for a second person's review before they are shared.
    #[serde(default)]
    pub review: ReviewPolicy,
    /// A directory watched for STIX bundles and MISP events to ingest.
    #[serde(default)]
    pub watch: Option<Watch>,
    /// Remote TAXII 2.1 collections polled for objects to ingest.
    #[serde(default, rename = "poll")]
    pub polls: Vec<Poll>,
    /// The directory of the configuration file (relative paths are resolved against it).
    #[serde(skip)]
    pub base_dir: PathBuf,
}

/// `[node]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSection {
    /// The organisation's name: its DDS Security identity's name in a community made by
    /// `halyard-cti community init`, and the `origin` of what it shares.
    pub organisation: String,
    /// The DDS domain id (default 0).
    #[serde(default)]
    pub domain: u32,
    /// Directory of the node's data: `cti.sqlite` (objects, review queue, audit log, users)
    /// and `durability.sqlite` (the DDS durability service's store).
    pub store: PathBuf,
    /// The DDS Security identity directory (`DIR/NAME` of the community), or absent to run
    /// without DDS Security (refused unless `insecure = true`).
    #[serde(default)]
    pub security: Option<PathBuf>,
    /// Run without DDS Security: every marking travels unprotected. For tests and
    /// laboratories only; the node says so at start.
    #[serde(default)]
    pub insecure: bool,
    /// Network interface for DDS (name or IPv4 address; default: Halyard's choice, or the
    /// `HALYARD_INTERFACE` environment variable).
    #[serde(default)]
    pub interface: Option<String>,
    /// What a commit of the node's database survives: `normal` (default: a crash of the
    /// process, kill -9 included; a power loss may lose the latest commits) or `full` (a power
    /// loss too, at the price of a disk flush per commit).
    #[serde(default)]
    pub sync: crate::store::Sync,
    /// The identity (`identity--UUID`) of the organisation used as `created_by_ref` of
    /// objects it produces from MISP events; made from the organisation's name when absent.
    #[serde(default)]
    pub identity: Option<String>,
}

/// `[sharing]`: for each TLP level, the sectors objects of that marking are shared with.
/// Absent levels default to every sector of the node for CLEAR, GREEN and AMBER, and to no
/// sector for RED (shared only where the configuration names it). AMBER+STRICT is for the
/// organisation only (TLP 2.0) and never leaves the node.
#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Sharing {
    /// Sectors for TLP:CLEAR.
    #[serde(default)]
    pub clear: Option<Vec<String>>,
    /// Sectors for TLP:GREEN.
    #[serde(default)]
    pub green: Option<Vec<String>>,
    /// Sectors for TLP:AMBER.
    #[serde(default)]
    pub amber: Option<Vec<String>>,
    /// Sectors for TLP:RED.
    #[serde(default)]
    pub red: Option<Vec<String>>,
    /// The marking given to objects that carry no TLP marking (default AMBER: when in doubt,
    /// protect).
    #[serde(default)]
    pub default_tlp: Option<String>,
}

/// `[listen]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Listen {
    /// The HTTP address of the TAXII 2.1 server and the REST API (default 127.0.0.1:8443;
    /// port 0 picks a free port, printed at start).
    #[serde(default = "default_http")]
    pub http: SocketAddr,
    /// The base URL clients reach the server by, when it differs from `http://<http>`
    /// (behind a reverse proxy doing TLS, for example).
    #[serde(default)]
    pub public_url: Option<String>,
}

fn default_http() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 8443))
}

impl Default for Listen {
    fn default() -> Self {
        Listen {
            http: default_http(),
            public_url: None,
        }
    }
}

/// `[limits]`: every bound the node applies. The defaults are bounded; none may be zero.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Largest request body (and bundle file) accepted, in bytes.
    pub max_body_bytes: usize,
    /// Most objects in one bundle.
    pub max_objects: usize,
    /// Deepest JSON nesting accepted.
    pub max_depth: usize,
    /// Longest string value, in bytes.
    pub max_string_bytes: usize,
    /// Most properties in one object.
    pub max_properties: usize,
    /// Most objects a TAXII page returns (a client's `limit` is capped to it).
    pub page_size: usize,
    /// Most versions kept per object in a DDS history (KEEP_ALL within ResourceLimits:
    /// max_samples_per_instance).
    pub max_versions: usize,
    /// Most objects (DDS instances) per topic and sector (ResourceLimits: max_instances).
    pub max_instances: usize,
    /// Most samples per topic and sector in a DDS history (ResourceLimits: max_samples).
    pub max_samples: usize,
    /// Most samples each writer keeps in memory (its history, ResourceLimits max_samples). What
    /// the community's readers and durability services acknowledged is dropped from it once it
    /// is full, oldest first: the durability services keep everything on disk and serve
    /// late joiners, so a node's memory does not grow with what it shared.
    pub writer_history: usize,
    /// Bytes SQLite may use for page caches in the whole process (the node's database and its
    /// durability service's store together); beyond it cached pages are recycled.
    pub sqlite_heap_bytes: u64,
    /// Most objects waiting in the review queue; beyond it new submissions needing review are
    /// refused (never dropped).
    pub max_review_queue: usize,
    /// HTTP requests served at once; more wait.
    pub max_concurrent_requests: usize,
    /// Seconds a request may take before it is answered with an error.
    pub request_timeout_secs: u64,
    /// Live event streams (`GET /api/v1/events`) open at once; more are refused (503).
    pub max_event_streams: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: 64 << 20,
            max_objects: 100_000,
            max_depth: 16,
            max_string_bytes: 1 << 20,
            max_properties: 1024,
            page_size: 1000,
            max_versions: 1000,
            max_instances: 1_000_000,
            max_samples: 4_000_000,
            writer_history: 1024,
            sqlite_heap_bytes: 2 << 20,
            max_review_queue: 10_000,
            max_concurrent_requests: 64,
            request_timeout_secs: 30,
            max_event_streams: 64,
        }
    }
}

impl Limits {
    /// The STIX parser's limits.
    pub fn stix(&self) -> halyard_stix::validate::Limits {
        halyard_stix::validate::Limits {
            max_bytes: self.max_body_bytes,
            max_objects: self.max_objects,
            max_depth: self.max_depth,
            max_string_bytes: self.max_string_bytes,
            max_properties: self.max_properties,
        }
    }
}

/// `[review]`: an object waits for review when any condition holds.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReviewPolicy {
    /// Markings at or above which review is needed (e.g. `"amber"`: AMBER and RED); absent:
    /// no marking needs review by itself.
    pub min_tlp: Option<String>,
    /// STIX types that always need review (e.g. `["sighting", "observed-data"]`).
    pub types: Vec<String>,
    /// Any change by a sanitisation rule needs review (default true).
    pub on_sanitized: bool,
    /// Everything needs review.
    pub all: bool,
}

impl Default for ReviewPolicy {
    fn default() -> Self {
        ReviewPolicy {
            min_tlp: Some("amber".into()),
            types: vec!["sighting".into(), "observed-data".into()],
            on_sanitized: true,
            all: false,
        }
    }
}

/// `[watch]`: a directory the node ingests files from (`*.json`: STIX bundles or MISP
/// events). Each file, once read, moves to `done/` or, refused, to `refused/` with a
/// `.reason` file beside it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Watch {
    /// The directory.
    pub dir: PathBuf,
    /// How often it is scanned, in milliseconds (default 500).
    #[serde(default = "default_watch_ms")]
    pub interval_ms: u64,
    /// The sector the files' objects are shared with (default: by the sharing policy).
    #[serde(default)]
    pub sector: Option<String>,
}

fn default_watch_ms() -> u64 {
    500
}

/// `[[poll]]`: a remote TAXII 2.1 collection polled with `added_after`, its bookmark kept in
/// the store across restarts.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Poll {
    /// A name for logs, the audit log and the bookmark.
    pub name: String,
    /// The collection's URL (`.../collections/<id>/`).
    pub collection_url: String,
    /// HTTP basic credentials, if the server needs them.
    #[serde(default)]
    pub username: Option<String>,
    /// The password (or use `password_env`).
    #[serde(default)]
    pub password: Option<String>,
    /// An environment variable holding the password.
    #[serde(default)]
    pub password_env: Option<String>,
    /// Seconds between polls (default 30).
    #[serde(default = "default_poll_secs")]
    pub interval_secs: u64,
    /// The sector what it finds is shared with (default: by the sharing policy).
    #[serde(default)]
    pub sector: Option<String>,
}

fn default_poll_secs() -> u64 {
    30
}

impl Config {
    /// Reads and checks `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let err = |reason: String| ConfigError {
            path: path.to_path_buf(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(format!("cannot read: {e}")))?;
        let base = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        Config::parse(&text, &base).map_err(err)
    }

    /// Parses and checks configuration text; relative paths are resolved against `base`.
    pub fn parse(text: &str, base: &Path) -> Result<Config, String> {
        let mut c: Config = toml::from_str(text).map_err(|e| e.to_string())?;
        c.base_dir = base.to_path_buf();
        c.check()?;
        c.node.store = c.resolve(&c.node.store);
        c.node.security = c.node.security.as_ref().map(|p| c.resolve(p));
        if let Some(w) = &mut c.watch {
            w.dir = if w.dir.is_absolute() {
                w.dir.clone()
            } else {
                base.join(&w.dir)
            };
        }
        Ok(c)
    }

    fn resolve(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base_dir.join(p)
        }
    }

    fn check(&self) -> Result<(), String> {
        let org = &self.node.organisation;
        if org.is_empty()
            || org.len() > 64
            || !org
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        {
            return Err(format!(
                "node.organisation {org:?}: 1 to 64 characters of letters, digits, '-', '_', '.'"
            ));
        }
        if self.node.domain > 232 {
            return Err(format!("node.domain {}: at most 232", self.node.domain));
        }
        if self.node.security.is_none() && !self.node.insecure {
            return Err(
                "node.security is not set: name the organisation's DDS Security \
                        identity (made by `halyard-cti community init`), or set \
                        node.insecure = true to share without protection"
                    .into(),
            );
        }
        if self.sectors.is_empty() {
            return Err("sectors: the node belongs to no sector; name at least one".into());
        }
        let mut seen = std::collections::BTreeSet::new();
        for s in &self.sectors {
            check_sector_name(s)?;
            if !seen.insert(s) {
                return Err(format!("sectors: {s:?} is named twice"));
            }
        }
        for (level, list) in self.sharing.lists() {
            for s in list.iter().flatten() {
                if !self.sectors.contains(s) {
                    return Err(format!(
                        "sharing.{level}: sector {s:?} is not one of the node's sectors {:?}",
                        self.sectors
                    ));
                }
            }
        }
        if let Some(t) = &self.sharing.default_tlp {
            Tlp::parse(t).ok_or(format!(
                "sharing.default_tlp {t:?}: one of clear, green, amber, amber+strict, red"
            ))?;
        }
        if let Some(t) = &self.review.min_tlp {
            Tlp::parse(t).ok_or(format!(
                "review.min_tlp {t:?}: one of clear, green, amber, amber+strict, red"
            ))?;
        }
        let l = &self.limits;
        for (name, v) in [
            ("max_body_bytes", l.max_body_bytes),
            ("max_objects", l.max_objects),
            ("max_depth", l.max_depth),
            ("max_string_bytes", l.max_string_bytes),
            ("max_properties", l.max_properties),
            ("page_size", l.page_size),
            ("max_versions", l.max_versions),
            ("max_instances", l.max_instances),
            ("max_samples", l.max_samples),
            ("writer_history", l.writer_history),
            ("sqlite_heap_bytes", l.sqlite_heap_bytes as usize),
            ("max_review_queue", l.max_review_queue),
            ("max_concurrent_requests", l.max_concurrent_requests),
            ("request_timeout_secs", l.request_timeout_secs as usize),
            ("max_event_streams", l.max_event_streams),
        ] {
            if v == 0 {
                return Err(format!(
                    "limits.{name} is 0: every limit must be at least 1"
                ));
            }
        }
        if l.max_depth > 128 {
            return Err("limits.max_depth: at most 128".into());
        }
        let mut names = std::collections::BTreeSet::new();
        for p in &self.polls {
            if !names.insert(&p.name) {
                return Err(format!("poll {:?} is named twice", p.name));
            }
            if !(p.collection_url.starts_with("http://")
                || p.collection_url.starts_with("https://"))
            {
                return Err(format!(
                    "poll {:?}: collection_url {:?} is not an http(s) URL",
                    p.name, p.collection_url
                ));
            }
            if p.interval_secs == 0 {
                return Err(format!(
                    "poll {:?}: interval_secs must be at least 1",
                    p.name
                ));
            }
            if let Some(s) = &p.sector {
                if !self.sectors.contains(s) {
                    return Err(format!("poll {:?}: sector {s:?} is not the node's", p.name));
                }
            }
        }
        if let Some(w) = &self.watch {
            if w.interval_ms == 0 {
                return Err("watch.interval_ms must be at least 1".into());
            }
            if let Some(s) = &w.sector {
                if !self.sectors.contains(s) {
                    return Err(format!(
                        "watch.sector {s:?} is not one of the node's sectors"
                    ));
                }
            }
        }
        halyard_stix::sanitize::Sanitizer::new(&self.sanitize)
            .map_err(|e| format!("sanitize: {e}"))?;
        Ok(())
    }

    /// The sectors objects marked `tlp` are shared with (none for AMBER+STRICT).
    pub fn sectors_for(&self, tlp: Tlp) -> Vec<String> {
        let listed = match tlp {
            Tlp::Clear => &self.sharing.clear,
            Tlp::Green => &self.sharing.green,
            Tlp::Amber => &self.sharing.amber,
            Tlp::Red => &self.sharing.red,
            Tlp::AmberStrict => return Vec::new(),
        };
        match (listed, tlp) {
            (Some(l), _) => l.clone(),
            (None, Tlp::Red) => Vec::new(),
            (None, _) => self.sectors.clone(),
        }
    }

    /// The marking of objects that carry none.
    pub fn default_tlp(&self) -> Tlp {
        self.sharing
            .default_tlp
            .as_deref()
            .and_then(Tlp::parse)
            .unwrap_or(Tlp::Amber)
    }

    /// The review policy's marking threshold.
    pub fn review_min_tlp(&self) -> Option<Tlp> {
        self.review.min_tlp.as_deref().and_then(Tlp::parse)
    }

    /// The SQLite file of objects, review queue, audit log and users.
    pub fn db_path(&self) -> PathBuf {
        self.node.store.join("cti.sqlite")
    }

    /// [`Config::db_path`], its directory created if absent.
    pub fn db_path_creating(&self) -> Result<PathBuf, ConfigError> {
        std::fs::create_dir_all(&self.node.store).map_err(|e| ConfigError {
            path: self.node.store.clone(),
            reason: format!("cannot create the store directory: {e}"),
        })?;
        Ok(self.db_path())
    }

    /// The durability service's store file.
    pub fn durability_path(&self) -> PathBuf {
        self.node.store.join("durability.sqlite")
    }

    /// The organisation's STIX identity id.
    pub fn identity_id(&self) -> String {
        self.node
            .identity
            .clone()
            .unwrap_or_else(|| crate::ids::name_based_id("identity", &self.node.organisation))
    }
}

impl Sharing {
    fn lists(&self) -> [(&'static str, &Option<Vec<String>>); 4] {
        [
            ("clear", &self.clear),
            ("green", &self.green),
            ("amber", &self.amber),
            ("red", &self.red),
        ]
    }
}

/// Sector names become DDS partition names and parts of URLs: letters, digits, `-`, `_`, `.`;
/// `local` names the node's own collections and is not a sector.
pub fn check_sector_name(s: &str) -> Result<(), String> {
    if s == "local" {
        return Err(
            "sector \"local\": the name of the node's own collections; choose another".into(),
        );
    }
    if s.is_empty()
        || s.len() > 64
        || !s
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
    {
        return Err(format!(
            "sector {s:?}: 1 to 64 characters of letters, digits, '-', '_', '.'"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: &str = r#"
[node]
organisation = "acme"
store = "data/acme"
insecure = true
sectors = ["finance"]
"#;

    fn parse(extra: &str) -> Result<Config, String> {
        // `sectors` is a top-level key: put it before any table.
        let text = MIN.replace("sectors = [\"finance\"]\n", "");
        let text = format!("sectors = [\"finance\", \"energy\"]\n{text}{extra}");
        Config::parse(&text, Path::new("/etc/cti"))
    }

    #[test]
    fn a_minimal_file_has_bounded_defaults_and_paths_resolved_against_the_file() {
        let c = parse("").unwrap();
        assert_eq!(c.node.store, PathBuf::from("/etc/cti/data/acme"));
        assert_eq!(c.listen.http.port(), 8443);
        assert_eq!(c.sectors_for(Tlp::Green), vec!["finance", "energy"]);
        assert!(c.sectors_for(Tlp::Red).is_empty());
        assert!(c.sectors_for(Tlp::AmberStrict).is_empty());
        assert_eq!(c.default_tlp(), Tlp::Amber);
        assert!(c.limits.max_objects > 0);
    }

    #[test]
    fn the_guides_example_configuration_is_valid() {
        let guide = include_str!("../../../docs/guide/cti.md");
        let start = guide
            .find("## The configuration file")
            .and_then(|i| guide[i..].find("```toml\n").map(|j| i + j + 8))
            .expect("the guide has a TOML example");
        let end = start + guide[start..].find("```").expect("closed");
        let c = Config::parse(&guide[start..end], Path::new("/etc/cti"))
            .unwrap_or_else(|e| panic!("the guide's example: {e}"));
        assert_eq!(c.polls.len(), 1);
        assert!(c.watch.is_some());
    }

    #[test]
    fn mistakes_are_refused_with_the_key_and_the_reason() {
        let e = parse("[sharing]\nred = [\"health\"]\n").unwrap_err();
        assert!(e.contains("sharing.red") && e.contains("health"), "{e}");
        let e = parse("[limits]\nmax_objects = 0\n").unwrap_err();
        assert!(e.contains("limits.max_objects"), "{e}");
        let e = parse("[node2]\nx = 1\n").unwrap_err();
        assert!(e.contains("node2"), "{e}");
        let e = Config::parse(
            "sectors = [\"a\"]\n[node]\norganisation = \"x\"\nstore = \"s\"\n",
            Path::new("."),
        )
        .unwrap_err();
        assert!(e.contains("node.security"), "{e}");
        let e = parse("[review]\nmin_tlp = \"purple\"\n").unwrap_err();
        assert!(e.contains("review.min_tlp"), "{e}");
    }
}
