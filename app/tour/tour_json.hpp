// Reading a lesson file's JSON with errors that say where: each check names the file,
// the field's JSON pointer (/steps/3/head) and what the field should hold; bad JSON
// (invalid UTF-8 included) is reported by line and column. Internal to tour/.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mha/config.hpp"
#include "tour/tour.hpp"

namespace mha::tour {

// mhaviz-small's heads that carry `job` in its labels file (`labels_path`, or the one in
// the assets when ""), the head a step means first: the heads named by the job before
// those that list it under "also", the higher pattern score first (tour_load.cpp).
std::vector<HeadRef> HeadsWithJob(const std::string& job, const std::string& labels_path);

class JsonReader {
 public:
  explicit JsonReader(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }

  // Parses `text`, refusing nesting deeper than kMaxDepth as it goes.
  nlohmann::json Parse(const std::string& text);

  [[noreturn]] void Fail(const std::string& pointer, const std::string& why) const;

  // `j` at `at` is an object whose keys are all among `known` (a misspelt key is an
  // error, not a silently ignored setting).
  void Object(const nlohmann::json& j, const std::string& at, std::initializer_list<const char*> known) const;
  // The field `key` of object `j`: a string (at most kMaxTextBytes), "" when absent and
  // not `required`.
  std::string Str(const nlohmann::json& j, const std::string& at, const char* key, bool required) const;
  // A whole number in [lo, hi].
  int Int(const nlohmann::json& j, const std::string& at, int lo, int hi) const;
  double Number(const nlohmann::json& j, const std::string& at, double lo, double hi) const;
  // {"ko": ..., "en": ...}: both languages, each at most kMaxTextBytes.
  Text TextAt(const nlohmann::json& j, const std::string& at) const;
  Text TextOf(const nlohmann::json& j, const std::string& at, const char* key, bool required) const;
  // The sliders of a seeded step, checked as the app checks them.
  Config ConfigOf(const nlohmann::json& j, const std::string& at) const;

 private:
  std::string name_;
};

}  // namespace mha::tour
