// xffl-run's output: "[rank] " before each whole line, stdout to stdout and stderr to stderr, lines of
// different ranks never mixed, partial, long and binary lines delivered.
#include <map>
#include <string>

#include "run_harness.h"
#include "cmocka_cpp.h"  // last

using namespace run_test;

namespace {

std::string pattern(std::size_t length) {
  std::string text;
  for (std::size_t i = 0; i < length; ++i) text += static_cast<char>('a' + i % 26);
  return text;
}

// Checks that `stream` holds exactly `lines` lines per rank, each "[r] rank r <kind> i ..." in order.
void check_chatter(const std::string& stream, const char* kind, int world, int lines) {
  std::map<int, int> next;
  for (const std::string& line : split_lines(stream)) {
    int prefix_rank = -1, body_rank = -1, index = -1, consumed = 0;
    std::string format = std::string("[%d] rank %d ") + kind + " %d %n";
    if (std::sscanf(line.c_str(), format.c_str(), &prefix_rank, &body_rank, &index, &consumed) != 3 ||
        prefix_rank != body_rank)
      fail_msg("mixed or malformed %s line: '%s'", kind, line.c_str());
    if (index != next[prefix_rank])
      fail_msg("rank %d: %s line %d came where line %d was due", prefix_rank, kind, index, next[prefix_rank]);
    std::string expected_tail = std::string(kind) == "line"
                                    ? std::string(40, static_cast<char>('a' + index % 26)) + " end"
                                    : "end";
    if (line.substr(static_cast<std::size_t>(consumed)) != expected_tail)
      fail_msg("rank %d: %s line %d was cut or mixed: '%s'", prefix_rank, kind, index, line.c_str());
    ++next[prefix_rank];
  }
  for (int rank = 0; rank < world; ++rank)
    if (next[rank] != lines) fail_msg("rank %d: %d %s lines, expected %d", rank, next[rank], kind, lines);
}

void concurrent_lines_stay_whole(void**) {
  // Every line is written by the probe in pieces, from 4 ranks at once, on both streams.
  const int world = 4, lines = 400;
  Outcome outcome = run_launcher({"-n", std::to_string(world), "--", probe_path(), "chatter=" + std::to_string(lines)});
  assert_int_equal(outcome.exit_code, 0);
  check_chatter(outcome.out, "line", world, lines);
  check_chatter(outcome.err, "err", world, lines);
}

void partial_last_line_is_flushed(void**) {
  Outcome outcome = run_launcher({"-n", "2", "--", probe_path(), "@0:print=first", "@0:nolf=no newline",
                                  "@1:print=", "@1:nolf=x"});
  assert_int_equal(outcome.exit_code, 0);
  std::string rank0, rank1;
  for (const std::string& line : split_lines(outcome.out)) (starts_with(line, "[0]") ? rank0 : rank1) += line + "|";
  assert_string_equal(rank0.c_str(), "[0] first|[0] no newline|");
  assert_string_equal(rank1.c_str(), "[1] |[1] x|");
  assert_true(outcome.out.back() == '\n');
}

void long_line_arrives_whole(void**) {
  Outcome outcome = run_launcher({"-n", "1", "--", probe_path(), "long=300000"});
  assert_int_equal(outcome.exit_code, 0);
  assert_true(outcome.out == "[0] " + pattern(300000) + "\n");
}

void endless_line_is_cut_into_tagged_pieces(void**) {
  // Beyond 1 MiB without a newline the launcher emits tagged pieces rather than hold it all.
  const std::size_t length = 2621440, piece = 1 << 20;
  Outcome outcome = run_launcher({"-n", "1", "--", probe_path(), "long=" + std::to_string(length)});
  assert_int_equal(outcome.exit_code, 0);
  std::vector<std::string> lines = split_lines(outcome.out);
  assert_int_equal(lines.size(), 3);
  std::string joined;
  for (const std::string& line : lines) {
    assert_true(starts_with(line, "[0] "));
    assert_true(line.size() - 4 <= piece);
    joined += line.substr(4);
  }
  assert_true(joined == pattern(length));
}

void binary_output_passes(void**) {
  Outcome outcome = run_launcher({"-n", "1", "--", probe_path(), "bytes", "print=after"});
  assert_int_equal(outcome.exit_code, 0);
  std::string bytes;
  for (int byte = 0; byte < 256; ++byte)
    if (byte != '\n') bytes += static_cast<char>(byte);
  assert_true(outcome.out == "[0] " + bytes + "\n[0] after\n");
}

void untagged_output_passes_through(void**) {
  Outcome outcome = run_launcher({"-n", "1", "--no-tag-output", "--", probe_path(), "print=hello", "nolf=tail"});
  assert_int_equal(outcome.exit_code, 0);
  assert_string_equal(outcome.out.c_str(), "hello\ntail");
  outcome = run_launcher({"--no-tag-output", "-n", "3", "--", probe_path(), "print=same"});
  assert_string_equal(outcome.out.c_str(), "same\nsame\nsame\n");
  // --tag-output after it wins again.
  outcome = run_launcher({"--no-tag-output", "--tag-output", "-n", "1", "--", probe_path(), "print=tagged"});
  assert_string_equal(outcome.out.c_str(), "[0] tagged\n");
}

void quiet_ranks_print_nothing(void**) {
  Outcome outcome = run_launcher({"-n", "3", "--", probe_path()});
  assert_int_equal(outcome.exit_code, 0);
  assert_string_equal(outcome.out.c_str(), "");
  assert_string_equal(outcome.err.c_str(), "");
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(concurrent_lines_stay_whole),
      cmocka_unit_test(partial_last_line_is_flushed),
      cmocka_unit_test(long_line_arrives_whole),
      cmocka_unit_test(endless_line_is_cut_into_tagged_pieces),
      cmocka_unit_test(binary_output_passes),
      cmocka_unit_test(untagged_output_passes_through),
      cmocka_unit_test(quiet_ranks_print_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
