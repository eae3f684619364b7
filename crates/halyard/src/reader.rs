//! `DataReader<T>` (DDS 1.4 §2.2.2.5.3).

use crate::condition::{ReadCondition, StatusCondition, Target};
use crate::error::{Error, Result};
use crate::group::keep_current;
use crate::history::{Cached, Visit};
use crate::listener::{DataReaderListener, StatusMask};
use crate::participant::DomainParticipant;
use crate::qos::{validate, DataReaderQos};
use crate::status::{
    DeadlineMissedStatus, IncompatibleQosStatus, InstanceHandle, LivelinessChangedStatus,
    MatchedStatus, ReaderState, ReaderStats, SampleInfo, StateMask,
};
use halyard_cdr::{deserialize, deserialize_key, key_hash, TopicType};
use halyard_wire::qos::EndpointQos;
use halyard_wire::EntityId;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

/// A sample and its info. `data` is `None` for disposal/unregistration notices or when the
/// payload could not be decoded (then `decode_error` says why).
#[derive(Debug)]
pub struct Sample<T> {
    /// The value.
    pub data: Option<T>,
    /// Its SampleInfo.
    pub info: SampleInfo,
}

/// The key hash of a serialized sample of `T`, or of its serialized key (`key_only`: a
/// disposal's or unregistration's payload, which may be padded past the key). Each is tried
/// the other way if it does not decode (peers differ in what they put there).
pub(crate) fn key_of<T: TopicType>(payload: &[u8], key_only: bool) -> Option<[u8; 16]> {
    let v: T = if key_only {
        deserialize_key(payload).or_else(|_| deserialize(payload))
    } else {
        deserialize(payload).or_else(|_| deserialize_key(payload))
    }
    .ok()?;
    key_hash(&v).ok()
}

/// What creating a reader needs of its type (typed or untyped).
pub(crate) struct ReaderSupport {
    /// Whether the type has a key.
    pub(crate) has_key: bool,
    /// Computes the key hash of a sample that comes without one (keyed types).
    pub(crate) key_fn: Option<crate::history::KeyFn>,
    /// The content filter samples must pass (a reader of a content-filtered topic).
    pub(crate) filter: Option<crate::filter::SampleFilter>,
}

/// Reads samples of `T` from a topic.
///
/// `T` is a [`TopicType`] for typed readers; the methods that do not depend on the type
/// (QoS, statuses, listeners, conditions, matching) are also those of an untyped reader
/// ([`crate::UntypedDataReader`], a `DataReader<Untyped>` underneath).
pub struct DataReader<T> {
    participant: DomainParticipant,
    id: EntityId,
    /// False until `enable` for a reader created disabled (ENTITY_FACTORY).
    enabled: std::sync::atomic::AtomicBool,
    _t: PhantomData<fn() -> T>,
}

/// Which samples a read or take returns.
#[derive(Clone, Copy, Debug, Default)]
pub struct Selector {
    /// Only samples not yet read (narrows `states` to NOT_READ).
    pub only_unread: bool,
    /// Only this instance.
    pub instance: Option<InstanceHandle>,
    /// Only samples in these sample, view and instance states (default: any).
    pub states: StateMask,
}

impl Selector {
    fn mask(&self) -> StateMask {
        let mut m = self.states;
        if self.only_unread {
            m.sample_states &= StateMask::NOT_READ;
        }
        m
    }

    /// The visit of a read or take of up to `max` samples this selector selects.
    pub(crate) fn visit(&self, max: usize, take: bool) -> Visit {
        Visit {
            max,
            take,
            states: self.mask(),
            instance: self.instance.map(|h| h.0),
            ..Visit::default()
        }
    }

    /// The visit of a read or take of the samples of the next instance after `previous`
    /// (`self.instance` is ignored).
    pub(crate) fn next_instance_visit(
        &self,
        max: usize,
        take: bool,
        previous: Option<InstanceHandle>,
    ) -> Visit {
        Visit {
            max,
            take,
            states: self.mask(),
            next_after: previous.map(|h| h.0),
            first_instance: previous.is_none(),
            ..Visit::default()
        }
    }
}

/// The visit of a read or take of up to `max` samples a ReadCondition selects.
pub(crate) fn condition_visit(max: usize, take: bool, c: &ReadCondition) -> Visit {
    Visit {
        max,
        take,
        states: c.mask(),
        query: c.query(),
        ..Visit::default()
    }
}

/// The type-independent methods, shared by typed and untyped readers.
impl<T> DataReader<T> {
    pub(crate) fn new(participant: DomainParticipant, id: EntityId, enabled: bool) -> Self {
        DataReader {
            participant,
            id,
            enabled: std::sync::atomic::AtomicBool::new(enabled),
            _t: PhantomData,
        }
    }

    /// Enables a reader its subscriber created disabled (ENTITY_FACTORY
    /// autoenable_created_entities false): it is announced and matched now. Until then
    /// reading is refused with [`Error::NotEnabled`]. Enabling an enabled reader does nothing.
    pub fn enable(&self) -> Result<()> {
        use std::sync::atomic::Ordering::SeqCst;
        if self.enabled.swap(true, SeqCst) {
            return Ok(());
        }
        let id = self.id;
        self.participant
            .shared
            .drive(|st, now| st.core.enable_reader(now, id));
        Ok(())
    }

    /// Sets the reader's TYPE_CONSISTENCY_ENFORCEMENT QoS (see
    /// [`crate::qos::TypeConsistencyEnforcement`]). It is fixed once the reader is enabled:
    /// create the reader from a subscriber whose ENTITY_FACTORY does not autoenable, set it,
    /// then [`DataReader::enable`]; on an enabled reader this fails with
    /// [`Error::PreconditionNotMet`].
    pub fn set_type_consistency(&self, tc: crate::qos::TypeConsistencyEnforcement) -> Result<()> {
        if self.is_enabled() {
            return Err(Error::PreconditionNotMet(
                "TYPE_CONSISTENCY_ENFORCEMENT is set before the reader is enabled",
            ));
        }
        let id = self.id;
        self.participant
            .shared
            .drive(|st, _| st.core.set_reader_type_consistency(id, tc));
        Ok(())
    }

    /// True once the reader is enabled.
    pub fn is_enabled(&self) -> bool {
        self.enabled.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Reads or takes what `v` selects, each sample's data decoded by `decode` (not called
    /// for invalid data: disposals, unregistrations).
    pub(crate) fn collect_with<D>(
        &self,
        v: Visit,
        decode: impl Fn(&[u8]) -> Option<D>,
    ) -> Result<Vec<Sample<D>>> {
        let mut out = Vec::new();
        self.visit(v, |c, info| {
            let data = if info.valid_data {
                decode(&c.payload)
            } else {
                None
            };
            out.push(Sample { data, info });
        })?;
        Ok(out)
    }

    /// Reads or takes what `v` selects, handing each sample to `f`. After a take the core may
    /// deliver samples it held back for lack of room (a reliable KEEP_ALL cache that was full
    /// back-pressures its writers): they are moved into the cache and waiters are woken.
    fn visit(&self, v: Visit, f: impl FnMut(&Cached, SampleInfo)) -> Result<()> {
        if !self.is_enabled() {
            return Err(Error::NotEnabled);
        }
        let id = self.id;
        self.participant.shared.drive(|st, now| {
            let r = st.readers.get_mut(&id).ok_or(Error::AlreadyDeleted)?;
            let take = v.take;
            let spent = r.visit(v, f);
            let credit = r.cache.credit().filter(|_| take);
            for buf in spent {
                st.core.recycle_payload(buf);
            }
            if credit.is_some() {
                st.core.set_reader_credit(now, id, credit);
            }
            Ok(())
        })
    }

    /// Takes the raw serialized samples (for tools that measure without decoding).
    pub fn take_serialized(
        &self,
        max: usize,
        mut f: impl FnMut(&[u8], &SampleInfo),
    ) -> Result<usize> {
        let mut n = 0;
        let v = Visit {
            max,
            take: true,
            ..Visit::default()
        };
        self.visit(v, |c, info| {
            f(&c.payload, &info);
            n += 1;
        })?;
        Ok(n)
    }

    /// Blocks until unread data is available or `timeout` elapses; returns whether it is.
    pub fn wait_for_data(&self, timeout: Duration) -> bool {
        let id = self.id;
        self.participant.shared.wait_until(timeout, |st| {
            st.readers.get(&id).is_some_and(|r| r.data_available)
        })
    }

    /// Sets (or clears) the listener. Its methods run on Halyard's receive thread, outside
    /// its locks, so they may call `take` and write. A listener of DATA_AVAILABLE only is
    /// [`crate::listener::on_data_available`] of a closure.
    pub fn set_listener(&self, listener: Option<Arc<dyn DataReaderListener>>) -> Result<()> {
        let mut st = self.participant.shared.lock();
        let r = st.readers.get_mut(&self.id).ok_or(Error::AlreadyDeleted)?;
        r.listener = listener;
        Ok(())
    }

    /// The reader's StatusCondition (all statuses enabled initially).
    pub fn status_condition(&self) -> StatusCondition {
        StatusCondition::new(self.participant.shared.clone(), Target::Reader(self.id))
    }

    /// A ReadCondition triggering while samples (only unread ones if `only_unread`) are held.
    pub fn create_readcondition(&self, only_unread: bool) -> ReadCondition {
        let mask = if only_unread {
            StateMask::NOT_READ_ONLY
        } else {
            StateMask::ANY
        };
        self.create_readcondition_with_mask(mask)
    }

    /// A ReadCondition triggering while samples in the states of `mask` are held.
    pub fn create_readcondition_with_mask(&self, mask: StateMask) -> ReadCondition {
        ReadCondition::new(self.participant.shared.clone(), self.id, mask)
    }

    /// The reader's QoS as it stands.
    pub fn qos(&self) -> Result<DataReaderQos> {
        let st = self.participant.shared.lock();
        let r = st.readers.get(&self.id).ok_or(Error::AlreadyDeleted)?;
        Ok(DataReaderQos::from(r.cache.qos()))
    }

    /// Changes the reader's QoS at run time (DDS 1.4 `set_qos`). Only the changeable policies
    /// may differ from [`DataReader::qos`]: DEADLINE, LATENCY_BUDGET, TIME_BASED_FILTER,
    /// READER_DATA_LIFECYCLE and USER/TOPIC DATA; changing any other is refused with
    /// [`Error::ImmutablePolicy`] naming it. An empty representation list keeps the current
    /// one; PARTITION and GROUP_DATA are the subscriber's ([`crate::Subscriber::set_qos`]).
    /// The change is announced by SEDP and every
    /// match is judged again: writers that no longer satisfy it are unmatched (with
    /// REQUESTED_INCOMPATIBLE_QOS), writers that now do are matched. A new TIME_BASED_FILTER
    /// returns once the participants of the matched writers acknowledged the announcement (at
    /// most a second; not waited for in a listener): Halyard writers filter for the reader on
    /// their side too, and from then on with the new separation.
    pub fn set_qos(&self, qos: DataReaderQos) -> Result<()> {
        let mut qos = EndpointQos::from(&qos);
        validate(&qos, false)?;
        let id = self.id;
        let shared = &self.participant.shared;
        let time_filter_changed = shared.drive(|st, now| {
            let current = st.readers.get(&id).ok_or(Error::AlreadyDeleted)?;
            keep_current(&mut qos, current.cache.qos());
            let changed = qos.time_based_filter != current.cache.qos().time_based_filter;
            apply_qos(st, now, id, qos).map(|()| changed)
        })?;
        // Halyard writers apply the reader's TIME_BASED_FILTER on their side too: waiting until
        // their participants acknowledged the new announcement (bounded; not in a listener,
        // whose thread may be the one that would receive it) makes it apply to what they write
        // after this returns (with a lower separation, they would otherwise still withhold
        // samples the reader now wants).
        if time_filter_changed && !shared.in_listener() {
            shared.wait_until(crate::filter::ANNOUNCEMENT_WAIT, |st| {
                st.core.reader_announcement_acknowledged(id)
            });
        }
        Ok(())
    }

    /// Reads a status (`f`) and resets the changed flags of `bits`; `AlreadyDeleted` if the
    /// reader is gone.
    fn status<S>(&self, bits: StatusMask, f: impl FnOnce(&mut ReaderState) -> S) -> Result<S> {
        let mut st = self.participant.shared.lock();
        let r = st.readers.get_mut(&self.id).ok_or(Error::AlreadyDeleted)?;
        r.changes.0 &= !bits.0;
        Ok(f(r))
    }

    /// SUBSCRIPTION_MATCHED status.
    pub fn subscription_matched_status(&self) -> Result<MatchedStatus> {
        self.status(StatusMask::SUBSCRIPTION_MATCHED, |r| r.matched.clone())
    }

    /// REQUESTED_INCOMPATIBLE_QOS status.
    pub fn requested_incompatible_qos_status(&self) -> Result<IncompatibleQosStatus> {
        self.status(StatusMask::REQUESTED_INCOMPATIBLE_QOS, |r| {
            r.incompatible.clone()
        })
    }

    /// LIVELINESS_CHANGED status.
    pub fn liveliness_changed_status(&self) -> Result<LivelinessChangedStatus> {
        self.status(StatusMask::LIVELINESS_CHANGED, |r| r.liveliness.read())
    }

    /// REQUESTED_DEADLINE_MISSED status (reading it resets `total_count_change`).
    pub fn requested_deadline_missed_status(&self) -> Result<DeadlineMissedStatus> {
        self.status(StatusMask::REQUESTED_DEADLINE_MISSED, |r| {
            r.deadline_missed.read()
        })
    }

    /// What this reader counted so far, as one snapshot. Reading it resets the changed flags
    /// of SAMPLE_LOST and SAMPLE_REJECTED (whose totals it holds).
    pub fn stats(&self) -> Result<ReaderStats> {
        self.status(StatusMask::SAMPLE_LOST | StatusMask::SAMPLE_REJECTED, |r| {
            ReaderStats {
                sample_lost: r.sample_lost,
                sample_rejected: r.sample_rejected,
                filtered_samples: r.filtered,
            }
        })
    }

    /// The handles of the writers matched now (DDS `get_matched_publications`), without
    /// resetting the SUBSCRIPTION_MATCHED status. A durability service's relay is not listed.
    pub fn matched_publications(&self) -> Result<Vec<InstanceHandle>> {
        let st = self.participant.shared.lock();
        let r = st.readers.get(&self.id).ok_or(Error::AlreadyDeleted)?;
        Ok(r.matched.matched_handles())
    }

    /// The reader's instance handle (its GUID), as `Subscriber::get_datareaders` lists it.
    pub fn instance_handle(&self) -> InstanceHandle {
        let prefix = self.participant.guid_prefix();
        InstanceHandle::from(halyard_wire::Guid::new(prefix, self.id))
    }

    /// Blocks until at least `n` writers are matched, or `timeout`. A durability service's
    /// relay, which delivers the history of writers gone, is not counted (nor in the reader's
    /// statuses).
    pub fn wait_for_matched(&self, n: u32, timeout: Duration) -> Result<()> {
        let id = self.id;
        let ok = self.participant.shared.wait_until(timeout, |st| {
            st.readers.get(&id).map_or(0, |r| r.matched.current_count) >= n
        });
        if ok {
            Ok(())
        } else {
            Err(Error::Timeout)
        }
    }
}

/// The methods that decode samples into a Rust [`TopicType`].
impl<T: TopicType> DataReader<T> {
    /// Removes and returns up to `max` samples.
    pub fn take(&self, max: usize) -> Result<Vec<Sample<T>>> {
        self.collect(Selector::default().visit(max, true))
    }

    /// Returns up to `max` samples, leaving them in the cache (marked READ).
    pub fn read(&self, max: usize) -> Result<Vec<Sample<T>>> {
        self.collect(Selector::default().visit(max, false))
    }

    /// Take with a selector (unread only, one instance).
    pub fn take_with(&self, max: usize, sel: Selector) -> Result<Vec<Sample<T>>> {
        self.collect(sel.visit(max, true))
    }

    /// Read with a selector.
    pub fn read_with(&self, max: usize, sel: Selector) -> Result<Vec<Sample<T>>> {
        self.collect(sel.visit(max, false))
    }

    /// Reads the samples of the instance with the smallest handle above `previous` (or the
    /// first instance, for `None`) that has samples `sel` selects (`sel.instance` is ignored):
    /// iterating with it visits every instance in handle order (DDS read_next_instance).
    pub fn read_next_instance(
        &self,
        max: usize,
        previous: Option<InstanceHandle>,
        sel: Selector,
    ) -> Result<Vec<Sample<T>>> {
        self.next_instance(max, false, previous, sel)
    }

    /// Takes the samples of the next instance after `previous` (see
    /// [`DataReader::read_next_instance`]).
    pub fn take_next_instance(
        &self,
        max: usize,
        previous: Option<InstanceHandle>,
        sel: Selector,
    ) -> Result<Vec<Sample<T>>> {
        self.next_instance(max, true, previous, sel)
    }

    fn next_instance(
        &self,
        max: usize,
        take: bool,
        previous: Option<InstanceHandle>,
        sel: Selector,
    ) -> Result<Vec<Sample<T>>> {
        self.collect(sel.next_instance_visit(max, take, previous))
    }

    fn collect(&self, v: Visit) -> Result<Vec<Sample<T>>> {
        self.collect_with(v, |payload| deserialize::<T>(payload).ok())
    }

    /// The instance handle of a sample's key.
    pub fn lookup_instance(&self, sample: &T) -> Result<InstanceHandle> {
        Ok(InstanceHandle(key_hash(sample)?))
    }

    /// Takes the samples a ReadCondition (or a QueryCondition's) selects (in the order of
    /// the query's `ORDER BY`, if it has one).
    pub fn take_w_condition(&self, max: usize, c: &ReadCondition) -> Result<Vec<Sample<T>>> {
        self.with_condition(max, true, c)
    }

    /// Reads the samples a ReadCondition (or a QueryCondition's) selects (in the order of
    /// the query's `ORDER BY`, if it has one).
    pub fn read_w_condition(&self, max: usize, c: &ReadCondition) -> Result<Vec<Sample<T>>> {
        self.with_condition(max, false, c)
    }

    fn with_condition(&self, max: usize, take: bool, c: &ReadCondition) -> Result<Vec<Sample<T>>> {
        self.collect(condition_visit(max, take, c))
    }

    /// A QueryCondition: a ReadCondition that also requires data samples to pass
    /// `expression` (the DDS SQL filter grammar, `%n` for `params[n]`), which may end with
    /// (or be only) `ORDER BY member, ...`: reads and takes through it then return samples
    /// sorted by those members, ascending (DDS 1.4 Annex B `QueryExpression`). Use its
    /// `read_condition()` with `read_w_condition`, `take_w_condition` and WaitSets.
    pub fn create_querycondition(
        &self,
        mask: StateMask,
        expression: &str,
        params: Vec<String>,
    ) -> Result<crate::condition::QueryCondition>
    where
        T: halyard_cdr::Reflect,
    {
        let filter = crate::filter::Filter::new_query::<T>(expression, &params)?;
        Ok(self.query_condition(mask, crate::filter::SampleQuery::new::<T>(filter)))
    }
}

impl<T> DataReader<T> {
    /// The QueryCondition of `query` (and its shared filter) on this reader.
    pub(crate) fn query_condition(
        &self,
        mask: StateMask,
        (query, shared): (crate::filter::SampleQuery, crate::filter::SharedFilter),
    ) -> crate::condition::QueryCondition {
        let read = ReadCondition::with_query(self.participant.shared.clone(), self.id, mask, query);
        crate::condition::QueryCondition::new(read, shared)
    }
}

impl<T> Drop for DataReader<T> {
    fn drop(&mut self) {
        let id = self.id;
        self.participant.shared.drive(|st, now| {
            st.core.delete_reader(now, id);
            st.readers.remove(&id);
        });
    }
}

/// Applies a reader QoS change (already validated and completed) in the core and in the
/// reader's cache.
pub(crate) fn apply_qos(
    st: &mut crate::runtime::State,
    now: halyard_core::Instant,
    id: EntityId,
    qos: EndpointQos,
) -> Result<()> {
    st.core
        .set_reader_qos(now, id, qos.clone())
        .map_err(Error::from)?;
    if let Some(r) = st.readers.get_mut(&id) {
        r.cache.set_qos(qos);
    }
    Ok(())
}
