// Every subcommand's flags are declared once, with CLI11: one declaration gives a
// flag's parsing, its --help line and its teaching error. The flags that say what to
// compute are declared in one function, AddRunFlags, that every subcommand calls, so
// `trace`, `export` and `gui` accept and refuse exactly the same things.
//
// A subcommand is a declaration function plus a command function:
//
//   struct FooArgs { RunOptions run; std::string out; bool help = false; std::string help_text; };
//   void DeclareFooFlags(CLI::App& app, FooArgs& a) {
//     AddRunFlags(app, a.run);
//     TextFlag(app, "--out", a.out, "where to write")->type_name("FILE")->group(kOutputGroup);
//   }
//   int FooCommand(const std::vector<std::string>& argv) {
//     return Guard("foo", [&] {
//       const FooArgs a = ParseCommandArgs("foo", "What foo does.", "", DeclareFooFlags, argv);
//       if (a.help) return std::cout << a.help_text, 0;
//       ...
//     });
//   }
//
// and one row in main.cpp's table of commands.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "options/run_options.hpp"

namespace mha::options {

inline constexpr const char* kComputeGroup = "What to compute";
inline constexpr const char* kOutputGroup = "Output";

// Sets up `app` for subcommand `command` (mhaviz's help layout, a repeated flag keeps
// its last value, CLI11's errors reworded as teaching messages), parses `args`, and
// returns true if --help was given. Throws UsageError. `unexpected` words the error
// for a bare word (default: "put a sentence after --sentence").
bool ParseFlags(CLI::App& app, const std::string& command, const std::vector<std::string>& args,
                const std::function<std::string(const std::string& word)>& unexpected = {});

// A subcommand's parse: a fresh app named "mhaviz <command>" with `about` above the
// flags and `footer` below, `declare`'s flags bound to a fresh A, and `args` parsed.
// On --help, a.help is set and a.help_text holds the help CLI11 builds from the
// declarations. A needs `bool help` and `std::string help_text`.
template <class A>
A ParseCommandArgs(const std::string& command, const std::string& about, const std::string& footer,
                   void (*declare)(CLI::App&, A&), const std::vector<std::string>& args,
                   const std::function<std::string(const std::string& word)>& unexpected = {}) {
  A a;
  CLI::App app{about, "mhaviz " + command};
  app.footer(footer);
  declare(app, a);
  if (ParseFlags(app, command, args, unexpected)) {
    a.help = true;
    a.help_text = app.help();
  }
  return a;
}

// --heads, --d-model, --kv-heads, --seed (also `bench`'s).
void AddModelSizeFlags(CLI::App& app, RunOptions& o);
// Everything that says what to compute: the sentence or --input, the configuration,
// --weights. Calls AddModelSizeFlags, and makes CheckRunOptions (flags that contradict
// each other) app's final callback, so it runs after parsing; a subcommand with its own
// combination rules checks them after ParseFlags.
void AddRunFlags(CLI::App& app, RunOptions& o);

// Building blocks for a flag with a teaching error. Every integer flag of every
// subcommand goes through `WholeNumber`: digits with at most a leading '-' (no spaces,
// no '+', no hex), in [lo, hi] ("--heads expects a whole number ..., got 'x'."). `rule`,
// if given, returns an error message for a number the flag cannot use, or "", and is
// asked first about numbers outside [lo, hi] too, so its message can name the limit.
// Otherwise an out-of-range number is refused with [lo, hi], or, for flags whose range
// here is only a loose guard (the precise check comes later, mha::Validate), with
// `limit` ("num_heads <= 256"). `IntFlag` declares such a flag; `NumberFlag` binds one
// to an int; `SeedFlag` takes any 64-bit unsigned number.
CLI::Validator WholeNumber(const std::string& flag, long long lo, long long hi,
                           std::function<std::string(long long)> rule = {}, const std::string& limit = "");
CLI::Option* IntFlag(CLI::App& app, const std::string& flag, long long lo, long long hi, std::function<void(int)> set,
                     const std::string& help, std::function<std::string(long long)> rule = {},
                     const std::string& limit = "");
CLI::Option* NumberFlag(CLI::App& app, const std::string& flag, int& target, long long lo, long long hi,
                        const std::string& help);
CLI::Option* SeedFlag(CLI::App& app, const std::string& flag, std::function<void(std::uint64_t)> set,
                      const std::string& help);
// A whole number as typed (digits only, a leading '-' if allow_minus) within [lo, hi];
// nullopt for anything else: empty, spaces, '+', hex, or beyond long long (no wrap-around:
// sscanf's %d read 4294967297 as 1).
std::optional<long long> ParseWholeNumber(std::string_view v, long long lo, long long hi, bool allow_minus = false);
// Two whole numbers from lo to hi joined by `sep` ("4x4", 'x'); nullopt otherwise.
std::optional<std::pair<int, int>> ParseNumberPair(std::string_view v, char sep, int lo, int hi);
// A value that must not be empty (`empty_error` says what to give instead).
CLI::Option* TextFlag(CLI::App& app, const std::string& flag, std::string& target, const std::string& help,
                      const std::string& empty_error = "");
// --attention standard|flash: how the attention core is computed (mha::Attention);
// `set` gets the choice. Declared by the subcommands that offer Flash (trace, bench).
CLI::Option* AttentionFlag(CLI::App& app, std::function<void(Attention)> set);
// --preset lesson|heads: one of the hand-built examples (the GUI's and export's);
// `set` gets the name.
CLI::Option* PresetFlag(CLI::App& app, std::function<void(const std::string&)> set);

}  // namespace mha::options
