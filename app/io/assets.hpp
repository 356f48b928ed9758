// Where the app's own files are: assets/fonts, assets/models (the shipped language
// model and its tokenizer) and assets/corpus (its validation text), whether mhaviz runs
// from a build tree, from an installed prefix (share/mhaviz/...), or moved elsewhere.
#pragma once

#include <string>
#include <vector>

namespace mha::io {

// The directory of the running executable (/proc/self/exe), or "" if unknown.
std::string ExeDir();

// Directories that may hold assets/<kind> ("fonts", "models", "corpus"), most specific
// first: $MHAVIZ_ASSETS/<kind>; assets/<kind> beside the executable and in its parent
// directories (a build tree); share/mhaviz/<kind> beside an installed bin/ (found
// through the executable, so a moved prefix still works); the source tree this binary
// was built from; the configured install prefix.
std::vector<std::string> AssetDirs(const std::string& kind);

// The first AssetDirs(kind) entry holding a regular file `file`, as a path; "" if none.
std::string FindAsset(const std::string& kind, const std::string& file);

// The shipped language model's name on the command line (--model mhaviz-small) and its
// checkpoint's file name in assets/models.
inline constexpr const char* kSmallModelArg = "mhaviz-small";
inline constexpr const char* kSmallModelFile = "mhaviz-small.npz";

}  // namespace mha::io
