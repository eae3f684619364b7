//! Keys and certificates for a secure set-up: the two self-signed CAs and the identity
//! certificates the identity CA issues. Everything through OpenSSL's X509 builder.
//!
//! The permissions CA signs the governance and permissions documents itself, so its
//! certificate carries `digitalSignature` as well as `keyCertSign`: OpenSSL's S/MIME checks
//! (which Cyclone DDS uses) look at the signer's key usage.

use openssl::asn1::{Asn1Integer, Asn1Time};
use openssl::bn::BigNum;
use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use openssl::rsa::Rsa;
use openssl::x509::extension::{
    AuthorityKeyIdentifier, BasicConstraints, KeyUsage, SubjectKeyIdentifier,
};
use openssl::x509::{X509Builder, X509Name, X509NameBuilder, X509};

use super::SetupError;
use crate::random::SecureRandom;

/// The key algorithm of generated keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeyKind {
    /// ECDSA on P-256 (prime256v1), the default.
    #[default]
    EcP256,
    /// RSA, 2048 bits.
    Rsa2048,
}

/// A certificate authority: certificate and private key.
pub struct Ca {
    /// The self-signed CA certificate.
    pub cert: X509,
    /// Its private key.
    pub key: PKey<Private>,
}

/// Generates a private key.
pub fn new_key(kind: KeyKind) -> Result<PKey<Private>, SetupError> {
    Ok(match kind {
        KeyKind::EcP256 => {
            let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1)?;
            PKey::from_ec_key(EcKey::generate(&group)?)?
        }
        KeyKind::Rsa2048 => PKey::from_rsa(Rsa::generate(2048)?)?,
    })
}

/// The subject `O=Halyard, CN=<cn>`, which OpenSSL (and so Cyclone) prints `CN=<cn>,O=Halyard`.
pub fn subject(cn: &str) -> Result<X509Name, SetupError> {
    let mut b = X509NameBuilder::new()?;
    b.append_entry_by_nid(Nid::ORGANIZATIONNAME, "Halyard")?;
    b.append_entry_by_nid(Nid::COMMONNAME, cn)?;
    Ok(b.build())
}

/// The permissions `<subject_name>` matching [`subject`]`(cn)`.
pub fn subject_string(cn: &str) -> String {
    format!("CN={cn},O=Halyard")
}

/// A validity window in Unix seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Validity {
    /// Start, Unix seconds.
    pub not_before: i64,
    /// End, Unix seconds.
    pub not_after: i64,
}

fn builder(
    subject_name: &X509Name,
    validity: Validity,
    rng: &mut dyn SecureRandom,
) -> Result<X509Builder, SetupError> {
    let mut b = X509Builder::new()?;
    b.set_version(2)?;
    let mut serial = [0u8; 16];
    rng.fill(&mut serial);
    serial[0] &= 0x7f; // positive
    let serial: BigNum = BigNum::from_slice(&serial)?;
    let serial: Asn1Integer = Asn1Integer::from_bn(&serial)?;
    b.set_serial_number(&serial)?;
    b.set_subject_name(subject_name)?;
    let not_before: Asn1Time = Asn1Time::from_unix(validity.not_before)?;
    let not_after: Asn1Time = Asn1Time::from_unix(validity.not_after)?;
    b.set_not_before(&not_before)?;
    b.set_not_after(&not_after)?;
    Ok(b)
}

/// A self-signed CA named `CN=<cn>,O=Halyard`.
pub fn make_ca(
    cn: &str,
    kind: KeyKind,
    validity: Validity,
    rng: &mut dyn SecureRandom,
) -> Result<Ca, SetupError> {
    let key = new_key(kind)?;
    let name = subject(cn)?;
    let mut b = builder(&name, validity, rng)?;
    b.set_issuer_name(&name)?;
    b.set_pubkey(&key)?;
    b.append_extension(BasicConstraints::new().critical().ca().build()?)?;
    let usage = KeyUsage::new()
        .critical()
        .digital_signature()
        .key_cert_sign()
        .crl_sign()
        .build()?;
    b.append_extension(usage)?;
    let ski = SubjectKeyIdentifier::new().build(&b.x509v3_context(None, None))?;
    b.append_extension(ski)?;
    b.sign(&key, MessageDigest::sha256())?;
    Ok(Ca {
        cert: b.build(),
        key,
    })
}

/// An identity certificate `CN=<cn>,O=Halyard` for `key`, issued by `ca`.
pub fn issue_identity(
    ca: &Ca,
    cn: &str,
    key: &PKey<Private>,
    validity: Validity,
    rng: &mut dyn SecureRandom,
) -> Result<X509, SetupError> {
    let mut b = builder(&subject(cn)?, validity, rng)?;
    b.set_issuer_name(ca.cert.subject_name())?;
    b.set_pubkey(key)?;
    b.append_extension(BasicConstraints::new().critical().build()?)?;
    b.append_extension(
        KeyUsage::new()
            .critical()
            .digital_signature()
            .key_agreement()
            .build()?,
    )?;
    let ski = SubjectKeyIdentifier::new().build(&b.x509v3_context(Some(&ca.cert), None))?;
    b.append_extension(ski)?;
    let aki = AuthorityKeyIdentifier::new()
        .keyid(false)
        .build(&b.x509v3_context(Some(&ca.cert), None))?;
    b.append_extension(aki)?;
    b.sign(&ca.key, MessageDigest::sha256())?;
    Ok(b.build())
}
