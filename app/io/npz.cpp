#include <zip.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <sstream>
#include <vector>

#include "files.hpp"

namespace mha::io {
namespace {

constexpr std::int64_t kMaxElements = std::int64_t(1) << 28;  // 1 GiB of float32

// Parses a Python-literal header dict of the .npy format, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 4), }
struct Header {
  std::string descr;
  bool fortran = false;
  std::vector<std::int64_t> shape;
};

[[noreturn]] void Bad(const std::string& what, const std::string& why) {
  throw Error(what + " is not a valid numpy .npy array: " + why +
              ". Save arrays with numpy.savez(path, name=array) or mhaviz trace --npz.");
}

std::string ValueAfter(const std::string& h, const std::string& key, const std::string& what) {
  const auto k = h.find("'" + key + "'");
  if (k == std::string::npos) Bad(what, "the header has no '" + key + "'");
  auto c = h.find(':', k);
  if (c == std::string::npos) Bad(what, "the header is malformed");
  ++c;
  while (c < h.size() && h[c] == ' ') ++c;
  return h.substr(c);
}

Header ParseHeader(const std::string& h, const std::string& what) {
  Header r;
  std::string v = ValueAfter(h, "descr", what);
  if (v.empty() || (v[0] != '\'' && v[0] != '"')) Bad(what, "descr is not a string");
  const auto end = v.find(v[0], 1);
  if (end == std::string::npos) Bad(what, "descr is not terminated");
  r.descr = v.substr(1, end - 1);
  v = ValueAfter(h, "fortran_order", what);
  if (v.rfind("True", 0) == 0)
    r.fortran = true;
  else if (v.rfind("False", 0) != 0)
    Bad(what, "fortran_order is neither True nor False");
  v = ValueAfter(h, "shape", what);
  if (v.empty() || v[0] != '(') Bad(what, "shape is not a tuple");
  const auto close = v.find(')');
  if (close == std::string::npos) Bad(what, "shape is not terminated");
  std::string inner = v.substr(1, close - 1);
  std::int64_t total = 1;
  std::size_t i = 0;
  while (i < inner.size()) {
    while (i < inner.size() && (inner[i] == ' ' || inner[i] == ',')) ++i;
    if (i >= inner.size()) break;
    if (inner[i] < '0' || inner[i] > '9') Bad(what, "a shape entry is not a number");
    std::int64_t n = 0;
    while (i < inner.size() && inner[i] >= '0' && inner[i] <= '9') {
      n = n * 10 + (inner[i] - '0');
      if (n > kMaxElements) Bad(what, "a dimension is absurdly large");
      ++i;
    }
    r.shape.push_back(n);
    total *= n;
    if (total > kMaxElements)
      throw Error(what + " has more than " + std::to_string(kMaxElements) +
                  " elements, over the cap that keeps memory bounded.");
    if (r.shape.size() > 8) Bad(what, "it has more than 8 dimensions");
  }
  return r;
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

struct ZipDeleter {
  void operator()(zip_t* z) const { zip_discard(z); }
};

}  // namespace

namespace {

std::string EncodeNpyBytes(const std::string& descr, const std::vector<std::int64_t>& shape, const char* data,
                           std::size_t bytes) {
  std::ostringstream h;
  h << "{'descr': '" << descr << "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) h << (i ? ", " : "") << shape[i];
  if (shape.size() == 1) h << ",";
  h << "), }";
  std::string header = h.str();
  // Pad with spaces so magic + len + header + '\n' is a multiple of 64, as numpy does.
  const std::size_t pre = 10;
  std::size_t total = pre + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  const auto len = static_cast<std::uint16_t>(header.size());
  out += static_cast<char>(len & 0xFF);
  out += static_cast<char>(len >> 8);
  out += header;
  out.append(data, bytes);
  return out;
}

}  // namespace

std::string EncodeNpy(const TensorView& t) {
  return EncodeNpyBytes("<f4", t.shape, reinterpret_cast<const char*>(t.data),
                        static_cast<std::size_t>(t.size()) * sizeof(float));
}

Array DecodeNpy(const std::string& bytes, const std::string& what) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    Bad(what, "it does not start with the \\x93NUMPY magic");
  const int major = static_cast<unsigned char>(bytes[6]);
  std::size_t hlen = 0, hstart = 0;
  if (major == 1) {
    hlen = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) Bad(what, "the header is truncated");
    for (int i = 3; i >= 0; --i) hlen = (hlen << 8) | static_cast<unsigned char>(bytes[8 + i]);
    hstart = 12;
  } else {
    Bad(what, "format version " + std::to_string(major) + " is unknown");
  }
  if (hlen > bytes.size() - hstart) Bad(what, "the header is truncated");
  const Header h = ParseHeader(bytes.substr(hstart, hlen), what);
  // descr is byte order, kind, width in bytes: '<f4'. Anything else ('|O' objects,
  // '<U3' strings, '<M8[D]' dates, '<c8' complex) is not a plain number.
  const char order = h.descr.size() > 0 ? h.descr[0] : '?', kind = h.descr.size() > 1 ? h.descr[1] : '?';
  const std::string width_s = h.descr.size() > 2 ? h.descr.substr(2) : "";
  const int width = width_s == "1" ? 1 : width_s == "2" ? 2 : width_s == "4" ? 4 : width_s == "8" ? 8 : 0;
  const bool swap = order == '>';  // this machine is little-endian
  const bool ok_kind = (kind == 'f' && (width == 2 || width == 4 || width == 8)) ||
                       ((kind == 'i' || kind == 'u') && (width == 1 || width == 2 || width == 4 || width == 8)) ||
                       (kind == 'b' && width == 1);
  if (!ok_kind || (order != '<' && order != '>' && order != '|' && order != '='))
    throw Error(what + " has dtype '" + h.descr +
                "', which mhaviz cannot use as numbers. Store float32 (or float16 / float64 / integer) arrays, "
                "e.g. array.astype(numpy.float32).");
  std::int64_t n = 1;
  for (auto s : h.shape) n *= s;
  const std::size_t data_off = hstart + hlen;
  if (static_cast<std::size_t>(n) * width > bytes.size() - data_off)
    throw Error(what + " is truncated: its header promises " + std::to_string(n) + " values of " +
                std::to_string(width) + " bytes but the file holds only " + std::to_string(bytes.size() - data_off) +
                " bytes of data.");
  Array a;
  a.shape = h.shape;
  a.source_dtype = h.descr;
  a.data.resize(static_cast<std::size_t>(n));
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + data_off);
  for (std::int64_t i = 0; i < n; ++i, p += width) {
    double v = 0;
    if (kind == 'f')
      v = width == 2   ? HalfToFloat(Load<std::uint16_t>(p, swap))
          : width == 4 ? Load<float>(p, swap)
                       : Load<double>(p, swap);
    else if (kind == 'i')
      v = width == 1   ? Load<std::int8_t>(p, swap)
          : width == 2 ? Load<std::int16_t>(p, swap)
          : width == 4 ? Load<std::int32_t>(p, swap)
                       : static_cast<double>(Load<std::int64_t>(p, swap));
    else
      v = width == 1   ? Load<std::uint8_t>(p, swap)
          : width == 2 ? Load<std::uint16_t>(p, swap)
          : width == 4 ? Load<std::uint32_t>(p, swap)
                       : static_cast<double>(Load<std::uint64_t>(p, swap));
    a.data[static_cast<std::size_t>(i)] = static_cast<float>(v);
  }
  if (h.fortran && h.shape.size() >= 2) {
    // Column-major on disk: reverse the axes' strides into C order.
    std::vector<float> c(a.data.size());
    const std::size_t r = h.shape.size();
    std::vector<std::int64_t> idx(r, 0);
    for (std::int64_t lin = 0; lin < n; ++lin) {
      std::int64_t f = 0, stride = 1;
      for (std::size_t ax = 0; ax < r; ++ax) {
        f += idx[ax] * stride;
        stride *= h.shape[ax];
      }
      c[static_cast<std::size_t>(lin)] = a.data[static_cast<std::size_t>(f)];
      for (std::size_t ax = r; ax-- > 0;) {
        if (++idx[ax] < h.shape[ax]) break;
        idx[ax] = 0;
      }
    }
    a.data.swap(c);
  }
  return a;
}

std::string EncodeNpz(const std::vector<TensorView>& tensors, const std::vector<RawArray>& raw) {
  zip_error_t err;
  zip_error_init(&err);
  zip_source_t* src = zip_source_buffer_create(nullptr, 0, 0, &err);
  if (!src) throw Error("Cannot create an in-memory zip archive.");
  zip_t* za = zip_open_from_source(src, ZIP_TRUNCATE, &err);
  if (!za) {
    zip_source_free(src);
    throw Error("Cannot create an in-memory zip archive.");
  }
  zip_source_keep(src);
  std::vector<std::pair<std::string, std::string>> payloads;  // name, .npy bytes; must outlive zip_close
  payloads.reserve(tensors.size() + raw.size());
  for (const auto& t : tensors) payloads.emplace_back(t.name, EncodeNpy(t));
  for (const auto& r : raw)
    payloads.emplace_back(r.name, EncodeNpyBytes(r.descr, r.shape, r.data.data(), r.data.size()));
  for (const auto& [name, p] : payloads) {
    zip_source_t* s = zip_source_buffer(za, p.data(), p.size(), 0);
    const zip_int64_t idx = s ? zip_file_add(za, (name + ".npy").c_str(), s, ZIP_FL_ENC_UTF_8) : -1;
    if (idx < 0) {
      if (s) zip_source_free(s);
      zip_discard(za);
      zip_source_free(src);
      throw Error("Cannot add '" + name + "' to the .npz archive.");
    }
    zip_set_file_compression(za, static_cast<zip_uint64_t>(idx), ZIP_CM_STORE, 0);  // as numpy.savez
  }
  if (zip_close(za) != 0) {
    zip_discard(za);
    zip_source_free(src);
    throw Error("Cannot finish the .npz archive.");
  }
  std::string out;
  zip_stat_t st;
  if (zip_source_stat(src, &st) == 0 && zip_source_open(src) == 0) {
    out.resize(st.size);
    const zip_int64_t n = zip_source_read(src, out.data(), st.size);
    zip_source_close(src);
    if (n < 0 || static_cast<zip_uint64_t>(n) != st.size) out.clear();
  }
  zip_source_free(src);
  if (out.empty()) throw Error("Cannot read back the .npz archive from memory.");
  return out;
}

std::map<std::string, Array> DecodeNpz(const std::string& bytes, const std::string& what) {
  zip_error_t err;
  zip_error_init(&err);
  zip_source_t* src = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &err);
  if (!src) throw Error("Cannot read " + what + ": out of memory.");
  std::unique_ptr<zip_t, ZipDeleter> za(zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &err));
  if (!za) {
    zip_source_free(src);
    throw Error(what + " is not a valid .npz (zip) archive: " + std::string(zip_error_strerror(&err)) +
                ". Is it truncated, or not an .npz at all? Create one with numpy.savez or mhaviz trace --npz.");
  }
  std::map<std::string, Array> out;
  const zip_int64_t n = zip_get_num_entries(za.get(), 0);
  std::uint64_t total = 0;
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    if (zip_stat_index(za.get(), static_cast<zip_uint64_t>(i), 0, &st) != 0 || !st.name) continue;
    std::string name = st.name;
    if (name.size() < 5 || name.compare(name.size() - 4, 4, ".npy") != 0) continue;
    name.resize(name.size() - 4);
    total += st.size;
    if (st.size > static_cast<std::uint64_t>(kMaxElements) * 8 || total > (std::uint64_t(1) << 31))
      throw Error(what + " expands to more than 2 GiB, over the cap that keeps memory bounded.");
    zip_file_t* f = zip_fopen_index(za.get(), static_cast<zip_uint64_t>(i), 0);
    if (!f) throw Error(what + ": cannot open member '" + name + ".npy' (" + zip_strerror(za.get()) + ").");
    // Read as the data actually arrives: the sizes in the zip directory are only claims,
    // and a 184-byte file claiming 2 GiB got 2 GiB allocated up front.
    std::string data;
    data.reserve(static_cast<std::size_t>(std::min<zip_uint64_t>(st.size, zip_uint64_t(1) << 20)));
    std::vector<char> buf(1 << 16);
    zip_int64_t got = 0;
    while (data.size() <= st.size && (got = zip_fread(f, buf.data(), buf.size())) > 0)
      data.append(buf.data(), static_cast<std::size_t>(got));
    zip_fclose(f);
    if (got < 0 || data.size() != st.size)
      throw Error(what + ": member '" + name + ".npy' is truncated or corrupt (it holds " +
                  std::to_string(data.size()) + " bytes, its zip entry says " + std::to_string(st.size) +
                  "). Save the file again with numpy.savez.");
    out[name] = DecodeNpy(data, what + " member '" + name + "'");
  }
  return out;
}

std::map<std::string, Array> LoadNpz(const std::string& path) {
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
  return DecodeNpz(ReadFile(path, std::size_t(1) << 30, check_head), what);
}

}  // namespace mha::io
