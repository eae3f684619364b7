//! Known annotations (IDL 4.2 §8.3 standardized annotations, XTypes 1.3 §7.3.1.2) turned into
//! the typed fields of the tree. Unknown annotations stay in the `annotations` lists only.

use super::Resolver;
use crate::ast::{
    Annotation, AnnotationParams, AutoId, ConstValue, Expr, Extensibility, MemberAnnotations,
    TypeAnnotations,
};
use crate::error::ErrorKind;

impl Resolver {
    /// Reads the type-level annotations.
    pub(super) fn type_annotations(
        &mut self,
        scope: &[String],
        list: &mut [Annotation],
    ) -> TypeAnnotations {
        let mut t = TypeAnnotations::default();
        let mut nested = None;
        for a in list.iter_mut() {
            match a.name.as_str() {
                "final" | "appendable" | "mutable" | "extensibility" => {
                    let kind = self.extensibility(a);
                    if t.extensibility.is_some() && kind.is_some() {
                        self.bad(a, "clashes with an earlier extensibility annotation");
                    }
                    t.extensibility = t.extensibility.or(kind);
                }
                "autoid" => t.autoid = self.autoid(a).or(t.autoid),
                "topic" => t.topic |= self.topic_applies(a),
                "nested" => nested = Some(self.bool_param(scope, a)),
                "bit_bound" => {
                    t.bit_bound = self
                        .int_param(scope, a)
                        .and_then(|v| self.range_u32(a, v, 1, 64))
                }
                _ => {}
            }
        }
        // Cyclone DDS's rule: an explicit @nested wins, then @topic (not nested), then the
        // module's @default_nested.
        t.nested = nested.unwrap_or(!t.topic && self.default_nested);
        t
    }

    fn extensibility(&mut self, a: &Annotation) -> Option<Extensibility> {
        match a.name.as_str() {
            "final" => Some(Extensibility::Final),
            "appendable" => Some(Extensibility::Appendable),
            "mutable" => Some(Extensibility::Mutable),
            _ => {
                const WORDS: &[&str] = &["FINAL", "APPENDABLE", "MUTABLE"];
                match self.word_param(a, WORDS, "expects FINAL, APPENDABLE or MUTABLE")? {
                    "FINAL" => Some(Extensibility::Final),
                    "APPENDABLE" => Some(Extensibility::Appendable),
                    _ => Some(Extensibility::Mutable),
                }
            }
        }
    }

    fn autoid(&mut self, a: &Annotation) -> Option<AutoId> {
        if matches!(a.params, AnnotationParams::None) && a.raw.is_empty() {
            // IDL 4.2 §8.3.1.2: `AutoidKind value default HASH`.
            return Some(AutoId::Hash);
        }
        match self.word_param(a, &["SEQUENTIAL", "HASH"], "expects SEQUENTIAL or HASH")? {
            "HASH" => Some(AutoId::Hash),
            _ => Some(AutoId::Sequential),
        }
    }

    /// `@topic` applies unless its `platform` names a platform other than `*` or `DDS`.
    fn topic_applies(&mut self, a: &Annotation) -> bool {
        let AnnotationParams::Named(params) = &a.params else {
            return true;
        };
        let Some((_, platform)) = params.iter().find(|(n, _)| n.name == "platform") else {
            return true;
        };
        match &platform.expr {
            Expr::Str(p) => p == "*" || p == "DDS",
            _ => {
                self.bad(a, "`platform` expects a string");
                false
            }
        }
    }

    /// Reads the member-level annotations.
    pub(super) fn member_annotations(
        &mut self,
        scope: &[String],
        list: &mut [Annotation],
    ) -> MemberAnnotations {
        let mut m = MemberAnnotations::default();
        for a in list.iter_mut() {
            match a.name.as_str() {
                "key" => m.key = self.bool_param(scope, a),
                "optional" => m.optional = self.bool_param(scope, a),
                "external" => m.external = self.bool_param(scope, a),
                "must_understand" => m.must_understand = self.bool_param(scope, a),
                "id" => {
                    m.id = self
                        .int_param(scope, a)
                        .and_then(|v| self.range_u32(a, v, 0, 0x0FFF_FFFF))
                }
                "default" => match &mut a.params {
                    AnnotationParams::Single(e) => m.default = self.eval_fill(scope, e),
                    _ => self.bad(a, "expects one value"),
                },
                _ => {}
            }
        }
        m
    }

    /// The integer parameter of annotation `name` in `list`, if present.
    pub(super) fn annotation_int(
        &mut self,
        scope: &[String],
        list: &mut [Annotation],
        name: &str,
    ) -> Option<i64> {
        let a = list.iter_mut().find(|a| a.name == name)?;
        let v = self.int_param(scope, a)?;
        match i64::try_from(v) {
            Ok(v) => Some(v),
            Err(_) => {
                self.bad(a, "expects a 64-bit integer");
                None
            }
        }
    }

    fn bad(&mut self, a: &Annotation, reason: &'static str) {
        self.error(
            &a.location,
            ErrorKind::BadAnnotation {
                name: a.name.clone(),
                reason,
            },
        );
    }

    fn int_param(&mut self, scope: &[String], a: &mut Annotation) -> Option<i128> {
        let AnnotationParams::Single(e) = &mut a.params else {
            self.bad(a, "expects one integer");
            return None;
        };
        match self.eval_fill(scope, e) {
            Some(ConstValue::Int(v)) => Some(v),
            Some(_) => {
                self.bad(a, "expects one integer");
                None
            }
            None => None,
        }
    }

    fn range_u32(&mut self, a: &Annotation, v: i128, lo: u32, hi: u32) -> Option<u32> {
        match u32::try_from(v) {
            Ok(v) if (lo..=hi).contains(&v) => Some(v),
            _ => {
                self.bad(a, "value is out of range");
                None
            }
        }
    }

    /// `@a`, `@a(TRUE)` or `@a(FALSE)`.
    pub(super) fn bool_param(&mut self, scope: &[String], a: &mut Annotation) -> bool {
        match &mut a.params {
            AnnotationParams::None if a.raw.is_empty() => true,
            AnnotationParams::Single(e) => match self.eval_fill(scope, e) {
                Some(ConstValue::Bool(b)) => b,
                _ => {
                    self.bad(a, "expects TRUE or FALSE");
                    false
                }
            },
            _ => {
                self.bad(a, "expects TRUE or FALSE");
                false
            }
        }
    }

    /// A bare word parameter such as `@extensibility(MUTABLE)`.
    fn word_param(
        &mut self,
        a: &Annotation,
        words: &[&'static str],
        reason: &'static str,
    ) -> Option<&'static str> {
        let found = match &a.params {
            AnnotationParams::Single(e) => match &e.expr {
                Expr::Name(n) => n
                    .parts
                    .last()
                    .and_then(|w| words.iter().find(|x| **x == w.as_str()))
                    .copied(),
                _ => None,
            },
            _ => None,
        };
        if found.is_none() {
            self.bad(a, reason);
        }
        found
    }
}
