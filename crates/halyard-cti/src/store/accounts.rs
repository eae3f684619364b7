//! Local accounts and their API tokens.
//!
//! A token is stored by its SHA-256 (lower-case hex), never in clear; it stops working when
//! it expires or its account is disabled, and goes with its account (foreign key).

use super::{now_us, Db, DbError, Reader, Role, User};
use rusqlite::{params, OptionalExtension};

const COLUMNS: &str = "u.name, u.role, u.password_hash, u.sectors, u.max_tlp, u.disabled";

impl Db {
    /// Creates an account ([`DbError::Account`] if the name is taken).
    pub fn create_user(&mut self, user: &User) -> Result<(), DbError> {
        let mut st = self.conn.prepare_cached(
            "INSERT INTO users (name, role, password_hash, sectors, max_tlp, disabled) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (name) DO NOTHING",
        )?;
        let n = st.execute(params![
            user.name,
            user.role.as_str(),
            user.password_hash,
            sectors_json(user),
            user.max_tlp.as_str(),
            user.disabled,
        ])?;
        if n == 0 {
            return Err(DbError::Account(format!("user {} exists", user.name)));
        }
        Ok(())
    }

    /// Replaces an account's role, hash, sectors, max_tlp and disabled flag
    /// ([`DbError::Account`] if there is no such account).
    pub fn update_user(&mut self, user: &User) -> Result<(), DbError> {
        let mut st = self.conn.prepare_cached(
            "UPDATE users SET role = ?2, password_hash = ?3, sectors = ?4, max_tlp = ?5, \
             disabled = ?6 WHERE name = ?1",
        )?;
        let n = st.execute(params![
            user.name,
            user.role.as_str(),
            user.password_hash,
            sectors_json(user),
            user.max_tlp.as_str(),
            user.disabled,
        ])?;
        if n == 0 {
            return Err(DbError::Account(format!(
                "user {} does not exist",
                user.name
            )));
        }
        Ok(())
    }

    /// An account.
    pub fn user(&self, name: &str) -> Result<Option<User>, DbError> {
        let mut st = self
            .conn
            .prepare_cached(&format!("SELECT {COLUMNS} FROM users u WHERE u.name = ?1"))?;
        let mut rows = st.query(params![name])?;
        rows.next()?.map(read_user).transpose()
    }

    /// Every account, by name.
    pub fn users(&self) -> Result<Vec<User>, DbError> {
        let mut st = self
            .conn
            .prepare_cached(&format!("SELECT {COLUMNS} FROM users u ORDER BY u.name"))?;
        let mut rows = st.query([])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(read_user(r)?);
        }
        Ok(out)
    }

    /// Stores an API token of `user` by its hash (SHA-256 hex of the token; the token itself
    /// is never stored), with a label and an optional expiry (µs).
    ///
    /// [`DbError::Account`] if the account does not exist or the token is already stored.
    pub fn create_token(
        &mut self,
        user: &str,
        token_sha256_hex: &str,
        label: &str,
        expires_us: Option<i64>,
    ) -> Result<(), DbError> {
        let tx = self.conn.transaction()?;
        let exists: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM users WHERE name = ?1)",
            params![user],
            |r| r.get(0),
        )?;
        if !exists {
            return Err(DbError::Account(format!("user {user} does not exist")));
        }
        let n = tx.execute(
            "INSERT INTO tokens (sha256, user, label, created_us, expires_us) \
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (sha256) DO NOTHING",
            params![
                token_sha256_hex.to_ascii_lowercase(),
                user,
                label,
                now_us(),
                expires_us
            ],
        )?;
        if n == 0 {
            return Err(DbError::Account(format!(
                "a token with this hash exists (label {label:?} not stored)"
            )));
        }
        tx.commit()?;
        Ok(())
    }

    /// The account a token belongs to, if the token exists and has not expired at `now_us`
    /// (an expiry is the first instant the token is refused), and the account is enabled.
    pub fn user_by_token(
        &self,
        token_sha256_hex: &str,
        now_us: i64,
    ) -> Result<Option<User>, DbError> {
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM tokens t JOIN users u ON u.name = t.user \
             WHERE t.sha256 = ?1 AND (t.expires_us IS NULL OR t.expires_us > ?2)"
        ))?;
        let user = st
            .query_row(
                params![token_sha256_hex.to_ascii_lowercase(), now_us],
                |r| Ok(read_user(r)),
            )
            .optional()?
            .transpose()?;
        Ok(user.filter(|u| !u.disabled))
    }
}

/// The `sectors` column: a JSON array, or NULL for all sectors.
fn sectors_json(user: &User) -> Option<String> {
    user.sectors
        .as_ref()
        .map(|s| serde_json::Value::from(s.as_slice()).to_string())
}

/// Decodes a row selected with [`COLUMNS`].
fn read_user(row: &rusqlite::Row<'_>) -> Result<User, DbError> {
    let r = Reader::new(row, "users");
    let role: String = r.get(1, "role")?;
    Ok(User {
        name: r.get(0, "name")?,
        role: Role::parse(&role)
            .ok_or_else(|| r.corrupt(&format!("column role: unknown role {role:?}")))?,
        password_hash: r.get(2, "password_hash")?,
        sectors: r.json_opt(3, "sectors")?,
        max_tlp: r.tlp(4, "max_tlp")?,
        disabled: r.get(5, "disabled")?,
    })
}

#[cfg(test)]
mod tests;
