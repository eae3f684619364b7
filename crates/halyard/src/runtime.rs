//! The driver around the sans-I/O core: one mutex-protected core per participant, two receive
//! threads (unicast, SPDP multicast) and a timer thread. Received datagrams are handled on the
//! receive thread itself (no hop); writes run on the application thread, which also sends.
//! After every core interaction `pump` sends queued datagrams and turns core events and samples
//! into entity statuses and reader caches, then waiting threads are woken and listeners run
//! (outside the lock).
#![allow(clippy::disallowed_methods)] // the driver is where clocks are read

use crate::status::{ReaderState, WriterState};
use halyard_core::{Event, Instant, Participant};
use halyard_net::UdpTransport;
use halyard_wire::{EntityId, Time};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// A callback run when its reader has new data (on the receiving thread, outside locks).
pub type Listener = Arc<dyn Fn() + Send + Sync>;

pub(crate) struct State {
    pub(crate) core: Participant,
    pub(crate) readers: HashMap<EntityId, ReaderState>,
    pub(crate) writers: HashMap<EntityId, WriterState>,
    pub(crate) timer_deadline: Option<Instant>,
    pub(crate) send_failures: u64,
    pending_listeners: Vec<Listener>,
}

pub(crate) struct Shared {
    pub(crate) state: Mutex<State>,
    /// Signalled whenever statuses or caches change.
    pub(crate) changed: Condvar,
    timer: Condvar,
    pub(crate) transport: UdpTransport,
    stop: AtomicBool,
    epoch: std::time::Instant,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

/// Wall-clock time now, as an RTPS timestamp.
pub fn wall_clock() -> Time {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Time::from_nanos(d.as_nanos() as i64)
}

impl Shared {
    pub(crate) fn new(core: Participant, transport: UdpTransport) -> Arc<Shared> {
        Arc::new(Shared {
            state: Mutex::new(State {
                core,
                readers: HashMap::new(),
                writers: HashMap::new(),
                timer_deadline: None,
                send_failures: 0,
                pending_listeners: Vec::new(),
            }),
            changed: Condvar::new(),
            timer: Condvar::new(),
            transport,
            stop: AtomicBool::new(false),
            epoch: std::time::Instant::now(),
            threads: Mutex::new(Vec::new()),
        })
    }

    /// Monotonic now for the core.
    pub(crate) fn now(&self) -> Instant {
        Instant::from_nanos(self.epoch.elapsed().as_nanos() as u64)
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock would be a bug in Halyard; keep serving regardless.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sends queued datagrams and dispatches events/samples. Call with the lock held.
    pub(crate) fn pump(&self, st: &mut State) {
        while let Some(t) = st.core.poll_transmit() {
            st.send_failures += self.transport.send(&t.destinations, &t.payload) as u64;
            st.core.recycle(t.payload);
        }
        while let Some(e) = st.core.poll_event() {
            dispatch_event(st, e);
        }
        let now_wall = wall_clock();
        while let Some(s) = st.core.poll_sample() {
            if let Some(r) = st.readers.get_mut(&s.reader) {
                if r.insert(s, now_wall) {
                    if let Some(l) = &r.listener {
                        st.pending_listeners.push(l.clone());
                    }
                }
            }
        }
        let next = st.core.poll_timeout();
        if next < st.timer_deadline || st.timer_deadline.is_none() {
            st.timer_deadline = next;
            self.timer.notify_one();
        }
    }

    /// Releases the lock, wakes waiters and runs listeners.
    pub(crate) fn finish(&self, mut st: MutexGuard<'_, State>) {
        let listeners = std::mem::take(&mut st.pending_listeners);
        drop(st);
        self.changed.notify_all();
        for l in listeners {
            l();
        }
    }

    pub(crate) fn start_threads(self: &Arc<Self>) -> std::io::Result<()> {
        let receivers = self
            .transport
            .receivers(Duration::from_millis(200))
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        let mut threads = self.threads.lock().unwrap_or_else(|p| p.into_inner());
        for (i, sock) in receivers.into_iter().enumerate() {
            let me = Arc::clone(self);
            let name = if i == 0 {
                "halyard-rx-uc"
            } else {
                "halyard-rx-mc"
            };
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
            let mut st = self.lock();
            let now = self.now();
            st.core.handle_datagram(now, &buf[..n]);
            self.pump(&mut st);
            self.finish(st);
        }
    }

    fn timer_loop(&self) {
        let mut st = self.lock();
        while !self.stop.load(Ordering::Relaxed) {
            let now = self.now();
            if st.timer_deadline.is_none_or(|d| d <= now) {
                st.core.handle_timeout(now);
                st.timer_deadline = None;
                self.pump(&mut st);
                let listeners = std::mem::take(&mut st.pending_listeners);
                if !listeners.is_empty() {
                    drop(st);
                    self.changed.notify_all();
                    for l in listeners {
                        l();
                    }
                    st = self.lock();
                    continue;
                }
                self.changed.notify_all();
            }
            let wait = st
                .timer_deadline
                .map_or(Duration::from_millis(100), |d| d - now)
                .min(Duration::from_millis(100))
                .max(Duration::from_micros(50));
            st = self
                .timer
                .wait_timeout(st, wait)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    pub(crate) fn shutdown(&self) {
        {
            let mut st = self.lock();
            let now = self.now();
            st.core.shutdown(now);
            self.pump(&mut st);
        }
        self.stop.store(true, Ordering::Relaxed);
        self.timer.notify_all();
        self.changed.notify_all();
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|p| p.into_inner()));
        let me = std::thread::current().id();
        for t in threads {
            if t.thread().id() != me {
                let _ = t.join();
            }
        }
    }
}

fn dispatch_event(st: &mut State, e: Event) {
    match e {
        Event::PublicationMatched {
            writer,
            reader,
            matched,
        } => {
            if let Some(w) = st.writers.get_mut(&writer) {
                w.matched.update(reader, matched);
            }
        }
        Event::SubscriptionMatched {
            reader,
            writer,
            matched,
        } => {
            if let Some(r) = st.readers.get_mut(&reader) {
                r.matched.update(writer, matched);
                if !matched {
                    r.writer_gone(writer);
                }
            }
        }
        Event::OfferedIncompatibleQos { writer, policy, .. } => {
            if let Some(w) = st.writers.get_mut(&writer) {
                w.incompatible.record(policy);
            }
        }
        Event::RequestedIncompatibleQos { reader, policy, .. } => {
            if let Some(r) = st.readers.get_mut(&reader) {
                r.incompatible.record(policy);
            }
        }
        Event::SampleLost { reader, count, .. } => {
            if let Some(r) = st.readers.get_mut(&reader) {
                r.sample_lost += count;
            }
        }
        Event::LivelinessChanged { reader, alive, .. } => {
            if let Some(r) = st.readers.get_mut(&reader) {
                r.liveliness.update(alive);
            }
        }
        _ => {}
    }
}
