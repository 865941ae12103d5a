// The registry of XFFL_* variables (bootstrap/env_registry.h) and the options read through it
// (Options::from_environment over a map): every variable declared once and well formed, defaults that
// equal what a state starts with, values within the declared range, errors that name the variable.
#include <set>
#include <string>

#include "bootstrap/env_read.h"
#include "bootstrap/env_registry.h"
#include "state/options.h"

// cmocka last: its fail() macro would clash with std::ios::fail and xffl::fail.
#include "bootstrap_test.h"

using namespace xffl;
using bootstrap::registry::Type;
using bootstrap::registry::Var;
using bootstrap::registry::Variable;
using bootstrap_test::contains;
using bootstrap_test::outcome_of;

namespace {

void test_table_is_well_formed(void **) {
  const std::vector<Variable> &table = bootstrap::registry::variables();
  std::set<std::string> names;
  for (size_t i = 0; i < table.size(); ++i) {
    const Variable &v = table[i];
    if (static_cast<size_t>(v.id) != i) fail_msg("%s is row %zu but Var %d", v.name, i, static_cast<int>(v.id));
    if (std::string(v.name).rfind("XFFL_", 0) != 0) fail_msg("%s does not start with XFFL_", v.name);
    if (!names.insert(v.name).second) fail_msg("%s is declared twice", v.name);
    if (!v.doc || !*v.doc) fail_msg("%s has no doc line", v.name);
    if (!v.default_value && !v.unset) fail_msg("%s says nothing about its default", v.name);
    for (const char *column : {v.name, v.doc})
      if (std::string(column).find('|') != std::string::npos) fail_msg("%s: '|' would break the table", v.name);
    // A default is a value the variable accepts.
    if (v.default_value && v.type != Type::Text) {
      bootstrap_test::Outcome outcome = outcome_of([&] { bootstrap::registry::default_int(v.id); });
      if (!outcome.ok()) fail_msg("%s: default '%s' is refused: %s", v.name, v.default_value, outcome.message.c_str());
    }
  }
  assert_int_equal(table.size(), static_cast<size_t>(Var::WanRelay) + 1);
  // One row per variable in both printed forms.
  const std::string markdown = bootstrap::registry::markdown_table(), help = bootstrap::registry::help_table();
  for (const Variable &v : table) {
    assert_true(contains(markdown, std::string("| `") + v.name + "` |"));
    assert_true(contains(help, std::string("\n  ") + v.name + "  " + bootstrap::registry::type_name(v.type) + ": "));
  }
}

void test_defaults_are_a_new_states(void **) {
  const Options fresh;
  const Options read = Options::from_environment(Environment{});
  assert_int_equal(read.timeout_ms, fresh.timeout_ms);
  assert_int_equal(read.log_level, fresh.log_level);
  assert_int_equal(read.strategy, fresh.strategy);
  assert_int_equal(read.cross_facility_backend, fresh.cross_facility_backend);
  assert_string_equal(read.job_id.c_str(), fresh.job_id.c_str());
  assert_string_equal(read.auth_token.c_str(), fresh.auth_token.c_str());
  assert_int_equal(read.enqueue_only, fresh.enqueue_only);
  assert_int_equal(read.ucx_process_settings, fresh.ucx_process_settings);
  assert_int_equal(read.wire_format, fresh.wire_format);
  assert_int_equal(read.error_feedback, fresh.error_feedback);
  assert_int_equal(read.wan_streams, fresh.wan_streams);
  assert_int_equal(read.wan_encryption, fresh.wan_encryption);
  assert_int_equal(read.wan_bdp_bytes, fresh.wan_bdp_bytes);
  // xffl_state_from_env's defaults: UCX, cpu, one stream.
  assert_int_equal(bootstrap::registry::default_int(Var::Backend), XFFL_BACKEND_UCX);
  assert_int_equal(bootstrap::registry::default_int(Var::Device), XFFL_DEVICE_CPU);
  assert_int_equal(bootstrap::registry::default_int(Var::Streams), 1);
}

void test_options_from_a_map(void **) {
  const Options got = Options::from_environment(Environment{{"XFFL_TIMEOUT", "1.5"},
                                                            {"XFFL_LOG_LEVEL", "Warning"},
                                                            {"XFFL_AUTH_TOKEN", "s3"},
                                                            {"TORCHELASTIC_RUN_ID", "run-7"},
                                                            {"SLURM_JOB_ID", "4242"},
                                                            {"XFFL_CROSS_FACILITY_BACKEND", "UCX"},
                                                            {"XFFL_ENQUEUE_ONLY", "1"},
                                                            {"XFFL_UCX_PROCESS_SETTINGS", "1"},
                                                            {"XFFL_WIRE_FORMAT", "INT8_block"},
                                                            {"XFFL_ERROR_FEEDBACK", "1"}});
  assert_int_equal(got.timeout_ms, 1500);
  assert_int_equal(got.log_level, XFFL_LOG_WARN);
  assert_string_equal(got.auth_token.c_str(), "s3");
  assert_string_equal(got.job_id.c_str(), "run-7");  // TORCHELASTIC_RUN_ID before SLURM_JOB_ID
  assert_int_equal(got.cross_facility_backend, XFFL_BACKEND_UCX);
  assert_true(got.enqueue_only);
  assert_true(got.ucx_process_settings);
  assert_int_equal(got.wire_format, XFFL_WIRE_INT8_BLOCK);
  assert_true(got.error_feedback);
  assert_string_equal(Options::from_environment(Environment{{"SLURM_JOB_ID", "4242"}}).job_id.c_str(), "4242");
  assert_string_equal(
      Options::from_environment(Environment{{"XFFL_JOB_ID", "mine"}, {"SLURM_JOB_ID", "4242"}}).job_id.c_str(), "mine");
  // Empty means unset.
  assert_string_equal(Options::from_environment(Environment{{"XFFL_JOB_ID", ""}}).job_id.c_str(), "xffl");
  assert_int_equal(Options::from_environment(Environment{{"XFFL_TIMEOUT", ""}}).timeout_ms, Options{}.timeout_ms);
}

void test_errors_name_the_variable(void **) {
  const struct {
    const char *name;
    Environment env;
    const char *phrase;
  } cases[] = {
      {"timeout", {{"XFFL_TIMEOUT", "soon"}}, "XFFL_TIMEOUT='soon' is not a number of seconds"},
      {"log level", {{"XFFL_LOG_LEVEL", "loud"}}, "XFFL_LOG_LEVEL='loud' is not one of error, warn, info, debug"},
      {"job id too long", {{"XFFL_JOB_ID", std::string(300, 'j')}}, "XFFL_JOB_ID has 300 characters"},
      {"fallback job id too long", {{"SLURM_JOB_ID", std::string(257, 's')}}, "SLURM_JOB_ID has 257 characters"},
      {"cross-facility backend", {{"XFFL_CROSS_FACILITY_BACKEND", "nccl"}},
       "XFFL_CROSS_FACILITY_BACKEND='nccl' is not one of none, ucx, wan"},
      {"enqueue only", {{"XFFL_ENQUEUE_ONLY", "yes"}}, "XFFL_ENQUEUE_ONLY='yes' is not 0 or 1"},
      {"process settings", {{"XFFL_UCX_PROCESS_SETTINGS", "2"}}, "XFFL_UCX_PROCESS_SETTINGS='2' is not 0 or 1"},
  };
  for (const auto &c : cases) {
    bootstrap_test::Outcome outcome = outcome_of([&] { Options::from_environment(c.env); });
    if (outcome.status != XFFL_EINVAL)
      fail_msg("%s: expected XFFL_EINVAL, got %s: %s", c.name, xffl_status_string(outcome.status),
               outcome.message.c_str());
    if (!contains(outcome.message, c.phrase))
      fail_msg("%s: \"%s\" lacks \"%s\"", c.name, outcome.message.c_str(), c.phrase);
  }
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table_is_well_formed),
      cmocka_unit_test(test_defaults_are_a_new_states),
      cmocka_unit_test(test_options_from_a_map),
      cmocka_unit_test(test_errors_name_the_variable),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
