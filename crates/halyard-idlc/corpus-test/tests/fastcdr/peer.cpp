// The Fast DDS side of interop_fastcdr.rs: Fast DDS 2.9's HelloWorld type (its HelloWorld.idl
// example: `unsigned long index; string message;`) serialized the way fastddsgen 2.x generates
// it (HelloWorld::serialize / deserialize: the members in order through eprosima::fastcdr::Cdr,
// DDS_CDR encapsulation, i.e. XCDR1 with its 4-byte header). fastddsgen is not installed here,
// so these few lines stand in for its output.
//
// usage: peer read FILE   -> prints "index=<n> message=<s>"
//        peer write FILE  -> writes HelloWorld{index=3, message="HelloWorld"}
#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>

#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: peer read|write FILE\n";
        return 2;
    }
    std::string mode = argv[1];
    if (mode == "read") {
        std::ifstream in(argv[2], std::ios::binary);
        std::vector<char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        eprosima::fastcdr::FastBuffer buf(data.data(), data.size());
        eprosima::fastcdr::Cdr cdr(buf, eprosima::fastcdr::Cdr::DEFAULT_ENDIAN, eprosima::fastcdr::Cdr::DDS_CDR);
        try {
            cdr.read_encapsulation();
            uint32_t index = 0;
            std::string message;
            cdr >> index;
            cdr >> message;
            std::cout << "index=" << index << " message=" << message << std::endl;
        } catch (const std::exception& e) {
            std::cerr << "fastcdr: " << e.what() << std::endl;
            return 1;
        }
        return 0;
    }
    if (mode == "write") {
        std::vector<char> data(256);
        eprosima::fastcdr::FastBuffer buf(data.data(), data.size());
        eprosima::fastcdr::Cdr cdr(buf, eprosima::fastcdr::Cdr::LITTLE_ENDIANNESS, eprosima::fastcdr::Cdr::DDS_CDR);
        cdr.serialize_encapsulation();
        uint32_t index = 3;
        std::string message = "HelloWorld";
        cdr << index;
        cdr << message;
        std::ofstream out(argv[2], std::ios::binary);
        out.write(data.data(), static_cast<std::streamsize>(cdr.getSerializedDataLength()));
        return 0;
    }
    std::cerr << "usage: peer read|write FILE\n";
    return 2;
}
