//! `halyard security init / add / check / cyclone-config`: a complete DDS Security set-up in
//! one directory, and a checker that says in words what is wrong with one.
//!
//! Layout of a set-up directory `DIR`:
//!
//! ```text
//! DIR/identity_ca.pem  identity_ca_key.pem (0600)
//! DIR/permissions_ca.pem  permissions_ca_key.pem (0600)
//! DIR/governance.xml  governance.p7s          (S/MIME text form, signed by the permissions CA)
//! DIR/NAME/identity.pem  identity_key.pem (0600)  permissions.xml  permissions.p7s
//! ```
//!
//! Library code takes the current time as a parameter and its randomness (certificate serial
//! numbers) from a [`SecureRandom`]; key pairs come from OpenSSL's generator.

mod check;
mod docs;
mod pki;

pub use check::{check, CheckOptions, CheckReport, Query};
pub use docs::{governance_xml, permissions_xml, AllowSpec, Protection, MAX_DOMAIN_ID};
pub use pki::{issue_identity, make_ca, new_key, subject, subject_string, Ca, KeyKind, Validity};

use openssl::pkey::PKey;
use openssl::x509::X509;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

use crate::access::{smime, AccessError, ProtectionKind};
use crate::random::SecureRandom;

/// File names inside a set-up directory.
pub mod files {
    /// The identity CA certificate.
    pub const IDENTITY_CA: &str = "identity_ca.pem";
    /// The identity CA private key.
    pub const IDENTITY_CA_KEY: &str = "identity_ca_key.pem";
    /// The permissions CA certificate.
    pub const PERMISSIONS_CA: &str = "permissions_ca.pem";
    /// The permissions CA private key.
    pub const PERMISSIONS_CA_KEY: &str = "permissions_ca_key.pem";
    /// The governance XML (unsigned, for reading).
    pub const GOVERNANCE_XML: &str = "governance.xml";
    /// The signed governance.
    pub const GOVERNANCE: &str = "governance.p7s";
    /// A participant's certificate.
    pub const IDENTITY: &str = "identity.pem";
    /// A participant's private key.
    pub const IDENTITY_KEY: &str = "identity_key.pem";
    /// A participant's permissions XML (unsigned, for reading).
    pub const PERMISSIONS_XML: &str = "permissions.xml";
    /// A participant's signed permissions.
    pub const PERMISSIONS: &str = "permissions.p7s";
}

/// Why a set-up operation failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum SetupError {
    /// A file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// `init` on a directory that already holds a set-up, without `force`.
    AlreadyExists(PathBuf),
    /// A participant name that cannot be a directory and a subject CN.
    InvalidName(String),
    /// A domain id above [`MAX_DOMAIN_ID`].
    InvalidDomain(u32),
    /// An `--allow` names a participant that is not being created.
    UnknownParticipant(String),
    /// A file of the set-up could not be read as what it should be.
    BadFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A signed document could not be made.
    Access(AccessError),
    /// OpenSSL failed.
    Crypto(openssl::error::ErrorStack),
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetupError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            SetupError::AlreadyExists(p) => write!(f, "{} already holds a set-up (use --force to overwrite it)", p.display()),
            SetupError::InvalidName(n) => write!(f, "participant name {n:?} is not usable: use letters, digits, '_', '-' and '.' only"),
            SetupError::InvalidDomain(d) => write!(f, "domain id {d} is above {MAX_DOMAIN_ID}, the largest the governance and permissions schema allows"),
            SetupError::UnknownParticipant(n) => write!(f, "--allow names participant {n:?}, which is not among the --participant names"),
            SetupError::BadFile { path, reason } => write!(f, "{}: {reason}", path.display()),
            SetupError::Access(e) => write!(f, "{e}"),
            SetupError::Crypto(e) => write!(f, "OpenSSL failed: {e}"),
        }
    }
}

impl std::error::Error for SetupError {}

impl From<openssl::error::ErrorStack> for SetupError {
    fn from(e: openssl::error::ErrorStack) -> Self {
        SetupError::Crypto(e)
    }
}

impl From<AccessError> for SetupError {
    fn from(e: AccessError) -> Self {
        SetupError::Access(e)
    }
}

/// What `init` creates.
#[derive(Debug, Clone)]
pub struct InitOptions {
    /// Participant names (each becomes `DIR/NAME/` and `CN=NAME,O=Halyard`).
    pub participants: Vec<String>,
    /// Protection of the domain.
    pub protection: Protection,
    /// Key algorithm for the CAs and identities.
    pub key: KeyKind,
    /// Validity of certificates and grants, days from `now`.
    pub days: u32,
    /// Domains governed and granted; empty means all (`0..=230`).
    pub domains: Vec<u32>,
    /// `None`: every participant may publish and subscribe everything. `Some`: only these.
    pub allows: Option<Vec<AllowSpec>>,
    /// Overwrite an existing set-up.
    pub force: bool,
    /// The current time, Unix seconds; validity starts an hour before (clock skew).
    pub now: i64,
}

impl InitOptions {
    fn validity(&self) -> Validity {
        Validity {
            not_before: self.now - 3600,
            not_after: self.now + i64::from(self.days) * 86400,
        }
    }
}

/// Checks a participant name: non-empty, `[A-Za-z0-9_.-]`, not `.`/`..`.
pub fn check_name(name: &str) -> Result<(), SetupError> {
    let ok = !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(())
    } else {
        Err(SetupError::InvalidName(name.to_string()))
    }
}

/// `halyard security init`: makes both CAs, the signed governance and, per participant, an
/// identity and signed permissions.
pub fn init(dir: &Path, opts: &InitOptions, rng: &mut dyn SecureRandom) -> Result<(), SetupError> {
    for p in &opts.participants {
        check_name(p)?;
    }
    if let Some(d) = opts.domains.iter().find(|&&d| d > MAX_DOMAIN_ID) {
        return Err(SetupError::InvalidDomain(*d));
    }
    for a in opts.allows.iter().flatten() {
        if !opts.participants.contains(&a.participant) {
            return Err(SetupError::UnknownParticipant(a.participant.clone()));
        }
    }
    if dir.join(files::IDENTITY_CA).exists() && !opts.force {
        return Err(SetupError::AlreadyExists(dir.to_path_buf()));
    }
    create_dir(dir)?;
    let v = opts.validity();
    // A random tag in the CA names tells set-ups apart in messages and peers' logs.
    let mut tag = [0u8; 4];
    rng.fill(&mut tag);
    let tag: String = tag.iter().map(|b| format!("{b:02x}")).collect();
    let id_ca = make_ca(&format!("Halyard Identity CA {tag}"), opts.key, v, rng)?;
    let perm_ca = make_ca(&format!("Halyard Permissions CA {tag}"), opts.key, v, rng)?;
    write_ca(dir, files::IDENTITY_CA, files::IDENTITY_CA_KEY, &id_ca)?;
    write_ca(
        dir,
        files::PERMISSIONS_CA,
        files::PERMISSIONS_CA_KEY,
        &perm_ca,
    )?;
    let gov = governance_xml(&opts.domains, opts.protection);
    write_file(&dir.join(files::GOVERNANCE_XML), gov.as_bytes())?;
    let signed = smime::sign(gov.as_bytes(), &perm_ca.cert, &perm_ca.key)?;
    write_file(&dir.join(files::GOVERNANCE), &signed)?;
    for name in &opts.participants {
        make_participant(dir, name, opts, &id_ca, &perm_ca, rng)?;
    }
    Ok(())
}

/// `halyard security add`: one more participant in an existing set-up, with its CAs.
pub fn add(dir: &Path, opts: &InitOptions, rng: &mut dyn SecureRandom) -> Result<(), SetupError> {
    for p in &opts.participants {
        check_name(p)?;
    }
    let id_ca = read_ca(dir, files::IDENTITY_CA, files::IDENTITY_CA_KEY)?;
    let perm_ca = read_ca(dir, files::PERMISSIONS_CA, files::PERMISSIONS_CA_KEY)?;
    for name in &opts.participants {
        if dir.join(name).join(files::IDENTITY).exists() && !opts.force {
            return Err(SetupError::AlreadyExists(dir.join(name)));
        }
        make_participant(dir, name, opts, &id_ca, &perm_ca, rng)?;
    }
    Ok(())
}

fn make_participant(
    dir: &Path,
    name: &str,
    opts: &InitOptions,
    id_ca: &Ca,
    perm_ca: &Ca,
    rng: &mut dyn SecureRandom,
) -> Result<(), SetupError> {
    let v = opts.validity();
    let pdir = dir.join(name);
    create_dir(&pdir)?;
    let key = new_key(opts.key)?;
    let cert = issue_identity(id_ca, name, &key, v, rng)?;
    write_file(&pdir.join(files::IDENTITY), &cert.to_pem()?)?;
    write_secret(
        &pdir.join(files::IDENTITY_KEY),
        &Zeroizing::new(key.private_key_to_pem_pkcs8()?),
    )?;
    let subject = subject_string(name);
    let xml = permissions_xml(
        name,
        &subject,
        v.not_before,
        v.not_after,
        &opts.domains,
        opts.allows.as_deref(),
    );
    write_file(&pdir.join(files::PERMISSIONS_XML), xml.as_bytes())?;
    let signed = smime::sign(xml.as_bytes(), &perm_ca.cert, &perm_ca.key)?;
    write_file(&pdir.join(files::PERMISSIONS), &signed)
}

/// Re-signs `DIR/NAME/permissions.xml` (after editing it) into `permissions.p7s`, or
/// `DIR/governance.xml` into `governance.p7s` when `name` is `None`.
pub fn resign(dir: &Path, name: Option<&str>) -> Result<(), SetupError> {
    let perm_ca = read_ca(dir, files::PERMISSIONS_CA, files::PERMISSIONS_CA_KEY)?;
    let (xml, p7s) = match name {
        Some(n) => (
            dir.join(n).join(files::PERMISSIONS_XML),
            dir.join(n).join(files::PERMISSIONS),
        ),
        None => (dir.join(files::GOVERNANCE_XML), dir.join(files::GOVERNANCE)),
    };
    let content = read_file(&xml)?;
    write_file(&p7s, &smime::sign(&content, &perm_ca.cert, &perm_ca.key)?)
}

/// Sets the governance's `rtps_protection_kind` (`NONE`, `SIGN`, `ENCRYPT`, or an
/// `*_WITH_ORIGIN_AUTHENTICATION` kind) in `DIR/governance.xml` and re-signs it: with a
/// `--protect none` set-up this gives authentication, access control and the protection of
/// whole RTPS messages, and nothing else.
pub fn set_rtps_protection(dir: &Path, kind: ProtectionKind) -> Result<(), SetupError> {
    let path = dir.join(files::GOVERNANCE_XML);
    let xml = String::from_utf8(read_file(&path)?).map_err(|_| SetupError::BadFile {
        path: path.clone(),
        reason: "not UTF-8".into(),
    })?;
    let (open, close) = ("<rtps_protection_kind>", "</rtps_protection_kind>");
    let (Some(a), Some(b)) = (xml.find(open), xml.find(close)) else {
        return Err(SetupError::BadFile {
            path,
            reason: "it names no rtps_protection_kind".into(),
        });
    };
    let edited = format!("{}{open}{}{}", &xml[..a], kind.as_str(), &xml[b..]);
    write_file(&path, edited.as_bytes())?;
    resign(dir, None)
}

/// The Cyclone DDS `<Security>` configuration for the participant in `identity_dir`
/// (`DIR/NAME`): absolute `file:` URIs, the Debian plugin library names. One line, so it can
/// be appended to `CYCLONEDDS_URI`.
pub fn cyclone_config(identity_dir: &Path) -> Result<String, SetupError> {
    let pdir = std::path::absolute(identity_dir).map_err(|source| SetupError::Io {
        path: identity_dir.to_path_buf(),
        source,
    })?;
    let dir = pdir.parent().unwrap_or(Path::new("/")).to_path_buf();
    for f in [
        pdir.join(files::IDENTITY),
        pdir.join(files::IDENTITY_KEY),
        pdir.join(files::PERMISSIONS),
        dir.join(files::GOVERNANCE),
    ] {
        if !f.is_file() {
            return Err(SetupError::BadFile {
                path: f,
                reason: "missing: is this DIR/NAME of a `halyard security init` set-up?".into(),
            });
        }
    }
    let uri = |p: PathBuf| {
        format!(
            "file:{}",
            docs::escape(&p.display().to_string()).replace('"', "&quot;")
        )
    };
    Ok(format!(
        concat!(
            "<Security><Authentication>",
            r#"<Library path="dds_security_auth" initFunction="init_authentication" finalizeFunction="finalize_authentication"/>"#,
            "<IdentityCA>{}</IdentityCA><IdentityCertificate>{}</IdentityCertificate><PrivateKey>{}</PrivateKey>",
            "</Authentication><AccessControl>",
            r#"<Library path="dds_security_ac" initFunction="init_access_control" finalizeFunction="finalize_access_control"/>"#,
            "<PermissionsCA>{}</PermissionsCA><Governance>{}</Governance><Permissions>{}</Permissions>",
            "</AccessControl><Cryptographic>",
            r#"<Library path="dds_security_crypto" initFunction="init_crypto" finalizeFunction="finalize_crypto"/>"#,
            "</Cryptographic></Security>"
        ),
        uri(dir.join(files::IDENTITY_CA)),
        uri(pdir.join(files::IDENTITY)),
        uri(pdir.join(files::IDENTITY_KEY)),
        uri(dir.join(files::PERMISSIONS_CA)),
        uri(dir.join(files::GOVERNANCE)),
        uri(pdir.join(files::PERMISSIONS)),
    ))
}

fn write_ca(dir: &Path, cert: &str, key: &str, ca: &Ca) -> Result<(), SetupError> {
    write_file(&dir.join(cert), &ca.cert.to_pem()?)?;
    write_secret(
        &dir.join(key),
        &Zeroizing::new(ca.key.private_key_to_pem_pkcs8()?),
    )
}

/// Reads a CA of a set-up: `read_ca(dir, files::IDENTITY_CA, files::IDENTITY_CA_KEY)`.
pub fn read_ca(dir: &Path, cert: &str, key: &str) -> Result<Ca, SetupError> {
    let (cp, kp) = (dir.join(cert), dir.join(key));
    let bad = |path: &Path, e: openssl::error::ErrorStack| SetupError::BadFile {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    Ok(Ca {
        cert: X509::from_pem(&read_file(&cp)?).map_err(|e| bad(&cp, e))?,
        key: PKey::private_key_from_pem(&read_file(&kp)?).map_err(|e| bad(&kp, e))?,
    })
}

/// Reads a whole file.
pub fn read_file(path: &Path) -> Result<Vec<u8>, SetupError> {
    std::fs::read(path).map_err(|source| SetupError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn create_dir(dir: &Path) -> Result<(), SetupError> {
    std::fs::create_dir_all(dir).map_err(|source| SetupError::Io {
        path: dir.to_path_buf(),
        source,
    })
}

/// Writes a file readable by all (certificates, documents).
pub fn write_file(path: &Path, data: &[u8]) -> Result<(), SetupError> {
    std::fs::write(path, data).map_err(|source| SetupError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Writes a private key: mode 0600 from creation on (an existing file is truncated and set to
/// 0600 too).
pub fn write_secret(path: &Path, data: &[u8]) -> Result<(), SetupError> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let io = |source| SetupError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(io)?;
    f.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(io)?;
    f.write_all(data).map_err(io)
}

#[cfg(test)]
mod tests;
