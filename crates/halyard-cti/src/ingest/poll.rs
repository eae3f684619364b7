//! Polling a remote TAXII 2.1 collection (TAXII 2.1 §5.4, Get Objects).
//!
//! Every interval the poller asks `<collection>/objects/` for what was added after its
//! bookmark (`added_after`), following `next` while the server says `more`, with the same
//! `added_after` and `limit` on every page of the chain (servers such as the OASIS reference
//! server refuse a `next` whose other parameters changed). Each page is validated whole
//! (`halyard_stix::bundle::parse` of `{"objects": [...]}`) and ingested whole.
//!
//! The bookmark is the server's `X-TAXII-Date-Added-Last` of the last page taken, stored in
//! the node's database after each page (`poll:<name>`), so a restarted node resumes where it
//! stopped; a page re-read after a crash is harmless, the node dropping versions it has. A
//! server that sends no such header (or one that is not a timestamp) leaves the bookmark where
//! it was (said once in the log): every poll then reads the collection from the old bookmark,
//! and the node drops the duplicates.
//!
//! A page the node refuses (invalid STIX, a marking the sharing policy does not allow for the
//! poll's sector) would block the collection forever if the bookmark stopped before it, so
//! it is skipped: counted in `refused_input`, logged with the reason, recorded in the audit
//! log as `refuse`, and the bookmark moves past it. A transient failure of the node (database,
//! full review queue, DDS) stops the poll without moving the bookmark, to try the same page
//! again. Failures of the server or the network are logged once per change of state and
//! retried at the next interval, backing off up to [`MAX_BACKOFF`].
//!
//! Each request runs on a short-lived helper thread with timeouts and a cap on the response
//! size (`limits.max_body_bytes`); the poller waits for it in slices, so that it ends promptly
//! when told to stop even while a server is slow to answer.

use super::{log, sleep_unless_stopped, Outcome, STOP_SLICE};
use crate::config::Poll;
use crate::node::{Counters, IngestRequest, Node, Source};
use crate::store::AuditEntry;
use base64::Engine as _;
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

/// The TAXII 2.1 media type asked for (TAXII 2.1 §1.6.8).
pub const TAXII_MEDIA_TYPE: &str = "application/taxii+json;version=2.1";

/// The header carrying the `date_added` of the last object of a page (TAXII 2.1 §3.4.3).
pub const DATE_ADDED_LAST: &str = "X-TAXII-Date-Added-Last";

/// The longest wait between polls after repeated failures.
pub const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// The most pages read in one poll; the rest are read by the next poll.
pub const MAX_PAGES_PER_POLL: usize = 10_000;

/// Time allowed to connect to a server.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Time allowed for a whole request, answer included.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// What one poll did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PollReport {
    /// Pages read.
    pub pages: usize,
    /// Objects in the pages the node took in (duplicates included).
    pub objects: usize,
    /// Pages refused and skipped.
    pub refused_pages: usize,
    /// The bookmark after the poll.
    pub bookmark: Option<String>,
}

/// Why a poll ended early.
#[derive(Debug)]
#[non_exhaustive]
pub enum PollError {
    /// The server or the network: unreachable, timed out, an HTTP error, an answer too large.
    Server(String),
    /// The node could not take a page now (or could not read or store the bookmark): the
    /// page is read again at the next poll.
    Node(String),
    /// The stop flag was set.
    Stopped,
}

impl std::fmt::Display for PollError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PollError::Server(s) => write!(f, "server: {s}"),
            PollError::Node(s) => write!(f, "node: {s}"),
            PollError::Stopped => f.write_str("stopped"),
        }
    }
}

impl std::error::Error for PollError {}

/// The poller of one remote collection.
pub struct Poller {
    node: Arc<Node>,
    cfg: Poll,
    objects_url: String,
    authorization: Option<String>,
    agent: ureq::Agent,
    /// The failure last logged (`None`: healthy), so that each change of state is logged once.
    last_failure: Option<String>,
    /// Polls that failed in a row.
    failures: u32,
    /// The missing `X-TAXII-Date-Added-Last` was reported.
    noted_no_date: bool,
}

/// One answer of the server.
struct RawPage {
    body: Vec<u8>,
    date_added_last: Option<String>,
}

/// A TAXII 2.1 envelope (TAXII 2.1 §3.7).
struct Envelope {
    objects: Vec<Value>,
    more: bool,
    next: Option<String>,
}

impl Poller {
    /// A poller of `cfg.collection_url` feeding `node`; refused when the password's
    /// environment variable is unset.
    pub fn new(node: Arc<Node>, cfg: Poll) -> Result<Poller, String> {
        let authorization = match &cfg.username {
            None => None,
            Some(user) => {
                let password = match (&cfg.password, &cfg.password_env) {
                    (Some(p), _) => p.clone(),
                    (None, Some(var)) => {
                        std::env::var(var).map_err(|e| format!("password_env {var}: {e}"))?
                    }
                    (None, None) => String::new(),
                };
                let token =
                    base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
                Some(format!("Basic {token}"))
            }
        };
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(CONNECT_TIMEOUT))
            .timeout_global(Some(REQUEST_TIMEOUT))
            .user_agent(concat!("halyard-cti/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        let objects_url = format!("{}/objects/", cfg.collection_url.trim_end_matches('/'));
        Ok(Poller {
            node,
            cfg,
            objects_url,
            authorization,
            agent,
            last_failure: None,
            failures: 0,
            noted_no_date: false,
        })
    }

    /// The name the bookmark is stored under: `poll:<name>`.
    pub fn bookmark_key(&self) -> String {
        format!("poll:{}", self.cfg.name)
    }

    /// Polls every `interval_secs` (longer after failures) until `stop` is set.
    pub fn run(mut self, stop: &AtomicBool) {
        let interval = Duration::from_secs(self.cfg.interval_secs);
        while !stop.load(Ordering::Relaxed) {
            let wait = match self.poll_once(stop) {
                Err(PollError::Stopped) => break,
                Ok(report) => {
                    self.healthy(&report);
                    interval
                }
                Err(e) => {
                    self.failed(&e);
                    backoff(interval, self.failures)
                }
            };
            if !sleep_unless_stopped(stop, wait) {
                break;
            }
        }
    }

    /// Reads every page added after the bookmark and ingests it, moving the bookmark after
    /// each page taken or skipped.
    pub fn poll_once(&mut self, stop: &AtomicBool) -> Result<PollReport, PollError> {
        let key = self.bookmark_key();
        let start = self
            .node
            .db()
            .bookmark(&key)
            .map_err(|e| PollError::Node(format!("reading the bookmark: {e}")))?;
        let mut report = PollReport {
            bookmark: start.clone(),
            ..PollReport::default()
        };
        let mut added_after = start;
        let mut next: Option<String> = None;
        for _ in 0..MAX_PAGES_PER_POLL {
            if stop.load(Ordering::Relaxed) {
                return Err(PollError::Stopped);
            }
            let raw = self.fetch(self.query(&added_after, &next), stop)?;
            report.pages += 1;
            let envelope = match parse_envelope(&raw.body) {
                Ok(e) => e,
                Err(reason) => {
                    // Without the envelope there is no `next` to follow.
                    self.skip_page(&raw, &reason, &mut report)?;
                    break;
                }
            };
            let count = envelope.objects.len();
            match self.ingest_page(envelope.objects) {
                Outcome::Ingested => {
                    report.objects += count;
                    self.advance(&raw, count, &mut report)?;
                }
                Outcome::Refused(reason) => self.skip_page(&raw, &reason, &mut report)?,
                Outcome::Transient(reason) => return Err(PollError::Node(reason)),
            }
            if !envelope.more {
                break;
            }
            match envelope.next {
                // Some servers (the OASIS reference server) answer every page of a chain
                // with the same `next`: it names the chain, not the page. The chain is
                // bounded by `MAX_PAGES_PER_POLL`.
                Some(n) => next = Some(n),
                // No `next`: page on by `added_after`, if the bookmark moved.
                None if report.bookmark != added_after => {
                    added_after = report.bookmark.clone();
                    next = None;
                }
                None => break,
            }
        }
        Ok(report)
    }

    /// The query of one page: the chain's `added_after` and `limit`, and `next` after the
    /// first page.
    fn query(&self, added_after: &Option<String>, next: &Option<String>) -> Vec<(String, String)> {
        let mut q = vec![(
            "limit".to_string(),
            self.node.config().limits.page_size.to_string(),
        )];
        if let Some(a) = added_after {
            q.push(("added_after".into(), a.clone()));
        }
        if let Some(n) = next {
            q.push(("next".into(), n.clone()));
        }
        q
    }

    /// One GET on a helper thread, waited for in slices of [`STOP_SLICE`].
    fn fetch(&self, query: Vec<(String, String)>, stop: &AtomicBool) -> Result<RawPage, PollError> {
        let (tx, rx) = mpsc::channel();
        let agent = self.agent.clone();
        let url = self.objects_url.clone();
        let authorization = self.authorization.clone();
        let max = self.node.config().limits.max_body_bytes;
        std::thread::Builder::new()
            .name(format!("cti-poll-{}-get", self.cfg.name))
            .spawn(move || {
                let answer = get_page(&agent, &url, authorization.as_deref(), &query, max);
                // The poller may have stopped waiting: nobody to tell, nothing to do.
                let _ = tx.send(answer);
            })
            .map_err(|e| PollError::Server(format!("cannot start a request thread: {e}")))?;
        loop {
            match rx.recv_timeout(STOP_SLICE) {
                Ok(answer) => return answer,
                Err(RecvTimeoutError::Timeout) if stop.load(Ordering::Relaxed) => {
                    return Err(PollError::Stopped)
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(PollError::Server(
                        "the request ended without an answer".into(),
                    ))
                }
            }
        }
    }

    /// Validates a page's objects whole and ingests them.
    fn ingest_page(&self, objects: Vec<Value>) -> Outcome {
        if objects.is_empty() {
            return Outcome::Ingested;
        }
        let text = serde_json::json!({ "objects": objects }).to_string();
        let parsed =
            halyard_stix::bundle::parse(text.as_bytes(), &self.node.config().limits.stix());
        let objects = match parsed {
            Ok(o) => o,
            Err(e) => return Outcome::Refused(e.to_string()),
        };
        Outcome::of(&self.node.ingest(IngestRequest {
            objects,
            source: Source::Poll(self.cfg.name.clone()),
            sectors: self.cfg.sector.clone().map(|s| vec![s]),
            default_tlp: None,
        }))
    }

    /// Moves the bookmark to the page's `X-TAXII-Date-Added-Last`, when the server sent one
    /// that is a timestamp.
    fn advance(
        &mut self,
        raw: &RawPage,
        objects: usize,
        report: &mut PollReport,
    ) -> Result<(), PollError> {
        let date = raw
            .date_added_last
            .as_deref()
            .filter(|d| halyard_stix::time::parse_rfc3339(d).is_some());
        let Some(date) = date else {
            if objects > 0 && !self.noted_no_date {
                self.noted_no_date = true;
                let what = match &raw.date_added_last {
                    None => format!("sends no {DATE_ADDED_LAST}"),
                    Some(d) => format!("sends a {DATE_ADDED_LAST} that is not a timestamp ({d:?})"),
                };
                log(&format!(
                    "poll {}: the server {what}: the bookmark stays at {:?} and every poll \
                     reads from there (duplicates are dropped)",
                    self.cfg.name, report.bookmark
                ));
            }
            return Ok(());
        };
        if report.bookmark.as_deref() != Some(date) {
            self.node
                .db()
                .set_bookmark(&self.bookmark_key(), date)
                .map_err(|e| PollError::Node(format!("storing the bookmark: {e}")))?;
            report.bookmark = Some(date.to_string());
        }
        Ok(())
    }

    /// Skips a page the node refused: counted, logged, audited, and passed by the bookmark.
    fn skip_page(
        &mut self,
        raw: &RawPage,
        reason: &str,
        report: &mut PollReport,
    ) -> Result<(), PollError> {
        report.refused_pages += 1;
        Counters::bump(&self.node.counters().refused_input);
        log(&format!(
            "poll {}: a page was refused and is skipped: {reason}",
            self.cfg.name
        ));
        let audit = self.node.db().audit(&AuditEntry {
            actor: Source::Poll(self.cfg.name.clone()).actor(),
            action: "refuse".into(),
            object_id: None,
            detail: serde_json::json!({
                "collection": self.cfg.collection_url,
                "reason": reason,
                "date_added_last": raw.date_added_last,
                "bookmark": report.bookmark,
            })
            .to_string(),
        });
        if let Err(e) = audit {
            log(&format!(
                "poll {}: could not audit a refused page: {e}",
                self.cfg.name
            ));
        }
        self.advance(raw, 1, report)
    }

    /// A poll ended well: said once after failures, and when it brought objects.
    fn healthy(&mut self, report: &PollReport) {
        self.failures = 0;
        if self.last_failure.take().is_some() {
            log(&format!("poll {}: working again", self.cfg.name));
        }
        if report.objects > 0 {
            log(&format!(
                "poll {}: {} object(s) in {} page(s)",
                self.cfg.name, report.objects, report.pages
            ));
        }
    }

    /// A poll failed: logged when the failure differs from the last one.
    fn failed(&mut self, e: &PollError) {
        self.failures = self.failures.saturating_add(1);
        let text = e.to_string();
        if self.last_failure.as_ref() != Some(&text) {
            log(&format!(
                "poll {}: {text}; retrying with backoff up to {} s",
                self.cfg.name,
                MAX_BACKOFF.as_secs()
            ));
            self.last_failure = Some(text);
        }
    }
}

/// The wait after `failures` failed polls in a row: the interval, doubled for each failure
/// after the first, at most [`MAX_BACKOFF`] (or the interval, if longer).
pub fn backoff(interval: Duration, failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    let longer = interval.saturating_mul(1 << doublings);
    longer.min(MAX_BACKOFF.max(interval))
}

/// One GET of a page of objects.
fn get_page(
    agent: &ureq::Agent,
    url: &str,
    authorization: Option<&str>,
    query: &[(String, String)],
    max_bytes: usize,
) -> Result<RawPage, PollError> {
    let mut request = agent.get(url).header("Accept", TAXII_MEDIA_TYPE);
    if let Some(a) = authorization {
        request = request.header("Authorization", a);
    }
    for (k, v) in query {
        request = request.query(k, v);
    }
    let mut response = request
        .call()
        .map_err(|e| PollError::Server(format!("GET {url}: {e}")))?;
    let status = response.status();
    let date_added_last = response
        .headers()
        .get(DATE_ADDED_LAST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = response
        .body_mut()
        .with_config()
        .limit(u64::try_from(max_bytes).unwrap_or(u64::MAX))
        .read_to_vec()
        .map_err(|e| PollError::Server(format!("GET {url}: reading the answer: {e}")))?;
    if status != 200 {
        return Err(PollError::Server(format!(
            "GET {url}: HTTP {status}{}",
            error_excerpt(&body)
        )));
    }
    Ok(RawPage {
        body,
        date_added_last,
    })
}

/// A TAXII error's title and description (TAXII 2.1 §3.6.1), or the start of the body.
fn error_excerpt(body: &[u8]) -> String {
    const MAX_CHARS: usize = 200;
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        let title = v.get("title").and_then(Value::as_str);
        let description = v.get("description").and_then(Value::as_str);
        if title.is_some() || description.is_some() {
            let text = [title, description]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>();
            return format!(": {}", clip(&text.join(": "), MAX_CHARS));
        }
    }
    let text = String::from_utf8_lossy(body);
    if text.trim().is_empty() {
        String::new()
    } else {
        format!(": {}", clip(text.trim(), MAX_CHARS))
    }
}

/// At most `max` characters, control characters replaced (the text goes to a log).
fn clip(s: &str, max: usize) -> String {
    s.chars()
        .take(max)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Reads a TAXII envelope: `objects` (absent: none), `more` (absent: false), `next`.
fn parse_envelope(body: &[u8]) -> Result<Envelope, String> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| format!("the answer is not a JSON envelope: {e}"))?;
    let Value::Object(mut map) = value else {
        return Err("the answer is not a JSON object (a TAXII envelope)".into());
    };
    let objects = match map.remove("objects") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a,
        Some(_) => return Err("the envelope's `objects` is not an array".into()),
    };
    let more = match map.get("more") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("the envelope's `more` is not a boolean".into()),
    };
    let next = match map.get("next") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err("the envelope's `next` is not a string".into()),
    };
    Ok(Envelope {
        objects,
        more,
        next,
    })
}
