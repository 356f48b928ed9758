// Small pieces the teaching views share (draw/view_widgets.cpp).
#pragma once

#include <cstdint>
#include <string>

#include <imgui.h>

#include "gui/state/app_state.hpp"
#include "mha/teach.hpp"

namespace mha::gui {

// Whether there is a trace to show (HasResults: the current one, or the last valid
// one, which the results area dims); with none yet, says where results will appear.
bool HaveResultsToShow(const AppState& s);
// "head [combo] < >" for s.choice.head; returns true if the learner changed it.
bool HeadPicker(AppState& s, const char* id, float width = 0.0f);
// `v` with `digits` significant digits ("3.536", "1e-05", "-∞").
std::string Sig(double v, int digits = 4);
// "[1, 2, …, 7, 8]": at most `max_shown` entries (ElidedIndices), `digits` significant.
std::string VecString(const Eigen::Ref<const RowVec>& v, int max_shown, int digits = 4);
// Muted wrapped text.
void Muted(const char* text);
// A head's pattern label (mha/heads.hpp: "previous-token", "2-back", "induction", ...,
// a key in JSON) as the interface's language writes it.
std::string HeadPatternText(const std::string& label);
// One colour per head (the Head view's lines and switches, the Model view's frames, as
// the export draws them), 12 then repeating.
ImU32 HeadColour(int h, float alpha = 1.0f);
// A head metric's relation as the window shows it ("previous", "no clear pattern", ...):
// the core's ToString(p) is the key --dump-state keeps.
const char* PatternShown(HeadPattern p);
// "1.5 KiB"
std::string Bytes(std::int64_t b);

}  // namespace mha::gui
