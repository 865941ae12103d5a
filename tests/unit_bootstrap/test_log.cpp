// The library's log lines: prefix, level filter, whole lines from many threads, the phase timer.
#include <mutex>
#include <regex>

#include "common/log.h"

// cmocka last: its fail() macro would clash with std::ios::fail and xffl::fail.
#include "bootstrap_test.h"

using namespace xffl;
using bootstrap_test::contains;
using bootstrap_test::outcome_of;

namespace {

struct Capture {
  std::mutex lock;
  std::vector<std::string> lines;
  Logger::Sink sink() {
    return [this](const std::string &line) {
      std::lock_guard<std::mutex> hold(lock);
      lines.push_back(line);
    };
  }
};

void test_prefix_and_levels(void **) {
  Capture capture;
  Logger logger(XFFL_LOG_INFO, 3, capture.sink());
  logger.error("store ", "gone");
  logger.warn("slow");
  logger.info("rendezvous with ", 8, " ranks");
  logger.debug("not shown");
  assert_int_equal(capture.lines.size(), 3);
  assert_string_equal(capture.lines[0].c_str(), "[xffl rank 3] ERROR: store gone\n");
  assert_string_equal(capture.lines[1].c_str(), "[xffl rank 3] WARN: slow\n");
  assert_string_equal(capture.lines[2].c_str(), "[xffl rank 3] INFO: rendezvous with 8 ranks\n");
  Logger unknown_rank(XFFL_LOG_ERROR, -1, capture.sink());
  unknown_rank.error("early");
  assert_string_equal(capture.lines.back().c_str(), "[xffl] ERROR: early\n");
}

void test_parse_level(void **) {
  assert_int_equal(parse_log_level("DEBUG"), XFFL_LOG_DEBUG);
  assert_int_equal(parse_log_level("warning"), XFFL_LOG_WARN);
  assert_int_equal(parse_log_level("error"), XFFL_LOG_ERROR);
  bootstrap_test::Outcome outcome = outcome_of([] { parse_log_level("loud"); });
  assert_int_equal(outcome.status, XFFL_EINVAL);
  assert_true(contains(outcome.message, "XFFL_LOG_LEVEL='loud' is not one of error, warn, info, debug"));
}

void test_whole_lines_from_threads(void **) {
  Capture capture;
  auto outcomes = bootstrap_test::run_threads(8, [&](int rank) {
    Logger logger(XFFL_LOG_INFO, rank, capture.sink());
    for (int i = 0; i < 200; ++i) logger.info("message ", i, " of rank ", rank);
  });
  for (const auto &outcome : outcomes) bootstrap_test::expect_ok(outcome);
  assert_int_equal(capture.lines.size(), 8 * 200);
  const std::regex shape(R"(\[xffl rank (\d)\] INFO: message \d+ of rank (\d)\n)");
  for (const std::string &line : capture.lines) {
    std::smatch match;
    assert_true(std::regex_match(line, match, shape));
    assert_true(match[1] == match[2]);
  }
}

void test_phase_timer(void **) {
  Capture capture;
  Logger logger(XFFL_LOG_INFO, 0, capture.sink());
  {
    PhaseTimer timer(logger, "rendezvous");
  }
  assert_int_equal(capture.lines.size(), 1);
  assert_true(std::regex_match(capture.lines[0], std::regex(R"(\[xffl rank 0\] INFO: rendezvous took \d+\.\d ms\n)")));
  {
    PhaseTimer timer(logger, "group creation");
    timer.finish();
  }  // logs once, at finish()
  assert_int_equal(capture.lines.size(), 2);
  assert_true(contains(capture.lines[1], "group creation took "));
  Logger quiet(XFFL_LOG_WARN, 0, capture.sink());
  {
    PhaseTimer timer(quiet, "rendezvous");
  }
  assert_int_equal(capture.lines.size(), 2);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_prefix_and_levels),
      cmocka_unit_test(test_parse_level),
      cmocka_unit_test(test_whole_lines_from_threads),
      cmocka_unit_test(test_phase_timer),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
