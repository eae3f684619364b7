//! Member access by name, for content-filtered topics and query conditions (DDS 1.4 Annex B:
//! a filter names members by dotted paths, `pos.x`, with `[i]` for sequence and array
//! elements). `#[derive(Topic)]` and `#[derive(CdrType)]` implement [`Reflect`] for structs
//! (by member name) and enums (by enumerator); this module implements it for primitives,
//! strings, sequences, arrays, optional members and boxes.

/// One step of a member path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathSegment {
    /// A struct member, by name.
    Member(String),
    /// An element of a sequence or an array.
    Index(usize),
}

/// A value a filter can compare.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldValue<'a> {
    /// A boolean.
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A floating-point number.
    Float(f64),
    /// A character.
    Char(char),
    /// A string.
    Str(&'a str),
    /// An enumerator: its value and name.
    Enum {
        /// Its numeric value.
        value: u32,
        /// Its name.
        name: &'static str,
    },
}

/// The kind of a member, known from the type alone (to check a filter when it is created).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// A boolean.
    Bool,
    /// A signed integer.
    Int,
    /// An unsigned integer.
    UInt,
    /// A floating-point number.
    Float,
    /// A character.
    Char,
    /// A string.
    Str,
    /// An enumeration, with its enumerators' names.
    Enum(&'static [&'static str]),
}

/// Access to the members of a value by path.
pub trait Reflect {
    /// The value at `path` (empty: this value itself, when it is a primitive, a string or an
    /// enumerator); `None` if there is no such member or element (a sequence index past the
    /// end, an absent optional member) or it is not comparable (a struct).
    fn field(&self, path: &[PathSegment]) -> Option<FieldValue<'_>>;

    /// The kind of the value at `path` in any value of this type; `None` if the type has no
    /// such comparable member.
    fn field_kind(path: &[PathSegment]) -> Option<FieldKind>
    where
        Self: Sized;

    /// True if values of this type have a member or element at `path`, comparable or not (a
    /// struct or a sequence too; the empty path is the value itself): what tells a member
    /// that cannot be compared from no member at all. The default knows the comparable ones
    /// only ([`Reflect::field_kind`]); structs, sequences, arrays, optional members and boxes
    /// know the others.
    fn has_member(path: &[PathSegment]) -> bool
    where
        Self: Sized,
    {
        Self::field_kind(path).is_some()
    }
}

macro_rules! reflect_scalar {
    ($($t:ty => $variant:ident as $conv:ty, $kind:ident;)*) => {$(
        impl Reflect for $t {
            fn field(&self, path: &[PathSegment]) -> Option<FieldValue<'_>> {
                path.is_empty().then(|| FieldValue::$variant(<$conv>::from(*self)))
            }
            fn field_kind(path: &[PathSegment]) -> Option<FieldKind> {
                path.is_empty().then_some(FieldKind::$kind)
            }
        }
    )*};
}

reflect_scalar! {
    bool => Bool as bool, Bool;
    i8 => Int as i64, Int;
    i16 => Int as i64, Int;
    i32 => Int as i64, Int;
    i64 => Int as i64, Int;
    u8 => UInt as u64, UInt;
    u16 => UInt as u64, UInt;
    u32 => UInt as u64, UInt;
    u64 => UInt as u64, UInt;
    f32 => Float as f64, Float;
    f64 => Float as f64, Float;
    char => Char as char, Char;
}

impl Reflect for String {
    fn field(&self, path: &[PathSegment]) -> Option<FieldValue<'_>> {
        path.is_empty().then_some(FieldValue::Str(self))
    }
    fn field_kind(path: &[PathSegment]) -> Option<FieldKind> {
        path.is_empty().then_some(FieldKind::Str)
    }
}

/// The element a path starting with an index names.
fn element<'a, T: Reflect>(items: &'a [T], path: &[PathSegment]) -> Option<FieldValue<'a>> {
    match path.split_first()? {
        (PathSegment::Index(i), rest) => items.get(*i)?.field(rest),
        _ => None,
    }
}

fn element_kind<T: Reflect>(path: &[PathSegment], len: Option<usize>) -> Option<FieldKind> {
    match path.split_first()? {
        (PathSegment::Index(i), rest) if len.is_none_or(|n| *i < n) => T::field_kind(rest),
        _ => None,
    }
}

/// Whether a sequence or array of `len` elements (`None`: unbounded) of `T` has `path`.
fn element_exists<T: Reflect>(path: &[PathSegment], len: Option<usize>) -> bool {
    match path.split_first() {
        None => true,
        Some((PathSegment::Index(i), rest)) => len.is_none_or(|n| *i < n) && T::has_member(rest),
        Some((PathSegment::Member(_), _)) => false,
    }
}

impl<T: Reflect> Reflect for Vec<T> {
    fn field(&self, path: &[PathSegment]) -> Option<FieldValue<'_>> {
        element(self, path)
    }
    fn field_kind(path: &[PathSegment]) -> Option<FieldKind> {
        element_kind::<T>(path, None)
    }
    fn has_member(path: &[PathSegment]) -> bool {
        element_exists::<T>(path, None)
    }
}

impl<T: Reflect, const N: usize> Reflect for [T; N] {
    fn field(&self, path: &[PathSegment]) -> Option<FieldValue<'_>> {
        element(self, path)
    }
    fn field_kind(path: &[PathSegment]) -> Option<FieldKind> {
        element_kind::<T>(path, Some(N))
    }
    fn has_member(path: &[PathSegment]) -> bool {
        element_exists::<T>(path, Some(N))
    }
}

impl<T: Reflect> Reflect for Option<T> {
    fn field(&self, path: &[PathSegment]) -> Option<FieldValue<'_>> {
        self.as_ref()?.field(path)
    }
    fn field_kind(path: &[PathSegment]) -> Option<FieldKind> {
        T::field_kind(path)
    }
    fn has_member(path: &[PathSegment]) -> bool {
        T::has_member(path)
    }
}

impl<T: Reflect> Reflect for Box<T> {
    fn field(&self, path: &[PathSegment]) -> Option<FieldValue<'_>> {
        (**self).field(path)
    }
    fn field_kind(path: &[PathSegment]) -> Option<FieldKind> {
        T::field_kind(path)
    }
    fn has_member(path: &[PathSegment]) -> bool {
        T::has_member(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_sequences_and_options() {
        let v: Vec<Option<i32>> = vec![Some(5), None];
        let idx = |i| vec![PathSegment::Index(i)];
        assert_eq!(v.field(&idx(0)), Some(FieldValue::Int(5)));
        assert_eq!(v.field(&idx(1)), None);
        assert_eq!(v.field(&idx(2)), None);
        assert_eq!(
            <Vec<Option<i32>>>::field_kind(&idx(7)),
            Some(FieldKind::Int)
        );
        assert_eq!(<[u8; 2]>::field_kind(&idx(2)), None);
        assert_eq!("hi".to_string().field(&[]), Some(FieldValue::Str("hi")));
        assert_eq!(3.5f32.field(&idx(0)), None);
    }

    #[test]
    fn has_member_knows_sequences_and_arrays_that_are_not_comparable() {
        let idx = |i| vec![PathSegment::Index(i)];
        assert!(<Vec<Vec<i32>>>::has_member(&[]));
        assert!(<Vec<Vec<i32>>>::has_member(&idx(3)));
        assert_eq!(<Vec<Vec<i32>>>::field_kind(&idx(3)), None);
        assert!(<Vec<Vec<i32>>>::has_member(&[idx(3), idx(1)].concat()));
        assert!(<Option<[u8; 2]>>::has_member(&idx(1)));
        assert!(!<[u8; 2]>::has_member(&idx(2)));
        assert!(!<Vec<i32>>::has_member(&[PathSegment::Member("x".into())]));
        assert!(i32::has_member(&[]));
        assert!(!i32::has_member(&idx(0)));
    }
}
