// `mhaviz lesson`: the lesson tours without a window. --list names the built-in lessons
// with their steps and questions; an id (or a file) prints that lesson's steps in the
// language asked for, after checking it as the app does. `--export DIR` (one PNG per
// step) needs the window: app/main.cpp hands it to `mhaviz gui --lesson-export`.
#include <iostream>

#include "cli/commands.hpp"
#include "options/terminal.hpp"
#include "tour/tour.hpp"

namespace mha::cli {
namespace {

void DeclareLessonFlags(CLI::App& app, LessonArgs& a) {
  app.add_option("lesson", a.lesson, "a built-in lesson's id (000 to 004) or a lesson file (docs/lessons.md)")
      ->type_name("ID|FILE");
  app.add_flag("--list", a.list, "list the built-in lessons: id, steps, questions, title");
  app.add_option("--lang", a.lang, "the language of the captions: ko (default) or en")
      ->type_name("ko|en")
      ->check(CLI::IsMember({"en", "ko"}));
  options::TextFlag(app, "--export", a.export_dir,
                    "write one PNG per step of the lesson into DIR (the presented view with its\n"
                    "caption, as the window shows it: needs a display, e.g. xvfb-run)")
      ->type_name("DIR")
      ->group(options::kOutputGroup);
}

const char* KindName(tour::QuestionKind k) {
  return k == tour::QuestionKind::Choice ? "choice" : k == tour::QuestionKind::Number ? "number" : "cell";
}

void PrintLesson(const tour::Lesson& l, const std::string& lang) {
  std::cout << options::TerminalSafe(l.id + "  " + l.title.In(lang)) << "\n";
  for (std::size_t i = 0; i < l.steps.size(); ++i) {
    const tour::Step& s = l.steps[i];
    std::cout << "\n" << (i + 1) << ". [" << s.state.view << "] " << options::TerminalSafe(s.caption.In(lang)) << "\n";
    if (s.question)
      std::cout << "   ? (" << KindName(s.question->kind) << ") " << options::TerminalSafe(s.question->prompt.In(lang))
                << "\n";
  }
}

}  // namespace

LessonArgs ParseLessonArgs(const std::vector<std::string>& args) {
  LessonArgs a = options::ParseCommandArgs(
      "lesson", "The lesson tours: list them, print one's steps (mhaviz gui --lesson ID plays it).",
      "Examples:\n  mhaviz lesson --list\n  mhaviz lesson 004 --lang en\n  xvfb-run -a mhaviz lesson 004 --export "
      "handout/\n",
      DeclareLessonFlags, args);
  if (a.help) return a;
  if (!a.list && a.lesson.empty())
    throw options::UsageError("name a lesson (mhaviz lesson 004), or list them with mhaviz lesson --list.");
  if (a.list && !a.lesson.empty())
    throw options::UsageError("--list lists every lesson: leave out '" + a.lesson + "'.");
  return a;
}

int LessonCommand(const std::vector<std::string>& args) {
  return options::Guard("lesson", [&] {
    const LessonArgs a = ParseLessonArgs(args);
    if (a.help) return std::cout << a.help_text, 0;
    if (!a.export_dir.empty())
      throw options::UsageError("--export draws each step in the window: this mhaviz was built without it.");
    if (a.list) {
      const auto ids = tour::BuiltinLessonIds();
      if (ids.empty())
        throw Error("no lessons found in assets/lessons (here, beside the program, or where it was installed).");
      for (const std::string& id : ids) {
        const tour::Lesson l = tour::LoadLesson(tour::FindLesson(id));
        std::cout << id << "  " << l.steps.size() << " steps, " << l.Questions() << " questions  "
                  << options::TerminalSafe(l.title.In(a.lang)) << "\n";
      }
      return 0;
    }
    PrintLesson(tour::LoadLesson(tour::FindLesson(a.lesson)), a.lang);
    return 0;
  });
}

}  // namespace mha::cli
