#include <tutorial/cli.hpp>

#include "catch.hpp"

namespace {
using Status = tutorial::ParseResult::Status;

tutorial::Cli make_cli() {
  tutorial::Cli cli("prog", "A test program.");
  cli.add_int("n", "elements", 100, 1, 1 << 20);
  cli.add_flag("trace", "collect a trace");
  cli.add_string("mode", "what to run", "all", {"all", "fast"});
  return cli;
}

tutorial::ParseResult parse(tutorial::Cli& cli, std::vector<const char*> args) {
  args.insert(args.begin(), "prog");
  return cli.parse(static_cast<int>(args.size()), args.data());
}
}  // namespace

TEST_CASE("defaults hold when no option is given") {
  auto cli = make_cli();
  REQUIRE(parse(cli, {}).status == Status::kOk);
  CHECK(cli.get_int("n") == 100);
  CHECK_FALSE(cli.get_flag("trace"));
  CHECK(cli.get_string("mode") == "all");
}

TEST_CASE("values are read in both spellings") {
  auto cli = make_cli();
  REQUIRE(parse(cli, {"--n", "4096", "--trace", "--mode=fast"}).status == Status::kOk);
  CHECK(cli.get_int("n") == 4096);
  CHECK(cli.get_flag("trace"));
  CHECK(cli.get_string("mode") == "fast");

  auto cli2 = make_cli();
  REQUIRE(parse(cli2, {"--n=2^20"}).status == Status::kOk);
  CHECK(cli2.get_int("n") == (1 << 20));
}

TEST_CASE("bad values are refused with a message that names the option") {
  const std::vector<std::pair<std::vector<const char*>, std::string>> cases = {
      {{"--n", "-5"}, "--n must be at least 1"},
      {{"--n", "0"}, "--n must be at least 1"},
      {{"--n", "abc"}, "is not a whole number"},
      {{"--n", "12x"}, "is not a whole number"},
      {{"--n", ""}, "is not a whole number"},
      {{"--n", "3^4"}, "is not a whole number"},
      {{"--n", "99999999999999999999999"}, "is too large (at most 1048576)"},
      {{"--n", "-99999999999999999999999"}, "is too small (at least 1)"},
      {{"--n", "2^99"}, "is too large"},
      {{"--n", " 5"}, "is not a whole number"},
      {{"--n", "5 "}, "is not a whole number"},
      {{"--n", "2^21"}, "--n must be at most"},
      {{"--n"}, "--n needs a value"},
      {{"--mode", "slow"}, "is not one of all, fast"},
      {{"--trace=yes"}, "takes no value"},
      {{"--bogus"}, "unknown option '--bogus'"},
      {{"stray"}, "unexpected argument 'stray'"},
  };
  for (const auto& [args, expected] : cases) {
    auto cli = make_cli();
    const auto result = parse(cli, args);
    INFO("expected: " << expected << ", got: " << result.message);
    CHECK(result.status == Status::kError);
    CHECK(result.message.find(expected) != std::string::npos);
  }
}

TEST_CASE("--help is recognised and the help lists every option with its range") {
  auto cli = make_cli();
  CHECK(parse(cli, {"--n", "5", "--help"}).status == Status::kHelp);
  const std::string help = cli.help();
  CHECK(help.find("Usage: prog") != std::string::npos);
  CHECK(help.find("--n <value>") != std::string::npos);
  CHECK(help.find("1 to 1048576") != std::string::npos);
  CHECK(help.find("--trace") != std::string::npos);
  CHECK(help.find("one of all, fast") != std::string::npos);
}

TEST_CASE("the help keeps its texts in one column and names each default once") {
  tutorial::Cli cli("prog", "A test program.");
  cli.add_int("n", "floats per copy (default: 1 GiB)", 1LL << 28, 1, 1LL << 31);
  cli.add_int("blocks-per-sm-of-a-long-name", "most blocks per SM", 4, 1, 4);
  cli.add_flag("check-only", "verify only");
  const std::string help = cli.help();
  CHECK(help.find("floats per copy (default: 1 GiB) (1 to 2147483648)\n") != std::string::npos);
  CHECK(help.find("most blocks per SM (default 4, 1 to 4)") != std::string::npos);
  // Every option's text starts in the same column, the longest name's plus two.
  std::istringstream lines(help);
  std::string line;
  std::vector<std::size_t> columns;
  while (std::getline(lines, line))
    if (line.rfind("  --", 0) == 0) columns.push_back(line.find_first_not_of(' ', line.find("  ", 2)));
  REQUIRE(columns.size() == 4);  // three options and --help
  const std::size_t expected = std::string("  --blocks-per-sm-of-a-long-name <value>").size() + 2;
  for (std::size_t column : columns) CHECK(column == expected);
}

TEST_CASE("parse_integer accepts decimal and powers of two only") {
  using tutorial::IntegerParse;
  long long v = 0;
  CHECK(tutorial::parse_integer("0", v) == IntegerParse::kOk);
  CHECK(v == 0);
  CHECK(tutorial::parse_integer("2^31", v) == IntegerParse::kOk);
  CHECK(v == (1LL << 31));
  CHECK(tutorial::parse_integer("-7", v) == IntegerParse::kOk);
  CHECK(v == -7);
  CHECK(tutorial::parse_integer("+5", v) == IntegerParse::kOk);
  CHECK(v == 5);
  CHECK(tutorial::parse_integer("2^63", v) == IntegerParse::kTooLarge);
  CHECK(tutorial::parse_integer("99999999999999999999", v) == IntegerParse::kTooLarge);
  CHECK(tutorial::parse_integer("-99999999999999999999", v) == IntegerParse::kTooSmall);
  CHECK(tutorial::parse_integer("1e6", v) == IntegerParse::kNotANumber);
  CHECK(tutorial::parse_integer("0x10", v) == IntegerParse::kNotANumber);
  CHECK(tutorial::parse_integer("-", v) == IntegerParse::kNotANumber);
  CHECK(tutorial::parse_integer(" 5", v) == IntegerParse::kNotANumber);
  CHECK(tutorial::parse_integer("2^x", v) == IntegerParse::kNotANumber);
}

TEST_CASE("numbers too large for any option say so") {
  tutorial::Cli cli = make_cli();
  const auto r = parse(cli, {"--n", "99999999999999999999"});
  CHECK(r.status == Status::kError);
  CHECK(r.message.find("too large") != std::string::npos);
}

TEST_CASE("a single dash before a known option suggests the double dash") {
  tutorial::Cli cli = make_cli();
  const auto r = parse(cli, {"-n", "5"});
  CHECK(r.status == Status::kError);
  CHECK(r.message.find("did you mean --n?") != std::string::npos);
  tutorial::Cli other = make_cli();
  CHECK(parse(other, {"-x"}).message.find("unexpected argument") != std::string::npos);
}

TEST_CASE("the hint for a value that is not a number fits the option's range") {
  tutorial::Cli cli("prog", "A test program.");
  cli.add_int("n", "elements", 100, 1, 1 << 28);
  cli.add_int("runs", "timed runs", 10, 1, 1000);
  const auto n = parse(cli, {"--n", "abc"});
  CHECK(n.message.find("from 1 to 268435456, e.g. 1048576 or 2^20") != std::string::npos);
  const auto runs = parse(cli, {"--runs", "abc"});
  CHECK(runs.message.find("from 1 to 1000)") != std::string::npos);
  CHECK(runs.message.find("2^20") == std::string::npos);
}

TEST_CASE("a usage error is one line that points to --help") {
  tutorial::Cli cli = make_cli();
  const auto r = parse(cli, {"--n", "0"});
  const std::string line = cli.error_line(r.message);
  CHECK(line == "prog: --n must be at least 1 (got 0) (see prog --help)\n");
  CHECK(line.find('\n') == line.size() - 1);
}

TEST_CASE("messages name the program as it was invoked, without its folder") {
  // Chapter 02's README builds ./unified_memory; its CMake target is 02_unified_memory.
  tutorial::Cli cli("02_unified_memory", "A test program.");
  cli.add_int("n", "elements", 100, 1, 1 << 20);
  const char* argv[] = {"/home/me/course/02_unified_memory/unified_memory", "--n", "0"};
  const auto r = cli.parse(3, argv);
  CHECK(cli.error_line(r.message) == "unified_memory: --n must be at least 1 (got 0) (see unified_memory --help)\n");
  CHECK(cli.help().rfind("Usage: unified_memory [options]\n", 0) == 0);
  tutorial::Cli bare("02_unified_memory", "A test program.");
  const char* no_folder[] = {"unified_memory"};
  bare.parse(1, no_folder);
  CHECK(bare.help().rfind("Usage: unified_memory ", 0) == 0);
  tutorial::Cli unnamed("02_unified_memory", "A test program.");
  const char* empty[] = {""};
  unnamed.parse(1, empty);  // no name to read: the declared one stays
  CHECK(unnamed.help().rfind("Usage: 02_unified_memory ", 0) == 0);
}
