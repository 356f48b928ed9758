#include "options.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>

#include "../io/files.hpp"

namespace mha::cli {

std::string Args::Value(const std::string& flag) {
  if (Done())
    throw UsageError(flag + " needs a value. See 'mhaviz " + command_ + " --help'.");
  // "--sentence --npz out.npz" forgot the sentence; a value never looks like a long flag.
  if (Peek().size() > 2 && Peek().compare(0, 2, "--") == 0)
    throw UsageError(flag + " needs a value, but the next argument is the flag '" + Peek() +
                     "'. See 'mhaviz " + command_ + " --help'.");
  return Next();
}

int Args::Int(const std::string& flag, long long lo, long long hi) {
  const std::string v = Value(flag);
  errno = 0;
  char* end = nullptr;
  const long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno == ERANGE)
    throw UsageError(flag + " expects a whole number, got '" + v + "'.");
  if (n < lo || n > hi)
    throw UsageError(flag + " = " + v + " is far outside any size mhaviz can use (the limits are d_model <= " +
                     std::to_string(Limits::kMaxDModel) + ", num_heads <= " + std::to_string(Limits::kMaxHeads) + ").");
  return static_cast<int>(n);
}

std::uint64_t Args::U64(const std::string& flag) {
  const std::string v = Value(flag);
  errno = 0;
  char* end = nullptr;
  if (v.empty() || v[0] == '-') throw UsageError(flag + " expects a whole number >= 0, got '" + v + "'.");
  const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) throw UsageError(flag + " expects a whole number >= 0, got '" + v + "'.");
  return n;
}

double Args::Double(const std::string& flag) {
  const std::string v = Value(flag);
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !std::isfinite(x))
    throw UsageError(flag + " expects a number, got '" + v + "'.");
  return x;
}

void Args::Unknown(const std::string& flag) const {
  if (!flag.empty() && flag[0] != '-')
    throw UsageError("unexpected argument '" + flag + "'. Put a sentence after --sentence, in quotes: --sentence \"" +
                     flag + " ...\". See 'mhaviz " + command_ + " --help'.");
  throw UsageError("unknown flag '" + flag + "'. See 'mhaviz " + command_ + " --help' for the flags it takes.");
}

bool ParseRunFlag(Args& a, const std::string& f, RunOptions& o) {
  // Sizes are range-checked loosely here (so absurd numbers never reach an
  // allocation) and precisely, with a teaching message, by mha::Validate.
  constexpr long long kBig = 1LL << 30;
  if (f == "--sentence" || f == "-s") { o.sentence = a.Value(f); o.sentence_given = true; }
  else if (f == "--sentence-file") {
    o.sentence_file = a.Value(f);
    if (o.sentence_file.empty()) throw UsageError("--sentence-file needs a file name, or - for standard input.");
  }
  else if (f == "--memory") {
    o.memory = a.Value(f);
    // An empty memory would silently mean self-attention; say so instead.
    if (o.memory.empty())
      throw UsageError("--memory is empty: cross-attention needs a second sentence to read keys and values "
                       "from, e.g. --memory \"the dog barked\". Leave out --memory for self-attention.");
  }
  else if (f == "--heads") o.cfg.num_heads = a.Int(f, -kBig, kBig);
  else if (f == "--d-model") { o.cfg.d_model = a.Int(f, -kBig, kBig); o.d_model_given = true; }
  else if (f == "--kv-heads") {
    o.cfg.num_kv_heads = a.Int(f, -kBig, kBig);
    if (o.cfg.num_kv_heads <= 0)
      throw UsageError("--kv-heads = " + std::to_string(o.cfg.num_kv_heads) +
                       " must be at least 1 (1 = multi-query attention; leave it out for plain multi-head attention).");
  }
  else if (f == "--seed") o.cfg.seed = a.U64(f);
  else if (f == "--mask") {
    const std::string v = a.Value(f);
    if (v == "none") o.cfg.mask = Mask::None;
    else if (v == "causal") o.cfg.mask = Mask::Causal;
    else throw UsageError("--mask must be 'none' or 'causal' (each token sees only itself and earlier tokens), got '" + v + "'.");
  } else if (f == "--norm") {
    const std::string v = a.Value(f);
    if (v == "post") o.cfg.norm = Norm::Post;
    else if (v == "pre") o.cfg.norm = Norm::Pre;
    else if (v == "none") o.cfg.norm = Norm::None;
    else throw UsageError("--norm must be 'post' (LN(x + MHA(x)), Transformer/BERT), 'pre' (x + MHA(LN(x)), GPT/ViT) or 'none', got '" + v + "'.");
  } else if (f == "--no-scale") o.cfg.scale = false;
  else if (f == "--no-pe") o.cfg.positional_encoding = false;
  else if (f == "--temperature") {
    // Casting a double outside float's range to float is undefined behaviour; such a
    // value is refused here and Validate explains the usable range.
    const double t = a.Double(f);
    if (!(std::abs(t) <= std::numeric_limits<float>::max()))
      throw UsageError("--temperature = " + std::to_string(t) + " is far outside the usable range; try 1 "
                       "(below 1 sharpens the softmax, above 1 flattens it).");
    o.cfg.temperature = static_cast<float>(t);
  } else if (f == "--block") {
    const std::string v = a.Value(f);
    if (v == "attention") o.cfg.block = Block::Attention;
    else if (v == "encoder") o.cfg.block = Block::Encoder;
    else throw UsageError("--block must be 'attention' (the attention layer only) or 'encoder' (attention, then a "
                          "feed-forward network, each with residual + LayerNorm: a full Transformer encoder block), got '" + v + "'.");
  } else if (f == "--d-ff") {
    o.cfg.d_ff = a.Int(f, -kBig, kBig);
    if (o.cfg.d_ff <= 0)
      throw UsageError("--d-ff = " + std::to_string(o.cfg.d_ff) +
                       " must be at least 1: it is the width of the feed-forward network's hidden layer. "
                       "Leave it out for the usual 4 x d_model.");
  } else if (f == "--activation") {
    const std::string v = a.Value(f);
    if (v == "relu") o.cfg.activation = Activation::Relu;
    else if (v == "gelu") o.cfg.activation = Activation::Gelu;
    else throw UsageError("--activation must be 'relu' (max(0, x), the original Transformer) or 'gelu' "
                          "(x * Phi(x), BERT/GPT), got '" + v + "'.");
  }
  else if (f == "--input") o.input_npz = a.Value(f);
  else if (f == "--weights") o.weights_npz = a.Value(f);
  else return false;
  return true;
}

const char* RunFlagsHelp() {
  return
      "  --sentence S      the sentence (UTF-8, English or Korean); default \"The cat sat on the mat.\"\n"
      "  --sentence-file F read the sentence from file F (- = standard input); at most "
      "1 MiB is read and at most 1024 tokens are used\n"
      "  --heads H         num_heads (default 8)\n"
      "  --d-model D       d_model (default 512); must be divisible by num_heads\n"
      "  --kv-heads G      num_kv_heads for grouped-query attention (divides num_heads; 1 = multi-query)\n"
      "  --seed N          seed of the embeddings and weights (default 42)\n"
      "  --mask M          none | causal (default none)\n"
      "  --norm N          post: LN(x + MHA(x)) | pre: x + MHA(LN(x)) | none: x + MHA(x) (default post)\n"
      "  --no-scale        do not divide the scores by sqrt(d_k)\n"
      "  --temperature T   divide the scores by T too (default 1)\n"
      "  --no-pe           no sinusoidal positional encoding\n"
      "  --block B         attention: the attention layer only (default) | encoder: then a feed-forward\n"
      "                    network with its own residual + LayerNorm (a Transformer encoder block)\n"
      "  --d-ff N          feed-forward hidden width with --block encoder (default 4 x d_model)\n"
      "  --activation A    relu (default) | gelu (exact erf form, as torch.nn.GELU()) with --block encoder\n"
      "  --memory S2       cross-attention: keys and values come from sentence S2\n"
      "  --input X.npz     use array x, shape (seq, d_model) or (1, seq, d_model), instead of a sentence\n"
      "                    (and array memory, if present, for cross-attention); no PE is added to it\n"
      "  --weights W.npz   load W_q, W_k, W_v, W_o (+ optional b_q, b_k, b_v, b_o, ln_gamma, ln_beta, ln_eps);\n"
      "                    with --block encoder also ffn_W1, ffn_W2 (+ optional ffn_b1, ffn_b2, ln2_gamma, ln2_beta)\n";
}

namespace {
// A configuration that cannot work is a usage error: the flags must change.
void ValidateFlags(const Config& cfg, int seq, int seq_kv) {
  try {
    Validate(cfg, seq, seq_kv);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}
}  // namespace

Prepared Prepare(const RunOptions& o) {
  Prepared p;
  p.cfg = o.cfg;
  // Sizes first, before anything is allocated (with --input, d_model comes from the file,
  // so checking the default 512 against --heads would mislead).
  if (o.input_npz.empty() || o.d_model_given) ValidateFlags(p.cfg, 1, 1);
  if (o.sentence_given && !o.sentence_file.empty())
    throw UsageError("give either --sentence or --sentence-file, not both.");
  if (!o.input_npz.empty()) {
    if (o.sentence_given || !o.sentence_file.empty())
      throw UsageError("give either --sentence or --input, not both: --input replaces the sentence's embeddings.");
    const auto npz = io::LoadNpz(o.input_npz);
    p.in = io::InputsFromNpz(npz, o.input_npz);
    const int d = static_cast<int>(p.in.x.cols());
    if (o.d_model_given && o.cfg.d_model != d)
      throw UsageError("--d-model " + std::to_string(o.cfg.d_model) + " does not match '" + o.input_npz +
                       "', whose x has d_model = " + std::to_string(d) + ". Leave out --d-model: it is read from the file.");
    p.cfg.d_model = d;
    p.cfg.positional_encoding = false;  // x already holds whatever encoding it had
    ValidateFlags(p.cfg, 1, 1);
    if (!o.memory.empty()) {
      if (p.in.cross())
        throw UsageError("'" + o.input_npz + "' already holds a memory array; leave out --memory.");
      // MakeInputs calls whatever it embeds "the sentence"; here that is the memory.
      if (Tokenize(o.memory, Limits::kMaxTokens).tokens.empty())
        throw UsageError("The memory sentence has no tokens: cross-attention needs at least one key. "
                         "Leave out --memory for self-attention.");
      Inputs m = MakeInputs(o.memory, "", p.cfg, &p.notice);
      p.in.memory_tokens = m.tokens;
      p.in.memory = m.x;
    }
  } else {
    std::string sentence = o.sentence_given ? o.sentence : kDefaultSentence;
    // One byte over the cap is read so the tokenizer sees, and says, that it was cut.
    if (!o.sentence_file.empty()) {
      sentence = io::ReadFilePrefix(o.sentence_file, Limits::kMaxSentenceBytes + 1, nullptr);
      if (sentence.find('\0') != std::string::npos)
        throw Error("'" + o.sentence_file + "' contains NUL bytes, so it is not a text file. "
                    "Give a UTF-8 text file with the sentence, e.g. echo \"the cat sat\" > s.txt.");
    }
    p.sentence = sentence;
    try {
      p.in = MakeInputs(sentence, o.memory, p.cfg, &p.notice);
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
  }
  if (!o.weights_npz.empty()) {
    const auto npz = io::LoadNpz(o.weights_npz);
    p.weights = std::make_shared<const Weights>(io::WeightsFromNpz(npz, o.weights_npz, &p.cfg));
  }
  ValidateFlags(p.cfg, static_cast<int>(p.in.x.rows()),
                static_cast<int>(p.in.cross() ? p.in.memory.rows() : p.in.x.rows()));
  if (p.in.cross() && p.cfg.mask == Mask::Causal)
    throw UsageError("a causal mask hides later positions of the same sequence, but with --memory the keys come "
                     "from another sentence, so there is no 'later' to hide. Use --mask none with --memory.");
  if (!p.weights) p.weights = std::make_shared<const Weights>(InitWeights(p.cfg));
  return p;
}

int Guard(const std::string& command, const std::function<int()>& body) {
  try {
    return body();
  } catch (const UsageError& e) {
    std::cerr << "mhaviz " << command << ": error: " << e.what() << "\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "mhaviz " << command << ": error: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "mhaviz " << command << ": error: out of memory. Use fewer tokens, heads or a smaller d_model.\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "mhaviz " << command << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace mha::cli
