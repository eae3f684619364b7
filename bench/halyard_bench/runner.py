"""Runs one configuration point for one peer and turns its output into statistics.

A run: start the passive subscribers (``listen``, if the point has any), the receivers
(``pong`` or ``sub``, N of them), then the sender (``ping`` or ``pub``) with ``-Qminmatch:N
-Qinitwait:15 -D <dur>``, so it starts only once every receiver is matched. Passive
subscribers are not counted by ``-Qminmatch``; each must have received at least
``LISTENER_MIN_SHARE`` of the pings the pongers answered, or the run fails. Receivers get a longer ``-D`` (a safety net); once the sender is done they are
given a moment to print their last line and are then stopped (SIGTERM, then SIGKILL).
Every process's stdout/stderr goes to ``raw/``; its CPU time and peak RSS come from wait4.
A secured point (``point.security``) gives every process its own identity of the level's set-up
(security.py); a peer without security settings, or a level whose set-up failed, makes a failed
run with the reason, without starting anything.
"""

from __future__ import annotations

import gzip
import math
import os
import shutil
import time
from dataclasses import dataclass, field

from . import durability, parsers, stats
from . import security as sec
from .peers import DURABLE_PEERS, Invocation, Peer, build_argv, peer_env
from .plan import Point
from .procs import Proc, Spawner

INITWAIT_S = 15.0
# Receivers' -D beyond the sender's: the sender may wait up to INITWAIT_S for them.
RECEIVER_SLACK_S = INITWAIT_S + 5.0
# After the sender exits: time for subs to print the line of their last interval / pongers.
SUB_LINGER_S = 1.3
PONG_LINGER_S = 0.3
# A passive subscriber that received less than this share of the answered pings was not really
# there for the whole measurement (late discovery, a crash): the run is not valid.
LISTENER_MIN_SHARE = 0.9


@dataclass
class RunContext:
    """What every run needs besides the point and the peer."""

    spawner: Spawner
    raw_dir: str
    domain: int
    port_base: int = 31000
    _port_seq: int = 0
    legacy_start_delay: float = 1.0  # when a peer has no -Qminmatch
    security: dict[str, sec.Setup] = field(default_factory=dict)  # level -> its set-up

    def ports(self, n: int) -> list[int]:
        """Fresh loopback UDP ports for the raw UDP peer (cycling through a range)."""
        start = self.port_base + (self._port_seq % 1500) * 16
        self._port_seq += 1
        return list(range(start, start + n))


@dataclass
class RunOutcome:
    """One run, as stored in results.json."""

    point: str
    peer: str
    repeat: int
    status: str  # ok | failed
    reason: str = ""
    started: str = ""
    seconds: float = 0.0
    processes: list[dict] = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    store_bytes: int | None = None  # a durable run: its processes' store files, in bytes

    def to_dict(self) -> dict:
        return self.__dict__.copy()


def _mode_words(point: Point, sender: bool, peer: Peer) -> list[str]:
    size = ["size", str(point.size)] if point.topic == "KS" else []
    rate = [f"{point.rate_hz:g}Hz"] if point.rate_hz else []
    if point.kind == "latency":
        return ["ping", *rate, *size] if sender else ["pong"]
    if not sender:
        return ["sub"]
    pct = [f"{point.ping_pct}%"] if point.ping_pct and peer.caps.pub_ping_pct else []
    return ["pub", *rate, *size, *pct]


def _proc_record(p: Proc, role: str, index: int) -> dict:
    return {
        "role": role, "index": index, "argv": p.argv, "exit_code": p.exit_code,
        "stopped_by_campaign": p.stopped_by_campaign, "timed_out": p.timed_out,
        "wall_s": round(p.wall, 3), "utime_s": round(p.utime, 3), "stime_s": round(p.stime, 3),
        "cpu_pct": round(p.cpu_pct, 2), "maxrss_kb": p.maxrss_kb,
        "stdout": os.path.basename(p.stdout), "stderr": os.path.basename(p.stderr),
        **p.extra,
    }


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def execute(point: Point, peer: Peer, repeat: int, ctx: RunContext) -> RunOutcome:
    """Runs the point for the peer once and analyses it (never raises for a peer failure)."""
    tag = f"{point.key}.{peer.name}.r{repeat}"
    out = RunOutcome(point.key, peer.name, repeat, "failed",
                     started=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    t0 = time.monotonic()
    n, nl = point.receivers, point.listeners
    if nl and not peer.listen_argv0:
        out.reason = f"no passive subscriber program: {peer.listen_reason or 'none'}"
        return out
    setup = ctx.security.get(point.security) if point.security else None
    if point.security:
        why = sec.unsupported_reason(peer.name, setup, point.security)
        if why:
            out.reason = why
            return out
    if point.durability and peer.name not in DURABLE_PEERS:
        out.reason = f"durability {point.durability}: {peer.name} has no durability option"
        return out
    if point.sync and peer.name != "halyard":
        out.reason = f"sync level {point.sync}: Halyard's store option"
        return out
    ports = ctx.ports(n + nl + 1) if peer.uses_ports else []
    base_env = peer_env(peer)
    stores: list[str] = []

    def store(role: str, i: int) -> str | None:
        """A fresh store file for one process of a durable point."""
        if not point.durability:
            return None
        path = os.path.join(ctx.raw_dir, f"{tag}.{role}{i}.store")
        stores.append(path)
        return path

    def env(role: str, i: int, store_path: str | None = None) -> dict[str, str]:
        e = sec.process_env(peer.name, base_env, setup, sec.identity(role, i)) if setup else base_env
        if store_path and peer.name == "halyard":
            e = dict(e, HALYARD_DURABILITY_STORE=store_path)
            if point.sync:
                e["HALYARD_DURABILITY_SYNC"] = point.sync
        return e
    recv_kind = "pong" if point.kind == "latency" else "sub"
    send_kind = "ping" if point.kind == "latency" else "pub"
    receivers: list[Proc] = []
    listeners: list[Proc] = []
    sender: Proc | None = None
    dump = os.path.join(ctx.raw_dir, f"{tag}.dump")
    try:
        for i in range(nl):
            inv = Invocation(["listen"], point.duration + RECEIVER_SLACK_S, point.reliable, point.topic,
                             ctx.domain, bind_port=ports[n + 1 + i] if ports else None)
            base = os.path.join(ctx.raw_dir, f"{tag}.listen{i}")
            listeners.append(ctx.spawner.spawn(build_argv(peer, inv, peer.listen_argv0), env("listener", i),
                                               base + ".out", base + ".err"))
        for i in range(n):
            path = store(recv_kind, i)
            inv = Invocation(_mode_words(point, False, peer), point.duration + RECEIVER_SLACK_S,
                             point.reliable, point.topic, ctx.domain,
                             bind_port=ports[i + 1] if ports else None,
                             durability=point.durability, store_path=path)
            argv = build_argv(peer, inv)
            base = os.path.join(ctx.raw_dir, f"{tag}.{recv_kind}{i}")
            receivers.append(ctx.spawner.spawn(argv, env("receiver", i, path), base + ".out", base + ".err"))
        if not peer.caps.minmatch:
            time.sleep(ctx.legacy_start_delay + 0.1 * n)
            out.notes.append("peer has no -Qminmatch: sender started after a fixed delay")
        wants_dump = point.kind == "latency" or (point.kind == "rate" and peer.caps.pub_ping_pct)
        path = store(send_kind, 0)
        inv = Invocation(_mode_words(point, True, peer), point.duration, point.reliable, point.topic,
                         ctx.domain, minmatch=n, initwait=INITWAIT_S,
                         dump_path=dump if wants_dump else None,
                         bind_port=ports[0] if ports else None, peer_ports=ports[1:],
                         durability=point.durability, store_path=path)
        argv = build_argv(peer, inv)
        base = os.path.join(ctx.raw_dir, f"{tag}.{send_kind}")
        sender = ctx.spawner.spawn(argv, env("sender", 0, path), base + ".out", base + ".err")
        limit = point.duration + INITWAIT_S + 20.0
        if not ctx.spawner.wait([sender], limit):
            sender.timed_out = True
            ctx.spawner.stop([sender])
        if recv_kind == "sub":
            _wait_for_subs(ctx.spawner, sender, receivers, SUB_LINGER_S)
        else:
            ctx.spawner.wait(receivers, PONG_LINGER_S)
        if listeners:  # their final per-second line
            ctx.spawner.wait(listeners, SUB_LINGER_S)
        ctx.spawner.stop(receivers + listeners)
    finally:
        ctx.spawner.stop(([sender] if sender else []) + receivers + listeners)
        if stores:
            out.store_bytes = _remove_stores(stores)
            # The next run must not get this run's freed memory back before the hypervisor took it.
            time.sleep(STORE_SETTLE_S)
    out.seconds = round(time.monotonic() - t0, 3)
    out.processes = [_proc_record(sender, "sender", 0)] if sender else []
    out.processes += [_proc_record(p, "receiver", i) for i, p in enumerate(receivers)]
    out.processes += [_proc_record(p, "listener", i) for i, p in enumerate(listeners)]
    if sender is None:
        out.reason = "sender not started"
        return out
    analyse(point, peer, sender, receivers, dump, out, listeners)
    if os.path.exists(dump):
        out.processes[0]["latency_dump"] = os.path.basename(_gzip(dump))
    return out


# Seconds a durable run waits after removing its stores. On guests with free page reporting
# (see machine.free_page_reporting) freed memory goes back to the hypervisor within seconds
# of being freed, and touching it again costs a host fault; a run started sooner writes into
# the previous run's pages much more cheaply, so without the pause the order of the points
# would decide comparisons (the group of points run last would win).
STORE_SETTLE_S = 3.0


def _remove_stores(paths: list[str]) -> int:
    """Removes a durable run's store files (they reach gigabytes); returns their total size."""
    return sum(durability.remove_store(base) for base in paths)


def _gzip(path: str) -> str:
    """Compresses an analysed latency dump in place (they reach megabytes); returns the new path."""
    with open(path, "rb") as src, gzip.open(path + ".gz", "wb", compresslevel=6) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(path)
    return path + ".gz"


def _wait_for_subs(spawner: Spawner, sender: Proc, subs: list[Proc], linger: float) -> None:
    """Gives subscribers up to ``linger`` seconds to print their final line; returns early once
    every one of them reports as many samples as the sender says it sent (``pub sent N``)."""
    sent = parsers.parse_output(_read(sender.stdout)).pub_sent
    deadline = time.monotonic() + linger
    while time.monotonic() < deadline:
        if all(spawner.poll(p) for p in subs):
            return
        if sent is not None:
            totals = [max((ln.total for ln in parsers.parse_output(_read(p.stdout)).sub), default=-1) for p in subs]
            if all(t >= sent for t in totals):
                return
        time.sleep(0.05)


def _proc_summary(procs: list[Proc]) -> dict:
    cpu = [p.cpu_pct for p in procs]
    rss = [p.maxrss_kb for p in procs]
    return {
        "cpu_pct_mean": round(sum(cpu) / len(cpu), 2) if cpu else None,
        "cpu_pct_max": round(max(cpu), 2) if cpu else None,
        "rss_kb_mean": round(sum(rss) / len(rss)) if rss else None,
        "rss_kb_max": max(rss) if rss else None,
    }


def analyse(point: Point, peer: Peer, sender: Proc, receivers: list[Proc], dump: str, out: RunOutcome,
            listeners: list[Proc] | None = None) -> None:
    """Fills ``out.stats``/``status``/``reason`` from the processes' output files."""
    s_text = _read(sender.stdout) + "\n" + _read(sender.stderr)
    s_out = parsers.parse_output(s_text)
    r_outs = [parsers.parse_output(_read(p.stdout) + "\n" + _read(p.stderr)) for p in receivers]
    st: dict = {"sender": _proc_summary([sender]), "receivers": _proc_summary(receivers)}
    problems: list[str] = []

    if sender.timed_out:
        problems.append("sender timed out")
    elif sender.exit_code not in (0, None):
        msg = parsers.first_error(s_out, stderr_tail=_read(sender.stderr))
        problems.append(f"sender exit {sender.exit_code}" + (f": {msg}" if msg else ""))

    if point.kind in ("latency", "rate"):
        lat = _latency(point, peer, s_out, dump, st, out)
        if lat is None and not (point.kind == "rate" and not peer.caps.pub_ping_pct):
            problems.append("no latency data")
    if point.kind in ("throughput", "rate"):
        _throughput(point, s_out, r_outs, receivers, st, out, problems)
    if listeners:
        _listeners(s_out, listeners, st, out, problems)

    for i, (p, o) in enumerate(zip(receivers, r_outs)):
        if not p.stopped_by_campaign and p.exit_code not in (0, None):
            msg = parsers.first_error(o, stderr_tail=_read(p.stderr))
            out.notes.append(f"receiver {i} exit {p.exit_code}" + (f": {msg}" if msg else ""))
    out.stats = st
    out.status = "failed" if problems else "ok"
    out.reason = "; ".join(problems)


def _latency(point: Point, peer: Peer, s_out: parsers.PeerOutput, dump: str, st: dict,
             out: RunOutcome) -> stats.LatencyStats | None:
    per_peer, _ = stats.latency_per_peer(s_out.ping)
    overall: stats.LatencyStats | None = None
    samples = parsers.read_dump(dump) if peer.caps.latency_dump else None
    if samples:
        us, warm = stats.trim_dump(samples)
        overall = stats.latency_from_samples(us, warm)
    if overall is None:
        if peer.caps.latency_dump:
            out.notes.append("no latency dump written: summary from ping lines only")
        overall = stats.latency_all_lines(s_out.ping)
    if overall is not None and overall.warmup_included:
        out.notes.append("run too short to exclude the warm-up second")
    st["latency"] = overall.to_dict() if overall else None
    st["latency_per_receiver"] = {k: _compact(v.to_dict()) for k, v in sorted(per_peer.items())}
    st["receivers_answering"] = len(per_peer)
    if point.receivers > 1 and len(per_peer) < point.receivers:
        out.notes.append(f"only {len(per_peer)} of {point.receivers} receivers answered")
    return overall


def _listeners(s_out: parsers.PeerOutput, listeners: list[Proc], st: dict, out: RunOutcome,
               problems: list[str]) -> None:
    """Passive subscribers: what each received, against the pings the pongers answered."""
    per_ponger: dict[str, int] = {}
    for ln in s_out.ping:
        per_ponger[ln.peer] = per_ponger.get(ln.peer, 0) + ln.cnt
    answered = max(per_ponger.values(), default=0)
    received, lost = [], []
    for i, p in enumerate(listeners):
        lines = parsers.parse_output(_read(p.stdout) + "\n" + _read(p.stderr)).sub
        received.append(max((ln.total for ln in lines), default=0))
        lost.append(max((ln.lost for ln in lines), default=0))
        if not p.stopped_by_campaign and p.exit_code not in (0, None):
            out.notes.append(f"passive subscriber {i} exit {p.exit_code}")
    st["listeners"] = {**_proc_summary(listeners), "received": received, "lost": lost,
                       "pings_answered": answered}
    short = [i for i, r in enumerate(received) if r < LISTENER_MIN_SHARE * answered]
    if short:
        problems.append(f"passive subscribers {short} received {min(received)} of {answered} answered pings")


def _compact(d: dict) -> dict:
    d = dict(d)
    d.pop("cdf", None)
    return d


def _throughput(point: Point, s_out: parsers.PeerOutput, r_outs: list[parsers.PeerOutput],
                receivers: list[Proc], st: dict, out: RunOutcome, problems: list[str]) -> None:
    subs: list[dict | None] = []
    for i, o in enumerate(r_outs):
        ss = stats.sub_stats(o.sub)
        subs.append(ss.to_dict() if ss else None)
        if ss is None:
            problems.append(f"sub {i} received nothing")
    got = [s for s in subs if s]
    st["subs"] = subs
    if got:
        sps = [s["samples_per_s"] for s in got]
        st["throughput"] = {
            "samples_per_s": sum(sps) / len(sps),  # per subscriber (mean over subscribers)
            "mbps": sum(s["mbps"] for s in got) / len(got),
            "aggregate_samples_per_s": sum(sps),
            "min_sub_samples_per_s": min(sps),
            "lost": sum(s["lost"] for s in got),
            "received": [s["total"] if s else 0 for s in subs],
            "warmup_included": any(s["warmup_included"] for s in got),
        }
    sent = s_out.pub_sent
    inferred = False
    if sent is None and got:
        sent = max(s["total"] + s["lost"] for s in got)
        inferred = True
    st["sent"] = sent
    st["sent_inferred"] = inferred
    if point.kind == "rate" and sent:
        rec = [s["total"] if s else 0 for s in subs]
        st["success_pct"] = 100.0 * min(rec) / sent
        st["success_pct_mean"] = 100.0 * (sum(rec) / len(rec)) / sent
    elif point.kind == "rate":
        st["success_pct"] = None
        problems.append("nothing sent" if sent == 0 else "no sent count")


def principal(outcome: dict, kind: str) -> float:
    """The figure a repeated point's median run is chosen by (NaN when missing)."""
    st = outcome.get("stats") or {}
    if kind == "latency" or kind == "rate":
        lat = st.get("latency") or {}
        v = lat.get("p50")
        if v is None and kind == "rate":
            v = st.get("success_pct")
        return float(v) if v is not None else math.nan
    thr = st.get("throughput") or {}
    return float(thr.get("samples_per_s", math.nan))
