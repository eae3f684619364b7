//! [`KeySupport`] of a type known at run time as a [`DynamicType`] (decoded from a
//! TypeObject, or compiled from IDL), for untyped topics: `halyard sub`/`pub` and the Python
//! binding use it.
//!
//! Design: the key hash of a full sample comes from the key scanner
//! ([`KeyScan`], which reads only the key members) when it covers the type and the sample,
//! else from a full decode; a key-only payload (dispose, unregister) and the serialized key
//! always go through the dynamic codec. Both ways give the same hash
//! (halyard-xtypes' `key_scan_equals_full_decode_on_random_types` checks it).

use halyard_cdr::{parse_encapsulation, CdrError};
use halyard_core::xtypes::dynamic::{self, DynamicError, DynamicType, KeyScan};

use crate::untyped::KeySupport;

/// [`KeySupport`] of a keyed [`DynamicType`]: see the module documentation.
#[derive(Debug)]
pub struct DynamicKeySupport {
    ty: DynamicType,
    scan: Option<KeyScan>,
}

impl DynamicKeySupport {
    /// The key support of `ty` (a keyed top-level struct; another type's samples fail to
    /// hash with [`CdrError::Unsupported`]).
    pub fn new(ty: DynamicType) -> Self {
        let scan = KeyScan::new(&ty);
        DynamicKeySupport { ty, scan }
    }

    /// The type.
    pub fn dynamic_type(&self) -> &DynamicType {
        &self.ty
    }

    /// True when full samples are hashed by the key scanner (no full decode) whenever they
    /// allow it.
    pub fn uses_key_scan(&self) -> bool {
        self.scan.is_some()
    }

    /// The key hash of a full sample by the key scanner only: `None` when the scanner does
    /// not cover the type or this sample (for tests and benchmarks of the scanner).
    pub fn scanned_key_hash(&self, sample: &[u8]) -> Option<[u8; 16]> {
        self.scan.as_ref().and_then(|s| s.key_hash(sample))
    }
}

/// A dynamic-codec error as the untyped endpoints report it.
fn cdr(e: DynamicError) -> CdrError {
    match e {
        DynamicError::Decode { .. } => {
            CdrError::InvalidHeader("the sample does not decode as the topic's type")
        }
        _ => CdrError::Unsupported("the topic's type cannot compute this key"),
    }
}

impl KeySupport for DynamicKeySupport {
    fn key_hash(&self, payload: &[u8], key_only: bool) -> Result<[u8; 16], CdrError> {
        if !key_only {
            if let Some(h) = self.scanned_key_hash(payload) {
                return Ok(h);
            }
        }
        let v = if key_only {
            dynamic::decode_key(&self.ty, payload)
        } else {
            dynamic::decode(&self.ty, payload)
        }
        .map_err(cdr)?;
        dynamic::key_hash(&self.ty, &v).map_err(cdr)
    }

    fn serialized_key(&self, sample: &[u8]) -> Result<Vec<u8>, CdrError> {
        let id = match sample {
            [a, b, ..] => u16::from_be_bytes([*a, *b]),
            _ => return Err(CdrError::Truncated),
        };
        let (rep, endianness) = parse_encapsulation(id)?;
        let v = dynamic::decode(&self.ty, sample).map_err(cdr)?;
        dynamic::encode_key(&self.ty, &v, rep, endianness).map_err(cdr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use halyard_cdr::{DataRepresentation, Endianness, Extensibility};
    use halyard_core::xtypes::dynamic::{DynamicValue, MemberDesc, StructDesc, TypeNode};
    use halyard_core::xtypes::PrimitiveKind;

    /// `struct S { @key uint32 id; sequence<octet> blob; }` of the given extensibility.
    fn keyed(extensibility: Extensibility) -> DynamicType {
        let m = |name: &str, id, ty, key| MemberDesc {
            name: name.into(),
            id,
            ty: DynamicType::new(ty),
            key,
            optional: false,
            must_understand: false,
            external: false,
        };
        let octet = DynamicType::new(TypeNode::Primitive(PrimitiveKind::UInt8));
        DynamicType::new(TypeNode::Struct(StructDesc {
            name: "S".into(),
            extensibility,
            base: None,
            members: vec![
                m("id", 1, TypeNode::Primitive(PrimitiveKind::UInt32), true),
                m(
                    "blob",
                    2,
                    TypeNode::Sequence {
                        element: octet,
                        bound: 0,
                    },
                    false,
                ),
            ],
            own_start: 0,
            names_known: true,
            nested: false,
        }))
    }

    #[test]
    fn keys_of_scanned_and_decoded_types_agree() {
        let v = DynamicValue::Struct(vec![
            Some(DynamicValue::UInt32(0x0102_0304)),
            Some(DynamicValue::Sequence(vec![DynamicValue::UInt8(9); 100])),
        ]);
        // A 4-byte key: the key hash is the key, big-endian, zero-padded (XTypes 7.6.8).
        let mut want = [0u8; 16];
        want[..4].copy_from_slice(&[1, 2, 3, 4]);
        for (ext, scanned) in [
            (Extensibility::Final, true),
            (Extensibility::Appendable, true),
            (Extensibility::Mutable, false),
        ] {
            let k = DynamicKeySupport::new(keyed(ext));
            assert_eq!(k.uses_key_scan(), scanned, "{ext:?}");
            for rep in [DataRepresentation::Xcdr1, DataRepresentation::Xcdr2] {
                for e in [Endianness::Little, Endianness::Big] {
                    let bytes = dynamic::encode(k.dynamic_type(), &v, rep, e).unwrap();
                    let by_scan = k.scanned_key_hash(&bytes);
                    assert_eq!(by_scan.is_some(), scanned && e == Endianness::Little);
                    assert!(by_scan.is_none_or(|h| h == want));
                    assert_eq!(k.key_hash(&bytes, false).unwrap(), want, "{ext:?} {rep:?}");
                    let key = k.serialized_key(&bytes).unwrap();
                    assert!(key.len() < bytes.len());
                    assert_eq!(k.key_hash(&key, true).unwrap(), want, "{ext:?} {rep:?}");
                    assert!(matches!(
                        k.key_hash(&bytes[..6], false),
                        Err(CdrError::InvalidHeader(_))
                    ));
                    assert_eq!(k.serialized_key(&bytes[..1]), Err(CdrError::Truncated));
                }
            }
        }
    }
}
