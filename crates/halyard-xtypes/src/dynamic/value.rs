//! [`DynamicValue`]: a sample of a [`super::DynamicType`], as a tree mirroring the type.

/// A value of a dynamic type. Aliases are transparent: a value of `typedef long T` is an
/// `Int32`. Structs hold one slot per member of the (flattened) struct, `None` for an absent
/// optional member; arrays hold their elements flattened in row-major order.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum DynamicValue {
    /// `boolean`.
    Bool(bool),
    /// `octet`.
    Byte(u8),
    /// `int8`.
    Int8(i8),
    /// `uint8`.
    UInt8(u8),
    /// `short`.
    Int16(i16),
    /// `unsigned short`.
    UInt16(u16),
    /// `long`.
    Int32(i32),
    /// `unsigned long`.
    UInt32(u32),
    /// `long long`.
    Int64(i64),
    /// `unsigned long long`.
    UInt64(u64),
    /// `float`.
    Float32(f32),
    /// `double`.
    Float64(f64),
    /// `char` (Latin-1, U+0000..=U+00FF).
    Char8(char),
    /// `wchar` (a UTF-16 code unit that is a whole character).
    Char16(char),
    /// `string` or `wstring`.
    String(String),
    /// An enumerator, by value.
    Enum(i32),
    /// A bitmask, as the integer of its bits.
    Bitmask(u64),
    /// A sequence.
    Sequence(Vec<DynamicValue>),
    /// An array (all dimensions flattened).
    Array(Vec<DynamicValue>),
    /// A map, as (key, value) pairs in wire order.
    Map(Vec<(DynamicValue, DynamicValue)>),
    /// A struct: one slot per member (base members first); `None` = absent optional.
    Struct(Vec<Option<DynamicValue>>),
    /// A union: the discriminator value and, unless no case is selected, the index of the
    /// selected case and its value.
    Union {
        /// The discriminator (integer, boolean, char, octet or enum value).
        discriminator: Box<DynamicValue>,
        /// Index into the union's cases and the value.
        case: Option<(usize, Box<DynamicValue>)>,
    },
}

impl DynamicValue {
    /// The integral value of a discriminator (booleans are 0/1, chars their code point).
    pub fn as_label(&self) -> Option<i64> {
        Some(match self {
            DynamicValue::Bool(b) => i64::from(*b),
            DynamicValue::Byte(v) | DynamicValue::UInt8(v) => i64::from(*v),
            DynamicValue::Int8(v) => i64::from(*v),
            DynamicValue::Int16(v) => i64::from(*v),
            DynamicValue::UInt16(v) => i64::from(*v),
            DynamicValue::Int32(v) | DynamicValue::Enum(v) => i64::from(*v),
            DynamicValue::UInt32(v) => i64::from(*v),
            DynamicValue::Int64(v) => *v,
            DynamicValue::UInt64(v) => i64::try_from(*v).ok()?,
            DynamicValue::Char8(c) | DynamicValue::Char16(c) => i64::from(u32::from(*c)),
            _ => return None,
        })
    }

    /// The member slot `index` of a struct value.
    pub fn field(&self, index: usize) -> Option<&DynamicValue> {
        match self {
            DynamicValue::Struct(v) => v.get(index).and_then(Option::as_ref),
            _ => None,
        }
    }
}
