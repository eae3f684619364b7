//! Ephemeral key agreement for the handshake: ECDH on prime256v1 and finite-field DH on the
//! RFC 5114 2048-bit MODP group with a 256-bit subgroup.
//!
//! # Facts established (Cyclone DDS 0.10.2 `authentication/src/auth_utils.c`)
//!
//! * `c.kagree_algo` names: `ECDH+prime256v1-CEUM` and `DH+MODP-2048-256` (authentication.c).
//!   Cyclone's initiator always uses ECDH, whatever its certificate (`local_identity_info_new`
//!   sets `kagreeAlgoKind = EC_PRIME256V1`); a replier uses the algorithm named in the Request.
//! * ECDH public keys (`dh1`, `dh2`) are the uncompressed point, 65 bytes `04 || X || Y`
//!   (`dh_public_key_to_oct_ecdh`: `EC_POINT_point2oct(.., POINT_CONVERSION_UNCOMPRESSED)`).
//! * MODP public keys are the DER encoding of an ASN.1 INTEGER holding the public value
//!   (`dh_public_key_to_oct_modp`: `BN_to_ASN1_INTEGER` + `i2d_ASN1_INTEGER`), in the group
//!   of OpenSSL's `DH_get_2048_256()`.
//! * Fast DDS 2.9 (`src/cpp/security/authentication/PKIDH.cpp`, `store_dh_public_key`) sends a
//!   MODP public key as the bare big-endian value (`BN_bn2bin`, 256 octets at most), not as a DER
//!   INTEGER. Both forms are accepted; a replier answers in the form of the Request's `dh1`
//!   ([`DhEncoding`]), and signs and hashes the key as it went on the wire.
//! * The shared secret is SHA-256 of the raw `EVP_PKEY_derive` output (the X coordinate for
//!   ECDH; the unpadded big-endian value for DH) (authentication.c `generate_shared_secret`).
//! * Our ephemeral private keys come from [`SecureRandom`] (a scalar in `[1, n)` for EC, an
//!   exponent in `[2, q-2]` for DH), so a seeded run replays. The DER INTEGER framing is
//!   written and parsed here (format only; the arithmetic is OpenSSL's).

use super::error::AuthError;
use crate::random::SecureRandom;
use openssl::bn::{BigNum, BigNumContext};
use openssl::derive::Deriver;
use openssl::dh::Dh;
use openssl::ec::{EcGroup, EcKey, EcPoint, PointConversionForm};
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private, Public};
use openssl::sha::sha256;
use zeroize::Zeroizing;

/// The key agreement algorithms of PKI-DH.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyAgreement {
    /// ECDH on prime256v1 (`ECDH+prime256v1-CEUM`), what Cyclone's initiator always uses.
    EcdhP256,
    /// Diffie-Hellman on the 2048-bit MODP group with a 256-bit subgroup (`DH+MODP-2048-256`).
    DhModp2048,
}

impl KeyAgreement {
    /// The value of `c.kagree_algo` (without the NUL Cyclone appends on the wire).
    pub fn name(self) -> &'static str {
        match self {
            KeyAgreement::EcdhP256 => "ECDH+prime256v1-CEUM",
            KeyAgreement::DhModp2048 => "DH+MODP-2048-256",
        }
    }

    /// Recognises a `c.kagree_algo` value, with or without one trailing NUL.
    pub fn from_wire(value: &[u8]) -> Option<Self> {
        let v = value.strip_suffix(&[0]).unwrap_or(value);
        [KeyAgreement::EcdhP256, KeyAgreement::DhModp2048]
            .into_iter()
            .find(|k| k.name().as_bytes() == v)
    }
}

/// Attempts at drawing a valid EC scalar before giving up (each fails with probability 2^-32).
const MAX_SCALAR_DRAWS: usize = 16;

/// How a MODP public key is written in `dh1` / `dh2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DhEncoding {
    /// A DER INTEGER (the specification, Cyclone DDS).
    Der,
    /// The bare big-endian value (Fast DDS).
    Raw,
}

/// An ephemeral key pair and the wire encoding of its public half.
pub(crate) struct EphemeralKey {
    algo: KeyAgreement,
    key: PKey<Private>,
    public: Vec<u8>,
}

impl EphemeralKey {
    /// Draws a key pair for `algo` from `rng`.
    pub(crate) fn generate(
        algo: KeyAgreement,
        rng: &mut dyn SecureRandom,
    ) -> Result<Self, AuthError> {
        Self::generate_encoded(algo, DhEncoding::Der, rng)
    }

    /// Draws a key pair for `algo` whose MODP public key is written as `encoding`.
    pub(crate) fn generate_encoded(
        algo: KeyAgreement,
        encoding: DhEncoding,
        rng: &mut dyn SecureRandom,
    ) -> Result<Self, AuthError> {
        match algo {
            KeyAgreement::EcdhP256 => generate_ec(rng),
            KeyAgreement::DhModp2048 => generate_dh(rng, encoding),
        }
    }

    /// The key agreement this key is for.
    pub(crate) fn algorithm(&self) -> KeyAgreement {
        self.algo
    }

    /// The public key as it goes in `dh1` / `dh2`.
    pub(crate) fn public(&self) -> &[u8] {
        &self.public
    }

    /// SHA-256 of the raw agreement with the peer's public key.
    pub(crate) fn agree(&self, peer: &PKey<Public>) -> Result<Zeroizing<[u8; 32]>, AuthError> {
        let mut d = Deriver::new(&self.key)?;
        d.set_peer(peer)?;
        let raw = Zeroizing::new(d.derive_to_vec()?);
        Ok(Zeroizing::new(sha256(&raw)))
    }
}

fn p256() -> Result<EcGroup, AuthError> {
    Ok(EcGroup::from_curve_name(Nid::X9_62_PRIME256V1)?)
}

fn generate_ec(rng: &mut dyn SecureRandom) -> Result<EphemeralKey, AuthError> {
    let group = p256()?;
    let mut ctx = BigNumContext::new()?;
    let mut order = BigNum::new()?;
    group.order(&mut order, &mut ctx)?;
    for _ in 0..MAX_SCALAR_DRAWS {
        let mut bytes = Zeroizing::new([0u8; 32]);
        rng.fill(&mut bytes[..]);
        let mut scalar = BigNum::from_slice(&bytes[..])?;
        if scalar.num_bits() == 0 || scalar >= order {
            scalar.clear();
            continue;
        }
        let mut point = EcPoint::new(&group)?;
        point.mul_generator2(&group, &scalar, &mut ctx)?;
        let ec = EcKey::from_private_components(&group, &scalar, &point)?;
        scalar.clear();
        let public = point.to_bytes(&group, PointConversionForm::UNCOMPRESSED, &mut ctx)?;
        return Ok(EphemeralKey {
            algo: KeyAgreement::EcdhP256,
            key: PKey::from_ec_key(ec)?,
            public,
        });
    }
    Err(AuthError::Crypto(
        "the random source gave no valid P-256 scalar".into(),
    ))
}

fn generate_dh(
    rng: &mut dyn SecureRandom,
    encoding: DhEncoding,
) -> Result<EphemeralKey, AuthError> {
    let params = Dh::get_2048_256()?;
    let q = params
        .prime_q()
        .ok_or_else(|| AuthError::Crypto("DH_get_2048_256 has no q".into()))?;
    let mut ctx = BigNumContext::new()?;
    // x = 2 + (r mod (q - 3)) lies in [2, q-2]; r has 64 bits more than q, so the bias is
    // negligible.
    let mut bytes = Zeroizing::new([0u8; 40]);
    rng.fill(&mut bytes[..]);
    let mut r = BigNum::from_slice(&bytes[..])?;
    let mut q3 = q.to_owned()?;
    q3.sub_word(3)?;
    let mut x = BigNum::new()?;
    x.nnmod(&r, &q3, &mut ctx)?;
    r.clear();
    x.add_word(2)?;
    let dh = params.set_private_key(x)?;
    let public = match encoding {
        DhEncoding::Der => der_integer(&dh.public_key().to_vec()),
        DhEncoding::Raw => dh.public_key().to_vec(),
    };
    Ok(EphemeralKey {
        algo: KeyAgreement::DhModp2048,
        key: PKey::from_dh(dh)?,
        public,
    })
}

/// Parses a peer's `dh1` / `dh2` for `algo`; also returns its canonical re-encoding (what
/// Cyclone signs and compares: the key as it re-serializes it) and how a MODP key was written.
pub(crate) fn parse_public(
    algo: KeyAgreement,
    bytes: &[u8],
    name: &'static str,
) -> Result<(PKey<Public>, Vec<u8>, DhEncoding), AuthError> {
    let bad = |why| AuthError::BadProperty { name, why };
    match algo {
        KeyAgreement::EcdhP256 => {
            let group = p256()?;
            let mut ctx = BigNumContext::new()?;
            let point = EcPoint::from_bytes(&group, bytes, &mut ctx)
                .map_err(|_| bad("not a P-256 point"))?;
            let canonical = point.to_bytes(&group, PointConversionForm::UNCOMPRESSED, &mut ctx)?;
            let ec = EcKey::from_public_key(&group, &point)?;
            ec.check_key()
                .map_err(|_| bad("not a valid P-256 public key"))?;
            Ok((PKey::from_ec_key(ec)?, canonical, DhEncoding::Der))
        }
        KeyAgreement::DhModp2048 => {
            let (magnitude, encoding) = match parse_der_integer(bytes) {
                Some(m) => (m, DhEncoding::Der),
                None if bytes.len() <= 256 => (bytes, DhEncoding::Raw),
                None => return Err(bad("neither a DER INTEGER nor a 2048-bit value")),
            };
            let y = BigNum::from_slice(magnitude)?;
            let params = Dh::get_2048_256()?;
            let mut p_minus_1 = params.prime_p().to_owned()?;
            p_minus_1.sub_word(1)?;
            if y.num_bits() <= 1 || y >= p_minus_1 {
                return Err(bad("DH public value out of range"));
            }
            // It must lie in the order-q subgroup: y^q = 1 (mod p).
            let q = params
                .prime_q()
                .ok_or_else(|| AuthError::Crypto("DH_get_2048_256 has no q".into()))?;
            let mut ctx = BigNumContext::new()?;
            let mut check = BigNum::new()?;
            check.mod_exp(&y, q, params.prime_p(), &mut ctx)?;
            if check != BigNum::from_u32(1)? {
                return Err(bad("DH public value outside the 256-bit subgroup"));
            }
            let canonical = match encoding {
                DhEncoding::Der => der_integer(magnitude),
                DhEncoding::Raw => bytes.to_vec(),
            };
            let dh = params.set_public_key(y)?;
            Ok((PKey::from_dh(dh)?, canonical, encoding))
        }
    }
}

/// DER of a non-negative INTEGER given its big-endian magnitude (leading zeros stripped).
fn der_integer(magnitude: &[u8]) -> Vec<u8> {
    let first = magnitude
        .iter()
        .position(|&b| b != 0)
        .unwrap_or(magnitude.len());
    let m = &magnitude[first..];
    let mut content = Vec::with_capacity(m.len() + 1);
    if !matches!(m.first(), Some(&b) if b & 0x80 == 0) {
        content.push(0);
    }
    content.extend_from_slice(m);
    let mut out = vec![0x02];
    let n = content.len();
    if n < 0x80 {
        out.push(n as u8);
    } else if n < 0x100 {
        out.extend_from_slice(&[0x81, n as u8]);
    } else {
        out.extend_from_slice(&[0x82, (n >> 8) as u8, n as u8]);
    }
    out.extend_from_slice(&content);
    out
}

/// The magnitude of a strictly DER-encoded non-negative INTEGER filling all of `der`.
fn parse_der_integer(der: &[u8]) -> Option<&[u8]> {
    let (&tag, rest) = der.split_first()?;
    if tag != 0x02 {
        return None;
    }
    let (&l0, rest) = rest.split_first()?;
    let (len, content) = match l0 {
        0..=0x7f => (usize::from(l0), rest),
        0x81 => {
            let (&l, c) = rest.split_first()?;
            (l >= 0x80).then_some((usize::from(l), c))?
        }
        0x82 => {
            let [hi, lo, c @ ..] = rest else { return None };
            let l = usize::from(*hi) << 8 | usize::from(*lo);
            (l >= 0x100).then_some((l, c))?
        }
        _ => return None,
    };
    if content.len() != len || len == 0 {
        return None;
    }
    match content {
        [b, ..] if b & 0x80 != 0 => None,    // negative
        [0, b, ..] if b & 0x80 == 0 => None, // non-minimal
        [0] => Some(&content[..0]),
        [0, m @ ..] => Some(m),
        m => Some(m),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::SeededRandom;

    #[test]
    fn der_integer_round_trips_and_is_strict() {
        for m in [
            &[0x01u8][..],
            &[0x7f],
            &[0x80],
            &[0xff; 256][..],
            &[0x12; 200][..],
        ] {
            let d = der_integer(m);
            assert_eq!(parse_der_integer(&d), Some(m), "{m:?}");
        }
        assert_eq!(der_integer(&[0x80]), vec![0x02, 0x02, 0x00, 0x80]);
        assert_eq!(parse_der_integer(&[0x02, 0x02, 0x00, 0x01]), None);
        assert_eq!(parse_der_integer(&[0x02, 0x01, 0x80]), None);
        assert_eq!(parse_der_integer(&[0x02, 0x81, 0x01, 0x01]), None);
        assert_eq!(parse_der_integer(&[0x02, 0x02, 0x01]), None);
        assert_eq!(parse_der_integer(&[]), None);
    }

    #[test]
    fn both_agreements_give_equal_secrets_and_replay_from_a_seed() {
        for algo in [KeyAgreement::EcdhP256, KeyAgreement::DhModp2048] {
            let mut r1 = SeededRandom::new(1);
            let a = EphemeralKey::generate(algo, &mut r1).unwrap();
            let b = EphemeralKey::generate(algo, &mut SeededRandom::new(2)).unwrap();
            let again = EphemeralKey::generate(algo, &mut SeededRandom::new(1)).unwrap();
            assert_eq!(a.public(), again.public());
            let (pa, ca, _) = parse_public(algo, a.public(), "dh1").unwrap();
            let (pb, cb, _) = parse_public(algo, b.public(), "dh2").unwrap();
            assert_eq!(ca, a.public());
            assert_eq!(cb, b.public());
            assert_eq!(*a.agree(&pb).unwrap(), *b.agree(&pa).unwrap());
            // Fast DDS writes a MODP key bare: it is read, and answered, in that form.
            let raw =
                EphemeralKey::generate_encoded(algo, DhEncoding::Raw, &mut SeededRandom::new(3))
                    .unwrap();
            let (pr, cr, enc) = parse_public(algo, raw.public(), "dh1").unwrap();
            assert_eq!(cr, raw.public());
            assert_eq!(*raw.agree(&pa).unwrap(), *a.agree(&pr).unwrap());
            if algo == KeyAgreement::DhModp2048 {
                assert_eq!(enc, DhEncoding::Raw);
                assert!(raw.public().len() <= 256);
            }
            if algo == KeyAgreement::EcdhP256 {
                assert_eq!(a.public().len(), 65);
                assert_eq!(a.public()[0], 4);
            } else {
                assert_eq!(a.public()[0], 0x02);
            }
        }
    }

    #[test]
    fn bad_public_keys_are_refused() {
        assert!(parse_public(KeyAgreement::EcdhP256, &[4; 65], "dh1").is_err());
        assert!(parse_public(KeyAgreement::EcdhP256, &[], "dh1").is_err());
        assert!(parse_public(KeyAgreement::DhModp2048, &[0x02, 0x01, 0x01], "dh1").is_err());
        assert!(parse_public(KeyAgreement::DhModp2048, &[0x04, 0x01, 0x01], "dh1").is_err());
        assert_eq!(
            KeyAgreement::from_wire(b"DH+MODP-2048-256\0"),
            Some(KeyAgreement::DhModp2048)
        );
        assert_eq!(
            KeyAgreement::from_wire(b"ECDH+prime256v1-CEUM"),
            Some(KeyAgreement::EcdhP256)
        );
        assert_eq!(KeyAgreement::from_wire(b"ECDH+prime256v1-CEUM\0\0"), None);
    }
}
