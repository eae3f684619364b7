#!/usr/bin/env python3
"""End-to-end figures of the CTI sharing node, side by side with a TAXII-polling pipeline.

Measured in one run, on this machine:

1. Latency from `publish` on one node to the object being stored (and so served by TAXII) on
   another node of the same sector, at several rates (objects per second, one object per
   REST request, as an analyst's tool or a feed sends them). The start is the publisher's
   clock just before its request; the end is the receiving node's TAXII `date_added` of the
   object, read afterwards from its manifest (same host, same clock).
2. The same flow through a TAXII-polling pipeline: `taxii2-client` adds each object to a
   `medallion` collection (the OASIS TAXII 2.1 reference server) and a consumer polls that
   collection with `taxii2-client` using `added_after`; the end is when the consumer's poll
   returns the object. Polled back to back (its best case) and once a second.
3. Ingestion rate of one large bundle (`halyard-cti publish FILE`): objects validated,
   sanitised, stored and shared per second.
4. CPU and resident memory of both nodes while 125 objects per second flow.

The nodes run with DDS Security as `halyard-cti community init` sets it up (GREEN objects:
signed). Review is switched off for the run (objects needing review wait for a person).

    python3 bench/cti/e2e.py [--bin target/release/halyard-cti] [--out DIR]
"""

import argparse
import http.client
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from base64 import b64encode
from urllib.parse import urlsplit

GREEN = "marking-definition--bab4a63c-aed9-4cf5-a766-dfca5abac2bb"
TAXII = "application/taxii+json;version=2.1"


def log(*a):
    print("e2e:", *a, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def indicator(n, run):
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    return {
        "type": "indicator",
        "spec_version": "2.1",
        "id": f"indicator--{uuid.uuid4()}",
        "created": now,
        "modified": now,
        "name": f"bench {run} {n}",
        "description": "Command-and-control server seen in a phishing campaign.",
        "pattern": f"[ipv4-addr:value = '198.51.{n // 256 % 256}.{n % 256}']",
        "pattern_type": "stix",
        "valid_from": now,
        "object_marking_refs": [GREEN],
    }


def pct(values, p):
    if not values:
        return None
    v = sorted(values)
    k = min(len(v) - 1, max(0, int(round(p / 100 * (len(v) - 1)))))
    return v[k]


def summary(lat_ns):
    ms = [x / 1e6 for x in lat_ns]
    if not ms:
        return {"n": 0}
    return {
        "n": len(ms),
        "p50_ms": round(pct(ms, 50), 3),
        "p99_ms": round(pct(ms, 99), 3),
        "mean_ms": round(statistics.fmean(ms), 3),
        "min_ms": round(min(ms), 3),
        "max_ms": round(max(ms), 3),
    }


class Node:
    def __init__(self, binary, config, log_path):
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(
            [binary, "serve", "--config", config],
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env=dict(os.environ, HALYARD_INTERFACE=os.environ.get("HALYARD_INTERFACE", "lo")),
        )
        deadline = time.time() + 60
        self.base = None
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            m = re.match(r"TAXII 2\.1: (http://\S+)/taxii2/", line)
            if m:
                self.base = m.group(1)
                break
        if not self.base:
            raise SystemExit(f"node {config} did not start; see {log_path}")
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def cpu_seconds(self):
        with open(f"/proc/{self.proc.pid}/stat") as f:
            parts = f.read().rsplit(")", 1)[1].split()
        return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0


class Client:
    """A keep-alive HTTP client for one node."""

    def __init__(self, base, auth):
        u = urlsplit(base)
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
        self.auth = auth

    def request(self, method, path, body=None, headers=None):
        h = {"Authorization": self.auth}
        h.update(headers or {})
        self.conn.request(method, path, body=body, headers=h)
        r = self.conn.getresponse()
        data = r.read()
        return r.status, r.getheaders(), data

    def post_objects(self, objects, sector):
        bundle = {"type": "bundle", "id": f"bundle--{uuid.uuid4()}", "objects": objects}
        status, _, data = self.request(
            "POST",
            f"/api/v1/objects?sector={sector}",
            json.dumps(bundle).encode(),
            {"Content-Type": "application/json"},
        )
        if status != 200:
            raise RuntimeError(f"POST refused ({status}): {data[:300]!r}")
        return json.loads(data)

    def manifest(self, collection):
        """{id: date_added µs} of a collection, every page."""
        out = {}
        nxt = None
        while True:
            q = "limit=1000" + (f"&next={nxt}" if nxt else "")
            status, _, data = self.request(
                "GET", f"/taxii2/api/collections/{collection}/manifest/?{q}", headers={"Accept": TAXII}
            )
            if status != 200:
                raise RuntimeError(f"manifest: {status} {data[:200]!r}")
            v = json.loads(data) if data else {}
            for o in v.get("objects", []):
                out[o["id"]] = rfc3339_ns(o["date_added"])
            if v.get("more") and v.get("next"):
                nxt = v["next"]
            else:
                return out


def rfc3339_ns(s):
    m = re.match(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?Z", s)
    if not m:
        raise ValueError(s)
    import calendar

    secs = calendar.timegm(tuple(int(x) for x in m.groups()[:6]))
    frac = (m.group(7) or "0")[:9].ljust(9, "0")
    return secs * 1_000_000_000 + int(frac)


def collection_id(binary_dir, sector, tlp):
    import hashlib

    d = bytearray(hashlib.sha256(b"collection\0" + f"{sector}/{tlp}".encode()).digest()[:16])
    d[6] = (d[6] & 0x0F) | 0x40
    d[8] = (d[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(d)))


def paced(rate, n, send):
    """Calls send(i) n times at `rate` per second; returns the achieved rate."""
    t0 = time.perf_counter()
    for i in range(n):
        target = t0 + i / rate
        while True:
            d = target - time.perf_counter()
            if d <= 0:
                break
            time.sleep(min(d, 0.002))
        send(i)
    return n / (time.perf_counter() - t0)


def halyard_latency(pubs, sub_client, coll, rate, seconds, run):
    """`pubs`: keep-alive clients of the publishing node, one per sending thread (one
    request in flight per connection, as a client library sends them)."""
    n = max(50, int(rate * seconds))
    sent = {}
    workers = pubs[: max(1, min(len(pubs), -(-int(rate) // 200)))]

    def worker(k, client):
        def send(i):
            obj = indicator(i * len(workers) + k, run)
            sent[obj["id"]] = time.time_ns()
            client.post_objects([obj], "bench")

        rates[k] = paced(rate / len(workers), n // len(workers), send)

    rates = [0.0] * len(workers)
    threads = [threading.Thread(target=worker, args=(k, c)) for k, c in enumerate(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    achieved = sum(rates)
    n = len(sent)
    deadline = time.time() + 60
    got = {}
    while time.time() < deadline:
        got = sub_client.manifest(coll)
        if all(i in got for i in sent):
            break
        time.sleep(0.5)
    lat = [got[i] - t for i, t in sent.items() if i in got]
    res = summary(lat)
    res.update(rate=rate, achieved_rate=round(achieved, 1), sent=n, delivered=len(lat))
    return res


def start_medallion(tmp, port):
    coll = str(uuid.uuid4())
    data = {
        "/discovery": {
            "title": "bench",
            "default": f"http://127.0.0.1:{port}/api1/",
            "api_roots": [f"http://127.0.0.1:{port}/api1/"],
        },
        "api1": {
            "information": {
                "title": "bench",
                "versions": ["application/taxii+json;version=2.1"],
                "max_content_length": 104857600,
            },
            "status": [],
            "collections": [
                {
                    "id": coll,
                    "title": "bench",
                    "can_read": True,
                    "can_write": True,
                    "media_types": ["application/stix+json;version=2.1"],
                    "objects": [],
                    "manifest": [],
                }
            ],
        },
    }
    with open(os.path.join(tmp, "medallion-data.json"), "w") as f:
        json.dump(data, f)
    config = {
        "backend": {
            "module": "medallion.backends.memory_backend",
            "module_class": "MemoryBackend",
            "filename": os.path.join(tmp, "medallion-data.json"),
        },
        "users": {"bench": "bench-password"},
        "taxii": {"max_page_size": 1000},
    }
    with open(os.path.join(tmp, "medallion.json"), "w") as f:
        json.dump(config, f)
    proc = subprocess.Popen(
        ["medallion", "--port", str(port), os.path.join(tmp, "medallion.json")],
        stdout=subprocess.DEVNULL,
        stderr=open(os.path.join(tmp, "medallion.log"), "w"),
    )
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    return proc, f"http://127.0.0.1:{port}/api1/collections/{coll}/"


def polling_latency(coll_url, rate, seconds, run, interval, cap):
    from taxii2client.v21 import Collection

    producer = Collection(coll_url, user="bench", password="bench-password")
    consumer = Collection(coll_url, user="bench", password="bench-password")
    # medallion's memory backend slows as its collection grows and its producer falls far
    # behind the offered rate: each run is capped (the achieved rate is reported).
    n = min(cap, max(50, int(rate * seconds)))
    sent, seen = {}, {}
    stop = threading.Event()
    bookmark = [None]
    errors = []

    # taxii2-client's get_objects() returns the envelope without its headers; the poll reads
    # X-TAXII-Date-Added-Last (the bookmark) through the client's own session.
    session = consumer._conn.session

    def poll():
        while not stop.is_set() or len(seen) < len(sent):
            params = {"added_after": bookmark[0]} if bookmark[0] else {}
            try:
                r = session.get(consumer.objects_url, headers={"Accept": TAXII}, params=params, timeout=30)
                r.raise_for_status()
                env = r.json() if r.content else {}
            except Exception as e:  # a failed poll is retried, as a polling client does
                errors.append(repr(e))
                time.sleep(0.05)
                continue
            now = time.time_ns()
            for o in env.get("objects", []):
                seen.setdefault(o["id"], now)
            last = r.headers.get("X-TAXII-Date-Added-Last")
            if last:
                # medallion's added_after misses objects added in the same instant as its
                # Date-Added-Last: poll from ten seconds earlier and keep each object's first
                # sighting, so the pipeline loses nothing and is measured at its best.
                ns = rfc3339_ns(last) - 10_000_000_000
                bookmark[0] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ns // 10**9)) + ".%06dZ" % (ns % 10**9 // 1000)
            if stop.is_set() and time.time() > stop_deadline[0]:
                return
            if interval:
                time.sleep(interval)

    stop_deadline = [0]
    t = threading.Thread(target=poll, daemon=True)
    t.start()

    def send(i):
        obj = indicator(i, run)
        sent[obj["id"]] = time.time_ns()
        producer.add_objects(json.dumps({"objects": [obj]}))

    achieved = paced(rate, n, send)
    stop_deadline[0] = time.time() + 60
    stop.set()
    t.join(70)
    lat = [seen[i] - s for i, s in sent.items() if i in seen]
    res = summary(lat)
    res.update(rate=rate, achieved_rate=round(achieved, 1), sent=n, delivered=len(lat),
               poll_interval_s=interval, failed_polls=len(errors), first_error=errors[0] if errors else None)
    return res


class _SkipHalyard(Exception):
    pass


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="target/release/halyard-cti")
    ap.add_argument("--out", default=None, help="directory for results.json and report.md")
    ap.add_argument("--rates", default="10,100,1000")
    ap.add_argument("--seconds", type=float, default=5.0, help="length of each rate's run")
    ap.add_argument("--bulk", type=int, default=100_000, help="objects in the ingestion bundle")
    ap.add_argument("--load-seconds", type=float, default=20.0, help="length of the 125/s CPU and RSS run")
    ap.add_argument("--domain", type=int, default=219)
    ap.add_argument("--skip-polling", action="store_true")
    ap.add_argument("--only-polling", action="store_true", help="measure the polling pipeline only")
    ap.add_argument("--polling-cap", type=int, default=300, help="most objects per polling run")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    rates = [float(r) for r in args.rates.split(",")]
    tmp = tempfile.mkdtemp(prefix="halyard-cti-e2e-")
    results = {"machine": {"cpus": os.cpu_count()}, "halyard": [], "polling": []}
    nodes = []
    try:
        if args.only_polling:
            raise _SkipHalyard()
        subprocess.run(
            [binary, "community", "init", "--dir", tmp, "--org", "pub", "--sector", "bench",
             "--org", "sub", "--sector", "bench", "--domain", str(args.domain), "--base-port", "0"],
            check=True, stdout=subprocess.DEVNULL,
        )
        for org in ("pub", "sub"):
            p = os.path.join(tmp, org, "node.toml")
            text = open(p).read()
            text = re.sub(r"\[review\].*", '[review]\nmin_tlp = "red"\ntypes = []\non_sanitized = false\n', text, flags=re.S)
            open(p, "w").write(text)
        sub = Node(binary, os.path.join(tmp, "sub", "node.toml"), os.path.join(tmp, "sub.log"))
        pub = Node(binary, os.path.join(tmp, "pub", "node.toml"), os.path.join(tmp, "pub.log"))
        nodes = [pub, sub]

        def auth(org):
            pw = open(os.path.join(tmp, org, "admin.password")).read().strip()
            return "Basic " + b64encode(f"admin:{pw}".encode()).decode()

        pub_c = [Client(pub.base, auth("pub")) for _ in range(5)]
        sub_c = Client(sub.base, auth("sub"))
        coll = collection_id(None, "bench", "green")
        # Warm-up: discovery and the secure handshake done, one object through.
        warm = halyard_latency(pub_c, sub_c, coll, 10, 1, "warm")
        log("warm-up", warm)
        for r in rates:
            res = halyard_latency(pub_c, sub_c, coll, r, args.seconds, f"r{r}")
            log("halyard", res)
            results["halyard"].append(res)

        # CPU and RSS at 125 objects/s.
        cpu0 = [n.cpu_seconds() for n in nodes]
        rss = [[], []]
        t0 = time.time()
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                for k, n in enumerate(nodes):
                    rss[k].append(n.rss_mib())
                time.sleep(1)

        st = threading.Thread(target=sample, daemon=True)
        st.start()
        load = halyard_latency(pub_c, sub_c, coll, 125, args.load_seconds, "load")
        stop.set()
        st.join()
        wall = time.time() - t0
        cpu1 = [n.cpu_seconds() for n in nodes]
        results["load_125"] = {
            "latency": load,
            "publisher": {"cpu_percent": round(100 * (cpu1[0] - cpu0[0]) / wall, 2),
                          "rss_mib_max": round(max(rss[0]), 1), "rss_mib_end": round(rss[0][-1], 1),
                          "rss_mib_every_s": [round(x, 1) for x in rss[0]]},
            "receiver": {"cpu_percent": round(100 * (cpu1[1] - cpu0[1]) / wall, 2),
                         "rss_mib_max": round(max(rss[1]), 1), "rss_mib_end": round(rss[1][-1], 1),
                         "rss_mib_every_s": [round(x, 1) for x in rss[1]]},
        }
        log("load 125/s", results["load_125"])

        # Ingestion of one large bundle.
        if args.bulk:
            objs = [indicator(i, "bulk") for i in range(args.bulk)]
            path = os.path.join(tmp, "bulk.json")
            with open(path, "w") as f:
                json.dump({"type": "bundle", "id": f"bundle--{uuid.uuid4()}", "objects": objs}, f)
            size = os.path.getsize(path)
            env = dict(os.environ, HALYARD_CTI_USER="admin",
                       HALYARD_CTI_PASSWORD=open(os.path.join(tmp, "pub", "admin.password")).read().strip())
            t = time.perf_counter()
            subprocess.run([binary, "publish", path, "--url", pub.base, "--sector", "bench"],
                           check=True, env=env, stdout=subprocess.DEVNULL)
            took = time.perf_counter() - t
            results["ingest"] = {"objects": args.bulk, "bytes": size, "seconds": round(took, 2),
                                 "objects_per_s": round(args.bulk / took)}
            log("ingest", results["ingest"])
    except _SkipHalyard:
        pass
    finally:
        for n in nodes:
            n.stop()

    if not args.skip_polling:
        # A fresh medallion per run: its memory backend slows as a collection grows.
        for interval in (0, 1.0):
            for r in rates:
                proc, coll_url = start_medallion(tmp, free_port())
                try:
                    res = polling_latency(coll_url, r, args.seconds, f"p{r}", interval, args.polling_cap)
                finally:
                    proc.terminate()
                    proc.wait(10)
                log("polling", res)
                results["polling"].append(res)

    text = json.dumps(results, indent=2)
    print(text)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "results.json"), "w") as f:
            f.write(text + "\n")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
