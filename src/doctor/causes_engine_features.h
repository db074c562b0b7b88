// File: causes_engine_features.h
// The engine features family's causes, in table order (the order of ties): cause_spec.h makes each
// one a CauseId, and causes_engine_features.cpp gives each its CauseSpec in this order (checked
// there at compile time) and weighs its evidence. Adding a cause to the family is one line here. A
// preprocessor list only: cause_spec.h includes it before CauseId exists, so it includes nothing.
#pragma once

#define INFERSCOPE_DOCTOR_ENGINE_FEATURE_CAUSES(CAUSE) \
  CAUSE(kPrefixCacheMiss)                           \
  CAUSE(kSpecDecodeAcceptanceDrop)                  \
  CAUSE(kLoraAdapterThrash)
