// Hand-written Fast DDS TopicDataType for the ddsperf types used by the
// benchmark (see bench/PEERS.md): KeyedSeq (KS), Unkeyed16 (UK16) and
// Unkeyed1024 (UK1024).  All are @final structs, serialized as plain XCDR1
// (CDR_LE from this little-endian host; CDR_BE accepted on input).
//
//   KeyedSeq    { uint32 seq; @key uint32 keyval; sequence<octet> baggage; }
//   Unkeyed16   { uint32 seq; octet baggage[12]; }
//   Unkeyed1024 { uint32 seq; octet baggage[1020]; }
//
// One in-memory representation (PerfSample) serves all three; for the
// fixed-size types the baggage vector is treated as the fixed array (missing
// bytes are written as 0xEE, surplus bytes ignored).
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/rtps/common/InstanceHandle.h>
#include <fastdds/rtps/common/SerializedPayload.h>
#include <fastrtps/utils/md5.h>

namespace halyard_bench {

enum class PerfKind { KS, UK16, UK1024 };

struct PerfSample
{
    uint32_t seq = 0;
    uint32_t keyval = 0;
    std::vector<uint8_t> baggage;
};

// Largest KeyedSeq baggage accepted (the contract requires 10 MiB samples).
static constexpr uint32_t kMaxBaggage = 16u * 1024u * 1024u;

inline const char* perf_type_name(PerfKind k)
{
    switch (k)
    {
        case PerfKind::KS: return "KeyedSeq";
        case PerfKind::UK16: return "Unkeyed16";
        case PerfKind::UK1024: return "Unkeyed1024";
    }
    return "?";
}

inline const char* perf_topic_suffix(PerfKind k)
{
    switch (k)
    {
        case PerfKind::KS: return "KS";
        case PerfKind::UK16: return "UK16";
        case PerfKind::UK1024: return "UK1024";
    }
    return "?";
}

// The ddsperf "size" of a sample: 12 + baggage for KS, the struct size otherwise.
inline uint32_t perf_sample_size(PerfKind k, const PerfSample& s)
{
    switch (k)
    {
        case PerfKind::KS: return 12u + static_cast<uint32_t>(s.baggage.size());
        case PerfKind::UK16: return 16u;
        case PerfKind::UK1024: return 1024u;
    }
    return 0;
}

class PerfType : public eprosima::fastdds::dds::TopicDataType
{
public:

    explicit PerfType(
            PerfKind kind)
        : kind_(kind)
    {
        setName(perf_type_name(kind));
        // Maximum serialized size: encapsulation header + body (+ padding).
        switch (kind)
        {
            case PerfKind::KS: m_typeSize = 4u + 12u + kMaxBaggage + 3u; break;
            case PerfKind::UK16: m_typeSize = 4u + 16u; break;
            case PerfKind::UK1024: m_typeSize = 4u + 1024u; break;
        }
        m_isGetKeyDefined = (kind == PerfKind::KS);
        auto_fill_type_object(false);
        auto_fill_type_information(false);
    }

    PerfKind kind() const
    {
        return kind_;
    }

    // Serialized length including the 4-byte encapsulation header and the
    // trailing padding to a multiple of 4 (pad count goes in the options).
    uint32_t serialized_size(
            const PerfSample& s) const
    {
        uint32_t body = 0;
        switch (kind_)
        {
            case PerfKind::KS: body = 12u + static_cast<uint32_t>(s.baggage.size()); break;
            case PerfKind::UK16: body = 16u; break;
            case PerfKind::UK1024: body = 1024u; break;
        }
        return 4u + body + ((4u - (body & 3u)) & 3u);
    }

    bool serialize(
            void* data,
            eprosima::fastrtps::rtps::SerializedPayload_t* payload) override
    {
        const PerfSample* s = static_cast<const PerfSample*>(data);
        if (kind_ == PerfKind::KS && s->baggage.size() > kMaxBaggage)
        {
            return false;
        }
        const uint32_t total = serialized_size(*s);
        if (payload->max_size < total || payload->data == nullptr)
        {
            return false;
        }
        uint8_t* d = payload->data;
        uint32_t body = total - 4u;
        uint32_t pad = 0;
        switch (kind_)
        {
            case PerfKind::KS:
            {
                const uint32_t n = static_cast<uint32_t>(s->baggage.size());
                pad = body - (12u + n);
                put_u32(d + 4, s->seq);
                put_u32(d + 8, s->keyval);
                put_u32(d + 12, n);
                if (n > 0)
                {
                    std::memcpy(d + 16, s->baggage.data(), n);
                }
                break;
            }
            case PerfKind::UK16:
            case PerfKind::UK1024:
            {
                const uint32_t n = (kind_ == PerfKind::UK16) ? 12u : 1020u;
                put_u32(d + 4, s->seq);
                const uint32_t have = static_cast<uint32_t>(s->baggage.size() < n ? s->baggage.size() : n);
                if (have > 0)
                {
                    std::memcpy(d + 8, s->baggage.data(), have);
                }
                if (have < n)
                {
                    std::memset(d + 8 + have, 0xee, n - have);
                }
                break;
            }
        }
        if (pad > 0)
        {
            std::memset(d + total - pad, 0, pad);
        }
        d[0] = 0x00;
        d[1] = 0x01; // CDR_LE
        d[2] = 0x00;
        d[3] = static_cast<uint8_t>(pad);
        payload->encapsulation = CDR_LE;
        payload->length = total;
        return true;
    }

    bool deserialize(
            eprosima::fastrtps::rtps::SerializedPayload_t* payload,
            void* data) override
    {
        PerfSample* s = static_cast<PerfSample*>(data);
        const uint8_t* d = payload->data;
        const uint32_t len = payload->length;
        if (d == nullptr || len < 8u)
        {
            return false;
        }
        // Encapsulation: 0x0000 CDR_BE, 0x0001 CDR_LE; anything else rejected.
        if (d[0] != 0 || (d[1] != 0 && d[1] != 1))
        {
            return false;
        }
        const bool le = (d[1] == 1);
        switch (kind_)
        {
            case PerfKind::KS:
            {
                if (len < 16u)
                {
                    return false;
                }
                const uint32_t n = get_u32(d + 12, le);
                if (n > len - 16u)
                {
                    return false;
                }
                s->seq = get_u32(d + 4, le);
                s->keyval = get_u32(d + 8, le);
                s->baggage.assign(d + 16, d + 16 + n);
                return true;
            }
            case PerfKind::UK16:
            case PerfKind::UK1024:
            {
                const uint32_t n = (kind_ == PerfKind::UK16) ? 12u : 1020u;
                if (len < 8u + n)
                {
                    return false;
                }
                s->seq = get_u32(d + 4, le);
                s->keyval = 0;
                s->baggage.assign(d + 8, d + 8 + n);
                return true;
            }
        }
        return false;
    }

    std::function<uint32_t()> getSerializedSizeProvider(
            void* data) override
    {
        const PerfSample* s = static_cast<const PerfSample*>(data);
        const uint32_t sz = serialized_size(*s);
        return [sz]() -> uint32_t {
                   return sz;
               };
    }

    void* createData() override
    {
        return new PerfSample();
    }

    void deleteData(
            void* data) override
    {
        delete static_cast<PerfSample*>(data);
    }

    // Key hash per XTypes: the key members serialized big-endian (XCDR1),
    // zero-padded to 16 bytes since the key's maximum size (4) is <= 16; MD5
    // only when forced.
    bool getKey(
            void* data,
            eprosima::fastrtps::rtps::InstanceHandle_t* handle,
            bool force_md5 = false) override
    {
        if (kind_ != PerfKind::KS)
        {
            return false;
        }
        const PerfSample* s = static_cast<const PerfSample*>(data);
        uint8_t key[16] = {0};
        key[0] = static_cast<uint8_t>(s->keyval >> 24);
        key[1] = static_cast<uint8_t>(s->keyval >> 16);
        key[2] = static_cast<uint8_t>(s->keyval >> 8);
        key[3] = static_cast<uint8_t>(s->keyval);
        if (force_md5)
        {
            MD5 md5;
            md5.init();
            md5.update(key, 4u);
            md5.finalize();
            for (int i = 0; i < 16; ++i)
            {
                handle->value[i] = md5.digest[i];
            }
        }
        else
        {
            for (int i = 0; i < 16; ++i)
            {
                handle->value[i] = key[i];
            }
        }
        return true;
    }

    bool is_bounded() const override
    {
        return false; // keeps Fast DDS away from data-sharing / fixed-size pools
    }

    bool is_plain() const override
    {
        return false;
    }

private:

    static void put_u32(
            uint8_t* p,
            uint32_t v)
    {
        p[0] = static_cast<uint8_t>(v);
        p[1] = static_cast<uint8_t>(v >> 8);
        p[2] = static_cast<uint8_t>(v >> 16);
        p[3] = static_cast<uint8_t>(v >> 24);
    }

    static uint32_t get_u32(
            const uint8_t* p,
            bool le)
    {
        if (le)
        {
            return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
                   (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
        }
        return static_cast<uint32_t>(p[3]) | (static_cast<uint32_t>(p[2]) << 8) |
               (static_cast<uint32_t>(p[1]) << 16) | (static_cast<uint32_t>(p[0]) << 24);
    }

    PerfKind kind_;
};

} // namespace halyard_bench
