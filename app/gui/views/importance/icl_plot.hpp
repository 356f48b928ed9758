// The Importance view's in-context learning curve (Olsson et al. 2022): the loss on
// each piece of a repeated random span, first copy then second, intact and without the
// induction head, as `mhaviz ablate --icl` measures it.
#pragma once

#include "gui/state/app_state.hpp"
#include "gui/views/importance/measure.hpp"

namespace mha::gui {

// The curve of `m` (a partial one's: a note while it is measured), `width` wide.
void DrawIclPlot(AppState& s, const ImportanceResult& m, float width);

}  // namespace mha::gui
