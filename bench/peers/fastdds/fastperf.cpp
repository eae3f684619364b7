// fastdds-perf: a Fast DDS 2.9 peer for the Halyard benchmark that behaves like
// Cyclone DDS's ddsperf for the subset of modes and options in bench/PEERS.md
// (ping / pong / pub / sub, -D -u -T -i -Qminmatch -Qinitwait --latency-dump;
// extensions: listen, --durability, --persistence-db, --persistence-guid)
// and prints the same ddsperf-format lines.  The "listen" extension (like RTI
// perftest's non-echoing subscribers): receive the pings of other processes,
// count them like "sub" counts data samples and never answer; a listener has
// no DDSPerf USER_DATA, so pingers neither expect pongs from it nor count it
// for -Qminmatch.
//
// Design notes (see also README.md in this directory):
// * UDPv4 only, loopback only (interface whitelist 127.0.0.1), no shared
//   memory, no data-sharing.
// * Topics DDSPerf{R|U}{Data|Ping|Pong}{KS|UK16|UK1024}, types KeyedSeq /
//   Unkeyed16 / Unkeyed1024 (perf_types.hpp), XCDR1 little endian.
// * Like ddsperf, every pong reader sits in a subscriber whose partition is
//   the process's own participant GUID string, and pongs are written by one
//   writer per discovered ddsperf-style participant in a publisher whose
//   partition is that participant's GUID string: a pinger only receives the
//   answers to its own pings.
// * Like ddsperf, the LSB of the source timestamp marks a sample that wants
//   an answer (pings: |1; data samples of "pub X%": |1); pongs carry the
//   ping's timestamp |1 (answer to a ping) or -1 (answer to a data sample).
//   Latency is measured with CLOCK_MONOTONIC in the pinging process only: the
//   send time of every ping is kept in a table indexed by sequence number;
//   one-way latency = (receive time - send time) / 2.
// * Participant USER_DATA is "DDSPerf:<0|1>:<pid>:<hostname>" as in ddsperf
//   (empty for listen); ping lines are labelled HOST:PID of the answering
//   participant.

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <getopt.h>
#include <unistd.h>

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/log/Log.hpp>
#include <fastdds/dds/domain/DomainParticipantListener.hpp>
#include <fastdds/dds/domain/qos/DomainParticipantQos.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/DataWriterListener.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/publisher/qos/DataWriterQos.hpp>
#include <fastdds/dds/publisher/qos/PublisherQos.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/DataReaderListener.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/subscriber/qos/DataReaderQos.hpp>
#include <fastdds/dds/subscriber/qos/SubscriberQos.hpp>
#include <fastdds/dds/topic/Topic.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/participant/ParticipantDiscoveryInfo.h>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>

#include "perf_types.hpp"

using namespace eprosima::fastdds::dds;
namespace frtps = eprosima::fastrtps::rtps;
using halyard_bench::PerfKind;
using halyard_bench::PerfSample;
using halyard_bench::PerfType;

// ---------------------------------------------------------------------------
// Clocks, printing

static int64_t mono_ns()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

static int64_t real_ns()
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

static eprosima::fastrtps::Time_t ns_to_time(
        int64_t ns)
{
    eprosima::fastrtps::Time_t t;
    t.seconds = static_cast<int32_t>(ns / 1000000000);
    t.nanosec = static_cast<uint32_t>(ns % 1000000000);
    return t;
}

static int64_t time_to_ns(
        const frtps::Time_t& t)
{
    return static_cast<int64_t>(t.seconds()) * 1000000000 + t.nanosec();
}

static const int64_t NEVER = INT64_MAX;
static int g_pid = 0;
static int64_t g_tstart = 0; // monotonic reference for the "[PID] SECS " prefix
static std::mutex g_print_mtx;

static void out(
        const char* fmt,
        ...) __attribute__((format(printf, 1, 2)));

static void out(
        const char* fmt,
        ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    std::lock_guard<std::mutex> lk(g_print_mtx);
    fputs(buf, stdout);
    fflush(stdout);
}

static double secs_since_start(
        int64_t t)
{
    return static_cast<double>(t - g_tstart) / 1e9;
}

// ---------------------------------------------------------------------------
// Options

struct Options
{
    double dur = HUGE_VAL;
    bool reliable = true;
    PerfKind topic = PerfKind::KS;
    int domain = 0;
    uint32_t minmatch = 0;
    double initwait = 0;
    std::string latency_dump;
    // extensions for durability tests (bench/PEERS.md)
    DurabilityQosPolicyKind durability = VOLATILE_DURABILITY_QOS;
    std::string persistence_db; // SQLite file for TRANSIENT/PERSISTENT ("" = :memory:)
    std::string persistence_guid; // data writer's dds.persistence.guid ("" = derived)

    bool mode_ping = false;
    bool mode_pong = false;
    bool mode_pub = false;
    bool mode_sub = false;
    bool mode_listen = false; // extension; never combined with another mode

    int64_t ping_intv = NEVER; // 0: as fast as possible; NEVER: no pings
    double pub_rate = 0; // HUGE_VAL: as fast as possible; 0: no publishing
    uint32_t burst = 1;
    double ping_frac = 0; // fraction of data samples that are pings (0..1)
    uint32_t size = 0; // ddsperf "size" (0 = minimal)
    uint32_t baggage = 0; // KS baggage bytes
};

static Options opt;

[[noreturn]] static void usage(
        const char* argv0,
        const char* msg = nullptr)
{
    if (msg)
    {
        fprintf(stderr, "%s: %s\n", argv0, msg);
    }
    fprintf(stderr,
            "usage: %s [OPTIONS] MODE...\n"
            "\n"
            "OPTIONS:\n"
            "  -D SECS               run SECS seconds after start-up, then exit\n"
            "  -u                    best effort (default: reliable, KEEP_ALL, max_samples 10000)\n"
            "  -T KS|UK16|UK1024     topic type (default KS)\n"
            "  -i DOMAIN             DDS domain id (default 0)\n"
            "  -Qminmatch:N          do not start ping/pub until N remote peers matched\n"
            "  -Qinitwait:SECS       wait at most SECS for them (exit 1 otherwise)\n"
            "  --latency-dump FILE   at exit write every one-way latency sample:\n"
            "                        SECONDS_SINCE_START LATENCY_NS\n"
            "  --durability volatile|transient-local|transient|persistent\n"
            "                        DURABILITY of every reader and writer (default volatile)\n"
            "  --persistence-db PATH transient/persistent: Fast DDS SQLite persistence in PATH\n"
            "                        (default: an in-memory database per endpoint)\n"
            "  --persistence-guid G  transient/persistent: the data writer's dds.persistence.guid,\n"
            "                        Fast DDS syntax xx.xx.xx.xx.xx.xx.xx.xx.xx.xx.xx.xx|xx.xx.xx.xx\n"
            "                        (default: derived from the topic name)\n"
            "\n"
            "MODE... is one or more of:\n"
            "  ping [R[Hz|kHz]|inf] [size S]\n"
            "  pong\n"
            "  pub [R[Hz|kHz]|inf] [size S] [burst N] [[ping] X%%]\n"
            "  sub\n"
            "  listen                (extension: count pings like sub, never answer;\n"
            "                         not combined with other modes)\n"
            "\n"
            "size S: total sample size (KS: 12 + baggage; 0 = 12), suffixes k, M, kB, MB, KiB, MiB.\n"
            "Fast DDS 2.9, UDPv4 on loopback only.\n",
            argv0);
    exit(3);
}

static bool is_mode_word(
        const char* s)
{
    return strcmp(s, "ping") == 0 || strcmp(s, "pong") == 0 || strcmp(s, "pub") == 0 || strcmp(s, "sub") == 0 ||
            strcmp(s, "listen") == 0;
}

// multiplier for a suffix (leading spaces allowed); 0 if unknown
static int lookup_mult(
        const char* suffix,
        bool size_units)
{
    while (*suffix == ' ')
    {
        suffix++;
    }
    if (*suffix == 0)
    {
        return 1;
    }
    if (size_units)
    {
        if (!strcmp(suffix, "B"))
        {
            return 1;
        }
        if (!strcmp(suffix, "k") || !strcmp(suffix, "kB") || !strcmp(suffix, "KiB"))
        {
            return 1024;
        }
        if (!strcmp(suffix, "M") || !strcmp(suffix, "MB") || !strcmp(suffix, "MiB"))
        {
            return 1048576;
        }
        return 0;
    }
    if (!strcmp(suffix, "Hz"))
    {
        return 1;
    }
    if (!strcmp(suffix, "kHz"))
    {
        return 1000;
    }
    return 0;
}

static bool parse_rate(
        const char* s,
        double* rate)
{
    int pos = 0;
    double r;
    if (strncmp(s, "inf", 3) == 0 && lookup_mult(s + 3, false) > 0)
    {
        *rate = HUGE_VAL;
        return true;
    }
    if (sscanf(s, "%lf%n", &r, &pos) == 1)
    {
        int m = lookup_mult(s + pos, false);
        if (m > 0)
        {
            *rate = r * m;
            return true;
        }
    }
    return false;
}

static void parse_size(
        const char* argv0,
        const char* s)
{
    unsigned x;
    int pos = 0;
    int m;
    if (s[0] == '-' || sscanf(s, "%u%n", &x, &pos) != 1 || (m = lookup_mult(s + pos, true)) == 0)
    {
        usage(argv0, "invalid size specification");
    }
    uint64_t v = static_cast<uint64_t>(x) * static_cast<uint64_t>(m);
    if (v > 12u + static_cast<uint64_t>(halyard_bench::kMaxBaggage))
    {
        usage(argv0, "size too large (max 16 MiB + 12)");
    }
    opt.size = static_cast<uint32_t>(v);
}

static void parse_modes(
        const char* argv0,
        int i,
        int argc,
        char** argv)
{
    if (i >= argc)
    {
        usage(argv0, "no mode given");
    }
    if (i + 1 == argc && !strcmp(argv[i], "help"))
    {
        usage(argv0);
    }
    while (i < argc)
    {
        const char* mode = argv[i++];
        if (!strcmp(mode, "ping"))
        {
            opt.mode_ping = true;
            opt.ping_intv = 0;
            while (i < argc && !is_mode_word(argv[i]))
            {
                double r;
                if (!strcmp(argv[i], "size"))
                {
                    if (++i == argc)
                    {
                        usage(argv0, "argument missing in size specification");
                    }
                    parse_size(argv0, argv[i]);
                }
                else if (parse_rate(argv[i], &r))
                {
                    if (r < 0)
                    {
                        usage(argv0, "invalid ping rate");
                    }
                    else if (r == 0)
                    {
                        opt.ping_intv = NEVER;
                    }
                    else if (r == HUGE_VAL)
                    {
                        opt.ping_intv = 0;
                    }
                    else
                    {
                        opt.ping_intv = static_cast<int64_t>(1e9 / r + 0.5);
                        if (opt.ping_intv <= 0)
                        {
                            opt.ping_intv = 1;
                        }
                    }
                }
                else if (!strcmp(argv[i], "waitset") || !strcmp(argv[i], "listener"))
                {
                    // accepted for ddsperf compatibility; this peer always uses listeners
                }
                else
                {
                    usage(argv0, "unrecognised ping specification");
                }
                i++;
            }
        }
        else if (!strcmp(mode, "pong"))
        {
            opt.mode_pong = true;
            while (i < argc && !is_mode_word(argv[i]))
            {
                if (strcmp(argv[i], "waitset") && strcmp(argv[i], "listener"))
                {
                    usage(argv0, "unrecognised pong specification");
                }
                i++;
            }
        }
        else if (!strcmp(mode, "sub") || !strcmp(mode, "listen"))
        {
            // listen takes the same (ignored) words as sub
            const bool listen = !strcmp(mode, "listen");
            (listen ? opt.mode_listen : opt.mode_sub) = true;
            while (i < argc && !is_mode_word(argv[i]))
            {
                size_t n = strlen(argv[i]);
                if (n < 3 || (strncmp(argv[i], "waitset", n) && strncmp(argv[i], "listener", n) &&
                        strncmp(argv[i], "polling", n)))
                {
                    usage(argv0, listen ? "unrecognised listen specification" : "unrecognised sub specification");
                }
                i++;
            }
        }
        else if (!strcmp(mode, "pub"))
        {
            opt.mode_pub = true;
            opt.pub_rate = HUGE_VAL;
            opt.burst = 1;
            opt.ping_frac = 0;
            while (i < argc && !is_mode_word(argv[i]))
            {
                double r;
                int pos = 0;
                if (!strcmp(argv[i], "size"))
                {
                    if (++i == argc)
                    {
                        usage(argv0, "argument missing in size specification");
                    }
                    parse_size(argv0, argv[i]);
                }
                else if (!strcmp(argv[i], "burst"))
                {
                    unsigned b;
                    if (++i == argc || sscanf(argv[i], "%u%n", &b, &pos) != 1 || argv[i][pos] != 0 || b == 0)
                    {
                        usage(argv0, "invalid burst specification");
                    }
                    opt.burst = b;
                }
                else if (parse_rate(argv[i], &r))
                {
                    if (r < 0)
                    {
                        usage(argv0, "invalid publish rate");
                    }
                    opt.pub_rate = r;
                }
                else if (sscanf(argv[i], "%lf%n", &r, &pos) == 1 && !strcmp(argv[i] + pos, "%"))
                {
                    if (r < 0 || r > 100)
                    {
                        usage(argv0, "ping fraction out of range");
                    }
                    opt.ping_frac = r / 100.0;
                }
                else if (!strcmp(argv[i], "ping") && i + 1 < argc &&
                        sscanf(argv[i + 1], "%lf%n", &r, &pos) == 1 && !strcmp(argv[i + 1] + pos, "%"))
                {
                    i++;
                    if (r < 0 || r > 100)
                    {
                        usage(argv0, "ping fraction out of range");
                    }
                    opt.ping_frac = r / 100.0;
                }
                else
                {
                    usage(argv0, "unrecognised publish specification");
                }
                i++;
            }
        }
        else
        {
            usage(argv0, "unrecognised mode");
        }
    }
    // a listener must not answer pings nor look like a ddsperf peer, which
    // every other mode does
    if (opt.mode_listen && (opt.mode_ping || opt.mode_pong || opt.mode_pub || opt.mode_sub))
    {
        usage(argv0, "listen cannot be combined with other modes");
    }
}

static void parse_args(
        int argc,
        char** argv)
{
    const char* argv0 = argv[0];
    static const struct option longopts[] = {
        {"latency-dump", required_argument, nullptr, 'L'},
        {"durability", required_argument, nullptr, 'd'},
        {"persistence-db", required_argument, nullptr, 'P'},
        {"persistence-guid", required_argument, nullptr, 'G'},
        {"help", no_argument, nullptr, 'h'},
        {nullptr, 0, nullptr, 0}
    };
    int c;
    opterr = 0;
    // '+': stop at the first mode word (options come first, as in PEERS.md)
    while ((c = getopt_long(argc, argv, "+D:uT:i:Q:h", longopts, nullptr)) != -1)
    {
        int pos = 0;
        switch (c)
        {
            case 'D':
            {
                char* end;
                opt.dur = strtod(optarg, &end);
                if (end == optarg || *end != 0)
                {
                    usage(argv0, "-D: invalid duration");
                }
                if (opt.dur <= 0)
                {
                    opt.dur = HUGE_VAL;
                }
                break;
            }
            case 'u':
                opt.reliable = false;
                break;
            case 'T':
                if (!strcmp(optarg, "KS"))
                {
                    opt.topic = PerfKind::KS;
                }
                else if (!strcmp(optarg, "UK16"))
                {
                    opt.topic = PerfKind::UK16;
                }
                else if (!strcmp(optarg, "UK1024"))
                {
                    opt.topic = PerfKind::UK1024;
                }
                else
                {
                    usage(argv0, "-T: unknown topic (KS, UK16, UK1024)");
                }
                break;
            case 'i':
            {
                char* end;
                long d = strtol(optarg, &end, 10);
                if (end == optarg || *end != 0 || d < 0 || d > 232)
                {
                    usage(argv0, "-i: invalid domain id");
                }
                opt.domain = static_cast<int>(d);
                break;
            }
            case 'Q':
            {
                unsigned long n;
                double d;
                if (sscanf(optarg, "minmatch:%lu%n", &n, &pos) == 1 && optarg[pos] == 0)
                {
                    opt.minmatch = static_cast<uint32_t>(n);
                }
                else if (sscanf(optarg, "initwait:%lf%n", &d, &pos) == 1 && optarg[pos] == 0)
                {
                    opt.initwait = (d <= 0) ? 0 : d;
                }
                else
                {
                    usage(argv0, "-Q: invalid success criterium (minmatch:N, initwait:SECS)");
                }
                break;
            }
            case 'L':
                opt.latency_dump = optarg;
                break;
            case 'd':
                if (!strcmp(optarg, "volatile"))
                {
                    opt.durability = VOLATILE_DURABILITY_QOS;
                }
                else if (!strcmp(optarg, "transient-local"))
                {
                    opt.durability = TRANSIENT_LOCAL_DURABILITY_QOS;
                }
                else if (!strcmp(optarg, "transient"))
                {
                    opt.durability = TRANSIENT_DURABILITY_QOS;
                }
                else if (!strcmp(optarg, "persistent"))
                {
                    opt.durability = PERSISTENT_DURABILITY_QOS;
                }
                else
                {
                    usage(argv0, "--durability: invalid kind (volatile, transient-local, transient, persistent)");
                }
                break;
            case 'P':
                if (*optarg == 0)
                {
                    usage(argv0, "--persistence-db: empty path");
                }
                opt.persistence_db = optarg;
                break;
            case 'G':
            {
                frtps::GUID_t g;
                std::istringstream(optarg) >> g;
                if (g == frtps::c_Guid_Unknown)
                {
                    usage(argv0, "--persistence-guid: invalid GUID (xx.xx.xx.xx.xx.xx.xx.xx.xx.xx.xx.xx|xx.xx.xx.xx)");
                }
                opt.persistence_guid = optarg;
                break;
            }
            case 'h':
            default:
                usage(argv0, c == 'h' ? nullptr : "invalid option");
        }
    }
    parse_modes(argv0, optind, argc, argv);

    if ((!opt.persistence_db.empty() || !opt.persistence_guid.empty()) &&
            opt.durability < TRANSIENT_DURABILITY_QOS)
    {
        usage(argv0, "--persistence-db/--persistence-guid need --durability transient or persistent");
    }

    if (opt.topic != PerfKind::KS && opt.size != 0)
    {
        usage(argv0, "size invalid: only topic KS has a sequence");
    }
    if (opt.size != 0 && opt.size < 12)
    {
        usage(argv0, "size invalid: too small to allow for overhead");
    }
    opt.baggage = (opt.size > 0) ? opt.size - 12 : 0;
}

// ---------------------------------------------------------------------------
// Shared state

static std::atomic<bool> g_term{false};
static std::atomic<bool> g_failed2{false}; // middleware failure => exit 2
static std::mutex g_wake_mtx;
static std::condition_variable g_wake_cv;

static void wake_main()
{
    std::lock_guard<std::mutex> lk(g_wake_mtx);
    g_wake_cv.notify_all();
}

static std::atomic<int> g_signals{0};

// --durability transient|persistent without --persistence-db: a private
// database file, removed at exit (see main)
static char g_private_db[4][128];

static void remove_private_db()
{
    for (auto& f : g_private_db)
    {
        if (f[0])
        {
            unlink(f);
        }
    }
}

static void signal_handler(
        int)
{
    // first signal: clean shutdown; second one: give up at once
    if (g_signals.fetch_add(1) > 0)
    {
        remove_private_db();
        _exit(1);
    }
    g_term.store(true);
}

static DomainParticipant* g_dp = nullptr;
static frtps::GuidPrefix_t g_own_prefix;
static TypeSupport g_type;
static PerfType* g_ptype = nullptr;
static Topic* g_tp_data = nullptr;
static Topic* g_tp_ping = nullptr;
static Topic* g_tp_pong = nullptr;
static Publisher* g_pub = nullptr;
static Subscriber* g_sub = nullptr;
static Subscriber* g_sub_pong = nullptr;
static DataWriter* g_wr_data = nullptr;
static DataWriter* g_wr_ping = nullptr;
static DataReader* g_rd_data = nullptr;
static DataReader* g_rd_ping = nullptr;
static DataReader* g_rd_pong = nullptr;
static bool g_need_pong_writers = false;

// Discovered ddsperf-style participants (USER_DATA "DDSPerf:S:PID:HOST")
struct PeerInfo
{
    std::string host;
    uint32_t pid = 0;
    bool has_reader = false;
    bool alive = true;
};
static std::mutex g_disc_mtx;
static std::map<frtps::GuidPrefix_t, PeerInfo> g_peers;
static std::deque<frtps::GuidPrefix_t> g_pending_pongwr; // pong writers to create (main thread)

// Pong writers by remote participant GUID prefix.  Never deleted before
// shutdown, so a pointer obtained under the lock stays valid.
static std::mutex g_pongwr_mtx;
static std::map<frtps::GuidPrefix_t, DataWriter*> g_pongwr;

// Remote endpoints matched, per local endpoint role
struct MatchSet
{
    std::mutex mtx;
    std::set<frtps::GUID_t> remote;

    void update(
            const InstanceHandle_t& h,
            int change)
    {
        frtps::GUID_t g = frtps::iHandle2GUID(h);
        if (g.guidPrefix == g_own_prefix)
        {
            return; // ddsperf ignores local matches
        }
        {
            std::lock_guard<std::mutex> lk(mtx);
            if (change > 0)
            {
                remote.insert(g);
            }
            else if (change < 0)
            {
                remote.erase(g);
            }
        }
        wake_main();
    }

    uint32_t count()
    {
        std::lock_guard<std::mutex> lk(mtx);
        return static_cast<uint32_t>(remote.size());
    }

};
static MatchSet g_m_ping_wr; // remote ping readers matched by our ping writer
static MatchSet g_m_pong_rd; // remote pong writers matched by our pong reader
static MatchSet g_m_data_wr; // remote data readers matched by our data writer
static MatchSet g_m_data_rd; // remote data writers matched by our data reader
static MatchSet g_m_ping_rd; // remote ping writers matched by our ping reader
static MatchSet g_m_pong_wr; // remote pong readers matched by our pong writers

// Answers expected for each ping: the remote ping readers of ddsperf-style
// participants (ddsperf's n_pong_expected counts those participants).  A
// "listen" process reads pings but has no DDSPerf USER_DATA and never answers.
static uint32_t expected_pongers()
{
    std::lock_guard<std::mutex> lk(g_m_ping_wr.mtx);
    std::lock_guard<std::mutex> lk_disc(g_disc_mtx);
    uint32_t n = 0;
    for (const frtps::GUID_t& g : g_m_ping_wr.remote)
    {
        auto it = g_peers.find(g.guidPrefix);
        if (it != g_peers.end() && it->second.alive)
        {
            n++;
        }
    }
    return n;
}

// Send times of pings, indexed by sequence number
struct SendSlot
{
    uint32_t seq = 0;
    bool valid = false;
    int64_t t = 0;
};
static std::mutex g_ring_mtx;
static std::vector<SendSlot> g_ping_ring(4096);
static std::vector<SendSlot> g_data_ring(65536);

static void ring_put(
        std::vector<SendSlot>& ring,
        uint32_t seq,
        int64_t t)
{
    std::lock_guard<std::mutex> lk(g_ring_mtx);
    SendSlot& s = ring[seq & (ring.size() - 1)];
    s.seq = seq;
    s.valid = true;
    s.t = t;
}

static bool ring_get(
        std::vector<SendSlot>& ring,
        uint32_t seq,
        int64_t* t)
{
    std::lock_guard<std::mutex> lk(g_ring_mtx);
    const SendSlot& s = ring[seq & (ring.size() - 1)];
    if (s.valid && s.seq == seq)
    {
        *t = s.t;
        return true;
    }
    return false;
}

// Latency statistics per answering (pong) writer
static const uint32_t PINGPONG_RAWSIZE = 20000;
static const size_t LATENCY_DUMP_MAX = 5000000;
struct LatStat
{
    int64_t min = INT64_MAX;
    int64_t max = INT64_MIN;
    int64_t sum = 0;
    uint32_t cnt = 0;
    std::vector<int64_t> raw;
};
static std::mutex g_lat_mtx;
static std::map<frtps::GUID_t, LatStat> g_latstats;
static std::vector<std::pair<int64_t, int64_t>> g_latdump; // (monotonic receive time, latency ns)
static bool g_latdump_full_warned = false;

static void latency_record(
        const frtps::GUID_t& pongwr,
        int64_t now,
        int64_t lat)
{
    std::lock_guard<std::mutex> lk(g_lat_mtx);
    LatStat& x = g_latstats[pongwr];
    if (x.raw.capacity() == 0)
    {
        x.raw.reserve(PINGPONG_RAWSIZE);
    }
    if (lat < x.min)
    {
        x.min = lat;
    }
    if (lat > x.max)
    {
        x.max = lat;
    }
    x.sum += lat;
    if (x.cnt < PINGPONG_RAWSIZE)
    {
        x.raw.push_back(lat);
    }
    x.cnt++;
    if (!opt.latency_dump.empty())
    {
        if (g_latdump.size() < LATENCY_DUMP_MAX)
        {
            g_latdump.emplace_back(now, lat);
        }
        else if (!g_latdump_full_warned)
        {
            g_latdump_full_warned = true;
            fprintf(stderr, "[%d] latency dump full (%zu samples), further samples not recorded\n", g_pid,
                    LATENCY_DUMP_MAX);
        }
    }
}

// Ping state (ddsperf: cur_ping_seq, n_pong_seen, ...)
static std::mutex g_ping_mtx;
static uint32_t g_cur_ping_seq = 0;
static int64_t g_cur_ping_time = INT64_MIN / 2;
static uint32_t g_n_pong_seen = 0;
static uint32_t g_ping_timeouts = 0;
static int64_t g_twarn_ping_timeout = 0;
static std::mutex g_ping_write_mtx;
static PerfSample g_ping_sample;

static void fill_sample(
        PerfSample& s)
{
    s.seq = 0;
    s.keyval = 0;
    switch (opt.topic)
    {
        case PerfKind::KS: s.baggage.assign(opt.baggage, 0xee); break;
        case PerfKind::UK16: s.baggage.assign(12, 0xee); break;
        case PerfKind::UK1024: s.baggage.assign(1020, 0xee); break;
    }
}

static uint32_t configured_size()
{
    switch (opt.topic)
    {
        case PerfKind::KS: return 12u + opt.baggage;
        case PerfKind::UK16: return 16u;
        case PerfKind::UK1024: return 1024u;
    }
    return 0;
}

static void send_ping(
        uint32_t seq)
{
    std::lock_guard<std::mutex> lk(g_ping_write_mtx);
    g_ping_sample.seq = seq;
    ring_put(g_ping_ring, seq, mono_ns());
    ReturnCode_t rc = g_wr_ping->write_w_timestamp(&g_ping_sample, HANDLE_NIL, ns_to_time(real_ns() | 1));
    if (rc != ReturnCode_t::RETCODE_OK && rc != ReturnCode_t::RETCODE_TIMEOUT && !g_term.load())
    {
        out("[%d] ping write failed: %d\n", g_pid, static_cast<int>(rc()));
    }
}

// ddsperf's maybe_send_new_ping: called from the main loop when tnextping passed
static void maybe_send_new_ping(
        int64_t tnow,
        int64_t* tnextping)
{
    uint32_t seq;
    {
        std::lock_guard<std::mutex> lk(g_ping_mtx);
        const int64_t wait = (opt.ping_intv == 0) ? 1000000000 : opt.ping_intv;
        if (tnow < g_cur_ping_time + wait)
        {
            if (opt.ping_intv == 0)
            {
                *tnextping = g_cur_ping_time + 1000000000;
            }
            return;
        }
        const uint32_t n_expected = expected_pongers();
        if (g_n_pong_seen < n_expected)
        {
            g_ping_timeouts++;
            if (tnow > g_twarn_ping_timeout)
            {
                out("[%d] ping timed out (total %" PRIu32 " times) ... sending new ping\n", g_pid, g_ping_timeouts);
                g_twarn_ping_timeout = tnow + 1000000000;
            }
        }
        g_n_pong_seen = 0;
        if (opt.ping_intv == 0)
        {
            *tnextping = tnow + 1000000000;
            g_cur_ping_time = tnow;
        }
        else
        {
            g_cur_ping_time += opt.ping_intv;
            if (g_cur_ping_time < tnow - opt.ping_intv / 2)
            {
                g_cur_ping_time = tnow;
            }
            *tnextping = g_cur_ping_time + opt.ping_intv;
        }
        seq = ++g_cur_ping_seq;
    }
    send_ping(seq);
}

// Subscriber statistics per remote data writer (sub) or ping writer (listen)
struct SubStat
{
    uint32_t eseq = 0;
    uint64_t nrecv = 0;
    uint64_t nlost = 0;
    uint64_t nrecv_bytes = 0;
    uint32_t last_size = 0;
    struct
    {
        uint64_t nrecv = 0, nlost = 0, nrecv_bytes = 0;
    } ref[10];
    unsigned refidx = 0;
};
static std::mutex g_sub_mtx;
static std::map<frtps::GUID_t, SubStat> g_substats;

static void sub_count(
        const frtps::GUID_t& wr,
        const PerfSample& sample)
{
    const uint32_t size = halyard_bench::perf_sample_size(opt.topic, sample);
    const uint32_t seq = sample.seq;
    std::lock_guard<std::mutex> lk(g_sub_mtx);
    auto it = g_substats.find(wr);
    // FASTPERF_SEQTRACE: on stderr, the first sequence number per writer and
    // every jump back (durability tests: what a late joiner received)
    static const bool trace = getenv("FASTPERF_SEQTRACE") != nullptr;
    if (trace && (it == g_substats.end() || seq < it->second.eseq - 1))
    {
        std::ostringstream w;
        w << wr;
        fprintf(stderr, "[%d] seqtrace writer %s seq %" PRIu32 " after %" PRIu64 " samples\n", g_pid,
                w.str().c_str(), seq, it == g_substats.end() ? 0 : it->second.nrecv);
    }
    if (it == g_substats.end())
    {
        SubStat& x = g_substats[wr];
        x.eseq = seq + 1;
        x.nrecv = 1;
        x.nrecv_bytes = size;
        x.last_size = size;
    }
    else
    {
        SubStat& x = it->second;
        const uint32_t gap = seq - x.eseq; // unsigned 32-bit, as ddsperf
        if (gap < 0x80000000u)
        {
            x.nlost += gap; // (a sample older than expected is not "negative loss")
        }
        x.eseq = seq + 1;
        x.nrecv++;
        x.nrecv_bytes += size;
        x.last_size = size;
    }
}

static DataWriter* pong_writer_for(
        const frtps::GUID_t& remote_writer)
{
    std::lock_guard<std::mutex> lk(g_pongwr_mtx);
    auto it = g_pongwr.find(remote_writer.guidPrefix);
    return (it == g_pongwr.end()) ? nullptr : it->second;
}

// ---------------------------------------------------------------------------
// Listeners

class ParticipantListener : public DomainParticipantListener
{
public:

    void on_participant_discovery(
            DomainParticipant*,
            frtps::ParticipantDiscoveryInfo&& info) override
    {
        const frtps::GuidPrefix_t prefix = info.info.m_guid.guidPrefix;
        if (prefix == g_own_prefix)
        {
            return;
        }
        if (info.status == frtps::ParticipantDiscoveryInfo::DISCOVERED_PARTICIPANT)
        {
            const auto& ud = info.info.m_userData.data_vec();
            std::string s(ud.begin(), ud.end());
            int has_reader = 0;
            long pid = 0;
            int pos = 0;
            if (sscanf(s.c_str(), "DDSPerf:%d:%ld%n", &has_reader, &pid, &pos) != 2 ||
                    static_cast<size_t>(pos) >= s.size() || s[pos] != ':' || strlen(s.c_str()) != s.size())
            {
                return; // not a ddsperf-style participant: ignored, as ddsperf does
            }
            PeerInfo pi;
            pi.host = s.substr(static_cast<size_t>(pos) + 1);
            pi.pid = static_cast<uint32_t>(pid);
            pi.has_reader = has_reader != 0;
            {
                std::lock_guard<std::mutex> lk(g_disc_mtx);
                auto it = g_peers.find(prefix);
                if (it != g_peers.end() && it->second.alive)
                {
                    return;
                }
                g_peers[prefix] = pi;
                if (g_need_pong_writers)
                {
                    g_pending_pongwr.push_back(prefix);
                }
            }
            {
                // allow for a few attempts before warning about ping timeouts
                std::lock_guard<std::mutex> lk(g_ping_mtx);
                g_twarn_ping_timeout = mono_ns() + 3333000000LL;
            }
            out("[%d] participant %s:%" PRIu32 ": new\n", g_pid, pi.host.c_str(), pi.pid);
            wake_main();
        }
        else if (info.status == frtps::ParticipantDiscoveryInfo::REMOVED_PARTICIPANT ||
                info.status == frtps::ParticipantDiscoveryInfo::DROPPED_PARTICIPANT)
        {
            std::string host;
            uint32_t pid = 0;
            {
                std::lock_guard<std::mutex> lk(g_disc_mtx);
                auto it = g_peers.find(prefix);
                if (it == g_peers.end() || !it->second.alive)
                {
                    return;
                }
                it->second.alive = false;
                host = it->second.host;
                pid = it->second.pid;
            }
            out("[%d] participant %s:%" PRIu32 ": gone\n", g_pid, host.c_str(), pid);
        }
    }

};

class WriterMatchListener : public DataWriterListener
{
public:

    explicit WriterMatchListener(
            MatchSet* m)
        : m_(m)
    {
    }

    void on_publication_matched(
            DataWriter*,
            const PublicationMatchedStatus& info) override
    {
        m_->update(info.last_subscription_handle, info.current_count_change);
    }

private:

    MatchSet* m_;
};

class ReaderBaseListener : public DataReaderListener
{
public:

    explicit ReaderBaseListener(
            MatchSet* m)
        : m_(m)
    {
    }

    void on_subscription_matched(
            DataReader*,
            const SubscriptionMatchedStatus& info) override
    {
        m_->update(info.last_publication_handle, info.current_count_change);
    }

protected:

    // Calls f(sample, info) for every valid sample available, with one reusable
    // sample buffer per receive thread; stops early when the process is ending.
    template <typename F>
    static void take_each(
            DataReader* rd,
            F&& f)
    {
        static thread_local PerfSample sample;
        SampleInfo info;
        while (!g_term.load() && rd->take_next_sample(&sample, &info) == ReturnCode_t::RETCODE_OK)
        {
            if (info.valid_data)
            {
                f(sample, info);
            }
        }
    }

    MatchSet* m_;
};

// pong: answer each ping with the same sample on the pong topic, timestamp |1
class PingListener : public ReaderBaseListener
{
public:

    using ReaderBaseListener::ReaderBaseListener;

    void on_data_available(
            DataReader* rd) override
    {
        take_each(rd, [&](PerfSample& sample, const SampleInfo& info) {
            const frtps::GUID_t wr = frtps::iHandle2GUID(info.publication_handle);
            if (wr.guidPrefix == g_own_prefix)
            {
                return;
            }
            DataWriter* pw = pong_writer_for(wr);
            if (pw == nullptr)
            {
                return; // peer not (yet) known: no answer, like ddsperf
            }
            const int64_t ts = time_to_ns(info.source_timestamp) | 1;
            ReturnCode_t rc = pw->write_w_timestamp(&sample, HANDLE_NIL, ns_to_time(ts));
            if (rc != ReturnCode_t::RETCODE_OK && rc != ReturnCode_t::RETCODE_TIMEOUT && !g_term.load())
            {
                out("[%d] pong write failed: %d\n", g_pid, static_cast<int>(rc()));
            }
        });
    }

};

// sub: count samples and losses per writer; answer data samples flagged as pings
class DataListener : public ReaderBaseListener
{
public:

    using ReaderBaseListener::ReaderBaseListener;

    void on_data_available(
            DataReader* rd) override
    {
        take_each(rd, [&](PerfSample& sample, const SampleInfo& info) {
            const frtps::GUID_t wr = frtps::iHandle2GUID(info.publication_handle);
            sub_count(wr, sample);
            const int64_t ts = time_to_ns(info.source_timestamp);
            if ((ts & 1) != 0 && wr.guidPrefix != g_own_prefix)
            {
                DataWriter* pw = pong_writer_for(wr);
                if (pw != nullptr)
                {
                    ReturnCode_t rc = pw->write_w_timestamp(&sample, HANDLE_NIL, ns_to_time(ts - 1));
                    if (rc != ReturnCode_t::RETCODE_OK && rc != ReturnCode_t::RETCODE_TIMEOUT && !g_term.load())
                    {
                        out("[%d] pong write failed: %d\n", g_pid, static_cast<int>(rc()));
                    }
                }
            }
        });
    }

};

// listen: count pings per writer like sub counts data samples; never answer
class ListenListener : public ReaderBaseListener
{
public:

    using ReaderBaseListener::ReaderBaseListener;

    void on_data_available(
            DataReader* rd) override
    {
        take_each(rd, [](PerfSample& sample, const SampleInfo& info) {
            sub_count(frtps::iHandle2GUID(info.publication_handle), sample);
        });
    }

};

// ping / pub X%: record latencies; in "as fast as possible" ping mode send the
// next ping as soon as all matched pongers answered the current one
class PongListener : public ReaderBaseListener
{
public:

    using ReaderBaseListener::ReaderBaseListener;

    void on_data_available(
            DataReader* rd) override
    {
        const bool pings = opt.mode_ping && opt.ping_intv != NEVER;
        const bool data_pings = opt.mode_pub && opt.pub_rate > 0 && opt.ping_frac > 0;
        take_each(rd, [&](PerfSample& sample, const SampleInfo& info) {
            const int64_t now = mono_ns();
            const frtps::GUID_t wr = frtps::iHandle2GUID(info.publication_handle);
            bool isping;
            if (pings && data_pings)
            {
                isping = (time_to_ns(info.source_timestamp) & 1) != 0;
            }
            else
            {
                isping = pings;
            }
            const uint32_t seq = sample.seq;
            int64_t tsend;
            if (ring_get(isping ? g_ping_ring : g_data_ring, seq, &tsend))
            {
                latency_record(wr, now, (now - tsend) / 2);
            }
            if (isping)
            {
                // answers are counted with a rate too: maybe_send_new_ping
                // counts a timeout when not all of them came (as ddsperf)
                bool send_next = false;
                uint32_t next_seq = 0;
                {
                    std::lock_guard<std::mutex> lk(g_ping_mtx);
                    if (seq == g_cur_ping_seq)
                    {
                        const uint32_t n_expected = expected_pongers();
                        if (++g_n_pong_seen >= n_expected && n_expected > 0 && opt.ping_intv == 0)
                        {
                            g_n_pong_seen = 0;
                            g_cur_ping_time = mono_ns();
                            next_seq = ++g_cur_ping_seq;
                            send_next = true;
                        }
                    }
                }
                if (send_next && !g_term.load())
                {
                    send_ping(next_seq);
                }
            }
        });
    }

};

// ---------------------------------------------------------------------------
// Entity creation

static std::string guid_string(
        const frtps::GuidPrefix_t& prefix)
{
    // ddsperf's partition name: the 16-byte participant GUID as 4 groups of 8
    // hex digits, entity id 000001c1
    unsigned char v[16];
    for (int i = 0; i < 12; ++i)
    {
        v[i] = prefix.value[i];
    }
    v[12] = 0x00;
    v[13] = 0x00;
    v[14] = 0x01;
    v[15] = 0xc1;
    char buf[40];
    snprintf(buf, sizeof(buf), "%02x%02x%02x%02x_%02x%02x%02x%02x_%02x%02x%02x%02x_%02x%02x%02x%02x",
            v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13], v[14], v[15]);
    return buf;
}

// Large samples: Fast DDS 2.9 fragments them (DATA_FRAG) also in the default
// synchronous publish mode, which sends straight from the writing thread (no
// extra thread hop, the best latency).  Measured on loopback, the
// asynchronous mode (with or without a flow controller) was slower for every
// size and stalled for 1 MiB pings, so all writers are synchronous.
//
// What large samples do need is a bound on the bytes a KEEP_ALL writer keeps
// unacknowledged: with max_samples 10000 and 10 MiB samples the writer would
// queue up to 100 GB, and the repair traffic of dozens of queued 10 MiB
// samples overruns the receive socket buffers (a 10M run delivered 8 samples
// in 5 s).  Cyclone bounds its writer history cache in bytes too, so the data
// writer's max_samples is min(10000, 64 MiB / serialized sample size), at
// least 2 (10000 up to 6.5 kB samples, 64 for 1 MiB, 6 for 10 MiB).
static const uint64_t kWriterHistoryBytes = 64ull * 1024ull * 1024ull;

// TRANSIENT / PERSISTENT (--durability): Fast DDS 2.9 refuses to create a
// reader or writer of these kinds unless it has a persistence GUID (endpoint
// property dds.persistence.guid) and a persistence plugin (participant
// properties dds.persistence.plugin, dds.persistence.sqlite3.filename): see
// RTPSParticipantImpl::get_persistence_service.  The data writer's GUID is
// stable (--persistence-guid, or derived from the topic name) so that a new
// process with the same database reloads its history; the other endpoints get
// a GUID made of this participant's prefix and a counter, unique to the run.
// Fast DDS 2.9 refuses PERSISTENT in check_qos of topics, readers and writers
// ("PERSISTENT Durability not supported"), so `--durability persistent` makes
// TRANSIENT endpoints with the same SQLite persistence (main() says so on stderr).
static DurabilityQosPolicyKind dds_durability()
{
    return opt.durability == PERSISTENT_DURABILITY_QOS ? TRANSIENT_DURABILITY_QOS : opt.durability;
}

static std::string persistence_guid_string(
        const frtps::GuidPrefix_t& prefix,
        const frtps::EntityId_t& eid)
{
    char buf[64];
    int n = 0;
    for (int i = 0; i < 12; i++)
    {
        n += snprintf(buf + n, sizeof(buf) - static_cast<size_t>(n), "%s%02x", i ? "." : "", prefix.value[i]);
    }
    snprintf(buf + n, sizeof(buf) - static_cast<size_t>(n), "|%02x.%02x.%02x.%02x",
            eid.value[0], eid.value[1], eid.value[2], eid.value[3]);
    return buf;
}

static std::string topic_persistence_guid(
        const std::string& topic_name)
{
    if (!opt.persistence_guid.empty())
    {
        return opt.persistence_guid;
    }
    // FNV-1a over "fastdds-perf/" + topic name, 12 bytes of prefix
    uint64_t h1 = 0xcbf29ce484222325ull, h2 = 0x84222325cbf29ce4ull;
    const std::string in = "fastdds-perf/" + topic_name;
    for (unsigned char ch : in)
    {
        h1 = (h1 ^ ch) * 0x100000001b3ull;
        h2 = (h2 ^ ch) * 0x100000001b3ull;
    }
    frtps::GuidPrefix_t p;
    for (int i = 0; i < 8; i++)
    {
        p.value[i] = static_cast<frtps::octet>(h1 >> (8 * i));
    }
    for (int i = 0; i < 4; i++)
    {
        p.value[8 + i] = static_cast<frtps::octet>(h2 >> (8 * i));
    }
    frtps::EntityId_t e;
    e.value[0] = 0;
    e.value[1] = 0;
    e.value[2] = 1;
    e.value[3] = 0x02; // user writer with key
    return persistence_guid_string(p, e);
}

static void set_persistence_guid(
        eprosima::fastrtps::rtps::PropertyPolicy& props,
        const std::string& stable_guid)
{
    if (opt.durability < TRANSIENT_DURABILITY_QOS)
    {
        return;
    }
    std::string g = stable_guid;
    if (g.empty())
    {
        static std::atomic<uint32_t> counter{0};
        const uint32_t n = ++counter;
        frtps::EntityId_t e;
        e.value[0] = 0x80;
        e.value[1] = static_cast<frtps::octet>(n >> 8);
        e.value[2] = static_cast<frtps::octet>(n);
        e.value[3] = 0x02;
        g = persistence_guid_string(g_own_prefix, e);
    }
    props.properties().emplace_back("dds.persistence.guid", g);
}

static void common_writer_qos(
        DataWriterQos& q,
        bool keep_all,
        const std::string& stable_guid = std::string())
{
    q.reliability().kind = opt.reliable ? RELIABLE_RELIABILITY_QOS : BEST_EFFORT_RELIABILITY_QOS;
    q.reliability().max_blocking_time = eprosima::fastrtps::Duration_t(10, 0);
    q.durability().kind = dds_durability();
    set_persistence_guid(q.properties(), stable_guid);
    if (keep_all)
    {
        const uint64_t ser = 16ull + opt.baggage + 3ull;
        const int32_t n = static_cast<int32_t>(std::max<uint64_t>(2, std::min<uint64_t>(10000,
                kWriterHistoryBytes / ser)));
        q.history().kind = KEEP_ALL_HISTORY_QOS;
        q.resource_limits().max_samples = n;
        q.resource_limits().max_instances = 1;
        q.resource_limits().max_samples_per_instance = n;
    }
    else
    {
        q.history().kind = KEEP_LAST_HISTORY_QOS;
        q.history().depth = 1;
    }
    q.resource_limits().allocated_samples = 16;
    q.resource_limits().extra_samples = 1;
    // payload buffers allocated on demand and reused (a preallocating policy
    // would reserve max-serialized-size (16 MiB) per history slot)
    q.endpoint().history_memory_policy = eprosima::fastrtps::rtps::DYNAMIC_REUSABLE_MEMORY_MODE;
    q.data_sharing().off();
    q.publish_mode().kind = SYNCHRONOUS_PUBLISH_MODE;
    // heartbeat every 100 ms (default 3 s) so KEEP_ALL writers keep draining
    // and lost fragments are repaired promptly
    q.reliable_writer_qos().times.heartbeatPeriod = eprosima::fastrtps::Duration_t(0, 100000000);
}

static void common_reader_qos(
        DataReaderQos& q,
        bool keep_all)
{
    q.reliability().kind = opt.reliable ? RELIABLE_RELIABILITY_QOS : BEST_EFFORT_RELIABILITY_QOS;
    q.reliability().max_blocking_time = eprosima::fastrtps::Duration_t(10, 0);
    q.durability().kind = dds_durability();
    set_persistence_guid(q.properties(), std::string());
    if (keep_all)
    {
        q.history().kind = KEEP_ALL_HISTORY_QOS;
        q.resource_limits().max_samples = 10000;
        q.resource_limits().max_instances = 1;
        q.resource_limits().max_samples_per_instance = 10000;
    }
    else
    {
        q.history().kind = KEEP_LAST_HISTORY_QOS;
        q.history().depth = 1;
    }
    q.resource_limits().allocated_samples = 16;
    q.resource_limits().extra_samples = 1;
    q.endpoint().history_memory_policy = eprosima::fastrtps::rtps::DYNAMIC_REUSABLE_MEMORY_MODE;
    q.data_sharing().off();
}

static WriterMatchListener g_l_pong_wr(&g_m_pong_wr);

static void create_pending_pong_writers()
{
    for (;;)
    {
        frtps::GuidPrefix_t prefix;
        {
            std::lock_guard<std::mutex> lk(g_disc_mtx);
            if (g_pending_pongwr.empty())
            {
                return;
            }
            prefix = g_pending_pongwr.front();
            g_pending_pongwr.pop_front();
        }
        {
            std::lock_guard<std::mutex> lk(g_pongwr_mtx);
            if (g_pongwr.count(prefix))
            {
                continue;
            }
        }
        PublisherQos pq = PUBLISHER_QOS_DEFAULT;
        pq.partition().push_back(guid_string(prefix).c_str());
        Publisher* p = g_dp->create_publisher(pq);
        if (p == nullptr)
        {
            out("[%d] error: create_publisher(pong) failed\n", g_pid);
            g_failed2.store(true);
            continue;
        }
        DataWriterQos wq = DATAWRITER_QOS_DEFAULT;
        common_writer_qos(wq, false);
        DataWriter* w = p->create_datawriter(g_tp_pong, wq, &g_l_pong_wr, StatusMask::publication_matched());
        if (w == nullptr)
        {
            out("[%d] error: create_datawriter(pong) failed\n", g_pid);
            g_failed2.store(true);
            continue;
        }
        std::lock_guard<std::mutex> lk(g_pongwr_mtx);
        g_pongwr[prefix] = w;
    }
}

// ---------------------------------------------------------------------------
// Publisher thread

static std::atomic<uint64_t> g_pub_sent{0};

static void pub_thread()
{
    PerfSample s;
    fill_sample(s);
    uint32_t seq = 0;
    uint64_t ntot = 0;
    uint32_t bi = 0;
    double acc = 0;
    bool warned_timeout = false;
    const int64_t tfirst = mono_ns();
    while (!g_term.load())
    {
        bool reqresp = false;
        if (opt.ping_frac > 0)
        {
            acc += opt.ping_frac;
            if (acc >= 1.0 - 1e-9)
            {
                acc -= 1.0;
                reqresp = true;
            }
        }
        s.seq = seq;
        if (reqresp)
        {
            ring_put(g_data_ring, seq, mono_ns());
        }
        const int64_t tw = (real_ns() & ~static_cast<int64_t>(1)) | (reqresp ? 1 : 0);
        const int64_t t_pre = mono_ns();
        ReturnCode_t rc = g_wr_data->write_w_timestamp(&s, HANDLE_NIL, ns_to_time(tw));
        if (rc == ReturnCode_t::RETCODE_TIMEOUT)
        {
            // Fast DDS also returns TIMEOUT at once when its KEEP_ALL history is
            // full and nothing can be removed yet: back off briefly and retry
            // the same sample; report only real (max_blocking_time) timeouts
            const int64_t blocked = mono_ns() - t_pre;
            if (blocked >= 1000000000 && !warned_timeout && !g_term.load())
            {
                out("[%d] write error: timeout after %.3fs (retrying)\n", g_pid, static_cast<double>(blocked) / 1e9);
                warned_timeout = true;
            }
            else if (blocked < 1000000)
            {
                std::this_thread::sleep_for(std::chrono::microseconds(100));
            }
            continue; // retry the same sample
        }
        else if (rc != ReturnCode_t::RETCODE_OK)
        {
            if (!g_term.load())
            {
                out("[%d] write error: %d\n", g_pid, static_cast<int>(rc()));
                g_failed2.store(true);
                g_term.store(true);
                wake_main();
            }
            break;
        }
        ntot++;
        g_pub_sent.store(ntot, std::memory_order_relaxed);
        seq++;
        if (opt.pub_rate < HUGE_VAL)
        {
            if (++bi == opt.burst)
            {
                int64_t t = mono_ns();
                while (!g_term.load() &&
                        (static_cast<double>(ntot / opt.burst) /
                        (static_cast<double>(t - tfirst) / 1e9 + 5e-3)) > opt.pub_rate)
                {
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                    t = mono_ns();
                }
                bi = 0;
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Statistics output

static std::string peer_label(
        const frtps::GUID_t& wr)
{
    {
        std::lock_guard<std::mutex> lk(g_disc_mtx);
        auto it = g_peers.find(wr.guidPrefix);
        if (it != g_peers.end())
        {
            return it->second.host + ":" + std::to_string(it->second.pid);
        }
    }
    // unknown peer: the publication handle (writer GUID) in hex
    std::string s;
    char b[3];
    for (int i = 0; i < 12; ++i)
    {
        snprintf(b, sizeof(b), "%02x", wr.guidPrefix.value[i]);
        s += b;
    }
    for (int i = 0; i < 4; ++i)
    {
        snprintf(b, sizeof(b), "%02x", wr.entityId.value[i]);
        s += b;
    }
    return s;
}

static void print_stats(
        int64_t tnow,
        int64_t tprev)
{
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "[%d] %.3f ", g_pid, secs_since_start(tnow));

    if (opt.mode_sub || opt.mode_listen)
    {
        uint64_t tot_nrecv = 0, tot_nlost = 0, nlost = 0, nrecv = 0, nrecv_bytes = 0;
        uint64_t nrecv10s = 0, nrecv10s_bytes = 0;
        uint32_t last_size = 0;
        {
            std::lock_guard<std::mutex> lk(g_sub_mtx);
            for (auto& kv : g_substats)
            {
                SubStat& x = kv.second;
                const unsigned idx1s = (x.refidx == 0) ? 9u : x.refidx - 1;
                const unsigned idx10s = x.refidx;
                tot_nrecv += x.nrecv;
                tot_nlost += x.nlost;
                nrecv += x.nrecv - x.ref[idx1s].nrecv;
                nlost += x.nlost - x.ref[idx1s].nlost;
                nrecv_bytes += x.nrecv_bytes - x.ref[idx1s].nrecv_bytes;
                nrecv10s += x.nrecv - x.ref[idx10s].nrecv;
                nrecv10s_bytes += x.nrecv_bytes - x.ref[idx10s].nrecv_bytes;
                last_size = x.last_size;
                x.ref[x.refidx].nrecv = x.nrecv;
                x.ref[x.refidx].nlost = x.nlost;
                x.ref[x.refidx].nrecv_bytes = x.nrecv_bytes;
                if (++x.refidx == 10)
                {
                    x.refidx = 0;
                }
            }
        }
        if (nrecv > 0)
        {
            const double dt = static_cast<double>(tnow - tprev);
            out("%s size %" PRIu32 " total %" PRIu64 " lost %" PRIu64 " delta %" PRIu64 " lost %" PRIu64
                    " rate %.2f kS/s %.2f Mb/s (%.2f kS/s %.2f Mb/s)\n",
                    prefix, last_size, tot_nrecv, tot_nlost, nrecv, nlost,
                    static_cast<double>(nrecv) * 1e6 / dt, static_cast<double>(nrecv_bytes) * 8 * 1e3 / dt,
                    static_cast<double>(nrecv10s) * 1e6 / (10 * dt),
                    static_cast<double>(nrecv10s_bytes) * 8 * 1e3 / (10 * dt));
        }
    }

    std::vector<std::pair<frtps::GUID_t, LatStat>> snap;
    {
        std::lock_guard<std::mutex> lk(g_lat_mtx);
        for (auto& kv : g_latstats)
        {
            if (kv.second.cnt > 0)
            {
                LatStat fresh;
                fresh.raw.reserve(PINGPONG_RAWSIZE);
                snap.emplace_back(kv.first, std::move(kv.second));
                kv.second = std::move(fresh);
            }
        }
    }
    for (auto& e : snap)
    {
        LatStat& y = e.second;
        std::vector<int64_t>& raw = y.raw;
        const size_t n = raw.size();
        std::sort(raw.begin(), raw.end());
        const std::string label = peer_label(e.first);
        out("%s %s size %" PRIu32 " mean %.3fus min %.3fus 50%% %.3fus 90%% %.3fus 99%% %.3fus max %.3fus cnt %"
                PRIu32 "\n",
                prefix, label.c_str(), configured_size(),
                static_cast<double>(y.sum) / static_cast<double>(y.cnt) / 1e3,
                static_cast<double>(y.min) / 1e3,
                static_cast<double>(raw[n - (n + 1) / 2]) / 1e3,
                static_cast<double>(raw[n - (n + 9) / 10]) / 1e3,
                static_cast<double>(raw[n - (n + 99) / 100]) / 1e3,
                static_cast<double>(y.max) / 1e3,
                y.cnt);
    }
}

// ---------------------------------------------------------------------------
// main

static uint32_t min_matched()
{
    uint32_t m = UINT32_MAX;
    bool any = false;
    if (opt.mode_ping)
    {
        m = std::min(m, expected_pongers()); // not listeners' ping readers
        m = std::min(m, g_m_pong_rd.count());
        any = true;
    }
    if (opt.mode_pub)
    {
        m = std::min(m, g_m_data_wr.count());
        if (opt.ping_frac > 0)
        {
            m = std::min(m, g_m_pong_rd.count());
        }
        any = true;
    }
    if (!any)
    {
        if (opt.mode_sub)
        {
            m = std::min(m, g_m_data_rd.count());
        }
        if (g_rd_ping != nullptr)
        {
            m = std::min(m, g_m_ping_rd.count());
        }
    }
    return (m == UINT32_MAX) ? 0 : m;
}

static void wait_until(
        int64_t t_mono)
{
    std::unique_lock<std::mutex> lk(g_wake_mtx);
    int64_t now = mono_ns();
    if (t_mono <= now)
    {
        return;
    }
    // cap at 50 ms so signals and pending pong-writer creations are seen promptly
    int64_t d = std::min<int64_t>(t_mono - now, 50000000);
    g_wake_cv.wait_for(lk, std::chrono::nanoseconds(d));
}

static size_t socket_buffer_size()
{
    // as large as the kernel lets an unprivileged process go, up to 8 MiB
    size_t v = 4u * 1024u * 1024u;
    FILE* f = fopen("/proc/sys/net/core/rmem_max", "r");
    if (f)
    {
        unsigned long x;
        if (fscanf(f, "%lu", &x) == 1 && x >= 212992)
        {
            v = std::min<unsigned long>(x, 8ul * 1024ul * 1024ul);
        }
        fclose(f);
    }
    return v;
}

int main(
        int argc,
        char** argv)
{
    setvbuf(stdout, nullptr, _IOLBF, 0);
    g_pid = static_cast<int>(getpid());
    parse_args(argc, argv);

    signal(SIGINT, signal_handler);
    signal(SIGTERM, signal_handler);
    signal(SIGHUP, signal_handler);
    signal(SIGPIPE, SIG_IGN);

    const char* tsuf = halyard_bench::perf_topic_suffix(opt.topic);
    const char rel = opt.reliable ? 'R' : 'U';
    const std::string tn_data = std::string("DDSPerf") + rel + "Data" + tsuf;
    const std::string tn_ping = std::string("DDSPerf") + rel + "Ping" + tsuf;
    const std::string tn_pong = std::string("DDSPerf") + rel + "Pong" + tsuf;

    // Participant: UDPv4 on loopback only, ddsperf-style USER_DATA except for
    // a listener (pingers must neither expect its pongs nor count it as a peer)
    DomainParticipantQos pqos = PARTICIPANT_QOS_DEFAULT;
    pqos.name("fastdds-perf");
    if (!opt.mode_listen)
    {
        char host[256];
        if (gethostname(host, sizeof(host)) != 0)
        {
            strcpy(host, "?");
        }
        host[sizeof(host) - 1] = 0;
        char ud[400];
        snprintf(ud, sizeof(ud), "DDSPerf:%d:%d:%s", opt.mode_sub ? 1 : 0, g_pid, host);
        std::vector<eprosima::fastrtps::rtps::octet> v(ud, ud + strlen(ud));
        pqos.user_data().data_vec(v);
    }
    {
        const uint32_t bufsz = static_cast<uint32_t>(socket_buffer_size());
        auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
        udp->interfaceWhiteList.push_back("127.0.0.1");
        udp->sendBufferSize = bufsz;
        udp->receiveBufferSize = bufsz;
        pqos.transport().use_builtin_transports = false; // no SHM
        pqos.transport().user_transports.push_back(udp);
        pqos.transport().send_socket_buffer_size = bufsz;
        pqos.transport().listen_socket_buffer_size = bufsz;
    }

    // DDS Security: FASTPERF_SECURITY=DIR/NAME (a `halyard security init` identity) gives the
    // participant Fast DDS's builtin plugins with that identity and the set-up's documents.
    if (getenv("FASTPERF_VERBOSE") != nullptr)
    {
        eprosima::fastdds::dds::Log::SetVerbosity(eprosima::fastdds::dds::Log::Kind::Info);
    }
    if (const char* sec = getenv("FASTPERF_SECURITY"))
    {
        const std::string id(sec);
        const size_t slash = id.find_last_of('/');
        const std::string dir = slash == std::string::npos ? std::string(".") : id.substr(0, slash);
        auto abs = [](const std::string& path) {
            char buf[4096];
            return std::string("file://") + (realpath(path.c_str(), buf) ? buf : path.c_str());
        };
        auto& props = pqos.properties().properties();
        props.emplace_back("dds.sec.auth.plugin", "builtin.PKI-DH");
        props.emplace_back("dds.sec.auth.builtin.PKI-DH.identity_ca", abs(dir + "/identity_ca.pem"));
        props.emplace_back("dds.sec.auth.builtin.PKI-DH.identity_certificate", abs(id + "/identity.pem"));
        props.emplace_back("dds.sec.auth.builtin.PKI-DH.private_key", abs(id + "/identity_key.pem"));
        props.emplace_back("dds.sec.access.plugin", "builtin.Access-Permissions");
        props.emplace_back("dds.sec.access.builtin.Access-Permissions.permissions_ca",
                abs(dir + "/permissions_ca.pem"));
        props.emplace_back("dds.sec.access.builtin.Access-Permissions.governance", abs(dir + "/governance.p7s"));
        props.emplace_back("dds.sec.access.builtin.Access-Permissions.permissions", abs(id + "/permissions.p7s"));
        props.emplace_back("dds.sec.crypto.plugin", "builtin.AES-GCM-GMAC");
    }
    if (opt.durability == PERSISTENT_DURABILITY_QOS)
    {
        fprintf(stderr, "[%d] note: Fast DDS 2.9 does not support PERSISTENT durability; "
                "readers and writers are TRANSIENT, with %s\n", g_pid,
                opt.persistence_db.empty() ? "SQLite persistence in a private file removed at exit" : "SQLite persistence in --persistence-db");
    }
    if (opt.durability >= TRANSIENT_DURABILITY_QOS)
    {
        // Every TRANSIENT/PERSISTENT endpoint opens this file (a connection
        // each).  Fast DDS 2.9 cannot use ":memory:" (it opens without
        // SQLITE_OPEN_CREATE first, finds an empty database and rejects its
        // "old schema version 1"), so without --persistence-db the process
        // uses a private file in /dev/shm (tmpfs: syncs are cheap), removed at
        // exit: nothing outlives the process, as with TRANSIENT_LOCAL.
        std::string db = opt.persistence_db;
        if (db.empty())
        {
            const char* dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
            snprintf(g_private_db[0], sizeof(g_private_db[0]), "%s/fastdds-perf-%d.db", dir, g_pid);
            const char* sfx[] = {"-journal", "-wal", "-shm"};
            for (int i = 0; i < 3; i++)
            {
                snprintf(g_private_db[i + 1], sizeof(g_private_db[i + 1]), "%s%s", g_private_db[0], sfx[i]);
            }
            remove_private_db(); // a stale file of an earlier process with this pid
            atexit(remove_private_db);
            db = g_private_db[0];
        }
        auto& props = pqos.properties().properties();
        props.emplace_back("dds.persistence.plugin", "builtin.SQLITE3");
        props.emplace_back("dds.persistence.sqlite3.filename", db);
    }

    static ParticipantListener plistener;
    DomainParticipantFactory* factory = DomainParticipantFactory::get_instance();
    g_need_pong_writers = !opt.mode_listen && ((opt.mode_pong || !opt.mode_ping) || opt.mode_sub);
    g_dp = factory->create_participant(opt.domain, pqos, &plistener, StatusMask::none());
    if (g_dp == nullptr)
    {
        out("[%d] error: create_participant(domain %d) failed\n", g_pid, opt.domain);
        return 2;
    }
    g_own_prefix = g_dp->guid().guidPrefix;

    g_ptype = new PerfType(opt.topic);
    g_type = TypeSupport(g_ptype);
    if (g_type.register_type(g_dp) != ReturnCode_t::RETCODE_OK)
    {
        out("[%d] error: register_type failed\n", g_pid);
        return 2;
    }
    TopicQos tq = TOPIC_QOS_DEFAULT;
    tq.reliability().kind = opt.reliable ? RELIABLE_RELIABILITY_QOS : BEST_EFFORT_RELIABILITY_QOS;
    tq.reliability().max_blocking_time = eprosima::fastrtps::Duration_t(10, 0);
    tq.durability().kind = dds_durability();
    g_tp_data = g_dp->create_topic(tn_data, g_type.get_type_name(), tq);
    g_tp_ping = g_dp->create_topic(tn_ping, g_type.get_type_name(), tq);
    g_tp_pong = g_dp->create_topic(tn_pong, g_type.get_type_name(), tq);
    if (!g_tp_data || !g_tp_ping || !g_tp_pong)
    {
        out("[%d] error: create_topic failed\n", g_pid);
        return 2;
    }

    g_pub = g_dp->create_publisher(PUBLISHER_QOS_DEFAULT);
    g_sub = g_dp->create_subscriber(SUBSCRIBER_QOS_DEFAULT);
    SubscriberQos spq = SUBSCRIBER_QOS_DEFAULT;
    spq.partition().push_back(guid_string(g_own_prefix).c_str());
    g_sub_pong = g_dp->create_subscriber(spq);
    if (!g_pub || !g_sub || !g_sub_pong)
    {
        out("[%d] error: create_publisher/subscriber failed\n", g_pid);
        return 2;
    }

    static WriterMatchListener l_ping_wr(&g_m_ping_wr);
    static WriterMatchListener l_data_wr(&g_m_data_wr);
    static PingListener l_ping_rd(&g_m_ping_rd);
    static DataListener l_data_rd(&g_m_data_rd);
    static PongListener l_pong_rd(&g_m_pong_rd);
    static ListenListener l_listen_rd(&g_m_ping_rd);
    const StatusMask rd_mask = StatusMask::data_available() << StatusMask::subscription_matched();

    fill_sample(g_ping_sample);

    // ping reader: every process that is not only a pinger answers pings,
    // except a listener, which only counts them
    if (opt.mode_pong || !opt.mode_ping)
    {
        DataReaderQos rq = DATAREADER_QOS_DEFAULT;
        common_reader_qos(rq, false);
        DataReaderListener* l = opt.mode_listen ? static_cast<DataReaderListener*>(&l_listen_rd) : &l_ping_rd;
        g_rd_ping = g_sub->create_datareader(g_tp_ping, rq, l, rd_mask);
        if (!g_rd_ping)
        {
            out("[%d] error: create_datareader(%s) failed\n", g_pid, tn_ping.c_str());
            return 2;
        }
    }
    if (opt.mode_ping)
    {
        DataWriterQos wq = DATAWRITER_QOS_DEFAULT;
        common_writer_qos(wq, false);
        g_wr_ping = g_pub->create_datawriter(g_tp_ping, wq, &l_ping_wr, StatusMask::publication_matched());
        if (!g_wr_ping)
        {
            out("[%d] error: create_datawriter(%s) failed\n", g_pid, tn_ping.c_str());
            return 2;
        }
    }
    if (opt.mode_sub)
    {
        DataReaderQos rq = DATAREADER_QOS_DEFAULT;
        common_reader_qos(rq, true);
        g_rd_data = g_sub->create_datareader(g_tp_data, rq, &l_data_rd, rd_mask);
        if (!g_rd_data)
        {
            out("[%d] error: create_datareader(%s) failed\n", g_pid, tn_data.c_str());
            return 2;
        }
    }
    if (opt.mode_pub)
    {
        DataWriterQos wq = DATAWRITER_QOS_DEFAULT;
        common_writer_qos(wq, true, topic_persistence_guid(tn_data));
        g_wr_data = g_pub->create_datawriter(g_tp_data, wq, &l_data_wr, StatusMask::publication_matched());
        if (!g_wr_data)
        {
            out("[%d] error: create_datawriter(%s) failed\n", g_pid, tn_data.c_str());
            return 2;
        }
    }
    if (opt.mode_ping || (opt.mode_pub && opt.ping_frac > 0))
    {
        DataReaderQos rq = DATAREADER_QOS_DEFAULT;
        common_reader_qos(rq, true);
        g_rd_pong = g_sub_pong->create_datareader(g_tp_pong, rq, &l_pong_rd, rd_mask);
        if (!g_rd_pong)
        {
            out("[%d] error: create_datareader(%s) failed\n", g_pid, tn_pong.c_str());
            return 2;
        }
    }

    // Wait for the required number of peers before starting (ddsperf -Qinitwait)
    bool minmatch_ok = true;
    if (opt.minmatch > 0 && opt.initwait > 0)
    {
        const int64_t tend = mono_ns() + static_cast<int64_t>(opt.initwait * 1e9);
        while (!g_term.load() && min_matched() < opt.minmatch && mono_ns() < tend)
        {
            create_pending_pong_writers();
            wait_until(std::min(tend, mono_ns() + 10000000));
        }
        if (min_matched() < opt.minmatch)
        {
            minmatch_ok = false;
        }
        else
        {
            const int64_t t100 = mono_ns() + 100000000;
            while (mono_ns() < t100)
            {
                create_pending_pong_writers();
                wait_until(t100);
            }
        }
    }

    g_tstart = mono_ns();
    std::thread pubthr;
    int64_t tnow = g_tstart;
    if (minmatch_ok && !g_term.load())
    {
        if (opt.mode_pub && opt.pub_rate > 0)
        {
            pubthr = std::thread(pub_thread);
        }
        const int64_t tstop = (opt.dur == HUGE_VAL) ? NEVER : g_tstart + static_cast<int64_t>(opt.dur * 1e9 + 0.5);
        int64_t tnext = g_tstart + 1000000000;
        int64_t tlast = g_tstart;
        int64_t tnextping = NEVER;
        if (opt.mode_ping && opt.ping_intv != NEVER)
        {
            tnextping = (opt.ping_intv == 0) ? g_tstart + 1000000000 : g_tstart + opt.ping_intv;
        }
        while (!g_term.load() && tnow < tstop)
        {
            create_pending_pong_writers();
            int64_t twakeup = std::min(std::min(tnext, tstop), tnextping);
            wait_until(twakeup);
            tnow = mono_ns();
            if (tnext <= tnow)
            {
                print_stats(tnow, tlast);
                tlast = tnow;
                if (tnow > tnext + 500000000)
                {
                    tnext = tnow + 1000000000;
                }
                else
                {
                    tnext += 1000000000;
                }
            }
            if (tnextping <= tnow && !g_term.load())
            {
                maybe_send_new_ping(tnow, &tnextping);
            }
        }
    }

    // Shutdown
    g_term.store(true);
    if (pubthr.joinable())
    {
        pubthr.join();
    }
    if (opt.mode_pub)
    {
        out("[%d] %.3f  pub sent %" PRIu64 "\n", g_pid, secs_since_start(mono_ns()), g_pub_sent.load());
        if (g_wr_data != nullptr && opt.reliable)
        {
            // linger like a Cyclone writer does on deletion (1 s): let matched
            // readers receive what was already written
            g_wr_data->wait_for_acknowledgments(eprosima::fastrtps::Duration_t(1, 0));
        }
    }
    if (g_rd_ping)
    {
        g_rd_ping->set_listener(nullptr);
    }
    if (g_rd_data)
    {
        g_rd_data->set_listener(nullptr);
    }
    if (g_rd_pong)
    {
        g_rd_pong->set_listener(nullptr);
    }
    const uint32_t matched_at_end = min_matched();

    int status = 0;
    uint64_t nlost = 0;
    {
        std::lock_guard<std::mutex> lk(g_sub_mtx);
        for (auto& kv : g_substats)
        {
            nlost += kv.second.nlost;
        }
    }

    if (!opt.latency_dump.empty())
    {
        FILE* f = fopen(opt.latency_dump.c_str(), "w");
        if (f == nullptr)
        {
            fprintf(stderr, "[%d] error: cannot open %s: %s\n", g_pid, opt.latency_dump.c_str(), strerror(errno));
            status = 1;
        }
        else
        {
            std::lock_guard<std::mutex> lk(g_lat_mtx);
            for (const auto& e : g_latdump)
            {
                fprintf(f, "%.6f %" PRId64 "\n", secs_since_start(e.first), e.second);
            }
            if (fclose(f) != 0)
            {
                status = 1;
            }
        }
    }

    if (!minmatch_ok)
    {
        out("[%d] error: too few matching participants (%" PRIu32 ")\n", g_pid, matched_at_end);
        status = 1;
    }
    // only a reliable KEEP_ALL reader (sub) must not lose samples; the
    // listener's KEEP_LAST 1 ping reader may be overwritten before a take
    if (nlost > 0 && opt.reliable && opt.mode_sub)
    {
        out("[%d] error: %" PRIu64 " samples lost\n", g_pid, nlost);
        status = 1;
    }
    if (g_failed2.load())
    {
        status = 2;
    }
    fflush(stdout);

    // Deleting the participant should be quick; never let a middleware hang
    // at exit keep the process (and the benchmark) waiting.
    std::thread([status]() {
                std::this_thread::sleep_for(std::chrono::seconds(10));
                fprintf(stderr, "[%d] shutdown of the participant timed out\n", g_pid);
                fflush(stdout);
                fflush(stderr);
                remove_private_db();
                _exit(status);
            }).detach();
    g_dp->set_listener(nullptr);
    if (g_dp->delete_contained_entities() != ReturnCode_t::RETCODE_OK)
    {
        fprintf(stderr, "[%d] delete_contained_entities failed\n", g_pid);
    }
    if (factory->delete_participant(g_dp) != ReturnCode_t::RETCODE_OK)
    {
        fprintf(stderr, "[%d] delete_participant failed\n", g_pid);
    }
    fflush(stdout);
    return status;
}
