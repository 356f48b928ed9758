// Reading .npy arrays and .npz archives. Each member's .npy header is read and checked
// (shape, dtype, the caller's needs, the memory budget) before any of its data are
// inflated, and the data are converted to float32 as they are inflated: a small
// compressed file that claims gigabytes is refused at its header, and a member the
// caller does not use is never inflated at all.
#include <sys/stat.h>
#include <zip.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <vector>

#include "files.hpp"

namespace mha::io {
namespace {

constexpr std::int64_t kMaxElements = std::int64_t(1) << 28;  // 1 GiB of float32
// The header is a short Python dict; numpy itself refuses headers over 10000 bytes.
constexpr std::size_t kMaxHeaderBytes = std::size_t(1) << 16;

[[noreturn]] void Bad(const std::string& what, const std::string& why) {
  throw Error(what + " is not a valid numpy .npy array: " + why +
              ". Save arrays with numpy.savez(path, name=array) or mhaviz trace --npz.");
}

// The header dict, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 4), },
// parsed as the Python literal it is: exactly the three keys, each once (numpy takes
// the last of a repeated key, so a file could mean one thing to numpy and another here).
class HeaderParser {
 public:
  HeaderParser(const std::string& h, const std::string& what) : h_(h), what_(what) {}

  NpyInfo Parse() {
    NpyInfo r;
    std::set<std::string> seen;
    Expect('{');
    while (Skip() != '}') {
      const std::string key = String();
      if (!seen.insert(key).second) Bad(what_, "its header names '" + key + "' twice");
      Expect(':');
      Skip();
      if (key == "descr")
        r.descr = String();
      else if (key == "fortran_order")
        r.fortran = Bool();
      else if (key == "shape")
        r.shape = Shape();
      else
        Bad(what_, "its header has the unknown key '" + key + "'");
      if (Skip() == ',')
        ++i_;
      else if (Skip() != '}')
        Bad(what_, "its header is malformed after '" + key + "'");
    }
    for (const char* k : {"descr", "fortran_order", "shape"})
      if (!seen.count(k)) Bad(what_, std::string("the header has no '") + k + "'");
    return r;
  }

 private:
  char Skip() {
    while (i_ < h_.size() && (h_[i_] == ' ' || h_[i_] == '\n' || h_[i_] == '\t')) ++i_;
    if (i_ >= h_.size()) Bad(what_, "the header is not terminated");
    return h_[i_];
  }
  void Expect(char c) {
    if (Skip() != c) Bad(what_, std::string("the header is malformed (expected '") + c + "')");
    ++i_;
  }
  std::string String() {
    const char q = Skip();
    if (q != '\'' && q != '"') Bad(what_, "a header key or descr is not a string");
    const auto end = h_.find(q, i_ + 1);
    if (end == std::string::npos) Bad(what_, "a string in the header is not terminated");
    std::string s = h_.substr(i_ + 1, end - i_ - 1);
    i_ = end + 1;
    return s;
  }
  bool Bool() {
    for (const auto& [word, v] : {std::pair<const char*, bool>{"True", true}, {"False", false}})
      if (h_.compare(i_, std::strlen(word), word) == 0) {
        i_ += std::strlen(word);
        return v;
      }
    Bad(what_, "fortran_order is neither True nor False");
  }
  std::vector<std::int64_t> Shape() {
    if (h_[i_] != '(') Bad(what_, "shape is not a tuple");
    ++i_;
    std::vector<std::int64_t> shape;
    std::int64_t total = 1;
    while (Skip() != ')') {
      if (h_[i_] < '0' || h_[i_] > '9') Bad(what_, "a shape entry is not a number");
      std::int64_t n = 0;
      while (i_ < h_.size() && h_[i_] >= '0' && h_[i_] <= '9') {
        n = n * 10 + (h_[i_] - '0');
        if (n > kMaxElements) Bad(what_, "a dimension is absurdly large");
        ++i_;
      }
      shape.push_back(n);
      total *= n;
      if (total > kMaxElements)
        throw Error(what_ + " has more than " + std::to_string(kMaxElements) +
                    " elements, over the cap that keeps memory bounded.");
      if (shape.size() > 8) Bad(what_, "it has more than 8 dimensions");
      if (Skip() == ',') ++i_;
    }
    ++i_;
    return shape;
  }

  const std::string& h_;
  const std::string& what_;
  std::size_t i_ = 0;
};

// descr is byte order, kind, width in bytes: '<f4'. Anything else ('|O' objects, '<U3'
// strings, '<M8[D]' dates, '<c8' complex) is not a plain number.
struct Dtype {
  char kind = '?';
  int width = 0;
  bool swap = false;
};

Dtype ParseDtype(const std::string& descr, const std::string& what) {
  const char order = descr.size() > 0 ? descr[0] : '?';
  Dtype d;
  d.kind = descr.size() > 1 ? descr[1] : '?';
  const std::string w = descr.size() > 2 ? descr.substr(2) : "";
  d.width = w == "1" ? 1 : w == "2" ? 2 : w == "4" ? 4 : w == "8" ? 8 : 0;
  d.swap = order == '>';  // this machine is little-endian
  const bool ok_kind = (d.kind == 'f' && (d.width == 2 || d.width == 4 || d.width == 8)) ||
                       ((d.kind == 'i' || d.kind == 'u') && d.width > 0) || (d.kind == 'b' && d.width == 1);
  if (!ok_kind || (order != '<' && order != '>' && order != '|' && order != '='))
    throw Error(what + " has dtype '" + descr +
                "', which mhaviz cannot use as numbers. Store float32 (or float16 / float64 / integer) arrays, "
                "e.g. array.astype(numpy.float32).");
  return d;
}

template <typename T>
T Load(const unsigned char* p, bool swap) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, p, sizeof(T));
  if (swap)
    for (std::size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(b[i], b[sizeof(T) - 1 - i]);
  T v;
  std::memcpy(&v, b, sizeof(T));
  return v;
}

// IEEE 754 binary16 (numpy float16, e.g. weights saved from a half-precision model);
// every value is exactly representable in float32.
float HalfToFloat(std::uint16_t h) {
  const int exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  float v;
  if (exp == 0)
    v = std::ldexp(static_cast<float>(mant), -24);  // zero, subnormal
  else if (exp == 31)
    v = mant ? std::numeric_limits<float>::quiet_NaN()  // NaN, Inf
             : std::numeric_limits<float>::infinity();
  else
    v = std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
  return (h & 0x8000) ? -v : v;
}

float ToFloat(const unsigned char* p, const Dtype& d) {
  const bool s = d.swap;
  double v = 0;
  if (d.kind == 'f')
    v = d.width == 2 ? HalfToFloat(Load<std::uint16_t>(p, s)) : d.width == 4 ? Load<float>(p, s) : Load<double>(p, s);
  else if (d.kind == 'i')
    v = d.width == 1   ? Load<std::int8_t>(p, s)
        : d.width == 2 ? Load<std::int16_t>(p, s)
        : d.width == 4 ? Load<std::int32_t>(p, s)
                       : static_cast<double>(Load<std::int64_t>(p, s));
  else
    v = d.width == 1   ? Load<std::uint8_t>(p, s)
        : d.width == 2 ? Load<std::uint16_t>(p, s)
        : d.width == 4 ? Load<std::uint32_t>(p, s)
                       : static_cast<double>(Load<std::uint64_t>(p, s));
  return static_cast<float>(v);
}

// An integer element exactly as stored (for messages: float32 rounds large ones).
std::string IntegerText(const unsigned char* p, const Dtype& d) {
  const bool s = d.swap;
  if (d.kind == 'u')
    return std::to_string(d.width == 1   ? Load<std::uint8_t>(p, s)
                          : d.width == 2 ? Load<std::uint16_t>(p, s)
                          : d.width == 4 ? Load<std::uint32_t>(p, s)
                                         : Load<std::uint64_t>(p, s));
  return std::to_string(d.width == 1   ? Load<std::int8_t>(p, s)
                        : d.width == 2 ? Load<std::int16_t>(p, s)
                        : d.width == 4 ? Load<std::int32_t>(p, s)
                                       : Load<std::int64_t>(p, s));
}

// Where an .npy's bytes come from: a string, or a zip member being inflated.
class Source {
 public:
  virtual ~Source() = default;
  // Up to n bytes; fewer only at the end of the data. Throws on a corrupt stream.
  virtual std::size_t Read(char* p, std::size_t n) = 0;
  std::size_t ReadFull(char* p, std::size_t n) {
    std::size_t got = 0;
    while (got < n) {
      const std::size_t k = Read(p + got, n - got);
      if (k == 0) break;
      got += k;
    }
    return got;
  }
};

class StringSource : public Source {
 public:
  explicit StringSource(const std::string& s) : s_(s) {}
  std::size_t Read(char* p, std::size_t n) override {
    n = std::min(n, s_.size() - at_);
    std::memcpy(p, s_.data() + at_, n);
    at_ += n;
    return n;
  }

 private:
  const std::string& s_;
  std::size_t at_ = 0;
};

// The header of an .npy; *header_bytes gets its length (magic included).
NpyInfo ReadHeader(Source& src, const std::string& what, std::uint64_t* header_bytes) {
  char pre[12];
  const std::size_t got = src.ReadFull(pre, 10);
  if (got < 10 || std::memcmp(pre, "\x93NUMPY", 6) != 0) Bad(what, "it does not start with the \\x93NUMPY magic");
  const int major = static_cast<unsigned char>(pre[6]);
  std::size_t hlen = 0, hstart = 10;
  if (major == 1) {
    hlen = static_cast<unsigned char>(pre[8]) | (static_cast<unsigned char>(pre[9]) << 8);
  } else if (major == 2 || major == 3) {
    if (src.ReadFull(pre + 10, 2) < 2) Bad(what, "the header is truncated");
    for (int i = 3; i >= 0; --i) hlen = (hlen << 8) | static_cast<unsigned char>(pre[8 + i]);
    hstart = 12;
  } else {
    Bad(what, "format version " + std::to_string(major) + " is unknown");
  }
  if (hlen > kMaxHeaderBytes) Bad(what, "its header claims " + std::to_string(hlen) + " bytes");
  std::string h(hlen, '\0');
  if (src.ReadFull(h.data(), hlen) < hlen) Bad(what, "the header is truncated");
  NpyInfo info = HeaderParser(h, what).Parse();
  ParseDtype(info.descr, what);
  *header_bytes = hstart + hlen;
  return info;
}

// The data after the header, converted to float32 while they are read: the raw bytes
// are never held whole (float64 would double the peak, and 1-byte ints are 4x smaller).
// `proven`: the data are known to be there (a stored member that fits in the file), so
// the array is allocated at once; otherwise it grows as the data arrive, so a header and
// a zip entry that both lie get no memory they do not fill.
Array ReadData(Source& src, const NpyInfo& info, const std::string& what, bool proven) {
  const Dtype d = ParseDtype(info.descr, what);
  const std::int64_t n = info.count();
  Array a;
  a.shape = info.shape;
  a.source_dtype = info.descr;
  if (proven)
    a.data.resize(static_cast<std::size_t>(n));
  else
    a.data.reserve(static_cast<std::size_t>(std::min<std::int64_t>(n, std::int64_t(1) << 20)));
  std::vector<char> buf(std::size_t(1) << 16);
  std::size_t have = 0;  // bytes in buf not yet converted (a value cut by a chunk end)
  std::int64_t done = 0;
  while (done < n) {
    const std::size_t want = std::min<std::uint64_t>(buf.size() - have, std::uint64_t(n - done) * d.width - have);
    const std::size_t k = src.Read(buf.data() + have, want);
    if (k == 0)
      throw Error(what + " is truncated: its header promises " + std::to_string(n) + " values of " +
                  std::to_string(d.width) + " bytes but the data end after " + std::to_string(done) + " of them.");
    have += k;
    const std::size_t whole = have / d.width;
    const std::size_t end = static_cast<std::size_t>(done) + whole;
    if (end > a.data.size()) {
      if (end > a.data.capacity())
        a.data.reserve(std::min<std::size_t>(static_cast<std::size_t>(n), std::max(end, 2 * a.data.capacity())));
      a.data.resize(end);
    }
    const auto* p = reinterpret_cast<const unsigned char*>(buf.data());
    for (std::size_t i = 0; i < whole; ++i, p += d.width) {
      const float v = ToFloat(p, d);
      a.data[static_cast<std::size_t>(done++)] = v;
      if (d.kind != 'f' && a.big_integer.empty() && !(std::fabs(v) < 16777216.0f)) a.big_integer = IntegerText(p, d);
    }
    const std::size_t used = whole * d.width;
    std::memmove(buf.data(), buf.data() + used, have - used);
    have -= used;
  }
  if (info.fortran && info.shape.size() >= 2) {
    // Column-major on disk: reverse the axes' strides into C order.
    std::vector<float> c(a.data.size());
    const std::size_t r = info.shape.size();
    std::vector<std::int64_t> idx(r, 0);
    for (std::int64_t lin = 0; lin < n; ++lin) {
      std::int64_t f = 0, stride = 1;
      for (std::size_t ax = 0; ax < r; ++ax) {
        f += idx[ax] * stride;
        stride *= info.shape[ax];
      }
      c[static_cast<std::size_t>(lin)] = a.data[static_cast<std::size_t>(f)];
      for (std::size_t ax = r; ax-- > 0;) {
        if (++idx[ax] < info.shape[ax]) break;
        idx[ax] = 0;
      }
    }
    a.data.swap(c);
  }
  return a;
}

struct ZipDeleter {
  void operator()(zip_t* z) const { zip_discard(z); }
};
struct ZipFileCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};

class ZipMemberSource : public Source {
 public:
  ZipMemberSource(zip_file_t* f, const std::string& what) : f_(f), what_(what) {}
  std::size_t Read(char* p, std::size_t n) override {
    const zip_int64_t k = zip_fread(f_.get(), p, n);
    if (k < 0 && zip_error_code_zip(zip_file_get_error(f_.get())) == ZIP_ER_CRC)
      throw Error(what_ +
                  " is damaged: its CRC-32 checksum does not match its data (a flipped bit, a bad copy or "
                  "download), so its numbers cannot be trusted. Copy or save the file again.");
    if (k < 0)
      throw Error(what_ + " is corrupt (" + zip_file_strerror(f_.get()) + "). Save the file again with numpy.savez.");
    return static_cast<std::size_t>(k);
  }

 private:
  std::unique_ptr<zip_file_t, ZipFileCloser> f_;
  const std::string& what_;
};

std::unique_ptr<zip_t, ZipDeleter> OpenZip(zip_source_t* src, const std::string& what) {
  zip_error_t err;
  zip_error_init(&err);
  // No ZIP_CHECKCONS: like numpy (Python's zipfile), a name given twice is not an
  // error; the last member of that name is the one read (see Keys below).
  zip_t* za = zip_open_from_source(src, ZIP_RDONLY, &err);
  if (!za) {
    zip_source_free(src);
    const std::string why = zip_error_strerror(&err);
    zip_error_fini(&err);
    throw Error(what + " is not a valid .npz (zip) archive: " + why +
                ". Is it truncated, or not an .npz at all? Create one with numpy.savez or mhaviz trace --npz.");
  }
  return std::unique_ptr<zip_t, ZipDeleter>(za);
}

// numpy's keys: a member's name without ".npy"; a member named exactly like a key
// (no ".npy") wins over "key.npy", and of two members with one name the last wins, as
// numpy.load(path)[key] reads them.
std::map<std::string, zip_uint64_t> Keys(zip_t* za) {
  std::map<std::string, zip_uint64_t> keys;
  std::set<std::string> exact;  // keys taken by a member without ".npy"
  const zip_int64_t n = zip_get_num_entries(za, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* raw = zip_get_name(za, static_cast<zip_uint64_t>(i), 0);
    if (!raw) continue;
    std::string name = raw;
    if (name.empty() || name.back() == '/') continue;  // a directory entry
    const bool npy = name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0;
    if (npy) name.resize(name.size() - 4);
    if (npy && exact.count(name)) continue;
    if (!npy) exact.insert(name);
    keys[name] = static_cast<zip_uint64_t>(i);
  }
  return keys;
}

std::map<std::string, Array> ReadArchive(zip_t* za, std::uint64_t archive_bytes, const std::string& what,
                                         const NpzFilter& filter) {
  std::map<std::string, Array> out;
  std::int64_t total = 0;
  for (const auto& [key, index] : Keys(za)) {
    if (filter.wanted && !filter.wanted(key)) continue;
    const std::string member = what + " member '" + key + "'";
    zip_stat_t st;
    zip_file_t* f = zip_stat_index(za, index, 0, &st) == 0 ? zip_fopen_index(za, index, 0) : nullptr;
    if (!f) throw Error(member + " cannot be opened (" + zip_strerror(za) + ").");
    ZipMemberSource src(f, member);
    std::uint64_t header_bytes = 0;
    const NpyInfo info = ReadHeader(src, member, &header_bytes);
    const std::int64_t n = info.count();
    const std::uint64_t need = header_bytes + std::uint64_t(n) * ParseDtype(info.descr, member).width;
    // numpy.save writes exactly the header and the data; a zip entry of another size is
    // damaged (or lies about its size, to have memory reserved for it).
    if ((st.valid & ZIP_STAT_SIZE) && st.size != need)
      throw Error(member + " is truncated or corrupt: its zip entry says " + std::to_string(st.size) +
                  " bytes, but its .npy header and data (" + std::to_string(n) + " values of " + info.descr +
                  ") make " + std::to_string(need) + ". Save the file again with numpy.savez.");
    if (filter.check) filter.check(key, info);
    total += n;
    if (total > kMaxElements)
      throw Error(what + " holds more than " + std::to_string(kMaxElements) + " numbers in the arrays mhaviz reads (" +
                  std::to_string(kMaxElements >> 18) + " MiB as float32), over the cap that keeps memory bounded.");
    const bool stored = (st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method == ZIP_CM_STORE &&
                        (st.valid & ZIP_STAT_COMP_SIZE) && st.comp_size == st.size && st.comp_size <= archive_bytes;
    out[key] = ReadData(src, info, member, stored);
    // libzip compares a member's CRC-32 only when a read runs into its end, and the data
    // stop exactly where the header says: without this read a flipped bit loaded
    // silently (numpy refuses it: "Bad CRC-32").
    char past = 0;
    if (src.Read(&past, 1) != 0)
      throw Error(member + " has more bytes than its .npy header and data. Save the file again with numpy.savez.");
  }
  return out;
}

}  // namespace

std::int64_t NpyInfo::count() const {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

Array DecodeNpy(const std::string& bytes, const std::string& what) {
  StringSource src(bytes);
  std::uint64_t header_bytes = 0;
  const NpyInfo info = ReadHeader(src, what, &header_bytes);
  const std::int64_t n = info.count();
  const int width = ParseDtype(info.descr, what).width;
  const std::uint64_t data = bytes.size() - header_bytes;
  if (std::uint64_t(n) * width > data)
    throw Error(what + " is truncated: its header promises " + std::to_string(n) + " values of " +
                std::to_string(width) + " bytes but the file holds only " + std::to_string(data) + " bytes of data.");
  return ReadData(src, info, what, /*proven=*/true);
}

std::map<std::string, Array> DecodeNpz(const std::string& bytes, const std::string& what, const NpzFilter& filter) {
  zip_error_t err;
  zip_error_init(&err);
  zip_source_t* src = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &err);
  if (!src) throw Error("Cannot read " + what + ": out of memory.");
  const auto za = OpenZip(src, what);
  return ReadArchive(za.get(), bytes.size(), what, filter);
}

std::map<std::string, Array> LoadNpz(const std::string& path, const NpzFilter& filter) {
  const std::string what = "'" + path + "'";
  // Refuse a file that is not a zip from its first bytes: /dev/zero or a large
  // unrelated file is not read to the end before being rejected.
  const auto check_head = [&](std::string_view head) {
    if (head.size() >= 4 && (head.substr(0, 4) == std::string_view("PK\x03\x04", 4) ||
                             head.substr(0, 4) == std::string_view("PK\x05\x06", 4)))
      return;
    if (head.substr(0, 6) == "\x93NUMPY")
      throw Error(what +
                  " is a single .npy array, not an .npz archive. Save it with numpy.savez(path, x=array), "
                  "which names the array.");
    if (head.empty())
      throw Error(what + " is empty, not an .npz archive. Create one with numpy.savez or mhaviz trace --npz.");
    throw Error(what +
                " is not a valid .npz (zip) archive: it does not start with the zip signature 'PK'. "
                "Create one with numpy.savez or mhaviz trace --npz.");
  };
  struct stat st {};
  if (path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    // A regular file is read by libzip where it lies: only the members used are
    // inflated, and the archive itself is never held in memory.
    check_head(ReadFilePrefix(path, 8, nullptr));
    zip_error_t err;
    zip_error_init(&err);
    zip_source_t* src = zip_source_file_create(path.c_str(), 0, -1, &err);
    if (!src) throw Error("Cannot read " + what + ": " + zip_error_strerror(&err) + ".");
    const auto za = OpenZip(src, what);
    return ReadArchive(za.get(), static_cast<std::uint64_t>(st.st_size), what, filter);
  }
  return DecodeNpz(ReadFile(path, std::size_t(1) << 30, check_head), what, filter);
}

}  // namespace mha::io
