//! Octet constants of XTypes 1.3 §7.3.4.9 (TypeKind, TypeIdentifier kinds, EquivalenceKind)
//! and the 16-bit member and type flag words.

/// EquivalenceKind: the TypeIdentifier is the hash of a MinimalTypeObject.
pub const EK_MINIMAL: u8 = 0xf1;
/// EquivalenceKind: the TypeIdentifier is the hash of a CompleteTypeObject.
pub const EK_COMPLETE: u8 = 0xf2;
/// EquivalenceKind: a plain collection whose element identifiers are fully descriptive.
pub const EK_BOTH: u8 = 0xf3;

/// TypeKind: no type (e.g. the absent base type of a struct).
pub const TK_NONE: u8 = 0x00;
/// TypeKind `boolean`.
pub const TK_BOOLEAN: u8 = 0x01;
/// TypeKind `octet`.
pub const TK_BYTE: u8 = 0x02;
/// TypeKind `int16` / `short`.
pub const TK_INT16: u8 = 0x03;
/// TypeKind `int32` / `long`.
pub const TK_INT32: u8 = 0x04;
/// TypeKind `int64` / `long long`.
pub const TK_INT64: u8 = 0x05;
/// TypeKind `uint16`.
pub const TK_UINT16: u8 = 0x06;
/// TypeKind `uint32`.
pub const TK_UINT32: u8 = 0x07;
/// TypeKind `uint64`.
pub const TK_UINT64: u8 = 0x08;
/// TypeKind `float`.
pub const TK_FLOAT32: u8 = 0x09;
/// TypeKind `double`.
pub const TK_FLOAT64: u8 = 0x0a;
/// TypeKind `long double`.
pub const TK_FLOAT128: u8 = 0x0b;
/// TypeKind `int8`.
pub const TK_INT8: u8 = 0x0c;
/// TypeKind `uint8`.
pub const TK_UINT8: u8 = 0x0d;
/// TypeKind `char`.
pub const TK_CHAR8: u8 = 0x10;
/// TypeKind `wchar`.
pub const TK_CHAR16: u8 = 0x11;
/// TypeKind `string` (TypeObject level).
pub const TK_STRING8: u8 = 0x20;
/// TypeKind `wstring` (TypeObject level).
pub const TK_STRING16: u8 = 0x21;
/// TypeKind of a typedef.
pub const TK_ALIAS: u8 = 0x30;
/// TypeKind of an enum.
pub const TK_ENUM: u8 = 0x40;
/// TypeKind of a bitmask.
pub const TK_BITMASK: u8 = 0x41;
/// TypeKind of an annotation type.
pub const TK_ANNOTATION: u8 = 0x50;
/// TypeKind of a struct.
pub const TK_STRUCTURE: u8 = 0x51;
/// TypeKind of a union.
pub const TK_UNION: u8 = 0x52;
/// TypeKind of a bitset.
pub const TK_BITSET: u8 = 0x53;
/// TypeKind of a sequence.
pub const TK_SEQUENCE: u8 = 0x60;
/// TypeKind of an array.
pub const TK_ARRAY: u8 = 0x61;
/// TypeKind of a map.
pub const TK_MAP: u8 = 0x62;

/// TypeIdentifier kind: `string<N>` with N < 256 (0 = unbounded).
pub const TI_STRING8_SMALL: u8 = 0x70;
/// TypeIdentifier kind: `string<N>` with N ≥ 256.
pub const TI_STRING8_LARGE: u8 = 0x71;
/// TypeIdentifier kind: `wstring<N>` with N < 256 (0 = unbounded).
pub const TI_STRING16_SMALL: u8 = 0x72;
/// TypeIdentifier kind: `wstring<N>` with N ≥ 256.
pub const TI_STRING16_LARGE: u8 = 0x73;
/// TypeIdentifier kind: plain sequence with a bound < 256.
pub const TI_PLAIN_SEQUENCE_SMALL: u8 = 0x80;
/// TypeIdentifier kind: plain sequence with a bound ≥ 256.
pub const TI_PLAIN_SEQUENCE_LARGE: u8 = 0x81;
/// TypeIdentifier kind: plain array with every dimension < 256.
pub const TI_PLAIN_ARRAY_SMALL: u8 = 0x90;
/// TypeIdentifier kind: plain array with a dimension ≥ 256.
pub const TI_PLAIN_ARRAY_LARGE: u8 = 0x91;
/// TypeIdentifier kind: plain map with a bound < 256.
pub const TI_PLAIN_MAP_SMALL: u8 = 0xa0;
/// TypeIdentifier kind: plain map with a bound ≥ 256.
pub const TI_PLAIN_MAP_LARGE: u8 = 0xa1;
/// TypeIdentifier kind: a member of a strongly connected component (recursive types).
pub const TI_STRONGLY_CONNECTED_COMPONENT: u8 = 0xb0;

/// MemberFlag bits (XTypes 1.3 §7.3.4.5), used by struct/union members, collection
/// elements, enum literals and union discriminators.
pub mod member_flag {
    /// T1: try-construct bit 1 (01 = DISCARD, the default).
    pub const TRY_CONSTRUCT1: u16 = 1 << 0;
    /// T2: try-construct bit 2 (10 = USE_DEFAULT, 11 = TRIM).
    pub const TRY_CONSTRUCT2: u16 = 1 << 1;
    /// X: `@external`.
    pub const IS_EXTERNAL: u16 = 1 << 2;
    /// O: `@optional`.
    pub const IS_OPTIONAL: u16 = 1 << 3;
    /// M: `@must_understand`.
    pub const IS_MUST_UNDERSTAND: u16 = 1 << 4;
    /// K: `@key`.
    pub const IS_KEY: u16 = 1 << 5;
    /// D: `@default` union member or enum literal.
    pub const IS_DEFAULT: u16 = 1 << 6;
}

/// TypeFlag bits (XTypes 1.3 §7.3.4.5) of struct and union types.
pub mod type_flag {
    /// `@final`.
    pub const IS_FINAL: u16 = 1 << 0;
    /// `@appendable`.
    pub const IS_APPENDABLE: u16 = 1 << 1;
    /// `@mutable`.
    pub const IS_MUTABLE: u16 = 1 << 2;
    /// `@nested`.
    pub const IS_NESTED: u16 = 1 << 3;
    /// `@autoid(HASH)`.
    pub const IS_AUTOID_HASH: u16 = 1 << 4;
}
