//! Conditions and WaitSets (DDS 1.4 §2.2.2.1.6–9).
//!
//! A [`WaitSet`] blocks until one of its attached conditions triggers. Participants wake every
//! WaitSet attached to one of their entities whenever statuses or caches change; the WaitSet then
//! re-evaluates its conditions, so a wake-up is cheap and spurious ones are harmless.

use crate::clock::monotonic;
use crate::error::{Error, Result};
use crate::filter::{SampleQuery, SharedFilter};
use crate::listener::StatusMask;
use crate::runtime::Shared;
use crate::status::StateMask;
use halyard_wire::EntityId;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

/// Wakes one WaitSet: a generation counter and a condition variable.
#[derive(Default)]
pub(crate) struct Notifier {
    generation: Mutex<u64>,
    cv: Condvar,
}

impl Notifier {
    pub(crate) fn notify(&self) {
        *self.generation.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.cv.notify_all();
    }

    fn generation(&self) -> u64 {
        *self.generation.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until the generation differs from `seen` or `deadline` passes.
    fn wait_past(&self, seen: u64, deadline: Instant) {
        let mut g = self.generation.lock().unwrap_or_else(|p| p.into_inner());
        while *g == seen {
            let now = monotonic();
            if now >= deadline {
                return;
            }
            g = self
                .cv
                .wait_timeout(g, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

/// Which entity a condition watches.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Target {
    Reader(EntityId),
    Writer(EntityId),
}

struct StatusInner {
    shared: Arc<Shared>,
    target: Target,
    enabled: AtomicU32,
}

/// Triggers while one of its enabled statuses changed since that status was last read
/// (DATA_AVAILABLE: while unread samples are present).
#[derive(Clone)]
pub struct StatusCondition(Arc<StatusInner>);

impl StatusCondition {
    pub(crate) fn new(shared: Arc<Shared>, target: Target) -> Self {
        StatusCondition(Arc::new(StatusInner {
            shared,
            target,
            enabled: AtomicU32::new(StatusMask::ALL.0),
        }))
    }

    /// Selects the statuses that trigger this condition (default: all).
    pub fn set_enabled_statuses(&self, mask: StatusMask) {
        self.0.enabled.store(mask.0, Ordering::Relaxed);
        self.0.shared.wake();
    }

    /// The enabled statuses.
    pub fn enabled_statuses(&self) -> StatusMask {
        StatusMask(self.0.enabled.load(Ordering::Relaxed))
    }

    /// The statuses of the entity that changed since last read.
    pub fn changed_statuses(&self) -> StatusMask {
        let st = self.0.shared.lock();
        match self.0.target {
            Target::Reader(id) => st.readers.get(&id).map_or(StatusMask::NONE, |r| {
                let mut m = r.changes;
                m.0 &= !StatusMask::DATA_AVAILABLE.0;
                if r.data_available {
                    m |= StatusMask::DATA_AVAILABLE;
                }
                m
            }),
            Target::Writer(id) => st.writers.get(&id).map_or(StatusMask::NONE, |w| w.changes),
        }
    }

    /// True while triggered.
    pub fn trigger_value(&self) -> bool {
        self.changed_statuses().intersects(self.enabled_statuses())
    }
}

struct ReadInner {
    shared: Arc<Shared>,
    reader: EntityId,
    mask: StateMask,
    query: Option<SampleQuery>,
}

/// Triggers while its reader holds samples in the states of its mask (DDS 1.4 §2.2.2.5.8).
#[derive(Clone)]
pub struct ReadCondition(Arc<ReadInner>);

impl ReadCondition {
    pub(crate) fn new(shared: Arc<Shared>, reader: EntityId, mask: StateMask) -> Self {
        ReadCondition(Arc::new(ReadInner {
            shared,
            reader,
            mask,
            query: None,
        }))
    }

    pub(crate) fn with_query(
        shared: Arc<Shared>,
        reader: EntityId,
        mask: StateMask,
        query: SampleQuery,
    ) -> Self {
        ReadCondition(Arc::new(ReadInner {
            shared,
            reader,
            mask,
            query: Some(query),
        }))
    }

    /// The query of a QueryCondition's read condition.
    pub(crate) fn query(&self) -> Option<SampleQuery> {
        self.0.query.clone()
    }

    /// True if this condition selects only unread samples.
    pub fn only_unread(&self) -> bool {
        self.0.mask.sample_states == StateMask::NOT_READ
    }

    /// The sample, view and instance states it selects.
    pub fn mask(&self) -> StateMask {
        self.0.mask
    }

    /// True while triggered.
    pub fn trigger_value(&self) -> bool {
        let st = self.0.shared.lock();
        st.readers.get(&self.0.reader).is_some_and(|r| {
            if self.0.query.is_some() {
                r.cache.has_matching(self.0.mask, self.0.query.as_ref())
            } else if self.0.mask == StateMask::NOT_READ_ONLY {
                r.data_available
            } else if self.0.mask == StateMask::ANY {
                !r.cache.is_empty()
            } else {
                r.cache.has_matching(self.0.mask, None)
            }
        })
    }
}

/// A ReadCondition that also filters data samples with a query expression (DDS 1.4
/// §2.2.2.5.9), made by `DataReader::create_querycondition`. The expression is a condition
/// of the DDS SQL filter grammar, `ORDER BY` and member paths, or both (DDS 1.4 Annex B
/// `QueryExpression`): with `ORDER BY`, `read_w_condition` and `take_w_condition` return the
/// samples it selects sorted by those members, ascending, samples equal in them in the
/// reader's order, and it selects data samples only (see [`crate::filter`]).
#[derive(Clone)]
pub struct QueryCondition {
    read: ReadCondition,
    filter: SharedFilter,
}

impl QueryCondition {
    pub(crate) fn new(read: ReadCondition, filter: SharedFilter) -> Self {
        QueryCondition { read, filter }
    }

    /// The read condition to use with `read_w_condition`, `take_w_condition` and WaitSets.
    pub fn read_condition(&self) -> &ReadCondition {
        &self.read
    }

    /// The query expression, as given (with its `ORDER BY`, if any).
    pub fn query_expression(&self) -> String {
        self.filter
            .read()
            .map(|f| f.expression().to_string())
            .unwrap_or_default()
    }

    /// Replaces the query's parameters (its `ORDER BY`, which takes none, is unchanged).
    pub fn set_query_parameters(&self, params: Vec<String>) -> Result<()> {
        let mut f = self
            .filter
            .write()
            .map_err(|_| Error::BadParameter("the query is poisoned"))?;
        Ok(f.set_parameters(&params)?)
    }

    /// True while samples the query selects are held.
    pub fn trigger_value(&self) -> bool {
        self.read.trigger_value()
    }
}

impl From<&QueryCondition> for Condition {
    fn from(c: &QueryCondition) -> Self {
        Condition::Read(c.read.clone())
    }
}

#[derive(Default)]
struct GuardInner {
    triggered: AtomicBool,
    waitsets: Mutex<Vec<Weak<Notifier>>>,
}

/// A condition the application sets and resets itself (e.g. to wake a WaitSet for shutdown).
#[derive(Clone, Default)]
pub struct GuardCondition(Arc<GuardInner>);

impl GuardCondition {
    /// A new, untriggered guard condition.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets or clears the trigger, waking attached WaitSets.
    pub fn set_trigger_value(&self, value: bool) {
        self.0.triggered.store(value, Ordering::SeqCst);
        for w in self
            .0
            .waitsets
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            if let Some(n) = w.upgrade() {
                n.notify();
            }
        }
    }

    /// True while triggered.
    pub fn trigger_value(&self) -> bool {
        self.0.triggered.load(Ordering::SeqCst)
    }
}

/// Any condition a WaitSet can hold.
#[derive(Clone)]
pub enum Condition {
    /// A StatusCondition.
    Status(StatusCondition),
    /// A ReadCondition.
    Read(ReadCondition),
    /// A GuardCondition.
    Guard(GuardCondition),
}

impl Condition {
    /// True while triggered.
    pub fn trigger_value(&self) -> bool {
        match self {
            Condition::Status(c) => c.trigger_value(),
            Condition::Read(c) => c.trigger_value(),
            Condition::Guard(c) => c.trigger_value(),
        }
    }

    /// True if both name the same condition object.
    pub fn same_as(&self, other: &Condition) -> bool {
        match (self, other) {
            (Condition::Status(a), Condition::Status(b)) => Arc::ptr_eq(&a.0, &b.0),
            (Condition::Read(a), Condition::Read(b)) => Arc::ptr_eq(&a.0, &b.0),
            (Condition::Guard(a), Condition::Guard(b)) => Arc::ptr_eq(&a.0, &b.0),
            _ => false,
        }
    }

    fn register(&self, n: &Arc<Notifier>) {
        match self {
            Condition::Status(c) => c.0.shared.add_waitset(n),
            Condition::Read(c) => c.0.shared.add_waitset(n),
            Condition::Guard(c) => {
                c.0.waitsets
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(Arc::downgrade(n))
            }
        }
    }
}

impl From<StatusCondition> for Condition {
    fn from(c: StatusCondition) -> Self {
        Condition::Status(c)
    }
}

impl From<ReadCondition> for Condition {
    fn from(c: ReadCondition) -> Self {
        Condition::Read(c)
    }
}

impl From<GuardCondition> for Condition {
    fn from(c: GuardCondition) -> Self {
        Condition::Guard(c)
    }
}

/// Most conditions one WaitSet holds.
pub const MAX_WAITSET_CONDITIONS: usize = 1024;

/// Blocks a thread until attached conditions trigger.
#[derive(Default)]
pub struct WaitSet {
    notifier: Arc<Notifier>,
    conditions: Mutex<Vec<Condition>>,
}

impl WaitSet {
    /// An empty WaitSet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Attaches a condition (attaching the same one twice has no effect).
    pub fn attach_condition(&self, c: impl Into<Condition>) -> Result<()> {
        let c = c.into();
        let mut conds = self.conditions.lock().unwrap_or_else(|p| p.into_inner());
        if conds.iter().any(|x| x.same_as(&c)) {
            return Ok(());
        }
        if conds.len() >= MAX_WAITSET_CONDITIONS {
            return Err(Error::OutOfResources(
                "a WaitSet holds at most 1024 conditions",
            ));
        }
        c.register(&self.notifier);
        conds.push(c);
        Ok(())
    }

    /// Detaches a condition; `BadParameter` if it was not attached.
    pub fn detach_condition(&self, c: &Condition) -> Result<()> {
        let mut conds = self.conditions.lock().unwrap_or_else(|p| p.into_inner());
        let before = conds.len();
        conds.retain(|x| !x.same_as(c));
        if conds.len() == before {
            return Err(Error::BadParameter(
                "condition not attached to this WaitSet",
            ));
        }
        Ok(())
    }

    /// The attached conditions.
    pub fn conditions(&self) -> Vec<Condition> {
        self.conditions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Blocks until at least one attached condition triggers and returns the triggered ones,
    /// or returns `Err(Timeout)`.
    pub fn wait(&self, timeout: Duration) -> Result<Vec<Condition>> {
        let deadline = monotonic() + timeout;
        loop {
            let seen = self.notifier.generation();
            let triggered: Vec<Condition> = self
                .conditions()
                .into_iter()
                .filter(Condition::trigger_value)
                .collect();
            if !triggered.is_empty() {
                return Ok(triggered);
            }
            if monotonic() >= deadline {
                return Err(Error::Timeout);
            }
            // Bounded sleep so conditions whose state changes without a wake-up are still seen.
            self.notifier
                .wait_past(seen, deadline.min(monotonic() + Duration::from_millis(100)));
        }
    }
}
