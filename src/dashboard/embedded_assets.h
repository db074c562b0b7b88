// File: dashboard/embedded_assets.h
// The dashboard page's files (index.html, app.js, app.css), bundled by esbuild at build time from
// web/ and compiled into the binary (src/dashboard/CMakeLists.txt), so `inferscope up` serves the
// page with no files on disk and nothing fetched from the internet.
// Example: for (const auto& a : embedded_assets()) if (a.name == "app.js") send(a.bytes);
// Thread-safe: immutable static data.
#pragma once

#include <span>
#include <string_view>

namespace inferscope::dashboard {

// EmbeddedAsset is one file of the page: its name ("index.html", "app.js", "app.css") and bytes.
struct EmbeddedAsset {
  std::string_view name;
  std::string_view bytes;
};

// embedded_assets returns every embedded file. Never fails; the data lives forever.
std::span<const EmbeddedAsset> embedded_assets() noexcept;

// find_asset returns the asset named `name`, or nullptr.
const EmbeddedAsset* find_asset(std::string_view name) noexcept;

}  // namespace inferscope::dashboard
