//! Evaluation of a parsed condition on one sample ([`Fields`]).
//!
//! Design. The tree is walked over the sample's members; a predicate whose member the sample
//! lacks (an index past a sequence's end, an unset optional member), or whose operands cannot
//! be compared, is false, `NOT BETWEEN` and `NOT LIKE` included (as SQL treats a NULL); `NOT`
//! in front of a condition negates what the condition gave. Operands compare as the member
//! they meet: integers exactly (64-bit values do not pass through floats), with floats
//! numerically, booleans as 0 and 1 (FALSE before TRUE), strings and characters by code
//! point, enumerators by value when compared with a number and otherwise by where they sort
//! in their enumeration ([`super::schema::Enumeration::rank`]).

use super::parser::{Field, Lit, Node, Op, Operand};
use super::schema::{enumerator, Fields, MemberKind, Value};
use std::cmp::Ordering;

/// True if `sample` satisfies `n`, with `params` for `%0`, `%1`, ...
pub(super) fn eval<S: Fields + ?Sized>(n: &Node, s: &S, params: &[Lit]) -> bool {
    match n {
        Node::And(a, b) => eval(a, s, params) && eval(b, s, params),
        Node::Or(a, b) => eval(a, s, params) || eval(b, s, params),
        Node::Not(a) => !eval(a, s, params),
        Node::Cmp(l, op, r) => compare(s, params, l, *op, r),
        Node::Between {
            field,
            lo,
            hi,
            negated,
        } => between(s, params, field, lo, hi) == Some(!*negated),
    }
}

/// Whether the member lies in `[lo, hi]`; `None` when an operand is missing.
fn between<S: Fields + ?Sized>(
    s: &S,
    params: &[Lit],
    field: &Field,
    lo: &Operand,
    hi: &Operand,
) -> Option<bool> {
    // The member is read once for both bounds.
    let v = s.value(&field.path)?;
    let (l, h) = (value(s, params, lo)?, value(s, params, hi)?);
    Some(
        holds(&field.kind, Val::Field(v.clone()), Op::Ge, l)
            && holds(&field.kind, Val::Field(v), Op::Le, h),
    )
}

fn value<'s, S: Fields + ?Sized>(s: &'s S, params: &'s [Lit], o: &'s Operand) -> Option<Val<'s>> {
    match o {
        Operand::Field(f) => s.value(&f.path).map(Val::Field),
        Operand::Lit(l) => Some(Val::Lit(l)),
        Operand::Param(n) => params.get(*n).map(Val::Lit),
    }
}

fn compare<S: Fields + ?Sized>(s: &S, params: &[Lit], l: &Operand, op: Op, r: &Operand) -> bool {
    let kind = match (l, r) {
        (Operand::Field(f), _) | (_, Operand::Field(f)) => &f.kind,
        _ => return false,
    };
    match (value(s, params, l), value(s, params, r)) {
        (Some(a), Some(b)) => holds(kind, a, op, b),
        _ => false,
    }
}

/// `a op b`, for operands compared as members of `kind`.
fn holds(kind: &MemberKind, a: Val<'_>, op: Op, b: Val<'_>) -> bool {
    if matches!(op, Op::Like | Op::NotLike) {
        return match (a.as_str(), b.as_str()) {
            (Some(text), Some(pattern)) => like(&text, &pattern) == (op == Op::Like),
            _ => false,
        };
    }
    let Some(ord) = order(&a, &b, kind) else {
        return false;
    };
    match op {
        Op::Eq => ord == Ordering::Equal,
        Op::Ne => ord != Ordering::Equal,
        Op::Lt => ord == Ordering::Less,
        Op::Le => ord != Ordering::Greater,
        Op::Gt => ord == Ordering::Greater,
        Op::Ge => ord != Ordering::Less,
        Op::Like | Op::NotLike => false,
    }
}

/// An operand's value during evaluation.
enum Val<'a> {
    Field(Value<'a>),
    Lit(&'a Lit),
}

impl Val<'_> {
    fn as_str(&self) -> Option<String> {
        match self {
            Val::Field(Value::Str(s)) => Some(s.to_string()),
            Val::Field(Value::Char(c)) => Some(c.to_string()),
            Val::Lit(Lit::Str(s)) => Some(s.clone()),
            _ => None,
        }
    }

    /// As a number: (exact integer, float); a boolean is 0 or 1.
    fn number(&self) -> Option<(Option<i128>, f64)> {
        match self {
            Val::Field(Value::Bool(b)) | Val::Lit(Lit::Bool(b)) => {
                Some((Some(i128::from(*b)), f64::from(u8::from(*b))))
            }
            Val::Field(Value::Int(v)) => Some((Some(i128::from(*v)), *v as f64)),
            Val::Field(Value::UInt(v)) => Some((Some(i128::from(*v)), *v as f64)),
            Val::Field(Value::Float(v)) => Some((None, *v)),
            Val::Lit(Lit::Int(v)) => Some((Some(*v), *v as f64)),
            Val::Lit(Lit::Float(v)) => Some((None, *v)),
            _ => None,
        }
    }

    /// As an enumerator of `kind`: where it sorts.
    fn enum_rank(&self, kind: &super::schema::Enumeration) -> Option<i64> {
        match self {
            Val::Field(Value::Enum { value, name }) => kind.rank_of(*value, *name),
            Val::Lit(Lit::Name(n) | Lit::Str(n)) => kind.rank(enumerator(n)),
            _ => None,
        }
    }
}

fn order(a: &Val<'_>, b: &Val<'_>, kind: &MemberKind) -> Option<Ordering> {
    if let MemberKind::Enum(e) = kind {
        // By value when compared with a number, else by rank.
        let num = |v: &Val<'_>| match v {
            Val::Field(Value::Enum { value, .. }) => Some(i128::from(*value)),
            Val::Lit(Lit::Int(i)) => Some(*i),
            _ => None,
        };
        if let (Some(x), Some(y)) = (num(a), num(b)) {
            if matches!(a, Val::Lit(Lit::Int(_))) || matches!(b, Val::Lit(Lit::Int(_))) {
                return Some(x.cmp(&y));
            }
        }
        return Some(a.enum_rank(e)?.cmp(&b.enum_rank(e)?));
    }
    if let (Some(x), Some(y)) = (a.number(), b.number()) {
        return match (x.0, y.0) {
            (Some(i), Some(j)) => Some(i.cmp(&j)),
            _ => x.1.partial_cmp(&y.1),
        };
    }
    Some(a.as_str()?.cmp(&b.as_str()?))
}

/// SQL LIKE: `%` matches any run of characters, `_` exactly one.
pub(super) fn like(text: &str, pattern: &str) -> bool {
    let t: Vec<char> = text.chars().collect();
    let p: Vec<char> = pattern.chars().collect();
    let (mut ti, mut pi) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '_' || (p[pi] != '%' && p[pi] == t[ti])) {
            ti += 1;
            pi += 1;
        } else if pi < p.len() && p[pi] == '%' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '%')
}
