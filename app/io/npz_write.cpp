// Writing .npz archives member by member straight into a Sink (the temporary file of an
// atomic write): a trace of 2 GiB is written from the trace's own memory, never copied
// into an archive in memory first. The archive is what numpy.savez writes: one stored
// (uncompressed) .npy member per array, dated 1980-01-01, with zip64 records only
// where a size or an offset does not fit 32 bits.
#include <zlib.h>

#include <cstring>
#include <limits>
#include <sstream>

#include "files.hpp"

namespace mha::io {
namespace {

constexpr std::uint64_t k32 = 0xFFFFFFFFu;

struct Bytes {
  std::string s;
  Bytes& u16(std::uint32_t v) {
    for (int i = 0; i < 2; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
    return *this;
  }
  Bytes& u32(std::uint64_t v) {
    for (int i = 0; i < 4; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
    return *this;
  }
  Bytes& u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
    return *this;
  }
};

// One member: its .npy header (built here) and its data (the caller's memory).
struct Member {
  std::string name;  // with ".npy"
  std::string header;
  const char* data = nullptr;
  std::uint64_t data_size = 0;
  std::uint32_t crc = 0;
  std::uint64_t offset = 0;  // of its local header
  std::uint64_t size() const { return header.size() + data_size; }
};

std::uint32_t Crc(std::uint32_t crc, const char* p, std::uint64_t n) {
  while (n > 0) {
    const auto chunk = static_cast<uInt>(std::min<std::uint64_t>(n, 1u << 30));
    crc = static_cast<std::uint32_t>(crc32(crc, reinterpret_cast<const Bytef*>(p), chunk));
    p += chunk;
    n -= chunk;
  }
  return crc;
}

bool Ascii(const std::string& s) {
  for (unsigned char c : s)
    if (c >= 0x80) return false;
  return true;
}

// numpy.savez's time stamp: 1980-01-01 00:00 (DOS date: day 1, month 1, year 0).
constexpr std::uint32_t kDosTime = 0, kDosDate = (1 << 5) | 1;

std::string LocalHeader(const Member& m, bool zip64) {
  Bytes b;
  b.u32(0x04034b50).u16(zip64 ? 45 : 20).u16(Ascii(m.name) ? 0 : 0x800).u16(0).u16(kDosTime).u16(kDosDate);
  b.u32(m.crc).u32(zip64 ? k32 : m.size()).u32(zip64 ? k32 : m.size());
  b.u16(static_cast<std::uint32_t>(m.name.size())).u16(zip64 ? 20 : 0);
  b.s += m.name;
  if (zip64) b.u16(1).u16(16).u64(m.size()).u64(m.size());
  return b.s;
}

std::string CentralHeader(const Member& m, bool force64) {
  const bool big_size = force64 || m.size() >= k32, big_off = force64 || m.offset >= k32;
  Bytes extra;
  if (big_size) extra.u64(m.size()).u64(m.size());
  if (big_off) extra.u64(m.offset);
  const bool zip64 = big_size || big_off;
  Bytes b;
  b.u32(0x02014b50).u16((3 << 8) | 45).u16(zip64 ? 45 : 20).u16(Ascii(m.name) ? 0 : 0x800).u16(0);
  b.u16(kDosTime).u16(kDosDate).u32(m.crc);
  b.u32(big_size ? k32 : m.size()).u32(big_size ? k32 : m.size());
  b.u16(static_cast<std::uint32_t>(m.name.size())).u16(zip64 ? 4 + static_cast<std::uint32_t>(extra.s.size()) : 0);
  b.u16(0).u16(0).u16(0).u32(std::uint64_t(0100644) << 16).u32(big_off ? k32 : m.offset);
  b.s += m.name;
  if (zip64) b.u16(1).u16(static_cast<std::uint32_t>(extra.s.size())).s += extra.s;
  return b.s;
}

std::string EndRecords(std::uint64_t entries, std::uint64_t cd_offset, std::uint64_t cd_size, bool force64) {
  const bool zip64 = force64 || entries >= 0xFFFF || cd_offset >= k32 || cd_size >= k32;
  Bytes b;
  if (zip64) {
    const std::uint64_t at = cd_offset + cd_size;
    b.u32(0x06064b50).u64(44).u16((3 << 8) | 45).u16(45).u32(0).u32(0);
    b.u64(entries).u64(entries).u64(cd_size).u64(cd_offset);
    b.u32(0x07064b50).u32(0).u64(at).u32(1);
  }
  b.u32(0x06054b50).u16(0).u16(0);
  b.u16(zip64 ? 0xFFFF : entries).u16(zip64 ? 0xFFFF : entries);
  b.u32(zip64 ? k32 : cd_size).u32(zip64 ? k32 : cd_offset).u16(0);
  return b.s;
}

// Counts what passes through, so offsets are known without seeking (a pipe cannot seek).
class CountingSink {
 public:
  explicit CountingSink(Sink& s) : s_(s) {}
  void Write(const char* p, std::uint64_t n) {
    while (n > 0) {  // Sink takes size_t chunks
      const auto chunk = static_cast<std::size_t>(std::min<std::uint64_t>(n, std::size_t(1) << 30));
      s_.Write(p, chunk);
      p += chunk;
      n -= chunk;
      at_ += chunk;
    }
  }
  void Write(const std::string& s) { Write(s.data(), s.size()); }
  std::uint64_t at() const { return at_; }

 private:
  Sink& s_;
  std::uint64_t at_ = 0;
};

}  // namespace

std::string NpyHeader(const std::string& descr, const std::vector<std::int64_t>& shape) {
  std::ostringstream h;
  h << "{'descr': '" << descr << "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) h << (i ? ", " : "") << shape[i];
  if (shape.size() == 1) h << ",";
  h << "), }";
  std::string header = h.str();
  // Pad with spaces so magic + len + header + '\n' is a multiple of 64, as numpy does.
  const std::size_t pre = 10;
  const std::size_t total = pre + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  const auto len = static_cast<std::uint16_t>(header.size());
  out += static_cast<char>(len & 0xFF);
  out += static_cast<char>(len >> 8);
  return out + header;
}

void WriteNpz(Sink& out, const std::vector<TensorView>& tensors, const std::vector<RawArray>& raw, bool force_zip64) {
  std::vector<Member> members;
  members.reserve(tensors.size() + raw.size());
  for (const auto& t : tensors)
    members.push_back({t.name + ".npy", NpyHeader("<f4", t.shape), reinterpret_cast<const char*>(t.data),
                       static_cast<std::uint64_t>(t.size()) * sizeof(float)});
  for (const auto& r : raw)
    members.push_back({r.name + ".npy", NpyHeader(r.descr, r.shape), r.data.data(), r.data.size()});
  CountingSink s(out);
  for (Member& m : members) {
    // The CRC goes in the local header, before the data: computed from memory first,
    // so nothing is seeked back to (the output may be a pipe).
    m.crc = Crc(Crc(0, m.header.data(), m.header.size()), m.data, m.data_size);
    m.offset = s.at();
    s.Write(LocalHeader(m, force_zip64 || m.size() >= k32));
    s.Write(m.header);
    s.Write(m.data, m.data_size);
  }
  const std::uint64_t cd_offset = s.at();
  for (const Member& m : members) s.Write(CentralHeader(m, force_zip64));
  s.Write(EndRecords(members.size(), cd_offset, s.at() - cd_offset, force_zip64));
}

std::string EncodeNpz(const std::vector<TensorView>& tensors, const std::vector<RawArray>& raw) {
  StringSink s;
  WriteNpz(s, tensors, raw);
  return std::move(s.bytes);
}

std::string EncodeNpy(const TensorView& t) {
  std::string out = NpyHeader("<f4", t.shape);
  out.append(reinterpret_cast<const char*>(t.data), static_cast<std::size_t>(t.size()) * sizeof(float));
  return out;
}

}  // namespace mha::io
