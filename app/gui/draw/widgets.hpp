// Small drawing helpers shared by the panels.
#pragma once

#include <string>
#include <vector>

#include <imgui.h>

#include "gui/state/app_state.hpp"

namespace mha::gui {

// A bold heading and, under it, one muted line that says what the section teaches.
// With `inline_subtitle`, the explanation follows the heading on the same line, where
// that leaves it at least half the width.
void SectionTitle(const AppState& s, const char* title, const char* subtitle = nullptr, bool inline_subtitle = false);

// An explanatory paragraph, muted and wrapped; while presentation mode folds
// explanations (FoldExplanations) it is kept for the header's "?" instead of drawn.
// SectionTitle's subtitle is one too.
void Explanation(const char* text);
// From here on, explanations go to `sink` instead of the screen (null: drawn again).
void FoldExplanations(std::vector<std::string>* sink);
// Whether explanations are folded now (the view is presented).
bool FoldingExplanations();

// A coloured box of wrapped text (errors, notices) that spans the available width.
void MessageBox(const std::string& text, ImU32 bg, ImU32 fg);

// "(?)" that shows `text` as a tooltip.
void HelpMarker(const char* text);

// Records the last item's rectangle under `name` for --probe (GUI tests).
void Probe(AppState& s, const char* name);

// Left-aligned label in a fixed-width column, then the next widget on the same line
// filling the rest: the form layout of the Controls panel.
void FormLabel(const char* label, float label_width);

// `text` shortened with "…" to fit `max_width` pixels (never splits a UTF-8 sequence).
std::string Ellipsize(const std::string& text, float max_width);
// SameLine where the next `width` pixels still fit before the window's edge, else a
// new line (a row of controls at large text wraps rather than running past the edge).
void SameLineIfFits(float width, float spacing = -1.0f);
// The width ImGui::Button(label) takes (its text up to "##", and the frame's padding).
float ButtonWidth(const char* label);
// The width ImGui::Checkbox or ImGui::RadioButton with `label` takes (box and text).
float ToggleWidth(const char* label);

// Text drawn rotated 90° counter-clockwise (reading bottom to top), with the start
// of the text at `bottom_left`.
void AddTextVertical(ImDrawList* dl, ImVec2 bottom_left, ImU32 col, const char* text);

// Texture `tex` of `rows` rows over [a, b], only its first `ready` rows (a matrix
// texture still being coloured, MatrixTextures): they take their share of the height.
void AddImageRows(ImDrawList* dl, unsigned int tex, ImVec2 a, ImVec2 b, int ready, int rows);

// Tokens as numbered chips, wrapped to the available width, in a box of at most
// five lines that scrolls; chips out of view are not drawn. `highlight` is drawn
// hot. Returns the hovered chip or -1.
int TokenChips(const AppState& s, const char* id, const std::vector<std::string>& tokens, int highlight);

// "33,554,432"
std::string Thousands(long long n);

}  // namespace mha::gui
