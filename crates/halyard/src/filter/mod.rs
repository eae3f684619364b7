//! The DDS SQL filter language (DDS 1.4 Annex B) for content-filtered topics and query
//! conditions, one implementation for every kind of endpoint: comparisons (`=`, `<>`, `!=`,
//! `<`, `<=`, `>`, `>=`, `LIKE`, `NOT LIKE`), `BETWEEN` and `NOT BETWEEN`, `AND`, `OR`, `NOT`,
//! parentheses, member paths (`pos.x`, `points[2].y`), integer (decimal or `0x` hex), float,
//! string, boolean (`TRUE`/`FALSE`) and enumerator literals, and `%n` parameters.
//!
//! Design. The language knows nothing of Rust types, XTypes or the runtime: `lexer` cuts an
//! expression into tokens, `parser` builds a tree and binds every member path through a
//! [`FilterSchema`] (so a bad expression fails when the filter is created, with the position
//! and text of the offending token), and `eval` walks the tree over a sample through
//! [`Fields`]. Rust types plug in through [`Reflect`] ([`ReflectSchema`], and every `Reflect`
//! value is [`Fields`]); types learnt at run time through [`DynamicType`] and
//! [`DynamicSample`] (`dynamic`). Parameters are kept as text and parsed when set
//! ([`Filter::set_parameters`]); a missing parameter is an error then. Evaluation rules are in
//! `eval`. Keywords are case-insensitive. The DCPS entity ([`ContentFilteredTopic`], in
//! `content_filtered_topic`) is the only part that reaches the runtime.
//!
//! A content filter is a Condition only (Annex B `FilterExpression`, [`Filter::new`]): `ORDER
//! BY` in one is refused, pointing at `ORDER`. A query condition's expression (Annex B
//! `QueryExpression ::= { Condition }{ 'ORDER BY' (FIELDNAME // ',') }`, [`Filter::new_query`])
//! may add `ORDER BY` and member paths, or be `ORDER BY ...` alone (it then selects every
//! sample): what a read or take through the condition returns is sorted by those members,
//! ascending (the grammar has no `ASC` or `DESC`), the first member first; samples equal in
//! all of them keep the reader's order. Numbers and enumerators (by value) sort numerically,
//! strings and characters lexicographically, FALSE before TRUE; a member a sample lacks sorts
//! last. Such a query selects data samples only (see `filter/order.rs`).

mod content_filtered_topic;
mod dynamic;
mod error;
mod eval;
mod lexer;
mod order;
mod parser;
mod schema;

pub use content_filtered_topic::ContentFilteredTopic;
pub(crate) use content_filtered_topic::ANNOUNCEMENT_WAIT;
pub use dynamic::DynamicSample;
pub use error::FilterError;
pub use lexer::MAX_LEN;
pub(crate) use order::SampleQuery;
pub use parser::MAX_DEPTH;
pub use schema::{
    Enumeration, Enumerator, FieldRef, Fields, FilterSchema, MemberKind, ReflectSchema, Value,
};

use crate::xtypes::DynamicType;
use error::err;
use halyard_cdr::{Reflect, TopicType};
use halyard_wire::discovery::{ContentFilterProperty, DDSSQL};
use lexer::{number, Tok};
use parser::{Grammar, Lit, Parsed};
use std::marker::PhantomData;
use std::sync::{Arc, RwLock};

/// A parsed filter or query, bound to a type's members.
#[derive(Clone, Debug)]
pub struct Filter {
    expression: String,
    parsed: Parsed,
    params: Vec<Lit>,
    /// The parameters as given.
    param_text: Vec<String>,
}

impl Filter {
    /// Parses the content filter `expression` (a Condition: DDS 1.4 Annex B
    /// `FilterExpression`; `ORDER BY` is refused) for samples of `T`, with `params` for
    /// `%0`, `%1`, ...
    pub fn new<T: Reflect>(expression: &str, params: &[String]) -> Result<Filter, FilterError> {
        Self::for_schema(expression, params, &ReflectSchema::<T>::new())
    }

    /// Parses the query expression `expression` (DDS 1.4 Annex B `QueryExpression`: a
    /// Condition, `ORDER BY` and member paths separated by commas, or both) for samples of
    /// `T`, with `params` for `%0`, `%1`, ... Each `ORDER BY` member is a path to a member
    /// of a primitive, string or enumeration type.
    pub fn new_query<T: Reflect>(
        expression: &str,
        params: &[String],
    ) -> Result<Filter, FilterError> {
        Self::query_for_schema(expression, params, &ReflectSchema::<T>::new())
    }

    /// [`Filter::new`] for the type `schema` describes (a [`DynamicType`], a
    /// [`ReflectSchema`], or any other [`FilterSchema`]).
    pub fn for_schema(
        expression: &str,
        params: &[String],
        schema: &dyn FilterSchema,
    ) -> Result<Filter, FilterError> {
        Self::parse(expression, params, schema, Grammar::Filter)
    }

    /// [`Filter::new_query`] for the type `schema` describes.
    pub fn query_for_schema(
        expression: &str,
        params: &[String],
        schema: &dyn FilterSchema,
    ) -> Result<Filter, FilterError> {
        Self::parse(expression, params, schema, Grammar::Query)
    }

    fn parse(
        expression: &str,
        params: &[String],
        schema: &dyn FilterSchema,
        grammar: Grammar,
    ) -> Result<Filter, FilterError> {
        let parsed = parser::parse(expression, schema, grammar)?;
        let mut f = Filter {
            expression: expression.to_string(),
            parsed,
            params: Vec::new(),
            param_text: Vec::new(),
        };
        f.set_parameters(params)?;
        Ok(f)
    }

    /// The expression as given.
    pub fn expression(&self) -> &str {
        &self.expression
    }

    /// The parameters, as given.
    pub fn parameters(&self) -> &[String] {
        &self.param_text
    }

    /// The member paths of the query's `ORDER BY`, as written, first first (none without).
    pub fn order_by(&self) -> Vec<&str> {
        self.parsed
            .order_by
            .iter()
            .map(|k| k.member.as_str())
            .collect()
    }

    /// Replaces the parameter values; an expression that uses `%n` needs at least n + 1.
    pub fn set_parameters(&mut self, params: &[String]) -> Result<(), FilterError> {
        if let Some(n) = self.parsed.max_param {
            if params.len() <= n {
                return Err(err(
                    self.expression.find(&format!("%{n}")).unwrap_or(0),
                    &format!("%{n}"),
                    format!("{} parameter(s) given, %{n} needs {}", params.len(), n + 1),
                ));
            }
        }
        self.params = params.iter().map(|s| param_value(s)).collect();
        self.param_text = params.to_vec();
        Ok(())
    }

    /// True if `sample` passes the filter (a query with no condition accepts every sample):
    /// a value of a [`Reflect`] type, a [`DynamicSample`], or any other [`Fields`].
    pub fn matches<S: Fields + ?Sized>(&self, sample: &S) -> bool {
        self.parsed
            .root
            .as_ref()
            .is_none_or(|root| eval::eval(root, sample, &self.params))
    }
}

/// A parameter's text as a literal: a quoted string, TRUE/FALSE, a number, or a name.
fn param_value(s: &str) -> Lit {
    let t = s.trim();
    let quoted = t.len() >= 2
        && ((t.starts_with('\'') && t.ends_with('\'')) || (t.starts_with('"') && t.ends_with('"')));
    if quoted {
        return Lit::Str(t[1..t.len() - 1].to_string());
    }
    if t.eq_ignore_ascii_case("TRUE") {
        return Lit::Bool(true);
    }
    if t.eq_ignore_ascii_case("FALSE") {
        return Lit::Bool(false);
    }
    if let Some((tok, _)) = number(t).filter(|(_, n)| *n == t.len()) {
        match tok {
            Tok::Int(v) => return Lit::Int(v),
            Tok::Float(v) => return Lit::Float(v),
            _ => {}
        }
    }
    // Unquoted text: a string to a string member, an enumerator to an enumeration.
    Lit::Str(t.to_string())
}

/// How a filter reads serialized samples (each with its encapsulation header): it decodes
/// one and lends it to `f`.
pub(crate) trait SampleDecoder: Send + Sync {
    /// Calls `f` with the decoded `payload`; false (and no call) when it does not decode.
    fn with_sample(&self, payload: &[u8], f: &mut dyn FnMut(&dyn Fields)) -> bool;
}

/// The decoder of samples of the Rust type `T`.
pub(crate) struct Typed<T>(PhantomData<fn() -> T>);

impl<T> Typed<T> {
    pub(crate) fn new() -> Self {
        Typed(PhantomData)
    }
}

impl<T: TopicType> SampleDecoder for Typed<T> {
    fn with_sample(&self, payload: &[u8], f: &mut dyn FnMut(&dyn Fields)) -> bool {
        match halyard_cdr::deserialize::<T>(payload) {
            Ok(v) => {
                f(&v);
                true
            }
            Err(_) => false,
        }
    }
}

impl SampleDecoder for DynamicType {
    fn with_sample(&self, payload: &[u8], f: &mut dyn FnMut(&dyn Fields)) -> bool {
        match crate::xtypes::dynamic::decode(self, payload) {
            Ok(v) => {
                f(&DynamicSample::new(self, &v));
                true
            }
            Err(_) => false,
        }
    }
}

/// A filter applied to serialized samples (decodes, then evaluates); shared by a reader and
/// the entity that owns its parameters.
pub(crate) type SampleFilter = Arc<dyn Fn(&[u8]) -> bool + Send + Sync>;

/// A filter whose parameters can change while readers use it.
pub(crate) type SharedFilter = Arc<RwLock<Filter>>;

/// The serialized-sample test of `filter` for samples `decoder` decodes. A payload that does
/// not decode passes (the application sees the decode failure when it takes the sample).
pub(crate) fn sample_filter(
    filter: &SharedFilter,
    decoder: Arc<dyn SampleDecoder>,
) -> SampleFilter {
    let f = Arc::clone(filter);
    Arc::new(move |payload: &[u8]| {
        let mut pass = true;
        let decoded = decoder.with_sample(payload, &mut |v| {
            pass = f.read().map_or(true, |g| g.matches(v));
        });
        pass || !decoded
    })
}

/// A writer's compiler of its readers' content filters for samples of `T`
/// (`halyard_core::FilterCompiler`): a DDSSQL filter whose expression parses against `T`
/// with its parameters, run on the decoded sample (a payload that does not decode passes, as
/// on the reader). Any other filter class, or an expression that does not fit `T`: none, and
/// that reader gets every sample.
pub(crate) fn writer_filter_compiler<T: TopicType>() -> halyard_core::FilterCompiler {
    filter_compiler(
        |e, p| Filter::new::<T>(e, p).ok(),
        Arc::new(Typed::<T>::new()),
    )
}

/// [`writer_filter_compiler`] for samples of a type known at run time: expressions bind to
/// `ty` and samples decode with it.
pub(crate) fn dynamic_filter_compiler(ty: DynamicType) -> halyard_core::FilterCompiler {
    let schema = ty.clone();
    filter_compiler(
        move |e, p| Filter::for_schema(e, p, &schema).ok(),
        Arc::new(ty),
    )
}

/// The compiler of DDSSQL announcements whose expressions `bind` parses, run on the samples
/// `decoder` decodes.
fn filter_compiler(
    bind: impl Fn(&str, &[String]) -> Option<Filter> + Send + Sync + 'static,
    decoder: Arc<dyn SampleDecoder>,
) -> halyard_core::FilterCompiler {
    Arc::new(move |p: &ContentFilterProperty| {
        if p.filter_class_name != DDSSQL {
            return None;
        }
        let f = bind(&p.filter_expression, &p.expression_parameters)?;
        let decoder = Arc::clone(&decoder);
        let test: SampleFilter = Arc::new(move |payload: &[u8]| {
            let mut pass = true;
            let decoded = decoder.with_sample(payload, &mut |v| pass = f.matches(v));
            pass || !decoded
        });
        Some(test)
    })
}

#[cfg(test)]
mod tests;
