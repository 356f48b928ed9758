#include "render/font_file.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "io/files.hpp"
#include "mha/mha.hpp"

// The checks mirror what stb_truetype v1.26 reads (stbtt_InitFont, FindGlyphIndex,
// GetGlyphHMetrics, GetGlyphBox, GetGlyphShape, GetGlyphKernAdvance): each offset it
// computes from the file must land inside the file. The fuzz target tests/fuzz/
// fuzz_font.cpp runs an instrumented stb_truetype on every font accepted here.
namespace mha::render {
namespace {

using u64 = std::uint64_t;

struct Bytes {
  const unsigned char* p;
  u64 n;
  bool Has(u64 off, u64 len) const { return off <= n && len <= n - off; }
  unsigned U8(u64 o) const { return p[o]; }
  unsigned U16(u64 o) const { return (unsigned(p[o]) << 8) | p[o + 1]; }
  int S16(u64 o) const { return static_cast<std::int16_t>(U16(o)); }
  std::uint32_t U32(u64 o) const { return (std::uint32_t(U16(o)) << 16) | U16(o + 2); }
};

struct Table {
  u64 off = 0, len = 0;
  bool found = false;
};

// Thrown inside the checker only; CheckFont turns it into its returned reason.
struct Bad {
  std::string why;
};
[[noreturn]] void Fail(std::string why) { throw Bad{std::move(why)}; }

class Checker {
 public:
  explicit Checker(Bytes b) : b_(b) {}

  void Run() {
    if (b_.n < 12) Fail("it is too short to be a font (" + std::to_string(b_.n) + " bytes)");
    const std::uint32_t tag = b_.U32(0);
    if (tag == 0x4F54544Fu) Fail("it is a CFF-flavoured OpenType font (.otf); use a TrueType (.ttf) font");
    if (tag == 0x74746366u) Fail("it is a font collection (.ttc); use a single TrueType (.ttf) font");
    if (tag != 0x00010000u && tag != 0x74727565u) Fail("it does not start like a TrueType font");
    ReadDirectory();
    const Table head = Need("head", 54), hhea = Need("hhea", 36), maxp = Need("maxp", 6);
    cmap_ = Need("cmap", 4), hmtx_ = Need("hmtx", 0), loca_ = Need("loca", 0), glyf_ = Need("glyf", 0);
    num_glyphs_ = b_.U16(maxp.off + 4);
    if (num_glyphs_ == 0) Fail("its 'maxp' table says it has no glyphs");
    const unsigned units_per_em = b_.U16(head.off + 18);
    if (units_per_em < 16 || units_per_em > 16384)
      Fail("its units per em (" + std::to_string(units_per_em) + ") is out of range");
    em_ = units_per_em;
    // ImGui sizes glyphs by ascent - descent: near zero, every glyph would be huge.
    const long height = long(b_.S16(hhea.off + 4)) - b_.S16(hhea.off + 6);
    if (height < em_ / 2 || height > 4 * em_) Fail("its ascent and descent ('hhea') are implausible");
    loca_long_ = b_.U16(head.off + 50);
    if (loca_long_ > 1) Fail("its 'head' table names an unknown 'loca' format");
    CheckHmtx(b_.U16(hhea.off + 34));
    CheckLoca();
    CheckCmap();
    CheckKern();
    expanded_.assign(num_glyphs_, -1);
    extent_.assign(num_glyphs_, 0.0);
    y_range_.assign(num_glyphs_, YRange{});
    for (unsigned g = 0; g < num_glyphs_; ++g) Points(g, 0);
  }

 private:
  void ReadDirectory() {
    const unsigned n = b_.U16(4);
    if (n == 0 || !b_.Has(12, u64(n) * 16)) Fail("its table directory is cut off");
    dir_n_ = n;
  }

  // The first table with this tag (as stbtt__find_table finds it), inside the file.
  Table Find(const char* tag) const {
    Table t;
    for (unsigned i = 0; i < dir_n_; ++i) {
      const u64 rec = 12 + u64(i) * 16;
      if (std::memcmp(b_.p + rec, tag, 4) != 0) continue;
      t.off = b_.U32(rec + 8);
      t.len = b_.U32(rec + 12);
      t.found = true;
      if (!b_.Has(t.off, t.len)) Fail(std::string("its '") + tag + "' table ends past the end of the file");
      return t;
    }
    return t;
  }
  Table Need(const char* tag, u64 min_len) const {
    const Table t = Find(tag);
    if (!t.found) Fail(std::string("it has no '") + tag + "' table (a TrueType font needs one)");
    if (t.len < min_len) Fail(std::string("its '") + tag + "' table is too short");
    // stb uses 0 for "absent", so a table at offset 0 would read as missing.
    if (t.off == 0) Fail(std::string("its '") + tag + "' table overlaps the header");
    return t;
  }

  void CheckHmtx(unsigned num_long) {
    if (num_long == 0) Fail("its 'hhea' table has no horizontal metrics");
    const u64 tail = num_glyphs_ > num_long ? u64(num_glyphs_ - num_long) * 2 : 0;
    if (hmtx_.len < u64(num_long) * 4 + tail) Fail("its 'hmtx' table is shorter than its glyph count needs");
  }

  void CheckLoca() {
    if (loca_.len < (u64(num_glyphs_) + 1) * (loca_long_ ? 4 : 2))
      Fail("its 'loca' table is shorter than its glyph count needs");
  }
  // The byte range of glyph g inside 'glyf' (relative to the table), as stb computes it.
  void GlyphRange(unsigned g, u64* start, u64* end) const {
    if (loca_long_) {
      *start = b_.U32(loca_.off + u64(g) * 4);
      *end = b_.U32(loca_.off + u64(g) * 4 + 4);
    } else {
      *start = u64(b_.U16(loca_.off + u64(g) * 2)) * 2;
      *end = u64(b_.U16(loca_.off + u64(g) * 2 + 2)) * 2;
    }
    if (*start > *end || *end > glyf_.len) Fail("glyph " + std::to_string(g) + " lies outside its 'glyf' table");
  }

  void CheckCmap() {
    // stb takes the last Unicode subtable (platform 0, or 3 with encoding 1 or 10).
    const unsigned n = b_.U16(cmap_.off + 2);
    if (cmap_.len < 4 + u64(n) * 8) Fail("its 'cmap' table is cut off");
    u64 sub = 0;
    for (unsigned i = 0; i < n; ++i) {
      const u64 rec = cmap_.off + 4 + u64(i) * 8;
      const unsigned platform = b_.U16(rec), encoding = b_.U16(rec + 2);
      if (platform == 0 || (platform == 3 && (encoding == 1 || encoding == 10))) sub = cmap_.off + b_.U32(rec + 4);
    }
    if (sub == 0) Fail("its 'cmap' table has no Unicode mapping");
    if (!b_.Has(sub, 2)) Fail("its Unicode 'cmap' subtable lies past the end of the file");
    switch (b_.U16(sub)) {
      case 0: return CheckCmap0(sub);
      case 4: return CheckCmap4(sub);
      case 6: return CheckCmap6(sub);
      case 12:
      case 13: return CheckCmap12(sub, b_.U16(sub) == 13);
      default:
        Fail("its Unicode 'cmap' subtable has format " + std::to_string(b_.U16(sub)) + ", which is not supported");
    }
  }
  void Glyph(u64 g) const {
    if (g >= num_glyphs_) Fail("its 'cmap' maps a character to glyph " + std::to_string(g) + ", which does not exist");
  }
  void NeedCmap(u64 sub, u64 len) const {
    if (!b_.Has(sub, len)) Fail("its Unicode 'cmap' subtable ends past the end of the file");
  }
  void CheckCmap0(u64 sub) const {
    NeedCmap(sub, 6);
    const unsigned bytes = b_.U16(sub + 2);
    if (bytes <= 6) return;
    NeedCmap(sub, bytes);
    for (u64 c = 0; c + 6 < bytes; ++c) Glyph(b_.U8(sub + 6 + c));
  }
  void CheckCmap6(u64 sub) const {
    NeedCmap(sub, 10);
    const unsigned count = b_.U16(sub + 8);
    NeedCmap(sub, 10 + u64(count) * 2);
    for (unsigned i = 0; i < count; ++i) Glyph(b_.U16(sub + 10 + u64(i) * 2));
  }
  void CheckCmap4(u64 sub) const {
    NeedCmap(sub, 14);
    const unsigned segs = b_.U16(sub + 6) >> 1;
    if (segs == 0) Fail("its 'cmap' format 4 subtable has no segments");
    NeedCmap(sub, 16 + u64(segs) * 8);
    // stb's binary search steps by searchRange / rangeShift from the header: every
    // segment it can reach must be one of the segs, and the loop short.
    const unsigned search_range = b_.U16(sub + 8) >> 1, selector = b_.U16(sub + 10), shift = b_.U16(sub + 12) >> 1;
    u64 reach = shift, step = search_range;
    if (selector > 16) Fail("its 'cmap' format 4 search parameters are inconsistent");
    for (unsigned k = 0; k < selector; ++k) reach += (step >>= 1);
    if (shift >= segs || reach >= segs) Fail("its 'cmap' format 4 search parameters point outside its segments");
    const u64 ends = sub + 14, starts = ends + u64(segs) * 2 + 2, deltas = starts + u64(segs) * 2,
              ranges = deltas + u64(segs) * 2;
    long prev_end = -1;
    for (unsigned i = 0; i < segs; ++i) {
      const unsigned end = b_.U16(ends + 2 * i), start = b_.U16(starts + 2 * i);
      if (long(end) <= prev_end) Fail("its 'cmap' format 4 segments are not sorted");
      if (start > end) continue;  // an empty segment: stb finds nothing in it
      if (long(start) <= prev_end) Fail("its 'cmap' format 4 segments overlap");
      prev_end = end;
      const unsigned delta = b_.U16(deltas + 2 * i), range = b_.U16(ranges + 2 * i);
      for (unsigned c = start; c <= end; ++c) {
        if (range == 0) {
          Glyph((c + delta) & 0xFFFF);
        } else {
          const u64 at = ranges + 2 * i + range + u64(c - start) * 2;
          NeedCmap(at, 2);
          Glyph(b_.U16(at));  // stb returns the array's entry as it is
        }
      }
    }
  }
  void CheckCmap12(u64 sub, bool format13) const {
    NeedCmap(sub, 16);
    const u64 groups = b_.U32(sub + 12);
    NeedCmap(sub, 16 + groups * 12);
    for (u64 i = 0; i < groups; ++i) {
      const u64 rec = sub + 16 + i * 12;
      const u64 start = b_.U32(rec), end = b_.U32(rec + 4), glyph = b_.U32(rec + 8);
      if (start > end) continue;
      if (end > 0x10FFFF) Fail("its 'cmap' maps characters beyond Unicode");
      Glyph(format13 ? glyph : glyph + (end - start));
    }
  }

  void CheckKern() const {
    const Table kern = Find("kern");
    if (!kern.found || kern.off == 0) return;
    if (kern.len < 4) Fail("its 'kern' table is cut off");
    if (b_.U16(kern.off + 2) < 1) return;
    if (kern.len < 10) Fail("its 'kern' table is cut off");
    if (b_.U16(kern.off + 8) != 1) return;  // stb reads only horizontal format-0 kerning
    if (kern.len < 18 + u64(b_.U16(kern.off + 10)) * 6) Fail("its 'kern' table is shorter than its pair count needs");
  }

  // The number of outline points glyph g expands to (its components' included),
  // checking that stb's parse of it stays inside the glyph's own bytes.
  static constexpr long kMaxPoints = 1 << 16;
  static constexpr int kMaxDepth = 16;
  long Points(unsigned g, int depth) {
    if (expanded_[g] >= 0) return expanded_[g];
    if (expanded_[g] == -2 || depth > kMaxDepth)
      Fail("its composite glyphs refer to each other in a loop or nest too deep");
    expanded_[g] = -2;
    u64 start = 0, end = 0;
    GlyphRange(g, &start, &end);
    long points = 0;
    if (end > start) {
      const u64 at = glyf_.off + start, len = end - start;
      if (len < 10) Fail("glyph " + std::to_string(g) + " is cut off");
      CheckBox(g, at);
      const int contours = b_.S16(at);
      if (contours > 0) points = SimplePoints(g, at, len, contours);
      if (contours < 0) points = CompositePoints(g, at, len, depth);
      CheckTop(g, at);
    }
    if (points > kMaxPoints) Fail("glyph " + std::to_string(g) + " has too many points");
    return expanded_[g] = points;
  }
  // Glyph bitmaps are sized from the box in the glyph's header: a few huge boxes would
  // make the exporter's bitmaps, or the GUI's whole atlas, gigabytes.
  void CheckBox(unsigned g, u64 at) {
    const long x0 = b_.S16(at + 2), y0 = b_.S16(at + 4), x1 = b_.S16(at + 6), y1 = b_.S16(at + 8);
    const long lim = 8 * em_;
    if (x0 > x1 || y0 > y1 || x0 < -lim || y0 < -lim || x1 > lim || y1 > lim)
      Fail("glyph " + std::to_string(g) + " has an implausible bounding box");
    box_area_ += double(x1 - x0) * double(y1 - y0) / (double(em_) * double(em_));
    if (box_area_ > 2.0 * num_glyphs_ + 64) Fail("its glyphs' bounding boxes are implausibly large");
  }
  [[noreturn]] void CutOff(unsigned g) const {
    Fail("the outline of glyph " + std::to_string(g) + " runs past its end");
  }
  long SimplePoints(unsigned g, u64 at, u64 len, int contours) {
    u64 pos = 10 + u64(contours) * 2;
    if (pos + 2 > len) CutOff(g);
    long prev = -1, before_last = -1;
    for (int c = 0; c < contours; ++c) {
      const long e = b_.U16(at + 10 + u64(c) * 2);
      if (e <= prev) Fail("the contours of glyph " + std::to_string(g) + " are out of order");
      before_last = prev;
      prev = e;
    }
    const u64 n = u64(prev) + 1;
    pos += 2 + b_.U16(at + pos);  // instructions
    // Flags (with repeats), then the x and y coordinates whose sizes they give.
    std::vector<unsigned char> flags(n);
    unsigned repeat = 0, f = 0;
    for (u64 i = 0; i < n; ++i) {
      if (repeat == 0) {
        if (pos >= len) CutOff(g);
        f = b_.U8(at + pos++);
        if (f & 8) {
          if (pos >= len) CutOff(g);
          repeat = b_.U8(at + pos++);
        }
      } else {
        --repeat;
      }
      flags[i] = static_cast<unsigned char>(f);
    }
    // A last contour of one off-curve point makes stb look at the point after it, past
    // the end of its array.
    if (!(flags[n - 1] & 1) && before_last == static_cast<long>(n) - 2)
      Fail("glyph " + std::to_string(g) + " ends with a contour of one off-curve point");
    // The coordinates, decoded as stb does (deltas summed, stored as 16 bits), for the
    // extent composites scale and move.
    double extent = 0;
    YRange& range = y_range_[g];
    for (int axis = 0; axis < 2; ++axis) {
      const unsigned short_bit = axis ? 4 : 2, same_bit = axis ? 32 : 16;
      long v = 0;
      for (u64 i = 0; i < n; ++i) {
        if (flags[i] & short_bit) {
          if (pos + 1 > len) CutOff(g);
          const long d = b_.U8(at + pos++);
          v += flags[i] & same_bit ? d : -d;
        } else if (!(flags[i] & same_bit)) {
          if (pos + 2 > len) CutOff(g);
          v += b_.S16(at + pos);
          pos += 2;
        }
        extent = std::max(extent, std::fabs(double(static_cast<std::int16_t>(v))));
        if (axis == 1) range.Add(static_cast<std::int16_t>(v));
      }
    }
    extent_[g] = extent;
    return static_cast<long>(n) + 2 * contours;
  }
  // stb sizes the glyph's bitmap from the header's box and rasterises the points into
  // it. Where the box's top is at or below the baseline, the bitmap can start at row
  // 0, where stb does not clip: an outline edge wholly above it (every point above
  // the baseline) trips an assert in its rasteriser. Elsewhere stb clips such edges,
  // and real fonts' boxes are sometimes a little off, so only that case is refused,
  // for a simple glyph's points and a composite's placed components alike.
  void CheckTop(unsigned g, u64 at) const {
    const long y_max = b_.S16(at + 8);
    if (y_max <= 0 && y_range_[g].hi > 0)
      Fail("glyph " + std::to_string(g) + " has points above the top of its bounding box");
  }
  long CompositePoints(unsigned g, u64 at, u64 len, int depth) {
    u64 pos = 10;
    long points = 0;
    for (bool more = true; more;) {
      if (pos + 4 > len) CutOff(g);
      const unsigned flags = b_.U16(at + pos), child = b_.U16(at + pos + 2);
      pos += 4;
      // Point-matched placement is an assert in stb; a glyph index stb reads as
      // negative would index 'loca' backwards.
      if (!(flags & 2))
        Fail("glyph " + std::to_string(g) + " places a component by matching points, which is not supported");
      if (child >= num_glyphs_ || child >= 0x8000)
        Fail("glyph " + std::to_string(g) + " uses glyph " + std::to_string(child) +
             ", which does not exist or lies beyond the 32767 that stb_truetype can address");
      const u64 args = pos;
      pos += flags & 1 ? 4 : 2;
      const u64 scales = pos;
      pos += flags & 8 ? 2 : flags & 64 ? 4 : flags & 128 ? 8 : 0;
      if (pos > len) CutOff(g);
      points += Points(child, depth + 1);
      PlaceComponent(g, child, flags, at + args, at + scales);
      if (points > kMaxPoints) Fail("glyph " + std::to_string(g) + " has too many points");
      more = flags & 32;
    }
    return points;
  }

  // stb moves and scales a component's points in float and stores them as 16-bit
  // integers: a result outside that range is undefined behaviour, so it is refused.
  void PlaceComponent(unsigned g, unsigned child, unsigned flags, u64 args, u64 scales) {
    const double dx = flags & 1 ? b_.S16(args) : static_cast<std::int8_t>(b_.U8(args));
    const double dy = flags & 1 ? b_.S16(args + 2) : static_cast<std::int8_t>(b_.U8(args + 1));
    auto f2dot14 = [&](u64 o) { return b_.S16(o) / 16384.0; };
    double a = 1, b = 0, c = 0, d = 1;
    if (flags & 8) {
      a = d = f2dot14(scales);
    } else if (flags & 64) {
      a = f2dot14(scales);
      d = f2dot14(scales + 2);
    } else if (flags & 128) {
      a = f2dot14(scales), b = f2dot14(scales + 2), c = f2dot14(scales + 4), d = f2dot14(scales + 6);
    }
    const double x = extent_[child];
    const double m = std::sqrt(a * a + b * b), n = std::sqrt(c * c + d * d);
    const double bx = m * ((std::fabs(a) + std::fabs(c)) * x + std::fabs(dx));
    const double by = n * ((std::fabs(b) + std::fabs(d)) * x + std::fabs(dy));
    if (bx >= 32000 || by >= 32000)
      Fail("glyph " + std::to_string(g) + " places a component outside the coordinate range");
    extent_[g] = std::max({extent_[g], bx, by});
    // Where the placed points can lie vertically: stb's y is n (b x + d y + dy), a
    // linear function, so its bounds over the component's points are bounded by its
    // values at the corners of their box (x within its extent, y within its range).
    const YRange& r = y_range_[child];
    if (r.lo <= r.hi) {
      const double lin_x = std::fabs(b) * x;
      const double hi = n * (lin_x + std::max(d * r.lo, d * r.hi) + dy);
      const double lo = n * (-lin_x + std::min(d * r.lo, d * r.hi) + dy);
      y_range_[g].Add(hi);
      y_range_[g].Add(lo);
    }
  }

  Bytes b_;
  unsigned dir_n_ = 0, num_glyphs_ = 0, loca_long_ = 0;
  long em_ = 1000;
  double box_area_ = 0;  // the glyph boxes' total area, in em²
  Table cmap_, hmtx_, loca_, glyf_;
  std::vector<long> expanded_;  // -1 unknown, -2 being expanded
  std::vector<double> extent_;  // the largest |coordinate| of each glyph's points
  // The lowest and highest y of each glyph's points (empty: lo > hi), as stb places them.
  struct YRange {
    double lo = 1e300, hi = -1e300;
    void Add(double y) {
      lo = std::min(lo, y);
      hi = std::max(hi, y);
    }
  };
  std::vector<YRange> y_range_;
};

}  // namespace

std::string CheckFont(std::string_view bytes) {
  if (bytes.size() > kMaxFontBytes) return "it is bigger than " + std::to_string(kMaxFontBytes >> 20) + " MiB";
  try {
    Checker(Bytes{reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()}).Run();
    return {};
  } catch (const Bad& b) {
    return b.why;
  }
}

const std::vector<std::pair<char32_t, char32_t>>& TextRanges() {
  static const std::vector<std::pair<char32_t, char32_t>> ranges = {
      {0x0020, 0x007E},
      {0x00A0, 0x024F},  // Latin
      {0x0370, 0x04FF},  // Greek, Cyrillic
      {0x1100, 0x11FF},  // Hangul jamo (what NFC leaves decomposed)
      {0x2000, 0x2BFF},  // punctuation, sub/superscripts, symbols, arrows, maths,
                         // shapes, dingbats, emoji of the BMP
      {0x3000, 0x33FF},  // CJK punctuation, compatibility jamo, enclosed forms
      {0xAC00, 0xD7A3},  // Hangul syllables
      {0xFF01, 0xFFEE},  // full-width and half-width forms (，！（）)
  };
  return ranges;
}

bool InTextRanges(char32_t cp) {
  for (const auto& [lo, hi] : TextRanges())
    if (cp >= lo && cp <= hi) return true;
  return false;
}

const std::vector<std::pair<char32_t, char32_t>>& AstralRanges() {
  static const std::vector<std::pair<char32_t, char32_t>> ranges = {
      {0x1D400, 0x1D7FF},  // mathematical alphanumeric symbols
      {0x1F000, 0x1FAFF},  // mahjong, cards, enclosed forms, pictographs, emoticons, transport, ...
  };
  return ranges;
}

bool InAstralRanges(char32_t cp) {
  for (const auto& [lo, hi] : AstralRanges())
    if (cp >= lo && cp <= hi) return true;
  return false;
}

std::vector<std::string> FallbackFontPaths() {
  std::vector<std::string> out;
  for (const char* p : {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                        "/usr/share/fonts/truetype/noto/NotoSansSymbols2-Regular.ttf",
                        "/usr/share/fonts/truetype/ancient-scripts/Symbola_hint.ttf"}) {
    struct stat st {};
    if (::stat(p, &st) == 0 && S_ISREG(st.st_mode)) out.emplace_back(p);
  }
  return out;
}

std::string ReadFontFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error("Cannot read the font '" + path + "': " + std::strerror(errno) + ".");
  if (!S_ISREG(st.st_mode))
    throw Error("The font '" + path + "' is " + (S_ISDIR(st.st_mode) ? "a directory" : "not a regular file") +
                "; name a .ttf file.");
  std::string bytes;
  try {
    bytes = io::ReadFile(path, kMaxFontBytes);
  } catch (const Error& e) {
    throw Error(std::string("Cannot use the font: ") + e.what());
  }
  if (const std::string why = CheckFont(bytes); !why.empty())
    throw Error("The font '" + path + "' cannot be used: " + why + ".");
  return bytes;
}

}  // namespace mha::render
