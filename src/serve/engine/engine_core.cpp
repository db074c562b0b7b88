// The scheduler follows vLLM v1's Scheduler.schedule(): running sequences first (oldest first,
// preempting the newest when blocks run out), then - only if nothing was preempted - waiting
// sequences in FCFS order while the token budget, max_num_seqs and free blocks allow.
#include "serve/engine/engine_core.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "serve/engine/hashing.h"
#include "serve/engine/text_generator.h"

#include "inferscope/common/bug.h"

namespace inferscope::serve {
namespace {
// The hash chain of a sequence's blocks starts here (xor its hash_salt).
constexpr std::uint64_t kHashChainStart = 0x1234'5678'9ABC'DEF0ULL;

std::uint64_t blocks_for(std::uint64_t tokens, std::uint32_t block_size) {
  return (tokens + block_size - 1) / block_size;
}

// acceptance_threshold turns an acceptance probability into the integer test the draft draws
// use: unit_double(h) < acceptance exactly when (h >> 11) < the threshold. Exact: the 53-bit
// draw converts to double without rounding and scaling by 2^53 is exact, so x * 2^-53 < a holds
// for an integer x exactly when x < ceil(a * 2^53) (a <= 0 or NaN keeps nothing, a >= 1 all).
std::uint64_t acceptance_threshold(double acceptance) {
  if (!(acceptance > 0)) return 0;
  if (acceptance >= 1) return std::uint64_t{1} << 53;
  return static_cast<std::uint64_t>(std::ceil(std::ldexp(acceptance, 53)));
}
}  // namespace

struct EngineCore::Sequence {
  SequenceId id = 0;
  // Prompt, then outputs: the first `length` are set. Sized once at submit for every token the
  // sequence can hold (prompt + target_outputs, + 1), so a step writes its tokens without a size
  // check or a copy call per token; left uninitialized beyond `length`.
  std::unique_ptr<std::uint32_t[]> tokens;
  std::uint32_t length = 0;
  std::uint32_t prompt_len = 0;
  std::uint32_t target_outputs = 0;
  FinishReason target_reason = FinishReason::kLength;
  std::uint64_t seed = 0;
  // Per-request halves of the per-token hashes, computed once at submit: output_token_key(seed)
  // for the token ids, and the draft-acceptance stream's key (see accepted_drafts).
  std::uint64_t token_key = 0, draft_key = 0;
  std::uint32_t lora = 0;  // adapter (0 = base model)
  // Starts the block hash chain: 0 for every prompt, unique for one the prefix_cache_scramble
  // fault set apart (its blocks then match nothing cached and nothing later matches them).
  std::uint64_t hash_salt = 0;
  std::uint32_t computed = 0;          // tokens whose KV is computed
  std::vector<BlockId> blocks;
  std::vector<std::uint64_t> hashes;   // chain hashes of the full blocks of `tokens`
  std::size_t committed_blocks = 0;    // leading blocks offered to the prefix cache
  bool ever_scheduled = false, prefill_reported = false, running = false;
  bool kv_present = false;  // GenerationRequest::kv_present, until the first admission or a preemption
  std::uint32_t outputs() const { return length - prompt_len; }
  std::uint32_t num_tokens() const { return length; }
};

EngineCore::EngineCore(const CoreConfig& config, const CostProfile& profile)
    : config_(config),
      profile_(profile),
      capacity_blocks_((config.kv_capacity_tokens ? config.kv_capacity_tokens : profile.kv_capacity_tokens) /
                       std::max<std::uint32_t>(config.block_size, 1)),
      kv_(capacity_blocks_, config.enable_prefix_caching) {
  if (config.block_size == 0 || config.max_num_seqs == 0 || config.max_num_batched_tokens == 0 ||
      config.max_model_len < 2 || capacity_blocks_ == 0 || config.speculative_tokens > kMaxSpeculativeTokens)
    throw std::invalid_argument("EngineCore: block_size, max_num_seqs, max_num_batched_tokens, "
                                "KV capacity must be > 0, max_model_len >= 2 and speculative_tokens <= kMaxSpeculativeTokens");
}

EngineCore::~EngineCore() = default;

Result<void> EngineCore::check(const GenerationRequest& r) const {
  auto fail = [](const std::string& cause) { return make_error("cannot schedule request from client: " + cause); };
  if (r.prompt_tokens.empty()) return fail("the prompt is empty");
  if (r.max_tokens == 0) return fail("max_tokens must be at least 1");
  if (r.prompt_tokens.size() >= config_.max_model_len)
    return fail("the prompt has " + std::to_string(r.prompt_tokens.size()) +
                " tokens; max_model_len is " + std::to_string(config_.max_model_len));
  if (blocks_for(r.prompt_tokens.size() + 1, config_.block_size) > capacity_blocks_)
    return fail("the prompt has " + std::to_string(r.prompt_tokens.size()) +
                " tokens, more than the KV cache holds (" +
                std::to_string(capacity_blocks_ * config_.block_size) + ")");
  return {};
}

Result<void> EngineCore::submit(SequenceId id, GenerationRequest request) {
  if (auto ok = check(request); !ok) return ok;
  if (sequences_.count(id)) return make_error("cannot schedule request from client: duplicate sequence id");
  auto seq = std::make_unique<Sequence>();
  seq->id = id;
  seq->prompt_len = static_cast<std::uint32_t>(request.prompt_tokens.size());
  seq->seed = request.seed;
  seq->token_key = output_token_key(request.seed);
  seq->draft_key = mix64(request.seed ^ 0x5BEC'D0DE'0000'0000ULL);
  seq->lora = config_.max_loras > 0 ? std::min(request.lora, kMaxLoraAdapters) : 0;
  seq->kv_present = request.kv_present;
  if (faults_.prefix_cache_scramble > 0 && unit_double(mix64(id ^ 0x5C4A'3B1E'0000'0001ULL)) < faults_.prefix_cache_scramble)
    seq->hash_salt = mix64(id) | 1;
  std::uint32_t limit = std::min({request.max_tokens, config_.max_model_len - seq->prompt_len,
                                  solo_output_cap(profile_, seq->prompt_len)});
  std::uint32_t natural = request.ignore_eos ? limit + 1 : natural_output_length(request.seed);
  seq->target_outputs = std::min(natural, limit);
  seq->target_reason = natural <= limit ? FinishReason::kStop : FinishReason::kLength;
  // + 1: room for the first output token even were target_outputs 0.
  seq->tokens = std::make_unique_for_overwrite<std::uint32_t[]>(std::size_t{seq->prompt_len} + seq->target_outputs + 1);
  std::copy(request.prompt_tokens.begin(), request.prompt_tokens.end(), seq->tokens.get());
  seq->length = seq->prompt_len;
  seq->blocks.reserve(blocks_for(std::size_t{seq->prompt_len} + seq->target_outputs + 1, config_.block_size));
  if (config_.enable_prefix_caching)
    seq->hashes.reserve(blocks_for(std::size_t{seq->prompt_len} + seq->target_outputs, config_.block_size));
  waiting_.push_back(seq.get());
  sequences_.emplace(id, std::move(seq));
  return {};
}

bool EngineCore::abort(SequenceId id) {
  auto it = sequences_.find(id);
  if (it == sequences_.end()) return false;
  Sequence* seq = it->second.get();
  if (seq->running) running_.erase(std::find(running_.begin(), running_.end(), seq));
  else waiting_.erase(std::find(waiting_.begin(), waiting_.end(), seq));
  kv_.release(seq->blocks);
  sequences_.erase(it);
  return true;
}

std::vector<SequenceId> EngineCore::abort_all() {
  std::vector<SequenceId> ids;
  for (Sequence* s : running_) ids.push_back(s->id);
  for (Sequence* s : waiting_) ids.push_back(s->id);
  for (SequenceId id : ids) abort(id);
  return ids;
}

StepPlan EngineCore::plan_step() {
  if (in_flight_) INFERSCOPE_BUG("EngineCore: plan_step while a step is in flight");
  StepPlan plan;
  StepShape shape;
  scheduled_.clear();
  bool preempted = false;
  // A shrunken KV capacity (fault) takes blocks back at once, newest sequences first.
  while (kv_.used() > kv_.limit() && !running_.empty()) {
    Sequence* victim = running_.back();
    running_.pop_back();
    preempt(*victim, plan);
    preempted = true;
  }
  std::uint32_t budget = config_.max_num_batched_tokens;
  lora_step_seconds_ = 0;
  preempted = schedule_running(budget, plan, shape) || preempted;
  if (!preempted) schedule_waiting(budget, plan, shape);
  plan.prefill_tokens = shape.prefill_tokens;
  plan.decode_seqs = shape.decode_seqs;
  // Adapter loads (LoRA) come before the forward pass that needs them.
  plan.model_seconds = step_cost(profile_, shape, faults_.prefill_slowdown, faults_.decode_slowdown) + lora_step_seconds_;
  lora_load_seconds_ += lora_step_seconds_;
  in_flight_ = !plan.empty();
  plan_totals_.prefill_tokens = plan.prefill_tokens;
  plan_totals_.decode_seqs = plan.decode_seqs;
  plan_totals_.draft_tokens = plan.draft_tokens = shape.draft_tokens;
  plan_totals_.model_seconds = plan.model_seconds;
  return plan;
}

bool EngineCore::schedule_running(std::uint32_t& budget, StepPlan& plan, StepShape& shape) {
  bool preempted = false;
  std::size_t i = 0;
  while (i < running_.size() && budget > 0) {
    Sequence& seq = *running_[i];
    std::uint32_t num_new = std::min(seq.num_tokens() - seq.computed, budget);
    const std::uint32_t drafts = drafts_for(seq, budget - num_new);
    bool scheduled = true;
    while (!allocate_for(seq, num_new + drafts)) {
      Sequence* victim = running_.back();
      running_.pop_back();
      if (victim == &seq && i == 0) {
        // Alone and still out of blocks: it can never fit the current capacity.
        seq.running = false;
        kv_.release(seq.blocks);
        plan.rejected.push_back(seq.id);
        sequences_.erase(seq.id);
        scheduled = false;
        break;
      }
      preempt(*victim, plan);
      preempted = true;
      if (victim == &seq) {
        scheduled = false;
        break;
      }
    }
    if (!scheduled) break;
    add_to_step(seq, num_new, shape, drafts);
    budget -= num_new + drafts;
    ++i;
  }
  return preempted;
}

// admit_lora says whether `seq` may start now: no adapter, its adapter loaded, or a slot free
// (or held by an adapter no running sequence uses, which is evicted, least recently used first);
// a load adds lora_load_s to the step. `in_use`: adapters of the running sequences.
bool EngineCore::admit_lora(const Sequence& seq, std::uint64_t& in_use, double& load_seconds) {
  if (seq.lora == 0) return true;
  const std::uint64_t bit = std::uint64_t{1} << (seq.lora - 1);
  auto touch = [&] {
    std::erase(lora_lru_, seq.lora);
    lora_lru_.push_back(seq.lora);
    in_use |= bit;
  };
  if (lora_loaded_ & bit) {
    touch();
    return true;
  }
  const std::uint32_t slots = effective_max_loras();
  // Evict idle adapters until one slot is free (beyond a cut slot count, several).
  for (auto it = lora_lru_.begin(); it != lora_lru_.end() && lora_lru_.size() >= slots;) {
    const std::uint64_t victim = std::uint64_t{1} << (*it - 1);
    if (in_use & victim) {
      ++it;
      continue;
    }
    lora_loaded_ &= ~victim;
    it = lora_lru_.erase(it);
  }
  if (lora_lru_.size() >= slots) return false;
  lora_loaded_ |= bit;
  ++lora_loads_;
  load_seconds += profile_.lora_load_s;
  touch();
  return true;
}

void EngineCore::schedule_waiting(std::uint32_t& budget, StepPlan& plan, StepShape& shape) {
  const std::uint32_t bs = config_.block_size;
  std::uint64_t lora_in_use = 0;
  if (config_.max_loras > 0) {
    for (const Sequence* s : running_)
      if (s->lora) lora_in_use |= std::uint64_t{1} << (s->lora - 1);
    // Slots cut (fault max_loras): idle adapters beyond them leave, least recently used first.
    const std::uint32_t slots = effective_max_loras();
    for (auto it = lora_lru_.begin(); it != lora_lru_.end() && lora_lru_.size() > slots;) {
      const std::uint64_t bit = std::uint64_t{1} << (*it - 1);
      if (lora_in_use & bit) {
        ++it;
        continue;
      }
      lora_loaded_ &= ~bit;
      it = lora_lru_.erase(it);
    }
  }
  // A request whose adapter cannot get a slot is passed over (it keeps its place) and the ones
  // behind it may start, as vLLM's scheduler skips requests beyond the LoRA budget.
  std::size_t at = 0;
  while (at < waiting_.size() && budget > 0 && running_.size() < effective_max_num_seqs()) {
    Sequence& seq = *waiting_[at];
    const std::uint32_t num_tokens = seq.num_tokens();
    if (blocks_for(num_tokens, bs) > kv_.limit()) {  // never fits the reduced capacity
      waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(at));
      plan.rejected.push_back(seq.id);
      sequences_.erase(seq.id);
      continue;
    }
    if (seq.lora && !admit_lora(seq, lora_in_use, lora_step_seconds_)) {
      ++at;
      continue;
    }
    PrefixMatch match;
    std::size_t max_blocks = (num_tokens - 1) / bs;  // at least one token is always computed
    if (config_.enable_prefix_caching) match = kv_.match(std::span(hashes_for(seq, max_blocks)).first(max_blocks));
    const auto cached_tokens = static_cast<std::uint32_t>(match.blocks * bs);
    // Transferred KV (a disaggregated decode worker): everything but the last token is present.
    const std::uint32_t hit_tokens = seq.kv_present ? std::max(cached_tokens, num_tokens - 1) : cached_tokens;
    const std::uint32_t num_new = std::min(num_tokens - hit_tokens, budget);
    const std::size_t fresh = blocks_for(hit_tokens + num_new, bs) - match.blocks;
    if (!kv_.can_take(match.revive + fresh)) break;  // FCFS: nobody overtakes the head
    kv_.acquire(seq.hashes, match.blocks, seq.blocks);
    kv_.allocate(fresh, seq.blocks);
    seq.computed = hit_tokens;
    seq.committed_blocks = match.blocks;
    if (config_.enable_prefix_caching) {
      prefix_queries_ += num_tokens;
      prefix_hits_ += cached_tokens;
    }
    seq.kv_present = false;
    waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(at));
    running_.push_back(&seq);
    seq.running = true;
    if (!seq.ever_scheduled) {
      seq.ever_scheduled = true;
      plan.first_scheduled.push_back(seq.id);
      ++shape.new_requests;
    }
    add_to_step(seq, num_new, shape);
    budget -= num_new;
  }
}

bool EngineCore::allocate_for(Sequence& seq, std::uint32_t num_new) {
  // Most steps fit the blocks the sequence holds: test that without dividing.
  if (seq.computed + std::uint64_t{num_new} <= seq.blocks.size() * std::uint64_t{config_.block_size}) return true;
  std::uint64_t need = blocks_for(seq.computed + num_new, config_.block_size);
  if (need <= seq.blocks.size()) return true;
  return kv_.allocate(need - seq.blocks.size(), seq.blocks);
}

void EngineCore::preempt(Sequence& seq, StepPlan& plan) {
  kv_.release(seq.blocks);
  seq.computed = 0;
  seq.kv_present = false;
  seq.committed_blocks = 0;
  seq.running = false;
  waiting_.push_front(&seq);
  plan.preempted.push_back(seq.id);
  ++preemptions_;
}

void EngineCore::add_to_step(Sequence& seq, std::uint32_t num_new, StepShape& shape, std::uint32_t drafts) {
  const bool decode = seq.outputs() > 0 && num_new == 1 && seq.computed + 1 == seq.num_tokens();
  if (decode) {
    ++shape.decode_seqs;
    shape.decode_context += seq.computed + 1;
    shape.draft_tokens += drafts;
  } else {
    shape.prefill_tokens += num_new;
    shape.prefill_context += num_new * (seq.computed + (num_new - 1) / 2.0);
  }
  scheduled_.push_back({seq.id, num_new, decode ? drafts : 0});
}

// drafts_for: the drafts a decoding sequence verifies this step. None while it prefills (vLLM
// proposes from the first output token on) and none beyond its last output token (they could
// never be kept), within the step's token budget.
std::uint32_t EngineCore::drafts_for(const Sequence& seq, std::uint32_t budget) const {
  if (config_.speculative_tokens == 0 || seq.outputs() == 0 || seq.computed + 1 != seq.num_tokens()) return 0;
  const std::uint32_t left = seq.target_outputs - seq.outputs();  // >= 1 while it runs
  return std::min({config_.speculative_tokens, left - 1, budget});
}

// accepted_drafts draws how many of `drafts` proposals the verify step keeps: position j is kept
// with the acceptance probability while every position before it was (a draft that misses ends
// the run, as rejection sampling does). Deterministic in the sequence's seed and output index,
// so the same request accepts the same drafts on every run at the same acceptance.
// `threshold`: acceptance_threshold(the acceptance), so the test per draw is one integer compare
// on the same draws. (Drawing every position and counting the leading hits, branch-free, measured
// slower: it makes all the draws where stopping at the first miss makes 2.2 of 3 at 0.7.)
std::uint32_t EngineCore::accepted_drafts(const Sequence& seq, std::uint32_t drafts, std::uint64_t threshold) const {
  const std::uint64_t base = mix64(seq.draft_key + seq.outputs());
  std::uint32_t n = 0;
  while (n < drafts && (mix64(base + n) >> 11) < threshold) ++n;
  return n;
}

StepResult EngineCore::finish_step() {
  if (!in_flight_) INFERSCOPE_BUG("EngineCore: finish_step without a planned step");
  in_flight_ = false;
  StepResult result;
  result.prefill_tokens = plan_totals_.prefill_tokens;
  result.decode_seqs = plan_totals_.decode_seqs;
  result.draft_tokens = plan_totals_.draft_tokens;
  result.model_seconds = plan_totals_.model_seconds;
  result.events.reserve(scheduled_.size());
  const std::uint64_t threshold = acceptance_threshold(
      faults_.spec_acceptance >= 0 ? faults_.spec_acceptance : config_.speculative_acceptance);
  // Three passes, so the block hashes of the whole step are computed together (pass 2, several
  // hash chains side by side) while the KV manager still sees each sequence's commits and its
  // release in the order of the one pass before: pass 1 advances each sequence (tokens, events),
  // pass 3 commits its full blocks and frees a finished one.
  const bool caching = config_.enable_prefix_caching;
  stepped_.clear();
  std::vector<Sequence*>& to_hash = to_hash_;
  to_hash.clear();
  for (const Scheduled& s : scheduled_) {
    auto it = sequences_.find(s.id);
    if (it == sequences_.end()) continue;  // aborted during the step
    Sequence& seq = *it->second;
    if (seq.computed + s.num_new < seq.num_tokens()) {  // a prefill chunk (no drafts), more to come
      seq.computed += s.num_new;
      if (caching && full_beyond(seq, seq.hashes.size())) to_hash.push_back(&seq);
      stepped_.push_back({&seq, false});
      continue;
    }
    // The verify step keeps the accepted drafts (their KV is computed with the decoded token)
    // and emits one token more: the target model's own next token after them.
    const std::uint32_t accepted = s.drafts > 0 ? accepted_drafts(seq, s.drafts, threshold) : 0;
    if (s.drafts > 0) {
      ++spec_drafts_;
      spec_draft_tokens_ += s.drafts;
      spec_accepted_ += accepted;
      for (std::uint32_t j = 0; j < accepted; ++j) ++spec_accepted_per_position_[j];
    }
    // Built in place: a local event copied in afterwards stalled on store forwarding.
    SequenceEvent& ev = result.events.emplace_back();
    ev.id = seq.id;
    // The tokens go straight into the buffer sized at submit (accepted + 1 <= the outputs left).
    const std::uint32_t first = seq.outputs();
    std::uint32_t* out = seq.tokens.get() + seq.length;
    for (std::uint32_t j = 0; j <= accepted; ++j)
      out[j] = ev.tokens[j] = output_token_id_keyed(seq.token_key, first + j);
    ev.token_count = accepted + 1;
    seq.length += ev.token_count;
    // The last token is not computed yet (its KV comes with the next step), as before.
    seq.computed += s.num_new + accepted;
    if (caching && full_beyond(seq, seq.hashes.size())) to_hash.push_back(&seq);
    if (!seq.prefill_reported) {
      ev.prefill_done = seq.prefill_reported = true;
      prompt_tokens_ += seq.prompt_len;
    }
    generation_tokens_ += ev.token_count;
    if (seq.outputs() >= seq.target_outputs) {
      ev.finished = true;
      ev.reason = seq.target_reason;
    }
    stepped_.push_back({&seq, ev.finished});
  }
  if (caching) hash_blocks(to_hash);
  std::vector<SequenceId> finished;
  for (auto [seq, finishes] : stepped_) {
    if (caching && full_beyond(*seq, seq->committed_blocks)) commit_full_blocks(*seq);
    if (finishes) {
      kv_.release(seq->blocks);
      seq->running = false;
      finished.push_back(seq->id);
    }
  }
  if (!finished.empty()) {
    running_.erase(std::remove_if(running_.begin(), running_.end(), [](Sequence* s) { return !s->running; }),
                   running_.end());
    for (SequenceId id : finished) sequences_.erase(id);
  }
  return result;
}

// full_blocks: the leading blocks of `seq` whose tokens are all computed (committable).
std::size_t EngineCore::full_blocks(const Sequence& seq) const {
  return std::min<std::size_t>(seq.computed / config_.block_size, seq.blocks.size());
}

// full_beyond: full_blocks(seq) > n, without the division (a step asks it of every sequence).
bool EngineCore::full_beyond(const Sequence& seq, std::size_t n) const {
  return seq.blocks.size() > n && seq.computed >= (n + 1) * std::uint64_t{config_.block_size};
}

void EngineCore::commit_full_blocks(Sequence& seq) {
  if (!config_.enable_prefix_caching) return;
  std::size_t full = full_blocks(seq);
  if (full <= seq.committed_blocks) return;
  const auto& hashes = hashes_for(seq, full);
  for (std::size_t j = seq.committed_blocks; j < full; ++j) kv_.commit(seq.blocks[j], hashes[j]);
  seq.committed_blocks = full;
}

const std::vector<std::uint64_t>& EngineCore::hashes_for(Sequence& seq, std::size_t full_blocks) {
  const std::uint32_t bs = config_.block_size;
  while (seq.hashes.size() < full_blocks) {
    std::size_t j = seq.hashes.size();
    std::uint64_t h = j == 0 ? kHashChainStart ^ seq.hash_salt : seq.hashes.back();
    for (std::size_t t = j * bs; t < (j + 1) * bs; ++t) h = mix64(h ^ seq.tokens[t]);
    seq.hashes.push_back(h);
  }
  return seq.hashes;
}

// hash_blocks extends the hashes of every sequence in `seqs` to its full blocks: the same chain
// as hashes_for, but four sequences' chains at a time, interleaved token by token. One chain is
// a run of dependent multiplies (about 13 cycles a token); four side by side take about as long
// as one, which is most of the hashing cost of a step that completes blocks in many sequences.
void EngineCore::hash_blocks(std::span<Sequence* const> seqs) {
  constexpr int kLanes = 4;
  const std::uint32_t bs = config_.block_size;
  Sequence* lane[kLanes] = {};
  std::size_t next = 0;
  for (;;) {
    int active = -1;  // some lane with work; idle lanes rehash its block and drop the result
    for (int m = 0; m < kLanes; ++m) {
      if (lane[m] && !full_beyond(*lane[m], lane[m]->hashes.size())) lane[m] = nullptr;
      while (!lane[m] && next < seqs.size()) {
        Sequence* s = seqs[next++];
        if (full_beyond(*s, s->hashes.size())) lane[m] = s;
      }
      if (lane[m]) active = m;
    }
    if (active < 0) return;
    std::uint64_t h[kLanes];
    const std::uint32_t* tok[kLanes];
    for (int m = 0; m < kLanes; ++m) {
      const Sequence& s = *lane[lane[m] ? m : active];
      const std::size_t j = s.hashes.size();
      h[m] = j == 0 ? kHashChainStart ^ s.hash_salt : s.hashes.back();
      tok[m] = s.tokens.get() + j * bs;
    }
    for (std::uint32_t t = 0; t < bs; ++t)
      for (int m = 0; m < kLanes; ++m) h[m] = mix64(h[m] ^ tok[m][t]);
    for (int m = 0; m < kLanes; ++m)
      if (lane[m]) lane[m]->hashes.push_back(h[m]);
  }
}

std::uint32_t EngineCore::effective_max_num_seqs() const {
  return faults_.max_num_seqs > 0 ? faults_.max_num_seqs : config_.max_num_seqs;
}

std::uint32_t EngineCore::effective_max_loras() const {
  return faults_.max_loras > 0 ? std::min(faults_.max_loras, config_.max_loras) : config_.max_loras;
}

void EngineCore::set_faults(const FaultSet& faults) {
  faults_ = faults;
  auto limit = static_cast<std::uint64_t>(std::floor(static_cast<double>(capacity_blocks_) * faults.kv_capacity));
  kv_.set_limit(std::max<std::uint64_t>(limit, 1));
}

void EngineCore::fill_stats(EngineStats& out) const {
  out.running = static_cast<std::uint32_t>(running_.size());
  out.waiting = static_cast<std::uint32_t>(waiting_.size());
  out.kv_blocks_total = kv_.limit();
  out.kv_blocks_used = kv_.used();
  out.kv_usage = std::min(1.0, static_cast<double>(kv_.used()) / static_cast<double>(kv_.limit()));
  out.preemptions_total = preemptions_;
  out.prefix_queries_tokens = prefix_queries_;
  out.prefix_hit_tokens = prefix_hits_;
  out.prompt_tokens_total = prompt_tokens_;
  out.generation_tokens_total = generation_tokens_;
  out.spec_drafts = spec_drafts_;
  out.spec_draft_tokens = spec_draft_tokens_;
  out.spec_accepted_tokens = spec_accepted_;
  out.spec_accepted_per_position = spec_accepted_per_position_;
  if (config_.max_loras == 0) return;
  out.lora_running = out.lora_waiting = 0;
  out.lora_waiting_requests = 0;
  for (const Sequence* s : running_)
    if (s->lora) out.lora_running |= std::uint64_t{1} << (s->lora - 1);
  for (const Sequence* s : waiting_) {
    if (!s->lora) continue;
    const std::uint64_t bit = std::uint64_t{1} << (s->lora - 1);
    out.lora_waiting |= bit;
    if (!(lora_loaded_ & bit)) ++out.lora_waiting_requests;
  }
  out.lora_loaded = lora_loaded_;
  out.lora_slots = effective_max_loras();
  out.lora_loads_total = lora_loads_;
  out.lora_load_seconds_total = lora_load_seconds_;
}

}  // namespace inferscope::serve
