// Reads the rows of a Markdown table out of a document, so a test can check
// that a table in docs/ says what the code does (docs/bad-input.md).
//
// A row is a line that starts with "| ID |" where ID begins with a given
// prefix ("API-", "CLI-"). Cells are split on '|' (a "\|" inside a cell is
// a literal '|', as GitHub renders it), trimmed, and a cell that is one
// code span (`...`, or `` ... `` around text with backticks) is unwrapped.
// Header-only: the tests that use it link nothing extra.
#ifndef TALLY_TESTS_TESTUTIL_DOC_TABLE_H_
#define TALLY_TESTS_TESTUTIL_DOC_TABLE_H_

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tally::test {

struct DocRow {
  int line = 0;                    // 1-based line number in the document
  std::vector<std::string> cells;  // cells[0] is the id
};

inline std::string TrimCell(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) {
    --e;
  }
  std::string out = s.substr(b, e - b);
  // One code span: `...` with no other backtick inside, or `` ... `` for
  // text that holds backticks (CommonMark then drops one space each side).
  if (out.size() >= 2 && out.front() == '`' && out.back() == '`' &&
      out.find('`', 1) == out.size() - 1) {
    return out.substr(1, out.size() - 2);
  }
  if (out.size() >= 6 && out.rfind("`` ", 0) == 0 &&
      out.compare(out.size() - 3, 3, " ``") == 0) {
    return out.substr(3, out.size() - 6);
  }
  return out;
}

// The cells of one table line ("| a | b |" -> {"a", "b"}).
inline std::vector<std::string> SplitRow(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  size_t i = line.find('|');
  if (i == std::string::npos) return cells;
  for (++i; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cell += '|';
      ++i;
    } else if (line[i] == '|') {
      cells.push_back(TrimCell(cell));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  // Text after the last '|' is not a cell (a table line ends with '|').
  return cells;
}

// Every row of `path` whose first cell starts with `id_prefix`. A file that
// cannot be read yields no rows (callers assert on the count).
inline std::vector<DocRow> ReadDocRows(const std::string& path,
                                       const std::string& id_prefix) {
  std::vector<DocRow> rows;
  std::ifstream in(path);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.rfind("| " + id_prefix, 0) != 0) continue;
    DocRow row;
    row.line = number;
    row.cells = SplitRow(line);
    rows.push_back(std::move(row));
  }
  return rows;
}

// Replaces every `from` in `text` with `to`.
inline std::string ReplaceAll(std::string text, const std::string& from,
                              const std::string& to) {
  for (size_t pos = text.find(from); pos != std::string::npos;
       pos = text.find(from, pos + to.size())) {
    text.replace(pos, from.size(), to);
  }
  return text;
}

}  // namespace tally::test

#endif  // TALLY_TESTS_TESTUTIL_DOC_TABLE_H_
