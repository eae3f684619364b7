//! The typed syntax tree of an IDL specification (OMG IDL 4.2 §7.4).
//!
//! The parser builds it; the resolver then fills the `resolved`/`value` slots and the typed
//! annotation fields (`key`, `id`, `extensibility` ...), so a [`Spec`] returned by
//! [`crate::parse_str`] is checked and complete. Every node carries the [`Location`] of its
//! first character in the original source.

use crate::source::Location;

/// A whole specification: the definitions of the root file and everything it included.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    /// Top-level definitions in source order.
    pub definitions: Vec<Definition>,
    /// Every `#pragma` line, as written (the resolver also applies `keylist` ones).
    pub pragmas: Vec<Pragma>,
}

/// A `#pragma` line.
#[derive(Clone, Debug, PartialEq)]
pub struct Pragma {
    /// The text after `#pragma`.
    pub text: String,
    /// Where the `#` is.
    pub location: Location,
}

/// An identifier as written, with its location.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    /// The identifier.
    pub name: String,
    /// Where it is.
    pub location: Location,
}

/// A possibly scoped name such as `A`, `A::B` or `::A::B` (IDL 4.2 §7.4.1.4.1).
#[derive(Clone, Debug, PartialEq)]
pub struct ScopedName {
    /// Whether it starts with `::` (looked up from the global scope).
    pub absolute: bool,
    /// The components.
    pub parts: Vec<String>,
    /// Where it is.
    pub location: Location,
    /// The fully scoped name it refers to (`::A::B`), filled by the resolver.
    pub resolved: Option<String>,
}

impl std::fmt::Display for ScopedName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.absolute {
            write!(f, "::")?;
        }
        write!(f, "{}", self.parts.join("::"))
    }
}

/// An annotation application `@name` or `@name(params)` (IDL 4.2 §7.4.15.4). Unknown
/// annotations are kept like known ones; the resolver interprets the known ones.
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    /// The annotation name (last component if scoped).
    pub name: String,
    /// The parameters.
    pub params: AnnotationParams,
    /// The parameter text between the parentheses, as written (empty without parentheses).
    pub raw: String,
    /// Where the `@` is.
    pub location: Location,
}

/// The parameters of an annotation application.
#[derive(Clone, Debug, PartialEq)]
pub enum AnnotationParams {
    /// `@name` or `@name()`.
    None,
    /// `@name(expr)`.
    Single(ConstExpr),
    /// `@name(a = expr, b = expr)`.
    Named(Vec<(Ident, ConstExpr)>),
}

/// A top-level or module-level definition.
#[derive(Clone, Debug, PartialEq)]
pub enum Definition {
    /// `module M { ... };`
    Module(Module),
    /// `struct S { ... };`
    Struct(StructDef),
    /// `union U switch (T) { ... };`
    Union(UnionDef),
    /// `enum E { ... };`
    Enum(EnumDef),
    /// `bitmask B { ... };`
    Bitmask(BitmaskDef),
    /// `bitset B { ... };`
    Bitset(BitsetDef),
    /// `typedef T name, name[3];`
    Typedef(Typedef),
    /// `const T NAME = expr;`
    Const(ConstDef),
    /// `struct S;` or `union U;`
    Forward(ForwardDecl),
    /// An `interface`, `valuetype`, `exception` or `native` declaration, skipped.
    Unsupported(UnsupportedDecl),
}

/// `module name { definitions };` (IDL 4.2 §7.4.1.4.2). A module may be reopened.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    /// Annotations before `module`.
    pub annotations: Vec<Annotation>,
    /// The module name.
    pub name: Ident,
    /// Its definitions.
    pub definitions: Vec<Definition>,
    /// Where the definition starts: its first annotation, else the `module` keyword.
    pub location: Location,
}

/// Extensibility kind of a constructed type (XTypes 1.3 §7.2.2.4.4.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extensibility {
    /// `@final`
    Final,
    /// `@appendable`
    Appendable,
    /// `@mutable`
    Mutable,
}

/// Member id assignment of `@autoid` (XTypes 1.3 §7.3.1.2.1.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AutoId {
    /// Ids count up from the previous member's.
    Sequential,
    /// Ids are hashes of the member names.
    Hash,
}

/// The typed meaning of the known annotations of a type, filled by the resolver.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TypeAnnotations {
    /// `@final`, `@appendable`, `@mutable` or `@extensibility(..)`; `None` if not given
    /// (two of them on one type are an error).
    pub extensibility: Option<Extensibility>,
    /// `@autoid(..)`; a bare `@autoid` is `HASH` (IDL 4.2 §8.3.1.2); `None` if not given.
    pub autoid: Option<AutoId>,
    /// `@topic` was given for DDS: without `platform`, or with `platform` `"*"` or `"DDS"`
    /// (other parameters stay in the annotation list).
    pub topic: bool,
    /// The type is nested (never a topic type by itself): `@nested` or `@nested(TRUE)`;
    /// without `@nested`, false after `@topic`, else the enclosing module's
    /// `@default_nested`.
    pub nested: bool,
    /// `@bit_bound(N)` of an enum or bitmask.
    pub bit_bound: Option<u32>,
}

/// The typed meaning of the known annotations of a member, filled by the resolver.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemberAnnotations {
    /// `@key` (or named by `#pragma keylist`).
    pub key: bool,
    /// `@optional`.
    pub optional: bool,
    /// `@id(N)`.
    pub id: Option<u32>,
    /// `@default(v)`.
    pub default: Option<ConstValue>,
    /// `@external`.
    pub external: bool,
    /// `@must_understand`.
    pub must_understand: bool,
}

/// `struct name [: base] { members };` (IDL 4.2 §7.4.1.4.4.4.1, inheritance §7.4.13.4.2).
#[derive(Clone, Debug, PartialEq)]
pub struct StructDef {
    /// Annotations before `struct`.
    pub annotations: Vec<Annotation>,
    /// The struct name.
    pub name: Ident,
    /// The base struct, if any.
    pub base: Option<ScopedName>,
    /// The members, one per declarator (`long a, b;` gives two).
    pub members: Vec<Member>,
    /// Typed annotations, filled by the resolver.
    pub typed: TypeAnnotations,
    /// Where the definition starts: its first annotation, else the `struct` keyword.
    pub location: Location,
}

/// A struct member.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    /// Annotations before the member.
    pub annotations: Vec<Annotation>,
    /// The member type without array dimensions.
    pub type_spec: TypeSpec,
    /// The member name.
    pub name: Ident,
    /// Array dimensions, outermost first (empty if not an array).
    pub array: Vec<ConstExpr>,
    /// Typed annotations, filled by the resolver.
    pub typed: MemberAnnotations,
}

/// `union name switch (T) { cases };` (IDL 4.2 §7.4.1.4.4.4.2).
#[derive(Clone, Debug, PartialEq)]
pub struct UnionDef {
    /// Annotations before `union`.
    pub annotations: Vec<Annotation>,
    /// The union name.
    pub name: Ident,
    /// Annotations inside `switch (...)` (such as `@key`).
    pub discriminator_annotations: Vec<Annotation>,
    /// The discriminator type.
    pub discriminator: TypeSpec,
    /// The cases.
    pub cases: Vec<UnionCase>,
    /// Typed annotations, filled by the resolver.
    pub typed: TypeAnnotations,
    /// Where the definition starts: its first annotation, else the `union` keyword.
    pub location: Location,
}

/// One union element with its labels.
#[derive(Clone, Debug, PartialEq)]
pub struct UnionCase {
    /// The labels; several labels may select one element.
    pub labels: Vec<CaseLabel>,
    /// The element, which is a member with exactly one declarator.
    pub member: Member,
}

/// A union case label.
#[derive(Clone, Debug, PartialEq)]
pub enum CaseLabel {
    /// `case expr:`
    Value(ConstExpr),
    /// `default:`
    Default(Location),
}

/// `enum name { A, B @value(5), C };` (IDL 4.2 §7.4.1.4.4.4.3).
#[derive(Clone, Debug, PartialEq)]
pub struct EnumDef {
    /// Annotations before `enum`.
    pub annotations: Vec<Annotation>,
    /// The enum name.
    pub name: Ident,
    /// The enumerators in order.
    pub enumerators: Vec<Enumerator>,
    /// Typed annotations (`bit_bound`), filled by the resolver.
    pub typed: TypeAnnotations,
    /// Where the definition starts: its first annotation, else the `enum` keyword.
    pub location: Location,
}

/// An enumerator.
#[derive(Clone, Debug, PartialEq)]
pub struct Enumerator {
    /// Annotations (`@value(N)`, `@default_literal`).
    pub annotations: Vec<Annotation>,
    /// The name.
    pub name: Ident,
    /// Its value: `@value(N)`, or one more than the previous one; filled by the resolver.
    pub value: i64,
    /// Whether it has `@default_literal`.
    pub default_literal: bool,
}

/// `bitmask name { FLAG, FLAG @position(3) };` (IDL 4.2 §7.4.13.4.3.2).
#[derive(Clone, Debug, PartialEq)]
pub struct BitmaskDef {
    /// Annotations before `bitmask`.
    pub annotations: Vec<Annotation>,
    /// The bitmask name.
    pub name: Ident,
    /// The flags.
    pub flags: Vec<BitFlag>,
    /// Typed annotations (`bit_bound`), filled by the resolver.
    pub typed: TypeAnnotations,
    /// Where the definition starts: its first annotation, else the `bitmask` keyword.
    pub location: Location,
}

/// One flag of a bitmask.
#[derive(Clone, Debug, PartialEq)]
pub struct BitFlag {
    /// Annotations (`@position(N)`).
    pub annotations: Vec<Annotation>,
    /// The name.
    pub name: Ident,
    /// Its bit position; filled by the resolver.
    pub position: u32,
}

/// `bitset name [: base] { bitfield<3> a; bitfield<2, octet> b; };` (IDL 4.2 §7.4.13.4.3.1).
#[derive(Clone, Debug, PartialEq)]
pub struct BitsetDef {
    /// Annotations before `bitset`.
    pub annotations: Vec<Annotation>,
    /// The bitset name.
    pub name: Ident,
    /// The base bitset, if any.
    pub base: Option<ScopedName>,
    /// The bit fields.
    pub fields: Vec<BitField>,
    /// Where the definition starts: its first annotation, else the `bitset` keyword.
    pub location: Location,
}

/// `bitfield<width [, type]> names;`
#[derive(Clone, Debug, PartialEq)]
pub struct BitField {
    /// The width in bits.
    pub width: ConstExpr,
    /// The destination type, if given.
    pub type_spec: Option<TypeSpec>,
    /// The field names (none for padding).
    pub names: Vec<Ident>,
}

/// `typedef type declarators;` (IDL 4.2 §7.4.1.4.4.5).
#[derive(Clone, Debug, PartialEq)]
pub struct Typedef {
    /// Annotations before `typedef`.
    pub annotations: Vec<Annotation>,
    /// The aliased type.
    pub type_spec: TypeSpec,
    /// The new names, each possibly an array.
    pub declarators: Vec<Declarator>,
    /// Where the definition starts: its first annotation, else the `typedef` keyword.
    pub location: Location,
}

/// A name with optional array dimensions.
#[derive(Clone, Debug, PartialEq)]
pub struct Declarator {
    /// The name.
    pub name: Ident,
    /// Array dimensions, outermost first.
    pub array: Vec<ConstExpr>,
}

/// `const type NAME = expr;` (IDL 4.2 §7.4.1.4.3).
#[derive(Clone, Debug, PartialEq)]
pub struct ConstDef {
    /// Annotations before `const`.
    pub annotations: Vec<Annotation>,
    /// The declared type.
    pub type_spec: TypeSpec,
    /// The name.
    pub name: Ident,
    /// The value expression (its `value` is filled by the resolver).
    pub value: ConstExpr,
    /// Where the definition starts: its first annotation, else the `const` keyword.
    pub location: Location,
}

/// `struct name;` or `union name;` (IDL 4.2 §7.4.1.4.4.4.1).
#[derive(Clone, Debug, PartialEq)]
pub struct ForwardDecl {
    /// Whether it declares a union (else a struct).
    pub union: bool,
    /// The name.
    pub name: Ident,
    /// Where the keyword is.
    pub location: Location,
}

/// What kind of unsupported declaration was skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnsupportedKind {
    /// `interface`
    Interface,
    /// `valuetype`
    ValueType,
    /// `exception`
    Exception,
    /// `native`
    Native,
}

impl UnsupportedKind {
    /// The IDL keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            UnsupportedKind::Interface => "interface",
            UnsupportedKind::ValueType => "valuetype",
            UnsupportedKind::Exception => "exception",
            UnsupportedKind::Native => "native",
        }
    }
}

/// A skipped `interface`, `valuetype`, `exception` or `native` declaration. Using it as a
/// member type is an error; declaring it is not.
#[derive(Clone, Debug, PartialEq)]
pub struct UnsupportedDecl {
    /// What it is.
    pub kind: UnsupportedKind,
    /// Its name.
    pub name: Ident,
    /// Where the keyword is.
    pub location: Location,
}

/// A basic type (IDL 4.2 §7.4.1.4.4.2, with the §7.4.13 explicitly sized integers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BasicType {
    /// `short` / `int16`
    Short,
    /// `long` / `int32`
    Long,
    /// `long long` / `int64`
    LongLong,
    /// `unsigned short` / `uint16`
    UShort,
    /// `unsigned long` / `uint32`
    ULong,
    /// `unsigned long long` / `uint64`
    ULongLong,
    /// `int8`
    Int8,
    /// `uint8`
    UInt8,
    /// `float`
    Float,
    /// `double`
    Double,
    /// `long double`
    LongDouble,
    /// `char`
    Char,
    /// `wchar`
    WChar,
    /// `boolean`
    Boolean,
    /// `octet`
    Octet,
}

impl BasicType {
    /// The IDL spelling.
    pub fn idl_name(self) -> &'static str {
        match self {
            BasicType::Short => "short",
            BasicType::Long => "long",
            BasicType::LongLong => "long long",
            BasicType::UShort => "unsigned short",
            BasicType::ULong => "unsigned long",
            BasicType::ULongLong => "unsigned long long",
            BasicType::Int8 => "int8",
            BasicType::UInt8 => "uint8",
            BasicType::Float => "float",
            BasicType::Double => "double",
            BasicType::LongDouble => "long double",
            BasicType::Char => "char",
            BasicType::WChar => "wchar",
            BasicType::Boolean => "boolean",
            BasicType::Octet => "octet",
        }
    }

    /// The inclusive range of an integer type (octet included), `None` for others.
    pub fn integer_range(self) -> Option<(i128, i128)> {
        Some(match self {
            BasicType::Int8 => (i8::MIN as i128, i8::MAX as i128),
            BasicType::UInt8 | BasicType::Octet => (0, u8::MAX as i128),
            BasicType::Short => (i16::MIN as i128, i16::MAX as i128),
            BasicType::UShort => (0, u16::MAX as i128),
            BasicType::Long => (i32::MIN as i128, i32::MAX as i128),
            BasicType::ULong => (0, u32::MAX as i128),
            BasicType::LongLong => (i64::MIN as i128, i64::MAX as i128),
            BasicType::ULongLong => (0, u64::MAX as i128),
            _ => return None,
        })
    }
}

/// A type as written where a type is expected.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeSpec {
    /// A basic type.
    Basic(BasicType, Location),
    /// `string`, `string<N>`, `wstring`, `wstring<N>`.
    String {
        /// `wstring` rather than `string`.
        wide: bool,
        /// The bound, if any.
        bound: Option<Box<ConstExpr>>,
        /// Where the keyword is.
        location: Location,
    },
    /// `sequence<T>` or `sequence<T, N>`.
    Sequence {
        /// Annotations on the element type (`sequence<@external T>`).
        element_annotations: Vec<Annotation>,
        /// The element type.
        element: Box<TypeSpec>,
        /// The bound, if any.
        bound: Option<Box<ConstExpr>>,
        /// Where the keyword is.
        location: Location,
    },
    /// `map<K, V>` or `map<K, V, N>`.
    Map {
        /// The key type.
        key: Box<TypeSpec>,
        /// The value type.
        value: Box<TypeSpec>,
        /// The bound, if any.
        bound: Option<Box<ConstExpr>>,
        /// Where the keyword is.
        location: Location,
    },
    /// `fixed<digits, scale>`.
    Fixed {
        /// Total digits.
        digits: Box<ConstExpr>,
        /// Digits after the point.
        scale: Box<ConstExpr>,
        /// Where the keyword is.
        location: Location,
    },
    /// A reference to a declared type.
    Named(ScopedName),
}

impl TypeSpec {
    /// Where the type is written.
    pub fn location(&self) -> &Location {
        match self {
            TypeSpec::Basic(_, location)
            | TypeSpec::String { location, .. }
            | TypeSpec::Sequence { location, .. }
            | TypeSpec::Map { location, .. }
            | TypeSpec::Fixed { location, .. } => location,
            TypeSpec::Named(name) => &name.location,
        }
    }
}

/// A constant expression with its location; `value` is filled by the resolver.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstExpr {
    /// The expression.
    pub expr: Expr,
    /// Where it starts.
    pub location: Location,
    /// Its value once evaluated.
    pub value: Option<ConstValue>,
}

/// A constant expression (IDL 4.2 §7.4.1.4.3).
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// An integer literal.
    Int(u128),
    /// A floating-point literal.
    Float(f64),
    /// A string literal (`L"..."` too), escapes decoded.
    Str(String),
    /// A character literal (`L'x'` too), escapes decoded.
    Char(char),
    /// `TRUE` or `FALSE`.
    Bool(bool),
    /// A constant or enumerator name.
    Name(ScopedName),
    /// A unary operation.
    Unary(UnaryOp, Box<ConstExpr>),
    /// A binary operation.
    Binary(BinaryOp, Box<ConstExpr>, Box<ConstExpr>),
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `-`
    Neg,
    /// `+`
    Plus,
    /// `~`
    Not,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    /// `|`
    Or,
    /// `^`
    Xor,
    /// `&`
    And,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
}

impl BinaryOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Or => "|",
            BinaryOp::Xor => "^",
            BinaryOp::And => "&",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
        }
    }
}

/// The value of a constant expression.
#[derive(Clone, Debug, PartialEq)]
pub enum ConstValue {
    /// Any integer.
    Int(i128),
    /// Any floating-point number.
    Float(f64),
    /// A string.
    Str(String),
    /// A character.
    Char(char),
    /// A boolean.
    Bool(bool),
    /// An enumerator.
    Enum {
        /// The fully scoped enum type name.
        type_name: String,
        /// The enumerator name.
        name: String,
        /// Its value.
        value: i64,
    },
}

impl std::fmt::Display for ConstValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConstValue::Int(v) => write!(f, "{v}"),
            ConstValue::Float(v) => write!(f, "{v:?}"),
            ConstValue::Str(s) => write!(f, "{s:?}"),
            ConstValue::Char(c) => write!(f, "{c:?}"),
            ConstValue::Bool(b) => write!(f, "{}", if *b { "TRUE" } else { "FALSE" }),
            ConstValue::Enum {
                type_name, name, ..
            } => write!(f, "{type_name}::{name}"),
        }
    }
}
