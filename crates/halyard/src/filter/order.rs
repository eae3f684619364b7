//! `ORDER BY` in query conditions (DDS 1.4 Annex B `QueryExpression`): the values a sample is
//! sorted by, and the query a reader's cache applies to its serialized samples.
//!
//! Design. The cache holds serialized samples. A read or take through a QueryCondition with
//! ORDER BY decodes each sample it selects once into a [`SortKey`] (the values of the ORDER
//! BY members, in the order named) and sorts them by it, stably, before `max_samples`
//! applies: what it returns is the first samples in that order, and samples with equal keys
//! keep the cache's order (reception order). Values compare as their type does: integers,
//! floats and enumerators (by their value) numerically, strings and characters
//! lexicographically (by code point), FALSE before TRUE. A member a sample lacks (an unset
//! optional member, an index past a sequence's end) sorts after every value, as does NaN
//! after every number; a payload that does not decode sorts after all the others. As in
//! OpenDDS, a query with ORDER BY selects data samples only: disposal and unregistration
//! notices have no members to sort by (the spec says nothing of them).

use super::schema::{Fields, Value};
use super::{sample_filter, Filter, SampleDecoder, SampleFilter, SharedFilter, Typed};
use halyard_cdr::{PathSegment, TopicType};
use std::cmp::Ordering;
use std::sync::{Arc, RwLock};

/// One ORDER BY member's value in a sample, as it sorts.
#[derive(Clone, Debug)]
pub(crate) enum SortValue {
    Bool(bool),
    /// An integer or an enumerator's value.
    Number(i128),
    Float(f64),
    /// A string or a character.
    Text(String),
    /// The sample lacks the member.
    Absent,
}

impl SortValue {
    fn of(v: Option<Value<'_>>) -> SortValue {
        match v {
            Some(Value::Bool(b)) => SortValue::Bool(b),
            Some(Value::Int(i)) => SortValue::Number(i128::from(i)),
            Some(Value::UInt(u)) => SortValue::Number(i128::from(u)),
            Some(Value::Enum { value, .. }) => SortValue::Number(i128::from(value)),
            Some(Value::Float(f)) => SortValue::Float(f),
            Some(Value::Char(c)) => SortValue::Text(c.to_string()),
            Some(Value::Str(s)) => SortValue::Text(s.to_string()),
            None => SortValue::Absent,
        }
    }

    /// Orders values of different kinds (only `Absent` meets another kind: one ORDER BY
    /// member has one type).
    fn rank(&self) -> u8 {
        match self {
            SortValue::Bool(_) => 0,
            SortValue::Number(_) => 1,
            SortValue::Float(_) => 2,
            SortValue::Text(_) => 3,
            SortValue::Absent => 4,
        }
    }
}

impl Ord for SortValue {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (SortValue::Bool(a), SortValue::Bool(b)) => a.cmp(b),
            (SortValue::Number(a), SortValue::Number(b)) => a.cmp(b),
            // Numerically (-0 equals 0); NaN after every number, NaNs equal.
            (SortValue::Float(a), SortValue::Float(b)) => a
                .partial_cmp(b)
                .unwrap_or_else(|| a.is_nan().cmp(&b.is_nan())),
            (SortValue::Text(a), SortValue::Text(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for SortValue {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for SortValue {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for SortValue {}

/// A sample's values of the ORDER BY members, first member first: compared
/// lexicographically.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct SortKey(Vec<SortValue>);

impl SortKey {
    /// The key of `sample` for the members at `paths`.
    pub(crate) fn of<S: Fields + ?Sized>(sample: &S, paths: &[Vec<PathSegment>]) -> SortKey {
        SortKey(
            paths
                .iter()
                .map(|p| SortValue::of(sample.value(p)))
                .collect(),
        )
    }

    /// The key of a payload that does not decode: after every other.
    fn undecodable(members: usize) -> SortKey {
        SortKey(vec![SortValue::Absent; members])
    }
}

/// The sort key of a serialized sample.
pub(crate) type SampleOrder = Arc<dyn Fn(&[u8]) -> SortKey + Send + Sync>;

/// What a QueryCondition applies to its reader's serialized samples: its condition (with the
/// parameters currently set) and its ORDER BY.
#[derive(Clone)]
pub(crate) struct SampleQuery {
    filter: SampleFilter,
    /// `None` without ORDER BY.
    order: Option<SampleOrder>,
}

impl SampleQuery {
    /// The query of `filter` over serialized samples of `T`, and `filter` shared, for the
    /// condition that sets its parameters.
    pub(crate) fn new<T: TopicType>(filter: Filter) -> (SampleQuery, SharedFilter) {
        Self::with_decoder(filter, Arc::new(Typed::<T>::new()))
    }

    /// The query of `filter` over serialized samples that `decoder` decodes, and `filter`
    /// shared, for the condition that sets its parameters.
    pub(crate) fn with_decoder(
        filter: Filter,
        decoder: Arc<dyn SampleDecoder>,
    ) -> (SampleQuery, SharedFilter) {
        let paths: Vec<Vec<PathSegment>> = filter
            .parsed
            .order_by
            .iter()
            .map(|k| k.path.clone())
            .collect();
        let shared = Arc::new(RwLock::new(filter));
        let order = (!paths.is_empty()).then(|| {
            let decoder = Arc::clone(&decoder);
            let order: SampleOrder = Arc::new(move |payload: &[u8]| {
                let mut key = None;
                decoder.with_sample(payload, &mut |v| key = Some(SortKey::of(v, &paths)));
                key.unwrap_or_else(|| SortKey::undecodable(paths.len()))
            });
            order
        });
        let query = SampleQuery {
            filter: sample_filter(&shared, decoder),
            order,
        };
        (query, shared)
    }

    /// True if the query selects a sample: a data sample (`Some(payload)`) its condition
    /// accepts, or a sample without data (a disposal or unregistration notice) unless the
    /// query sorts.
    pub(crate) fn accepts(&self, data: Option<&[u8]>) -> bool {
        match data {
            Some(payload) => (self.filter)(payload),
            None => self.order.is_none(),
        }
    }

    /// True if it has ORDER BY.
    pub(crate) fn sorts(&self) -> bool {
        self.order.is_some()
    }

    /// Sorts `chosen` (sample indices, in the cache's order) by ORDER BY, stably, decoding
    /// each sample (`payload` of its index) once; without ORDER BY it is left as it is.
    pub(crate) fn sort<'a>(&self, chosen: &mut Vec<usize>, payload: impl Fn(usize) -> &'a [u8]) {
        let Some(order) = &self.order else {
            return;
        };
        let mut keyed: Vec<(SortKey, usize)> =
            chosen.iter().map(|&i| (order(payload(i)), i)).collect();
        // `sort_by` is stable: equal keys keep the cache's order.
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        *chosen = keyed.into_iter().map(|(_, i)| i).collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(values: Vec<SortValue>) -> SortKey {
        SortKey(values)
    }

    #[test]
    fn values_sort_by_kind_with_absent_members_last() {
        use SortValue::*;
        assert!(Number(-3) < Number(2));
        assert!(Number(i128::from(u64::MAX)) > Number(i128::from(i64::MAX)));
        assert!(Float(-0.5) < Float(0.25));
        assert_eq!(Float(-0.0), Float(0.0));
        assert!(Float(f64::INFINITY) < Float(f64::NAN));
        assert_eq!(Float(f64::NAN), Float(f64::NAN));
        assert!(Text("B".into()) < Text("a".into()), "by code point");
        assert!(Text("ab".into()) < Text("b".into()), "lexicographically");
        assert!(Text("a".into()) < Text("ab".into()));
        assert!(Bool(false) < Bool(true));
        assert!(Number(i128::MAX) < Absent);
        assert!(Text("zzz".into()) < Absent);
        assert_eq!(Absent, Absent);
    }

    #[test]
    fn keys_compare_member_by_member() {
        use SortValue::*;
        assert!(key(vec![Number(1), Text("z".into())]) < key(vec![Number(2), Text("a".into())]));
        assert!(key(vec![Number(1), Text("a".into())]) < key(vec![Number(1), Text("b".into())]));
        assert_eq!(
            key(vec![Number(1), Float(2.0)]),
            key(vec![Number(1), Float(2.0)])
        );
        assert!(key(vec![Number(1), Absent]) > key(vec![Number(1), Float(9.0)]));
        assert!(SortKey::undecodable(2) > key(vec![Number(i128::MAX), Float(f64::NAN)]));
    }
}
