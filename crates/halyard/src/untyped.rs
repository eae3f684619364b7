//! Untyped (serialized) endpoints: writers and readers of a type known only at run time.
//!
//! A tool such as `halyard sub TOPIC` learns a topic's type from discovery and cannot name a
//! Rust [`TopicType`] for it. Its samples stay serialized bytes (the 4-byte encapsulation
//! header included, exactly what travels in a DATA submessage), and what the endpoints need
//! to know of the type comes from an [`UntypedType`] value: its name, whether it has a key,
//! and a [`KeySupport`] that computes the key hash and the serialized key of a sample. A
//! dynamic type (decoded from a TypeObject) plugs in with [`crate::DynamicKeySupport`]; a
//! Rust type does through [`UntypedType::of`].
//!
//! Design: there is no second writer or reader. `DataWriter<T>` and `DataReader<T>` are
//! split into type-independent methods (`impl<T>`: QoS, statuses, listeners, conditions,
//! matching, history, reliability, durability, deletion) and the methods that serialize or
//! decode a Rust type (`impl<T: TopicType>`). An untyped endpoint is a
//! `DataWriter<Untyped>` / `DataReader<Untyped>` (the [`Untyped`] marker has no values) with
//! the type support beside it, and derefs to it for the type-independent methods. What does
//! not fit bytes is left out, not faked: content filters and query conditions evaluate
//! members, so an untyped reader gets them when it is given its type as a [`DynamicType`]
//! (`create_untyped_contentfilteredtopic`, `UntypedDataReader::create_querycondition`: the
//! same filter language as typed readers, `crate::filter`). An untyped writer applies its
//! readers' content filters when its type comes with its XTypes description (it decodes
//! samples with it); without, it sends every sample and readers filter on their side.

use crate::condition::QueryCondition;
use crate::error::{Error, Result};
use crate::filter::{ContentFilteredTopic, Filter, SampleQuery};
use crate::listener::{DataReaderListener, DataWriterListener};
use crate::participant::{DomainParticipant, Publisher, Subscriber, Topic};
use crate::qos::{DataReaderQos, DataWriterQos};
use crate::reader::{condition_visit, DataReader, Sample, Selector};
use crate::status::InstanceHandle;
use crate::writer::DataWriter;
use crate::xtypes::DynamicType;
use crate::{ReadCondition, StateMask};
use halyard_cdr::{
    deserialize, parse_encapsulation, serialize_key, CdrError, DataRepresentation, Extensibility,
    TopicType,
};
use halyard_core::ChangeKind;
use halyard_wire::Time;
use std::sync::Arc;

/// The type parameter of untyped endpoints and topics (`DataWriter<Untyped>`,
/// `DataReader<Untyped>`, `Topic<Untyped>`): it has no values, samples are bytes.
#[derive(Debug)]
pub enum Untyped {}

/// What a keyed type known at run time must compute from serialized samples (each with its
/// encapsulation header). Implemented by dynamic types, and for Rust types by
/// [`UntypedType::of`].
pub trait KeySupport: Send + Sync {
    /// The key hash (XTypes 1.3 §7.6.8) of a serialized sample, or of a serialized key only
    /// when `key_only` (the payload of a dispose or unregister, which may be padded).
    fn key_hash(&self, payload: &[u8], key_only: bool) -> std::result::Result<[u8; 16], CdrError>;
    /// The serialized key of a serialized sample (encapsulation header included, in the
    /// sample's representation): the payload of a dispose or unregister of its instance.
    fn serialized_key(&self, sample: &[u8]) -> std::result::Result<Vec<u8>, CdrError>;
}

/// A topic type's XTypes description as owned bytes (the run-time counterpart of
/// [`halyard_cdr::TypeDescription`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnedTypeDescription {
    /// The `TypeInformation` (XCDR2 little-endian, no encapsulation header).
    pub type_information: Vec<u8>,
    /// The `TypeObject`s the information names.
    pub type_objects: Vec<Vec<u8>>,
}

/// A topic type known at run time: what untyped endpoints need of it.
#[derive(Clone)]
pub struct UntypedType {
    /// The registered type name, e.g. `"ShapeType"` or `"M::Point"` (matched by name).
    pub type_name: String,
    /// The extensibility of the top-level type.
    pub extensibility: Extensibility,
    /// How keys are computed; `None` for a keyless type.
    pub key: Option<Arc<dyn KeySupport>>,
    /// The type's XTypes description, when known: `create_untyped_topic` registers it, so
    /// the topic's endpoints announce its TypeInformation in SEDP and the participant's
    /// TypeLookup service serves its TypeObjects (as for a typed topic).
    pub type_description: Option<OwnedTypeDescription>,
}

impl std::fmt::Debug for UntypedType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UntypedType")
            .field("type_name", &self.type_name)
            .field("extensibility", &self.extensibility)
            .field("has_key", &self.has_key())
            .field("type_description", &self.type_description.is_some())
            .finish()
    }
}

impl UntypedType {
    /// The type as a [`DynamicType`], built from its XTypes description (`None` without one,
    /// or when it does not build).
    pub fn dynamic_type(&self) -> Option<DynamicType> {
        use crate::xtypes::{TypeInformation, TypeObject, TypeRegistry};
        let d = self.type_description.as_ref()?;
        let info = TypeInformation::from_xcdr2(&d.type_information).ok()?;
        let mut reg = TypeRegistry::new();
        for o in &d.type_objects {
            reg.insert_object(TypeObject::from_xcdr2(o).ok()?).ok()?;
        }
        reg.build(&info.complete.typeid_with_size.type_id)
            .or_else(|_| reg.build(&info.minimal.typeid_with_size.type_id))
            .ok()
    }

    /// A keyless type.
    pub fn keyless(type_name: impl Into<String>, extensibility: Extensibility) -> Self {
        UntypedType {
            type_name: type_name.into(),
            extensibility,
            key: None,
            type_description: None,
        }
    }

    /// A keyed type whose keys `key` computes.
    pub fn keyed(
        type_name: impl Into<String>,
        extensibility: Extensibility,
        key: Arc<dyn KeySupport>,
    ) -> Self {
        UntypedType {
            key: Some(key),
            ..Self::keyless(type_name, extensibility)
        }
    }

    /// The run-time description of a Rust topic type (for relays, bridges and tests): its
    /// name, extensibility, description and keys as `T` computes them.
    pub fn of<T: TopicType>() -> Self {
        let key: Option<Arc<dyn KeySupport>> = if T::has_key() {
            Some(Arc::new(TypedKey::<T>(std::marker::PhantomData)))
        } else {
            None
        };
        UntypedType {
            type_name: T::type_name().to_string(),
            extensibility: T::extensibility(),
            key,
            type_description: T::type_description().map(|d| OwnedTypeDescription {
                type_information: d.type_information.to_vec(),
                type_objects: d.type_objects.iter().map(|o| o.to_vec()).collect(),
            }),
        }
    }

    /// True for a keyed type.
    pub fn has_key(&self) -> bool {
        self.key.is_some()
    }

    /// The instance handle (key hash) of a serialized sample; all zero for a keyless type.
    pub fn instance_of(&self, sample: &[u8]) -> Result<InstanceHandle> {
        check_encapsulation(sample)?;
        match &self.key {
            Some(k) => Ok(InstanceHandle(k.key_hash(sample, false)?)),
            None => Ok(InstanceHandle([0; 16])),
        }
    }
}

/// [`KeySupport`] from a Rust topic type.
struct TypedKey<T>(std::marker::PhantomData<fn() -> T>);

impl<T: TopicType> KeySupport for TypedKey<T> {
    fn key_hash(&self, payload: &[u8], key_only: bool) -> std::result::Result<[u8; 16], CdrError> {
        let v: T = if key_only {
            halyard_cdr::deserialize_key(payload)?
        } else {
            deserialize(payload)?
        };
        halyard_cdr::key_hash(&v)
    }

    fn serialized_key(&self, sample: &[u8]) -> std::result::Result<Vec<u8>, CdrError> {
        let (rep, _) = parse_encapsulation(encapsulation_id(sample)?)?;
        let v: T = deserialize(sample)?;
        let mut out = Vec::with_capacity(32);
        serialize_key(&v, rep, &mut out)?;
        Ok(out)
    }
}

/// The encapsulation identifier at the start of a serialized sample.
fn encapsulation_id(sample: &[u8]) -> std::result::Result<u16, CdrError> {
    match sample {
        [a, b, _, _, ..] => Ok(u16::from_be_bytes([*a, *b])),
        _ => Err(CdrError::Truncated),
    }
}

/// The representation of a serialized sample, checking it has a known encapsulation header.
fn check_encapsulation(sample: &[u8]) -> Result<DataRepresentation> {
    let id = encapsulation_id(sample).map_err(|_| {
        Error::BadParameter("a serialized sample starts with a 4-byte encapsulation header")
    })?;
    Ok(parse_encapsulation(id)?.0)
}

/// A topic of a type known at run time.
#[derive(Clone)]
pub struct UntypedTopic {
    topic: Topic<Untyped>,
    ty: Arc<UntypedType>,
}

impl std::fmt::Debug for UntypedTopic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UntypedTopic")
            .field("name", &self.topic.name())
            .field("type", &self.ty)
            .finish()
    }
}

impl UntypedTopic {
    /// The topic name.
    pub fn name(&self) -> &str {
        self.topic.name()
    }

    /// The type.
    pub fn untyped_type(&self) -> &UntypedType {
        &self.ty
    }
}

impl DomainParticipant {
    /// Creates (or refers to) a topic of a type known at run time.
    pub fn create_untyped_topic(&self, name: &str, ty: UntypedType) -> Result<UntypedTopic> {
        crate::check_topic_name(name).map_err(Error::BadTopicName)?;
        if ty.type_name.is_empty() || ty.type_name.len() > 256 {
            return Err(Error::BadParameter("type names are 1..=256 characters"));
        }
        if let Some(d) = &ty.type_description {
            // Announced in SEDP and served through TypeLookup, as a typed topic's description.
            let objects: Vec<&[u8]> = d.type_objects.iter().map(Vec::as_slice).collect();
            self.shared
                .lock()
                .core
                .register_type(&ty.type_name, &d.type_information, &objects)
                .map_err(Error::BadTypeDescription)?;
        }
        Ok(UntypedTopic {
            topic: Topic::named(name, &ty.type_name),
            ty: Arc::new(ty),
        })
    }
}

impl Publisher {
    /// Creates a writer of serialized samples of `topic`'s run-time type. QoS, listener,
    /// matching, reliability and durability are a typed writer's. When the type comes with
    /// its XTypes description it applies its readers' content filters as a typed writer does
    /// (decoding samples with that description); without, it sends every sample and readers
    /// filter on their side.
    pub fn create_untyped_datawriter(
        &self,
        topic: &UntypedTopic,
        qos: DataWriterQos,
        listener: Option<Arc<dyn DataWriterListener>>,
    ) -> Result<UntypedDataWriter> {
        let has_key = topic.ty.has_key();
        let representation = qos.data_representation.unwrap_or(DataRepresentation::Xcdr1);
        let compiler = topic
            .ty
            .dynamic_type()
            .map(crate::filter::dynamic_filter_compiler);
        let inner = self.create_writer(&topic.topic, has_key, compiler, qos, listener)?;
        Ok(UntypedDataWriter {
            inner,
            ty: topic.ty.clone(),
            representation,
        })
    }
}

impl Subscriber {
    /// Creates a reader of serialized samples of `topic`'s run-time type. QoS, listener,
    /// history, conditions and WaitSets are a typed reader's.
    pub fn create_untyped_datareader(
        &self,
        topic: &UntypedTopic,
        qos: DataReaderQos,
        listener: Option<Arc<dyn DataReaderListener>>,
    ) -> Result<UntypedDataReader> {
        self.untyped_reader(topic, qos, listener, None)
    }

    fn untyped_reader(
        &self,
        topic: &UntypedTopic,
        qos: DataReaderQos,
        listener: Option<Arc<dyn DataReaderListener>>,
        filtered: Option<&ContentFilteredTopic<Untyped>>,
    ) -> Result<UntypedDataReader> {
        let key_fn: Option<crate::history::KeyFn> = topic.ty.key.clone().map(|k| {
            Arc::new(move |payload: &[u8], key_only: bool| {
                // Peers differ in what a key-only payload holds: try the other way too.
                k.key_hash(payload, key_only)
                    .or_else(|_| k.key_hash(payload, !key_only))
                    .ok()
            }) as crate::history::KeyFn
        });
        let endpoint = crate::reader::ReaderSupport {
            has_key: topic.ty.has_key(),
            key_fn,
            filter: None,
        };
        let inner =
            self.create_reader_filtered_with(&topic.topic, endpoint, qos, listener, filtered)?;
        Ok(UntypedDataReader {
            inner,
            ty: topic.ty.clone(),
        })
    }

    /// Creates a reader of a content-filtered topic of a type known at run time: as
    /// [`Subscriber::create_datareader_filtered`], samples its filter rejects never reach the
    /// reader's cache, and it announces the filter to writers.
    pub fn create_untyped_datareader_filtered(
        &self,
        topic: &UntypedContentFilteredTopic,
        qos: DataReaderQos,
        listener: Option<Arc<dyn DataReaderListener>>,
    ) -> Result<UntypedDataReader> {
        self.untyped_reader(&topic.related, qos, listener, Some(&topic.inner))
    }
}

/// Writes serialized samples of a type known at run time. Derefs to [`DataWriter`] for the
/// type-independent methods (QoS, statuses, listener, matching, acknowledgments ...).
pub struct UntypedDataWriter {
    inner: DataWriter<Untyped>,
    ty: Arc<UntypedType>,
    /// The writer's representation (DATA_REPRESENTATION's first entry): samples must be in it.
    representation: DataRepresentation,
}

impl std::ops::Deref for UntypedDataWriter {
    type Target = DataWriter<Untyped>;
    fn deref(&self) -> &DataWriter<Untyped> {
        &self.inner
    }
}

impl UntypedDataWriter {
    /// The type.
    pub fn untyped_type(&self) -> &UntypedType {
        &self.ty
    }

    /// Checks `sample` is serialized in the writer's representation (readers were matched
    /// on it).
    fn check(&self, sample: &[u8]) -> Result<()> {
        if check_encapsulation(sample)? != self.representation {
            return Err(Error::BadParameter(
                "the sample's encapsulation is not the writer's DATA_REPRESENTATION",
            ));
        }
        Ok(())
    }

    /// The key hash and serialized key of `sample` (which must be keyed).
    fn key_of(&self, sample: &[u8]) -> Result<([u8; 16], Vec<u8>)> {
        self.check(sample)?;
        let Some(k) = &self.ty.key else {
            return Err(Error::BadParameter(
                "dispose/unregister need a keyed topic type",
            ));
        };
        Ok((k.key_hash(sample, false)?, k.serialized_key(sample)?))
    }

    /// Writes a serialized sample (encapsulation header included) stamped with the current
    /// time.
    pub fn write(&self, sample: &[u8]) -> Result<()> {
        self.write_w_timestamp(sample, crate::wall_clock())
    }

    /// Writes a serialized sample with an explicit source timestamp.
    pub fn write_w_timestamp(&self, sample: &[u8], timestamp: Time) -> Result<()> {
        self.check(sample)?;
        let Some(k) = &self.ty.key else {
            return self
                .inner
                .submit(ChangeKind::Alive, [0; 16], sample.to_vec(), timestamp, None);
        };
        let key = k.key_hash(sample, false)?;
        // Called only for an instance the writer has not registered yet.
        let register = || k.serialized_key(sample).map_err(Error::from);
        self.inner.submit(
            ChangeKind::Alive,
            key,
            sample.to_vec(),
            timestamp,
            Some(&register),
        )
    }

    /// Disposes the instance of a serialized sample (only its key members matter).
    pub fn dispose(&self, sample: &[u8]) -> Result<()> {
        self.dispose_w_timestamp(sample, crate::wall_clock())
    }

    /// Disposes the instance of a serialized sample with an explicit source timestamp.
    pub fn dispose_w_timestamp(&self, sample: &[u8], timestamp: Time) -> Result<()> {
        let (key, payload) = self.key_of(sample)?;
        self.inner
            .key_change_serialized(ChangeKind::Disposed, key, payload, timestamp)
    }

    /// Unregisters the instance of a serialized sample; with WRITER_DATA_LIFECYCLE
    /// autodispose_unregistered_instances (the default) this disposes it too.
    pub fn unregister_instance(&self, sample: &[u8]) -> Result<()> {
        self.unregister_instance_w_timestamp(sample, crate::wall_clock())
    }

    /// Unregisters the instance of a serialized sample with an explicit source timestamp.
    pub fn unregister_instance_w_timestamp(&self, sample: &[u8], timestamp: Time) -> Result<()> {
        let (key, payload) = self.key_of(sample)?;
        let kind = self.inner.unregister_kind();
        self.inner
            .key_change_serialized(kind, key, payload, timestamp)
    }

    /// The instance handle (key hash) of a serialized sample.
    pub fn lookup_instance(&self, sample: &[u8]) -> Result<InstanceHandle> {
        self.ty.instance_of(sample)
    }
}

/// Reads serialized samples of a type known at run time: each valid sample's `data` is its
/// payload as received (encapsulation header included). Derefs to [`DataReader`] for the
/// type-independent methods (QoS, statuses, listeners, conditions, matching ...).
pub struct UntypedDataReader {
    inner: DataReader<Untyped>,
    ty: Arc<UntypedType>,
}

impl std::ops::Deref for UntypedDataReader {
    type Target = DataReader<Untyped>;
    fn deref(&self) -> &DataReader<Untyped> {
        &self.inner
    }
}

/// A serialized sample's bytes, as received.
fn bytes(payload: &[u8]) -> Option<Vec<u8>> {
    Some(payload.to_vec())
}

impl UntypedDataReader {
    /// The type.
    pub fn untyped_type(&self) -> &UntypedType {
        &self.ty
    }

    /// Removes and returns up to `max` samples.
    pub fn take(&self, max: usize) -> Result<Vec<Sample<Vec<u8>>>> {
        self.take_with(max, Selector::default())
    }

    /// Returns up to `max` samples, leaving them in the cache (marked READ).
    pub fn read(&self, max: usize) -> Result<Vec<Sample<Vec<u8>>>> {
        self.read_with(max, Selector::default())
    }

    /// Take with a selector (unread only, one instance, states).
    pub fn take_with(&self, max: usize, sel: Selector) -> Result<Vec<Sample<Vec<u8>>>> {
        self.inner.collect_with(sel.visit(max, true), bytes)
    }

    /// Read with a selector.
    pub fn read_with(&self, max: usize, sel: Selector) -> Result<Vec<Sample<Vec<u8>>>> {
        self.inner.collect_with(sel.visit(max, false), bytes)
    }

    /// Reads the samples of the next instance after `previous` (see
    /// [`DataReader::read_next_instance`]).
    pub fn read_next_instance(
        &self,
        max: usize,
        previous: Option<InstanceHandle>,
        sel: Selector,
    ) -> Result<Vec<Sample<Vec<u8>>>> {
        let v = sel.next_instance_visit(max, false, previous);
        self.inner.collect_with(v, bytes)
    }

    /// Takes the samples of the next instance after `previous`.
    pub fn take_next_instance(
        &self,
        max: usize,
        previous: Option<InstanceHandle>,
        sel: Selector,
    ) -> Result<Vec<Sample<Vec<u8>>>> {
        let v = sel.next_instance_visit(max, true, previous);
        self.inner.collect_with(v, bytes)
    }

    /// Reads the samples a ReadCondition selects.
    pub fn read_w_condition(&self, max: usize, c: &ReadCondition) -> Result<Vec<Sample<Vec<u8>>>> {
        self.inner
            .collect_with(condition_visit(max, false, c), bytes)
    }

    /// Takes the samples a ReadCondition selects.
    pub fn take_w_condition(&self, max: usize, c: &ReadCondition) -> Result<Vec<Sample<Vec<u8>>>> {
        self.inner
            .collect_with(condition_visit(max, true, c), bytes)
    }

    /// The instance handle (key hash) of a serialized sample.
    pub fn lookup_instance(&self, sample: &[u8]) -> Result<InstanceHandle> {
        self.ty.instance_of(sample)
    }

    /// A QueryCondition (see [`DataReader::create_querycondition`]) whose expression is
    /// bound to `schema`, the reader's type as learnt at run time: its samples are decoded
    /// with it to be evaluated and sorted (a sample that does not decode passes, and sorts
    /// last).
    pub fn create_querycondition(
        &self,
        mask: StateMask,
        expression: &str,
        params: Vec<String>,
        schema: &DynamicType,
    ) -> Result<QueryCondition> {
        let filter = Filter::query_for_schema(expression, &params, schema)?;
        let query = SampleQuery::with_decoder(filter, Arc::new(schema.clone()));
        Ok(self.inner.query_condition(mask, query))
    }
}

/// A content-filtered topic of a type known at run time (made by
/// [`DomainParticipant::create_untyped_contentfilteredtopic`]); derefs to
/// [`ContentFilteredTopic`] for its name, expression and parameters.
pub struct UntypedContentFilteredTopic {
    inner: ContentFilteredTopic<Untyped>,
    related: UntypedTopic,
}

impl std::ops::Deref for UntypedContentFilteredTopic {
    type Target = ContentFilteredTopic<Untyped>;
    fn deref(&self) -> &ContentFilteredTopic<Untyped> {
        &self.inner
    }
}

impl UntypedContentFilteredTopic {
    /// The topic it filters.
    pub fn related_untyped_topic(&self) -> &UntypedTopic {
        &self.related
    }
}

impl DomainParticipant {
    /// Creates a content-filtered topic of `topic`, whose type is known at run time:
    /// `expression` (the DDS SQL filter grammar, `%n` for `params[n]`) is bound to `schema`,
    /// that type as a [`DynamicType`], and readers created from it
    /// ([`Subscriber::create_untyped_datareader_filtered`]) decode samples with it to filter
    /// them. A bad expression is `Error::BadFilter`, which says which token is wrong and why.
    pub fn create_untyped_contentfilteredtopic(
        &self,
        name: &str,
        topic: &UntypedTopic,
        expression: &str,
        params: Vec<String>,
        schema: &DynamicType,
    ) -> Result<UntypedContentFilteredTopic> {
        crate::check_topic_name(name).map_err(Error::BadTopicName)?;
        let filter = Filter::for_schema(expression, &params, schema)?;
        let decoder = Arc::new(schema.clone());
        Ok(UntypedContentFilteredTopic {
            inner: ContentFilteredTopic::with_filter(name, &topic.topic, filter, decoder),
            related: topic.clone(),
        })
    }
}
