// Tests that the `#include "..."` lines of every src/<part>/ follow the "may include" column of the
// layout table in docs/architecture.md, so the document and the code cannot drift apart: a part
// including a part its row does not allow fails naming the file, the line and the include; a row
// allowing a part no file includes any more fails too (the doc is the real graph, not a wish),
// and so does a cycle among the allowed includes.
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
// include (a documented exception such as "part/file.h"), or every part (the CLI).
struct IncludeRule {
  std::set<std::string> parts;
  std::set<std::string> headers;
  bool every_part = false;
};

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
// its "may include" cell: a part, or "<part>/<file>" for one header; "every part" allows all.
std::map<std::string, IncludeRule> read_include_rules(const std::string& doc, const std::set<std::string>& known_parts,
                                                      std::vector<std::string>& problems) {
  std::map<std::string, IncludeRule> rules;
  std::istringstream lines(doc);
  std::string line;
  int line_no = 0;
  int column = -1;
  static const std::regex kPart("^src/([a-z_]+)/?$");
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
    for (const std::string& path : backticked(cells[0])) {
      std::smatch m;
      if (!std::regex_match(path, m, kPart)) continue;
      const std::string part = m[1];
      if (rules.count(part)) problems.push_back(where + ": a second row for src/" + part + "/");
      IncludeRule& rule = rules[part];
      rule.every_part = cells[column].find("every part") != std::string::npos;
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
  static const std::regex kInclude(R"(^\s*#\s*include\s*"([^"]+)\")");
  for (const std::string& part : parts) {
    auto rule = rules.find(part);
    if (rule == rules.end()) {
      problems.push_back("src/" + part + "/ has no row in the layout table of docs/architecture.md");
      continue;
    }
    std::vector<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(src_dir / part)) {
      const std::string ext = entry.path().extension().string();
      if (entry.is_regular_file() && (ext == ".h" || ext == ".cpp")) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      std::istringstream lines(read_file(file));
      std::string line;
      int line_no = 0;
      while (std::getline(lines, line)) {
        ++line_no;
        std::smatch m;
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
          problems.push_back(fs::relative(file, src_dir.parent_path()).string() + ":" + std::to_string(line_no) +
                             ": includes \"" + header + "\"; " + part + " may include: " + joined(r.parts) +
                             " (its row in docs/architecture.md)");
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
    if (!rule.every_part) allowed[part] = rule.parts;
  }
  if (std::string cycle = find_cycle(allowed); !cycle.empty()) {
    problems.push_back("docs/architecture.md allows a cycle: " + cycle);
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

}  // namespace
}  // namespace inferscope::architecture
