//! Container types the IDL compiler maps IDL to, beyond `String`, `Vec` and arrays:
//! bounded strings and sequences (`string<N>`, `sequence<T, N>`), whose bound is checked when
//! encoding and when decoding, and maps (`map<K, V>` as a `BTreeMap`).
//!
//! A map travels as a sequence of key/value pairs (XTypes 1.3 §7.4.3.5.3: a length then the
//! pairs, key first); in XCDR2 a DHEADER precedes it unless both key and value are primitive,
//! as for a sequence of non-primitive elements.

use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};

use crate::{
    CdrDecode, CdrEncode, CdrError, CdrReader, CdrWriter, DataRepresentation, FieldKind,
    FieldValue, PathSegment, Reflect,
};

fn over_bound(length: usize, bound: usize) -> CdrError {
    CdrError::LengthTooLarge {
        length: length as u64,
        limit: bound as u64,
    }
}

/// `string<N>`: a string of at most `N` bytes (UTF-8, NUL excluded).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BoundedString<const N: usize>(pub String);

impl<const N: usize> BoundedString<N> {
    /// Wraps `s`; fails with [`CdrError::LengthTooLarge`] when it is longer than `N` bytes.
    pub fn new(s: impl Into<String>) -> Result<Self, CdrError> {
        let s = s.into();
        if s.len() > N {
            return Err(over_bound(s.len(), N));
        }
        Ok(BoundedString(s))
    }
}

impl<const N: usize> Deref for BoundedString<N> {
    type Target = String;
    fn deref(&self) -> &String {
        &self.0
    }
}

impl<const N: usize> DerefMut for BoundedString<N> {
    fn deref_mut(&mut self) -> &mut String {
        &mut self.0
    }
}

impl<const N: usize> CdrEncode for BoundedString<N> {
    fn encode(&self, w: &mut CdrWriter<'_>) -> Result<(), CdrError> {
        if self.0.len() > N {
            return Err(over_bound(self.0.len(), N));
        }
        w.write_string(&self.0)
    }
    fn key_max_end(offset: usize) -> Option<usize> {
        Some(offset.next_multiple_of(4) + 4 + N + 1)
    }
}

impl<const N: usize> CdrDecode for BoundedString<N> {
    fn decode(r: &mut CdrReader<'_>) -> Result<Self, CdrError> {
        let s = r.read_str()?;
        if s.len() > N {
            return Err(over_bound(s.len(), N));
        }
        Ok(BoundedString(s.to_string()))
    }
    fn min_size() -> usize {
        5
    }
}

impl<const N: usize> Reflect for BoundedString<N> {
    fn field(&self, path: &[PathSegment]) -> Option<FieldValue<'_>> {
        self.0.field(path)
    }
    fn field_kind(path: &[PathSegment]) -> Option<FieldKind> {
        String::field_kind(path)
    }
}

/// `sequence<T, N>`: at most `N` elements.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BoundedSeq<T, const N: usize>(pub Vec<T>);

impl<T, const N: usize> Default for BoundedSeq<T, N> {
    fn default() -> Self {
        BoundedSeq(Vec::new())
    }
}

impl<T, const N: usize> BoundedSeq<T, N> {
    /// Wraps `v`; fails with [`CdrError::LengthTooLarge`] when it has more than `N` elements.
    pub fn new(v: Vec<T>) -> Result<Self, CdrError> {
        if v.len() > N {
            return Err(over_bound(v.len(), N));
        }
        Ok(BoundedSeq(v))
    }
}

impl<T, const N: usize> Deref for BoundedSeq<T, N> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}

impl<T, const N: usize> DerefMut for BoundedSeq<T, N> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.0
    }
}

impl<T: CdrEncode, const N: usize> CdrEncode for BoundedSeq<T, N> {
    fn encode(&self, w: &mut CdrWriter<'_>) -> Result<(), CdrError> {
        if self.0.len() > N {
            return Err(over_bound(self.0.len(), N));
        }
        self.0.encode(w)
    }
}

impl<T: CdrDecode + CdrEncode, const N: usize> CdrDecode for BoundedSeq<T, N> {
    fn decode(r: &mut CdrReader<'_>) -> Result<Self, CdrError> {
        // The count is checked against the bound before the elements are read.
        let mut peek = r.clone();
        if needs_dheader::<T>(r.representation()) {
            peek.read_u32()?;
        }
        let n = peek.read_u32()? as usize;
        if n > N {
            return Err(over_bound(n, N));
        }
        Vec::<T>::decode(r).map(BoundedSeq)
    }
    fn min_size() -> usize {
        4
    }
}

impl<T: Reflect, const N: usize> Reflect for BoundedSeq<T, N> {
    fn field(&self, path: &[PathSegment]) -> Option<FieldValue<'_>> {
        self.0.field(path)
    }
    fn field_kind(path: &[PathSegment]) -> Option<FieldKind> {
        Vec::<T>::field_kind(path)
    }
    fn has_member(path: &[PathSegment]) -> bool {
        Vec::<T>::has_member(path)
    }
}

fn needs_dheader<T: CdrEncode>(rep: DataRepresentation) -> bool {
    rep == DataRepresentation::Xcdr2 && !T::is_primitive()
}

fn map_dheader<K: CdrEncode, V: CdrEncode>(rep: DataRepresentation) -> bool {
    rep == DataRepresentation::Xcdr2 && !(K::is_primitive() && V::is_primitive())
}

impl<K: CdrEncode, V: CdrEncode> CdrEncode for BTreeMap<K, V> {
    fn encode(&self, w: &mut CdrWriter<'_>) -> Result<(), CdrError> {
        let h = map_dheader::<K, V>(w.representation()).then(|| w.begin_dheader());
        w.write_seq_len(self.len())?;
        for (k, v) in self {
            k.encode(w)?;
            v.encode(w)?;
        }
        match h {
            Some(h) => w.end_dheader(h),
            None => Ok(()),
        }
    }
}

impl<K: CdrDecode + CdrEncode + Ord, V: CdrDecode + CdrEncode> CdrDecode for BTreeMap<K, V> {
    fn decode(r: &mut CdrReader<'_>) -> Result<Self, CdrError> {
        let body = |r: &mut CdrReader<'_>| {
            let n = r.read_seq_len(K::min_size().saturating_add(V::min_size()))?;
            let mut m = BTreeMap::new();
            for _ in 0..n {
                let k = K::decode(r)?;
                let v = V::decode(r)?;
                m.insert(k, v);
            }
            Ok(m)
        };
        if map_dheader::<K, V>(r.representation()) {
            r.with_dheader(body)
        } else {
            body(r)
        }
    }
    fn min_size() -> usize {
        4
    }
}

impl<K, V> Reflect for BTreeMap<K, V> {
    fn field(&self, _path: &[PathSegment]) -> Option<FieldValue<'_>> {
        None
    }
    fn field_kind(_path: &[PathSegment]) -> Option<FieldKind> {
        None
    }
    fn has_member(path: &[PathSegment]) -> bool {
        path.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc<T: CdrEncode>(v: &T, rep: DataRepresentation) -> Result<Vec<u8>, CdrError> {
        let mut out = Vec::new();
        v.encode(&mut CdrWriter::new(&mut out, rep))?;
        Ok(out)
    }

    fn dec<T: CdrDecode>(b: &[u8], rep: DataRepresentation) -> Result<T, CdrError> {
        T::decode(&mut CdrReader::new(b, rep, crate::Endianness::Little))
    }

    #[test]
    fn bounds_are_checked_both_ways() {
        let rep = DataRepresentation::Xcdr2;
        let long = BoundedString::<3>("abcd".into());
        assert!(matches!(
            enc(&long, rep),
            Err(CdrError::LengthTooLarge {
                length: 4,
                limit: 3
            })
        ));
        let bytes = enc(&"abcd".to_string(), rep).unwrap();
        assert!(matches!(
            dec::<BoundedString<3>>(&bytes, rep),
            Err(CdrError::LengthTooLarge { .. })
        ));
        assert_eq!(dec::<BoundedString<4>>(&bytes, rep).unwrap().0, "abcd");
        let seq = vec![1i32, 2, 3];
        let bytes = enc(&seq, rep).unwrap();
        assert!(dec::<BoundedSeq<i32, 2>>(&bytes, rep).is_err());
        assert_eq!(dec::<BoundedSeq<i32, 3>>(&bytes, rep).unwrap().0, seq);
        assert!(BoundedSeq::<i32, 2>::new(seq).is_err());
        let strs = vec!["a".to_string(), "b".to_string()];
        let bytes = enc(&strs, rep).unwrap();
        assert!(dec::<BoundedSeq<String, 1>>(&bytes, rep).is_err());
        assert_eq!(dec::<BoundedSeq<String, 2>>(&bytes, rep).unwrap().0, strs);
    }

    #[test]
    fn maps_are_sequences_of_pairs_with_a_dheader_unless_all_primitive() {
        let m: BTreeMap<i32, u8> = [(1, 7), (2, 9)].into();
        let b = enc(&m, DataRepresentation::Xcdr2).unwrap();
        assert_eq!(b, [2, 0, 0, 0, 1, 0, 0, 0, 7, 0, 0, 0, 2, 0, 0, 0, 9]);
        assert_eq!(
            dec::<BTreeMap<i32, u8>>(&b, DataRepresentation::Xcdr2).unwrap(),
            m
        );
        let s: BTreeMap<String, i32> = [("k".to_string(), 5)].into();
        let b = enc(&s, DataRepresentation::Xcdr2).unwrap();
        assert_eq!(
            b,
            [16, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, b'k', 0, 0, 0, 5, 0, 0, 0]
        );
        assert_eq!(
            dec::<BTreeMap<String, i32>>(&b, DataRepresentation::Xcdr2).unwrap(),
            s
        );
    }

    #[test]
    fn multi_dimensional_arrays_have_one_dheader_or_none() {
        let rep = DataRepresentation::Xcdr2;
        let a = [[1i32, 2, 3], [4, 5, 6]];
        let b = enc(&a, rep).unwrap();
        assert_eq!(b.len(), 24, "primitive elements: no DHEADER at any level");
        assert_eq!(dec::<[[i32; 3]; 2]>(&b, rep).unwrap(), a);
        let s = [["a".to_string()], ["b".to_string()]];
        let b = enc(&s, rep).unwrap();
        assert_eq!(
            b,
            [14, 0, 0, 0, 2, 0, 0, 0, b'a', 0, 0, 0, 2, 0, 0, 0, b'b', 0]
        );
        assert_eq!(dec::<[[String; 1]; 2]>(&b, rep).unwrap(), s);
    }
}
