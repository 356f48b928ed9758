// A language model's head labels and its validation text, for the CLI (ablate) the
// same way the Model view measures them: every score on windows of the validation
// text but induction, which is measured on those windows' first halves repeated
// (running text rarely repeats a phrase; an induction head rests on <s> where nothing
// repeats), as TransformerLens's detector does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lm/language_model.hpp"
#include "mha/heads.hpp"

namespace mha::lm {

// The Model view's count: 32 windows of the model's context.
inline constexpr int kLabelWindows = 32;

// Every head's profile and label (mha::LabelHead, then NameOnValidation) from the
// first `windows` windows of the validation ids.
std::vector<HeadProfile> ProfileOnValidation(const LanguageModel& lm, const std::vector<std::int32_t>& valid,
                                             int windows = kLabelWindows);

// The label from scores measured on two kinds of window: "first" on the plain ones,
// induction on the repeated ones. An induction head with nothing to copy rests on the
// first piece, so a head that scores kMinLabelScore or more for induction is named
// induction even where its first-piece weight on plain text is higher: that is what
// it does when nothing repeats, not its job.
void NameOnValidation(HeadProfile& p);

// The model's validation text: valid.txt or valid.txt.gz in assets/corpus beside the
// checkpoint's assets/models (as the Model view looks), else in the app's assets.
// Throws mha::Error saying where it looked.
std::string FindValidationText(const std::string& checkpoint);

}  // namespace mha::lm
