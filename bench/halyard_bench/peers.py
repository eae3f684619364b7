"""The four peers and how to invoke them (bench/PEERS.md).

Every peer takes the same ddsperf-style command line, so one builder serves all; the raw UDP
peer additionally gets ``--bind``/``--peer`` ports because it has no discovery. Peers that are
being extended (``halyard perf`` gaining ``-Q``, ``--latency-dump``, ``pub X%``) are probed
once at the start: an option a peer rejects with exit status 3 (bad arguments) is simply not
used, and the report says what was missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field

from .procs import Spawner

CYCLONE_URI = '<General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General>'

ALL_PEERS = ("halyard", "cyclone", "fastdds", "udp")

LABELS = {
    "halyard": "Halyard",
    "cyclone": "Cyclone DDS",
    "fastdds": "Fast DDS",
    "udp": "raw UDP",
}

# Plot colours, one per peer.
COLOURS = {
    "halyard": "#d62728",
    "cyclone": "#1f77b4",
    "fastdds": "#2ca02c",
    "udp": "#7f7f7f",
}


@dataclass
class Caps:
    """What a peer's command line supports beyond plain ddsperf."""

    minmatch: bool = True  # -Qminmatch:N -Qinitwait:S
    latency_dump: bool = True  # --latency-dump FILE
    pub_ping_pct: bool = True  # pub ... X%
    notes: list[str] = field(default_factory=list)


@dataclass
class Peer:
    """One implementation under test."""

    name: str
    argv0: list[str]
    env: dict[str, str]
    uses_ports: bool = False
    available: bool = True
    reason: str = ""
    caps: Caps = field(default_factory=Caps)
    extra_opts: list[str] = field(default_factory=list)  # --extra-args, placed among options
    path: str = ""
    # The program run as a passive subscriber (`listen` mode); None when there is none, and why.
    listen_argv0: list[str] | None = None
    listen_reason: str = ""

    @property
    def label(self) -> str:
        return LABELS.get(self.name, self.name)

    def to_dict(self) -> dict:
        return {
            "name": self.name, "label": self.label, "argv0": self.argv0, "env": self.env,
            "available": self.available, "reason": self.reason, "caps": asdict(self.caps),
            "extra_opts": self.extra_opts, "path": self.path, "listen_argv0": self.listen_argv0,
            "listen_reason": self.listen_reason,
        }


def halyard_exe(root: str) -> str:
    """The `halyard` binary the campaign runs: `HALYARD_BENCH_EXE` if set (the test suite
    points it at the binary it built), else the release build under `root`."""
    return os.environ.get("HALYARD_BENCH_EXE") or os.path.join(root, "target", "release", "halyard")


def make_peers(root: str, names: list[str]) -> list[Peer]:
    """Describes the requested peers and checks that each one is installed/built."""
    peers = []
    for name in names:
        if name == "halyard":
            exe = halyard_exe(root)
            p = Peer(name, [exe, "perf"], {"HALYARD_INTERFACE": "lo"}, path=exe)
            if not os.access(exe, os.X_OK):
                p.available, p.reason = False, f"{exe} not built (cargo build --release -p halyard-cli)"
        elif name == "cyclone":
            exe = shutil.which("ddsperf") or ""
            p = Peer(name, [exe or "ddsperf"], {"CYCLONEDDS_URI": CYCLONE_URI}, path=exe)
            p.caps = Caps(latency_dump=False, notes=["ddsperf prints no `pub sent` line"])
            if not exe:
                p.available, p.reason = False, "ddsperf not installed (apt install cyclonedds-tools)"
            # ddsperf has no passive mode: a small libddsc program subscribes to its pings.
            listen = os.path.join(root, "target", "bench-peers", "cyclone-listen")
            if os.access(listen, os.X_OK):
                p.listen_argv0 = [listen]
            else:
                p.listen_reason = f"{listen} not built (bench/peers/cyclone/build.sh)"
        elif name == "fastdds":
            exe = os.path.join(root, "target", "bench-peers", "fastdds-perf")
            p = Peer(name, [exe], {}, path=exe)  # loopback-only by construction
            if not os.access(exe, os.X_OK):
                p.available, p.reason = False, f"{exe} not built (bench/peers/fastdds/build.sh)"
        elif name == "udp":
            exe = os.path.join(root, "target", "bench-peers", "udp-perf")
            p = Peer(name, [exe], {}, uses_ports=True, path=exe)
            if not os.access(exe, os.X_OK):
                p.available, p.reason = False, f"{exe} not built (bench/peers/udp/build.sh)"
        else:
            p = Peer(name, [name], {}, available=False, reason="unknown peer")
        if not p.available:
            p.reason += _build_failure(name)
        elif name != "cyclone":
            p.listen_argv0 = list(p.argv0)  # `listen` is a mode of the peer itself
        peers.append(p)
    return peers


def _build_failure(name: str) -> str:
    """What scripts/bench.sh reported about building this peer, if it failed."""
    for line in os.environ.get("HALYARD_BENCH_BUILD_FAILED", "").splitlines():
        peer, _, msg = line.partition(":")
        if peer.strip() == name and msg.strip():
            return f"; {msg.strip()}"
    return ""


@dataclass
class Invocation:
    """What one process of a run is told to do."""

    mode_words: list[str]
    duration: float
    reliable: bool = True
    topic: str = "KS"
    domain: int = 0
    minmatch: int | None = None  # sender only
    initwait: float = 15.0
    dump_path: str | None = None  # sender only
    bind_port: int | None = None  # udp only
    peer_ports: list[int] = field(default_factory=list)  # udp only
    durability: str | None = None  # --durability KIND (DURABLE_PEERS only); None = volatile
    store_path: str | None = None  # with durability: this process's store file


# The peers with a durability option (`--durability KIND`), and how each is given its store:
# Halyard's embedded durability service takes HALYARD_DURABILITY_STORE, the Fast DDS peer
# `--persistence-db PATH` (its SQLite persistence plugin). ddsperf has no such option.
DURABLE_PEERS = ("halyard", "fastdds")


def build_argv(peer: Peer, inv: Invocation, argv0: list[str] | None = None) -> list[str]:
    """The peer's full command line (options first, then the mode words); ``argv0`` replaces
    the peer's program (the passive subscriber's, for one)."""
    argv = list(argv0 or peer.argv0)
    argv += ["-D", f"{inv.duration:g}", "-i", str(inv.domain)]
    if not inv.reliable:
        argv.append("-u")
    if inv.topic != "KS":
        argv += ["-T", inv.topic]
    if inv.minmatch is not None and peer.caps.minmatch:
        argv += [f"-Qminmatch:{inv.minmatch}", f"-Qinitwait:{inv.initwait:g}"]
    if inv.dump_path and peer.caps.latency_dump:
        argv += ["--latency-dump", inv.dump_path]
    if inv.durability:
        argv += ["--durability", inv.durability]
        if peer.name == "fastdds" and inv.store_path:
            argv += ["--persistence-db", inv.store_path]
    if peer.uses_ports:
        if inv.bind_port is not None:
            argv += ["--bind", str(inv.bind_port)]
        for port in inv.peer_ports:
            argv += ["--peer", str(port)]
    if argv0 is None or argv0 == peer.argv0:  # --extra-args are the peer program's options
        argv += peer.extra_opts
    argv += inv.mode_words
    return argv


def peer_env(peer: Peer) -> dict[str, str]:
    """The environment a peer process runs with: ours plus the peer's loopback settings."""
    env = dict(os.environ)
    env.pop("CYCLONEDDS_URI", None)
    env.pop("HALYARD_SECURITY", None)  # a secured point adds its own (security.process_env)
    env.update(peer.env)
    return env


def _probe_once(peer: Peer, spawner: Spawner, inv: Invocation, tmp: str) -> tuple[int | None, str]:
    argv = build_argv(peer, inv)
    out, err = os.path.join(tmp, "probe.out"), os.path.join(tmp, "probe.err")
    proc = spawner.spawn(argv, peer_env(peer), out, err)
    if not spawner.wait([proc], 10.0):
        spawner.stop([proc])
    text = ""
    for f in (out, err):
        try:
            with open(f, errors="replace") as fh:
                text += fh.read()
        except OSError:
            pass
    return proc.exit_code, text


def probe_caps(peer: Peer, spawner: Spawner, domain: int, port: int) -> None:
    """Finds which optional options the peer accepts (exit status 3 = rejected).

    First a plain ``-D 0.3 pong`` (the peer must run at all), then every optional option
    together (one short ``pub``, normally failing with exit 1 because nobody matches); only if
    that is rejected each option alone.
    """
    if not peer.available:
        return
    ports = {"bind_port": port, "peer_ports": [port + 1]} if peer.uses_ports else {}
    with tempfile.TemporaryDirectory(prefix="halyard-bench-probe-") as tmp:
        dump = os.path.join(tmp, "dump.txt")

        def inv(minmatch: bool, dump_: bool, pct: bool) -> Invocation:
            words = ["pub", "10Hz", "size", "64"] + (["50%"] if pct else [])
            return Invocation(words, 0.3, domain=domain, minmatch=1 if minmatch else None,
                              initwait=0.3, dump_path=dump if dump_ else None, **ports)

        t0 = time.monotonic()
        base = Invocation(["pong"], 0.3, domain=domain, bind_port=ports.get("bind_port"))
        base_rc, base_text = _probe_once(peer, spawner, base, tmp)
        if base_rc != 0:
            peer.available = False
            first = next((ln for ln in base_text.splitlines() if ln.strip()), "")
            peer.reason = f"probe `-D 0.3 pong` failed (exit {base_rc}): {first[:200]}"
            return
        want = {"minmatch": peer.caps.minmatch, "latency_dump": peer.caps.latency_dump,
                "pub_ping_pct": peer.caps.pub_ping_pct}
        rc, _ = _probe_once(peer, spawner, inv(want["minmatch"], want["latency_dump"], want["pub_ping_pct"]), tmp)
        if rc != 3:
            peer.caps.notes.append(f"probed in {time.monotonic() - t0:.1f} s: all options accepted")
            return
        for key in [k for k, v in want.items() if v]:
            args = {"minmatch": key == "minmatch", "dump_": key == "latency_dump", "pct": key == "pub_ping_pct"}
            rc, text = _probe_once(peer, spawner, inv(**args), tmp)
            if rc == 3:
                setattr(peer.caps, key, False)
                first = next((ln for ln in text.splitlines() if ln.strip()), "")
                peer.caps.notes.append(f"{key} not supported: {first[:160]}")


def peer_versions(root: str) -> dict[str, str]:
    """Versions of the peers and tools (best effort; 'unknown' where a query fails)."""

    def run(argv: list[str], cwd: str | None = None) -> str:
        try:
            r = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=20)
            return (r.stdout.strip() or r.stderr.strip()).splitlines()[0] if r.returncode == 0 else "unknown"
        except (OSError, subprocess.SubprocessError, IndexError):
            return "unknown"

    return {
        "cyclonedds-tools (ddsperf)": run(["dpkg-query", "-W", "-f=${Version}", "cyclonedds-tools"]),
        "libfastrtps-dev (Fast DDS)": run(["dpkg-query", "-W", "-f=${Version}", "libfastrtps-dev"]),
        "halyard (git describe)": run(["git", "describe", "--always", "--dirty"], cwd=root),
        "rustc": run(["rustc", "--version"]),
        "gcc": run(["gcc", "--version"]),
        "python": run(["python3", "--version"]),
    }
