#include <cmath>
#include <nlohmann/json.hpp>

#include "files.hpp"
#include "json_parse.hpp"
#include "mha/flash.hpp"

namespace mha::io {

namespace {
struct TooDeep {};
}  // namespace

nlohmann::json ParseJson(const std::string& text, int max_depth) {
  using nlohmann::json;
  // The callback sees each array or object as it opens, at its depth (0 for the
  // outermost), so a deep document is refused after max_depth levels, not at its end.
  const json::parser_callback_t bound = [max_depth](int depth, json::parse_event_t event, json&) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) && depth >= max_depth)
      throw TooDeep{};
    return true;
  };
  try {
    return json::parse(text, bound);
  } catch (const TooDeep&) {
    throw Error("it nests arrays or objects more than " + std::to_string(max_depth) +
                (max_depth == 1 ? " level deep" : " levels deep"));
  } catch (const json::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 9: syntax error ...
    // last read: '...'": the tag dropped, and the quoted input kept short.
    std::string why = e.what();
    const auto tag = why.find("] ");
    if (tag != std::string::npos) why.erase(0, tag + 2);
    throw Error(Excerpt(why, 160));
  }
}

std::string Excerpt(const std::string& s, std::size_t max_chars) {
  if (s.size() <= max_chars) return s;
  std::size_t cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return s.substr(0, cut) + "... (" + std::to_string(s.size()) + " bytes)";
}

std::string JsonExcerpt(const nlohmann::json& v, std::size_t max_chars) {
  if (v.is_string()) return "\"" + Excerpt(v.get_ref<const std::string&>(), max_chars) + "\"";
  if (v.is_array() && v.size() > max_chars / 2) return "an array of " + std::to_string(v.size()) + " items";
  if (v.is_object() && v.size() > max_chars / 4) return "an object of " + std::to_string(v.size()) + " fields";
  return Excerpt(v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), max_chars);
}

void CheckJsonSize(const Config& cfg, int seq, int seq_kv) {
  const std::int64_t n = std::int64_t(cfg.num_heads) * seq * seq_kv;
  if (n > kMaxJsonAttention) {
    throw Error("--json would hold " + std::to_string(n) + " attention weights (num_heads " +
                std::to_string(cfg.num_heads) + " x seq " + std::to_string(seq) + " x seq_kv " +
                std::to_string(seq_kv) + "), about " + std::to_string(n * 25 >> 20) + " MiB of text, over the cap of " +
                std::to_string(kMaxJsonAttention) +
                " that keeps the JSON readable and memory bounded. Use --npz for a trace this large "
                "(numpy.load reads it), or use fewer tokens or heads.");
  }
}

std::string TraceJson(const Trace& t, const std::string& notice, const Mat* attn_norms) {
  using nlohmann::json;
  const bool flash = t.cfg.attention == Attention::Flash;
  if (!flash) CheckJsonSize(t.cfg, t.seq, t.seq_kv);
  json j;
  j["format"] = "mhaviz-trace";
  j["version"] = 1;
  j["tokens"] = t.in.tokens;
  if (t.in.cross()) j["memory_tokens"] = t.in.memory_tokens;
  const Config& c = t.cfg;
  j["config"] = {{"d_model", c.d_model},
                 {"num_heads", c.num_heads},
                 {"num_kv_heads", c.kv_heads()},
                 {"head_dim", c.head_dim()},
                 {"seq", t.seq},
                 {"seq_kv", t.seq_kv},
                 {"seed", c.seed},
                 {"mask", ToString(c.mask)},
                 {"norm", ToString(c.norm)},
                 {"scale", c.scale},
                 {"temperature", c.temperature},
                 {"positional_encoding", c.positional_encoding},
                 {"ln_eps", c.ln_eps},
                 {"cross_attention", t.in.cross()}};
  j["config"]["block"] = ToString(c.block);
  if (c.block == Block::Encoder) {
    j["config"]["d_ff"] = c.ffn_dim();
    j["config"]["activation"] = ToString(c.activation);
  }
  if (flash) {
    j["config"]["attention"] = ToString(t.cfg.attention);
    j["config"]["flash_tile"] = {FlashBr(t.cfg), FlashBc(t.cfg)};
  }
  if (!notice.empty()) j["notice"] = notice;
  // This layer's knocked-out heads: concat and everything after it are the ablated model's.
  if (!t.in.ablate.empty()) j["ablated_heads"] = t.in.ablate.heads;
  json flow = json::array();
  for (const auto& r : t.flow)
    flow.push_back({{"step", r.step},
                    {"formula", r.formula},
                    {"tensor", r.tensor},
                    {"shape", r.shape},
                    {"params", r.params},
                    {"param_count", r.param_count},
                    {"flops", r.flops}});
  j["shape_flow"] = flow;
  if (flash) {  // nothing seq x seq_kv was kept to write
    j["attention_note"] =
        "Flash attention computed the context tile by tile and kept no attention weights; trace without "
        "--attention flash to export them.";
    return j.dump(1) + "\n";
  }
  // attention[h][i][j]: head h, query token i, key token j (softmax weights, rows sum to 1).
  auto heads = [&](const Mat& m) {
    json all = json::array();
    for (int h = 0; h < c.num_heads; ++h) {
      json head = json::array();
      for (int i = 0; i < t.seq; ++i) {
        json row = json::array();
        for (int k = 0; k < t.seq_kv; ++k) row.push_back(m(static_cast<Eigen::Index>(h) * t.seq + i, k));
        head.push_back(std::move(row));
      }
      all.push_back(std::move(head));
    }
    return all;
  };
  j["attention"] = heads(t.attn);
  // attn_norms[h][i][j]: alpha_ij * ||(x_j W_V^h + b_V^h) W_O^h|| (Kobayashi et al. 2020).
  if (attn_norms) j["attn_norms"] = heads(*attn_norms);
  return j.dump(1) + "\n";
}

}  // namespace mha::io
