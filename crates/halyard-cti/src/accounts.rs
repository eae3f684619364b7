//! Local accounts' secrets: password hashes, API tokens, and the rules names and passwords
//! must follow.
//!
//! Passwords are stored as argon2id PHC strings (the parameters travel inside the string, so
//! a later change of cost does not break old hashes). API tokens are 32 random bytes from the
//! OS generator, shown once to their owner and stored only as their SHA-256: a token has
//! enough entropy that a fast hash suffices, and looking it up by hash needs no comparison of
//! the secret itself.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use base64::Engine;
use sha2::{Digest, Sha256};
use std::fmt;

/// argon2id memory cost in KiB (OWASP's recommendation for argon2id with one lane).
const ARGON2_M_KIB: u32 = 19 * 1024;
/// argon2id passes over memory.
const ARGON2_T: u32 = 2;
/// argon2id lanes.
const ARGON2_P: u32 = 1;

/// Shortest password accepted, in characters.
pub const PASSWORD_CHARS_MIN: usize = 12;
/// Longest password accepted, in bytes (bounds the work of hashing an attacker's input).
pub const PASSWORD_BYTES_MAX: usize = 1024;
/// Longest user name, in characters.
pub const USER_NAME_CHARS_MAX: usize = 64;

/// Prefix of every API token, so that a leaked one is recognisable in logs and scanners.
pub const TOKEN_PREFIX: &str = "hcti_";

/// Why an account operation was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AccountError {
    /// The password does not follow the policy: why.
    WeakPassword(String),
    /// The user name is not acceptable: why.
    BadName(String),
    /// The hash could not be computed (random source or parameters).
    Hash(String),
}

impl fmt::Display for AccountError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AccountError::WeakPassword(s) => write!(f, "password refused: {s}"),
            AccountError::BadName(s) => write!(f, "user name refused: {s}"),
            AccountError::Hash(s) => write!(f, "password hash: {s}"),
        }
    }
}

impl std::error::Error for AccountError {}

fn hasher() -> Result<Argon2<'static>, AccountError> {
    let params = Params::new(ARGON2_M_KIB, ARGON2_T, ARGON2_P, None)
        .map_err(|e| AccountError::Hash(e.to_string()))?;
    Ok(Argon2::new(Algorithm::Argon2id, Version::V0x13, params))
}

/// Checks a new password against the policy: at least [`PASSWORD_CHARS_MIN`] characters, at
/// most [`PASSWORD_BYTES_MAX`] bytes, not one character repeated.
pub fn check_password(pw: &str) -> Result<(), AccountError> {
    let chars = pw.chars().count();
    if chars < PASSWORD_CHARS_MIN {
        return Err(AccountError::WeakPassword(format!(
            "{chars} characters; at least {PASSWORD_CHARS_MIN} are needed"
        )));
    }
    if pw.len() > PASSWORD_BYTES_MAX {
        return Err(AccountError::WeakPassword(format!(
            "longer than {PASSWORD_BYTES_MAX} bytes"
        )));
    }
    let mut it = pw.chars();
    let first = it.next();
    if it.all(|c| Some(c) == first) {
        return Err(AccountError::WeakPassword(
            "one character repeated is not a password".into(),
        ));
    }
    Ok(())
}

/// Hashes a new password (after [`check_password`]) with argon2id and a random salt; returns
/// the PHC string to store.
pub fn hash_password(pw: &str) -> Result<String, AccountError> {
    check_password(pw)?;
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| AccountError::Hash(format!("random salt: {e}")))?;
    let salt = SaltString::encode_b64(&salt).map_err(|e| AccountError::Hash(e.to_string()))?;
    let h = hasher()?
        .hash_password(pw.as_bytes(), &salt)
        .map_err(|e| AccountError::Hash(e.to_string()))?;
    Ok(h.to_string())
}

/// Whether `pw` matches the PHC string `phc` (false for a malformed string or an
/// over-long password). The comparison inside argon2 is constant-time.
pub fn verify_password(pw: &str, phc: &str) -> bool {
    if pw.len() > PASSWORD_BYTES_MAX {
        return false;
    }
    let Ok(parsed) = PasswordHash::new(phc) else {
        return false;
    };
    // The algorithm and cost are read from the PHC string.
    Argon2::default()
        .verify_password(pw.as_bytes(), &parsed)
        .is_ok()
}

/// A new API token: [`TOKEN_PREFIX`] and 32 random bytes in unpadded base64url.
pub fn new_token() -> String {
    let mut b = [0u8; 32];
    // A token must never come from a weaker source than the OS generator; the generator only
    // fails before the kernel's entropy pool is initialised, long before a server runs.
    getrandom::fill(&mut b).expect("the OS random generator is available");
    format!(
        "{TOKEN_PREFIX}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
    )
}

/// A new random password for a generated account: 18 random bytes in unpadded base64url
/// (24 characters, well above the password policy's minimum).
pub fn new_password() -> String {
    let mut b = [0u8; 18];
    getrandom::fill(&mut b).expect("the OS random generator is available");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

/// The SHA-256 of a token, lower-case hex: what the store keeps and looks tokens up by.
pub fn token_hash(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

/// Lower-case hex of bytes.
pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Checks a user name: 1 to [`USER_NAME_CHARS_MAX`] characters of ASCII letters, digits,
/// `.`, `_`, `-` and `@`, beginning with a letter or digit (no `:`, which HTTP basic
/// authentication cannot carry, and nothing a log or a shell would read specially).
pub fn check_user_name(name: &str) -> Result<(), AccountError> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@');
    if name.is_empty() || name.len() > USER_NAME_CHARS_MAX {
        return Err(AccountError::BadName(format!(
            "{name:?}: 1 to {USER_NAME_CHARS_MAX} characters"
        )));
    }
    if !name.chars().all(ok_char) {
        return Err(AccountError::BadName(format!(
            "{name:?}: only letters, digits, '.', '_', '-' and '@'"
        )));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err(AccountError::BadName(format!(
            "{name:?}: must begin with a letter or a digit"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_hash_verifies_only_its_password_and_salts_differ() {
        let a = hash_password("correct horse battery").unwrap();
        let b = hash_password("correct horse battery").unwrap();
        assert!(a.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{a}");
        assert_ne!(a, b);
        assert!(verify_password("correct horse battery", &a));
        assert!(!verify_password("correct horse batterY", &a));
        assert!(!verify_password(
            "correct horse battery",
            "not a phc string"
        ));
    }

    #[test]
    fn weak_passwords_and_bad_names_are_refused_with_a_reason() {
        let e = hash_password("short").unwrap_err();
        assert!(e.to_string().contains("at least 12"), "{e}");
        assert!(check_password("aaaaaaaaaaaaaaa").is_err());
        assert!(check_password(&"x1".repeat(600)).is_err());
        assert!(check_user_name("alice").is_ok());
        assert!(check_user_name("alice@acme.example").is_ok());
        for bad in ["", "a:b", "-x", "a b", "é", &"a".repeat(65)] {
            assert!(check_user_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn tokens_are_random_prefixed_and_stored_by_hash() {
        let t = new_token();
        assert!(t.starts_with(TOKEN_PREFIX));
        assert_eq!(t.len(), TOKEN_PREFIX.len() + 43);
        assert_ne!(t, new_token());
        let h = token_hash(&t);
        assert_eq!(h.len(), 64);
        assert_eq!(h, token_hash(&t));
        assert_eq!(
            token_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
