//! What `halyard sub`, `halyard pub` and `halyard typeof` share: their common options, finding
//! a topic's types on the network, and turning one into a [`DynamicType`] the commands can
//! decode, encode and print.
//!
//! Type resolution: join the domain, wait (at most `--timeout`) for a writer or reader of the
//! topic, then a short settle time for the others; group the endpoints by (type name,
//! complete TypeIdentifier). The chosen type's TypeObjects come from the TypeLookup service
//! of the peers ([`DomainParticipant::lookup_type_information`], hashes checked there and
//! again by the [`TypeRegistry`] insertion), and the registry builds the complete type, whose
//! member names the commands print. A peer that announced no TypeInformation (Cyclone DDS
//! 0.10, Fast DDS 2.9) cannot be decoded unless `--idl FILE` gives the type: the file is
//! compiled with halyard-idl + halyard-idlc into the same TypeObjects.
//!
//! The untyped endpoints need keys: [`DynamicKeySupport`] computes them (key scanner, else the
//! dynamic codec), and the type's description goes with the topic so that our own endpoints announce
//! TypeInformation too (so `cyclonedds typeof/subscribe` can read what `halyard pub` writes).

use crate::discovery::{self, option_value, BadArgs};
use halyard::cdr::Extensibility;
use halyard::xtypes::dynamic::{DynamicError, TypeNode};
use halyard::xtypes::{DynamicType, TypeIdentifier, TypeInformation, TypeRegistry};
use halyard::{DomainParticipant, EndpointTypeInformation};
use halyard::{DynamicKeySupport, OwnedTypeDescription, UntypedType};
use halyard_wire::discovery::EndpointData;
use halyard_wire::qos::{DurabilityKind, EndpointQos, History, ReliabilityKind};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long discovery continues after the first endpoint of the topic appears, to see the
/// others (and their types).
const SETTLE: Duration = Duration::from_millis(600);
/// How long `sub` waits for a writer once only readers of the topic were seen.
const WRITER_GRACE: Duration = Duration::from_secs(2);
/// The longest `--timeout` accepted.
const MAX_TIMEOUT: Duration = Duration::from_secs(3600);

/// The options every one of the three commands takes.
#[derive(Clone, Debug)]
pub struct Common {
    /// The topic name.
    pub topic: Option<String>,
    /// DDS domain id.
    pub domain: u32,
    /// How long to wait for the topic's endpoints and types.
    pub timeout: Duration,
    /// An IDL file giving the type (for peers without type information).
    pub idl: Option<PathBuf>,
    /// `#include` directories for `--idl`.
    pub includes: Vec<PathBuf>,
    /// The type to use (by name) when the topic has several, or the IDL file several.
    pub type_name: Option<String>,
    /// JSON output.
    pub json: bool,
    /// PARTITION names.
    pub partitions: Vec<String>,
    /// RELIABILITY asked, if any.
    pub reliability: Option<ReliabilityKind>,
    /// DURABILITY asked, if any.
    pub durability: Option<DurabilityKind>,
    /// HISTORY asked, if any.
    pub history: Option<History>,
}

impl Common {
    /// Defaults: domain 0, a 10 s timeout.
    pub fn new() -> Self {
        Common {
            topic: None,
            domain: 0,
            timeout: Duration::from_secs(10),
            idl: None,
            includes: Vec::new(),
            type_name: None,
            json: false,
            partitions: Vec::new(),
            reliability: None,
            durability: None,
            history: None,
        }
    }

    /// Consumes `arg` (and its value from `it`) when it is a common option; `Ok(false)` when
    /// it is not one. `qos` allows the QoS options (not `typeof`'s).
    pub fn take(
        &mut self,
        arg: &str,
        it: &mut std::slice::Iter<'_, String>,
        qos: bool,
    ) -> Result<bool, BadArgs> {
        let mut value = |name: &str| option_value(it, name);
        match arg {
            o if discovery::is_domain_option(o) => {
                self.domain = discovery::domain_id(&value(arg)?)?
            }
            "--timeout" => {
                let v = value(arg)?;
                self.timeout = seconds(&v, MAX_TIMEOUT)
                    .ok_or_else(|| BadArgs(format!("bad --timeout {v:?} (seconds, > 0)")))?;
            }
            "--idl" => self.idl = Some(PathBuf::from(value(arg)?)),
            "-I" => self.includes.push(PathBuf::from(value(arg)?)),
            "--type" => self.type_name = Some(value(arg)?),
            "--json" => self.json = true,
            "-p" | "--partition" if qos => self.partitions.push(value(arg)?),
            "--reliable" if qos => self.reliability = Some(ReliabilityKind::Reliable),
            "--best-effort" if qos => self.reliability = Some(ReliabilityKind::BestEffort),
            "--durability" if qos => {
                let v = value(arg)?;
                self.durability = Some(match v.as_str() {
                    "volatile" => DurabilityKind::Volatile,
                    "transient-local" | "transient_local" => DurabilityKind::TransientLocal,
                    "transient" => DurabilityKind::Transient,
                    "persistent" => DurabilityKind::Persistent,
                    _ => {
                        return Err(BadArgs(format!(
                        "bad --durability {v:?} (volatile, transient-local, transient, persistent)"
                    )))
                    }
                });
            }
            "--history" if qos => {
                let v = value(arg)?;
                self.history = Some(match v.as_str() {
                    "keep-all" | "keep_all" | "all" => History::KeepAll,
                    n => History::KeepLast(
                        n.parse::<i32>()
                            .ok()
                            .filter(|d| (1..=1_000_000).contains(d))
                            .ok_or_else(|| {
                                BadArgs(format!("bad --history {v:?} (keep-all or a depth 1..)"))
                            })?,
                    ),
                });
            }
            s if s.starts_with('-') && s.len() > 1 => return Ok(false),
            s if self.topic.is_none() => {
                // Refused before joining, as `create_topic` would refuse it.
                halyard::check_topic_name(s).map_err(|e| BadArgs(e.to_string()))?;
                self.topic = Some(s.to_string());
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The topic name, required.
    pub fn topic(&self) -> Result<&str, BadArgs> {
        self.topic
            .as_deref()
            .ok_or_else(|| BadArgs("no TOPIC given".into()))
    }

    /// `qos` with the QoS options applied.
    pub fn apply(&self, mut qos: EndpointQos) -> EndpointQos {
        if let Some(r) = self.reliability {
            qos.reliability.kind = r;
        }
        if let Some(d) = self.durability {
            qos.durability = d;
        }
        if let Some(h) = self.history {
            qos.history = h;
        }
        if !self.partitions.is_empty() {
            qos.partition = self.partitions.clone();
        }
        qos
    }
}

/// Seconds (`2.5`, `3s`, `500ms`) in (0, max].
pub fn seconds(s: &str, max: Duration) -> Option<Duration> {
    let (n, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else {
        (s, 1.0)
    };
    n.parse::<f64>()
        .ok()
        .map(|x| x * scale)
        .filter(|&x| x > 0.0 && x <= max.as_secs_f64())
        .map(Duration::from_secs_f64)
}

/// Why a command failed (after its arguments parsed): exit status 1, except `BadArgs` (2).
#[derive(Debug)]
pub enum Failure {
    /// A command-line mistake found late (e.g. a `--type` no endpoint uses): exit 2.
    BadArgs(String),
    /// The domain cannot be joined, or an entity not created.
    Dds(String, Box<halyard::Error>),
    /// No endpoint of the topic was discovered within the timeout.
    NotFound {
        /// The topic.
        topic: String,
        /// The timeout.
        timeout: Duration,
    },
    /// The endpoints of the topic announced no TypeInformation.
    NoTypeInformation {
        /// The topic.
        topic: String,
        /// Its type name as announced.
        type_name: String,
    },
    /// TypeLookup did not bring the TypeObjects in time.
    Lookup {
        /// The type.
        type_name: String,
        /// What went wrong.
        error: Box<halyard::Error>,
        /// TypeLookup messages received that did not decode.
        malformed: u64,
        /// TypeObjects received whose hash was not their identifier.
        bad_objects: u64,
    },
    /// The TypeObjects do not make a usable type.
    BadType {
        /// The type.
        type_name: String,
        /// What is wrong with them.
        error: DynamicError,
    },
    /// The IDL file does not compile or does not hold the type.
    Idl(String),
}

impl Failure {
    /// The exit status.
    pub fn code(&self) -> i32 {
        match self {
            Failure::BadArgs(_) => 2,
            _ => 1,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::BadArgs(s) => write!(f, "{s}"),
            Failure::Dds(what, e) => write!(f, "{what}: {e}"),
            Failure::NotFound { topic, timeout } => write!(
                f,
                "no writer or reader of topic {topic} found in {:.1} s",
                timeout.as_secs_f64()
            ),
            Failure::NoTypeInformation { topic, type_name } => write!(
                f,
                "{topic} (type {type_name}) was announced without type information; Halyard \
                 cannot decode it (give the type with --idl FILE [--type NAME])"
            ),
            Failure::Lookup {
                type_name,
                error,
                malformed,
                bad_objects,
            } => {
                write!(
                    f,
                    "the TypeObjects of {type_name} did not arrive through TypeLookup ({error}): \
                     its peers announce type information but no usable answer to the type \
                     requests came in time"
                )?;
                if *malformed > 0 || *bad_objects > 0 {
                    write!(
                        f,
                        " ({malformed} TypeLookup messages did not decode, {bad_objects} \
                         TypeObjects did not match their hash)"
                    )?;
                }
                write!(f, "; give the type with --idl FILE [--type NAME]")
            }
            Failure::BadType { type_name, error } => {
                write!(f, "type {type_name} cannot be used: {error}")
            }
            Failure::Idl(s) => write!(f, "{s}"),
        }
    }
}

/// The endpoints of a topic that use one type.
#[derive(Clone, Debug)]
pub struct Seen {
    /// The type name announced.
    pub type_name: String,
    /// The TypeInformation announced (`None`: the endpoints sent none).
    pub info: Option<TypeInformation>,
    /// Its writers.
    pub writers: Vec<EndpointData>,
    /// Its readers.
    pub readers: Vec<EndpointData>,
}

/// The endpoints of `topic` other participants announce, by type; waits at most `timeout`
/// for the first, then [`SETTLE`] for the others. With `want_writer`, a topic that has
/// readers only gets [`WRITER_GRACE`] more for a writer to show up. Empty when none did.
pub fn discover(
    dp: &DomainParticipant,
    topic: &str,
    timeout: Duration,
    want_writer: bool,
) -> Vec<Seen> {
    let start = Instant::now();
    let mut first: Option<Instant> = None;
    let mut first_any: Option<Instant> = None;
    loop {
        let seen = snapshot(dp, topic);
        let now = Instant::now();
        let have = if want_writer {
            seen.iter().any(|s| !s.writers.is_empty())
        } else {
            !seen.is_empty()
        };
        if have && first.is_none() {
            first = Some(now);
        }
        if !seen.is_empty() && first_any.is_none() {
            first_any = Some(now);
        }
        if first.is_some_and(|t| now >= t + SETTLE)
            || first_any.is_some_and(|t| now >= t + WRITER_GRACE)
            || now >= start + timeout
        {
            return seen;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn snapshot(dp: &DomainParticipant, topic: &str) -> Vec<Seen> {
    let own = dp.guid_prefix();
    let mut out: Vec<Seen> = Vec::new();
    let mut add = |e: EndpointData, writer: bool| {
        if e.topic_name != topic || e.participant_guid.map_or(e.guid.prefix, |g| g.prefix) == own {
            return;
        }
        let info = e.decoded_type_information();
        let same = |s: &Seen| {
            s.type_name == e.type_name
                && s.info
                    .as_ref()
                    .map(|i| &i.complete.typeid_with_size.type_id)
                    == info.as_ref().map(|i| &i.complete.typeid_with_size.type_id)
        };
        let i = match out.iter().position(same) {
            Some(i) => i,
            None => {
                out.push(Seen {
                    type_name: e.type_name.clone(),
                    info,
                    writers: Vec::new(),
                    readers: Vec::new(),
                });
                out.len() - 1
            }
        };
        if let Some(s) = out.get_mut(i) {
            if writer {
                s.writers.push(e);
            } else {
                s.readers.push(e);
            }
        }
    };
    for e in dp.discovered_publications() {
        add(e, true);
    }
    for e in dp.discovered_subscriptions() {
        add(e, false);
    }
    out.sort_by(|a, b| a.type_name.cmp(&b.type_name));
    out
}

/// A topic type ready for use.
#[derive(Clone)]
pub struct Resolved {
    /// The registered type name (what the endpoints match on).
    pub type_name: String,
    /// The complete type.
    pub ty: DynamicType,
    /// Its TypeInformation and TypeObjects, announced by our endpoints.
    pub description: Option<OwnedTypeDescription>,
}

impl Resolved {
    /// The untyped type of the endpoints.
    pub fn untyped(&self) -> UntypedType {
        let ext = extensibility(&self.ty);
        let mut t = if has_key(&self.ty) {
            UntypedType::keyed(
                &self.type_name,
                ext,
                Arc::new(DynamicKeySupport::new(self.ty.clone())),
            )
        } else {
            UntypedType::keyless(&self.type_name, ext)
        };
        t.type_description = self.description.clone();
        t
    }
}

/// True when the (resolved) top-level type is a struct with a key.
pub fn has_key(t: &DynamicType) -> bool {
    t.resolved().as_struct().is_some_and(|s| s.has_key())
}

fn extensibility(t: &DynamicType) -> Extensibility {
    match t.resolved().node() {
        TypeNode::Struct(s) => s.extensibility,
        TypeNode::Union(u) => u.extensibility,
        _ => Extensibility::Final,
    }
}

/// Picks the type to use among `seen` (`prefer_writers`: the one with most writers, else the
/// one with most readers); `chosen` (`--type`) overrides. Says on stderr when there was a
/// choice. `Ok(None)` when `seen` is empty.
pub fn pick<'a>(
    topic: &str,
    seen: &'a [Seen],
    chosen: Option<&str>,
    prefer_writers: bool,
) -> Result<Option<&'a Seen>, Failure> {
    if let Some(name) = chosen {
        if seen.is_empty() {
            return Ok(None);
        }
        let found = seen
            .iter()
            .filter(|s| s.type_name == name)
            .max_by_key(|s| (s.info.is_some(), s.writers.len(), s.readers.len()));
        return match found {
            Some(s) => Ok(Some(s)),
            None => Err(Failure::BadArgs(format!(
                "no endpoint of {topic} uses type {name} (seen: {})",
                names(seen)
            ))),
        };
    }
    let best = seen.iter().max_by_key(|s| {
        let (w, r) = (s.writers.len(), s.readers.len());
        let primary = if prefer_writers { (w, r) } else { (r, w) };
        (primary, s.info.is_some())
    });
    if seen.len() > 1 {
        if let Some(b) = best {
            eprintln!(
                "{topic} has {} types: {}; using {} (--type NAME chooses)",
                seen.len(),
                names(seen),
                b.type_name
            );
        }
    }
    Ok(best)
}

fn names(seen: &[Seen]) -> String {
    seen.iter()
        .map(|s| {
            format!(
                "{} ({} writers, {} readers{})",
                s.type_name,
                s.writers.len(),
                s.readers.len(),
                if s.info.is_some() {
                    ""
                } else {
                    ", no type information"
                }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The type of `seen`, fetched through TypeLookup.
pub fn from_network(
    dp: &DomainParticipant,
    topic: &str,
    seen: &Seen,
    timeout: Duration,
) -> Result<Resolved, Failure> {
    let type_name = seen.type_name.clone();
    let Some(info) = &seen.info else {
        return Err(Failure::NoTypeInformation {
            topic: topic.to_string(),
            type_name,
        });
    };
    let objects = dp.lookup_type_information(info, timeout).map_err(|error| {
        let st = dp.stats();
        Failure::Lookup {
            type_name: type_name.clone(),
            error: Box::new(error),
            malformed: st.typelookup_malformed,
            bad_objects: st.typelookup_bad_objects,
        }
    })?;
    let bad = |error: DynamicError| Failure::BadType {
        type_name: type_name.clone(),
        error,
    };
    let mut reg = TypeRegistry::new();
    let mut bytes = Vec::with_capacity(objects.len());
    for (id, object) in objects {
        bytes.push(object.to_xcdr2_le().map_err(|e| bad(e.into()))?);
        reg.insert(&id, object).map_err(bad)?;
    }
    let ty = reg
        .build(&info.complete.typeid_with_size.type_id)
        .or_else(|_| reg.build(&info.minimal.typeid_with_size.type_id))
        .map_err(bad)?;
    let type_information = info.to_xcdr2_le().map_err(|e| bad(e.into()))?;
    Ok(Resolved {
        type_name,
        ty,
        description: Some(OwnedTypeDescription {
            type_information,
            type_objects: bytes,
        }),
    })
}

/// The type named `wanted` (else the only topic type) of the IDL file `path`.
pub fn from_idl(
    path: &std::path::Path,
    includes: &[PathBuf],
    wanted: Option<&str>,
) -> Result<Resolved, Failure> {
    let mut opts = halyard_idl::ParseOptions::default();
    opts.include_paths = includes.to_vec();
    let spec = halyard_idl::parse_file(path, &opts)
        .map_err(|e| Failure::Idl(format!("{}: {e}", path.display())))?;
    let set = halyard_idlc::type_objects(&spec)
        .map_err(|e| Failure::Idl(format!("{}: {e}", path.display())))?;
    let listed = || set.topics.keys().cloned().collect::<Vec<_>>().join(", ");
    let wanted = wanted.map(|w| w.trim_start_matches("::").to_string());
    let (name, desc) = match &wanted {
        Some(w) => set.topics.get_key_value(w).ok_or_else(|| {
            Failure::Idl(format!(
                "{} has no topic type {w} (it has: {})",
                path.display(),
                listed()
            ))
        })?,
        None if set.topics.len() == 1 => set
            .topics
            .iter()
            .next()
            .ok_or_else(|| Failure::Idl("no topic type".into()))?,
        None => {
            return Err(Failure::Idl(format!(
                "{} has {} topic types ({}); --type NAME chooses",
                path.display(),
                set.topics.len(),
                listed()
            )))
        }
    };
    let bad = |error: DynamicError| Failure::BadType {
        type_name: name.clone(),
        error,
    };
    let mut reg = TypeRegistry::new();
    for e in set.types.values() {
        reg.insert_object(e.minimal.clone()).map_err(bad)?;
        reg.insert_object(e.complete.clone()).map_err(bad)?;
    }
    let root: &TypeIdentifier = &desc.type_information.complete.typeid_with_size.type_id;
    let ty = reg.build(root).map_err(bad)?;
    Ok(Resolved {
        type_name: name.clone(),
        ty,
        description: Some(OwnedTypeDescription {
            type_information: desc.type_information_bytes.clone(),
            type_objects: desc.type_objects.clone(),
        }),
    })
}

/// Joins the domain, finds the topic's type (`--idl` or the network) and returns both, with
/// what was seen on the topic. `prefer_writers`: `sub` wants the writers' type, `pub` the
/// readers'. With `--idl`, discovery still runs (bounded) to learn the announced type name
/// and QoS, but finding nothing is not an error.
pub fn resolve(
    c: &Common,
    command: &str,
    prefer_writers: bool,
) -> Result<(DomainParticipant, Resolved, Vec<Seen>), Failure> {
    let topic = c.topic().map_err(|e| Failure::BadArgs(e.0))?.to_string();
    let dp = discovery::join(c.domain, command)
        .map_err(|e| Failure::Dds(format!("cannot join domain {}", c.domain), Box::new(e)))?;
    if let Some(path) = &c.idl {
        // A short look for the announced type name; the IDL file decides the type.
        let wait = c.timeout.min(Duration::from_secs(2));
        let seen = discover(&dp, &topic, wait, prefer_writers);
        // With --type, only an endpoint announcing that very name counts.
        let announced = pick(&topic, &seen, c.type_name.as_deref(), prefer_writers)
            .ok()
            .flatten()
            .map(|s| s.type_name.clone());
        let wanted = c.type_name.clone().or(announced.clone());
        // The one type announced on the topic may be registered under a name the file does
        // not use (`M_T` for `M::T`): then the file's only topic type is taken, under the
        // announced name, so that the endpoints match.
        let unambiguous = seen.len() == 1;
        let mut r = from_idl(path, &c.includes, wanted.as_deref()).or_else(|e| {
            match (&c.type_name, &announced) {
                (None, Some(_)) if unambiguous => from_idl(path, &c.includes, None),
                _ => Err(e),
            }
        })?;
        if let Some(a) = announced.filter(|a| *a == r.type_name || unambiguous) {
            r.type_name = a;
        }
        return Ok((dp, r, seen));
    }
    let seen = discover(&dp, &topic, c.timeout, prefer_writers);
    let Some(s) = pick(&topic, &seen, c.type_name.as_deref(), prefer_writers)? else {
        return Err(Failure::NotFound {
            topic,
            timeout: c.timeout,
        });
    };
    let r = from_network(&dp, &topic, s, c.timeout)?;
    Ok((dp, r, seen))
}

#[cfg(test)]
mod tests {
    use super::*;
    use halyard::xtypes::dynamic;
    use halyard::KeySupport;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn parse(v: &[&str], qos: bool) -> Result<Common, BadArgs> {
        let args = strings(v);
        let mut c = Common::new();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            if !c.take(a, &mut it, qos)? {
                return Err(BadArgs(format!("not common: {a}")));
            }
        }
        Ok(c)
    }

    #[test]
    fn common_options_parse_and_mistakes_are_refused() {
        let c = parse(
            &[
                "T",
                "--id",
                "7",
                "-p",
                "a",
                "-p",
                "b",
                "--best-effort",
                "--durability",
                "transient-local",
                "--history",
                "5",
                "--timeout",
                "500ms",
                "--json",
            ],
            true,
        )
        .unwrap();
        assert_eq!(c.topic.as_deref(), Some("T"));
        assert_eq!((c.domain, c.json), (7, true));
        assert_eq!(c.partitions, ["a", "b"]);
        assert_eq!(c.reliability, Some(ReliabilityKind::BestEffort));
        assert_eq!(c.durability, Some(DurabilityKind::TransientLocal));
        assert_eq!(c.history, Some(History::KeepLast(5)));
        assert_eq!(c.timeout, Duration::from_millis(500));
        let q = c.apply(EndpointQos::reader_default());
        assert_eq!(q.partition, ["a", "b"]);
        assert_eq!(q.reliability.kind, ReliabilityKind::BestEffort);
        for bad in [
            &["--id", "233"][..],
            &["--timeout", "0"],
            &["--durability", "x"],
            &["--history", "0"],
            &["--history"],
        ] {
            assert!(parse(bad, true).is_err(), "{bad:?}");
        }
        let e = parse(&["a b"], false).unwrap_err();
        assert!(e.0.contains("character ' '"), "{}", e.0);
        for opt in ["-d", "--domain", "-i", "--id", "--domain-id"] {
            assert_eq!(
                parse(&["T", opt, "191"], false).unwrap().domain,
                191,
                "{opt}"
            );
        }
        // typeof takes no QoS options.
        assert!(parse(&["T", "--reliable"], false).is_err());
    }

    fn idl() -> PathBuf {
        PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/subpub.idl"
        ))
    }

    #[test]
    fn idl_types_are_chosen_by_name() {
        let e = from_idl(&idl(), &[], None).err().expect("two topic types");
        assert!(
            e.to_string().contains("SubPub::Point, SubPub::Reading"),
            "{e}"
        );
        let e = from_idl(&idl(), &[], Some("SubPub::Nope"))
            .err()
            .expect("no such");
        assert!(e.to_string().contains("no topic type SubPub::Nope"), "{e}");
        let r = from_idl(&idl(), &[], Some("::SubPub::Reading")).expect("Reading");
        assert_eq!(r.type_name, "SubPub::Reading");
        assert!(has_key(&r.ty));
        assert!(r.untyped().has_key());
        assert!(r.description.is_some());
    }

    #[test]
    fn dynamic_keys_of_serialized_samples() {
        let r = from_idl(&idl(), &[], Some("SubPub::Reading")).expect("Reading");
        let j = serde_json::json!({"sensor": 2, "name": "n", "color": "RED",
            "where": {"x": 1, "y": 2.0}, "history": [1], "note": null});
        let v = dynamic::from_json(&r.ty, &j, Default::default()).unwrap();
        let k = DynamicKeySupport::new(r.ty.clone());
        for rep in [
            halyard::cdr::DataRepresentation::Xcdr1,
            halyard::cdr::DataRepresentation::Xcdr2,
        ] {
            let bytes = dynamic::encode(&r.ty, &v, rep, halyard::cdr::Endianness::Little).unwrap();
            // A 4-byte key: the key hash is the key, big-endian, zero-padded (XTypes 7.6.8).
            let mut want = [0u8; 16];
            want[3] = 2;
            assert_eq!(k.key_hash(&bytes, false).unwrap(), want);
            let key = k.serialized_key(&bytes).unwrap();
            assert_eq!(k.key_hash(&key, true).unwrap(), want);
            assert!(k.key_hash(&bytes[..3], false).is_err());
        }
    }
}
