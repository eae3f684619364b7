//! Who is asking, and what they may do.
//!
//! [`Authed`] is the extractor every handler takes: it reads `Authorization: Basic`
//! (a local account's name and password) or `Authorization: Bearer` (an API token), or,
//! without either, the dashboard's session cookie ([`super::session`]), and yields the
//! account's current row, so that disabling an account or changing its role takes
//! effect on its next request. A password check costs an argon2id hash, so successful logins
//! are remembered for a few minutes in a bounded cache keyed by SHA-256(name ‖ 0 ‖ password),
//! together with the password hash they were checked against: a changed password stops
//! matching at once. An unknown name still costs one argon2 check, so response times do not
//! tell which names exist.
//!
//! A failure is a 401 with the challenge for both schemes, counted in `auth_failures` and
//! written to the audit log as `login-failed` with the claimed name; a name gets at most one
//! audit line per throttle period, so a password-guessing run cannot flood the log (the
//! counter still counts every attempt).
//!
//! A request authenticated by the session cookie alone that changes anything (any method
//! but GET and HEAD) must carry the session's CSRF token in `X-CSRF-Token`: the cookie is
//! sent by the browser whoever made the page, the token only by the dashboard's own scripts.
//!
//! [`require`] is the only place roles are compared.

use super::errors::HttpError;
use super::session::{self, SessionInfo};
use super::{blocking, AppState};
use crate::accounts;
use crate::node::{Counters, Node};
use crate::store::{AuditEntry, Role, User};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, Method};
use base64::Engine;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};
use subtle::ConstantTimeEq;

/// Most successful logins remembered.
const CACHE_ENTRIES_MAX: usize = 1024;
/// How long a successful login is remembered.
const CACHE_LIFE: Duration = Duration::from_secs(300);
/// At most one `login-failed` audit line per name in this period.
const AUDIT_THROTTLE: Duration = Duration::from_secs(10);
/// Most names whose last audit line is remembered (beyond it, failures are only counted).
const AUDIT_NAMES_MAX: usize = 4096;
/// Longest `Authorization` value read.
const AUTHORIZATION_BYTES_MAX: usize = 4096;

/// The account that made the request.
#[derive(Clone, Debug)]
pub struct Authed(pub User);

/// The authentication cache and the audit throttle of one server.
#[derive(Default)]
pub(crate) struct Guard {
    logins: Mutex<BTreeMap<[u8; 32], Login>>,
    audited: Mutex<BTreeMap<String, Instant>>,
}

struct Login {
    name: String,
    password_hash: String,
    expires: Instant,
}

/// Refuses (403) unless `user`'s role is `min` or a more powerful one.
pub fn require(user: &User, min: Role) -> Result<(), HttpError> {
    // Roles are ordered from the most powerful (Admin) to the least (ReadOnly).
    if user.role <= min {
        Ok(())
    } else {
        Err(HttpError::forbidden(format!(
            "this needs the role {} or above; {} is {}",
            min.as_str(),
            user.name,
            user.role.as_str()
        )))
    }
}

impl FromRequestParts<AppState> for Authed {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, HttpError> {
        let value = parts.headers.get(header::AUTHORIZATION).cloned();
        if value.is_none() {
            if let Some((user, session)) = session_of(parts, state).await? {
                let safe = parts.method == Method::GET || parts.method == Method::HEAD;
                let sent = parts
                    .headers
                    .get("x-csrf-token")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("");
                if !safe && !session::csrf_matches(&session, sent) {
                    return Err(HttpError::forbidden(
                        "a request made with the dashboard's session cookie must carry the \
                         session's X-CSRF-Token header",
                    ));
                }
                return Ok(Authed(user));
            }
        }
        authenticate(state, value).await.map(Authed)
    }
}

/// The account and session of the request's session cookie: `None` without a cookie or
/// when the session ended; the account's current row (refused if disabled or removed).
pub(crate) async fn session_of(
    parts: &Parts,
    state: &AppState,
) -> Result<Option<(User, SessionInfo)>, HttpError> {
    let Some(token) = parts
        .headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(session::token_in_cookies)
    else {
        return Ok(None);
    };
    let Some(found) = state.sessions.find(token, Instant::now()) else {
        return Ok(None);
    };
    let node = state.node.clone();
    let name = found.account.clone();
    let user = blocking(move || Ok(node.db().user(&name)?)).await?;
    match user {
        Some(u) if !u.disabled => Ok(Some((u, found))),
        _ => {
            state.sessions.close(token);
            Ok(None)
        }
    }
}

/// Checks a login form's name and password as the basic scheme does (argon2, the same
/// timing for unknown names, failures counted and audited); the account on success.
pub(crate) async fn check_password(
    state: &AppState,
    name: &str,
    password: &str,
) -> Result<User, HttpError> {
    let key = login_key(name, password);
    let remembered = state.auth.remembered(&key);
    let node = state.node.clone();
    let lookup = name.to_string();
    let user = blocking(move || Ok(node.db().user(&lookup)?)).await?;
    if let (Some(login), Some(u)) = (&remembered, &user) {
        let same_hash = bool::from(login.1.as_bytes().ct_eq(u.password_hash.as_bytes()));
        if login.0 == u.name && same_hash && !u.disabled {
            return Ok(u.clone());
        }
    }
    let phc = user
        .as_ref()
        .map(|u| u.password_hash.clone())
        .unwrap_or_else(|| dummy_hash().to_string());
    let password = password.to_string();
    let ok = blocking(move || Ok(accounts::verify_password(&password, &phc))).await?;
    match user {
        Some(u) if ok && !u.disabled => {
            state.auth.remember(key, &u);
            Ok(u)
        }
        Some(u) if ok => Err(fail(state, &u.name, "account disabled").await),
        Some(_) => Err(fail(state, name, "wrong password").await),
        None => Err(fail(state, name, "unknown account").await),
    }
}

async fn authenticate(state: &AppState, value: Option<HeaderValue>) -> Result<User, HttpError> {
    let Some(value) = value else {
        return Err(HttpError::unauthorized(
            "authentication is required: HTTP basic (account and password) or a bearer token",
        ));
    };
    let text = match value.to_str() {
        Ok(t) if t.len() <= AUTHORIZATION_BYTES_MAX => t.trim(),
        _ => return Err(fail(state, "?", "unreadable Authorization header").await),
    };
    let (scheme, rest) = text.split_once(' ').unwrap_or((text, ""));
    let rest = rest.trim();
    if scheme.eq_ignore_ascii_case("basic") {
        basic(state, rest).await
    } else if scheme.eq_ignore_ascii_case("bearer") {
        bearer(state, rest).await
    } else {
        Err(fail(state, "?", "unknown authorization scheme").await)
    }
}

async fn basic(state: &AppState, encoded: &str) -> Result<User, HttpError> {
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()
        .and_then(|b| String::from_utf8(b).ok());
    let Some((name, password)) = decoded.as_deref().and_then(|s| s.split_once(':')) else {
        return Err(fail(state, "?", "malformed basic credentials").await);
    };
    check_password(state, name, password).await
}

async fn bearer(state: &AppState, token: &str) -> Result<User, HttpError> {
    if token.is_empty() || token.len() > 256 {
        return Err(fail(state, "token", "malformed bearer token").await);
    }
    let hash = accounts::token_hash(token);
    let node = state.node.clone();
    let now = super::now_us();
    let user = blocking(move || Ok(node.db().user_by_token(&hash, now)?)).await?;
    match user {
        Some(u) if !u.disabled => Ok(u),
        Some(u) => Err(fail(state, &u.name, "account disabled (token)").await),
        None => Err(fail(state, "token", "unknown or expired token").await),
    }
}

/// Counts and audits a failed authentication; the 401 to answer.
async fn fail(state: &AppState, claimed: &str, reason: &str) -> HttpError {
    let node: &Node = &state.node;
    Counters::bump(&node.counters().auth_failures);
    let actor: String = claimed.chars().take(64).collect();
    if state.auth.should_audit(&actor) {
        let node = state.node.clone();
        let entry = AuditEntry {
            actor,
            action: "login-failed".into(),
            object_id: None,
            detail: serde_json::json!({ "reason": reason }).to_string(),
        };
        let written = blocking(move || Ok(node.db().audit(&entry)?)).await;
        if let Err(e) = written {
            eprintln!("halyard-cti http: audit of a failed login not written: {e}");
        }
    }
    HttpError::unauthorized("the credentials were not accepted")
}

fn login_key(name: &str, password: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(name.as_bytes());
    h.update([0]);
    h.update(password.as_bytes());
    h.finalize().into()
}

/// A hash checked against when the account does not exist, so that an unknown name costs as
/// much as a wrong password.
fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| {
        accounts::hash_password("no account has this password").unwrap_or_else(|e| {
            eprintln!("halyard-cti http: cannot make the timing decoy hash: {e}");
            String::new()
        })
    })
}

impl Guard {
    /// The remembered (name, password hash) of a login key, if still fresh.
    fn remembered(&self, key: &[u8; 32]) -> Option<(String, String)> {
        let logins = self.logins.lock().unwrap_or_else(|p| p.into_inner());
        logins
            .get(key)
            .filter(|l| l.expires > Instant::now())
            .map(|l| (l.name.clone(), l.password_hash.clone()))
    }

    /// Remembers a successful login, evicting the expired and then the oldest when full.
    fn remember(&self, key: [u8; 32], user: &User) {
        let mut logins = self.logins.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        if logins.len() >= CACHE_ENTRIES_MAX {
            logins.retain(|_, l| l.expires > now);
        }
        if logins.len() >= CACHE_ENTRIES_MAX {
            let oldest = logins
                .iter()
                .min_by_key(|(_, l)| l.expires)
                .map(|(k, _)| *k);
            if let Some(k) = oldest {
                logins.remove(&k);
            }
        }
        logins.insert(
            key,
            Login {
                name: user.name.clone(),
                password_hash: user.password_hash.clone(),
                expires: now + CACHE_LIFE,
            },
        );
        debug_assert!(logins.len() <= CACHE_ENTRIES_MAX);
    }

    /// Whether a failure of `name` is to be audited now (and notes that it is).
    fn should_audit(&self, name: &str) -> bool {
        let mut audited = self.audited.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        if audited
            .get(name)
            .is_some_and(|t| now.duration_since(*t) < AUDIT_THROTTLE)
        {
            return false;
        }
        if audited.len() >= AUDIT_NAMES_MAX {
            audited.retain(|_, t| now.duration_since(*t) < AUDIT_THROTTLE);
            if audited.len() >= AUDIT_NAMES_MAX {
                return false;
            }
        }
        audited.insert(name.to_string(), now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use halyard_stix::marking::Tlp;

    fn user(role: Role) -> User {
        User {
            name: "u".into(),
            role,
            password_hash: String::new(),
            sectors: None,
            max_tlp: Tlp::Red,
            disabled: false,
        }
    }

    #[test]
    fn roles_rank_from_admin_down_to_read_only() {
        assert!(require(&user(Role::Admin), Role::Reviewer).is_ok());
        assert!(require(&user(Role::Reviewer), Role::Analyst).is_ok());
        assert!(require(&user(Role::Analyst), Role::Analyst).is_ok());
        let e = require(&user(Role::Analyst), Role::Reviewer).unwrap_err();
        assert_eq!(e.status.as_u16(), 403);
        assert!(require(&user(Role::ReadOnly), Role::Analyst).is_err());
    }

    #[test]
    fn the_login_cache_is_bounded_and_the_audit_throttled() {
        let g = Guard::default();
        for i in 0..(CACHE_ENTRIES_MAX + 10) {
            g.remember(login_key(&format!("n{i}"), "pw"), &user(Role::Analyst));
        }
        assert_eq!(g.logins.lock().unwrap().len(), CACHE_ENTRIES_MAX);
        assert!(g.remembered(&login_key("n1030", "pw")).is_some());
        assert!(g.should_audit("mallory"));
        assert!(!g.should_audit("mallory"));
        assert!(g.should_audit("trudy"));
    }
}
