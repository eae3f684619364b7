"""The security dimension: DDS Security set-ups per protection level and the environment that
gives a peer process its identity (issue 11).

Every level but ``off`` is one ``halyard security init DIR --participant … <options>``
directory, made once per campaign under ``raw/security/<level>/`` (it holds private keys, so it
stays out of git with the rest of ``raw/``). Halyard and Cyclone use the *same* directory, so
they get the same CAs and the same signed governance:

- Halyard: ``HALYARD_SECURITY=DIR/NAME``;
- Cyclone: ``CYCLONEDDS_URI`` = the campaign's loopback configuration followed by the
  ``<Security>`` element ``halyard security cyclone-config DIR/NAME`` prints (the convention of
  crates/halyard-cli/tests/security_setup.rs);
- Fast DDS (bench/peers/fastdds): ``FASTPERF_SECURITY=DIR/NAME``, from which the peer sets Fast
  DDS's ``dds.sec.*`` participant properties.

The cipher floor: once per campaign with secured levels, ``halyard security cipher-bench``
times the AES-GCM primitive Halyard's transforms use (AES-256-GCM over 63000 octets, the
``encrypt`` level's kind at the "64 KB" point), kept as ``results.json``'s ``security_cipher``;
the report turns it into the ceiling the ``encrypt`` level can reach on the machine
(security_report.py).

Each process of a run has its own identity: ``sender``, ``recv0``, ``recv1``, …, ``listen0`` ….
Halyard, Cyclone and Fast DDS are given security settings; raw UDP's secured points fail with
that reason. A set-up that cannot be made fails every point of its level with init's error.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import asdict, dataclass, field

# In running order: the unsecured baseline, then authentication + access control alone, then
# whole-message (rtps) protection, then protection of discovery, liveliness, metadata and data.
LEVELS = ("off", "none", "rtps-sign", "rtps-encrypt", "sign", "encrypt", "encrypt-origin")

# `halyard security init` options per level (`off`: no DDS Security at all).
INIT_OPTIONS: dict[str, list[str] | None] = {
    "off": None,
    "none": ["--protect", "none"],
    "rtps-sign": ["--protect", "rtps-sign"],
    "rtps-encrypt": ["--protect", "rtps-encrypt"],
    "sign": ["--protect", "sign"],
    "encrypt": ["--protect", "encrypt"],
    "encrypt-origin": ["--protect", "encrypt", "--origin-auth"],
}

DESCRIPTIONS = {
    "off": "no DDS Security (plain)",
    "none": "authentication + access control, nothing protected on the wire",
    "rtps-sign": "every RTPS message signed (GMAC)",
    "rtps-encrypt": "every RTPS message encrypted (AES-GCM)",
    "sign": "discovery, liveliness, metadata and data signed",
    "encrypt": "discovery, liveliness, metadata and data encrypted",
    "encrypt-origin": "encrypt + origin authentication (receiver-specific MACs)",
}

SECURE_PEERS = ("halyard", "cyclone", "fastdds")


def parse_levels(spec: str | None) -> tuple[str, ...]:
    """``--security-levels a,b``: known levels, duplicates dropped, in LEVELS order; None or
    empty means every level. Raises ValueError naming an unknown level."""
    if not spec or not spec.strip():
        return LEVELS
    wanted = [s.strip() for s in spec.split(",") if s.strip()]
    bad = [s for s in wanted if s not in LEVELS]
    if bad:
        raise ValueError(f"unknown security level(s) {','.join(bad)}; choose from {','.join(LEVELS)}")
    return tuple(lv for lv in LEVELS if lv in wanted)


def identity(role: str, index: int) -> str:
    """The participant name a process of a run uses: ``sender``, ``recvN`` or ``listenN``."""
    if role == "sender":
        return "sender"
    return {"receiver": "recv", "listener": "listen"}[role] + str(index)


def participants(receivers: int, listeners: int) -> list[str]:
    """Every identity a set-up needs for runs of up to that many receivers and listeners."""
    return (["sender"] + [identity("receiver", i) for i in range(receivers)]
            + [identity("listener", i) for i in range(listeners)])


@dataclass
class Setup:
    """One level's set-up directory, or why there is none."""

    level: str
    dir: str = ""
    ok: bool = False
    error: str = ""
    init_argv: list[str] = field(default_factory=list)
    # Cyclone's <Security> element per identity (from `halyard security cyclone-config`).
    cyclone_xml: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("cyclone_xml")  # paths only; the init command line makes it again
        return d


def _run(argv: list[str]) -> tuple[int, str, str]:
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        return r.returncode, r.stdout, r.stderr
    except (OSError, subprocess.SubprocessError) as e:
        return -1, "", str(e)


def _first_line(text: str) -> str:
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "")[:300]


def prepare(halyard_exe: str, base_dir: str, level: str, names: list[str]) -> Setup:
    """Makes ``base_dir/level`` with ``halyard security init`` and reads Cyclone's
    configuration for each identity. Never raises: a failure is kept in ``Setup.error``."""
    opts = INIT_OPTIONS[level]
    assert opts is not None, "the off level has no set-up"
    d = os.path.join(base_dir, level)
    s = Setup(level, d)
    s.init_argv = [halyard_exe, "security", "init", d, "--participant", *names, *opts, "--force"]
    if not os.access(halyard_exe, os.X_OK):
        s.error = f"{halyard_exe} not built: cannot run `halyard security init`"
        return s
    rc, out, err = _run(s.init_argv)
    if rc != 0:
        s.error = f"`halyard security init` exit {rc}: {_first_line(err) or _first_line(out)}"
        return s
    for name in names:
        rc, out, err = _run([halyard_exe, "security", "cyclone-config", os.path.join(d, name)])
        if rc != 0:
            s.error = f"`halyard security cyclone-config {name}` exit {rc}: {_first_line(err)}"
            return s
        s.cyclone_xml[name] = out.strip()
    s.ok = True
    return s


def unsupported_reason(peer_name: str, setup: Setup | None, level: str) -> str | None:
    """Why a secured point cannot run for this peer (None when it can)."""
    if peer_name not in SECURE_PEERS:
        return f"security level {level}: the campaign gives DDS Security settings to Halyard, Cyclone and Fast DDS only"
    if setup is None:
        return f"security level {level}: no set-up was made"
    if not setup.ok:
        return f"security level {level}: set-up failed: {setup.error}"
    return None


def process_env(peer_name: str, env: dict[str, str], setup: Setup, name: str) -> dict[str, str]:
    """``env`` plus what gives a process of ``peer_name`` the identity ``name`` of ``setup``."""
    out = dict(env)
    if peer_name == "halyard":
        out["HALYARD_SECURITY"] = os.path.join(setup.dir, name)
    elif peer_name == "cyclone":
        out["CYCLONEDDS_URI"] = env.get("CYCLONEDDS_URI", "") + setup.cyclone_xml[name]
    elif peer_name == "fastdds":
        out["FASTPERF_SECURITY"] = os.path.join(setup.dir, name)
    else:
        raise ValueError(f"no security settings for peer {peer_name}")
    return out


# What `halyard security cipher-bench` times for the cipher floor: the encrypt level's kind at
# the campaign's "64 KB" throughput point.
CIPHER_BENCH_SIZE = 63000
CIPHER_BENCH_SECONDS = 2.0


def parse_cipher_bench(text: str) -> dict | None:
    """The ``key=value`` fields of ``halyard security cipher-bench``'s line (numbers as float),
    or None when there is no such line."""
    for line in text.splitlines():
        words = line.split()
        if words[:1] != ["cipher-bench"]:
            continue
        out: dict = {}
        for w in words[1:]:
            k, sep, v = w.partition("=")
            if not sep:
                continue
            try:
                out[k] = float(v)
            except ValueError:
                out[k] = v
        if "us_per_pass_min" in out:
            return out
    return None


def cipher_floor(halyard_exe: str, size: int = CIPHER_BENCH_SIZE,
                 seconds: float = CIPHER_BENCH_SECONDS) -> dict:
    """Runs ``halyard security cipher-bench`` (AES-256-GCM, ``size`` octets): its fields plus
    ``argv`` and ``ok``; or ``ok`` False and ``error``. Never raises."""
    argv = [halyard_exe, "security", "cipher-bench", "--size", str(size), "--seconds", str(seconds)]
    if not os.access(halyard_exe, os.X_OK):
        return {"ok": False, "argv": argv, "error": f"{halyard_exe} not built"}
    rc, out, err = _run(argv)
    fields = parse_cipher_bench(out) if rc == 0 else None
    if fields is None:
        return {"ok": False, "argv": argv,
                "error": f"`halyard security cipher-bench` exit {rc}: {_first_line(err) or _first_line(out)}"}
    return {"ok": True, "argv": argv, **fields}
