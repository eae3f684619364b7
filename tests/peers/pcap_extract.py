#!/usr/bin/env python3
"""Minimal pcap reader + RTPS dissector used to build the Cyclone DDS wire
captures in crates/halyard-wire/tests/captures/ (Fast DDS ones in its fastdds/
subdirectory).  Standard library only.

  pcap_extract.py list FILE.pcap [--pids]        one line per RTPS datagram
  pcap_extract.py extract FILE.pcap N OUT.bin    write UDP payload of datagram N
  pcap_extract.py dump OUT.bin [--pids]          dissect a single payload file

Datagram numbers are the indices printed by `list` (RTPS datagrams only,
counting from 0).  Supported link types: Ethernet (1), Linux SLL (113),
SLL2 (276), BSD loopback (0), raw IPv4 (101/228).  IPv4 + UDP only.
"""
import struct
import sys

SUBMSG = {0x01: "PAD", 0x06: "ACKNACK", 0x07: "HEARTBEAT", 0x08: "GAP",
          0x09: "INFO_TS", 0x0c: "INFO_SRC", 0x0d: "INFO_REPLY_IP4",
          0x0e: "INFO_DST", 0x0f: "INFO_REPLY", 0x12: "NACK_FRAG",
          0x13: "HEARTBEAT_FRAG", 0x15: "DATA", 0x16: "DATA_FRAG",
          0x80: "VENDOR80", 0x81: "ADLINK_MSG_LEN", 0x82: "ADLINK_ENTITY_ID"}

PIDS = {0x0000: "PAD", 0x0001: "SENTINEL", 0x0002: "PARTICIPANT_LEASE_DURATION",
        0x0004: "TIME_BASED_FILTER", 0x0005: "TOPIC_NAME", 0x0006: "OWNERSHIP_STRENGTH",
        0x0007: "TYPE_NAME", 0x000f: "DOMAIN_ID", 0x0015: "PROTOCOL_VERSION",
        0x0016: "VENDORID", 0x001a: "RELIABILITY", 0x001b: "LIVELINESS",
        0x001d: "DURABILITY", 0x001e: "DURABILITY_SERVICE", 0x001f: "OWNERSHIP",
        0x0021: "PRESENTATION", 0x0023: "DEADLINE", 0x0025: "DESTINATION_ORDER",
        0x0027: "LATENCY_BUDGET", 0x0029: "PARTITION", 0x002b: "LIFESPAN",
        0x002c: "USER_DATA", 0x002d: "GROUP_DATA", 0x002e: "TOPIC_DATA",
        0x002f: "UNICAST_LOCATOR", 0x0030: "MULTICAST_LOCATOR",
        0x0031: "DEFAULT_UNICAST_LOCATOR", 0x0032: "METATRAFFIC_UNICAST_LOCATOR",
        0x0033: "METATRAFFIC_MULTICAST_LOCATOR", 0x0034: "PARTICIPANT_MANUAL_LIVELINESS_COUNT",
        0x0035: "CONTENT_FILTER_PROPERTY", 0x0040: "HISTORY",
        0x0041: "RESOURCE_LIMITS", 0x0043: "EXPECTS_INLINE_QOS",
        0x0048: "DEFAULT_MULTICAST_LOCATOR", 0x0049: "TRANSPORT_PRIORITY",
        0x0050: "PARTICIPANT_GUID", 0x0052: "GROUP_GUID",
        0x0058: "BUILTIN_ENDPOINT_SET", 0x0059: "PROPERTY_LIST",
        0x005a: "ENDPOINT_GUID", 0x0060: "TYPE_MAX_SIZE_SERIALIZED",
        0x0062: "ENTITY_NAME", 0x0070: "KEY_HASH",
        0x0071: "STATUS_INFO",
        0x0073: "DATA_REPRESENTATION", 0x0074: "TYPE_CONSISTENCY_ENFORCEMENT",
        0x0075: "TYPE_INFORMATION", 0x0077: "BUILTIN_ENDPOINT_QOS",
        0x0083: "CONTENT_FILTER_INFO",
        0x8000: "ADLINK_BUILTIN_ENDPOINT_SET", 0x8004: "ADLINK_ENDPOINT_GUID",
        0x8007: "ADLINK_PARTICIPANT_VERSION_INFO", 0x8008: "ADLINK_NODE_NAME",
        0x8009: "ADLINK_EXEC_NAME", 0x800a: "ADLINK_PROCESS_ID",
        0x800c: "ADLINK_ENTITY_FACTORY", 0x8019: "CYCLONE_RECEIVE_BUFFER_SIZE",
        0x801a: "CYCLONE_TYPE_INFORMATION", 0x801b: "CYCLONE_TOPIC_GUID",
        0x801c: "CYCLONE_REQUESTS_KEYHASH", 0x801d: "CYCLONE_REDUNDANT_NETWORKING",
        0x800f: "FASTDDS_RELATED_SAMPLE_IDENTITY"}

ENCAPS = {0x0000: "CDR_BE", 0x0001: "CDR_LE", 0x0002: "PL_CDR_BE", 0x0003: "PL_CDR_LE",
          0x0006: "CDR2_BE", 0x0007: "CDR2_LE", 0x0008: "D_CDR2_BE", 0x0009: "D_CDR2_LE",
          0x000a: "PL_CDR2_BE", 0x000b: "PL_CDR2_LE"}


def read_pcap(path):
    """Yield (ts, src_ip, sport, dst_ip, dport, udp_payload) for IPv4/UDP records."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack_from("<I", data, 0)[0]
    if magic in (0xa1b2c3d4, 0xa1b23c4d):
        e = "<"
    elif magic in (0xd4c3b2a1, 0x4d3cb2a1):
        e = ">"
    else:
        raise SystemExit("not a classic pcap file (pcapng unsupported)")
    linktype = struct.unpack_from(e + "I", data, 20)[0]
    off = 24
    while off + 16 <= len(data):
        ts_s, ts_f, incl, _orig = struct.unpack_from(e + "IIII", data, off)
        off += 16
        pkt = data[off:off + incl]
        off += incl
        if linktype == 1:
            eth = struct.unpack_from("!H", pkt, 12)[0]
            p = 14
            if eth == 0x8100:
                eth = struct.unpack_from("!H", pkt, 16)[0]
                p = 18
            if eth != 0x0800:
                continue
        elif linktype == 113:
            if struct.unpack_from("!H", pkt, 14)[0] != 0x0800:
                continue
            p = 16
        elif linktype == 276:
            if struct.unpack_from("!H", pkt, 0)[0] != 0x0800:
                continue
            p = 20
        elif linktype == 0:
            p = 4
        elif linktype in (101, 228):
            p = 0
        else:
            raise SystemExit("unsupported link type %d" % linktype)
        ip = pkt[p:]
        if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 17:
            continue
        ihl = (ip[0] & 0x0f) * 4
        frag = struct.unpack_from("!H", ip, 6)[0]
        if frag & 0x1fff or frag & 0x2000:
            continue  # IP fragments: not reassembled
        src = ".".join(str(b) for b in ip[12:16])
        dst = ".".join(str(b) for b in ip[16:20])
        sport, dport, ulen = struct.unpack_from("!HHH", ip, ihl)
        yield (ts_s + ts_f / 1e6, src, sport, dst, dport, bytes(ip[ihl + 8:ihl + ulen]))


def rtps_datagrams(path):
    for rec in read_pcap(path):
        if rec[5][:4] == b"RTPS":
            yield rec


def eid(b):
    return b.hex()


def sn(b, e):
    hi, lo = struct.unpack_from(e + "iI", b, 0)
    return (hi << 32) | lo


def parse_plist(buf, e):
    """Return list of (pid, value bytes)."""
    out = []
    p = 0
    while p + 4 <= len(buf):
        pid, ln = struct.unpack_from(e + "HH", buf, p)
        p += 4
        out.append((pid, buf[p:p + ln]))
        p += ln
        if pid == 0x0001:
            break
    return out


def cdr_string(v, e):
    n = struct.unpack_from(e + "I", v, 0)[0]
    return v[4:4 + n].rstrip(b"\0").decode(errors="replace")


def describe_pid(pid, v, e):
    name = PIDS.get(pid & 0x3fff if pid < 0x8000 else pid, "PID_0x%04x" % pid)
    s = name
    try:
        if pid in (0x0005, 0x0007, 0x0062, 0x8008, 0x8009):
            s += "=%r" % cdr_string(v, e)
        elif pid == 0x0029:
            n = struct.unpack_from(e + "I", v, 0)[0]
            q = 4
            parts = []
            for _ in range(n):
                ln = struct.unpack_from(e + "I", v, q)[0]
                parts.append(v[q + 4:q + 4 + ln].rstrip(b"\0").decode())
                q += 4 + ((ln + 3) & ~3)
            s += "=%r" % parts
        elif pid in (0x002c,):
            n = struct.unpack_from(e + "I", v, 0)[0]
            s += "=%r" % v[4:4 + n]
        elif pid in (0x002f, 0x0030, 0x0031, 0x0032, 0x0033, 0x0048):
            kind, port = struct.unpack_from(e + "iI", v, 0)
            addr = v[8:24]
            a = ".".join(str(x) for x in addr[12:]) if kind == 1 else addr.hex()
            s += "=kind%d:%s:%d" % (kind, a, port)
        elif pid == 0x0059:
            n = struct.unpack_from(e + "I", v, 0)[0]
            q = 4
            props = []
            for _ in range(n):
                kv = []
                for _k in range(2):
                    ln = struct.unpack_from(e + "I", v, q)[0]
                    kv.append(v[q + 4:q + 4 + ln].rstrip(b"\0").decode(errors="replace"))
                    q += 4 + ((ln + 3) & ~3)
                props.append("%s=%s" % tuple(kv))
            s += "=%r" % props
        elif pid == 0x8007:
            s += "=" + v.hex()
        elif pid in (0x0050, 0x005a, 0x0052, 0x801b, 0x8004, 0x800f):
            s += "=" + v.hex()
        elif pid == 0x0070:
            s += "=" + v.hex()
        elif pid == 0x0016:
            s += "=%02x%02x" % (v[0], v[1])
        elif pid == 0x0015:
            s += "=%d.%d" % (v[0], v[1])
        elif pid == 0x001a:
            k, sec, fr = struct.unpack_from(e + "iiI", v, 0)
            s += "=%s,max_blocking=%d.%09ds" % ({1: "BEST_EFFORT", 2: "RELIABLE"}.get(k, k), sec, int(fr * 1e9 / 2**32))
        elif pid == 0x001d:
            s += "=%d" % struct.unpack_from(e + "i", v, 0)[0]
        elif pid == 0x0040:
            k, d = struct.unpack_from(e + "ii", v, 0)
            s += "=%s,%d" % ({0: "KEEP_LAST", 1: "KEEP_ALL"}.get(k, k), d)
        elif pid == 0x0041:
            s += "=%d,%d,%d" % struct.unpack_from(e + "iii", v, 0)
        elif pid in (0x0002, 0x0023, 0x0027, 0x002b, 0x0004):
            sec, fr = struct.unpack_from(e + "iI", v, 0)
            s += "=%d.%09ds" % (sec, int(fr * 1e9 / 2**32)) if sec != 0x7fffffff else "=inf"
        elif pid in (0x0058, 0x0077, 0x0071, 0x000f, 0x0049, 0x0006, 0x0034, 0x0060, 0x800a, 0x800c, 0x8019, 0x801c, 0x801d):
            s += "=0x%x" % struct.unpack_from(e + "I", v, 0)[0]
        elif pid == 0x001b:
            k, sec, fr = struct.unpack_from(e + "iiI", v, 0)
            s += "=kind%d,%s" % (k, "inf" if sec == 0x7fffffff else "%d.%09ds" % (sec, int(fr * 1e9 / 2**32)))
        elif pid == 0x0073:
            n = struct.unpack_from(e + "I", v, 0)[0]
            s += "=%r" % [struct.unpack_from(e + "h", v, 4 + 2 * i)[0] for i in range(n)]
        else:
            s += "(%dB)" % len(v)
    except struct.error:
        s += "(%dB?)" % len(v)
    return s


def dissect(payload, show_pids=False, topics=None):
    """Return (summary string, list of submessage dicts)."""
    vendor = payload[6:8].hex()
    prefix = payload[8:20].hex()
    subs = []
    p = 20
    while p + 4 <= len(payload):
        sid, flags = payload[p], payload[p + 1]
        e = "<" if flags & 1 else ">"
        ln = struct.unpack_from(e + "H", payload, p + 2)[0]
        body = payload[p + 4:] if ln == 0 and sid not in (0x01, 0x09) else payload[p + 4:p + 4 + ln]
        d = {"id": sid, "name": SUBMSG.get(sid, "0x%02x" % sid), "flags": flags, "len": ln}
        if sid in (0x15, 0x16):
            oq = struct.unpack_from(e + "H", body, 2)[0]
            d["rd"], d["wr"] = eid(body[4:8]), eid(body[8:12])
            d["sn"] = sn(body[12:20], e)
            q = 4 + oq
            if sid == 0x16:
                d["fragstart"], d["nfrags"], d["fragsize"], d["samplesize"] = struct.unpack_from(e + "IHHI", body, 20)
            if flags & 0x02:
                iq = parse_plist(body[q:], e)
                d["inlineqos"] = [describe_pid(pid, v, e) for pid, v in iq]
                q += sum(4 + len(v) for _, v in iq)
            if sid == 0x16 or flags & 0x0c:
                ser = body[q:]
                d["payload_len"] = len(ser)
                if sid == 0x15 or d.get("fragstart") == 1:
                    enc = struct.unpack_from(">H", ser, 0)[0]
                    d["encap"] = ENCAPS.get(enc, "0x%04x" % enc)
                    if enc in (0x0002, 0x0003) and sid == 0x15:
                        pe = "<" if enc == 3 else ">"
                        pl = parse_plist(ser[4:], pe)
                        d["plist"] = [describe_pid(pid, v, pe) for pid, v in pl]
                        d["pidlist"] = ["0x%04x" % pid for pid, _ in pl]
        elif sid == 0x07:
            d["rd"], d["wr"] = eid(body[0:4]), eid(body[4:8])
            d["first"], d["last"] = sn(body[8:16], e), sn(body[16:24], e)
            d["count"] = struct.unpack_from(e + "i", body, 24)[0]
        elif sid == 0x06:
            d["rd"], d["wr"] = eid(body[0:4]), eid(body[4:8])
            d["base"] = sn(body[8:16], e)
            d["nbits"] = struct.unpack_from(e + "I", body, 16)[0]
            nw = (d["nbits"] + 31) // 32
            d["count"] = struct.unpack_from(e + "i", body, 20 + 4 * nw)[0]
        elif sid == 0x08:
            d["rd"], d["wr"] = eid(body[0:4]), eid(body[4:8])
            d["gapstart"], d["gapbase"] = sn(body[8:16], e), sn(body[16:24], e)
            d["nbits"] = struct.unpack_from(e + "I", body, 24)[0]
        elif sid == 0x12:
            d["rd"], d["wr"] = eid(body[0:4]), eid(body[4:8])
            d["sn"] = sn(body[8:16], e)
            d["base"], d["nbits"] = struct.unpack_from(e + "II", body, 16)
        elif sid == 0x13:
            d["rd"], d["wr"] = eid(body[0:4]), eid(body[4:8])
            d["sn"] = sn(body[8:16], e)
            d["lastfrag"], d["count"] = struct.unpack_from(e + "Ii", body, 16)
        elif sid == 0x0e:
            d["dst"] = body[:12].hex()
        elif sid == 0x09 and not flags & 0x02:
            s_, f_ = struct.unpack_from(e + "iI", body, 0)
            d["ts"] = "%d.%09d" % (s_, int(f_ * 1e9 / 2**32))
        subs.append(d)
        if ln == 0 and sid not in (0x01, 0x09):
            break
        p += 4 + ln
    parts = []
    for d in subs:
        s = d["name"] + "[f=%02x]" % d["flags"]
        for k in ("dst", "ts", "rd", "wr", "sn", "first", "last", "base", "nbits", "count",
                  "gapstart", "gapbase", "fragstart", "nfrags", "fragsize", "samplesize",
                  "lastfrag", "encap", "payload_len"):
            if k in d:
                s += " %s=%s" % (k, d[k])
        if topics and d.get("wr") and (prefix, d["wr"]) in topics:
            s += " topic=%s" % topics[(prefix, d["wr"])]
        if "inlineqos" in d:
            s += " inlineqos=" + ",".join(d["inlineqos"])
        if show_pids and "plist" in d:
            s += "\n        " + "\n        ".join(d["plist"])
        parts.append(s)
    return "vendor=%s prefix=%s len=%d\n    " % (vendor, prefix, len(payload)) + "\n    ".join(parts), subs


def collect_topics(path):
    """Map (guidprefix, entityid) -> topic name from SEDP samples in the capture."""
    topics = {}
    for rec in rtps_datagrams(path):
        _, subs = dissect(rec[5])
        for d in subs:
            for s in d.get("plist", []):
                if s.startswith("ENDPOINT_GUID="):
                    g = s.split("=", 1)[1]
                    tn = [x for x in d["plist"] if x.startswith("TOPIC_NAME=")]
                    if tn:
                        topics[(g[:24], g[24:])] = tn[0].split("=", 1)[1].strip("'")
    return topics


def main(argv):
    if len(argv) >= 2 and argv[0] == "list":
        topics = collect_topics(argv[1])
        for i, (ts, src, sp, dst, dp, pl) in enumerate(rtps_datagrams(argv[1])):
            s, _ = dissect(pl, "--pids" in argv, topics)
            print("#%d t=%.6f %s:%d -> %s:%d %s" % (i, ts, src, sp, dst, dp, s))
    elif len(argv) == 4 and argv[0] == "extract":
        n = int(argv[2])
        for i, rec in enumerate(rtps_datagrams(argv[1])):
            if i == n:
                with open(argv[3], "wb") as f:
                    f.write(rec[5])
                print("wrote %s (%d bytes)" % (argv[3], len(rec[5])))
                return 0
        raise SystemExit("datagram %d not found" % n)
    elif len(argv) >= 2 and argv[0] == "dump":
        with open(argv[1], "rb") as f:
            print(dissect(f.read(), "--pids" in argv)[0])
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
