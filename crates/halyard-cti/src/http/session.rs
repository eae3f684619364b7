//! The dashboard's login sessions.
//!
//! A session is created by a successful login form and named by a random 256-bit token the
//! browser keeps in a cookie (`HttpOnly`, `SameSite=Strict`, path `/`). The server keeps only
//! the token's SHA-256, so a copy of the server's memory cannot be replayed as a cookie. Each
//! session carries its own random CSRF token: every state-changing request made with the
//! cookie must carry it (a hidden form field, or the `X-CSRF-Token` header of the page's
//! scripts), which a page of another origin cannot read.
//!
//! A session ends when it is idle for [`IDLE`], [`LIFETIME`] after the login, at logout, or
//! when the store is full and it is the least recently used. The account's row is read again
//! on every request, so a disabled account or a changed role takes effect at once.

use crate::accounts;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use subtle::ConstantTimeEq;

/// The cookie's name.
pub const COOKIE: &str = "halyard_session";
/// A session unused this long ends.
pub const IDLE: Duration = Duration::from_secs(30 * 60);
/// A session ends this long after its login, used or not.
pub const LIFETIME: Duration = Duration::from_secs(12 * 3600);
/// Most sessions kept; a login beyond it ends the least recently used.
pub const SESSIONS_MAX: usize = 4096;

/// One live session.
#[derive(Clone, Debug)]
struct Session {
    account: String,
    csrf: String,
    created: Instant,
    used: Instant,
}

/// What a valid session cookie stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionInfo {
    /// The account's name.
    pub account: String,
    /// The session's CSRF token.
    pub csrf: String,
}

/// The live sessions of one server.
#[derive(Default)]
pub struct Sessions {
    live: Mutex<BTreeMap<[u8; 32], Session>>,
}

fn key(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl Sessions {
    /// Opens a session for `account`; the cookie's token and the session's CSRF token.
    pub fn open(&self, account: &str, now: Instant) -> (String, String) {
        let token = accounts::new_token();
        let csrf = accounts::new_password();
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        live.retain(|_, s| alive(s, now));
        if live.len() >= SESSIONS_MAX {
            let stalest = live.iter().min_by_key(|(_, s)| s.used).map(|(k, _)| *k);
            if let Some(k) = stalest {
                live.remove(&k);
            }
        }
        live.insert(
            key(&token),
            Session {
                account: account.to_string(),
                csrf: csrf.clone(),
                created: now,
                used: now,
            },
        );
        debug_assert!(live.len() <= SESSIONS_MAX);
        (token, csrf)
    }

    /// The session a cookie names, if it is alive (and marks it used).
    pub fn find(&self, token: &str, now: Instant) -> Option<SessionInfo> {
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        let k = key(token);
        let s = live.get_mut(&k)?;
        if !alive(s, now) {
            live.remove(&k);
            return None;
        }
        s.used = now;
        Some(SessionInfo {
            account: s.account.clone(),
            csrf: s.csrf.clone(),
        })
    }

    /// Ends the session a cookie names.
    pub fn close(&self, token: &str) {
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        live.remove(&key(token));
    }

    /// Sessions kept now (expired ones included until the next login sweeps them).
    pub fn len(&self) -> usize {
        self.live.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// True when no session is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn alive(s: &Session, now: Instant) -> bool {
    now.saturating_duration_since(s.used) < IDLE
        && now.saturating_duration_since(s.created) < LIFETIME
}

/// Whether a CSRF token sent with a request is the session's (compared in constant time).
pub fn csrf_matches(session: &SessionInfo, sent: &str) -> bool {
    !sent.is_empty() && bool::from(sent.as_bytes().ct_eq(session.csrf.as_bytes()))
}

/// The session token in a `Cookie` header, if any.
pub fn token_in_cookies(cookie_header: &str) -> Option<&str> {
    cookie_header
        .split(';')
        .filter_map(|c| c.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, v)| v.trim())
        .filter(|v| !v.is_empty() && v.len() <= 256)
}

/// The `Set-Cookie` value that stores a session token; `secure` (the node is reached over
/// HTTPS) adds `Secure`, so the browser never sends it over plain HTTP.
pub fn set_cookie(token: &str, secure: bool) -> String {
    format!(
        "{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{}",
        LIFETIME.as_secs(),
        if secure { "; Secure" } else { "" }
    )
}

/// The `Set-Cookie` value that removes the session cookie.
pub fn clear_cookie() -> String {
    format!("{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_lives_until_idle_or_old_and_ends_at_logout() {
        let s = Sessions::default();
        let t0 = Instant::now();
        let (token, csrf) = s.open("ana", t0);
        let found = s.find(&token, t0 + Duration::from_secs(60)).unwrap();
        assert_eq!(found.account, "ana");
        assert!(csrf_matches(&found, &csrf));
        assert!(!csrf_matches(&found, ""));
        assert!(!csrf_matches(&found, "forged"));
        assert!(s.find("not-a-token", t0).is_none());
        // Used within IDLE each time, it still ends at LIFETIME.
        let mut t = t0;
        while t < t0 + LIFETIME - IDLE {
            t += IDLE / 2;
            assert!(s.find(&token, t).is_some());
        }
        assert!(s.find(&token, t0 + LIFETIME).is_none());
        let (token, _) = s.open("ana", t0);
        assert!(s.find(&token, t0 + IDLE).is_none(), "idle too long");
        let (token, _) = s.open("ana", t0);
        s.close(&token);
        assert!(s.find(&token, t0).is_none());
    }

    #[test]
    fn the_store_is_bounded_by_evicting_the_least_recently_used() {
        let s = Sessions::default();
        let t0 = Instant::now();
        let (first, _) = s.open("first", t0);
        let (second, _) = s.open("second", t0 + Duration::from_millis(1));
        for i in 0..SESSIONS_MAX - 1 {
            if i == 10 {
                assert!(s.find(&first, t0 + Duration::from_millis(2)).is_some());
            }
            s.open(&format!("u{i}"), t0 + Duration::from_millis(3));
        }
        assert_eq!(s.len(), SESSIONS_MAX);
        assert!(s.find(&second, t0 + Duration::from_millis(4)).is_none());
        assert!(s.find(&first, t0 + Duration::from_millis(4)).is_some());
    }

    #[test]
    fn the_cookie_is_read_among_others() {
        assert_eq!(
            token_in_cookies("a=1; halyard_session=abc ; b=2"),
            Some("abc")
        );
        assert_eq!(token_in_cookies("halyard_session="), None);
        assert_eq!(token_in_cookies("x=y"), None);
        assert!(set_cookie("t", false).contains("HttpOnly; SameSite=Strict"));
        assert!(!set_cookie("t", false).contains("Secure"));
        assert!(set_cookie("t", true).ends_with("; Secure"));
    }
}
