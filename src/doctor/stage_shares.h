// File: stage_shares.h
// The pipeline's stages in order, which engine stages a gateway's own stages stand for, and how
// each stage's change is shared among the causes that can move it: by strength x the weight in
// the cause's CauseSpec. Internal to the doctor. Pure functions over an Evaluation.
// Example: assign_shares(evaluation); hypothesis.portions["decode"] is its seconds of decode.
#pragma once

#include <optional>
#include <span>

#include "doctor/cause_family.h"

namespace inferscope::doctor::detail {

// pipeline lists the stages in the order a request passes them (the stage table's rows).
std::span<const Stage> pipeline();

// stands_for lists the engine stages a gateway stage carries when the engine's own are not
// measured: a gateway sees the upstream's time to first token (its queue and prefill) and the
// stream after it (its decode). Empty for every other stage.
std::span<const Stage> stands_for(Stage stage);

// gateway_stage_of is the gateway stage that carries `engine_stage`; nullopt when none does.
std::optional<Stage> gateway_stage_of(Stage engine_stage);

// assign_shares splits every measured stage's rise among the hypotheses that can move it,
// adding to their portions.
void assign_shares(Evaluation& e);

}  // namespace inferscope::doctor::detail
