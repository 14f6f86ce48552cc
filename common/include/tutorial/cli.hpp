/// \file cli.hpp
/// \brief A tiny command-line parser that validates every value.
///
/// Host-only C++ (no CUDA), so it is unit-tested without a GPU. Options are
/// `--name value` or `--name=value`; integers are written in decimal (`1048576`)
/// or as a power of two (`2^20`). A bad value is a usage error: one line that says
/// what was wrong and points to `--help`, exit code 2.
///
/// Why not CLI11: the course must build from its own checkout on any machine with a
/// CUDA toolkit and CMake, lent GPU machines without a package manager included, and
/// the 200 lines here are all a chapter needs (the same holds for JSON and fmt).
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace tutorial {

/// What parse_integer() made of a text.
enum class IntegerParse { kOk, kNotANumber, kTooLarge, kTooSmall };

/// Parses a whole number written as decimal digits ("1048576", "-5", "+5") or a power of
/// two ("2^20"); no spaces. A well-formed number past what 64 bits hold (2^63 and up) is
/// kTooLarge, below it kTooSmall, so the message can say so rather than "not a number".
inline IntegerParse parse_integer(const std::string& text, long long& value) {
  if (text.empty()) return IntegerParse::kNotANumber;
  const size_t caret = text.find('^');
  if (caret != std::string::npos) {
    long long base = 0, exponent = 0;
    if (parse_integer(text.substr(0, caret), base) != IntegerParse::kOk || base != 2 ||
        parse_integer(text.substr(caret + 1), exponent) != IntegerParse::kOk || exponent < 0)
      return IntegerParse::kNotANumber;
    if (exponent > 62) return IntegerParse::kTooLarge;
    value = 1LL << exponent;
    return IntegerParse::kOk;
  }
  size_t first = (text[0] == '-' || text[0] == '+') ? 1 : 0;
  if (first == text.size()) return IntegerParse::kNotANumber;
  for (size_t i = first; i < text.size(); ++i)
    if (text[i] < '0' || text[i] > '9') return IntegerParse::kNotANumber;
  errno = 0;
  char* end = nullptr;
  value = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE) return text[0] == '-' ? IntegerParse::kTooSmall : IntegerParse::kTooLarge;
  return *end == '\0' ? IntegerParse::kOk : IntegerParse::kNotANumber;
}

/// The outcome of Cli::parse().
struct ParseResult {
  enum class Status { kOk, kHelp, kError } status = Status::kOk;
  std::string message;  ///< what was wrong, for kError
};

/// Declares options, parses argv, and hands back validated values.
///
/// \code
/// tutorial::Cli cli("01_hello_add", "Adds two arrays on the GPU with a single thread.");
/// cli.add_int("n", "number of elements", 1 << 20, 1, 1LL << 32);
/// cli.parse_or_exit(argc, argv);
/// const long long n = cli.get_int("n");
/// \endcode
class Cli {
 public:
  /// \p program names the program in messages until parse() reads the name it was invoked by.
  Cli(std::string program, std::string description)
      : program_(std::move(program)), description_(std::move(description)) {}

  /// An integer option `--name` with a default and an inclusive valid range.
  void add_int(const std::string& name, const std::string& help, long long default_value,
               long long min_value, long long max_value) {
    Option o;
    o.kind = Kind::kInt;
    o.help = help;
    o.int_value = default_value;
    o.min_value = min_value;
    o.max_value = max_value;
    declare(name, o);
  }
  /// A switch `--name` that takes no value.
  void add_flag(const std::string& name, const std::string& help) {
    Option o;
    o.kind = Kind::kFlag;
    o.help = help;
    declare(name, o);
  }
  /// A text option `--name value`. If \p choices is not empty, the value must be one of them.
  void add_string(const std::string& name, const std::string& help, std::string default_value,
                  std::vector<std::string> choices = {}) {
    Option o;
    o.kind = Kind::kString;
    o.help = help;
    o.string_value = std::move(default_value);
    o.choices = std::move(choices);
    declare(name, o);
  }

  /// Parses \p argv; never exits, so it can be tested. Messages and the help name the program
  /// as it was invoked (argv[0] without its folder): a program built by hand as
  /// `./unified_memory` says `unified_memory`, not the name its CMake target has.
  ParseResult parse(int argc, const char* const* argv) {
    if (argc > 0 && argv[0] != nullptr && argv[0][0] != '\0') {
      const std::string invoked = argv[0];
      const std::string name = invoked.substr(invoked.find_last_of('/') + 1);
      if (!name.empty()) program_ = name;
    }
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      if (arg == "--help" || arg == "-h") return {ParseResult::Status::kHelp, ""};
      if (arg.rfind("--", 0) != 0) {
        // "-n 5": a single dash in front of a known option is a typo, not a new option.
        const std::string name = arg.substr(arg.find_first_not_of('-') == std::string::npos
                                                ? arg.size()
                                                : arg.find_first_not_of('-'));
        if (arg[0] == '-' && options_.count(name))
          return error("unknown option '" + arg + "' (did you mean --" + name + "?)");
        return error("unexpected argument '" + arg + "'");
      }
      std::string name = arg.substr(2), value;
      bool has_inline_value = false;
      if (const size_t eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        has_inline_value = true;
      }
      auto it = options_.find(name);
      if (it == options_.end()) return error("unknown option '--" + name + "'");
      Option& o = it->second;
      if (o.kind == Kind::kFlag) {
        if (has_inline_value) return error("--" + name + " takes no value");
        o.flag_value = true;
        continue;
      }
      if (!has_inline_value) {
        if (i + 1 >= argc) return error("--" + name + " needs a value");
        value = argv[++i];
      }
      if (o.kind == Kind::kInt) {
        long long v = 0;
        const IntegerParse parsed = parse_integer(value, v);
        if (parsed == IntegerParse::kTooLarge)
          return error("--" + name + ": '" + value + "' is too large (at most " +
                       std::to_string(o.max_value) + ")");
        if (parsed == IntegerParse::kTooSmall)
          return error("--" + name + ": '" + value + "' is too small (at least " +
                       std::to_string(o.min_value) + ")");
        if (parsed != IntegerParse::kOk)
          return error("--" + name + ": '" + value + "' is not a whole number (" + range_hint(o) + ")");
        if (v < o.min_value)
          return error("--" + name + " must be at least " + std::to_string(o.min_value) + " (got " + value + ")");
        if (v > o.max_value)
          return error("--" + name + " must be at most " + std::to_string(o.max_value) + " (got " + value + ")");
        o.int_value = v;
      } else {
        if (!o.choices.empty() && !is_choice(o, value))
          return error("--" + name + ": '" + value + "' is not one of " + join(o.choices));
        o.string_value = value;
      }
    }
    return {};
  }

  /// Parses \p argv; prints the help and exits 0 on --help, prints error_line() and
  /// exits 2 on a usage error.
  void parse_or_exit(int argc, const char* const* argv) {
    const ParseResult result = parse(argc, argv);
    if (result.status == ParseResult::Status::kHelp) {
      std::fputs(help().c_str(), stdout);
      std::exit(0);
    }
    if (result.status == ParseResult::Status::kError) {
      std::fputs(error_line(result.message).c_str(), stderr);
      std::exit(2);
    }
  }

  /// A usage error as the program prints it: one line, with where to look next. (The
  /// whole help on every typo buries the one line that matters.)
  std::string error_line(const std::string& message) const {
    return program_ + ": " + message + " (see " + program_ + " --help)\n";
  }

  long long get_int(const std::string& name) const { return find(name, Kind::kInt).int_value; }
  bool get_flag(const std::string& name) const { return find(name, Kind::kFlag).flag_value; }
  const std::string& get_string(const std::string& name) const {
    return find(name, Kind::kString).string_value;
  }

  /// The usage text: description, then one line per option with its default and range, the
  /// options' texts in one column however long a name is. A text that names its own default
  /// ("(default: 1 GiB)") gets only the range, not a second default.
  std::string help() const {
    std::ostringstream out;
    out << "Usage: " << program_ << " [options]\n" << description_ << "\n\nOptions:\n";
    auto left = [this](const std::string& name) {
      return "  --" + name + (options_.at(name).kind == Kind::kFlag ? "" : " <value>");
    };
    std::size_t column = 24;
    for (const std::string& name : order_) column = std::max(column, left(name).size() + 2);
    auto pad = [column](const std::string& text) { return text + std::string(column - text.size(), ' '); };
    for (const std::string& name : order_) {
      const Option& o = options_.at(name);
      const bool names_default = o.help.find("default") != std::string::npos;
      out << pad(left(name)) << o.help;
      if (o.kind == Kind::kInt) {
        out << " (";
        if (!names_default) out << "default " << o.int_value << ", ";
        out << o.min_value << " to " << o.max_value << ")";
      }
      if (o.kind == Kind::kString) {
        if (!o.choices.empty()) out << " (one of " << join(o.choices) << ")";
        if (!o.string_value.empty() && !names_default) out << " (default " << o.string_value << ")";
      }
      out << "\n";
    }
    out << pad("  --help") << "show this text\n";
    return out.str();
  }

 private:
  enum class Kind { kInt, kFlag, kString };
  struct Option {
    Kind kind = Kind::kFlag;
    std::string help;
    long long int_value = 0, min_value = 0, max_value = 0;
    bool flag_value = false;
    std::string string_value;
    std::vector<std::string> choices;
  };

  void declare(const std::string& name, const Option& o) {
    if (!options_.emplace(name, o).second) {
      std::fprintf(stderr, "internal error: option --%s declared twice\n", name.c_str());
      std::abort();
    }
    order_.push_back(name);
  }
  const Option& find(const std::string& name, Kind kind) const {
    auto it = options_.find(name);
    if (it == options_.end() || it->second.kind != kind) {
      std::fprintf(stderr, "internal error: no option --%s of that type\n", name.c_str());
      std::abort();
    }
    return it->second;
  }
  /// What a valid value looks like, for a message: the range, plus the two spellings
  /// where they fit it.
  static std::string range_hint(const Option& o) {
    std::string hint = "from " + std::to_string(o.min_value) + " to " + std::to_string(o.max_value);
    if (o.min_value <= (1LL << 20) && (1LL << 20) <= o.max_value) hint += ", e.g. 1048576 or 2^20";
    return hint;
  }
  static bool is_choice(const Option& o, const std::string& value) {
    for (const auto& c : o.choices)
      if (c == value) return true;
    return false;
  }
  static std::string join(const std::vector<std::string>& items) {
    std::string text;
    for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
    return text;
  }
  static ParseResult error(std::string message) {
    return {ParseResult::Status::kError, std::move(message)};
  }

  std::string program_, description_;
  std::map<std::string, Option> options_;
  std::vector<std::string> order_;
};

}  // namespace tutorial
