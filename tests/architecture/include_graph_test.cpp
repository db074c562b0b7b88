// Tests that the `#include "..."` lines of every src/<part>/ follow the "may include" column of the
// layout table in docs/architecture.md, so the document and the code cannot drift apart: a part
// including a part its row does not allow fails naming the file, the line and the include; a row
// allowing a part no file includes any more fails too (the doc is the real graph, not a wish),
// and so does a cycle among the allowed includes. The `#include <...>` lines are checked the same
// way against the outside packages the row names (kPackages maps header prefixes to the table's
// words; standard and system headers are free), in src/<part>/ and in the include/inferscope/
// folders the row lists.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "support/temp_dir.h"

namespace inferscope::architecture {
namespace {

namespace fs = std::filesystem;

// IncludeRule is one part's row: the parts it may include, single headers of another part it may
// include (a documented exception such as "part/file.h"), or every part (the CLI); the outside
// packages it names, and the include/inferscope/ folders the row also covers.
struct IncludeRule {
  std::set<std::string> parts;
  std::set<std::string> headers;
  bool every_part = false;
  std::set<std::string> packages;
  std::vector<std::string> include_dirs;  // "include/inferscope/metrics"
};

// Package is one outside dependency as the layout table spells it, and the header prefixes that
// are its headers. A header may belong to two packages: Asio's and Beast's SSL streams are
// OpenSSL's too (the part links OpenSSL::SSL for them).
struct Package {
  std::string_view word;
  std::vector<std::string_view> prefixes;
};

const std::vector<Package> kPackages = {
    {"Boost.Asio/Beast", {"boost/asio", "boost/beast"}},
    {"OpenSSL", {"openssl/", "boost/asio/ssl", "boost/beast/ssl"}},
    {"fmt", {"fmt/"}},
    {"spdlog", {"spdlog/"}},
    {"nlohmann-json", {"nlohmann/"}},
    {"CLI11", {"CLI/"}},
    {"simdjson", {"simdjson.h"}},
    {"yaml-cpp", {"yaml-cpp/"}},
    {"SQLite", {"sqlite3.h"}},
    {"libcurl", {"curl/"}},
    {"hiredis", {"hiredis/"}},
    {"zlib", {"zlib.h"}},
    {"libcrypt", {"crypt.h"}},
    {"GoogleTest", {"gtest/", "gmock/"}},
    {"Google Benchmark", {"benchmark/"}},
};

// packages_of returns the packages whose headers `header` is (empty: none of kPackages).
std::vector<std::string> packages_of(std::string_view header) {
  std::vector<std::string> out;
  for (const Package& p : kPackages) {
    for (std::string_view prefix : p.prefixes) {
      if (header.starts_with(prefix)) {
        out.emplace_back(p.word);
        break;
      }
    }
  }
  return out;
}

// is_system_header tells the headers that need no row: the C++ standard library (no '.' and no
// '/': <vector>, <cstdio>), libstdc++'s extensions, the C library, POSIX, Linux and the compiler's
// intrinsics.
bool is_system_header(std::string_view header) {
  if (header.find('.') == std::string_view::npos && header.find('/') == std::string_view::npos) return true;
  for (std::string_view prefix : {"sys/", "netinet/", "arpa/", "linux/", "ext/", "bits/"}) {
    if (header.starts_with(prefix)) return true;
  }
  static const std::set<std::string_view> kSystem = {
      "assert.h", "ctype.h", "cxxabi.h", "dirent.h", "dlfcn.h", "emmintrin.h", "errno.h", "execinfo.h", "fcntl.h",
      "grp.h", "ifaddrs.h", "immintrin.h", "limits.h", "math.h", "netdb.h", "poll.h", "pthread.h", "pwd.h",
      "sched.h", "semaphore.h", "signal.h", "spawn.h", "stdint.h", "stdio.h", "stdlib.h", "string.h", "syslog.h",
      "termios.h", "time.h", "unistd.h", "x86intrin.h"};
  return kSystem.contains(header);
}

// named_packages returns the kPackages words a "may include" cell names: its comma-separated
// items once backticked part names and parenthesised remarks are removed ("`net` (blocking
// client), spdlog, SQLite" names spdlog and SQLite). Other words (std, "the library only") are
// no package and name nothing.
std::set<std::string> named_packages(const std::string& cell) {
  static const std::regex kRemarks(R"(`[^`]*`|\([^)]*\))");
  const std::string plain = std::regex_replace(cell, kRemarks, "");
  std::set<std::string> out;
  std::istringstream items(plain);
  std::string item;
  while (std::getline(items, item, ',')) {
    const std::size_t first = item.find_first_not_of(' ');
    const std::size_t last = item.find_last_not_of(' ');
    if (first == std::string::npos) continue;
    item = item.substr(first, last - first + 1);
    for (const Package& p : kPackages) {
      if (item == p.word) out.insert(item);
    }
  }
  return out;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> split_cells(const std::string& row) {
  std::vector<std::string> cells;
  std::string cell;
  for (std::size_t i = 1; i < row.size(); ++i) {  // row[0] is the leading '|'
    if (row[i] == '|') {
      cells.push_back(cell);
      cell.clear();
    } else {
      cell += row[i];
    }
  }
  return cells;
}

std::vector<std::string> backticked(const std::string& cell) {
  std::vector<std::string> out;
  static const std::regex kTick("`([^`]+)`");
  for (std::sregex_iterator it(cell.begin(), cell.end(), kTick), end; it != end; ++it) out.push_back((*it)[1]);
  return out;
}

std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "no other part" : out;
}

// read_include_rules parses the layout table (the Markdown table whose header has a "may include"
// column). A row naming `src/<part>/` in backticks in its first cell gets the backticked names of
// its "may include" cell: a part, or "<part>/<file>" for one header; "every part" allows all. The
// cell's plain words name its packages; `include/inferscope/<dir>/` in the first cell adds that
// folder to the row's part.
std::map<std::string, IncludeRule> read_include_rules(const std::string& doc, const std::set<std::string>& known_parts,
                                                      std::vector<std::string>& problems) {
  std::map<std::string, IncludeRule> rules;
  std::istringstream lines(doc);
  std::string line;
  int line_no = 0;
  int column = -1;
  static const std::regex kPart("^src/([a-z_]+)/?$");
  static const std::regex kIncludeDir("^(include/inferscope/[a-z_]+)/?$");
  while (std::getline(lines, line)) {
    ++line_no;
    if (line.empty() || line[0] != '|') {
      column = -1;  // a table ended
      continue;
    }
    std::vector<std::string> cells = split_cells(line);
    if (column < 0) {
      for (std::size_t i = 0; i < cells.size(); ++i) {
        if (cells[i].find("may include") != std::string::npos) column = static_cast<int>(i);
      }
      continue;
    }
    if (static_cast<int>(cells.size()) <= column) continue;
    const std::string where = "docs/architecture.md:" + std::to_string(line_no);
    std::vector<std::string> include_dirs;
    for (const std::string& path : backticked(cells[0])) {
      std::smatch m;
      if (std::regex_match(path, m, kIncludeDir)) include_dirs.push_back(m[1]);
    }
    for (const std::string& path : backticked(cells[0])) {
      std::smatch m;
      if (!std::regex_match(path, m, kPart)) continue;
      const std::string part = m[1];
      if (rules.count(part)) problems.push_back(where + ": a second row for src/" + part + "/");
      IncludeRule& rule = rules[part];
      rule.every_part = cells[column].find("every part") != std::string::npos;
      rule.packages = named_packages(cells[column]);
      rule.include_dirs = include_dirs;
      for (const std::string& name : backticked(cells[column])) {
        const std::size_t slash = name.find('/');
        const std::string target = name.substr(0, slash);
        if (!known_parts.count(target)) {
          problems.push_back(where + ": src/" + part + "/ may include `" + name + "`, which names no src/<part>/");
        } else if (slash == std::string::npos) {
          rule.parts.insert(name);
        } else {
          rule.headers.insert(name);
        }
      }
    }
  }
  return rules;
}

// find_cycle returns one cycle of the part graph ("a -> b -> a"), or "" when there is none.
std::string find_cycle(const std::map<std::string, std::set<std::string>>& graph) {
  std::map<std::string, int> state;  // 0 new, 1 on the path, 2 done
  std::vector<std::string> path;
  std::string cycle;
  std::function<bool(const std::string&)> visit = [&](const std::string& part) {
    state[part] = 1;
    path.push_back(part);
    auto it = graph.find(part);
    if (it != graph.end()) {
      for (const std::string& next : it->second) {
        if (state[next] == 1) {
          auto from = std::find(path.begin(), path.end(), next);
          for (; from != path.end(); ++from) cycle += *from + " -> ";
          cycle += next;
          return true;
        }
        if (state[next] == 0 && visit(next)) return true;
      }
    }
    path.pop_back();
    state[part] = 2;
    return false;
  };
  for (const auto& [part, edges] : graph) {
    if (state[part] == 0 && visit(part)) return cycle;
  }
  return "";
}

// check_package_include checks one `#include <header>` of `part` at `where` ("src/x/y.cpp:3"): it
// adds the packages the header belongs to to `used` and reports each one the part's row does not
// name, or a header that is neither a standard or system header nor one of kPackages.
void check_package_include(const std::string& header, const std::string& where, const std::string& part,
                           const IncludeRule& rule, std::set<std::string>& used, std::vector<std::string>& problems) {
  if (header.starts_with("inferscope/")) return;  // the installed library
  const std::vector<std::string> packages = packages_of(header);
  if (packages.empty() && !is_system_header(header)) {
    problems.push_back(where + ": includes <" + header + ">, which is no standard or system header and no package "
                       "of kPackages (tests/architecture/include_graph_test.cpp): add its package there");
  }
  for (const std::string& package : packages) {
    used.insert(package);
    if (!rule.packages.count(package)) {
      problems.push_back(where + ": includes <" + header + ">; " + part + "'s row in docs/architecture.md does not name " +
                         package);
    }
  }
}

// check_include_graph returns every problem, one line each; empty = the tree matches the doc.
std::vector<std::string> check_include_graph(const std::string& doc, const fs::path& src_dir) {
  std::vector<std::string> problems;
  std::set<std::string> parts;
  for (const auto& entry : fs::directory_iterator(src_dir)) {
    if (entry.is_directory()) parts.insert(entry.path().filename().string());
  }
  std::map<std::string, IncludeRule> rules = read_include_rules(doc, parts, problems);
  std::map<std::string, std::set<std::string>> used_parts;  // part -> parts it includes
  std::map<std::string, std::set<std::string>> used_headers;
  std::map<std::string, std::set<std::string>> used_packages;  // part -> packages it includes
  static const std::regex kInclude(R"(^\s*#\s*include\s*"([^"]+)\")");
  static const std::regex kAngleInclude(R"(^\s*#\s*include\s*<([^>]+)>)");
  const fs::path root = src_dir.parent_path();
  for (const std::string& part : parts) {
    auto rule = rules.find(part);
    if (rule == rules.end()) {
      problems.push_back("src/" + part + "/ has no row in the layout table of docs/architecture.md");
      continue;
    }
    std::vector<fs::path> files;
    std::vector<fs::path> dirs = {src_dir / part};
    for (const std::string& dir : rule->second.include_dirs) {
      if (fs::is_directory(root / dir)) dirs.push_back(root / dir);
    }
    for (const fs::path& dir : dirs) {
      for (const auto& entry : fs::recursive_directory_iterator(dir)) {
        const std::string ext = entry.path().extension().string();
        if (entry.is_regular_file() && (ext == ".h" || ext == ".cpp")) files.push_back(entry.path());
      }
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      const std::string where = fs::relative(file, root).string();
      std::istringstream lines(read_file(file));
      std::string line;
      int line_no = 0;
      while (std::getline(lines, line)) {
        ++line_no;
        std::smatch m;
        if (std::regex_search(line, m, kAngleInclude)) {
          check_package_include(m[1], where + ":" + std::to_string(line_no), part, rule->second, used_packages[part],
                                problems);
          continue;
        }
        if (!std::regex_search(line, m, kInclude)) continue;
        const std::string header = m[1];
        const std::size_t slash = header.find('/');
        if (slash == std::string::npos) continue;  // a file of the same folder
        const std::string target = header.substr(0, slash);
        if (target == part || !parts.count(target)) continue;  // own part, or the library (inferscope/...)
        const IncludeRule& r = rule->second;
        if (r.parts.count(target)) {
          used_parts[part].insert(target);
        } else if (r.headers.count(header)) {
          used_headers[part].insert(header);
        } else if (!r.every_part) {
          problems.push_back(where + ":" + std::to_string(line_no) + ": includes \"" + header + "\"; " + part +
                             " may include: " + joined(r.parts) + " (its row in docs/architecture.md)");
        }
      }
    }
  }
  std::map<std::string, std::set<std::string>> allowed;
  for (const auto& [part, rule] : rules) {
    if (!parts.count(part)) {
      problems.push_back("docs/architecture.md has a row for src/" + part + "/, which does not exist");
      continue;
    }
    for (const std::string& target : rule.parts) {
      if (!used_parts[part].count(target)) {
        problems.push_back("docs/architecture.md: " + part + " may include " + target +
                           ", but no file of src/" + part + "/ does: remove it from the row");
      }
    }
    for (const std::string& header : rule.headers) {
      if (!used_headers[part].count(header)) {
        problems.push_back("docs/architecture.md: " + part + " may include " + header +
                           ", but no file of src/" + part + "/ does: remove it from the row");
      }
    }
    for (const std::string& package : rule.packages) {
      if (!used_packages[part].count(package)) {
        problems.push_back("docs/architecture.md: " + part + " names " + package + ", but no file of src/" + part +
                           "/ includes it: remove it from the row");
      }
    }
    if (!rule.every_part) allowed[part] = rule.parts;
  }
  if (std::string cycle = find_cycle(allowed); !cycle.empty()) {
    problems.push_back("docs/architecture.md allows a cycle: " + cycle);
  }
  return problems;
}

// check_package_table returns the kPackages words the "Why each outside dependency" table (the
// one whose header starts with "| package |") does not name in its first column.
std::vector<std::string> check_package_table(const std::string& doc) {
  std::istringstream lines(doc);
  std::string line;
  std::string first_column;
  bool in_table = false;
  while (std::getline(lines, line)) {
    if (line.starts_with("| package |")) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (line.empty() || line[0] != '|') break;
    const std::vector<std::string> cells = split_cells(line);
    if (!cells.empty()) first_column += cells[0] + "\n";
  }
  std::vector<std::string> problems;
  if (!in_table) problems.push_back("docs/architecture.md has no table whose header starts with \"| package |\"");
  for (const Package& p : kPackages) {
    if (first_column.find(p.word) == std::string::npos) {
      problems.push_back("docs/architecture.md: the package table does not name " + std::string(p.word) +
                         ", a package of kPackages");
    }
  }
  return problems;
}

std::string as_lines(const std::vector<std::string>& problems) {
  std::string out;
  for (const std::string& p : problems) out += p + "\n";
  return out;
}

// Tests that src/ follows docs/architecture.md: no part includes what its row does not allow, no
// row allows what no file includes, and the allowed includes have no cycle.
TEST(IncludeGraphTest, SourceTreeFollowsTheArchitectureDoc) {
  const fs::path root = INFERSCOPE_SOURCE_DIR;
  const std::string doc = read_file(root / "docs" / "architecture.md");
  ASSERT_FALSE(doc.empty()) << "cannot read docs/architecture.md";
  const std::vector<std::string> problems = check_include_graph(doc, root / "src");
  EXPECT_TRUE(problems.empty()) << as_lines(problems);
}

// Tests that every package the test knows has its row in the table of outside dependencies, which
// says why inferscope uses it.
TEST(IncludeGraphTest, EveryPackageHasItsReason) {
  const fs::path root = INFERSCOPE_SOURCE_DIR;
  const std::string doc = read_file(root / "docs" / "architecture.md");
  ASSERT_FALSE(doc.empty()) << "cannot read docs/architecture.md";
  const std::vector<std::string> problems = check_package_table(doc);
  EXPECT_TRUE(problems.empty()) << as_lines(problems);
}

// PlantedTree is a small src/ tree with its own architecture table, removed afterwards.
class PlantedTree : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(root_ / "src"); }
  void write(const std::string& path, const std::string& text) {
    fs::create_directories((root_ / path).parent_path());
    std::ofstream(root_ / path) << text;
  }
  std::vector<std::string> check(const std::string& doc) { return check_include_graph(doc, root_ / "src"); }
  inferscope::testing::TempDir dir_{"include_graph"};
  fs::path root_ = dir_.path();
};

const char* const kHeader = "| path | what | may include |\n|---|---|---|\n";

// Tests that an include the row does not allow fails naming the file, the line and the include.
TEST_F(PlantedTree, ForbiddenIncludeIsNamed) {
  write("src/low/low.h", "#pragma once\n");
  write("src/high/high.cpp", "#include \"high/high.h\"\n#include <vector>\n#include \"low/low.h\"\n");
  write("src/high/high.h", "#pragma once\n#include \"inferscope/common/result.h\"\n");
  const std::string doc = std::string(kHeader) + "| `src/low/` | bottom | std only |\n| `src/high/` | top | std only |\n";
  const std::vector<std::string> problems = check(doc);
  ASSERT_EQ(problems.size(), 1u) << as_lines(problems);
  EXPECT_EQ(problems[0], "src/high/high.cpp:3: includes \"low/low.h\"; high may include: no other part (its row in "
                         "docs/architecture.md)");
  EXPECT_TRUE(check(std::string(kHeader) + "| `src/low/` | bottom | |\n| `src/high/` | top | `low` |\n").empty());
}

// Tests that a stale allowance, a missing row, an unknown name and a cycle are each reported.
TEST_F(PlantedTree, DocProblemsAreNamed) {
  write("src/a/a.h", "#include \"b/b.h\"\n");
  write("src/b/b.h", "#include \"a/a.h\"\n#include \"c/one.h\"\n");
  write("src/c/one.h", "#pragma once\n");
  write("src/d/d.h", "#pragma once\n");
  const std::string doc = std::string(kHeader) +
                          "| `src/a/` | a | `b`, `c` |\n| `src/b/` | b | `a`, `c/one.h`, `c/two.h`, `nowhere` |\n"
                          "| `src/c/` | c | |\n";
  const std::string text = as_lines(check(doc));
  EXPECT_NE(text.find("src/b/ may include `nowhere`, which names no src/<part>/"), std::string::npos) << text;
  EXPECT_NE(text.find("src/d/ has no row"), std::string::npos) << text;
  EXPECT_NE(text.find("a may include c, but no file of src/a/ does"), std::string::npos) << text;
  EXPECT_NE(text.find("b may include c/two.h, but no file of src/b/ does"), std::string::npos) << text;
  EXPECT_NE(text.find("allows a cycle: a -> b -> a"), std::string::npos) << text;
  EXPECT_EQ(text.find("c/one.h\";"), std::string::npos) << text;  // the one-header allowance holds
}

// Tests that an outside header the row does not name fails naming the file, the line, the include
// and the package, and that standard and system headers need no row.
TEST_F(PlantedTree, MissingPackageIsNamed) {
  write("src/low/low.cpp",
        "#include <vector>\n#include <fmt/format.h>\n#include <unistd.h>\n#include <sys/wait.h>\n"
        "#include <inferscope/common/result.h>\n");
  const std::vector<std::string> problems = check(std::string(kHeader) + "| `src/low/` | bottom | std |\n");
  ASSERT_EQ(problems.size(), 1u) << as_lines(problems);
  EXPECT_EQ(problems[0], "src/low/low.cpp:2: includes <fmt/format.h>; low's row in docs/architecture.md does not name fmt");
  EXPECT_TRUE(check(std::string(kHeader) + "| `src/low/` | bottom | std, fmt |\n").empty());
}

// Tests that a package named only in a remark does not count, that one header can need two
// packages, and that a header of no known package or system is reported.
TEST_F(PlantedTree, PackageWordsAreTheCellsItems) {
  write("src/net/tls.cpp", "#include <sqlite3.h>\n#include <boost/asio/ssl.hpp>\n#include <frob/frob.h>\n");
  const std::string text =
      as_lines(check(std::string(kHeader) + "| `src/net/` | net | std (no SQLite here), Boost.Asio/Beast |\n"));
  EXPECT_NE(text.find("src/net/tls.cpp:1: includes <sqlite3.h>; net's row in docs/architecture.md does not name SQLite"),
            std::string::npos) << text;
  EXPECT_NE(text.find("src/net/tls.cpp:2: includes <boost/asio/ssl.hpp>; net's row in docs/architecture.md does not "
                      "name OpenSSL"), std::string::npos) << text;
  EXPECT_EQ(text.find("does not name Boost.Asio/Beast"), std::string::npos) << text;
  EXPECT_NE(text.find("src/net/tls.cpp:3: includes <frob/frob.h>, which is no standard or system header"),
            std::string::npos) << text;
}

// Tests that a row naming a package no file includes fails, and that the include/inferscope/
// folders a row lists are checked with its part.
TEST_F(PlantedTree, StalePackageAndLibraryFolder) {
  write("src/lib/lib.cpp", "#include <string>\n");
  write("include/inferscope/lib/lib.h", "#pragma once\n#include <zlib.h>\n");
  const std::string text = as_lines(
      check(std::string(kHeader) + "| `include/inferscope/lib/`, `src/lib/` | the library | std, spdlog |\n"));
  EXPECT_NE(text.find("docs/architecture.md: lib names spdlog, but no file of src/lib/ includes it"), std::string::npos)
      << text;
  EXPECT_NE(text.find("include/inferscope/lib/lib.h:2: includes <zlib.h>; lib's row in docs/architecture.md does not "
                      "name zlib"), std::string::npos) << text;
  EXPECT_TRUE(
      check(std::string(kHeader) + "| `include/inferscope/lib/`, `src/lib/` | the library | std, zlib |\n").empty());
}

}  // namespace
}  // namespace inferscope::architecture
