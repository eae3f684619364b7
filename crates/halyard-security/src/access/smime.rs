//! Signed documents (DDS Security 1.1 §9.4.1.2.3, §9.4.1.3.3): the governance and permissions
//! XML travel as S/MIME signed by the permissions CA.
//!
//! Cyclone DDS reads them with `SMIME_read_PKCS7` and checks them with
//! `PKCS7_verify(.., PKCS7_TEXT)` against a store holding only the permissions CA
//! (`access_control_utils.c`, `ac_PKCS7_document_check`). So the signed form is the *text*
//! S/MIME one (`openssl smime -sign -text`): a clear-signed `multipart/signed` message whose
//! first part starts with `Content-Type: text/plain`. [`sign`] writes exactly that form and
//! [`verify`] accepts exactly that form.
//!
//! Verification here keeps apart the three ways a document can fail, because a person has to
//! fix them differently: the document is not signed at all; it is signed, but by someone other
//! than the permissions CA (or a certificate it issued); or it is signed by the CA but its
//! content changed after signing. The signer's certificate chain is checked by hand (signer is
//! the CA, or issued and signed by it) rather than by OpenSSL's chain builder, so no clock is
//! read here; certificate validity periods are the caller's business ([`crate::setup`] checks
//! them with the time it is given).

use openssl::pkcs7::{Pkcs7, Pkcs7Flags};
use openssl::pkey::{HasPrivate, PKeyRef};
use openssl::stack::Stack;
use openssl::x509::store::X509StoreBuilder;
use openssl::x509::{X509Ref, X509VerifyResult, X509};

use super::{name_to_string, AccessError};

/// Signs `content` with the permissions CA's certificate and key, in the text S/MIME form
/// Cyclone DDS accepts (`openssl smime -sign -text` equivalent: detached, `text/plain` inner
/// part, signer certificate included).
pub fn sign<T: HasPrivate>(
    content: &[u8],
    ca_cert: &X509Ref,
    ca_key: &PKeyRef<T>,
) -> Result<Vec<u8>, AccessError> {
    let flags = Pkcs7Flags::TEXT | Pkcs7Flags::DETACHED;
    let certs = Stack::new().map_err(AccessError::Crypto)?;
    let p7 = Pkcs7::sign(ca_cert, ca_key, &certs, content, flags).map_err(AccessError::Crypto)?;
    p7.to_smime(content, flags).map_err(AccessError::Crypto)
}

/// Parses a PEM certificate (the permissions CA's).
pub fn ca_from_pem(ca_pem: &[u8]) -> Result<X509, AccessError> {
    X509::from_pem(ca_pem).map_err(|e| AccessError::BadCaCertificate(e.to_string()))
}

/// Verifies a signed document against the permissions CA (PEM) and gives its content as text
/// (what governance and permissions documents are).
pub fn verified_text(doc: &[u8], permissions_ca_pem: &[u8]) -> Result<String, AccessError> {
    let ca = ca_from_pem(permissions_ca_pem)?;
    let content = verify(doc, &ca)?;
    String::from_utf8(content).map_err(|_| AccessError::NotUtf8)
}

/// Verifies an S/MIME signed document against the permissions CA and returns the signed
/// content (with the `text/plain` header removed).
pub fn verify(doc: &[u8], ca: &X509Ref) -> Result<Vec<u8>, AccessError> {
    let (p7, content) = match Pkcs7::from_smime(doc) {
        Ok(parsed) => parsed,
        Err(e) => return Err(classify_unparsable(doc, &e.to_string())),
    };
    let Some(content) = content else {
        return Err(AccessError::NotSmime(
            "the S/MIME message is not clear-signed (no detached text part); sign with `-text` and without `-nodetach`".into(),
        ));
    };
    check_signer(&p7, ca)?;
    let no_certs = Stack::new().map_err(AccessError::Crypto)?;
    let store = X509StoreBuilder::new()
        .map_err(AccessError::Crypto)?
        .build();
    let mut out = Vec::new();
    let flags = Pkcs7Flags::TEXT | Pkcs7Flags::NOVERIFY;
    match p7.verify(&no_certs, &store, Some(&content), Some(&mut out), flags) {
        Ok(()) => Ok(out),
        // A good signature over content without the `text/plain` header: signed without
        // `-text`, which Cyclone refuses ("mime no content type").
        Err(_) if p7.verify(&no_certs, &store, Some(&content), None, Pkcs7Flags::NOVERIFY).is_ok() => Err(AccessError::NotSmime(
            "the document was signed without the text form (`openssl smime -sign -text`) that Cyclone DDS requires".into(),
        )),
        Err(e) => Err(AccessError::BadSignature(first_reason(&e.to_string()))),
    }
}

/// The document did not parse as S/MIME: plain XML is "unsigned", anything else "not S/MIME".
fn classify_unparsable(doc: &[u8], why: &str) -> AccessError {
    let text = String::from_utf8_lossy(doc);
    let start = text.trim_start_matches('\u{feff}').trim_start();
    if start.starts_with('<') {
        AccessError::Unsigned
    } else {
        AccessError::NotSmime(first_reason(why))
    }
}

/// Every signer must be the CA itself or a certificate the CA issued and signed.
fn check_signer(p7: &Pkcs7, ca: &X509Ref) -> Result<(), AccessError> {
    let no_certs = Stack::new().map_err(AccessError::Crypto)?;
    let signers = p7.signers(&no_certs, Pkcs7Flags::empty()).map_err(|e| {
        AccessError::NotSmime(format!(
            "no signer certificate in the S/MIME signature ({})",
            first_reason(&e.to_string())
        ))
    })?;
    let ca_der = ca.to_der().map_err(AccessError::Crypto)?;
    let ca_key = ca.public_key().map_err(AccessError::Crypto)?;
    for signer in &signers {
        let same = signer.to_der().map_err(AccessError::Crypto)? == ca_der;
        let issued =
            ca.issued(signer) == X509VerifyResult::OK && signer.verify(&ca_key).unwrap_or(false);
        if !same && !issued {
            return Err(AccessError::WrongSigner {
                signer: name_to_string(signer.subject_name()),
                ca: name_to_string(ca.subject_name()),
            });
        }
    }
    Ok(())
}

/// The first line of an OpenSSL error stack, which is the informative one.
fn first_reason(s: &str) -> String {
    s.lines().next().unwrap_or(s).to_string()
}
