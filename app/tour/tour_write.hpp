// Writing a lesson file (docs/lessons.md): the inverse of the loader, for a lesson
// written in the app (Lesson > New lesson...) or built in code.
#pragma once

#include <string>

#include "tour/tour.hpp"

namespace mha::tour {

// The lesson as a lesson file's text: only the fields each step sets (a default the
// loader supplies is left out), in the documented order, one-space indents like the
// shipped files, UTF-8 as is. A head knocked out by its job is written by its job, the
// others by index ("L1H0"); mhaviz-small's labels file (`labels_path`, "" the assets')
// tells them apart. Throws LessonError for text that is not valid UTF-8.
std::string LessonJson(const Lesson& lesson, const std::string& labels_path = "");

// Saves `lesson` at `path` atomically (a temporary file beside it, flushed, renamed).
// The path is checked first (its directory exists and takes a new file; a teaching
// error otherwise), then the text is read back as the loader reads it (`ctx`), so a
// file that could not be played is never written. Throws mha::Error (LessonError for a
// lesson that would not load back, naming the field).
void SaveLesson(const Lesson& lesson, const std::string& path, const LoadContext& ctx = {});

}  // namespace mha::tour
