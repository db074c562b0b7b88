// File: diagnosis_format.h
// Renders a Diagnosis as text (verdict line first, ranked findings, per-stage table), as the
// versioned JSON of docs/doctor.md (schema_version 1), or as Markdown short enough for a chat
// robot (the relay attaches it to alert notifications).
// Example: std::cout << to_text(d); std::string md = to_markdown(d, 3500);
// Pure functions; thread-safe; never throw.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "doctor/diagnosis.h"

namespace inferscope::doctor {

// kSchemaVersion is the JSON schema version; bumped on any incompatible change.
inline constexpr int kSchemaVersion = 1;

// to_text renders the terminal report; with `explain` (doctor --explain) it adds every cause
// weighed and not reported (considered[]), strongest first with its score and why it lost.
std::string to_text(const Diagnosis& diagnosis, bool explain = false);

// to_json renders the documented JSON object (NaN becomes null).
nlohmann::json to_json(const Diagnosis& diagnosis);

// to_markdown renders at most max_bytes of Markdown (default fits WeCom's 4096-byte markdown
// limit with room for a title): verdict, top findings with evidence and next steps, and the
// stages that changed. Truncation happens at whole lines.
std::string to_markdown(const Diagnosis& diagnosis, std::size_t max_bytes = 3500);

// format_time renders Unix seconds as RFC 3339 UTC ("2026-11-30T13:00:00Z").
std::string format_time(double unix_seconds);

}  // namespace inferscope::doctor
