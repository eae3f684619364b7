//! The driver around the sans-I/O core: one mutex-protected core per participant, three
//! receive threads (unicast, SPDP multicast, user-data multicast) and a timer thread. Writes
//! run on the application thread, which also sends. Every call into the core goes through
//! [`Shared::drive`] (or [`Shared::drive_until`] for calls that block): lock, call the core
//! with `now`, `pump` (send queued datagrams, turn core events and samples into entity
//! statuses and reader caches), release the lock, wake waiting threads and run listeners
//! (outside the lock).
//!
//! Received datagrams are handled on the receive thread itself (no hop) when the lock is
//! free. When a thread that drives the core holds it (a writer encrypting and sending 63 KB,
//! say), the receive thread leaves the datagram in a bounded inbox and goes back to its
//! socket; the holder handles the inbox before it releases the lock (see
//! [`Shared::receive`]). Sleeping on the lock instead cost the holder a futex wake-up of the
//! other core at every release: with a writer that holds the lock most of the time, a large
//! share of the writing thread. Listener calls caused by a
//! handed-over datagram run on the timer thread, never inside the holder's call: an
//! application may hold a lock of its own while it writes and take it in a listener.

use crate::clock::{monotonic, wall_clock};
use crate::status::{ReaderState, WriterState};
use halyard_core::{Event, Instant, Participant, SeededMap};
use halyard_net::UdpTransport;
use halyard_wire::EntityId;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

thread_local! {
    /// Set while this thread runs listener callbacks.
    static IN_LISTENER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

pub(crate) struct State {
    pub(crate) core: Participant,
    pub(crate) readers: SeededMap<EntityId, ReaderState>,
    pub(crate) writers: SeededMap<EntityId, WriterState>,
    pub(crate) timer_deadline: Option<Instant>,
    pub(crate) send_failures: u64,
    /// Test-only fault injection on send and receive (`ParticipantOptions::fault_injection`).
    pub(crate) faults: Option<halyard_net::FaultInjector>,
    /// Listener calls to run once the lock is released.
    pending_calls: Vec<PendingCall>,
    /// Listener calls due to datagrams a holder handled for the receive threads (see
    /// [`Shared::receive`]): the timer thread runs them, never the holder, which may be an
    /// application thread inside a call (holding a lock of its own the listener takes).
    deferred_calls: Vec<PendingCall>,
    /// Builtin-topic caches (present once the application asked for a builtin reader).
    pub(crate) builtin: crate::builtin::BuiltinCaches,
    /// The durability service this participant runs for, if it is one's (see
    /// [`crate::durability`]): its readers' samples and the domain's writers go to it.
    pub(crate) service: Option<crate::durability::Tap>,
    /// The embedded durability service this participant's writers feed in memory, if any
    /// (see [`crate::durability::DurabilityService::start_embedded`]).
    pub(crate) fed: Option<std::sync::mpsc::Sender<crate::durability::Input>>,
    /// Write DDS Security decisions to standard error (`ParticipantOptions::security_log`).
    pub(crate) security_log: bool,
}

impl State {
    /// Asks the embedded durability service to commit now when it is what `writer` waits on
    /// (a write blocked on a full history, a wait for acknowledgments), rather than at the
    /// end of its batch. True if it was asked.
    pub(crate) fn ask_service_commit(&self, writer: EntityId) -> bool {
        match &self.fed {
            Some(tx) if self.core.writer_waits_on_fed(writer) => {
                // The service thread ends only after this participant shut down.
                let _ = tx.send(crate::durability::Input::Commit);
                true
            }
            _ => false,
        }
    }
}

/// A deferred listener invocation.
pub(crate) type PendingCall = Box<dyn FnOnce() + Send>;

pub(crate) struct Shared {
    pub(crate) state: Mutex<State>,
    /// Signalled whenever statuses or caches change (see [`Shared::wait_changed`]).
    changed: Condvar,
    /// Threads blocked on `changed`: a notification is a system call, so it is made only
    /// when somebody waits (this is on the hot path of every datagram and write).
    changed_waiters: AtomicUsize,
    timer: Condvar,
    pub(crate) transport: UdpTransport,
    stop: AtomicBool,
    epoch: std::time::Instant,
    /// WaitSets with a condition on this participant.
    waitsets: Mutex<Vec<std::sync::Weak<crate::condition::Notifier>>>,
    has_waitsets: AtomicBool,
    threads: Mutex<Vec<JoinHandle<()>>>,
    /// Datagrams a receive thread found the lock busy for and left to its holder (see
    /// [`Shared::receive_loop`]): at most [`INBOX_DATAGRAMS`].
    inbox: Mutex<Vec<Vec<u8>>>,
    /// Datagrams in `inbox`.
    inbox_len: AtomicUsize,
    /// The participant's GUID prefix: its own datagrams, which a multicast it sent brings
    /// back, are dropped before they take the lock (see [`Shared::receive`]).
    prefix: halyard_wire::GuidPrefix,
    /// The lock's holder handles the inbox before it releases the lock: it took it with
    /// [`Shared::lock_draining`] and ends with [`Shared::finish`] (or waits through
    /// [`Shared::wait_changed`] or the timer loop, which handle it before they wait).
    drainer_holds: AtomicBool,
}

/// Datagrams the receive threads may leave to the lock's holder; beyond, they wait for the
/// lock as any other thread.
const INBOX_DATAGRAMS: usize = 64;

impl Shared {
    pub(crate) fn new(core: Participant, transport: UdpTransport) -> Arc<Shared> {
        let seed = core.config().hash_seed;
        let prefix = core.guid_prefix();
        Arc::new(Shared {
            state: Mutex::new(State {
                core,
                readers: halyard_core::seeded_map(seed),
                writers: halyard_core::seeded_map(seed),
                timer_deadline: None,
                send_failures: 0,
                faults: None,
                pending_calls: Vec::new(),
                deferred_calls: Vec::new(),
                builtin: Default::default(),
                service: None,
                fed: None,
                security_log: false,
            }),
            changed: Condvar::new(),
            changed_waiters: AtomicUsize::new(0),
            timer: Condvar::new(),
            transport,
            stop: AtomicBool::new(false),
            epoch: monotonic(),
            waitsets: Mutex::new(Vec::new()),
            has_waitsets: AtomicBool::new(false),
            threads: Mutex::new(Vec::new()),
            inbox: Mutex::new(Vec::new()),
            inbox_len: AtomicUsize::new(0),
            prefix,
            drainer_holds: AtomicBool::new(false),
        })
    }

    /// Monotonic now for the core.
    pub(crate) fn now(&self) -> Instant {
        Instant::from_nanos(monotonic().saturating_duration_since(self.epoch).as_nanos() as u64)
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock would be a bug in Halyard; keep serving regardless.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The lock, for a holder that handles the inbox before releasing it (it ends with
    /// [`Self::finish`]).
    fn lock_draining(&self) -> MutexGuard<'_, State> {
        let st = self.lock();
        self.drainer_holds.store(true, Ordering::SeqCst);
        st
    }

    /// Handles the datagrams the receive threads left in the inbox, then pumps; false if
    /// there were none. Lock held.
    fn drain_inbox(&self, st: &mut State) -> bool {
        if self.inbox_len.load(Ordering::SeqCst) == 0 {
            return false;
        }
        let batch = std::mem::take(&mut *self.inbox.lock().unwrap_or_else(|p| p.into_inner()));
        self.inbox_len.fetch_sub(batch.len(), Ordering::SeqCst);
        let now = self.now();
        for d in &batch {
            Self::handle_datagram(st, now, d);
        }
        let before = st.pending_calls.len();
        self.pump(st);
        if st.pending_calls.len() > before {
            let calls = st.pending_calls.split_off(before);
            st.deferred_calls.extend(calls);
            self.timer.notify_one();
        }
        true
    }

    /// One received datagram into the core (through the fault injector, if any).
    fn handle_datagram(st: &mut State, now: Instant, datagram: &[u8]) {
        match st.faults.as_mut() {
            None => st.core.handle_datagram(now, datagram),
            Some(f) => {
                for d in f.on_receive(datagram) {
                    st.core.handle_datagram(now, &d);
                }
            }
        }
    }

    /// Before a draining holder releases the lock by waiting on a condition variable: it
    /// stops draining, unless a receive thread left a datagram meanwhile (false: the holder
    /// drains again and does not wait). The check after the flag is cleared pairs with the
    /// receive thread's check of the flag after it left a datagram.
    fn stop_draining(&self) -> bool {
        self.drainer_holds.store(false, Ordering::SeqCst);
        if self.inbox_len.load(Ordering::SeqCst) > 0 {
            self.drainer_holds.store(true, Ordering::SeqCst);
            return false;
        }
        true
    }

    /// Releases the lock of a draining holder: the inbox is handled first, and once more
    /// after the release if a receive thread left a datagram meanwhile. True if the lock
    /// must be taken again for that.
    fn release_draining(&self, mut st: MutexGuard<'_, State>) -> bool {
        self.drain_inbox(&mut st);
        self.drainer_holds.store(false, Ordering::SeqCst);
        drop(st);
        self.inbox_len.load(Ordering::SeqCst) > 0
    }

    /// Sends queued datagrams and dispatches events/samples. Call with the lock held.
    pub(crate) fn pump(&self, st: &mut State) {
        self.pump_after(st, false)
    }

    /// [`Self::pump`] after a call that only wrote (`writes_only`): unless the pump itself
    /// finds events or samples, the next timeout is the earlier of the one known and what the
    /// writes set (`Participant::take_write_due`), without visiting every endpoint.
    pub(crate) fn pump_after(&self, st: &mut State, writes_only: bool) {
        let mut quiet = true;
        while let Some(t) = st.core.poll_transmit() {
            let state: &mut State = st;
            match state.faults.as_mut() {
                None => {
                    state.send_failures += self.transport.send(&t.destinations, &t.payload) as u64;
                }
                Some(f) => {
                    for (d, p) in f.on_send(&t.destinations, &t.payload) {
                        state.send_failures += self.transport.send(&d, &p) as u64;
                    }
                }
            }
            st.core.recycle(t.payload);
        }
        while let Some(e) = st.core.poll_event() {
            quiet = false;
            log_security_event(&e, st.security_log);
            st.builtin.on_event(&e);
            if let Some(tap) = st.service.as_mut() {
                tap.on_event(&e);
            }
            if let Some(call) = dispatch_event(st, e) {
                st.pending_calls.push(call);
            }
        }
        let mut now_wall = None;
        // One on_data_available per reader per batch of arrivals: the listener takes them all.
        let mut notified: Vec<EntityId> = Vec::new();
        while let Some(s) = st.core.poll_sample() {
            quiet = false;
            let Some(r) = st.readers.get_mut(&s.reader) else {
                if let Some(tap) = st.service.as_mut() {
                    tap.on_sample(s);
                }
                continue;
            };
            let rejected_before = r.sample_rejected;
            let reader = s.reader;
            if r.insert(s, *now_wall.get_or_insert_with(wall_clock)) {
                if let Some(l) = r.listener.clone() {
                    if !notified.contains(&reader) {
                        notified.push(reader);
                        st.pending_calls
                            .push(Box::new(move || l.on_data_available()));
                    }
                }
            } else if r.sample_rejected > rejected_before {
                if let Some(l) = r.listener.clone() {
                    let total = r.sample_rejected;
                    st.pending_calls
                        .push(Box::new(move || l.on_sample_rejected(total)));
                }
            }
        }
        while let Some(s) = st.core.poll_fed() {
            if let Some(tx) = &st.fed {
                // The service thread ends only after this participant shut down.
                let _ = tx.send(crate::durability::Input::Fed(s));
            }
        }
        let next = match st.core.take_write_due() {
            halyard_core::WriteDue::Writes(due) if writes_only && quiet => match due {
                // The writes set nothing before the timer's next wake-up.
                None => return,
                Some(d) if st.timer_deadline.is_some_and(|t| t <= d) => return,
                Some(d) => Some(d),
            },
            _ => st.core.poll_timeout(),
        };
        if next < st.timer_deadline || st.timer_deadline.is_none() {
            st.timer_deadline = next;
            self.timer.notify_one();
        }
    }

    /// Releases the lock, wakes waiters and runs listeners. Listener calls made while a
    /// listener runs on this thread (a listener that takes or writes) are queued and run by
    /// the outermost `finish`, iteratively: no unbounded recursion.
    pub(crate) fn finish<'a>(&'a self, mut st: MutexGuard<'a, State>) {
        if IN_LISTENER.with(|f| f.get()) {
            // The outermost `finish` runs the listener calls this queues.
            while self.release_draining(st) {
                st = self.lock_draining();
            }
            self.wake();
            return;
        }
        loop {
            let calls = std::mem::take(&mut st.pending_calls);
            let again = self.release_draining(st);
            self.wake();
            if calls.is_empty() && !again {
                return;
            }
            IN_LISTENER.with(|f| f.set(true));
            for call in calls {
                call();
            }
            IN_LISTENER.with(|f| f.set(false));
            st = self.lock_draining();
        }
    }

    /// Wakes threads blocked in API calls and attached WaitSets.
    pub(crate) fn wake(&self) {
        // A waiter registers under the state lock before it waits, and every change is made
        // under that lock before `wake`, so a waiter that could miss this change is counted.
        if self.changed_waiters.load(Ordering::SeqCst) > 0 {
            self.changed.notify_all();
        }
        if self.has_waitsets.load(Ordering::Relaxed) {
            let mut ws = self.waitsets.lock().unwrap_or_else(|p| p.into_inner());
            ws.retain(|w| match w.upgrade() {
                Some(n) => {
                    n.notify();
                    true
                }
                None => false,
            });
            self.has_waitsets.store(!ws.is_empty(), Ordering::Relaxed);
        }
    }

    /// Runs `f` on the core under the lock with `now`, then sends what it queued, dispatches
    /// events and samples, releases the lock, wakes waiters and runs listeners: the sequence
    /// every API call that drives the core follows.
    pub(crate) fn drive<R>(&self, f: impl FnOnce(&mut State, Instant) -> R) -> R {
        let mut st = self.lock_draining();
        let now = self.now();
        let r = f(&mut st, now);
        self.pump(&mut st);
        self.finish(st);
        r
    }

    /// As [`Self::drive`] for a call that may have to wait: `f` returns `None` to be tried
    /// again after the next change, until `timeout` has elapsed (then `None`). The lock is held
    /// from each try into the wait, so no change is missed; waits are bounded (20 ms) because
    /// some changes happen inside the core without a notification.
    pub(crate) fn drive_until<R>(
        &self,
        timeout: Duration,
        f: impl FnMut(&mut State, Instant) -> Option<R>,
    ) -> Option<R> {
        self.drive_until_after(timeout, false, f)
    }

    /// [`Self::drive_until`] for `f` that calls nothing of the core but `Participant::write`
    /// (`writes_only`, see [`Self::pump_after`]).
    pub(crate) fn drive_until_after<R>(
        &self,
        timeout: Duration,
        writes_only: bool,
        mut f: impl FnMut(&mut State, Instant) -> Option<R>,
    ) -> Option<R> {
        let mut st = self.lock_draining();
        // One clock read per try (this is on the path of every write).
        let mut now = self.now();
        let deadline = now + timeout;
        let r = loop {
            let r = f(&mut st, now);
            self.pump_after(&mut st, writes_only);
            if r.is_some() || now >= deadline {
                break r;
            }
            st = self.wait_changed(st, (deadline - now).min(Duration::from_millis(20)));
            now = self.now();
        };
        self.finish(st);
        r
    }

    /// Blocks until `pred` holds (checked under the lock after every change) or `timeout`
    /// elapses; returns whether it holds.
    pub(crate) fn wait_until(
        &self,
        timeout: Duration,
        mut pred: impl FnMut(&mut State) -> bool,
    ) -> bool {
        self.drive_until(timeout, |st, _| pred(st).then_some(()))
            .is_some()
    }

    /// Releases the state lock until the next change (or `timeout`), then retakes it.
    pub(crate) fn wait_changed<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        timeout: Duration,
    ) -> MutexGuard<'a, State> {
        // What the receive threads left may be the change waited for: no wait then.
        if self.drain_inbox(&mut st) || !self.stop_draining() {
            self.drain_inbox(&mut st);
            return st;
        }
        self.changed_waiters.fetch_add(1, Ordering::SeqCst);
        let st = self
            .changed
            .wait_timeout(st, timeout)
            .unwrap_or_else(|p| p.into_inner())
            .0;
        self.changed_waiters.fetch_sub(1, Ordering::SeqCst);
        self.drainer_holds.store(true, Ordering::SeqCst);
        st
    }

    /// Registers a WaitSet to be woken on every change.
    pub(crate) fn add_waitset(&self, n: &Arc<crate::condition::Notifier>) {
        let mut ws = self.waitsets.lock().unwrap_or_else(|p| p.into_inner());
        if !ws.iter().any(|w| w.as_ptr() == Arc::as_ptr(n)) {
            ws.push(Arc::downgrade(n));
        }
        self.has_waitsets.store(true, Ordering::Relaxed);
    }

    pub(crate) fn start_threads(self: &Arc<Self>) -> std::io::Result<()> {
        let receivers = self
            .transport
            .receivers(Duration::from_millis(200))
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        let mut threads = self.threads.lock().unwrap_or_else(|p| p.into_inner());
        for (i, sock) in receivers.into_iter().enumerate() {
            let me = Arc::clone(self);
            let name = ["halyard-rx-uc", "halyard-rx-mc", "halyard-rx-data"][i];
            threads.push(
                std::thread::Builder::new()
                    .name(name.into())
                    .spawn(move || me.receive_loop(sock))?,
            );
        }
        let me = Arc::clone(self);
        threads.push(
            std::thread::Builder::new()
                .name("halyard-timer".into())
                .spawn(move || me.timer_loop())?,
        );
        Ok(())
    }

    fn receive_loop(&self, sock: std::net::UdpSocket) {
        let mut buf = vec![0u8; 65_536];
        while !self.stop.load(Ordering::Relaxed) {
            let n = match sock.recv_from(&mut buf) {
                Ok((n, _)) => n,
                Err(_) => continue,
            };
            self.receive(&buf[..n]);
        }
    }

    /// Handles a received datagram, or leaves it to the lock's holder.
    ///
    /// A receive thread that finds the lock taken by a thread that drives the core (a
    /// writer encrypting and sending, say) does not sleep until it is released: it leaves
    /// the datagram in the inbox, which that holder handles before it releases the lock, and
    /// goes back to its socket. The holder thus never has to wake a receive thread blocked on
    /// the lock (a system call and a cross-core wake-up per release). Holders that do not
    /// drive the core (an application reading a status) are waited for, as before.
    ///
    /// No datagram is stranded: after leaving one, the thread takes the lock itself unless a
    /// draining holder still holds it; that holder handles the inbox before releasing the
    /// lock, and checks it once more after (`release_draining`), so one of the two threads
    /// sees the datagram (every step is sequentially consistent).
    fn receive(&self, datagram: &[u8]) {
        // Our own datagram, back from a multicast group we send to and listen on: the core
        // would drop it (it counts it among the datagrams received, nothing else), but only
        // under the lock, which a writing thread holds, and after it took the inbox's copy.
        if datagram.get(8..20) == Some(&self.prefix.0[..]) && datagram.starts_with(b"RTPS") {
            return;
        }
        if let Some(st) = self.try_lock_draining() {
            self.handle_received(st, datagram);
            return;
        }
        let left = self.drainer_holds.load(Ordering::SeqCst) && {
            let mut inbox = self.inbox.lock().unwrap_or_else(|p| p.into_inner());
            let room = inbox.len() < INBOX_DATAGRAMS;
            if room {
                inbox.push(datagram.to_vec());
                self.inbox_len.fetch_add(1, Ordering::SeqCst);
            }
            room
        };
        if !left {
            self.handle_received(self.lock_draining(), datagram);
            return;
        }
        if let Some(st) = self.try_lock_draining() {
            self.finish(st);
        } else if !self.drainer_holds.load(Ordering::SeqCst) {
            self.finish(self.lock_draining());
        }
    }

    /// The lock if it is free, for a draining holder (see [`Self::lock_draining`]).
    fn try_lock_draining(&self) -> Option<MutexGuard<'_, State>> {
        let st = match self.state.try_lock() {
            Ok(st) => st,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        self.drainer_holds.store(true, Ordering::SeqCst);
        Some(st)
    }

    /// Handles `datagram` under the lock, after the datagrams left earlier, and finishes.
    fn handle_received<'a>(&'a self, mut st: MutexGuard<'a, State>, datagram: &[u8]) {
        self.drain_inbox(&mut st);
        Self::handle_datagram(&mut st, self.now(), datagram);
        self.pump(&mut st);
        self.finish(st);
    }

    fn timer_loop(&self) {
        let mut st = self.lock_draining();
        while !self.stop.load(Ordering::Relaxed) {
            self.drain_inbox(&mut st);
            if !st.deferred_calls.is_empty() {
                let calls = std::mem::take(&mut st.deferred_calls);
                st.pending_calls.extend(calls);
                self.finish(st);
                st = self.lock_draining();
                continue;
            }
            let now = self.now();
            if st.timer_deadline.is_none_or(|d| d <= now) {
                st.core.handle_timeout(now);
                st.timer_deadline = None;
                self.pump(&mut st);
                self.finish(st);
                st = self.lock_draining();
                continue;
            }
            let wait = st
                .timer_deadline
                .map_or(Duration::from_millis(100), |d| d - now)
                .min(Duration::from_millis(100))
                .max(Duration::from_micros(50));
            if !self.stop_draining() {
                continue;
            }
            st = self
                .timer
                .wait_timeout(st, wait)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            self.drainer_holds.store(true, Ordering::SeqCst);
        }
        self.drainer_holds.store(false, Ordering::SeqCst);
    }

    /// True on a thread that is running listener callbacks (it must not wait for traffic:
    /// it may be the receive thread that would bring it).
    pub(crate) fn in_listener(&self) -> bool {
        IN_LISTENER.with(|f| f.get())
    }

    /// Leaves the domain: writers linger until their reliable readers acknowledged all they
    /// wrote (at most `writer_linger`), then everything is disposed and the threads stop.
    pub(crate) fn shutdown(&self) {
        let linger = self.drive(|st, now| {
            st.core.begin_shutdown(now);
            st.core.config().writer_linger
        });
        if !self.in_listener() {
            self.wait_until(linger, |st| st.core.lingering_writers() == 0);
        }
        self.drive(|st, now| st.core.shutdown(now));
        self.stop.store(true, Ordering::Relaxed);
        self.timer.notify_all();
        self.wake();
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|p| p.into_inner()));
        let me = std::thread::current().id();
        for t in threads {
            if t.thread().id() != me {
                let _ = t.join();
            }
        }
    }
}

/// Applies an event to entity statuses; returns the listener call it triggers, if any.
fn dispatch_event(st: &mut State, e: Event) -> Option<PendingCall> {
    use crate::listener::StatusMask as M;
    match e {
        Event::PublicationMatched {
            writer,
            reader,
            matched,
        } => {
            let w = st.writers.get_mut(&writer)?;
            w.matched.update(reader, matched);
            w.changes |= M::PUBLICATION_MATCHED;
            let (l, s) = (w.listener.clone()?, w.matched.clone());
            Some(Box::new(move || l.on_publication_matched(s)))
        }
        Event::SubscriptionMatched {
            reader,
            writer,
            matched,
        } => {
            let r = st.readers.get_mut(&reader)?;
            r.matched.update(writer, matched);
            if !matched {
                r.cache.writer_gone(writer, wall_clock());
                r.liveliness.forget(writer);
            }
            r.changes |= M::SUBSCRIPTION_MATCHED;
            let (l, s) = (r.listener.clone()?, r.matched.clone());
            Some(Box::new(move || l.on_subscription_matched(s)))
        }
        Event::RelayGone { reader, writer } => {
            // No status: a relay is no peer of the application. Its instances lose it.
            let r = st.readers.get_mut(&reader)?;
            r.cache.writer_gone(writer, wall_clock());
            None
        }
        Event::OfferedIncompatibleQos { writer, policy, .. } => {
            let w = st.writers.get_mut(&writer)?;
            w.incompatible.record(policy);
            w.changes |= M::OFFERED_INCOMPATIBLE_QOS;
            let (l, s) = (w.listener.clone()?, w.incompatible.clone());
            Some(Box::new(move || l.on_offered_incompatible_qos(s)))
        }
        Event::RequestedIncompatibleQos { reader, policy, .. } => {
            let r = st.readers.get_mut(&reader)?;
            r.incompatible.record(policy);
            r.changes |= M::REQUESTED_INCOMPATIBLE_QOS;
            let (l, s) = (r.listener.clone()?, r.incompatible.clone());
            Some(Box::new(move || l.on_requested_incompatible_qos(s)))
        }
        Event::SampleLost { reader, count, .. } => {
            let r = st.readers.get_mut(&reader)?;
            r.sample_lost += count;
            r.changes |= M::SAMPLE_LOST;
            let (l, total) = (r.listener.clone()?, r.sample_lost);
            Some(Box::new(move || l.on_sample_lost(total)))
        }
        Event::RequestedDeadlineMissed { reader, instance } => {
            let r = st.readers.get_mut(&reader)?;
            r.deadline_missed.record(instance);
            r.changes |= M::REQUESTED_DEADLINE_MISSED;
            let (l, s) = (r.listener.clone()?, r.deadline_missed.clone());
            Some(Box::new(move || l.on_requested_deadline_missed(s)))
        }
        Event::OfferedDeadlineMissed { writer, instance } => {
            let w = st.writers.get_mut(&writer)?;
            w.deadline_missed.record(instance);
            w.changes |= M::OFFERED_DEADLINE_MISSED;
            let (l, s) = (w.listener.clone()?, w.deadline_missed.clone());
            Some(Box::new(move || l.on_offered_deadline_missed(s)))
        }
        Event::LivelinessLost { writer } => {
            let w = st.writers.get_mut(&writer)?;
            w.liveliness_lost.record();
            w.changes |= M::LIVELINESS_LOST;
            let (l, s) = (w.listener.clone()?, w.liveliness_lost.clone());
            Some(Box::new(move || l.on_liveliness_lost(s)))
        }
        Event::LivelinessChanged {
            reader,
            writer,
            alive,
        } => {
            let r = st.readers.get_mut(&reader)?;
            r.liveliness.update(writer, alive);
            r.changes |= M::LIVELINESS_CHANGED;
            let (l, s) = (r.listener.clone()?, r.liveliness.clone());
            Some(Box::new(move || l.on_liveliness_changed(s)))
        }
        _ => None,
    }
}

/// The environment variable that writes DDS Security decisions (peers authenticated or
/// refused, endpoints refused, with the reason) to standard error, one line each, read by
/// [`crate::ParticipantOptions::from_env`].
pub const SECURITY_LOG_ENV: &str = "HALYARD_SECURITY_LOG";

/// Writes a security warning always, other security decisions when `log` is on.
fn log_security_event(e: &Event, log: bool) {
    if let Event::SecurityWarning { prefix, what } = e {
        // Written whatever the log setting: the user must know why no one is matched.
        crate::security_warning::write(*prefix, what);
        return;
    }
    if !log {
        return;
    }
    match e {
        Event::ParticipantAuthenticated(p) => eprintln!(
            "halyard security: participant {} authenticated and admitted",
            hex(&p.0)
        ),
        Event::ParticipantRefused { prefix, reason } => eprintln!(
            "halyard security: participant {} refused: {reason}",
            hex(&prefix.0)
        ),
        Event::SecurityNotice { prefix, what } => {
            eprintln!("halyard security: participant {}: {what}", hex(&prefix.0))
        }
        Event::EndpointRefused { guid, reason } => eprintln!(
            "halyard security: remote endpoint {}:{} not matched: {reason}",
            hex(&guid.prefix.0),
            hex(&guid.entity.0)
        ),
        _ => {}
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
