//! Identities: the local one (certificate, key, adjusted GUID, IdentityToken) and the
//! validation of a remote one (who begins the handshake, the AuthRequest token).
//!
//! # Facts established (Cyclone DDS 0.10.2 `src/security/builtin_plugins/authentication/src/`)
//!
//! * Certificates and keys are RSA with 2048 bits or EC with 256 bits, for the CA, the identity
//!   and a remote `c.id` alike (auth_utils.c `get_authentication_algo_kind`,
//!   `check_key_type_and_size`, `load_X509_certificate_from_bio`). Only a CA that signs the
//!   identity directly is supported (`verify_certificate`: one trusted certificate in the store).
//! * Adjusted GUID prefix (authentication.c `get_adjusted_participant_guid`, spec §9.3.3):
//!   `h = SHA-256(DER of the certificate subject name)`, `l = SHA-256(candidate prefix, 12 bytes)`;
//!   prefix bytes 0..6 are the first 47 bits of `h` behind a set top bit
//!   (`p[i] = hb | h[i] >> 1`, `hb = 0x80` then `h[i] << 7`), bytes 6..12 are `l[0..6]`.
//! * IdentityToken (authentication.c `get_identity_token`): class `DDS:Auth:PKI-DH:1.0`,
//!   properties in this order `dds.cert.sn` = subject of the certificate, `dds.cert.algo`,
//!   `dds.ca.sn` = subject of the CA, `dds.ca.algo`; algo values `RSA-2048` or
//!   `EC-prime256v1`; no binary properties. Subjects are OpenSSL's `X509_NAME_oneline` form
//!   `/C=NL/O=Example/CN=alice` (auth_utils.c `get_certificate_subject_name`).
//! * What Cyclone 0.10 actually sends in SPDP is the bare class id: the token's properties are
//!   created without their propagate flag (`get_identity_token`), so ddsi_plist.c leaves them
//!   out (captured, see `testdata/cyclone-0.10.2`). A peer's subject name must therefore come
//!   from the certificate in the handshake ([`super::PeerIdentity`]), never from its token.
//! * A remote IdentityToken is accepted when its class starts with `DDS:Auth:PKI-DH:` followed
//!   by `1.<minor>` with minor 0, optionally followed by `+...` (`validate_remote_identity_token`).
//! * Who begins (`validate_remote_identity`): `memcmp(local adjusted GUID, remote GUID) < 0`
//!   means "pending handshake request" (we send the Request); otherwise we wait for it.
//! * Unless an AuthRequest was already received from the peer, the validation yields a token
//!   `DDS:Auth:PKI-DH:1.0+AuthReq` with one binary property `future_challenge` (32 random bytes,
//!   this side's future challenge), sent in a `dds.sec.auth_request` message
//!   (`fill_auth_request_token`, ddsi_handshake.c). A received AuthRequest's `future_challenge`
//!   (class id and property name matched as prefixes, value exactly 32 bytes) becomes the
//!   challenge the peer must use in its Request or Reply (`validate_auth_request_token`).

use super::error::AuthError;
use super::{CLASS_ID, CLASS_ID_AUTH_REQUEST};
use crate::random::SecureRandom;
use crate::token::DataHolder;
use openssl::asn1::Asn1Time;
use openssl::nid::Nid;
use openssl::pkey::{Id, PKey, Private};
use openssl::sha::sha256;
use openssl::stack::Stack;
use openssl::x509::store::X509StoreBuilder;
use openssl::x509::verify::X509VerifyParam;
use openssl::x509::{X509NameRef, X509Ref, X509StoreContext, X509};
use std::cmp::Ordering;

/// Length of a challenge (`AuthenticationChallenge`, 256 bits).
pub const CHALLENGE_LEN: usize = 32;

/// The certificate (and signature) algorithms PKI-DH supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CertAlgo {
    /// RSA with a 2048-bit modulus; signs with RSASSA-PSS-SHA256.
    Rsa2048,
    /// ECDSA on prime256v1 (P-256); signs with ECDSA-SHA256.
    EcPrime256v1,
}

impl CertAlgo {
    /// The value of `dds.cert.algo` / `dds.ca.algo` (Cyclone `get_authentication_algo`).
    pub fn token_name(self) -> &'static str {
        match self {
            CertAlgo::Rsa2048 => "RSA-2048",
            CertAlgo::EcPrime256v1 => "EC-prime256v1",
        }
    }

    /// The value of `c.dsign_algo` (Cyclone `get_dsign_algo`).
    pub fn dsign_algo(self) -> &'static str {
        match self {
            CertAlgo::Rsa2048 => "RSASSA-PSS-SHA256",
            CertAlgo::EcPrime256v1 => "ECDSA-SHA256",
        }
    }

    /// The algorithm of a public or private key, if PKI-DH supports it.
    pub(crate) fn of_key<T: openssl::pkey::HasPublic>(
        key: &PKey<T>,
        what: &'static str,
    ) -> Result<Self, AuthError> {
        let bits = key.bits();
        match key.id() {
            Id::RSA if bits == 2048 => Ok(CertAlgo::Rsa2048),
            Id::EC if bits == 256 => {
                let curve = key.ec_key()?.group().curve_name();
                if curve == Some(Nid::X9_62_PRIME256V1) {
                    Ok(CertAlgo::EcPrime256v1)
                } else {
                    Err(AuthError::UnsupportedAlgorithm {
                        what,
                        detail: format!("a 256-bit EC curve other than prime256v1 ({curve:?})"),
                    })
                }
            }
            id => Err(AuthError::UnsupportedAlgorithm {
                what,
                detail: format!("key type {} with {bits} bits", id.as_raw()),
            }),
        }
    }
}

/// Parses one PEM certificate.
pub(crate) fn parse_cert(pem: &[u8], what: &'static str) -> Result<X509, AuthError> {
    X509::from_pem(pem).map_err(|e| AuthError::BadPem {
        what,
        detail: e.to_string(),
    })
}

/// The algorithm of a certificate's public key.
pub(crate) fn cert_algo(cert: &X509Ref, what: &'static str) -> Result<CertAlgo, AuthError> {
    CertAlgo::of_key(&cert.public_key()?, what)
}

/// A name in OpenSSL's `X509_NAME_oneline` form: `/SN=value` per entry, in certificate order,
/// bytes outside printable ASCII written as `\xHH`.
pub fn subject_oneline(name: &X509NameRef) -> String {
    let mut out = String::new();
    for entry in name.entries() {
        out.push('/');
        let obj = entry.object();
        match obj.nid().short_name() {
            Ok(sn) if obj.nid() != Nid::UNDEF => out.push_str(sn),
            _ => out.push_str(&obj.to_string()),
        }
        out.push('=');
        for &b in entry.data().as_slice() {
            if (b' '..=b'~').contains(&b) {
                out.push(char::from(b));
            } else {
                out.push_str(&format!("\\x{b:02X}"));
            }
        }
    }
    out
}

/// Checks `now` against the certificate's validity window (typed Expired / NotYetValid).
pub(crate) fn check_validity(cert: &X509Ref, now_unix_secs: i64) -> Result<(), AuthError> {
    let now = Asn1Time::from_unix(now_unix_secs)?;
    if cert.not_before().compare(&now)? == Ordering::Greater {
        return Err(AuthError::NotYetValid {
            subject: subject_oneline(cert.subject_name()),
            not_before: cert.not_before().to_string(),
        });
    }
    if cert.not_after().compare(&now)? == Ordering::Less {
        return Err(AuthError::Expired {
            subject: subject_oneline(cert.subject_name()),
            not_after: cert.not_after().to_string(),
        });
    }
    Ok(())
}

/// Verifies that `ca` signed `cert`, at time `now` (never the system clock).
pub(crate) fn verify_against_ca(
    cert: &X509Ref,
    ca: &X509,
    now_unix_secs: i64,
) -> Result<(), AuthError> {
    let mut builder = X509StoreBuilder::new()?;
    builder.add_cert(ca.clone())?;
    let mut param = X509VerifyParam::new()?;
    param.set_time(now_unix_secs);
    builder.set_param(&param)?;
    let store = builder.build();
    let chain = Stack::new()?;
    let mut ctx = X509StoreContext::new()?;
    let (ok, err) = ctx.init(&store, cert, &chain, |c| {
        let ok = c.verify_cert()?;
        Ok((ok, c.error().error_string().to_owned()))
    })?;
    if ok {
        Ok(())
    } else {
        Err(AuthError::WrongCa {
            subject: subject_oneline(cert.subject_name()),
            detail: err,
        })
    }
}

/// Parses a peer's certificate (`c.id`) and validates it against our identity CA at `now`.
pub(crate) fn validate_peer_cert(
    pem: &[u8],
    ca: &X509,
    now_unix_secs: i64,
) -> Result<(X509, CertAlgo), AuthError> {
    let cert = parse_cert(pem, "peer certificate (c.id)")?;
    let algo = cert_algo(&cert, "peer certificate")?;
    check_validity(&cert, now_unix_secs)?;
    verify_against_ca(&cert, ca, now_unix_secs)?;
    Ok((cert, algo))
}

/// The adjusted participant GUID prefix for a certificate and a candidate prefix (§9.3.3).
pub fn adjusted_guid_prefix(cert: &X509Ref, candidate: &[u8; 12]) -> Result<[u8; 12], AuthError> {
    let high = sha256(&cert.subject_name().to_der()?);
    let low = sha256(candidate);
    let mut prefix = [0u8; 12];
    let mut hb = 0x80u8;
    for i in 0..6 {
        prefix[i] = hb | (high[i] >> 1);
        hb = high[i] << 7;
    }
    prefix[6..].copy_from_slice(&low[..6]);
    Ok(prefix)
}

/// This participant's authenticated identity (`validate_local_identity`, §8.3.2.9.1).
pub struct LocalIdentity {
    pub(crate) ca: X509,
    pub(crate) cert: X509,
    pub(crate) key: PKey<Private>,
    pub(crate) cert_pem: Vec<u8>,
    algo: CertAlgo,
    guid_prefix: [u8; 12],
    subject_name: String,
    identity_token: DataHolder,
}

impl std::fmt::Debug for LocalIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalIdentity")
            .field("subject_name", &self.subject_name)
            .field("algo", &self.algo)
            .field("guid_prefix", &self.guid_prefix)
            .finish_non_exhaustive()
    }
}

impl LocalIdentity {
    /// Loads and validates the identity: the certificate must be RSA-2048 or EC P-256, signed by
    /// the identity CA, valid at `now_unix_secs`, and match the private key. Computes the
    /// adjusted GUID prefix from `candidate_guid_prefix`.
    pub fn new(
        identity_ca_pem: &[u8],
        identity_cert_pem: &[u8],
        private_key_pem: &[u8],
        candidate_guid_prefix: [u8; 12],
        now_unix_secs: i64,
    ) -> Result<Self, AuthError> {
        let ca = parse_cert(identity_ca_pem, "identity CA")?;
        let ca_algo = cert_algo(&ca, "identity CA")?;
        let cert = parse_cert(identity_cert_pem, "identity certificate")?;
        let algo = cert_algo(&cert, "identity certificate")?;
        let key = PKey::private_key_from_pem(private_key_pem).map_err(|e| AuthError::BadPem {
            what: "private key",
            detail: e.to_string(),
        })?;
        CertAlgo::of_key(&key, "private key")?;
        if !cert.public_key()?.public_eq(&key) {
            return Err(AuthError::KeyMismatch);
        }
        check_validity(&cert, now_unix_secs)?;
        verify_against_ca(&cert, &ca, now_unix_secs)?;
        let guid_prefix = adjusted_guid_prefix(&cert, &candidate_guid_prefix)?;
        let subject_name = subject_oneline(cert.subject_name());
        let identity_token = DataHolder::new(CLASS_ID)
            .with_property("dds.cert.sn", &subject_name)
            .with_property("dds.cert.algo", algo.token_name())
            .with_property("dds.ca.sn", &subject_oneline(ca.subject_name()))
            .with_property("dds.ca.algo", ca_algo.token_name());
        let cert_pem = cert.to_pem()?;
        Ok(LocalIdentity {
            ca,
            cert,
            key,
            cert_pem,
            algo,
            guid_prefix,
            subject_name,
            identity_token,
        })
    }

    /// The adjusted participant GUID prefix this participant must use.
    pub fn guid_prefix(&self) -> [u8; 12] {
        self.guid_prefix
    }

    /// The IdentityToken to announce in SPDP (PID_IDENTITY_TOKEN), with the four properties
    /// the spec defines (Cyclone 0.10 itself sends only the class id; it accepts both).
    pub fn identity_token(&self) -> &DataHolder {
        &self.identity_token
    }

    /// The certificate subject as Cyclone formats it (`/C=NL/O=Example/CN=alice`), the name
    /// access control matches against the permissions' `subject_name`.
    pub fn subject_name(&self) -> &str {
        &self.subject_name
    }

    /// The certificate's algorithm.
    pub fn algo(&self) -> CertAlgo {
        self.algo
    }

    /// The identity certificate as PEM (the `c.id` value).
    pub fn certificate_pem(&self) -> &[u8] {
        &self.cert_pem
    }

    /// The certificate's notAfter as seconds since the Unix epoch (for a revocation timer).
    pub fn not_after_unix_secs(&self) -> Result<i64, AuthError> {
        asn1_to_unix(self.cert.not_after())
    }

    /// Validates a remote participant's IdentityToken (`validate_remote_identity`, §8.3.2.9.2)
    /// and decides which side begins. `remote_auth_request` is the peer's `+AuthReq` token if
    /// one was already received. Draws this side's future challenge from `rng`.
    pub fn validate_remote_identity(
        &self,
        remote_identity_token: &DataHolder,
        remote_guid_prefix: [u8; 12],
        remote_auth_request: Option<&DataHolder>,
        rng: &mut dyn SecureRandom,
    ) -> Result<RemoteIdentity, AuthError> {
        check_identity_token_class(&remote_identity_token.class_id)?;
        let remote_challenge = remote_auth_request.map(parse_auth_request).transpose()?;
        let mut local_challenge = [0u8; CHALLENGE_LEN];
        rng.fill(&mut local_challenge);
        let auth_request = remote_auth_request.is_none().then(|| {
            DataHolder::new(CLASS_ID_AUTH_REQUEST).with_binary("future_challenge", &local_challenge)
        });
        // Both GUIDs end in the participant entity id, so comparing prefixes is memcmp.
        let role = if self.guid_prefix < remote_guid_prefix {
            HandshakeRole::Initiator
        } else {
            HandshakeRole::Replier
        };
        Ok(RemoteIdentity {
            guid_prefix: remote_guid_prefix,
            identity_token: remote_identity_token.clone(),
            role,
            local_challenge,
            remote_challenge,
            auth_request,
        })
    }
}

fn asn1_to_unix(t: &openssl::asn1::Asn1TimeRef) -> Result<i64, AuthError> {
    let epoch = Asn1Time::from_unix(0)?;
    let d = epoch.diff(t)?;
    Ok(i64::from(d.days) * 86_400 + i64::from(d.secs))
}

/// Accepts `DDS:Auth:PKI-DH:1.0` (optionally `+suffix`), as Cyclone does.
fn check_identity_token_class(class_id: &str) -> Result<(), AuthError> {
    let bad = || AuthError::UnsupportedIdentityToken(class_id.to_owned());
    let version = class_id.strip_prefix("DDS:Auth:PKI-DH:").ok_or_else(bad)?;
    let version = version.split('+').next().unwrap_or_default();
    let (major, minor) = version.split_once('.').ok_or_else(bad)?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    // Cyclone: sscanf("%u.%u") then major == 1 and minor <= 0.
    if digits(major)
        && digits(minor)
        && major.trim_start_matches('0') == "1"
        && minor.bytes().all(|b| b == b'0')
    {
        Ok(())
    } else {
        Err(bad())
    }
}

/// The `future_challenge` of a `+AuthReq` token.
fn parse_auth_request(token: &DataHolder) -> Result<[u8; CHALLENGE_LEN], AuthError> {
    if !token.class_id.starts_with(CLASS_ID_AUTH_REQUEST) {
        return Err(AuthError::WrongClassId {
            expected: CLASS_ID_AUTH_REQUEST,
            found: token.class_id.clone(),
        });
    }
    let value = token
        .binary_properties
        .iter()
        .find(|p| p.name.starts_with("future_challenge"))
        .ok_or(AuthError::MissingProperty("future_challenge"))?;
    value
        .value
        .as_slice()
        .try_into()
        .map_err(|_| AuthError::BadProperty {
            name: "future_challenge",
            why: "not 32 bytes",
        })
}

/// Which side of the handshake this participant takes for a remote one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandshakeRole {
    /// Our GUID is the smaller: we send the Request ([`super::Handshake::begin_request`]).
    Initiator,
    /// Our GUID is the larger: we wait for the Request ([`super::Handshake::begin_reply`]).
    Replier,
}

/// A remote participant whose IdentityToken was accepted, before the handshake.
#[derive(Debug, Clone)]
pub struct RemoteIdentity {
    guid_prefix: [u8; 12],
    identity_token: DataHolder,
    role: HandshakeRole,
    pub(crate) local_challenge: [u8; CHALLENGE_LEN],
    pub(crate) remote_challenge: Option<[u8; CHALLENGE_LEN]>,
    auth_request: Option<DataHolder>,
}

impl RemoteIdentity {
    /// The remote participant's GUID prefix.
    pub fn guid_prefix(&self) -> [u8; 12] {
        self.guid_prefix
    }

    /// The IdentityToken it announced.
    pub fn identity_token(&self) -> &DataHolder {
        &self.identity_token
    }

    /// Whether we send the Request or wait for it.
    pub fn role(&self) -> HandshakeRole {
        self.role
    }

    /// The `+AuthReq` token to send in a `dds.sec.auth_request` message (none when the peer's
    /// AuthRequest came first, as in Cyclone).
    pub fn auth_request(&self) -> Option<&DataHolder> {
        self.auth_request.as_ref()
    }

    /// Takes a `+AuthReq` token received after validation: its `future_challenge` is the one
    /// the peer must use.
    pub fn receive_auth_request(&mut self, token: &DataHolder) -> Result<(), AuthError> {
        self.remote_challenge = Some(parse_auth_request(token)?);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_token_class_versions() {
        for ok in [
            "DDS:Auth:PKI-DH:1.0",
            "DDS:Auth:PKI-DH:1.0+AuthReq",
            "DDS:Auth:PKI-DH:1.00",
        ] {
            assert!(check_identity_token_class(ok).is_ok(), "{ok}");
        }
        for bad in [
            "DDS:Auth:PKI-DH:2.0",
            "DDS:Auth:PKI-DH:1.1",
            "DDS:Auth:PKI-DH:1",
            "x",
            "",
        ] {
            assert!(check_identity_token_class(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn auth_request_parsing() {
        let t = DataHolder::new(CLASS_ID_AUTH_REQUEST).with_binary("future_challenge", &[3; 32]);
        assert_eq!(parse_auth_request(&t).unwrap(), [3; 32]);
        let short =
            DataHolder::new(CLASS_ID_AUTH_REQUEST).with_binary("future_challenge", &[3; 31]);
        assert!(matches!(
            parse_auth_request(&short),
            Err(AuthError::BadProperty { .. })
        ));
        let none = DataHolder::new(CLASS_ID_AUTH_REQUEST);
        assert_eq!(
            parse_auth_request(&none),
            Err(AuthError::MissingProperty("future_challenge"))
        );
        let wrong = DataHolder::new(CLASS_ID).with_binary("future_challenge", &[3; 32]);
        assert!(matches!(
            parse_auth_request(&wrong),
            Err(AuthError::WrongClassId { .. })
        ));
    }
}
