// File: causes_disaggregation.h
// The disaggregation family's causes, in table order (the order of ties): cause_spec.h makes each
// one a CauseId, and causes_disaggregation.cpp gives each its CauseSpec in this order (checked
// there at compile time) and weighs its evidence. A preprocessor list only: cause_spec.h includes
// it before CauseId exists, so it includes nothing.
#pragma once

#define INFERSCOPE_DOCTOR_DISAGGREGATION_CAUSES(CAUSE) \
  CAUSE(kKvTransferSlowdown)                           \
  CAUSE(kPrefillPoolSaturated)                         \
  CAUSE(kDecodePoolSaturated)                          \
  CAUSE(kRoutingImbalance)
