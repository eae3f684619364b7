//! XML QoS profiles in the OMG DDS-XML 1.0 format, as Cyclone DDS, Fast DDS and Connext users
//! keep their QoS: QoS libraries of named profiles, `base_name` inheritance, `topic_filter`s.
//!
//! ```xml
//! <dds xmlns="http://www.omg.org/dds/">
//!   <qos_library name="Lib">
//!     <qos_profile name="Reliable" is_default_qos="true">
//!       <datawriter_qos>
//!         <reliability><kind>RELIABLE_RELIABILITY_QOS</kind></reliability>
//!         <history><kind>KEEP_LAST_HISTORY_QOS</kind><depth>10</depth></history>
//!       </datawriter_qos>
//!     </qos_profile>
//!     <qos_profile name="Shapes" base_name="Reliable">
//!       <datawriter_qos topic_filter="Square*">
//!         <durability><kind>TRANSIENT_LOCAL_DURABILITY_QOS</kind></durability>
//!       </datawriter_qos>
//!     </qos_profile>
//!   </qos_library>
//! </dds>
//! ```
//!
//! Design: a document is read once (with `roxmltree`) into profiles whose entity QoS elements
//! are lists of *setters*, one per leaf the XML names (`<kind>`, `<depth>`, `<sec>`...), so
//! a profile overrides exactly the fields it sets. The setters work on the wire's QoS types
//! (as the XML's values are the IDL's); a lookup's result becomes the API's QoS type of its
//! entity ([`DataWriterQos`], [`PublisherQos`] ...) through the one conversion of
//! [`crate::qos`]. Base names are resolved, and cycles
//! refused, when the files are loaded. A lookup starts from the DDS defaults of the entity
//! (writer defaults for a writer, as DDS-XML says, not the topic's QoS), applies the profiles
//! of the `base_name` chain from the root down, each through its first entity element whose
//! `topic_filter` matches the topic, then passes the result through the validation entity
//! creation applies ([`DataWriterQos::validate`]). Everything unknown or unsupported is an
//! [`Error::BadProfile`] with its file, line and column, never ignored.
//!
//! Reading XML is the cargo feature `xml` (roxmltree); without it every constructor of
//! [`QosProvider`] is refused with [`Error::Unsupported`] naming the feature.
// Without the feature `xml` nothing builds profiles: what only the parser uses is unused.
#![cfg_attr(not(feature = "xml"), allow(dead_code, unused_imports))]

#[cfg(feature = "xml")]
mod policies;

use crate::error::{Error, Result};
use crate::participant::ParticipantOptions;
use crate::qos::{
    validate, DataReaderQos, DataWriterQos, DomainParticipantQos, GroupQos, PublisherQos,
    SubscriberQos, TopicQos,
};
use halyard_wire::qos::EndpointQos;
#[cfg(feature = "xml")]
use policies::{tag, Cx, Entity};
#[cfg(feature = "xml")]
use roxmltree::Node;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// The environment variable [`QosProvider::from_env`] reads: XML files separated by `;`.
pub const QOS_PROFILES_ENV: &str = "HALYARD_QOS_PROFILES";

type Setter<T> = Arc<dyn Fn(&mut T) + Send + Sync>;

fn set<T, F: Fn(&mut T) + Send + Sync + 'static>(f: F) -> Setter<T> {
    Arc::new(f)
}

/// A place in a file (1-based line and column).
#[derive(Clone, Debug, Default)]
struct Pos {
    file: Arc<str>,
    line: u32,
    column: u32,
}

impl Pos {
    fn error(&self, message: impl Into<String>) -> Error {
        Error::BadProfile {
            file: self.file.to_string(),
            line: self.line,
            column: self.column,
            message: message.into(),
        }
    }
}

/// One `<datawriter_qos>` (etc.) of a profile.
#[derive(Clone)]
struct EntityQos<T> {
    topic_filter: Option<String>,
    settings: Vec<Setter<T>>,
}

impl<T> EntityQos<T> {
    fn applies_to(&self, topic: Option<&str>) -> bool {
        match (&self.topic_filter, topic) {
            (None, _) => true,
            (Some(f), Some(t)) => halyard_core::matching::glob_match(f.as_bytes(), t.as_bytes()),
            (Some(_), None) => false,
        }
    }
}

#[derive(Clone, Default)]
struct Profile {
    /// "Library::Profile".
    name: String,
    pos: Pos,
    /// base_name as written, the library to resolve a relative name in, and where it is.
    base: Option<(String, String, Pos)>,
    base_index: Option<usize>,
    default: bool,
    writers: Vec<EntityQos<EndpointQos>>,
    readers: Vec<EntityQos<EndpointQos>>,
    topics: Vec<EntityQos<EndpointQos>>,
    publishers: Vec<EntityQos<GroupQos>>,
    subscribers: Vec<EntityQos<GroupQos>>,
    participants: Vec<EntityQos<ParticipantOptions>>,
}

/// QoS profiles loaded from DDS-XML 1.0 documents (DDS-XML's QosProvider).
///
/// Profiles are named `"Library::Profile"`. Supported: `<dds>` (any namespace) holding
/// `<qos_library name>` holding `<qos_profile name base_name? is_default_qos?>`, whose
/// `<datawriter_qos>`, `<datareader_qos>`, `<topic_qos>` (each with an optional
/// `topic_filter`, `*` and `?` wildcards), `<publisher_qos>`, `<subscriber_qos>` and
/// `<domain_participant_qos>` take the DDS 1.4 policies of that entity, written as DDS-XML
/// maps the IDL (`<history><kind>KEEP_LAST_HISTORY_QOS</kind><depth>10</depth></history>`,
/// durations as `<sec>`/`<nanosec>` with `DURATION_INFINITE_SEC`/`DURATION_INFINITE_NSEC` or
/// `DURATION_INFINITY`, `LENGTH_UNLIMITED`, sequences as `<element>`s, octets in `<value>` as
/// base64 or as Connext's comma-separated bytes). A `base_name` without `::` names a profile
/// of the same library, and may name one in another loaded file. Per entity kind, a profile
/// may have several elements with different topic filters and at most one without, which must
/// come last; a lookup uses the first that matches. Refused with [`Error::BadProfile`]:
/// malformed XML, unknown elements, attributes and enumerators, bad numbers, unknown or
/// cyclic base names, duplicate profiles, and what Halyard has no setting for (`<property>`,
/// `<type_consistency>`, a participant's `autoenable_created_entities` false, QoS outside a
/// profile, the XML data representation). PRESENTATION and ENTITY_FACTORY are read into
/// [`PublisherQos`] and [`SubscriberQos`].
#[derive(Clone)]
pub struct QosProvider {
    profiles: Vec<Profile>,
    index: BTreeMap<String, usize>,
    default: Option<usize>,
    origins: Vec<String>,
}

impl std::fmt::Debug for QosProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QosProvider")
            .field("origins", &self.origins)
            .field("profiles", &self.profile_names().collect::<Vec<_>>())
            .field("default", &self.default_profile())
            .finish()
    }
}

impl QosProvider {
    /// Reads one XML document; `origin` names it in errors (a file name, or e.g. `"<inline>"`).
    pub fn from_str(xml: &str, origin: &str) -> Result<QosProvider> {
        let profiles = parse_document(xml, origin)?;
        QosProvider::build(profiles, vec![origin.to_string()])
    }

    /// Reads one XML file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<QosProvider> {
        QosProvider::from_files(&[path])
    }

    /// Reads several XML files as one set of profiles (a `base_name` may name a profile of
    /// another file; a profile defined twice is an error).
    pub fn from_files<P: AsRef<Path>>(paths: &[P]) -> Result<QosProvider> {
        let mut profiles = Vec::new();
        let mut origins = Vec::new();
        for p in paths {
            let origin = p.as_ref().display().to_string();
            let xml = std::fs::read_to_string(p.as_ref()).map_err(|e| Error::BadProfile {
                file: origin.clone(),
                line: 0,
                column: 0,
                message: format!("cannot read the QoS profile file: {e}"),
            })?;
            profiles.extend(parse_document(&xml, &origin)?);
            origins.push(origin);
        }
        QosProvider::build(profiles, origins)
    }

    /// Reads the files named in [`QOS_PROFILES_ENV`] (`HALYARD_QOS_PROFILES`, paths separated
    /// by `;`, as Connext's `NDDS_QOS_PROFILES`); `None` when it is unset or empty. A file
    /// that cannot be read is an error naming it.
    pub fn from_env() -> Result<Option<QosProvider>> {
        let Some(value) = std::env::var_os(QOS_PROFILES_ENV) else {
            return Ok(None);
        };
        let value = value.to_string_lossy();
        let paths: Vec<&str> = value
            .split(';')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect();
        if paths.is_empty() {
            return Ok(None);
        }
        QosProvider::from_files(&paths).map(Some)
    }

    /// The profile names, `"Library::Profile"`, in the order they were read.
    pub fn profile_names(&self) -> impl Iterator<Item = &str> {
        self.profiles.iter().map(|p| p.name.as_str())
    }

    /// The profile marked `is_default_qos="true"`, if any.
    pub fn default_profile(&self) -> Option<&str> {
        self.default.map(|i| self.profiles[i].name.as_str())
    }

    /// The QoS of a DataWriter of `topic` (`None`: only elements without a `topic_filter`
    /// apply): writer defaults, then the profile's chain of `<datawriter_qos>`. The
    /// `topic_data` of the profile's matching `<topic_qos>` is copied too (Halyard's topics
    /// carry no QoS; the endpoints announce TOPIC_DATA). Validated as a writer's QoS.
    pub fn datawriter_qos(&self, profile: &str, topic: Option<&str>) -> Result<DataWriterQos> {
        let mut q = self.resolve(profile, topic, EndpointQos::writer_default(), |p| {
            &p.writers
        })?;
        q.topic_data = self.topic_data(profile, topic)?;
        validate(&q, true)?;
        Ok(DataWriterQos::from(&q))
    }

    /// The QoS of a DataReader of `topic`: reader defaults, then the profile's chain of
    /// `<datareader_qos>`, plus the matching `<topic_qos>`'s `topic_data`. Validated.
    pub fn datareader_qos(&self, profile: &str, topic: Option<&str>) -> Result<DataReaderQos> {
        let mut q = self.resolve(profile, topic, EndpointQos::reader_default(), |p| {
            &p.readers
        })?;
        q.topic_data = self.topic_data(profile, topic)?;
        validate(&q, false)?;
        Ok(DataReaderQos::from(&q))
    }

    /// The topic-level policies of `<topic_qos>` for `topic` (TOPIC_DATA, DURABILITY,
    /// RELIABILITY, HISTORY ...), over the DDS TopicQos defaults.
    pub fn topic_qos(&self, profile: &str, topic: Option<&str>) -> Result<TopicQos> {
        let q = self.resolve(profile, topic, EndpointQos::reader_default(), |p| &p.topics)?;
        validate(&q, false)?;
        Ok(TopicQos::from(&q))
    }

    fn topic_data(&self, profile: &str, topic: Option<&str>) -> Result<Vec<u8>> {
        let q = self.resolve(profile, topic, EndpointQos::reader_default(), |p| &p.topics)?;
        Ok(q.topic_data)
    }

    /// The profile's `<publisher_qos>`: PRESENTATION, PARTITION, GROUP_DATA and
    /// ENTITY_FACTORY.
    pub fn publisher_qos(&self, profile: &str) -> Result<PublisherQos> {
        let g = self.resolve(profile, None, GroupQos::default(), |p| &p.publishers)?;
        Ok(PublisherQos::from(&g))
    }

    /// The profile's `<subscriber_qos>`: PRESENTATION, PARTITION, GROUP_DATA and
    /// ENTITY_FACTORY.
    pub fn subscriber_qos(&self, profile: &str) -> Result<SubscriberQos> {
        let g = self.resolve(profile, None, GroupQos::default(), |p| &p.subscribers)?;
        Ok(SubscriberQos::from(&g))
    }

    /// The profile's `<domain_participant_qos>`: USER_DATA.
    pub fn domain_participant_qos(&self, profile: &str) -> Result<DomainParticipantQos> {
        let options = self.participant_options(profile)?;
        Ok(DomainParticipantQos::default().user_data(options.user_data))
    }

    /// [`ParticipantOptions::default`] with the profile's `<domain_participant_qos>` (USER_DATA)
    /// applied.
    pub fn participant_options(&self, profile: &str) -> Result<ParticipantOptions> {
        self.resolve(profile, None, ParticipantOptions::default(), |p| {
            &p.participants
        })
    }

    fn resolve<T>(
        &self,
        profile: &str,
        topic: Option<&str>,
        mut qos: T,
        entities: impl Fn(&Profile) -> &Vec<EntityQos<T>>,
    ) -> Result<T> {
        let Some(&start) = self.index.get(profile) else {
            let known: Vec<&str> = self.profile_names().collect();
            let hint = if profile.contains("::") {
                ""
            } else {
                "; names are \"Library::Profile\""
            };
            return Err(Error::BadProfile {
                file: self.origins.join(";"),
                line: 0,
                column: 0,
                message: format!(
                    "no QoS profile \"{profile}\"{hint} (known: {})",
                    known.join(", ")
                ),
            });
        };
        let (mut chain, mut at) = (vec![start], start);
        while let Some(b) = self.profiles[at].base_index {
            chain.push(b); // acyclic: checked by `build`
            at = b;
        }
        for &i in chain.iter().rev() {
            if let Some(e) = entities(&self.profiles[i])
                .iter()
                .find(|e| e.applies_to(topic))
            {
                for s in &e.settings {
                    s(&mut qos);
                }
            }
        }
        Ok(qos)
    }

    /// Indexes the profiles, resolves base names and refuses duplicates and cycles.
    fn build(mut profiles: Vec<Profile>, origins: Vec<String>) -> Result<QosProvider> {
        let mut index: BTreeMap<String, usize> = BTreeMap::new();
        let mut default: Option<usize> = None;
        for (i, p) in profiles.iter().enumerate() {
            let here = &p.pos;
            if let Some(&j) = index.get(&p.name) {
                let f = &profiles[j].pos;
                let at = format!(" at {}:{}:{}", f.file, f.line, f.column);
                return Err(
                    here.error(format!("QoS profile \"{}\" is already defined{at}", p.name))
                );
            }
            index.insert(p.name.clone(), i);
            if p.default {
                if let Some(d) = default {
                    return Err(here.error(format!(
                        "a second is_default_qos profile (\"{}\" is already the default)",
                        profiles[d].name
                    )));
                }
                default = Some(i);
            }
        }
        for p in profiles.iter_mut() {
            if let Some((base, library, pos)) = &p.base {
                let full = if base.contains("::") {
                    base.clone()
                } else {
                    format!("{library}::{base}")
                };
                match index.get(&full) {
                    Some(&b) => p.base_index = Some(b),
                    None => {
                        return Err(pos.error(format!(
                            "unknown base_name \"{base}\": no QoS profile \"{full}\""
                        )))
                    }
                }
            }
        }
        for start in 0..profiles.len() {
            let mut chain = vec![start];
            let mut at = start;
            while let Some(b) = profiles[at].base_index {
                if chain.contains(&b) {
                    let names: Vec<&str> = chain
                        .iter()
                        .chain([&b])
                        .map(|&i| profiles[i].name.as_str())
                        .collect();
                    let pos = profiles[at]
                        .base
                        .as_ref()
                        .map_or(&profiles[at].pos, |b| &b.2);
                    return Err(pos.error(format!("base_name cycle: {}", names.join(" -> "))));
                }
                chain.push(b);
                at = b;
            }
        }
        Ok(QosProvider {
            profiles,
            index,
            default,
            origins,
        })
    }
}

/// The DDS-XML elements that may hold QoS but that Halyard does not read.
const OTHER_DDS_XML: &[&str] = &[
    "types",
    "domain_library",
    "domain_participant_library",
    "application_library",
    "register_type",
    "topic",
];

/// Without the cargo feature `xml` no document is read.
#[cfg(not(feature = "xml"))]
fn parse_document(_xml: &str, _origin: &str) -> Result<Vec<Profile>> {
    Err(Error::Unsupported {
        feature: "xml",
        detail: "XML QoS profiles need halyard built with its cargo feature \"xml\"",
    })
}

#[cfg(feature = "xml")]
fn parse_document(xml: &str, origin: &str) -> Result<Vec<Profile>> {
    let origin: Arc<str> = Arc::from(origin);
    let options = roxmltree::ParsingOptions {
        allow_dtd: false,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(xml, options).map_err(|e| {
        let p = e.pos();
        let full = e.to_string();
        let message = full.strip_suffix(&format!(" at {p}")).unwrap_or(&full);
        // roxmltree places an early end of the text at 1:1; the end is where it was missed.
        let (line, column) = match e {
            roxmltree::Error::UnexpectedEndOfStream => {
                let last = xml.rsplit('\n').next().unwrap_or("");
                (
                    xml.matches('\n').count() as u32 + 1,
                    last.chars().count() as u32 + 1,
                )
            }
            _ => (p.row, p.col),
        };
        Error::BadProfile {
            file: origin.to_string(),
            line,
            column,
            message: format!("malformed XML: {message}"),
        }
    })?;
    let cx = Cx {
        doc: &doc,
        origin: &origin,
    };
    let root = doc.root_element();
    if tag(root) != "dds" {
        return Err(cx.at(
            root,
            format!("the root element must be <dds>, not <{}>", tag(root)),
        ));
    }
    // xmlns declarations are not attributes here; xsi:schemaLocation and Connext's version are.
    attributes(&cx, root, &["version"])?;
    let mut profiles = Vec::new();
    for lib in cx.elements(root)? {
        match tag(lib) {
            "qos_library" => {
                let [name] = attributes(&cx, lib, &["name"])?;
                let library = required_name(&cx, lib, name)?;
                for p in cx.elements(lib)? {
                    match tag(p) {
                        "qos_profile" => profiles.push(parse_profile(&cx, p, &library)?),
                        t if t.ends_with("_qos") => return Err(cx.at(p, format!("<{t}> directly in a <qos_library> is not supported; put it in a <qos_profile>"))),
                        t => return Err(cx.at(p, format!("unknown element <{t}> in <qos_library>; expected <qos_profile>"))),
                    }
                }
            }
            "qos_profile" => {
                return Err(cx.at(
                    lib,
                    "<qos_profile> must be inside a <qos_library> (DDS-XML 1.0)",
                ))
            }
            t if OTHER_DDS_XML.contains(&t) => {
                return Err(cx.at(
                    lib,
                    format!("<{t}> is not supported: Halyard reads <qos_library> elements only"),
                ))
            }
            t => {
                return Err(cx.at(
                    lib,
                    format!("unknown element <{t}> in <dds>; expected <qos_library>"),
                ))
            }
        }
    }
    Ok(profiles)
}

/// The values of the attributes `names` of `n` (others are an error, except namespaced ones
/// such as `xsi:schemaLocation`).
#[cfg(feature = "xml")]
fn attributes<'a, const N: usize>(
    cx: &Cx<'a, '_>,
    n: Node<'a, '_>,
    names: &[&str; N],
) -> Result<[Option<(&'a str, usize)>; N]> {
    let mut out = [None; N];
    for a in n.attributes() {
        match names.iter().position(|x| *x == a.name()) {
            Some(i) if a.namespace().is_none() => out[i] = Some((a.value(), a.range_value().start)),
            _ if a.namespace().is_some() => {}
            _ => {
                let message = format!(
                    "unknown attribute {} on <{}>; expected {}",
                    a.name(),
                    tag(n),
                    policies::one_of(names)
                );
                return Err(cx.err(a.range().start, message));
            }
        }
    }
    Ok(out)
}

#[cfg(feature = "xml")]
fn required_name(cx: &Cx, n: Node, name: Option<(&str, usize)>) -> Result<String> {
    match name {
        None => Err(cx.at(n, format!("<{}> needs a name attribute", tag(n)))),
        Some((v, off)) if v.is_empty() || v.contains("::") => Err(cx.err(
            off,
            format!("bad name \"{v}\": it must be non-empty, without \"::\""),
        )),
        Some((v, _)) => Ok(v.to_string()),
    }
}

#[cfg(feature = "xml")]
fn parse_profile<'a, 'i>(cx: &Cx<'a, 'i>, el: Node<'a, 'i>, library: &str) -> Result<Profile> {
    let [name, base, default] = attributes(cx, el, &["name", "base_name", "is_default_qos"])?;
    let name = required_name(cx, el, name)?;
    let mut p = Profile {
        name: format!("{library}::{name}"),
        pos: cx.pos(el.range().start),
        ..Profile::default()
    };
    if let Some((b, off)) = base {
        p.base = Some((b.to_string(), library.to_string(), cx.pos(off)));
    }
    if let Some((d, off)) = default {
        p.default = match d {
            "true" | "1" => true,
            "false" | "0" => false,
            _ => {
                return Err(cx.err(
                    off,
                    format!("bad boolean \"{d}\" in is_default_qos; expected true, false, 1 or 0"),
                ))
            }
        };
    }
    for e in cx.elements(el)? {
        match tag(e) {
            "datawriter_qos" => entity(cx, e, Entity::Writer, &mut p.writers, |c, n, o| {
                policies::endpoint_policy(c, n, e, Entity::Writer, o)
            })?,
            "datareader_qos" => entity(cx, e, Entity::Reader, &mut p.readers, |c, n, o| {
                policies::endpoint_policy(c, n, e, Entity::Reader, o)
            })?,
            "topic_qos" => entity(cx, e, Entity::Topic, &mut p.topics, |c, n, o| {
                policies::endpoint_policy(c, n, e, Entity::Topic, o)
            })?,
            "publisher_qos" => entity(cx, e, Entity::Publisher, &mut p.publishers, |c, n, o| {
                policies::group_policy(c, n, e, Entity::Publisher, o)
            })?,
            "subscriber_qos" => {
                entity(cx, e, Entity::Subscriber, &mut p.subscribers, |c, n, o| {
                    policies::group_policy(c, n, e, Entity::Subscriber, o)
                })?
            }
            "domain_participant_qos" | "domainparticipant_qos" | "participant_qos" => entity(
                cx,
                e,
                Entity::Participant,
                &mut p.participants,
                |c, n, o| policies::participant_policy(c, n, e, o),
            )?,
            t => {
                let message = format!("unknown element <{t}> in <qos_profile>; expected <datawriter_qos>, <datareader_qos>, <topic_qos>, <publisher_qos>, <subscriber_qos> or <domain_participant_qos>");
                return Err(cx.at(e, message));
            }
        }
    }
    Ok(p)
}

/// Reads one entity QoS element into `list`, checking that every element of the list can
/// apply: at most one without a topic filter, and that one last.
#[cfg(feature = "xml")]
fn entity<'a, 'i, T>(
    cx: &Cx<'a, 'i>,
    el: Node<'a, 'i>,
    kind: Entity,
    list: &mut Vec<EntityQos<T>>,
    policy: impl Fn(&Cx<'a, 'i>, Node<'a, 'i>, &mut Vec<Setter<T>>) -> Result<()>,
) -> Result<()> {
    let filters = matches!(kind, Entity::Writer | Entity::Reader | Entity::Topic);
    let [_name, filter, base] = attributes(cx, el, &["name", "topic_filter", "base_name"])?;
    if let Some((_, off)) = base {
        return Err(cx.err(
            off,
            format!(
                "base_name on <{}> is not supported; put it on the <qos_profile>",
                tag(el)
            ),
        ));
    }
    let topic_filter = match filter {
        Some((_, off)) if !filters => {
            return Err(cx.err(off, format!("<{}> takes no topic_filter", tag(el))))
        }
        f => f.map(|(f, _)| f.to_string()),
    };
    if list.iter().any(|e| e.topic_filter.is_none()) {
        let message = format!("this <{}> can never apply: an earlier one in the profile has no topic_filter (it must come last)", tag(el));
        return Err(cx.at(el, message));
    }
    let mut settings = Vec::new();
    for n in cx.elements(el)? {
        policy(cx, n, &mut settings)?;
    }
    list.push(EntityQos {
        topic_filter,
        settings,
    });
    Ok(())
}
