//! `halyard security check`: reads a set-up directory and says, in words, everything that
//! would stop a participant from joining, or a query from being allowed.
//!
//! Each check either adds a line to what was checked or a problem; a broken piece does not
//! stop the others from being checked (a problem with the identity CA still lets the
//! permissions be checked), so one run lists every problem.

use openssl::asn1::Asn1Time;
use openssl::pkey::PKey;
use openssl::x509::{X509VerifyResult, X509};
use std::cmp::Ordering;
use std::path::Path;

use super::{files, read_file};
use crate::access::{identity_subject, name_to_string, Action, Governance, Permissions};

/// What to check.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// Only this participant (default: every `DIR/*/identity.pem`).
    pub participant: Option<String>,
    /// An access question to answer for the participant(s).
    pub query: Option<Query>,
    /// The current time, Unix seconds.
    pub now: i64,
}

/// "May this participant publish/subscribe this topic in these partitions on this domain?"
#[derive(Debug, Clone)]
pub struct Query {
    /// The topic name.
    pub topic: String,
    /// Publish or subscribe.
    pub action: Action,
    /// Partitions of the endpoint (empty: the default partition).
    pub partitions: Vec<String>,
    /// The domain id.
    pub domain: u32,
}

/// The outcome of [`check`].
#[derive(Debug, Clone, Default)]
pub struct CheckReport {
    /// What was checked and found good, one line each.
    pub checked: Vec<String>,
    /// What is wrong, one sentence each.
    pub problems: Vec<String>,
}

impl CheckReport {
    /// Whether nothing is wrong.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Checks the set-up in `dir`.
pub fn check(dir: &Path, opts: &CheckOptions) -> CheckReport {
    let mut r = CheckReport::default();
    let id_ca = load_cert(&mut r, dir, files::IDENTITY_CA, "identity CA", opts.now);
    let perm_ca_pem = read_file(&dir.join(files::PERMISSIONS_CA)).ok();
    let perm_ca = load_cert(
        &mut r,
        dir,
        files::PERMISSIONS_CA,
        "permissions CA",
        opts.now,
    );
    let governance = perm_ca_pem
        .as_deref()
        .filter(|_| perm_ca.is_some())
        .and_then(|ca| {
            let doc = read_or_note(&mut r, &dir.join(files::GOVERNANCE), "governance")?;
            match Governance::from_smime(&doc, ca) {
                Ok(g) => {
                    r.checked.push(format!(
                        "governance.p7s: signed by the permissions CA, {} domain rule(s)",
                        g.domain_rules.len()
                    ));
                    Some(g)
                }
                Err(e) => {
                    r.problems.push(format!("governance.p7s: {e}"));
                    None
                }
            }
        });
    if let (Some(g), Some(q)) = (&governance, &opts.query) {
        match g.domain_rule(q.domain) {
            None => r.problems.push(format!(
                "the governance has no rule for domain {}: no secure participant can join it",
                q.domain
            )),
            Some(rule) if rule.topic_rule(&q.topic).is_none() => r.problems.push(format!(
                "the governance has no topic rule matching topic {:?} in domain {}",
                q.topic, q.domain
            )),
            Some(_) => r.checked.push(format!(
                "governance covers topic {:?} in domain {}",
                q.topic, q.domain
            )),
        }
    }
    let names = match &opts.participant {
        Some(n) => vec![n.clone()],
        None => participants(dir),
    };
    if names.is_empty() {
        r.problems.push(format!(
            "{} holds no participant (no NAME/identity.pem)",
            dir.display()
        ));
    }
    for name in names {
        check_participant(
            &mut r,
            dir,
            &name,
            id_ca.as_ref(),
            perm_ca_pem.as_deref().filter(|_| perm_ca.is_some()),
            opts,
        );
    }
    r
}

/// Names of `DIR/*` holding an identity certificate, sorted.
fn participants(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join(files::IDENTITY).is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}

fn read_or_note(r: &mut CheckReport, path: &Path, what: &str) -> Option<Vec<u8>> {
    match std::fs::read(path) {
        Ok(d) => Some(d),
        Err(e) => {
            r.problems.push(format!(
                "the {what} file {} cannot be read: {e}",
                path.display()
            ));
            None
        }
    }
}

/// Loads a certificate and checks its validity window.
fn load_cert(r: &mut CheckReport, dir: &Path, file: &str, what: &str, now: i64) -> Option<X509> {
    let path = dir.join(file);
    let pem = read_or_note(r, &path, what)?;
    let cert = match X509::from_pem(&pem) {
        Ok(c) => c,
        Err(e) => {
            r.problems.push(format!(
                "{} is not a PEM certificate: {}",
                path.display(),
                e.to_string().lines().next().unwrap_or("")
            ));
            return None;
        }
    };
    match validity_problem(&cert, now) {
        Some(p) => r
            .problems
            .push(format!("the {what} certificate ({file}) {p}")),
        None => r.checked.push(format!(
            "{file}: {what} certificate \"{}\", valid until {}",
            name_to_string(cert.subject_name()),
            cert.not_after()
        )),
    }
    Some(cert)
}

/// `Some("expired on ...")` / `Some("is not valid before ...")` when outside its window.
fn validity_problem(cert: &X509, now: i64) -> Option<String> {
    let now_t = Asn1Time::from_unix(now).ok()?;
    if cert.not_before().compare(&now_t).ok()? == Ordering::Greater {
        return Some(format!(
            "is not yet valid: valid from {}",
            cert.not_before()
        ));
    }
    if cert.not_after().compare(&now_t).ok()? == Ordering::Less {
        return Some(format!("has expired: valid until {}", cert.not_after()));
    }
    None
}

fn check_participant(
    r: &mut CheckReport,
    dir: &Path,
    name: &str,
    id_ca: Option<&X509>,
    perm_ca_pem: Option<&[u8]>,
    opts: &CheckOptions,
) {
    let pdir = dir.join(name);
    let Some(cert) = load_identity(r, &pdir, name, id_ca, opts.now) else {
        return;
    };
    if let Some(key_pem) = read_or_note(
        r,
        &pdir.join(files::IDENTITY_KEY),
        &format!("{name} private key"),
    ) {
        let key = PKey::private_key_from_pem(&key_pem);
        let matches = key
            .as_ref()
            .ok()
            .zip(cert.public_key().ok())
            .is_some_and(|(k, p)| p.public_eq(k));
        match (key.is_ok(), matches) {
            (false, _) => r.problems.push(format!(
                "{name}: {} is not a PEM private key",
                files::IDENTITY_KEY
            )),
            (true, false) => r.problems.push(format!(
                "{name}: the private key {} does not match the certificate {}",
                files::IDENTITY_KEY,
                files::IDENTITY
            )),
            (true, true) => r
                .checked
                .push(format!("{name}: private key matches the certificate")),
        }
    }
    let Some(ca) = perm_ca_pem else { return };
    let Some(doc) = read_or_note(
        r,
        &pdir.join(files::PERMISSIONS),
        &format!("{name} permissions"),
    ) else {
        return;
    };
    let perms = match Permissions::from_smime(&doc, ca) {
        Ok(p) => p,
        Err(e) => {
            r.problems.push(format!("{name}: permissions.p7s: {e}"));
            return;
        }
    };
    let subject = identity_subject(&cert);
    let Some(grant) = perms.grant_for(&subject) else {
        let granted: Vec<&str> = perms
            .grants
            .iter()
            .map(|g| g.subject_name.as_str())
            .collect();
        r.problems.push(format!("{name}: the permissions subject does not match the identity's subject {subject:?}: the permissions grant {granted:?}"));
        return;
    };
    match grant.validity_at(opts.now) {
        Err(reason) => r.problems.push(format!("{name}: {reason}")),
        Ok(()) => r.checked.push(format!("{name}: permissions signed by the permissions CA; grant {:?} for {subject:?} valid until {}", grant.name, crate::access::xml_date(grant.not_after))),
    }
    if let Some(q) = &opts.query {
        let parts: Vec<&str> = q.partitions.iter().map(String::as_str).collect();
        let verb = match q.action {
            Action::Publish => "publish",
            Action::Subscribe => "subscribe",
        };
        let place = if parts.is_empty() {
            "the default partition".to_string()
        } else {
            format!("partition(s) {parts:?}")
        };
        let d = grant.check(q.domain, q.action, &q.topic, &parts, opts.now);
        let line = format!(
            "{name} may {}{verb} topic {:?} in {place} on domain {}: {d}",
            if d.is_allowed() { "" } else { "not " },
            q.topic,
            q.domain
        );
        if d.is_allowed() {
            r.checked.push(line);
        } else {
            r.problems.push(format!("topic not granted: {line}"));
        }
    }
}

fn load_identity(
    r: &mut CheckReport,
    pdir: &Path,
    name: &str,
    id_ca: Option<&X509>,
    now: i64,
) -> Option<X509> {
    let path = pdir.join(files::IDENTITY);
    let pem = read_or_note(r, &path, &format!("{name} identity certificate"))?;
    let Ok(cert) = X509::from_pem(&pem) else {
        r.problems.push(format!(
            "{name}: {} is not a PEM certificate",
            path.display()
        ));
        return None;
    };
    let mut good = true;
    if let Some(p) = validity_problem(&cert, now) {
        r.problems
            .push(format!("{name}: the identity certificate {p}"));
        good = false;
    }
    if let Some(ca) = id_ca {
        let signed = ca
            .public_key()
            .ok()
            .is_some_and(|k| cert.verify(&k).unwrap_or(false));
        let (issuer, ca_name) = (
            name_to_string(cert.issuer_name()),
            name_to_string(ca.subject_name()),
        );
        if ca.issued(&cert) != X509VerifyResult::OK || !signed {
            let why = if issuer == ca_name {
                format!("it names \"{issuer}\" as issuer but is not signed by this identity CA's key: another CA of the same name made it")
            } else {
                format!("its issuer is \"{issuer}\", the identity CA is \"{ca_name}\"")
            };
            r.problems.push(format!(
                "{name}: the identity certificate is not issued by the identity CA ({why})"
            ));
            good = false;
        }
    }
    if good {
        r.checked.push(format!(
            "{name}: identity certificate \"{}\" issued by the identity CA, valid until {}",
            identity_subject(&cert),
            cert.not_after()
        ));
    }
    Some(cert)
}
