//! The watched directory: every `*.json` file dropped into it (a STIX bundle, a TAXII
//! envelope, a single STIX object or a MISP event) is ingested, then moved to `done/`, or to
//! `refused/` with a `<name>.reason` file saying why.
//!
//! Writers should write to a dotfile (`.incoming.json`) and rename it when complete: names
//! starting with `.` are never read, and a rename within one directory is atomic. For writers
//! that cannot, a file is read only once it is *stable*: seen by two consecutive scans with
//! the same size and modification time, and last modified at least [`SETTLE`] ago. A file
//! still being written changes between scans and waits.
//!
//! Files are taken in name order, one ingest each (all of a file's objects or none). A
//! refusal is final and counted in the node's `refused_input`; a transient failure of the node
//! (database, full review queue, DDS) leaves the file where it is, to be tried again at the
//! next scan. Nothing a file contains and no I/O error makes the watcher panic: an unreadable
//! file is reported once and skipped. A file whose move fails is not ingested again while it
//! stays unchanged.

use super::{log, now_millis, sleep_unless_stopped, Outcome};
use crate::config::{Limits, Watch};
use crate::node::{Counters, IngestRequest, Node, Source};
use crate::store::AuditEntry;
use halyard_stix::object::StixObject;
use serde_json::Value;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// How long a file must be left unmodified before it is read.
pub const SETTLE: Duration = Duration::from_secs(1);

/// The most directory entries looked at in one scan; the rest wait for later scans.
pub const MAX_ENTRIES_PER_SCAN: usize = 100_000;

/// The most suffixes tried to find a free name in `done/` or `refused/`.
const MAX_SUFFIX: u32 = 10_000;

/// Where ingested files go, under the watched directory.
pub const DONE_DIR: &str = "done";

/// Where refused files (and their `.reason` files) go, under the watched directory.
pub const REFUSED_DIR: &str = "refused";

/// What a scan saw of one file: a change of either means it is still being written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seen {
    size: u64,
    modified: SystemTime,
}

/// What one scan did, by file name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScanReport {
    /// Ingested and moved to `done/`.
    pub ingested: Vec<String>,
    /// Refused and moved to `refused/`.
    pub refused: Vec<String>,
    /// Not stable yet (new, recently modified or still growing).
    pub waiting: Vec<String>,
    /// Left in place after a transient failure of the node, or an unreadable file.
    pub retry: Vec<String>,
}

/// The watcher of one directory.
pub struct Watcher {
    node: Arc<Node>,
    cfg: Watch,
    /// Each candidate file as the previous scan saw it.
    last_seen: BTreeMap<OsString, Seen>,
    /// The problem last reported for a file, so that each is logged once.
    reported: BTreeMap<OsString, String>,
    /// Files taken in (or refused) whose move failed: not ingested again while unchanged.
    stuck: BTreeMap<OsString, Seen>,
}

impl Watcher {
    /// A watcher of `cfg.dir` feeding `node`.
    pub fn new(node: Arc<Node>, cfg: Watch) -> Watcher {
        Watcher {
            node,
            cfg,
            last_seen: BTreeMap::new(),
            reported: BTreeMap::new(),
            stuck: BTreeMap::new(),
        }
    }

    /// Scans every `interval_ms` until `stop` is set.
    pub fn run(mut self, stop: &AtomicBool) {
        if let Err(e) = std::fs::create_dir_all(&self.cfg.dir) {
            log(&format!(
                "watch: cannot create {}: {e}",
                self.cfg.dir.display()
            ));
        }
        let interval = Duration::from_millis(self.cfg.interval_ms);
        while !stop.load(Ordering::Relaxed) {
            self.scan(stop);
            if !sleep_unless_stopped(stop, interval) {
                break;
            }
        }
    }

    /// Looks at the directory once and takes in every stable file, in name order, until
    /// `stop` is set.
    pub fn scan(&mut self, stop: &AtomicBool) -> ScanReport {
        let mut report = ScanReport::default();
        let candidates = match self.list() {
            Ok(c) => c,
            Err(e) => {
                self.report_once(OsString::new(), format!("watch: {e}"));
                return report;
            }
        };
        self.reported.remove(&OsString::new());
        let now = SystemTime::now();
        // What stays in the directory, for the next scan to compare with. A file moved away
        // is forgotten: a new file of the same name starts afresh.
        let mut staying = BTreeMap::new();
        for (name, seen) in candidates {
            let previous = self.last_seen.get(&name).copied();
            let display = name.to_string_lossy().into_owned();
            let stays = if stop.load(Ordering::Relaxed) || !is_stable(previous, seen, now) {
                report.waiting.push(display);
                true
            } else if self.stuck.get(&name) == Some(&seen) {
                // Taken before; its move failed and was reported.
                true
            } else {
                let taken = self.take(&name, seen);
                let stays = taken == Taken::Retry || self.stuck.contains_key(&name);
                match taken {
                    Taken::Ingested => report.ingested.push(display),
                    Taken::Refused => report.refused.push(display),
                    Taken::Retry => report.retry.push(display),
                }
                stays
            };
            if stays {
                staying.insert(name, seen);
            }
        }
        self.reported.retain(|n, _| staying.contains_key(n));
        self.stuck.retain(|n, _| staying.contains_key(n));
        self.last_seen = staying;
        report
    }

    /// The candidate files: `*.json`, not dotfiles, regular files (symbolic links followed),
    /// sorted by name.
    fn list(&self) -> Result<Vec<(OsString, Seen)>, String> {
        let dir = &self.cfg.dir;
        let entries =
            std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        let mut out = Vec::new();
        for entry in entries.take(MAX_ENTRIES_PER_SCAN) {
            let Ok(entry) = entry else { continue };
            let name = entry.file_name();
            if !is_candidate_name(&name) {
                continue;
            }
            // Follows symbolic links: a link to a file is read like the file.
            let Ok(meta) = std::fs::metadata(entry.path()) else {
                continue;
            };
            if !meta.is_file() {
                continue;
            }
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            out.push((
                name,
                Seen {
                    size: meta.len(),
                    modified,
                },
            ));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// Reads, parses and ingests one stable file, then moves it.
    fn take(&mut self, name: &OsString, seen: Seen) -> Taken {
        self.stuck.remove(name);
        let path = self.cfg.dir.join(name);
        let limits = &self.node.config().limits;
        let bytes = match read_bounded(&path, seen.size, limits.max_body_bytes) {
            Ok(b) => b,
            Err(ReadError::TooLarge(reason)) => return self.refuse(name, seen, &path, reason),
            Err(ReadError::Io(e)) => {
                self.report_once(
                    name.clone(),
                    format!("watch: cannot read {}: {e}", path.display()),
                );
                return Taken::Retry;
            }
        };
        let objects = match parse_input(&bytes, limits) {
            Ok(o) => o,
            Err(reason) => return self.refuse(name, seen, &path, reason),
        };
        let result = self.node.ingest(IngestRequest {
            objects,
            source: Source::Watch(path.clone()),
            sectors: self.cfg.sector.clone().map(|s| vec![s]),
            default_tlp: None,
        });
        match Outcome::of(&result) {
            Outcome::Ingested => {
                self.reported.remove(name);
                if let Err(e) = self.move_into(name, DONE_DIR) {
                    self.stuck.insert(name.clone(), seen);
                    self.report_once(
                        name.clone(),
                        format!(
                            "watch: {} was ingested but could not be moved to {DONE_DIR}/: {e}",
                            path.display()
                        ),
                    );
                }
                Taken::Ingested
            }
            Outcome::Refused(reason) => self.refuse(name, seen, &path, reason),
            Outcome::Transient(reason) => {
                self.report_once(
                    name.clone(),
                    format!(
                        "watch: {} not ingested yet, will retry: {reason}",
                        path.display()
                    ),
                );
                Taken::Retry
            }
        }
    }

    /// Refuses a file: counted, audited, moved to `refused/` beside its reason.
    fn refuse(&mut self, name: &OsString, seen: Seen, path: &Path, reason: String) -> Taken {
        Counters::bump(&self.node.counters().refused_input);
        log(&format!("watch: refused {}: {reason}", path.display()));
        let audit = self.node.db().audit(&AuditEntry {
            actor: Source::Watch(path.to_path_buf()).actor(),
            action: "refuse".into(),
            object_id: None,
            detail: serde_json::json!({ "file": name.to_string_lossy(), "reason": reason })
                .to_string(),
        });
        if let Err(e) = audit {
            log(&format!(
                "watch: could not audit the refusal of {}: {e}",
                path.display()
            ));
        }
        self.reported.remove(name);
        let moved = self.move_into(name, REFUSED_DIR).and_then(|target| {
            let mut reason_path = target.into_os_string();
            reason_path.push(".reason");
            std::fs::write(&reason_path, format!("{reason}\n"))
        });
        if let Err(e) = moved {
            self.stuck.insert(name.clone(), seen);
            self.report_once(
                name.clone(),
                format!(
                    "watch: {} was refused but could not be moved to {REFUSED_DIR}/: {e}",
                    path.display()
                ),
            );
        }
        Taken::Refused
    }

    /// Moves a file into a subdirectory (created if absent), under a free name; returns
    /// where it went.
    fn move_into(&self, name: &OsString, sub: &str) -> std::io::Result<PathBuf> {
        let to_dir = self.cfg.dir.join(sub);
        std::fs::create_dir_all(&to_dir)?;
        let target = free_name(&to_dir, name)?;
        std::fs::rename(self.cfg.dir.join(name), &target)?;
        Ok(target)
    }

    /// Logs `message` unless it is what was last reported for this file.
    fn report_once(&mut self, key: OsString, message: String) {
        if self.reported.get(&key) != Some(&message) {
            log(&message);
            self.reported.insert(key, message);
        }
    }
}

/// What became of one file.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Taken {
    Ingested,
    Refused,
    Retry,
}

/// `*.json` (any case), not starting with `.`.
fn is_candidate_name(name: &std::ffi::OsStr) -> bool {
    let s = name.to_string_lossy();
    !s.starts_with('.') && has_json_extension(&s)
}

fn has_json_extension(s: &str) -> bool {
    // On bytes: the last five bytes of a name need not be a character boundary.
    let b = s.as_bytes();
    b.len() > 5 && b[b.len() - 5..].eq_ignore_ascii_case(b".json")
}

/// Seen the same by the previous scan, and left alone for [`SETTLE`]. A modification time in
/// the future (a clock set back) waits until it is in the past.
fn is_stable(previous: Option<Seen>, now_seen: Seen, now: SystemTime) -> bool {
    previous == Some(now_seen)
        && now
            .duration_since(now_seen.modified)
            .is_ok_and(|age| age >= SETTLE)
}

enum ReadError {
    TooLarge(String),
    Io(std::io::Error),
}

/// Reads a whole file of at most `max` bytes; a larger one is refused without reading it all.
fn read_bounded(path: &Path, size: u64, max: usize) -> Result<Vec<u8>, ReadError> {
    let too_large = |what: String| {
        ReadError::TooLarge(format!(
            "the file has {what} bytes, over limits.max_body_bytes ({max})"
        ))
    };
    let max64 = u64::try_from(max).unwrap_or(u64::MAX);
    if size > max64 {
        return Err(too_large(size.to_string()));
    }
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).min(max));
    file.take(max64.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() > max {
        return Err(too_large(format!("more than {max}")));
    }
    Ok(bytes)
}

/// A free name for `name` in `dir`: the name itself, else `<stem>.<n>.<ext>`.
fn free_name(dir: &Path, name: &OsString) -> std::io::Result<PathBuf> {
    let first = dir.join(name);
    if !exists(&first) {
        return Ok(first);
    }
    let as_path = Path::new(name);
    let stem = as_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = as_path
        .extension()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    for n in 1..=MAX_SUFFIX {
        let candidate = dir.join(format!("{stem}.{n}.{ext}"));
        if !exists(&candidate) {
            return Ok(candidate);
        }
    }
    Err(std::io::Error::other(format!(
        "{} names like {stem}.N.{ext} are taken in {}",
        MAX_SUFFIX,
        dir.display()
    )))
}

fn exists(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

/// A MISP event: an object with `Event`, or a bare event with `info` and `Attribute`.
pub fn is_misp_event(v: &Value) -> bool {
    v.as_object().is_some_and(|o| {
        o.contains_key("Event") || (o.contains_key("info") && o.contains_key("Attribute"))
    })
}

/// Parses a file's bytes: a MISP event is converted to STIX and each object validated;
/// anything else must be a STIX bundle, envelope or object (all valid, or refused).
pub fn parse_input(bytes: &[u8], limits: &Limits) -> Result<Vec<StixObject>, String> {
    let stix = limits.stix();
    if let Ok(v) = serde_json::from_slice::<Value>(bytes) {
        if is_misp_event(&v) {
            return misp_objects(&v, &stix);
        }
    }
    halyard_stix::bundle::parse(bytes, &stix).map_err(|e| e.to_string())
}

fn misp_objects(
    event: &Value,
    limits: &halyard_stix::validate::Limits,
) -> Result<Vec<StixObject>, String> {
    halyard_stix::misp::event_to_objects(event, now_millis(), limits.max_objects)
        .map_err(|e| format!("MISP event: {e}"))
}
