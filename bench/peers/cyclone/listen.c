/* cyclone-listen: a passive subscriber of Cyclone ddsperf's ping topic, for
 * Halyard's benchmark (bench/PEERS.md, bench/peers/cyclone/README.md).
 *
 * An RTI-perftest-style fan-out latency test has one echoing subscriber (a
 * ddsperf `pong`) and N-1 subscribers that only receive.  ddsperf has no such
 * mode, so this program provides it with Cyclone DDS itself:
 *
 *   cyclone-listen [-D SECS] [-i DOMAIN] [-u] [-T KS] listen [waitset|listener|polling]
 *
 * It creates one participant without USER_DATA (so ddsperf does not count it
 * as a ddsperf peer: no pong writer for it, no -Qminmatch credit, no pongs
 * expected from it) and one reader of DDSPerfRPingKS (DDSPerfUPingKS with -u),
 * with the QoS of ddsperf's own ping reader: default partition, RELIABLE
 * (max blocking time 10 s) or BEST_EFFORT, KEEP_LAST 1.  It writes nothing.
 *
 * Samples are counted like ddsperf's `sub` counts data: a total, and lost =
 * sequence gaps per writer (publication handle), the expected sequence number
 * being initialised by the writer's first sample.  Once per second, when
 * something arrived in that second, it prints (stdout, flushed):
 *
 *   [PID] SECS  size %u total %llu lost %llu delta %llu lost %llu rate %.2f kS/s %.2f Mb/s (%.2f kS/s %.2f Mb/s)
 *
 * Exit status: 0 at -D expiry or on SIGINT/SIGTERM (after printing the
 * current, partial interval if it has data); 2 if a DDS call fails
 * ("[PID] error: ..." on stdout); 3 on bad arguments (message on stderr).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dds/dds.h>

#include "keyedseq.h"

#define NS 1000000000LL
#define MAX_TAKE 64   /* samples per dds_take */
#define NREF 10       /* intervals in the bracketed rate */

enum mode { M_LISTENER, M_WAITSET, M_POLLING };

/* ---- configuration ---- */
static double opt_dur = 0; /* <= 0: run until signalled */
static dds_domainid_t opt_domain = 0;
static bool opt_best_effort = false;
static enum mode opt_mode = M_LISTENER;

static int mypid;

/* ---- receive statistics (shared between the receiving and main threads) ---- */
struct writer_seq {
  dds_instance_handle_t pubhandle;
  uint32_t next; /* expected sequence number of this writer's next sample */
};

static pthread_mutex_t stat_lock = PTHREAD_MUTEX_INITIALIZER;
static struct writer_seq *writers;
static size_t nwriters, capwriters;
static uint64_t tot_recv, tot_lost, tot_bytes;
static uint32_t last_size;

/* cumulative counters as they were at the last NREF ticks (ring, oldest at ref_i) */
static struct { uint64_t recv, lost, bytes; } ref[NREF];
static unsigned ref_i;

static atomic_bool termflag;

/* ---- helpers ---- */

static int64_t mono(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

/* A middleware failure: report and exit 2.  _exit, not exit: this can run on a
 * Cyclone DDS thread (listener), where running the library's exit-time
 * cleanup could deadlock. */
static void fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
  va_list ap;
  printf("[%d] error: ", mypid);
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
  _exit(2);
}

static void usage(const char *msg, const char *arg) __attribute__((noreturn));
static void usage(const char *msg, const char *arg)
{
  if (msg)
    fprintf(stderr, "cyclone-listen: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
  fprintf(stderr,
          "usage: cyclone-listen [OPTIONS] listen [waitset|listener|polling]\n"
          "options (before the mode):\n"
          "  -D SECS     run SECS seconds, then exit 0 (<= 0: until SIGINT/SIGTERM)\n"
          "  -i DOMAIN   DDS domain id (default 0)\n"
          "  -u          best effort (topic DDSPerfUPingKS; default reliable, DDSPerfRPingKS)\n"
          "  -T KS       sample type (KS is the only one)\n"
          "Receives ddsperf's pings without answering them and prints ddsperf `sub` lines.\n"
          "Sender options (-Q..., --latency-dump) are not accepted.\n");
  exit(3);
}

/* ---- argument parsing ---- */

static void parse_args(int argc, char **argv)
{
  int i = 1;
  while (i < argc && argv[i][0] == '-' && argv[i][1] != '\0') {
    const char *a = argv[i];
    /* value of -X: attached (-Xval) or the next word */
#define OPTVAL() (a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : (usage("missing value for option", a), "")))
    if (!strcmp(a, "-u")) {
      opt_best_effort = true;
    } else if (!strncmp(a, "-D", 2)) {
      const char *v = OPTVAL();
      char *end;
      errno = 0;
      double d = strtod(v, &end);
      if (end == v || *end || errno || !isfinite(d))
        usage("bad -D value", v);
      opt_dur = d;
    } else if (!strncmp(a, "-i", 2)) {
      const char *v = OPTVAL();
      char *end;
      errno = 0;
      unsigned long long u = strtoull(v, &end, 10);
      if (end == v || *end || errno || *v == '-' || *v == '+' || u > 232)
        usage("bad -i value (0..232)", v);
      opt_domain = (dds_domainid_t)u;
    } else if (!strncmp(a, "-T", 2)) {
      const char *v = OPTVAL();
      if (strcmp(v, "KS") != 0)
        usage("unsupported -T (only KS)", v);
    } else if (!strncmp(a, "-Q", 2) || !strcmp(a, "--latency-dump")) {
      usage("sender option not accepted by a passive listener", a);
    } else {
      usage("unknown option", a);
    }
#undef OPTVAL
    i++;
  }
  if (i >= argc)
    usage("no mode (expected: listen)", NULL);
  if (strcmp(argv[i], "listen") != 0)
    usage("unknown mode (only listen)", argv[i]);
  i++;
  if (i < argc) {
    if (!strcmp(argv[i], "listener"))
      opt_mode = M_LISTENER;
    else if (!strcmp(argv[i], "waitset"))
      opt_mode = M_WAITSET;
    else if (!strcmp(argv[i], "polling"))
      opt_mode = M_POLLING;
    else
      usage("bad listen argument (waitset, listener or polling)", argv[i]);
    i++;
  }
  if (i < argc)
    usage("unexpected argument", argv[i]);
}

/* ---- receiving ---- */

static void account(dds_instance_handle_t pubhandle, uint32_t seq, uint32_t size)
{
  pthread_mutex_lock(&stat_lock);
  struct writer_seq *w = NULL;
  for (size_t k = 0; k < nwriters; k++)
    if (writers[k].pubhandle == pubhandle) {
      w = &writers[k];
      break;
    }
  if (w == NULL) {
    /* first sample of this writer: it sets the expectation, nothing lost */
    if (nwriters == capwriters) {
      size_t ncap = capwriters ? 2 * capwriters : 8;
      struct writer_seq *nw = realloc(writers, ncap * sizeof(*nw));
      if (nw == NULL) {
        pthread_mutex_unlock(&stat_lock);
        fail("out of memory");
      }
      writers = nw;
      capwriters = ncap;
    }
    w = &writers[nwriters++];
    w->pubhandle = pubhandle;
  } else {
    /* gap = seq - expected (mod 2^32); a sample older than expected (only
     * possible best-effort) is not a gap.  ddsperf adds the unsigned
     * difference even then. */
    uint32_t gap = seq - w->next;
    if (gap != 0 && gap < 0x80000000u)
      tot_lost += gap;
  }
  w->next = seq + 1;
  tot_recv++;
  tot_bytes += size;
  last_size = size;
  pthread_mutex_unlock(&stat_lock);
}

/* Takes everything available; returns the number of samples taken. */
static int32_t drain(dds_entity_t rd)
{
  int32_t total = 0;
  for (;;) {
    void *buf[MAX_TAKE] = {NULL};
    dds_sample_info_t info[MAX_TAKE];
    int32_t n = dds_take(rd, buf, info, MAX_TAKE, MAX_TAKE);
    if (n < 0)
      fail("dds_take: %s", dds_strretcode(n));
    if (n == 0)
      return total;
    for (int32_t k = 0; k < n; k++) {
      if (!info[k].valid_data)
        continue;
      const KeyedSeq *s = buf[k];
      account(info[k].publication_handle, s->seq, 12u + s->baggage._length);
    }
    dds_return_t rc = dds_return_loan(rd, buf, n);
    if (rc < 0)
      fail("dds_return_loan: %s", dds_strretcode(rc));
    total += n;
    if (n < MAX_TAKE)
      return total;
  }
}

static void data_available(dds_entity_t rd, void *arg)
{
  (void)arg;
  (void)drain(rd);
}

struct thread_arg {
  dds_entity_t participant, reader, guard;
};

static void *waitset_thread(void *varg)
{
  const struct thread_arg *arg = varg;
  dds_return_t rc;
  dds_entity_t ws = dds_create_waitset(arg->participant);
  if (ws < 0)
    fail("dds_create_waitset: %s", dds_strretcode(ws));
  if ((rc = dds_set_status_mask(arg->reader, DDS_DATA_AVAILABLE_STATUS)) < 0)
    fail("dds_set_status_mask: %s", dds_strretcode(rc));
  if ((rc = dds_waitset_attach(ws, arg->reader, 1)) < 0)
    fail("dds_waitset_attach(reader): %s", dds_strretcode(rc));
  if ((rc = dds_waitset_attach(ws, arg->guard, 0)) < 0)
    fail("dds_waitset_attach(guard condition): %s", dds_strretcode(rc));
  while (!atomic_load(&termflag)) {
    /* take until empty before waiting: DATA_AVAILABLE is only raised again
     * for new data */
    if (drain(arg->reader) == 0 && !atomic_load(&termflag)) {
      if ((rc = dds_waitset_wait(ws, NULL, 0, DDS_INFINITY)) < 0)
        fail("dds_waitset_wait: %s", dds_strretcode(rc));
    }
  }
  (void)dds_delete(ws);
  return NULL;
}

static void *polling_thread(void *varg)
{
  const struct thread_arg *arg = varg;
  while (!atomic_load(&termflag)) {
    if (drain(arg->reader) == 0)
      dds_sleepfor(DDS_MSECS(1));
  }
  return NULL;
}

/* ---- output ---- */

/* One statistics line for the interval [tprev, now] if anything arrived in it.
 * Regular ticks compute the bracketed rate as ddsperf does: what arrived
 * since the counters NREF ticks ago (zero at the start) divided by NREF * dt.
 * The final, partial interval at a signal or a non-integer -D uses
 * (NREF - 1) s + dt instead, so that a short last interval does not inflate it. */
static void print_stats(int64_t t0, int64_t now, int64_t tprev, bool partial)
{
  pthread_mutex_lock(&stat_lock);
  const uint64_t recv = tot_recv, lost = tot_lost, bytes = tot_bytes;
  const uint32_t size = last_size;
  pthread_mutex_unlock(&stat_lock);

  const unsigned prev = (ref_i + NREF - 1) % NREF; /* last tick */
  const unsigned oldest = ref_i;                   /* NREF ticks ago */
  const uint64_t d_recv = recv - ref[prev].recv, d_lost = lost - ref[prev].lost;
  const uint64_t d_bytes = bytes - ref[prev].bytes;
  const uint64_t w_recv = recv - ref[oldest].recv, w_bytes = bytes - ref[oldest].bytes;
  ref[ref_i].recv = recv;
  ref[ref_i].lost = lost;
  ref[ref_i].bytes = bytes;
  ref_i = (ref_i + 1) % NREF;

  if (d_recv == 0)
    return;
  double dt = (double)(now - tprev) / 1e9;
  if (dt <= 0)
    dt = 1e-9;
  const double wdt = partial ? (NREF - 1) + dt : NREF * dt;
  printf("[%d] %.3f  size %u total %llu lost %llu delta %llu lost %llu rate %.2f kS/s %.2f Mb/s (%.2f kS/s %.2f Mb/s)\n",
         mypid, (double)(now - t0) / 1e9, (unsigned)size, (unsigned long long)recv, (unsigned long long)lost,
         (unsigned long long)d_recv, (unsigned long long)d_lost, (double)d_recv / dt / 1e3,
         (double)d_bytes * 8 / dt / 1e6, (double)w_recv / wdt / 1e3, (double)w_bytes * 8 / wdt / 1e6);
  fflush(stdout);
}

/* ---- main ---- */

int main(int argc, char **argv)
{
  mypid = (int)getpid();
  parse_args(argc, argv);

  /* SIGINT/SIGTERM are blocked in every thread (Cyclone's threads inherit the
   * mask) and collected by the main thread with sigtimedwait. */
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  int err = pthread_sigmask(SIG_BLOCK, &sigs, NULL);
  if (err != 0) {
    fprintf(stderr, "[%d] error: pthread_sigmask: %s\n", mypid, strerror(err));
    return 2;
  }

  dds_return_t rc;
  /* no QoS: in particular no USER_DATA, so ddsperf ignores this participant */
  dds_entity_t dp = dds_create_participant(opt_domain, NULL, NULL);
  if (dp < 0)
    fail("dds_create_participant(domain %u): %s", (unsigned)opt_domain, dds_strretcode(dp));

  const char *tpname = opt_best_effort ? "DDSPerfUPingKS" : "DDSPerfRPingKS";
  dds_qos_t *qos = dds_create_qos();
  if (qos == NULL)
    fail("dds_create_qos: out of memory");
  dds_qset_reliability(qos, opt_best_effort ? DDS_RELIABILITY_BEST_EFFORT : DDS_RELIABILITY_RELIABLE, DDS_SECS(10));
  dds_entity_t tp = dds_create_topic(dp, &KeyedSeq_desc, tpname, qos, NULL);
  if (tp < 0)
    fail("dds_create_topic(%s): %s", tpname, dds_strretcode(tp));
  /* ddsperf's ping reader: topic QoS + KEEP_LAST 1, in a subscriber with the
   * default (empty) partition */
  dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, 1);

  dds_listener_t *listener = NULL;
  if (opt_mode == M_LISTENER) {
    if ((listener = dds_create_listener(NULL)) == NULL)
      fail("dds_create_listener: out of memory");
    dds_lset_data_available(listener, data_available);
  }
  dds_entity_t rd = dds_create_reader(dp, tp, qos, listener);
  if (rd < 0)
    fail("dds_create_reader(%s): %s", tpname, dds_strretcode(rd));
  dds_delete_qos(qos);
  if (listener)
    dds_delete_listener(listener);

  struct thread_arg targ = {dp, rd, 0};
  pthread_t tid;
  bool have_thread = false;
  if (opt_mode != M_LISTENER) {
    if (opt_mode == M_WAITSET && (targ.guard = dds_create_guardcondition(dp)) < 0)
      fail("dds_create_guardcondition: %s", dds_strretcode(targ.guard));
    if ((err = pthread_create(&tid, NULL, opt_mode == M_WAITSET ? waitset_thread : polling_thread, &targ)) != 0)
      fail("pthread_create: %s", strerror(err));
    have_thread = true;
  }

  const int64_t t0 = mono();
  const int64_t tstop = opt_dur > 0 ? t0 + (int64_t)(opt_dur * 1e9 + 0.5) : INT64_MAX;
  int64_t tnext = t0 + NS, tprev = t0;
  for (;;) {
    int64_t now = mono();
    const int64_t wake = tnext < tstop ? tnext : tstop;
    bool signalled = false;
    if (now < wake) {
      const int64_t d = wake - now;
      const struct timespec ts = {(time_t)(d / NS), (long)(d % NS)};
      int sig = sigtimedwait(&sigs, NULL, &ts);
      if (sig > 0)
        signalled = true;
      else if (errno != EAGAIN && errno != EINTR)
        fail("sigtimedwait: %s", strerror(errno));
      now = mono();
    }
    if (signalled || (now >= tstop && now < tnext)) {
      /* the current interval ends early: print it (if it has data) and stop */
      print_stats(t0, now, tprev, true);
      break;
    }
    if (now >= tnext) {
      print_stats(t0, now, tprev, false);
      tprev = now;
      /* once per second; a very late wakeup restarts the schedule */
      tnext = (now > tnext + NS / 2) ? now + NS : tnext + NS;
    }
    if (now >= tstop)
      break;
  }

  atomic_store(&termflag, true);
  if (have_thread) {
    if (opt_mode == M_WAITSET && (rc = dds_set_guardcondition(targ.guard, true)) < 0)
      fail("dds_set_guardcondition: %s", dds_strretcode(rc));
    pthread_join(tid, NULL);
  }
  /* deleting the participant deletes the reader (waiting for a running
   * listener callback to return) */
  if ((rc = dds_delete(dp)) < 0)
    fail("dds_delete(participant): %s", dds_strretcode(rc));
  free(writers);
  return 0;
}
