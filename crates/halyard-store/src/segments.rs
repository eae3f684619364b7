//! Payload segments: the payloads of a file store's larger samples, kept outside SQLite in
//! append-only files and written past the page cache.
//!
//! # Design
//!
//! Why. With the payload in its row, a 1 KB sample reached the disk through SQLite's pages:
//! copied into fresh page-cache pages of the file (and, with the write-ahead log, into the
//! log's pages first, then again into the file's by the checkpoint). On machines whose freed
//! memory goes back to a hypervisor, that copy into fresh pages costs about as much per
//! kilobyte as all the work of a VOLATILE sample. A segment takes the payload once, from an aligned buffer, with
//! `O_DIRECT`: no page-cache page, a DMA from the buffer. The row keeps the metadata and
//! where the payload is, a small part of what it held.
//!
//! Layout. A store `PATH` keeps its segments in the directory `PATH-payloads`, one file per
//! segment, `NNNNNNNN.seg`, each up to [`SEGMENT_BYTES`]. A record is a 16-byte header
//! (magic `HYP1`, payload length as u32, the sample's row id as i64, little-endian) and the
//! payload; the row holds (segment, payload offset, payload length). A read checks the header
//! against the row, so a misplaced, truncated or foreign file is reported
//! ([`StoreError::Corrupt`]), never delivered. The table `segments` holds each segment's
//! committed end and its live bytes.
//!
//! Writes. Records are appended to a buffer aligned for `O_DIRECT`; whole blocks go out as it
//! fills, and at commit everything: the last partial block padded with zeros (the next
//! commit writes that block again with what follows). A commit writes its records, and at
//! [`SyncLevel::Normal`] and [`SyncLevel::Full`] fdatasyncs them, *before* SQLite's COMMIT:
//! a row never reaches the disk ahead of its payload, so a power loss can lose recent
//! commits (as the level says) but never leave a row whose payload is missing. At
//! [`SyncLevel::Process`] the write alone suffices: it is on the device (or in the kernel,
//! without `O_DIRECT`) when the commit returns, which is what survives a kill -9. Bytes past a
//! segment's committed end belong to no row (a transaction that did not commit) and are
//! written over. A file system that refuses `O_DIRECT` (tmpfs) gets buffered writes through
//! the same code.
//!
//! Reads go through the same `O_DIRECT` path, in spans: consecutive records are read with
//! one aligned read (up to [`READ_SPAN_BYTES`]), which is how a late joiner's catch-up streams
//! the history.
//!
//! Reclaim. Evicted and purged samples lower their segment's live bytes; a segment other than
//! the one being appended whose live bytes reach zero loses its row in the same transaction,
//! and its file is removed once that transaction committed. A kill between the two leaves a
//! file no row names; the next open removes such files (holding SQLite's write lock, so no
//! other store on the file is creating one meanwhile).
//!
//! Which stores. File stores without a size cap write segments; every file store reads
//! them. A store with a cap keeps the payloads it is given in SQLite, whose page cap then
//! bounds what it adds to the disk (the crate documentation, "The size cap"). Payloads below
//! [`SEGMENT_MIN_PAYLOAD`] stay in their rows: for them the row is most of the cost anyway,
//! and a read needs no second file.
//!
//! Several stores on one file (processes) append in turn: every write happens inside the
//! store's transaction, which holds SQLite's write lock from its first insert to its commit;
//! a store that sees another's commit reloads this state ([`Segments::invalidate`]).

use crate::error::StoreError;
use crate::types::SyncLevel;
use rusqlite::{params, Connection};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

/// Largest a segment file grows (its last record may end past it by up to one payload).
pub(crate) const SEGMENT_BYTES: u64 = 64 << 20;
/// Payloads of this many bytes and more go to segments; smaller ones stay in their rows.
pub(crate) const SEGMENT_MIN_PAYLOAD: usize = 512;
/// The header before each payload in a segment.
pub(crate) const RECORD_HEADER: u64 = 16;
const MAGIC: [u8; 4] = *b"HYP1";
/// Alignment and granularity of `O_DIRECT` transfers.
const BLOCK: usize = 4096;
/// The append buffer: whole blocks are written once it is full.
const WRITE_BUFFER: usize = 1 << 20;
/// Longest single read of a span of consecutive records.
pub(crate) const READ_SPAN_BYTES: usize = 4 << 20;
/// Records this close to one another are read together (the bytes between skipped).
const MAX_READ_GAP: u64 = 64 << 10;
/// Read handles kept open.
const READERS: usize = 4;

/// A byte buffer whose usable part starts on a [`BLOCK`] boundary (for `O_DIRECT`).
struct Aligned {
    raw: Vec<u8>,
    start: usize,
    cap: usize,
}

impl Aligned {
    /// `cap` usable bytes (a multiple of [`BLOCK`]); `None` if the allocator's address could
    /// not be aligned (then the caller does buffered I/O).
    fn new(cap: usize) -> Option<Aligned> {
        let raw = vec![0u8; cap + BLOCK];
        let start = raw.as_ptr().align_offset(BLOCK);
        (start < BLOCK).then_some(Aligned { raw, start, cap })
    }

    /// `cap` bytes with no alignment (buffered I/O).
    fn plain(cap: usize) -> Aligned {
        Aligned {
            raw: vec![0u8; cap],
            start: 0,
            cap,
        }
    }

    fn bytes(&self) -> &[u8] {
        &self.raw[self.start..self.start + self.cap]
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.raw[self.start..self.start + self.cap]
    }
}

/// The segment being appended.
struct Active {
    seg: u32,
    file: File,
    /// Buffered bytes, from file offset `block_start` (a block boundary).
    buf: Aligned,
    block_start: u64,
    len: usize,
    /// How many of the `len` bytes are in the file already.
    written: usize,
}

impl Active {
    fn end(&self) -> u64 {
        self.block_start + self.len as u64
    }

    /// Writes the buffer's unwritten bytes: whole blocks only, or (`all`) the partial last
    /// block too, padded (`direct`: the file is open with `O_DIRECT`). Then keeps only the
    /// partial last block in the buffer.
    fn write_out(&mut self, direct: bool, all: bool) -> std::io::Result<()> {
        if self.written == self.len && self.len != self.buf.cap {
            return Ok(());
        }
        let whole = if direct {
            self.len - self.len % BLOCK
        } else {
            self.len
        };
        let upto = if all && direct && whole < self.len {
            let padded = whole + BLOCK;
            let len = self.len;
            self.buf.bytes_mut()[len..padded].fill(0);
            padded
        } else {
            whole
        };
        // O_DIRECT wants the start of the transfer on a block boundary too: rewrite from the
        // block holding the first unwritten byte.
        let from = if direct {
            self.written - self.written % BLOCK
        } else {
            self.written
        };
        if upto > from {
            self.file.write_all_at(
                &self.buf.bytes()[from..upto],
                self.block_start + from as u64,
            )?;
        }
        self.written = self.len.min(upto.max(self.written));
        // Keep the partial block (direct) or nothing (buffered) in the buffer.
        let keep_from = if direct { whole } else { self.written };
        if keep_from > 0 {
            let len = self.len;
            self.buf.bytes_mut().copy_within(keep_from..len, 0);
            self.block_start += keep_from as u64;
            self.len -= keep_from;
            self.written -= keep_from.min(self.written);
        }
        Ok(())
    }
}

/// What the `segments` table says of one segment (with this transaction's changes).
#[derive(Clone, Copy, Debug)]
struct SegmentRow {
    end: u64,
    live: i64,
}

/// Where a payload is: segment, offset of the payload (after its header), length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Location {
    pub seg: u32,
    pub off: u64,
    pub len: u64,
}

/// The segments of one store (see the module documentation).
pub(crate) struct Segments {
    dir: PathBuf,
    name: String,
    /// fdatasync before each commit (Normal, Full).
    sync: bool,
    /// Use `O_DIRECT` (cleared when the file system refuses it).
    direct: bool,
    /// `rows` reflects the table (loaded within the current transaction, or since).
    loaded: bool,
    rows: BTreeMap<u32, SegmentRow>,
    /// Segments whose row this transaction changed.
    dirty: BTreeSet<u32>,
    active: Option<Active>,
    /// The transaction created a file: the directory is synced with it.
    created: bool,
    /// The transaction wrote to a segment it then left (sealed): synced with it.
    sealed: Vec<File>,
    /// Segments to remove once the transaction committed.
    doomed: Vec<u32>,
    readers: RefCell<Vec<(u32, File)>>,
    /// The span read last (see [`Segments::load_span`]).
    cached: RefCell<Option<Held>>,
    /// Started by the first `O_DIRECT` read.
    ahead: RefCell<Option<ReadAhead>>,
}

impl Drop for Segments {
    fn drop(&mut self) {
        if let Some(ahead) = self.ahead.get_mut() {
            ahead.stop();
        }
    }
}

impl Segments {
    /// The segments of the store at `path` (nothing is touched until the first write).
    pub(crate) fn new(path: &Path, name: &str, sync: SyncLevel) -> Segments {
        Segments {
            dir: Segments::dir_of(path),
            name: name.to_string(),
            sync: sync != SyncLevel::Process,
            direct: true,
            loaded: false,
            rows: BTreeMap::new(),
            dirty: BTreeSet::new(),
            active: None,
            created: false,
            sealed: Vec::new(),
            doomed: Vec::new(),
            readers: RefCell::new(Vec::new()),
            cached: RefCell::new(None),
            ahead: RefCell::new(None),
        }
    }

    /// The directory of a store's segments.
    pub(crate) fn dir_of(path: &Path) -> PathBuf {
        let mut dir = path.as_os_str().to_owned();
        dir.push("-payloads");
        PathBuf::from(dir)
    }

    fn file_of(&self, seg: u32) -> PathBuf {
        self.dir.join(format!("{seg:08}.seg"))
    }

    fn io(&self, what: &str, source: std::io::Error) -> StoreError {
        StoreError::Io {
            path: self.name.clone(),
            source: std::io::Error::new(source.kind(), format!("{what}: {source}")),
        }
    }

    fn corrupt(&self, detail: String) -> StoreError {
        StoreError::Corrupt {
            path: self.name.clone(),
            detail,
        }
    }

    /// Forgets everything cached: the table and files may have changed (another store's
    /// commit, a lost transaction). Pending writes are dropped with it (their rows are gone).
    pub(crate) fn invalidate(&mut self) {
        self.loaded = false;
        self.rows.clear();
        self.dirty.clear();
        self.active = None;
        self.created = false;
        self.sealed.clear();
        self.doomed.clear();
        self.readers.borrow_mut().clear();
        *self.cached.get_mut() = None;
        if let Some(ahead) = self.ahead.get_mut() {
            ahead.forget();
        }
    }

    /// Loads the table if it is not (call within the store's write transaction).
    pub(crate) fn load(&mut self, conn: &Connection) -> Result<(), StoreError> {
        if self.loaded {
            return Ok(());
        }
        let op = "read segments";
        let mut stmt = conn
            .prepare_cached("SELECT seg, end_offset, live FROM segments ORDER BY seg")
            .map_err(|e| crate::open::classify(&self.name, op, e))?;
        let mut rows = stmt
            .query([])
            .map_err(|e| crate::open::classify(&self.name, op, e))?;
        let mut loaded = BTreeMap::new();
        while let Some(r) = rows
            .next()
            .map_err(|e| crate::open::classify(&self.name, op, e))?
        {
            let get = |i| r.get::<_, i64>(i);
            let (seg, end, live) = match (get(0), get(1), get(2)) {
                (Ok(s), Ok(e), Ok(l)) => (s, e, l),
                _ => return Err(self.corrupt("a segments row is not three integers".into())),
            };
            let (Ok(seg), Ok(end)) = (u32::try_from(seg), u64::try_from(end)) else {
                return Err(self.corrupt(format!("segment row ({seg}, {end}) out of range")));
            };
            loaded.insert(seg, SegmentRow { end, live });
        }
        self.rows = loaded;
        self.loaded = true;
        Ok(())
    }

    /// At open, within a write transaction: every segment the table names exists and holds
    /// its committed bytes (else [`StoreError::Corrupt`], nothing removed), and files no row
    /// names (a transaction killed after it created one, or before it removed a reclaimed
    /// one) are removed. Returns how many were removed.
    pub(crate) fn verify_and_sweep(&mut self, conn: &Connection) -> Result<usize, StoreError> {
        self.load(conn)?;
        for (&seg, row) in &self.rows {
            let path = self.file_of(seg);
            match std::fs::metadata(&path) {
                Ok(m) if m.len() >= row.end => {}
                Ok(m) => {
                    return Err(self.corrupt(format!(
                        "payload segment {} holds {} bytes, its committed end is {}",
                        path.display(),
                        m.len(),
                        row.end
                    )))
                }
                Err(e) => {
                    return Err(self.corrupt(format!(
                        "payload segment {} is missing ({e}); copy or move a store with its \
                         -payloads directory",
                        path.display()
                    )))
                }
            }
        }
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(self.io("list payload segments", e)),
        };
        let mut removed = 0;
        for entry in entries {
            let entry = entry.map_err(|e| self.io("list payload segments", e))?;
            let name = entry.file_name();
            let Some(seg) = name
                .to_str()
                .and_then(|n| n.strip_suffix(".seg"))
                .filter(|n| n.len() == 8)
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if !self.rows.contains_key(&seg) {
                std::fs::remove_file(entry.path())
                    .map_err(|e| self.io("remove an orphan payload segment", e))?;
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// Appends the payload of row `row`; returns where it is. Call within the store's write
    /// transaction, after [`Segments::load`].
    pub(crate) fn append(&mut self, row: i64, payload: &[u8]) -> Result<Location, StoreError> {
        let record = RECORD_HEADER + payload.len() as u64;
        let len = u32::try_from(payload.len())
            .map_err(|_| self.corrupt(format!("a payload of {} bytes", payload.len())))?;
        let needs_new = match &self.active {
            Some(a) => a.end() > 0 && a.end() + record > SEGMENT_BYTES,
            None => true,
        };
        if needs_new {
            self.roll(record)?;
        }
        let mut header = [0u8; RECORD_HEADER as usize];
        header[..4].copy_from_slice(&MAGIC);
        header[4..8].copy_from_slice(&len.to_le_bytes());
        header[8..].copy_from_slice(&row.to_le_bytes());
        let start = self.active_end();
        self.push(&header)?;
        self.push(payload)?;
        let Some(a) = &self.active else {
            return Err(self.corrupt("no active payload segment".into()));
        };
        let seg = a.seg;
        let end = a.end();
        let entry = self
            .rows
            .entry(seg)
            .or_insert(SegmentRow { end: 0, live: 0 });
        entry.end = end;
        entry.live += record as i64;
        self.dirty.insert(seg);
        Ok(Location {
            seg,
            off: start + RECORD_HEADER,
            len: u64::from(len),
        })
    }

    fn active_end(&self) -> u64 {
        self.active.as_ref().map_or(0, Active::end)
    }

    /// Leaves the active segment (if any) and takes the next one with room for `record`:
    /// the last segment of the table if it has room, else a new file.
    fn roll(&mut self, record: u64) -> Result<(), StoreError> {
        if let Some(mut old) = self.active.take() {
            old.write_out(self.direct, true)
                .map_err(|e| self.io("write a payload segment", e))?;
            // Looked at by the commit: a segment whose samples all went while it was the
            // active one has no live bytes left and is reclaimed now.
            self.dirty.insert(old.seg);
            if self.sync {
                self.sealed.push(old.file);
            }
        }
        let last = self.rows.iter().next_back().map(|(&s, r)| (s, r.end));
        let (seg, end, fresh) = match last {
            Some((seg, end)) if end + record <= SEGMENT_BYTES => (seg, end, false),
            Some((seg, _)) => (seg + 1, 0, true),
            None => (1, 0, true),
        };
        if fresh {
            std::fs::create_dir_all(&self.dir)
                .map_err(|e| self.io("create the payload directory", e))?;
            self.created = true;
        }
        let path = self.file_of(seg);
        let file = self.open_write(&path, fresh)?;
        let mut buf = match Aligned::new(WRITE_BUFFER) {
            Some(buf) => buf,
            None => {
                // No aligned buffer: buffered writes, the buffer starting at `end` itself.
                self.direct = false;
                Aligned::plain(WRITE_BUFFER)
            }
        };
        let block_start = match self.direct {
            true => end - end % BLOCK as u64,
            false => end,
        };
        let tail = (end - block_start) as usize;
        if tail > 0 {
            self.read_block(&file, &mut buf, block_start, tail, &path)?;
        }
        if fresh {
            self.rows.insert(seg, SegmentRow { end: 0, live: 0 });
            self.dirty.insert(seg);
        }
        self.active = Some(Active {
            seg,
            file,
            buf,
            block_start,
            len: tail,
            written: tail,
        });
        Ok(())
    }

    fn open_write(&mut self, path: &Path, fresh: bool) -> Result<File, StoreError> {
        let open = |direct: bool| {
            let mut o = OpenOptions::new();
            o.read(true).write(true).create(fresh);
            if direct {
                o.custom_flags(libc::O_DIRECT);
            }
            o.open(path)
        };
        let file = match open(self.direct) {
            Ok(f) => f,
            Err(e) if self.direct && e.raw_os_error() == Some(libc::EINVAL) => {
                self.direct = false;
                open(false).map_err(|e| self.io("open a payload segment", e))?
            }
            Err(e) => return Err(self.io("open a payload segment", e)),
        };
        if fresh {
            // A file left by a transaction that never committed: its bytes belong to no row.
            file.set_len(0)
                .map_err(|e| self.io("truncate a new payload segment", e))?;
        }
        Ok(file)
    }

    /// Reads the `tail` committed bytes of the block at `at` into the start of `buf`.
    fn read_block(
        &self,
        file: &File,
        buf: &mut Aligned,
        at: u64,
        tail: usize,
        path: &Path,
    ) -> Result<(), StoreError> {
        let want = if self.direct { BLOCK } else { tail };
        let mut got = 0;
        while got < tail {
            match file.read_at(&mut buf.bytes_mut()[got..want], at + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io("read a payload segment's last block", e)),
            }
        }
        if got < tail {
            return Err(self.corrupt(format!(
                "payload segment {} ends before its committed end",
                path.display()
            )));
        }
        Ok(())
    }

    /// Copies `bytes` into the append buffer, writing whole blocks out as it fills.
    fn push(&mut self, mut bytes: &[u8]) -> Result<(), StoreError> {
        while !bytes.is_empty() {
            let direct = self.direct;
            let Some(a) = self.active.as_mut() else {
                return Err(self.corrupt("no active payload segment".into()));
            };
            if a.len == a.buf.cap {
                if let Err(e) = a.write_out(direct, false) {
                    return Err(self.io("write a payload segment", e));
                }
            }
            let n = bytes.len().min(a.buf.cap - a.len);
            let at = a.len;
            a.buf.bytes_mut()[at..at + n].copy_from_slice(&bytes[..n]);
            a.len += n;
            bytes = &bytes[n..];
        }
        Ok(())
    }

    /// Before SQLite's COMMIT: writes everything appended, syncs it (Normal, Full), and
    /// writes the changed rows of the `segments` table, removing those of emptied segments.
    pub(crate) fn before_commit(&mut self, conn: &Connection) -> Result<(), StoreError> {
        let (direct, sync) = (self.direct, self.sync);
        if let Some(a) = self.active.as_mut() {
            let written = a.write_out(direct, true);
            if let Err(e) = written {
                return Err(self.io("write a payload segment", e));
            }
            if sync {
                if let Err(e) = a.file.sync_data() {
                    return Err(self.io("sync a payload segment", e));
                }
            }
        }
        for file in std::mem::take(&mut self.sealed) {
            file.sync_data()
                .map_err(|e| self.io("sync a payload segment", e))?;
        }
        if self.created && self.sync {
            File::open(&self.dir)
                .and_then(|d| d.sync_all())
                .map_err(|e| self.io("sync the payload directory", e))?;
        }
        self.created = false;
        let active = self.active.as_ref().map(|a| a.seg);
        let sql = |e| crate::open::classify(&self.name, "write segments", e);
        for seg in std::mem::take(&mut self.dirty) {
            let Some(row) = self.rows.get(&seg).copied() else {
                continue;
            };
            if row.live <= 0 && Some(seg) != active {
                conn.prepare_cached("DELETE FROM segments WHERE seg = ?1")
                    .and_then(|mut s| s.execute([seg]))
                    .map_err(sql)?;
                self.rows.remove(&seg);
                self.doomed.push(seg);
            } else {
                conn.prepare_cached(
                    "INSERT INTO segments (seg, end_offset, live) VALUES (?1, ?2, ?3) \
                     ON CONFLICT (seg) DO UPDATE SET end_offset = excluded.end_offset, \
                     live = excluded.live",
                )
                .and_then(|mut s| s.execute(params![seg, row.end as i64, row.live]))
                .map_err(sql)?;
            }
        }
        Ok(())
    }

    /// After SQLite's COMMIT: removes the files of segments the commit emptied.
    pub(crate) fn after_commit(&mut self) {
        let doomed = std::mem::take(&mut self.doomed);
        if doomed.is_empty() {
            return;
        }
        self.readers
            .borrow_mut()
            .retain(|(s, _)| !doomed.contains(s));
        *self.cached.get_mut() = None;
        if let Some(ahead) = self.ahead.get_mut() {
            ahead.forget();
        }
        for seg in doomed {
            // A file that cannot be removed now is an orphan the next open removes.
            let _ = std::fs::remove_file(self.file_of(seg));
        }
    }

    /// A row whose payload was at `loc` was deleted in this transaction.
    pub(crate) fn removed(&mut self, loc: Location) {
        let row = self
            .rows
            .entry(loc.seg)
            .or_insert(SegmentRow { end: 0, live: 0 });
        row.live -= (RECORD_HEADER + loc.len) as i64;
        self.dirty.insert(loc.seg);
    }

    /// Reads the payloads at `locs` (with their rows' ids), in order, calling `f` with each.
    /// Records that follow one another in a segment are read together.
    pub(crate) fn read(
        &mut self,
        locs: &[(i64, Location)],
        mut f: impl FnMut(usize, Vec<u8>),
    ) -> Result<(), StoreError> {
        // Pending records may still be in the append buffer: write them first (still not
        // committed; a rollback leaves them to be written over).
        let direct = self.direct;
        if let Some(a) = self.active.as_mut() {
            let pending = locs
                .iter()
                .any(|(_, l)| l.seg == a.seg && l.off + l.len > a.block_start + a.written as u64);
            if pending {
                if let Err(e) = a.write_out(direct, true) {
                    return Err(self.io("write a payload segment", e));
                }
            }
        }
        let mut i = 0;
        while i < locs.len() {
            let first = locs[i].1;
            let start = first.off - RECORD_HEADER;
            let mut end = first.off + first.len;
            let mut j = i + 1;
            while j < locs.len() {
                let l = locs[j].1;
                // The next record, within a small gap (other channels' records between).
                let at = l.off - RECORD_HEADER;
                if l.seg != first.seg
                    || at < end
                    || at - end > MAX_READ_GAP
                    || (l.off + l.len - start) as usize > READ_SPAN_BYTES
                {
                    break;
                }
                end = l.off + l.len;
                j += 1;
            }
            let skip = self.load_span(first.seg, start, end)?;
            let cached = self.cached.borrow();
            let Some(held) = cached.as_ref() else {
                return Err(self.corrupt("no payload span read".into()));
            };
            let span = &held.buf.bytes()[skip..skip + (end - start) as usize];
            for (k, (row, l)) in locs[i..j].iter().enumerate() {
                let at = (l.off - RECORD_HEADER - start) as usize;
                f(i + k, self.check_record(span, at, *row, *l)?);
            }
            i = j;
        }
        Ok(())
    }

    /// Checks the header at `span[at..]` against the row and returns the payload.
    fn check_record(
        &self,
        span: &[u8],
        at: usize,
        row: i64,
        l: Location,
    ) -> Result<Vec<u8>, StoreError> {
        let header = &span[at..at + RECORD_HEADER as usize];
        let len = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        let mut id = [0u8; 8];
        id.copy_from_slice(&header[8..16]);
        if header[..4] != MAGIC || u64::from(len) != l.len || i64::from_le_bytes(id) != row {
            return Err(self.corrupt(format!(
                "payload segment {} holds no record of row {row} at offset {}",
                self.file_of(l.seg).display(),
                l.off - RECORD_HEADER
            )));
        }
        let from = at + RECORD_HEADER as usize;
        Ok(span[from..from + l.len as usize].to_vec())
    }

    /// Makes [`Segments::cached`] hold bytes `[start, end)` of segment `seg`; returns the
    /// offset of `start` in its buffer. A span already held serves several reads; with
    /// `O_DIRECT` a reader going forward through a segment gets its next span from the
    /// read-ahead thread (see [`ReadAhead`]), which then reads the one after meanwhile.
    fn load_span(&self, seg: u32, start: u64, end: u64) -> Result<usize, StoreError> {
        let mut cached = self.cached.borrow_mut();
        if let Some(h) = cached.as_ref() {
            if h.seg == seg && start >= h.from && end <= h.from + h.got as u64 {
                return Ok((start - h.from) as usize);
            }
        }
        let path = self.file_of(seg);
        let short = || {
            self.corrupt(format!(
                "payload segment {} ends before byte {end}",
                path.display()
            ))
        };
        let from = match self.direct {
            true => start - start % BLOCK as u64,
            false => start,
        };
        let need = (end - from) as usize;
        let total = match self.direct {
            true => need.div_ceil(BLOCK) * BLOCK,
            false => need,
        };
        // A reader going forward: this span starts where the one held ends.
        let sequential = cached
            .as_ref()
            .is_some_and(|h| h.seg == seg && from >= h.from && from <= h.from + h.got as u64);
        let ahead = match self.direct {
            true => Some(
                self.ahead
                    .borrow_mut()
                    .get_or_insert_with(ReadAhead::start)
                    .clone(),
            ),
            false => None,
        };
        let old = cached.take().map(|h| h.buf);
        let taken = ahead.as_ref().and_then(|a| a.take(seg, from, need));
        let was_taken = taken.is_some();
        let held = match taken {
            Some(h) => {
                if let (Some(a), Some(buf)) = (&ahead, old) {
                    a.give(buf);
                }
                h
            }
            None => {
                let mut buf = match old {
                    Some(b) if b.cap >= total => b,
                    _ => match self.direct {
                        true => Aligned::new(total.max(READ_SPAN_BYTES))
                            .ok_or_else(|| self.corrupt("no aligned read buffer".into()))?,
                        false => Aligned::plain(total.max(READ_SPAN_BYTES)),
                    },
                };
                let file = self.reader(seg, &path)?;
                let got = read_into(&file, &mut buf, from, need, total, self.direct)
                    .map_err(|e| self.io("read a payload segment", e))?;
                if got < need {
                    return Err(short());
                }
                Held {
                    seg,
                    from,
                    buf,
                    got: got.min(need),
                }
            }
        };
        if let Some(a) = ahead.filter(|_| sequential || was_taken) {
            // Bytes of the active segment not yet in its file may change: never read ahead.
            let valid_end = match &self.active {
                Some(act) if act.seg == seg => act.block_start + act.written as u64,
                _ => u64::MAX,
            };
            a.want(ReadRequest {
                dir: self.dir.clone(),
                seg,
                from: {
                    let end = held.from + held.got as u64;
                    end - end % BLOCK as u64
                },
                len: READ_SPAN_BYTES,
                valid_end,
                generation: a.generation(),
            });
        }
        let offset = (start - held.from) as usize;
        *cached = Some(held);
        Ok(offset)
    }

    /// A read handle of segment `seg` (cached).
    fn reader(&self, seg: u32, path: &Path) -> Result<File, StoreError> {
        let mut readers = self.readers.borrow_mut();
        if let Some((_, f)) = readers.iter().find(|(s, _)| *s == seg) {
            return f
                .try_clone()
                .map_err(|e| self.io("open a payload segment", e));
        }
        let file = self.open_read(path)?;
        if readers.len() == READERS {
            readers.remove(0);
        }
        let clone = file
            .try_clone()
            .map_err(|e| self.io("open a payload segment", e))?;
        readers.push((seg, file));
        Ok(clone)
    }

    fn open_read(&self, path: &Path) -> Result<File, StoreError> {
        open_for_reading(path, self.direct).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                self.corrupt(format!("payload segment {} is missing", path.display()))
            } else {
                self.io("open a payload segment", e)
            }
        })
    }
}

/// Opens a segment to read it, with `O_DIRECT` if `direct`.
fn open_for_reading(path: &Path, direct: bool) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true);
    if direct {
        o.custom_flags(libc::O_DIRECT);
    }
    o.open(path)
}

/// Reads `file` from `from` into `buf` until `need` bytes are there (at most `total`), or the
/// file ends; returns the bytes read. With `O_DIRECT` a read that ends off a block boundary
/// is the end of the file.
fn read_into(
    file: &File,
    buf: &mut Aligned,
    from: u64,
    need: usize,
    total: usize,
    direct: bool,
) -> std::io::Result<usize> {
    let mut got = 0;
    while got < need {
        match file.read_at(&mut buf.bytes_mut()[got..total], from + got as u64) {
            Ok(0) => break,
            Ok(n) => {
                got += n;
                if direct && got % BLOCK != 0 {
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Bytes `[from, from + got)` of segment `seg`, in `buf`.
struct Held {
    seg: u32,
    from: u64,
    buf: Aligned,
    got: usize,
}

/// One span for [`ReadAhead`] to read.
#[derive(Clone, Debug)]
struct ReadRequest {
    dir: PathBuf,
    seg: u32,
    /// Block-aligned start, and length (a multiple of the block).
    from: u64,
    len: usize,
    /// Bytes at and past this offset may still change (the active segment's unwritten
    /// end): never handed over.
    valid_end: u64,
    /// [`AheadState::generation`] when asked: a read from an older one is dropped.
    generation: u64,
}

#[derive(Default)]
struct AheadState {
    /// The next span to read (a newer request replaces one not started).
    request: Option<ReadRequest>,
    in_flight: Option<ReadRequest>,
    /// The last span read: its request, buffer and valid bytes.
    held: Option<(ReadRequest, Aligned, usize)>,
    /// A buffer to read into.
    spare: Option<Aligned>,
    /// Raised whenever held bytes may no longer be what the files hold.
    generation: u64,
    stop: bool,
}

struct AheadShared {
    state: Mutex<AheadState>,
    ready: Condvar,
}

/// Reads the next span of a segment on a thread of its own while the store's thread serves
/// the span before: a late joiner's catch-up reads segments from start to end, and the wait
/// for the device then overlaps the service's work instead of adding to it. One span ahead,
/// handed over without a copy (the buffers change hands). Held bytes are dropped when the
/// store forgets its state (another store's commit, a rollback) or removes a segment, and
/// bytes of the active segment not yet in its file are never read ahead.
#[derive(Clone)]
struct ReadAhead {
    shared: Arc<AheadShared>,
}

impl ReadAhead {
    fn start() -> ReadAhead {
        let shared = Arc::new(AheadShared {
            state: Mutex::new(AheadState::default()),
            ready: Condvar::new(),
        });
        let worker = Arc::clone(&shared);
        let spawned = std::thread::Builder::new()
            .name("halyard-readahead".into())
            .spawn(move || read_ahead_loop(&worker));
        if spawned.is_err() {
            // No thread: every read is then done by the store's thread (take finds nothing).
            shared.lock().stop = true;
        }
        ReadAhead { shared }
    }

    fn generation(&self) -> u64 {
        self.shared.lock().generation
    }

    /// Asks for `req` to be read next.
    fn want(&self, req: ReadRequest) {
        let mut st = self.shared.lock();
        if !st.stop {
            st.request = Some(req);
            self.shared.ready.notify_all();
        }
    }

    /// The held span if it covers `need` bytes of segment `seg` from `from` (waiting for a
    /// read in flight that will), with the offset of `from` in its buffer.
    fn take(&self, seg: u32, from: u64, need: usize) -> Option<Held> {
        let covers = |r: &ReadRequest, got: usize, generation: u64| {
            r.seg == seg
                && r.generation == generation
                && from >= r.from
                && from + need as u64 <= r.from + got as u64
        };
        let mut st = self.shared.lock();
        loop {
            let generation = st.generation;
            if let Some((r, _, got)) = &st.held {
                if covers(r, *got, generation) {
                    let (r, buf, got) = st.held.take()?;
                    return Some(Held {
                        seg: r.seg,
                        from: r.from,
                        buf,
                        got,
                    });
                }
            }
            let waiting = st.in_flight.as_ref().is_some_and(|r| {
                let readable = (r.valid_end.saturating_sub(r.from) as usize).min(r.len);
                covers(r, readable, generation)
            });
            if !waiting {
                return None;
            }
            st = self
                .shared
                .ready
                .wait(st)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// A buffer for the thread to read into.
    fn give(&self, buf: Aligned) {
        let mut st = self.shared.lock();
        if st.spare.as_ref().is_none_or(|s| s.cap < buf.cap) {
            st.spare = Some(buf);
        }
    }

    /// Drops what is held or being read: the files may have changed.
    fn forget(&self) {
        let mut st = self.shared.lock();
        st.generation += 1;
        st.request = None;
        if let Some((_, buf, _)) = st.held.take() {
            st.spare = Some(buf);
        }
    }

    fn stop(&self) {
        let mut st = self.shared.lock();
        st.stop = true;
        st.request = None;
        self.shared.ready.notify_all();
    }
}

impl AheadShared {
    fn lock(&self) -> std::sync::MutexGuard<'_, AheadState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn read_ahead_loop(shared: &AheadShared) {
    let mut open: Option<(PathBuf, File)> = None;
    loop {
        let (req, spare) = {
            let mut st = shared.lock();
            loop {
                if st.stop {
                    return;
                }
                if let Some(req) = st.request.take() {
                    st.in_flight = Some(req.clone());
                    break (req, st.spare.take());
                }
                st = shared
                    .ready
                    .wait(st)
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
            }
        };
        let path = req.dir.join(format!("{:08}.seg", req.seg));
        let mut buf = spare
            .filter(|b| b.cap >= req.len)
            .or_else(|| Aligned::new(req.len));
        if open.as_ref().is_none_or(|(p, _)| *p != path) {
            open = open_for_reading(&path, true)
                .ok()
                .map(|f| (path.clone(), f));
        }
        let got = match (&open, buf.as_mut()) {
            (Some((_, file)), Some(b)) => {
                read_into(file, b, req.from, req.len, req.len, true).unwrap_or(0)
            }
            _ => 0,
        };
        let valid = got.min(req.valid_end.saturating_sub(req.from) as usize);
        let mut st = shared.lock();
        st.in_flight = None;
        if let Some(b) = buf {
            if req.generation == st.generation && valid > 0 {
                if let Some((_, old, _)) = st.held.replace((req, b, valid)) {
                    st.spare = Some(old);
                }
            } else {
                st.spare = Some(b);
            }
        }
        shared.ready.notify_all();
    }
}
