// File: localize.h
// localize() says *where* a diagnosis' change sits. It diagnoses each slice of the data against
// its own baseline (each instance of a job serving one model; each model) and compares the
// slices: a minority of instances slower than their peers in one stage, far beyond the peers'
// spread, is a `replica_slowdown` finding at that instance, ranked first; every replica slowed
// together leaves the fleet-wide finding (and says so). One model of several slowed localizes
// its finding to that model. A single down target localizes `target_down`.
// Example: SlicePlan p = plan_slices(snap.sources); ... localize(d, instance_slices, model_slices);
// Pure functions on values; thread-safe. Cost: one diagnose() per slice (microseconds each).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "doctor/diagnosis.h"

namespace inferscope::doctor {

// Slice is the data narrowed to one job/instance/model (or one model over every instance).
struct Slice {
  Where where;
  Snapshot snapshot;
};

// SlicePlan says which slices are worth reading: the instances of each job+model served by two
// or more instances, the engines (data-parallel ranks, vLLM's `engine` label) of each instance
// that runs two or more (in `instances` too, with Where::engine set: peers of one another), and
// the models when there are two or more. `notes` says what was left out.
struct SlicePlan {
  std::vector<Where> instances;
  std::vector<Where> models;
  std::vector<std::string> notes;
};

// plan_slices reads the sources of a snapshot (Snapshot::sources) and caps the instance slices
// at `max_instances` and the model slices at `max_models` (the rest is named in notes).
SlicePlan plan_slices(const std::vector<Where>& sources, std::size_t max_instances = 16, std::size_t max_models = 8);

// where_name names a slice for people: its instance, and "engine <rank>" after it for one
// data-parallel rank ("127.0.0.1:8000 engine 2").
std::string where_name(const Where& where);

// instance_of returns host:port of a scrape URL ("http://127.0.0.1:8001/metrics" -> "127.0.0.1:8001").
std::string instance_of(const std::string& url);

// localize compares the slices and adds, moves or narrows findings of `d` (diagnosed on the whole
// data), its verdict and headline, and notes what it could not judge. Slices with fewer than
// `options.min_requests` finished requests in a window are named as too few to judge.
void localize(Diagnosis& d, const std::vector<Slice>& instances, const std::vector<Slice>& models,
              const DiagnoseOptions& options = {});

}  // namespace inferscope::doctor
