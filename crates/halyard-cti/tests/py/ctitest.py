"""Helpers of the halyard-cti Python tests: the node binary and its processes, medallion
processes, collection ids, STIX object builders and small HTTP helpers.

The fixtures of conftest.py are built on these; test modules import the builders directly.
"""

import base64
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import requests

REPO = Path(__file__).resolve().parents[4]

TAXII = "application/taxii+json;version=2.1"
STIX = "application/stix+json;version=2.1"

# The TLP 2.0 marking definitions published with the STIX TLP 2.0 extension (what halyard-stix
# writes), and the TLP 1.0 ones fixed by STIX 2.1 section 7.2.1.4 (which it reads too).
TLP_CLEAR = "marking-definition--94868c89-83c2-464b-929b-a1a8aa3c8487"
TLP_GREEN = "marking-definition--bab4a63c-aed9-4cf5-a766-dfca5abac2bb"
TLP_AMBER = "marking-definition--55d920b0-5e8b-4f79-9ee9-91f868d9b421"
TLP_AMBER_STRICT = "marking-definition--939a9414-2ddd-4d32-a0cd-375ea402b003"
TLP_RED = "marking-definition--e828b379-4e03-4974-9ac4-e53a884c97c1"
TLP1_WHITE = "marking-definition--613f2e26-407d-48c7-9eca-b8e91df99dc9"
TLP1_GREEN = "marking-definition--34098fce-860f-48ae-8e50-ebd3cc5e41da"

PASSWORD = "correct horse battery staple"

# Every live process started by these helpers, for the failure report (conftest.py).
LIVE = []


def cti_bin():
    """The halyard-cti binary: $HALYARD_CTI_BIN, else target/ci, else target/debug."""
    env = os.environ.get("HALYARD_CTI_BIN")
    candidates = [Path(env)] if env else [
        REPO / "target" / "ci" / "halyard-cti",
        REPO / "target" / "debug" / "halyard-cti",
    ]
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    raise FileNotFoundError(
        "the halyard-cti binary is not built: looked for "
        + ", ".join(str(c) for c in candidates)
        + " (set HALYARD_CTI_BIN, or build it: cargo build -p halyard-cti)"
    )


def name_based_uuid(kind, name):
    """halyard_cti::ids::name_based_uuid: SHA-256 of kind, NUL, name; the first 16 bytes
    shaped as a version 4 UUID."""
    b = bytearray(hashlib.sha256(kind.encode() + b"\0" + name.encode()).digest()[:16])
    b[6] = (b[6] & 0x0F) | 0x40
    b[8] = (b[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(b)))


def collection_id(sector, tlp):
    """The id of a node's TAXII collection: `sector` (None for the node's local one) and a
    TLP level (clear, green, amber, amber+strict, red)."""
    return name_based_uuid("collection", f"{sector or 'local'}/{tlp}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node_config(org, domain, sectors, extra=""):
    """A node configuration for tests: no DDS Security, a free HTTP port, and a review
    policy that queues nothing short of TLP:RED."""
    return (
        f"sectors = {json.dumps(list(sectors))}\n"
        "\n[node]\n"
        f'organisation = "{org}"\n'
        f"domain = {domain}\n"
        'store = "store"\n'
        "insecure = true\n"
        'interface = "lo"\n'
        "\n[listen]\n"
        'http = "127.0.0.1:0"\n'
        "\n[review]\n"
        'min_tlp = "red"\n'
        "types = []\n"
        "on_sanitized = false\n"
        f"{extra}"
    )


class Proc:
    """A process whose standard error (and, for nodes, standard output) goes to a log file."""

    def __init__(self, name, log):
        self.name = name
        self.log_path = log
        self.popen = None

    def log(self):
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines=200):
        return "\n".join(self.log().splitlines()[-lines:])

    def alive(self):
        return self.popen is not None and self.popen.poll() is None

    def stop(self, timeout=15):
        """SIGTERM, then SIGKILL if it does not end within `timeout` seconds."""
        if self.popen is None:
            return
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        self.popen = None

    def kill(self):
        if self.popen is None:
            return
        if self.popen.poll() is None:
            self.popen.kill()
        self.popen.wait()
        self.popen = None


class Node(Proc):
    """A `halyard-cti serve` in its own directory (node.toml, store/, node.log), with an
    `admin` account made by `halyard-cti user add` before it starts."""

    def __init__(self, workdir, org, config_text):
        workdir.mkdir(parents=True, exist_ok=True)
        super().__init__(org, workdir / "node.log")
        self.dir = workdir
        self.org = org
        self.config = workdir / "node.toml"
        self.config.write_text(config_text)
        self.bin = cti_bin()
        self.base = None
        self.admin = ("admin", PASSWORD)
        self.add_user("admin", "admin")

    def cli(self, *args, env=None, check=True):
        """Runs `halyard-cti ARGS`; returns the completed process (stdout and stderr text)."""
        e = dict(os.environ, HALYARD_INTERFACE="lo", **(env or {}))
        r = subprocess.run(
            [str(self.bin), *args], capture_output=True, text=True, env=e, timeout=120
        )
        if check and r.returncode != 0:
            raise AssertionError(
                f"halyard-cti {' '.join(args)} exited {r.returncode}\n"
                f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}"
            )
        return r

    def add_user(self, name, role, password=PASSWORD, sectors=None, max_tlp=None):
        args = ["user", "add", name, "--config", str(self.config), "--role", role,
                "--password-env", "HALYARD_CTI_TEST_PASSWORD"]
        if sectors is not None:
            args += ["--sectors", ",".join(sectors)]
        if max_tlp is not None:
            args += ["--max-tlp", max_tlp]
        self.cli(*args, env={"HALYARD_CTI_TEST_PASSWORD": password})
        return (name, password)

    def token(self, name):
        return self.cli("user", "token", name, "--config", str(self.config)).stdout.strip()

    def start(self, timeout=60):
        """Starts `serve` and waits for its `TAXII 2.1: URL` line."""
        assert self.popen is None, f"{self.org} is running already"
        log = open(self.log_path, "ab")
        log.write(f"--- {time.strftime('%H:%M:%S')} serve --config {self.config}\n".encode())
        log.flush()
        self.popen = subprocess.Popen(
            [str(self.bin), "serve", "--config", str(self.config)],
            stdout=subprocess.PIPE,
            stderr=log,
            env=dict(os.environ, HALYARD_INTERFACE="lo"),
            cwd=self.dir,
        )
        log.close()
        found = {}
        ready = threading.Event()
        popen = self.popen

        def read():
            with open(self.log_path, "ab") as out:
                for raw in popen.stdout:
                    out.write(b"[stdout] " + raw)
                    out.flush()
                    line = raw.decode(errors="replace").strip()
                    if line.startswith("TAXII 2.1: ") and "url" not in found:
                        found["url"] = line[len("TAXII 2.1: "):]
                        ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(timeout) or "url" not in found:
            self.kill()
            raise AssertionError(
                f"{self.org}: `halyard-cti serve` did not print its TAXII URL within "
                f"{timeout} s; its log:\n{self.log_tail()}"
            )
        url = found["url"]
        assert url.endswith("/taxii2/"), url
        self.base = url[: -len("/taxii2/")]
        return self

    @property
    def taxii(self):
        return self.base + "/taxii2/"

    @property
    def api_root(self):
        return self.base + "/taxii2/api/"

    def collection_url(self, sector, tlp):
        return f"{self.api_root}collections/{collection_id(sector, tlp)}/"

    def get(self, path, auth=None, **kw):
        headers = {"Accept": "application/json"}
        if path.startswith("/taxii2/"):
            headers["Accept"] = TAXII
        headers.update(kw.pop("headers", {}))
        return requests.get(self.base + path, auth=auth or self.admin, headers=headers,
                            timeout=30, **kw)

    def post_bundle(self, objects, sector=None, tlp=None, auth=None, path="objects"):
        """POST /api/v1/objects (or misp) with a bundle (or any JSON); returns the report."""
        body = objects if isinstance(objects, dict) else bundle(objects)
        params = {}
        if sector:
            params["sector"] = sector
        if tlp:
            params["tlp"] = tlp
        r = requests.post(f"{self.base}/api/v1/{path}", params=params, json=body,
                          auth=auth or self.admin, timeout=60)
        assert r.status_code == 200, f"POST /api/v1/{path} {params}: {r.status_code} {r.text}"
        return r.json()

    def status(self):
        r = self.get("/api/v1/status")
        assert r.status_code == 200, f"GET /api/v1/status: {r.status_code} {r.text}"
        return r.json()

    def collection_objects(self, sector, tlp, auth=None, **params):
        """Every object (all pages) of a collection, by raw HTTP."""
        out = []
        params = dict(params)
        params.setdefault("limit", 1000)
        while True:
            r = self.get(f"/taxii2/api/collections/{collection_id(sector, tlp)}/objects/",
                         auth=auth, params=params)
            if r.status_code != 200:
                raise AssertionError(f"GET objects of {sector}/{tlp}: {r.status_code} {r.text}")
            env = r.json()
            out += env.get("objects", [])
            if not env.get("more"):
                return out
            params["next"] = env["next"]

    def all_visible_objects(self, auth=None):
        """Every object version of every collection the account sees: (collection, object)."""
        r = self.get("/taxii2/api/collections/", auth=auth)
        assert r.status_code == 200, r.text
        out = []
        for c in r.json().get("collections", []):
            params = {"limit": 1000, "match[version]": "all"}
            while True:
                rr = self.get(f"/taxii2/api/collections/{c['id']}/objects/", auth=auth,
                              params=params)
                assert rr.status_code == 200, f"{c['title']}: {rr.status_code} {rr.text}"
                env = rr.json()
                out += [(c, o) for o in env.get("objects", [])]
                if not env.get("more"):
                    break
                params["next"] = env["next"]
        return out


class Medallion(Proc):
    """The OASIS TAXII 2.1 reference server (memory backend) on a free port, with one API root
    `api1` and the given collections (each: id, title, can_read, can_write), user `admin`."""

    def __init__(self, workdir, collections, max_page_size=100):
        workdir.mkdir(parents=True, exist_ok=True)
        super().__init__("medallion", workdir / "medallion.log")
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.admin = ("admin", PASSWORD)
        data = {
            "/discovery": {
                "title": "medallion reference server",
                "description": "OASIS TAXII 2.1 reference implementation",
                "default": f"{self.base}/api1/",
                "api_roots": [f"{self.base}/api1/"],
            },
            "api1": {
                "information": {
                    "title": "api1",
                    "versions": [TAXII],
                    "max_content_length": 32 << 20,
                },
                "status": [],
                "collections": [
                    dict(c, media_types=[STIX], objects=[], manifest=[]) for c in collections
                ],
            },
        }
        (workdir / "data.json").write_text(json.dumps(data))
        config = {
            "backend": {
                "module": "medallion.backends.memory_backend",
                "module_class": "MemoryBackend",
                "filename": str(workdir / "data.json"),
            },
            "users": {"admin": PASSWORD},
            "taxii": {"max_page_size": max_page_size},
        }
        self.config = workdir / "medallion.json"
        self.config.write_text(json.dumps(config))

    def start(self, timeout=30):
        log = open(self.log_path, "ab")
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "medallion.scripts.run", "--host", "127.0.0.1",
             "--port", str(self.port), "--log-level", "INFO", str(self.config)],
            stdout=log, stderr=log,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.popen.poll() is not None:
                break
            try:
                r = requests.get(self.taxii, auth=self.admin, headers={"Accept": TAXII},
                                 timeout=2)
                if r.status_code == 200:
                    return self
            except requests.ConnectionError:
                pass
            time.sleep(0.1)
        self.kill()
        raise AssertionError(f"medallion did not start; its log:\n{self.log_tail()}")

    @property
    def taxii(self):
        return self.base + "/taxii2/"

    @property
    def api_root(self):
        return self.base + "/api1/"

    def collection_url(self, cid):
        return f"{self.api_root}collections/{cid}/"


def wait_until(what, predicate, timeout, interval=0.25, procs=()):
    """Calls `predicate` until it returns a true value (returned) or `timeout` seconds pass
    (AssertionError naming `what`, with the last value and the logs of `procs`)."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = predicate()
        if last:
            return last
        if time.monotonic() > deadline:
            logs = "".join(f"\n--- {p.name} log:\n{p.log_tail()}" for p in procs)
            raise AssertionError(f"timed out after {timeout} s: {what} (last: {last!r}){logs}")
        time.sleep(interval)


# ---- STIX builders ------------------------------------------------------------------------

def stix_id(t):
    return f"{t}--{uuid.uuid4()}"


def ts(seconds=0.0, base=1772359200.0):
    """A STIX timestamp (millisecond precision, UTC) `seconds` after 2026-03-01T10:00:00Z."""
    t = base + seconds
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(round((t % 1) * 1000)):03d}Z"


def bundle(objects):
    return {"type": "bundle", "id": stix_id("bundle"), "objects": list(objects)}


def indicator(n=0, marking=TLP_GREEN, pattern=None, modified=None, **extra):
    o = {
        "type": "indicator",
        "spec_version": "2.1",
        "id": stix_id("indicator"),
        "created": ts(n),
        "modified": modified or ts(n),
        "name": f"C2 server {n}",
        "indicator_types": ["malicious-activity"],
        "pattern": pattern or f"[ipv4-addr:value = '198.51.100.{n % 250 + 1}']",
        "pattern_type": "stix",
        "valid_from": ts(n),
        "object_marking_refs": [marking],
    }
    o.update(extra)
    return o


def new_version(obj, seconds, **changes):
    """A later version of `obj`: same id and created, `modified` `seconds` later."""
    v = dict(obj, **changes)
    v["modified"] = ts(seconds)
    return v


def malware(name="Emotet", marking=TLP_GREEN):
    return {
        "type": "malware",
        "spec_version": "2.1",
        "id": stix_id("malware"),
        "created": ts(5),
        "modified": ts(5),
        "name": name,
        "is_family": True,
        "malware_types": ["trojan", "dropper"],
        "object_marking_refs": [marking],
    }


def relationship(source, rel, target, marking=TLP_GREEN):
    return {
        "type": "relationship",
        "spec_version": "2.1",
        "id": stix_id("relationship"),
        "created": ts(6),
        "modified": ts(6),
        "relationship_type": rel,
        "source_ref": source["id"],
        "target_ref": target["id"],
        "object_marking_refs": [marking],
    }


def types_of(objs):
    return sorted({o["type"] for o in objs})


def basic(user, password):
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
