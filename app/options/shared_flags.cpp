#include "options/shared_flags.hpp"

#include <cmath>
#include <cstdlib>

#include "mha/config.hpp"
#include "options/flags.hpp"
#include "options/terminal.hpp"

namespace mha::options {

CLI::Option* ThreadsFlag(CLI::App& app, std::function<void(int)> set, const std::string& help,
                         bool every_core_at_zero) {
  if (every_core_at_zero) return IntFlag(app, "--threads", 0, Limits::kMaxThreads, std::move(set), help);
  constexpr long long kBig = 1LL << 30;  // refused by the rule, which names the range
  return IntFlag(app, "--threads", -kBig, kBig, std::move(set), help, [](long long n) {
    return n >= 1 && n <= Limits::kMaxThreads
               ? std::string()
               : "--threads = " + std::to_string(n) + " must be between 1 and " + std::to_string(Limits::kMaxThreads) +
                     ". Try 1, or the number of cores.";
  });
}

CLI::Option* DecimalFlag(CLI::App& app, const std::string& flag, std::function<void(double)> set,
                         const std::string& help, const std::string& example,
                         std::function<std::string(double value, const std::string& typed)> rule) {
  return app
      .add_option_function<std::string>(
          flag, [set = std::move(set)](const std::string& v) { set(std::strtod(v.c_str(), nullptr)); }, help)
      ->check(CLI::Validator(
          [flag, example, rule = std::move(rule)](std::string& v) -> std::string {
            char* end = nullptr;
            const double x = std::strtod(v.c_str(), &end);
            // nan and inf are not numbers a flag can use, whatever its range.
            if (v.empty() || *end != '\0' || !std::isfinite(x))
              return flag + " expects a number such as " + example + ", got '" + TerminalSafe(v) + "'.";
            return rule ? rule(x, TerminalSafe(v)) : std::string();
          },
          ""));
}

}  // namespace mha::options
