// Flags several commands declare alike, declared once: how many CPU threads, and a
// decimal number in a range (a temperature), each with its teaching error.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace mha::options {

// --threads N. `every_core_at_zero`: 0 means one thread per core, and the range is
// 0 .. Limits::kMaxThreads (train, grad, ablate); else it is 1 .. kMaxThreads, refused
// below 1 with "Try 1, or the number of cores" (bench, generate).
CLI::Option* ThreadsFlag(CLI::App& app, std::function<void(int)> set, const std::string& help, bool every_core_at_zero);

// `flag` takes a decimal number (a temperature): what is not one is refused naming
// `example` ("--temperature expects a number such as 0.8, got 'x'."); a number `rule`
// cannot use is refused with `rule`'s message (given the number and the text typed,
// made safe for the terminal; "" for a usable one).
CLI::Option* DecimalFlag(CLI::App& app, const std::string& flag, std::function<void(double)> set,
                         const std::string& help, const std::string& example,
                         std::function<std::string(double value, const std::string& typed)> rule);

}  // namespace mha::options
