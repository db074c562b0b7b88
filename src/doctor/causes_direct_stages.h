// File: causes_direct_stages.h
// The direct stages family's causes, in table order (the order of ties): cause_spec.h makes each
// one a CauseId, and causes_direct_stages.cpp gives each its CauseSpec in this order (checked there
// at compile time) and weighs its evidence. Adding a cause to the family is one line here. A
// preprocessor list only: cause_spec.h includes it before CauseId exists, so it includes nothing.
#pragma once

#define INFERSCOPE_DOCTOR_DIRECT_STAGE_CAUSES(CAUSE) \
  CAUSE(kPreprocessSlowdown)                         \
  CAUSE(kDependencySlowdown)                         \
  CAUSE(kNetworkSlowdown)                            \
  CAUSE(kGatewayQueue)
