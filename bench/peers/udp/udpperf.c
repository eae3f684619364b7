/* udp-perf: the raw UDP perf peer of Halyard's benchmark (bench/PEERS.md).
 *
 * The floor that DDS middleware adds to: the same ddsperf-style command line
 * and output lines as Cyclone's ddsperf and `halyard perf`, but the samples
 * go straight into UDP datagrams on 127.0.0.1.  There is no discovery: the
 * port this process listens on and the ports it sends to are given with
 * --bind PORT and --peer PORT.
 *
 *   udp-perf [OPTIONS] MODE...
 *   options: -D SECS, -u, -T KS|UK16|UK1024, -i DOMAIN, -Qminmatch:N,
 *            -Qinitwait:SECS, --latency-dump FILE, --bind PORT, --peer PORT
 *   modes:   ping [R Hz] [size S] | pong | pub [R Hz] [size S] [X%] | sub
 *            | listen
 *
 * Wire format.  Every datagram starts with a 32-byte header (host byte order:
 * both ends are on the same host):
 *
 *   u32 magic   0x50445948 ("HYDP" read as little endian bytes)
 *   u16 kind    HELLO, HELLO_ACK, PING, PONG, DATA
 *   u16 flags   bit 0: DATA sample is a ping that the sub answers;
 *               bit 1: PONG answers a DATA sample (not a PING)
 *   u32 seq     sample sequence number
 *   u32 total   sample (payload) size in bytes = the `size` of the command line
 *   u32 offset  offset of this datagram's payload within the sample
 *   u32 pid     sender's pid (a pong / HELLO_ACK carries the ponger's pid)
 *   u64 ts      send time of the sample, CLOCK_MONOTONIC ns of the pinger
 *
 * followed by payload bytes (the sample's seq in its first 4 bytes, then
 * zeros).  So a sample of `size` bytes costs size + 32 bytes of UDP payload
 * (for samples up to 65000 bytes: one datagram).  Larger samples are cut
 * into consecutive datagrams carrying at most 65000 payload bytes each
 * (application-level fragmentation, no retransmission); a sample counts as
 * received only when all its pieces arrived in order, otherwise it is lost.
 * HELLO / HELLO_ACK datagrams are a bare header.
 *
 * Behaviour (docs/ddsperf-conventions.md sections 5-7):
 *  - ping: sends seq 1,2,3,... to every peer; without a rate the next ping
 *    goes out as soon as every matched peer answered the current one (or after
 *    1 s); with R Hz every 1/R s.  One-way latency = (now - ts) / 2.
 *  - pong: echoes every ping datagram back to its sender, unchanged except
 *    kind and pid.  Every mode answers pings and HELLOs.
 *  - pub: sends seq 0,1,2,... to every peer, as fast as possible (blocking
 *    sendto; ENOBUFS/EAGAIN are retried after a short sleep and counted) or
 *    at R Hz; with X% that fraction is flagged as pings which subs echo back.
 *    "pub sent N" counts samples (one sample goes to all peers).
 *  - sub: counts complete samples and lost ones (sequence gaps per sender
 *    address, expectation initialised by the first sample).
 *  - listen (not in ddsperf): counts pings as sub counts data and never
 *    answers them, nor HELLOs, like a DDS listener that carries no DDSPerf
 *    user data: the passive subscribers of an RTI-perftest-style fan-out
 *    latency test.  It cannot be combined with another mode.
 *  - stats once per second from t = 1.000 (t = 0 is the start of the
 *    measurement: after the -Qminmatch wait), exit 0 at -D expiry.
 *
 * Single threaded: poll + non-blocking reads, so the per-second lines are on
 * time; no allocation per sample.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAGIC 0x50445948u
enum { K_HELLO = 1, K_HELLO_ACK = 2, K_PING = 3, K_PONG = 4, K_DATA = 5 };
#define F_PING 1u     /* DATA: answer it with a PONG */
#define F_FROMDATA 2u /* PONG: answers a DATA sample */

struct hdr {
  uint32_t magic;
  uint16_t kind;
  uint16_t flags;
  uint32_t seq;
  uint32_t total;
  uint32_t offset;
  uint32_t pid;
  uint64_t ts;
};
_Static_assert(sizeof(struct hdr) == 32, "header must be 32 bytes");
#define HDR ((size_t)sizeof(struct hdr))

#define FRAG 65000u                 /* max payload bytes per datagram */
#define MAX_SAMPLE (1024u << 20)    /* 1 GiB: sanity bound on `total` */
#define MAX_PEERS 32
#define MAX_SENDERS 64
#define NRAW 20000
#define DUMP_CAP 5000000u
#define NS 1000000000LL

/* ---- configuration ---- */
static double opt_dur = 0;            /* -D; <= 0 forever */
static unsigned opt_minmatch = 0;
static double opt_initwait = -1;      /* < 0: wait forever */
static const char *opt_dump = NULL;
static int opt_bind = -1;
static bool m_ping, m_pong, m_pub, m_sub, m_listen;
static double ping_rate = -1;         /* < 0: as fast as possible, 0: never */
static double pub_rate = -1;          /* < 0: as fast as possible */
static double pub_pct = 0;
static uint32_t sample_size = 0;      /* 0: default by -T */

/* ---- state ---- */
struct reasm {
  bool active;
  uint32_t seq, total, next;
};

struct lat {
  uint64_t cnt, sum, min, max;
  uint32_t nraw;
  int64_t raw[NRAW];
};

struct peer {
  struct sockaddr_in addr;
  bool matched;
  uint32_t pid;
  bool answered; /* answered cur_ping_seq */
  struct reasm r_ping, r_data;
  struct lat lat;
};

struct sender {
  struct sockaddr_in addr;
  bool have_exp;
  uint32_t exp;
  struct reasm r;
};

static int sock = -1;
static int mypid;
static char hostname[256];
static int64_t t0;
static struct peer peers[MAX_PEERS];
static unsigned npeers;
static struct sender senders[MAX_SENDERS];
static unsigned nsenders;

static uint32_t cur_ping_seq;
static int64_t ping_sent_at;

/* sub counters */
static uint64_t sub_total, sub_lost, sub_delta, sub_dlost, sub_dbytes;
static uint32_t sub_last_size;
static uint64_t ring_n[10], ring_bytes[10];
static unsigned ring_i;

/* misc counters */
static uint64_t n_malformed, n_retry, n_senderr, n_unknown, n_untracked;
static volatile sig_atomic_t stop_flag;

/* latency dump */
static int64_t *dump_t;
static int64_t *dump_v;
static uint32_t dump_n;

static _Alignas(8) unsigned char rbuf[65536 + 64];
static _Alignas(8) unsigned char sbuf[HDR + FRAG];

static int64_t mono(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

static double since(int64_t t) { return (double)(t - t0) / 1e9; }

static void usage(const char *msg)
{
  if (msg)
    fprintf(stderr, "udp-perf: %s\n", msg);
  fprintf(stderr,
          "usage: udp-perf [OPTIONS] MODE...\n"
          "options (before the modes):\n"
          "  --bind PORT          UDP port to listen on (127.0.0.1); required for pong/sub/listen\n"
          "  --peer PORT          port of a pong/sub/listen process to send to (repeatable);\n"
          "                       at least one required for ping/pub\n"
          "  -D SECS              run SECS seconds, then exit 0 (<= 0: forever)\n"
          "  -u                   best effort (accepted; raw UDP always is)\n"
          "  -T KS|UK16|UK1024    only sets the default size (12, 16, 1024)\n"
          "  -i DOMAIN            ignored\n"
          "  -Qminmatch:N         ping/pub: wait for N peers to answer HELLO ...\n"
          "  -Qinitwait:SECS      ... at most SECS (then exit 1)\n"
          "  --latency-dump FILE  at exit write `SECONDS LATENCY_NS` per latency sample\n"
          "modes:\n"
          "  ping [R Hz] [size S]   pong   pub [R Hz] [size S] [X%%]   sub\n"
          "  listen (count pings, never answer; not with other modes)\n"
          "  rates: 100Hz, 1kHz, inf; sizes: 0 (=12), 12.., suffix k/M (x1024, x1048576)\n");
  exit(3);
}

/* ---- argument parsing ---- */

static bool parse_double(const char *s, double *out)
{
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end || errno || !isfinite(v))
    return false;
  *out = v;
  return true;
}

static bool parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
  char *end;
  if (!*s || *s == '-' || *s == '+')
    return false;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s || *end || errno || v > max)
    return false;
  *out = v;
  return true;
}

static int parse_port(const char *s)
{
  unsigned long long v;
  if (!s || !parse_uint(s, 65535, &v) || v == 0)
    usage("bad port");
  return (int)v;
}

static bool is_mode(const char *s)
{
  return !strcmp(s, "ping") || !strcmp(s, "pong") || !strcmp(s, "pub") || !strcmp(s, "sub") ||
         !strcmp(s, "listen");
}

/* "100Hz", "1kHz", "100" (Hz), "inf", "infHz"; a following lone "Hz"/"kHz"
   word is taken as the unit.  Returns the number of words consumed (0: not a
   rate), *rate < 0 for inf. */
static int parse_rate(char **w, double *rate)
{
  const char *s = w[0];
  char *end;
  if (!strcmp(s, "inf") || !strcmp(s, "infHz")) {
    *rate = -1;
    return 1;
  }
  if (!((*s >= '0' && *s <= '9') || *s == '.'))
    return 0;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || errno || !isfinite(v) || v < 0)
    return 0;
  int used = 1;
  const char *unit = end;
  if (!*unit && w[1] && (!strcmp(w[1], "Hz") || !strcmp(w[1], "kHz"))) {
    unit = w[1];
    used = 2;
  }
  if (!strcmp(unit, "kHz"))
    v *= 1e3;
  else if (*unit && strcmp(unit, "Hz"))
    return 0;
  *rate = v;
  return used;
}

static uint32_t parse_size(const char *s)
{
  char *end;
  if (!(*s >= '0' && *s <= '9'))
    usage("bad size");
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno)
    usage("bad size");
  while (*end == ' ')
    end++;
  unsigned long long mul = 1;
  if (!*end || !strcmp(end, "B"))
    mul = 1;
  else if (!strcmp(end, "k") || !strcmp(end, "kB") || !strcmp(end, "KiB"))
    mul = 1024;
  else if (!strcmp(end, "M") || !strcmp(end, "MB") || !strcmp(end, "MiB"))
    mul = 1048576;
  else
    usage("bad size suffix");
  if (v > MAX_SAMPLE / mul)
    usage("size too large (max 1 GiB)");
  v *= mul;
  if (v == 0)
    v = 12;
  else if (v < 12)
    usage("size must be 0 or >= 12");
  return (uint32_t)v;
}

static void parse_q(const char *q)
{
  unsigned long long u;
  double d;
  if (!strncmp(q, "minmatch:", 9) && parse_uint(q + 9, MAX_PEERS, &u))
    opt_minmatch = (unsigned)u;
  else if (!strncmp(q, "initwait:", 9) && parse_double(q + 9, &d))
    opt_initwait = d;
  else
    usage("bad -Q argument");
}

static void add_peer(int port)
{
  if (npeers == MAX_PEERS)
    usage("too many --peer");
  struct peer *p = &peers[npeers++];
  p->addr.sin_family = AF_INET;
  p->addr.sin_port = htons((uint16_t)port);
  p->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

static void parse_args(int argc, char **argv)
{
  int i = 1;
  uint32_t def_size = 12;
  /* options, before the modes */
  while (i < argc && argv[i][0] == '-') {
    const char *a = argv[i];
    const char *val;
#define OPTVAL(short_) (a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : (usage("missing option value"), "")))
    if (!strcmp(a, "--bind")) {
      opt_bind = parse_port(i + 1 < argc ? argv[++i] : NULL);
    } else if (!strcmp(a, "--peer")) {
      add_peer(parse_port(i + 1 < argc ? argv[++i] : NULL));
    } else if (!strcmp(a, "--latency-dump")) {
      if (i + 1 >= argc)
        usage("missing --latency-dump file");
      opt_dump = argv[++i];
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(NULL);
    } else if (!strcmp(a, "-u")) {
      /* best effort: always */
    } else if (!strncmp(a, "-D", 2)) {
      val = OPTVAL("D");
      if (!parse_double(val, &opt_dur))
        usage("bad -D");
    } else if (!strncmp(a, "-T", 2)) {
      val = OPTVAL("T");
      if (!strcmp(val, "KS"))
        def_size = 12;
      else if (!strcmp(val, "UK16"))
        def_size = 16;
      else if (!strcmp(val, "UK1024"))
        def_size = 1024;
      else
        usage("bad -T");
    } else if (!strncmp(a, "-i", 2)) {
      val = OPTVAL("i");
      unsigned long long u;
      if (!parse_uint(val, 232, &u))
        usage("bad -i");
    } else if (!strncmp(a, "-Q", 2)) {
      val = OPTVAL("Q");
      parse_q(val);
    } else {
      usage("unknown option");
    }
#undef OPTVAL
    i++;
  }
  if (i >= argc)
    usage("no mode");
  /* modes */
  while (i < argc) {
    const char *m = argv[i++];
    if (!strcmp(m, "pong")) {
      m_pong = true;
    } else if (!strcmp(m, "listen")) {
      m_listen = true;
    } else if (!strcmp(m, "sub")) {
      m_sub = true;
    } else if (!strcmp(m, "ping") || !strcmp(m, "pub")) {
      bool ping = !strcmp(m, "ping");
      double rate = -1;
      bool have_rate = false;
      if (ping)
        m_ping = true;
      else
        m_pub = true;
      while (i < argc && !is_mode(argv[i])) {
        const char *w = argv[i];
        int n;
        if (!strcmp(w, "size")) {
          if (i + 1 >= argc)
            usage("missing size");
          sample_size = parse_size(argv[i + 1]);
          i += 2;
        } else if (!ping && !strcmp(w, "burst")) {
          unsigned long long u;
          if (i + 1 >= argc || !parse_uint(argv[i + 1], 1000000, &u))
            usage("bad burst");
          i += 2; /* accepted, ignored */
        } else if (!strcmp(w, "waitset") || !strcmp(w, "listener")) {
          i++;
        } else if (!ping && w[0] && w[strlen(w) - 1] == '%') {
          char tmp[64];
          size_t l = strlen(w) - 1;
          if (l == 0 || l >= sizeof tmp)
            usage("bad X%");
          memcpy(tmp, w, l);
          tmp[l] = 0;
          if (!parse_double(tmp, &pub_pct) || pub_pct < 0 || pub_pct > 100)
            usage("bad X%");
          i++;
        } else if (!have_rate && (n = parse_rate(&argv[i], &rate)) > 0) {
          have_rate = true;
          i += n;
        } else {
          usage("bad ping/pub argument");
        }
      }
      if (ping)
        ping_rate = rate;
      else
        pub_rate = rate;
    } else if (!strcmp(m, "help")) {
      usage(NULL);
    } else {
      usage("unknown mode");
    }
  }
  if (sample_size == 0)
    sample_size = def_size;
  if ((m_ping || m_pub) && npeers == 0)
    usage("ping/pub need at least one --peer");
  if ((m_pong || m_sub || m_listen) && opt_bind < 0)
    usage("pong/sub/listen need --bind");
  if (m_listen && (m_ping || m_pong || m_pub || m_sub))
    usage("listen cannot be combined with other modes");
  if (m_pub && pub_rate == 0)
    usage("pub rate 0");
}

/* ---- sending ---- */

static void on_signal(int sig)
{
  (void)sig;
  stop_flag = 1;
}

static void xsend(const void *buf, size_t len, const struct sockaddr_in *to)
{
  int64_t give_up = 0;
  for (;;) {
    ssize_t r = sendto(sock, buf, len, 0, (const struct sockaddr *)to, sizeof *to);
    if (r >= 0)
      return;
    if (errno == EINTR) {
      if (stop_flag)
        return;
      continue;
    }
    if (errno == ENOBUFS || errno == EAGAIN || errno == EWOULDBLOCK) {
      n_retry++;
      int64_t now = mono();
      if (give_up == 0)
        give_up = now + NS / 10;
      else if (now > give_up || stop_flag) {
        n_senderr++;
        return;
      }
      struct timespec d = {0, 20000};
      nanosleep(&d, NULL);
      continue;
    }
    if (errno != ECONNREFUSED)
      n_senderr++;
    return;
  }
}

static void put_hdr(void *buf, uint16_t kind, uint16_t flags, uint32_t seq, uint32_t total,
                    uint32_t off, uint64_t ts)
{
  struct hdr h = {MAGIC, kind, flags, seq, total, off, (uint32_t)mypid, ts};
  memcpy(buf, &h, HDR);
}

/* send one sample (all its datagrams) to every peer */
static void send_sample(uint16_t kind, uint16_t flags, uint32_t seq, uint32_t size)
{
  uint64_t ts = (uint64_t)mono();
  for (unsigned p = 0; p < npeers; p++) {
    for (uint32_t off = 0; off < size; off += FRAG) {
      uint32_t len = size - off < FRAG ? size - off : FRAG;
      put_hdr(sbuf, kind, flags, seq, size, off, ts);
      if (off == 0)
        memcpy(sbuf + HDR, &seq, 4); /* size >= 12 */
      else
        memset(sbuf + HDR, 0, 4);
      xsend(sbuf, HDR + len, &peers[p].addr);
    }
  }
}

static void send_hello(struct peer *p)
{
  unsigned char b[HDR];
  put_hdr(b, K_HELLO, 0, 0, 0, 0, 0);
  xsend(b, HDR, &p->addr);
}

static void send_ping(void)
{
  cur_ping_seq++;
  for (unsigned p = 0; p < npeers; p++)
    peers[p].answered = false;
  ping_sent_at = mono();
  send_sample(K_PING, 0, cur_ping_seq, sample_size);
}

/* ---- receiving ---- */

/* Returns true when the datagram completes a sample. */
static bool reasm_add(struct reasm *r, const struct hdr *h, uint32_t len)
{
  if (h->offset == 0) {
    r->active = true;
    r->seq = h->seq;
    r->total = h->total;
    r->next = len;
  } else if (r->active && r->seq == h->seq && r->total == h->total && r->next == h->offset) {
    r->next += len;
  } else {
    r->active = false;
    return false;
  }
  if (r->next == r->total) {
    r->active = false;
    return true;
  }
  return false;
}

static struct peer *find_peer(const struct sockaddr_in *a)
{
  for (unsigned i = 0; i < npeers; i++)
    if (peers[i].addr.sin_port == a->sin_port && peers[i].addr.sin_addr.s_addr == a->sin_addr.s_addr)
      return &peers[i];
  return NULL;
}

static struct sender *find_sender(const struct sockaddr_in *a)
{
  static unsigned last;
  if (last < nsenders && senders[last].addr.sin_port == a->sin_port &&
      senders[last].addr.sin_addr.s_addr == a->sin_addr.s_addr)
    return &senders[last];
  for (unsigned i = 0; i < nsenders; i++)
    if (senders[i].addr.sin_port == a->sin_port && senders[i].addr.sin_addr.s_addr == a->sin_addr.s_addr)
      return &senders[last = i];
  if (nsenders == MAX_SENDERS)
    return NULL;
  struct sender *s = &senders[nsenders];
  memset(s, 0, sizeof *s);
  s->addr = *a;
  last = nsenders++;
  return s;
}

static void record_latency(struct peer *p, int64_t now, int64_t lat)
{
  struct lat *l = &p->lat;
  if (lat < 0)
    lat = 0;
  if (l->cnt == 0 || (uint64_t)lat < l->min)
    l->min = (uint64_t)lat;
  if (l->cnt == 0 || (uint64_t)lat > l->max)
    l->max = (uint64_t)lat;
  l->cnt++;
  l->sum += (uint64_t)lat;
  if (l->nraw < NRAW)
    l->raw[l->nraw++] = lat;
  if (dump_t && dump_n < DUMP_CAP) {
    dump_t[dump_n] = now - t0;
    dump_v[dump_n] = lat;
    dump_n++;
  }
}

/* sub (data) and listen (pings): count a sample once all its datagrams arrived */
static void count_sample(const struct sockaddr_in *from, const struct hdr *h, uint32_t len)
{
  struct sender *s = find_sender(from);
  if (!s) {
    n_untracked++;
    return;
  }
  if (!reasm_add(&s->r, h, len))
    return;
  /* the first sample sets the expectation; a step back (a restarted
     publisher on the same port) resets it without counting a loss */
  if (s->have_exp && (int32_t)(h->seq - s->exp) > 0) {
    uint32_t gap = h->seq - s->exp;
    sub_lost += gap;
    sub_dlost += gap;
  }
  s->have_exp = true;
  s->exp = h->seq + 1;
  sub_total++;
  sub_delta++;
  sub_dbytes += h->total;
  sub_last_size = h->total;
}

static void handle(size_t n, const struct sockaddr_in *from)
{
  struct hdr h;
  if (n < HDR) {
    n_malformed++;
    return;
  }
  memcpy(&h, rbuf, HDR);
  if (h.magic != MAGIC) {
    n_malformed++;
    return;
  }
  if (h.kind == K_HELLO || h.kind == K_HELLO_ACK) {
    if (n != HDR) {
      n_malformed++;
      return;
    }
    if (h.kind == K_HELLO) {
      if (m_listen)
        return; /* not a ddsperf-style peer: pingers must not count it */
      unsigned char b[HDR];
      put_hdr(b, K_HELLO_ACK, 0, 0, 0, 0, 0);
      xsend(b, HDR, from);
    } else {
      struct peer *p = find_peer(from);
      if (p) {
        p->matched = true;
        p->pid = h.pid;
      } else {
        n_unknown++;
      }
    }
    return;
  }
  if (h.kind < K_PING || h.kind > K_DATA) {
    n_malformed++;
    return;
  }
  uint32_t len = (uint32_t)(n - HDR);
  if (len == 0 || len > FRAG || h.total == 0 || h.total > MAX_SAMPLE || h.offset >= h.total ||
      len > h.total - h.offset || (h.offset % FRAG) != 0 || (h.offset + len < h.total && len != FRAG)) {
    n_malformed++;
    return;
  }
  switch (h.kind) {
  case K_PING: {
    if (m_listen) {
      count_sample(from, &h, len);
      break;
    }
    /* every other mode answers pings: echo unchanged but for kind and pid */
    put_hdr(rbuf, K_PONG, 0, h.seq, h.total, h.offset, h.ts);
    xsend(rbuf, n, from);
    break;
  }
  case K_DATA: {
    if (!m_sub)
      break;
    if (h.flags & F_PING) {
      put_hdr(rbuf, K_PONG, F_FROMDATA, h.seq, h.total, h.offset, h.ts);
      xsend(rbuf, n, from);
    }
    count_sample(from, &h, len);
    break;
  }
  case K_PONG: {
    if (!m_ping && !m_pub)
      break;
    struct peer *p = find_peer(from);
    if (!p) {
      n_unknown++;
      break;
    }
    p->matched = true;
    p->pid = h.pid;
    bool fromdata = (h.flags & F_FROMDATA) != 0;
    if (!reasm_add(fromdata ? &p->r_data : &p->r_ping, &h, len))
      break;
    int64_t now = mono();
    record_latency(p, now, (now - (int64_t)h.ts) / 2);
    if (!fromdata && m_ping && ping_rate < 0 && h.seq == cur_ping_seq) {
      p->answered = true;
      bool all = true;
      for (unsigned i = 0; i < npeers; i++)
        if (peers[i].matched && !peers[i].answered)
          all = false;
      if (all)
        send_ping();
    }
    break;
  }
  }
}

/* read what is queued, at most `max` datagrams */
static void drain(unsigned max)
{
  while (max--) {
    struct sockaddr_in from;
    socklen_t fl = sizeof from;
    ssize_t n = recvfrom(sock, rbuf, sizeof rbuf, MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *)&from, &fl);
    if (n < 0) {
      if (errno == EINTR && !stop_flag)
        continue;
      return; /* EAGAIN, or ECONNREFUSED from an ICMP: nothing to read now */
    }
    if ((size_t)n > sizeof rbuf || fl != sizeof from || from.sin_family != AF_INET) {
      n_malformed++;
      continue;
    }
    handle((size_t)n, &from);
  }
}

static void wait_readable(int64_t until)
{
  int64_t d = until - mono();
  if (d <= 0)
    return;
  struct timespec ts = {(time_t)(d / NS), (long)(d % NS)};
  struct pollfd pfd = {sock, POLLIN, 0};
  (void)ppoll(&pfd, 1, &ts, NULL);
}

/* ---- output ---- */

static int cmp_i64(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static void print_stats(int64_t now, double dt)
{
  double secs = since(now);
  for (unsigned i = 0; i < npeers; i++) {
    struct lat *l = &peers[i].lat;
    if (l->cnt == 0)
      continue;
    uint32_t n = l->nraw;
    qsort(l->raw, n, sizeof l->raw[0], cmp_i64);
    printf("[%d] %.3f  %s:%u size %u mean %.3fus min %.3fus 50%% %.3fus 90%% %.3fus 99%% %.3fus max %.3fus cnt %llu\n",
           mypid, secs, hostname, (unsigned)peers[i].pid, sample_size, (double)l->sum / (double)l->cnt / 1e3,
           (double)l->min / 1e3, (double)l->raw[n - (n + 1) / 2] / 1e3, (double)l->raw[n - (n + 9) / 10] / 1e3,
           (double)l->raw[n - (n + 99) / 100] / 1e3, (double)l->max / 1e3, (unsigned long long)l->cnt);
    l->cnt = l->sum = l->min = l->max = 0;
    l->nraw = 0;
  }
  if (m_sub || m_listen) {
    ring_n[ring_i] = sub_delta;
    ring_bytes[ring_i] = sub_dbytes;
    ring_i = (ring_i + 1) % 10;
    if (sub_delta > 0) {
      uint64_t sn = 0, sb = 0;
      for (unsigned k = 0; k < 10; k++) {
        sn += ring_n[k];
        sb += ring_bytes[k];
      }
      if (dt <= 0)
        dt = 1;
      printf("[%d] %.3f  size %u total %llu lost %llu delta %llu lost %llu rate %.2f kS/s %.2f Mb/s (%.2f kS/s %.2f Mb/s)\n",
             mypid, secs, sub_last_size, (unsigned long long)sub_total, (unsigned long long)sub_lost,
             (unsigned long long)sub_delta, (unsigned long long)sub_dlost, (double)sub_delta / dt / 1e3,
             (double)sub_dbytes * 8 / dt / 1e6, (double)sn / (10 * dt) / 1e3, (double)sb * 8 / (10 * dt) / 1e6);
    }
    sub_delta = sub_dlost = sub_dbytes = 0;
  }
  fflush(stdout);
}

static void write_dump(void)
{
  if (!opt_dump)
    return;
  FILE *f = fopen(opt_dump, "w");
  if (!f) {
    fprintf(stderr, "[%d] error: cannot write %s: %s\n", mypid, opt_dump, strerror(errno));
    return;
  }
  static char buf[1 << 16];
  setvbuf(f, buf, _IOFBF, sizeof buf);
  for (uint32_t i = 0; i < dump_n; i++)
    fprintf(f, "%.9f %lld\n", (double)dump_t[i] / 1e9, (long long)dump_v[i]);
  if (fclose(f) != 0)
    fprintf(stderr, "[%d] error: writing %s failed\n", mypid, opt_dump);
}

/* ---- setup ---- */

static void setup_socket(void)
{
  sock = socket(AF_INET, SOCK_DGRAM, 0);
  if (sock < 0) {
    fprintf(stderr, "[%d] error: socket: %s\n", mypid, strerror(errno));
    exit(2);
  }
  int big = 8 << 20;
  if (setsockopt(sock, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big) != 0)
    (void)setsockopt(sock, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  if (setsockopt(sock, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof big) != 0)
    (void)setsockopt(sock, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons((uint16_t)(opt_bind > 0 ? opt_bind : 0));
  if (bind(sock, (struct sockaddr *)&a, sizeof a) != 0) {
    fprintf(stderr, "[%d] error: bind 127.0.0.1:%d: %s\n", mypid, opt_bind > 0 ? opt_bind : 0, strerror(errno));
    exit(2);
  }
}

/* -Qminmatch: HELLO every 10 ms until N peers acknowledged */
static void wait_minmatch(void)
{
  if (opt_minmatch == 0 || !(m_ping || m_pub))
    return;
  int64_t start = mono();
  int64_t limit = opt_initwait >= 0 ? start + (int64_t)(opt_initwait * 1e9) : INT64_MAX;
  for (;;) {
    unsigned matched = 0;
    for (unsigned i = 0; i < npeers; i++)
      matched += peers[i].matched;
    if (matched >= opt_minmatch)
      return;
    int64_t now = mono();
    if (now >= limit || stop_flag) {
      printf("[%d] error: too few matching participants (%u)\n", mypid, matched);
      fflush(stdout);
      exit(1);
    }
    for (unsigned i = 0; i < npeers; i++)
      if (!peers[i].matched)
        send_hello(&peers[i]);
    int64_t until = now + NS / 100;
    if (until > limit)
      until = limit;
    while (mono() < until && !stop_flag) {
      wait_readable(until);
      drain(1024);
    }
  }
}

static bool is_ping_sample(uint64_t i)
{
  if (pub_pct <= 0)
    return false;
  if (pub_pct >= 100)
    return true;
  return floor((double)(i + 1) * pub_pct / 100.0) > floor((double)i * pub_pct / 100.0);
}

int main(int argc, char **argv)
{
  mypid = (int)getpid();
  setvbuf(stdout, NULL, _IOLBF, 0);
  parse_args(argc, argv);
  if (gethostname(hostname, sizeof hostname - 1) != 0)
    strcpy(hostname, "localhost");
  hostname[sizeof hostname - 1] = 0;

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);

  if (opt_dump && (m_ping || m_pub)) {
    dump_t = malloc(sizeof *dump_t * DUMP_CAP);
    dump_v = malloc(sizeof *dump_v * DUMP_CAP);
    if (!dump_t || !dump_v) {
      fprintf(stderr, "[%d] error: out of memory for --latency-dump\n", mypid);
      return 2;
    }
  }

  setup_socket();
  t0 = mono(); /* for the error line's sake; reset below */
  wait_minmatch();

  t0 = mono();
  const int64_t deadline = opt_dur > 0 ? t0 + (int64_t)(opt_dur * 1e9) : INT64_MAX;
  int64_t next_stats = t0 + NS, last_stats = t0;
  const int64_t ping_intv = ping_rate > 0 ? (int64_t)llround(1e9 / ping_rate) : 0;
  int64_t next_ping = t0;
  const double pub_intv = pub_rate > 0 ? 1e9 / pub_rate : 0;
  uint64_t pub_seq = 0;
  const unsigned frags = (sample_size + FRAG - 1) / FRAG;
  /* full-speed pub: samples sent between two looks at the socket and clock */
  unsigned pub_batch = pub_pct > 0 ? 1 : 64 / (frags * npeers + 1);
  if (pub_batch == 0)
    pub_batch = 1;

  if (m_ping && ping_rate < 0)
    send_ping();

  while (!stop_flag) {
    int64_t now = mono();
    if (now >= next_stats) {
      print_stats(now, (double)(now - last_stats) / 1e9);
      last_stats = now;
      next_stats += NS;
      if (now > next_stats + NS / 2)
        next_stats = now + NS;
    }
    if (now >= deadline)
      break;
    int64_t wake = next_stats < deadline ? next_stats : deadline;

    if (m_ping && ping_rate != 0) {
      if (ping_rate > 0) {
        if (now >= next_ping) {
          send_ping();
          next_ping += ping_intv;
          if (next_ping < now)
            next_ping = now + ping_intv;
        }
        if (next_ping < wake)
          wake = next_ping;
      } else {
        if (now >= ping_sent_at + NS)
          send_ping(); /* timed out */
        if (ping_sent_at + NS < wake)
          wake = ping_sent_at + NS;
      }
    }

    if (m_pub) {
      if (pub_rate > 0) {
        unsigned burst = 0;
        while (burst < 1000 && !stop_flag && t0 + (int64_t)((double)pub_seq * pub_intv) <= now) {
          send_sample(K_DATA, is_ping_sample(pub_seq) ? F_PING : 0, (uint32_t)pub_seq, sample_size);
          pub_seq++;
          burst++;
        }
        int64_t due = t0 + (int64_t)((double)pub_seq * pub_intv);
        if (due < wake)
          wake = due;
      } else {
        for (unsigned b = 0; b < pub_batch && !stop_flag; b++) {
          send_sample(K_DATA, is_ping_sample(pub_seq) ? F_PING : 0, (uint32_t)pub_seq, sample_size);
          pub_seq++;
        }
        wake = now; /* don't sleep */
      }
    }

    drain(256);
    if (wake > mono())
      wait_readable(wake);
  }

  int64_t end = mono();
  if (m_pub) {
    printf("[%d] %.3f  pub sent %llu\n", mypid, since(end), (unsigned long long)pub_seq);
    fflush(stdout);
  }
  write_dump();
  if (n_malformed || n_retry || n_senderr || n_unknown || n_untracked)
    fprintf(stderr, "[%d] udp-perf: malformed %llu unknown-sender %llu untracked %llu send-retries %llu send-errors %llu\n",
            mypid, (unsigned long long)n_malformed, (unsigned long long)n_unknown, (unsigned long long)n_untracked,
            (unsigned long long)n_retry, (unsigned long long)n_senderr);
  close(sock);
  return 0;
}
