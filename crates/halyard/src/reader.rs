//! DataReader<T> (DDS 1.4 §2.2.2.5.3).

use crate::error::{Error, Result};
use crate::participant::DomainParticipant;
use crate::runtime::Listener;
use crate::status::{
    IncompatibleQosStatus, InstanceHandle, LivelinessChangedStatus, MatchedStatus, SampleInfo,
};
use halyard_cdr::{deserialize, deserialize_key, key_hash, TopicType};
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

pub(crate) fn key_of<T: TopicType>(payload: &[u8]) -> Option<[u8; 16]> {
    let v: T = deserialize(payload)
        .or_else(|_| deserialize_key(payload))
        .ok()?;
    key_hash(&v).ok()
}

/// Reads samples of `T` from a topic.
pub struct DataReader<T: TopicType> {
    participant: DomainParticipant,
    id: EntityId,
    _t: PhantomData<fn() -> T>,
}

/// Which samples a read or take returns.
#[derive(Clone, Copy, Debug, Default)]
pub struct Selector {
    /// Only samples not yet read.
    pub only_unread: bool,
    /// Only this instance.
    pub instance: Option<InstanceHandle>,
}

impl<T: TopicType> DataReader<T> {
    pub(crate) fn new(participant: DomainParticipant, id: EntityId) -> Self {
        DataReader {
            participant,
            id,
            _t: PhantomData,
        }
    }

    fn collect(&self, max: usize, take: bool, sel: Selector) -> Result<Vec<Sample<T>>> {
        let mut out = Vec::new();
        let mut st = self.participant.shared.lock();
        let r = st.readers.get_mut(&self.id).ok_or(Error::AlreadyDeleted)?;
        r.collect(
            max,
            take,
            sel.only_unread,
            sel.instance.map(|h| h.0),
            |c, info| {
                let data = if info.valid_data {
                    deserialize::<T>(&c.payload).ok()
                } else {
                    None
                };
                out.push(Sample { data, info });
            },
        );
        Ok(out)
    }

    /// Removes and returns up to `max` samples.
    pub fn take(&self, max: usize) -> Result<Vec<Sample<T>>> {
        self.collect(max, true, Selector::default())
    }

    /// Returns up to `max` samples, leaving them in the cache (marked READ).
    pub fn read(&self, max: usize) -> Result<Vec<Sample<T>>> {
        self.collect(max, false, Selector::default())
    }

    /// Take with a selector (unread only, one instance).
    pub fn take_with(&self, max: usize, sel: Selector) -> Result<Vec<Sample<T>>> {
        self.collect(max, true, sel)
    }

    /// Read with a selector.
    pub fn read_with(&self, max: usize, sel: Selector) -> Result<Vec<Sample<T>>> {
        self.collect(max, false, sel)
    }

    /// Takes the raw serialized samples (for tools that measure without decoding).
    pub fn take_serialized(
        &self,
        max: usize,
        mut f: impl FnMut(&[u8], &SampleInfo),
    ) -> Result<usize> {
        let mut st = self.participant.shared.lock();
        let r = st.readers.get_mut(&self.id).ok_or(Error::AlreadyDeleted)?;
        let mut n = 0;
        r.collect(max, true, false, None, |c, info| {
            f(&c.payload, &info);
            n += 1;
        });
        Ok(n)
    }

    /// The instance handle of a sample's key.
    pub fn lookup_instance(&self, sample: &T) -> Result<InstanceHandle> {
        Ok(InstanceHandle(key_hash(sample)?))
    }

    /// Blocks until unread data is available or `timeout` elapses; returns whether it is.
    pub fn wait_for_data(&self, timeout: Duration) -> bool {
        let shared = &self.participant.shared;
        let deadline = std::time::Instant::now() + timeout;
        let mut st = shared.lock();
        loop {
            if st.readers.get(&self.id).is_some_and(|r| r.data_available) {
                return true;
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                return false;
            }
            st = shared
                .changed
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Sets (or clears) the data-available listener; it runs on Halyard's receive thread,
    /// outside its locks, so it may call `take` and write.
    pub fn set_listener(&self, listener: Option<Listener>) {
        if let Some(r) = self.participant.shared.lock().readers.get_mut(&self.id) {
            r.listener = listener;
        }
    }

    /// Convenience: a listener from a closure.
    pub fn on_data_available(&self, f: impl Fn() + Send + Sync + 'static) {
        self.set_listener(Some(Arc::new(f)));
    }

    /// SUBSCRIPTION_MATCHED status.
    pub fn subscription_matched_status(&self) -> MatchedStatus {
        self.participant
            .shared
            .lock()
            .readers
            .get(&self.id)
            .map(|r| r.matched.clone())
            .unwrap_or_default()
    }

    /// REQUESTED_INCOMPATIBLE_QOS status.
    pub fn requested_incompatible_qos_status(&self) -> IncompatibleQosStatus {
        self.participant
            .shared
            .lock()
            .readers
            .get(&self.id)
            .map(|r| r.incompatible.clone())
            .unwrap_or_default()
    }

    /// LIVELINESS_CHANGED status.
    pub fn liveliness_changed_status(&self) -> LivelinessChangedStatus {
        self.participant
            .shared
            .lock()
            .readers
            .get(&self.id)
            .map(|r| r.liveliness.clone())
            .unwrap_or_default()
    }

    /// SAMPLE_LOST total count.
    pub fn sample_lost_count(&self) -> u64 {
        self.participant
            .shared
            .lock()
            .readers
            .get(&self.id)
            .map_or(0, |r| r.sample_lost)
    }

    /// SAMPLE_REJECTED total count.
    pub fn sample_rejected_count(&self) -> u64 {
        self.participant
            .shared
            .lock()
            .readers
            .get(&self.id)
            .map_or(0, |r| r.sample_rejected)
    }

    /// Blocks until at least `n` writers are matched, or `timeout`.
    pub fn wait_for_matched(&self, n: u32, timeout: Duration) -> Result<()> {
        let shared = &self.participant.shared;
        let deadline = std::time::Instant::now() + timeout;
        let mut st = shared.lock();
        while st
            .readers
            .get(&self.id)
            .map_or(0, |r| r.matched.current_count)
            < n
        {
            let now = std::time::Instant::now();
            if now >= deadline {
                return Err(Error::Timeout);
            }
            st = shared
                .changed
                .wait_timeout(st, (deadline - now).min(Duration::from_millis(20)))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        Ok(())
    }
}

impl<T: TopicType> Drop for DataReader<T> {
    fn drop(&mut self) {
        let shared = &self.participant.shared;
        let mut st = shared.lock();
        let now = shared.now();
        st.core.delete_reader(now, self.id);
        st.readers.remove(&self.id);
        shared.pump(&mut st);
    }
}
