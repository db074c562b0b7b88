// SoloScheduler: per-request timelines. A request's first token (with its prefill) comes
// request_overhead + prefill_token x prompt + forward_base after it starts, every later token
// forward_base after the one before, so the last one ends the seed formula exactly.
#include "serve/engine/solo_scheduler.h"

#include <algorithm>
#include <limits>

#include "serve/engine/cost_model.h"
#include "serve/engine/text_generator.h"

namespace inferscope::serve {

SoloScheduler::SoloScheduler(const CostProfile& profile, std::uint32_t workers, std::uint32_t max_model_len)
    : profile_(profile), workers_(std::max<std::uint32_t>(1, workers)), max_model_len_(max_model_len) {}

Result<void> SoloScheduler::check(const GenerationRequest& r) const {
  auto fail = [](const std::string& cause) { return make_error("cannot schedule request from client: " + cause); };
  if (r.prompt_tokens.empty()) return fail("the prompt is empty");
  if (r.max_tokens == 0) return fail("max_tokens must be at least 1");
  if (r.prompt_tokens.size() >= max_model_len_)
    return fail("the prompt has " + std::to_string(r.prompt_tokens.size()) + " tokens; max_model_len is " +
                std::to_string(max_model_len_));
  return {};
}

Result<void> SoloScheduler::submit(SequenceId id, const GenerationRequest& request, double at) {
  if (auto ok = check(request); !ok) return ok;
  Sequence s;
  s.id = id;
  s.seed = request.seed;
  s.prompt_len = static_cast<std::uint32_t>(request.prompt_tokens.size());
  const std::uint32_t limit = std::min({request.max_tokens, max_model_len_ - s.prompt_len,
                                        solo_output_cap(profile_, s.prompt_len)});
  const std::uint32_t natural = request.ignore_eos ? limit + 1 : natural_output_length(request.seed);
  s.target_outputs = std::min(natural, limit);
  s.target_reason = natural <= limit ? FinishReason::kStop : FinishReason::kLength;
  s.start = at;
  waiting_.push_back(s);
  start_waiting(at);
  return {};
}

void SoloScheduler::start_waiting(double at) {
  while (running_.size() < workers_ && !waiting_.empty()) {
    Sequence s = waiting_.front();
    waiting_.pop_front();
    s.start = std::max(s.start, at);
    prompt_tokens_ += s.prompt_len;
    running_.emplace(s.id, s);
  }
}

bool SoloScheduler::abort(SequenceId id, double at) {
  if (running_.erase(id) > 0) {
    start_waiting(at);
    return true;
  }
  auto it = std::find_if(waiting_.begin(), waiting_.end(), [&](const Sequence& s) { return s.id == id; });
  if (it == waiting_.end()) return false;
  waiting_.erase(it);
  return true;
}

std::vector<SequenceId> SoloScheduler::abort_all() {
  std::vector<SequenceId> ids;
  for (const auto& [id, s] : running_) ids.push_back(id);
  for (const Sequence& s : waiting_) ids.push_back(s.id);
  running_.clear();
  waiting_.clear();
  return ids;
}

double SoloScheduler::first_token_at(const Sequence& s) const {
  return s.start + profile_.request_overhead_s + profile_.prefill_token_s * s.prompt_len + profile_.forward_base_s;
}

double SoloScheduler::next_at(const Sequence& s) const {
  if (!s.scheduled_sent) return s.start;
  return first_token_at(s) + profile_.forward_base_s * s.outputs;
}

std::optional<double> SoloScheduler::next_event_at() const {
  std::optional<double> best;
  for (const auto& [id, s] : running_)
    if (!best || next_at(s) < *best) best = next_at(s);
  return best;
}

// advance repeatedly takes the earliest due sequence (ties: lowest id) so events come out in time
// order and a worker freed by a finish starts the next waiting request at that finish's time.
std::vector<SoloEvent> SoloScheduler::advance(double until) {
  std::vector<SoloEvent> out;
  for (;;) {
    Sequence* due = nullptr;
    for (auto& [id, s] : running_)
      if (next_at(s) <= until && (!due || next_at(s) < next_at(*due) || (next_at(s) == next_at(*due) && id < due->id)))
        due = &s;
    if (due == nullptr) return out;
    const double at = next_at(*due);
    if (!due->scheduled_sent) {
      due->scheduled_sent = true;
      out.push_back({due->id, SoloEvent::Kind::kScheduled, at});
      continue;
    }
    if (due->outputs == 0) out.push_back({due->id, SoloEvent::Kind::kPrefillDone, at});
    out.push_back({due->id, SoloEvent::Kind::kToken, at, output_token_id(due->seed, due->outputs)});
    ++due->outputs;
    ++generation_tokens_;
    if (due->outputs >= due->target_outputs) {
      const SequenceId id = due->id;
      out.push_back({id, SoloEvent::Kind::kFinished, at, 0, due->target_reason});
      running_.erase(id);
      start_waiting(at);
    }
  }
}

void SoloScheduler::fill_stats(EngineStats& out) const {
  out.running = static_cast<std::uint32_t>(running_.size());
  out.waiting = static_cast<std::uint32_t>(waiting_.size());
  out.kv_blocks_total = 0;
  out.kv_blocks_used = 0;
  out.kv_usage = 0;
  out.prompt_tokens_total = prompt_tokens_;
  out.generation_tokens_total = generation_tokens_;
}

}  // namespace inferscope::serve
