/// \file table.hpp
/// \brief Printing benchmark results as a Markdown table.
///
/// Host-only C++. The same text reads well in a terminal, in a README and in
/// docs/results/, so the tables there are the program's own output, pasted by
/// the GPU check script rather than typed.
#pragma once

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

namespace tutorial {

/// printf-style formatting into a std::string: `format("%.1f GB/s", gbs)`. The compiler
/// checks the arguments against the format, as it does for printf.
[[gnu::format(printf, 1, 2)]] inline std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  const int length = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string text(length > 0 ? length : 0, '\0');
  if (length > 0) std::vsnprintf(text.data(), length + 1, fmt, args);
  va_end(args);
  return text;
}

/// A time in milliseconds written with a readable unit: "88.8 ms", "7.61 us".
inline std::string format_time(double ms) {
  if (ms >= 1.0) return format("%.3g ms", ms);
  if (ms >= 1e-3) return format("%.3g us", ms * 1e3);
  return format("%.3g ns", ms * 1e6);
}

/// Rows of text under a header, printed as an aligned Markdown table.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add_row(std::vector<std::string> row) {
    row.resize(header_.size());
    rows_.push_back(std::move(row));
  }
  void print(std::FILE* out = stdout) const {
    std::vector<size_t> width(header_.size());
    for (size_t c = 0; c < header_.size(); ++c) {
      width[c] = header_[c].size();
      for (const auto& row : rows_) width[c] = std::max(width[c], row[c].size());
    }
    print_row(out, header_, width);
    std::fputc('|', out);
    for (size_t w : width) std::fprintf(out, "%s|", std::string(w + 2, '-').c_str());
    std::fputc('\n', out);
    for (const auto& row : rows_) print_row(out, row, width);
  }

 private:
  static void print_row(std::FILE* out, const std::vector<std::string>& row,
                        const std::vector<size_t>& width) {
    std::fputc('|', out);
    for (size_t c = 0; c < row.size(); ++c)
      std::fprintf(out, " %-*s |", static_cast<int>(width[c]), row[c].c_str());
    std::fputc('\n', out);
  }
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace tutorial
