//! Constant expression evaluation (IDL 4.2 §7.4.1.4.3): integers in `i128` with overflow
//! checks, floats in `f64` (an integer operand mixed with a float is promoted), strings,
//! chars, booleans and enumerators; then the value is checked against the declared type.

use super::{Class, Resolver, SymKind};
use crate::ast::{BasicType, BinaryOp, ConstExpr, ConstValue, Expr, TypeSpec, UnaryOp};
use crate::error::{ConstEvalError, Error, ErrorKind};

/// `Err(None)`: the failure was reported already (a constant used here has no value).
type EvalResult = Result<ConstValue, Option<Error>>;

impl Resolver {
    /// The value of constant `full`, evaluated once and checked against its declared type.
    pub(super) fn const_value(&mut self, full: &str) -> Option<ConstValue> {
        if let Some(v) = self.values.get(full) {
            return Some(v.clone());
        }
        if self.failed.contains(full) {
            return None;
        }
        let sym = self.symbols.get(full).cloned()?;
        let SymKind::Const {
            scope,
            type_spec,
            expr,
        } = sym.kind
        else {
            return None;
        };
        // The constant sees the names declared before it, wherever it is used from.
        let visible = std::mem::replace(&mut self.visible, sym.order);
        let value = self.const_value_inner(full, &scope, &type_spec, &expr);
        self.visible = visible;
        value
    }

    fn const_value_inner(
        &mut self,
        full: &str,
        scope: &[String],
        type_spec: &TypeSpec,
        expr: &ConstExpr,
    ) -> Option<ConstValue> {
        if !self.evaluating.insert(full.to_string()) {
            self.const_error(
                &expr.location,
                ConstEvalError::Cycle {
                    name: full.to_string(),
                },
            );
            return None;
        }
        let value = match self.eval(scope, expr) {
            Ok(v) => self.coerce(scope, type_spec, v, expr),
            Err(e) => {
                self.errors.extend(e);
                None
            }
        };
        self.evaluating.remove(full);
        match &value {
            Some(v) => self.values.insert(full.to_string(), v.clone()),
            None => self
                .failed
                .insert(full.to_string())
                .then_some(ConstValue::Bool(true)),
        };
        value
    }

    /// Checks `v` against the declared constant type and converts integers to floats.
    fn coerce(
        &mut self,
        scope: &[String],
        ts: &TypeSpec,
        v: ConstValue,
        expr: &ConstExpr,
    ) -> Option<ConstValue> {
        let class = self.classify(scope, ts, 0);
        let type_name = super::type_text(ts);
        let ok = match (&class, &v) {
            (Class::Basic(b), ConstValue::Int(i)) if b.integer_range().is_some() => {
                let (lo, hi) = b.integer_range().unwrap_or((0, 0));
                if !(lo..=hi).contains(i) {
                    let reason = ConstEvalError::OutOfRange {
                        value: i.to_string(),
                        type_name,
                    };
                    self.const_error(&expr.location, reason);
                    return None;
                }
                true
            }
            (
                Class::Basic(BasicType::Float | BasicType::Double | BasicType::LongDouble),
                ConstValue::Int(i),
            ) => {
                return Some(ConstValue::Float(*i as f64));
            }
            (
                Class::Basic(BasicType::Float | BasicType::Double | BasicType::LongDouble),
                ConstValue::Float(_),
            ) => true,
            (Class::Basic(BasicType::Char | BasicType::WChar), ConstValue::Char(_)) => true,
            (Class::Basic(BasicType::Boolean), ConstValue::Bool(_)) => true,
            (Class::String, ConstValue::Str(_)) => true,
            (Class::Fixed, ConstValue::Int(_) | ConstValue::Float(_)) => true,
            (Class::Enum(e), ConstValue::Enum { type_name, .. }) => e == type_name,
            (Class::Unknown, _) => true,
            _ => false,
        };
        if !ok {
            let reason = ConstEvalError::TypeMismatch {
                type_name,
                value: v.to_string(),
            };
            self.const_error(&expr.location, reason);
            return None;
        }
        Some(v)
    }

    /// Evaluates `e` in `scope`, stores the value in it and returns it (errors are recorded).
    pub(super) fn eval_fill(&mut self, scope: &[String], e: &mut ConstExpr) -> Option<ConstValue> {
        match self.eval(scope, e) {
            Ok(v) => {
                e.value = Some(v.clone());
                Some(v)
            }
            Err(err) => {
                self.errors.extend(err);
                None
            }
        }
    }

    /// Evaluates a bound or dimension that must be a positive integer.
    pub(super) fn positive(
        &mut self,
        scope: &[String],
        e: &mut ConstExpr,
        what: &'static str,
    ) -> Option<u64> {
        let v = self.eval_fill(scope, e)?;
        match v {
            ConstValue::Int(i) if i > 0 && i <= u32::MAX as i128 => Some(i as u64),
            other => {
                let reason = ConstEvalError::NotPositive {
                    what,
                    value: other.to_string(),
                };
                self.const_error(&e.location, reason);
                e.value = None;
                None
            }
        }
    }

    /// Evaluates `e` in `scope`.
    pub(super) fn eval(&mut self, scope: &[String], e: &ConstExpr) -> EvalResult {
        let err = |reason| {
            Some(Error::new(
                e.location.clone(),
                ErrorKind::ConstEval { reason },
            ))
        };
        Ok(match &e.expr {
            Expr::Int(i) => match i128::try_from(*i) {
                Ok(i) => ConstValue::Int(i),
                Err(_) => {
                    return Err(Some(Error::new(
                        e.location.clone(),
                        ErrorKind::BadLiteral {
                            text: i.to_string(),
                        },
                    )))
                }
            },
            Expr::Float(f) => ConstValue::Float(*f),
            Expr::Str(s) => ConstValue::Str(s.clone()),
            Expr::Char(c) => ConstValue::Char(*c),
            Expr::Bool(b) => ConstValue::Bool(*b),
            Expr::Name(name) => return self.eval_name(scope, name),
            Expr::Unary(op, operand) => {
                let v = self.eval(scope, operand)?;
                unary(*op, v).map_err(err)?
            }
            Expr::Binary(op, a, b) => {
                let a = self.eval(scope, a)?;
                let b = self.eval(scope, b)?;
                binary(*op, a, b).map_err(err)?
            }
        })
    }

    fn eval_name(&mut self, scope: &[String], name: &crate::ast::ScopedName) -> EvalResult {
        let Some(full) = self.lookup(scope, name) else {
            return Err(Some(self.not_found(scope, name)));
        };
        match &self.symbols[&full].kind {
            SymKind::Enumerator {
                enum_name,
                name,
                value,
            } => Ok(ConstValue::Enum {
                type_name: enum_name.clone(),
                name: name.clone(),
                value: *value,
            }),
            // A constant without a value had its error reported where it is defined.
            SymKind::Const { .. } => self.const_value(&full).ok_or(None),
            other => {
                let found = other.describe();
                Err(Some(Error::new(
                    name.location.clone(),
                    ErrorKind::WrongKind {
                        name: full,
                        expected: "constant",
                        found,
                    },
                )))
            }
        }
    }
}

fn kind_name(v: &ConstValue) -> &'static str {
    match v {
        ConstValue::Int(_) => "integer",
        ConstValue::Float(_) => "floating-point",
        ConstValue::Str(_) => "string",
        ConstValue::Char(_) => "char",
        ConstValue::Bool(_) => "boolean",
        ConstValue::Enum { .. } => "enumerator",
    }
}

fn unary(op: UnaryOp, v: ConstValue) -> Result<ConstValue, ConstEvalError> {
    let symbol = match op {
        UnaryOp::Neg => "-",
        UnaryOp::Plus => "+",
        UnaryOp::Not => "~",
    };
    match (op, v) {
        (UnaryOp::Neg, ConstValue::Int(i)) => Ok(ConstValue::Int(-i)),
        (UnaryOp::Neg, ConstValue::Float(f)) => Ok(ConstValue::Float(-f)),
        (UnaryOp::Plus, v @ (ConstValue::Int(_) | ConstValue::Float(_))) => Ok(v),
        (UnaryOp::Not, ConstValue::Int(i)) => Ok(ConstValue::Int(!i)),
        (_, v) => Err(ConstEvalError::BadOperands {
            op: symbol,
            operands: format!("a {} value", kind_name(&v)),
        }),
    }
}

fn binary(op: BinaryOp, a: ConstValue, b: ConstValue) -> Result<ConstValue, ConstEvalError> {
    let overflow = |a: i128, b: i128| ConstEvalError::OutOfRange {
        value: format!("{a} {} {b}", op.symbol()),
        type_name: "a 128-bit integer".into(),
    };
    match (a, b) {
        (ConstValue::Int(x), ConstValue::Int(y)) => {
            let r = match op {
                BinaryOp::Or => Some(x | y),
                BinaryOp::Xor => Some(x ^ y),
                BinaryOp::And => Some(x & y),
                BinaryOp::Shl => u32::try_from(y)
                    .ok()
                    .filter(|&s| s < 127)
                    .and_then(|s| x.checked_shl(s)),
                BinaryOp::Shr => u32::try_from(y)
                    .ok()
                    .filter(|&s| s < 127)
                    .and_then(|s| x.checked_shr(s)),
                BinaryOp::Add => x.checked_add(y),
                BinaryOp::Sub => x.checked_sub(y),
                BinaryOp::Mul => x.checked_mul(y),
                BinaryOp::Div | BinaryOp::Rem if y == 0 => {
                    return Err(ConstEvalError::DivisionByZero)
                }
                BinaryOp::Div => x.checked_div(y),
                BinaryOp::Rem => x.checked_rem(y),
            };
            r.map(ConstValue::Int).ok_or_else(|| overflow(x, y))
        }
        (
            a @ (ConstValue::Int(_) | ConstValue::Float(_)),
            b @ (ConstValue::Int(_) | ConstValue::Float(_)),
        ) => {
            let (x, y) = (as_float(&a), as_float(&b));
            let r = match op {
                BinaryOp::Add => x + y,
                BinaryOp::Sub => x - y,
                BinaryOp::Mul => x * y,
                BinaryOp::Div if y == 0.0 => return Err(ConstEvalError::DivisionByZero),
                BinaryOp::Div => x / y,
                _ => return Err(bad(op, &a, &b)),
            };
            Ok(ConstValue::Float(r))
        }
        (a, b) => Err(bad(op, &a, &b)),
    }
}

fn as_float(v: &ConstValue) -> f64 {
    match v {
        ConstValue::Int(i) => *i as f64,
        ConstValue::Float(f) => *f,
        _ => 0.0,
    }
}

fn bad(op: BinaryOp, a: &ConstValue, b: &ConstValue) -> ConstEvalError {
    ConstEvalError::BadOperands {
        op: op.symbol(),
        operands: format!("{} and {} values", kind_name(a), kind_name(b)),
    }
}
