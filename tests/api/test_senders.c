/* xffl_get_communicating_processes (xFFL's _get_communicating_processes), through libxffl.so: the senders
 * C_g of every federated group g in the worked tables (DESIGN.md 3.3, spec/xffl-examples.md), checked on
 * every rank against is_sender / receive_from, and every invalid input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "api_support.h"
#include "xffl_test.h"

#define SENTINEL (-77)

typedef struct {
  const char *name;
  int world;
  int sizes[4];
  size_t n_sizes;
  int hsdp;
  const char *senders[4]; /* C_g by g */
} senders_case;

static const senders_case cases[] = {
    {"DESIGN 3.3 / 5.4: W=12 F=(4,8) S=2", 12, {4, 8}, 2, 2, {"0,3", "4,7"}},
    {"5.2: W=8 F=4 S=2", 8, {4}, 1, 2, {"0,3", "4,7"}},
    {"5.3: W=8 F=4 no HSDP", 8, {4}, 1, 0, {"0-3", "4-7"}},
    {"5.5: W=6 F=(2,4) S=2", 6, {2, 4}, 2, 2, {"0,1", "2,5"}},
    {"W=12 F=(4,8) S=4", 12, {4, 8}, 2, 4, {"0-3", "4,9,6,11"}},
    {"W=14 F=(2,4,8) S=2", 14, {2, 4, 8}, 3, 2, {"0,1", "2,5", "6,9"}},
};

static void test_worked_senders(void **state) {
  (void)state;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    const senders_case *k = &cases[c];
    int groups = 0;
    while (groups < 4 && k->senders[groups]) ++groups;
    for (int r = 0; r < k->world; ++r) {
      xffl_state_t *st = api_global_state(k->world, r);
      assert_xffl_ok(xffl_federated_scaling(st, k->sizes, k->n_sizes, k->hsdp));
      int my_group = -1, is_sender = -1;
      assert_xffl_ok(xffl_get_int(st, XFFL_ATTR_FEDERATED_RANK, &my_group));
      assert_xffl_ok(xffl_get_int(st, XFFL_ATTR_IS_SENDER, &is_sender));
      for (int g = 0; g < groups; ++g) {
        int expected[64], got[64];
        const size_t n = api_parse_ranks(k->senders[g], expected, 64);
        size_t len = 0;
        for (int i = 0; i < 64; ++i) got[i] = SENTINEL;
        assert_xffl_ok(xffl_get_communicating_processes(st, g, got, 64, &len));
        char want_text[256], got_text[256];
        if (len != n || memcmp(got, expected, n * sizeof(int)) != 0 || got[n] != SENTINEL)
          fail_msg("%s, rank %d: C_%d is %s, expected %s", k->name, r, g, api_format_ranks(got, len, got_text, 256),
                   api_format_ranks(expected, n, want_text, 256));
        if (g != my_group) continue;
        /* The caller's own group: a sender is in C_f, and a non-sender receives from C_f[rl]. */
        int in_senders = 0;
        for (size_t i = 0; i < n; ++i) in_senders |= expected[i] == r;
        if (in_senders != is_sender)
          fail_msg("%s, rank %d: is_sender %d but C_%d = %s", k->name, r, is_sender, g, k->senders[g]);
        if (!is_sender) {
          int from = -1, rl = -1;
          assert_xffl_ok(xffl_get_int(st, XFFL_ATTR_RECEIVE_FROM, &from));
          assert_xffl_ok(xffl_get_int(st, XFFL_ATTR_REPLICA_LOCAL_RANK, &rl));
          assert_int_equal(from, expected[rl]);
        }
      }
      xffl_state_destroy(st);
    }
  }
}

/* The issue's own example: W = 12, F = (4, 8), S = 2, federated rank 1 gives 4, 7 (on a rank of group 0). */
static void test_issue_example_and_buffers(void **state) {
  (void)state;
  xffl_state_t *st = api_global_state(12, 1);
  const int sizes[] = {4, 8};
  assert_xffl_ok(xffl_federated_scaling(st, sizes, 2, 2));
  int ranks[4] = {SENTINEL, SENTINEL, SENTINEL, SENTINEL};
  size_t len = 99;
  assert_xffl_ok(xffl_get_communicating_processes(st, 1, ranks, 4, &len));
  assert_int_equal(len, 2);
  assert_int_equal(ranks[0], 4);
  assert_int_equal(ranks[1], 7);
  assert_int_equal(ranks[2], SENTINEL);

  /* EBUFSIZE: len written, buffer untouched (xffl_get_ints' convention); cap 0 with NULL asks the length. */
  int small[1] = {SENTINEL};
  len = 99;
  assert_xffl_status(xffl_get_communicating_processes(st, 1, small, 1, &len), XFFL_EBUFSIZE);
  assert_int_equal(len, 2);
  assert_int_equal(small[0], SENTINEL);
  len = 99;
  assert_xffl_status(xffl_get_communicating_processes(st, 0, NULL, 0, &len), XFFL_EBUFSIZE);
  assert_int_equal(len, 2);

  /* Invalid: g out of range (named), NULL arguments. Nothing written. */
  const int bad[] = {2, -1, 1000};
  for (size_t i = 0; i < 3; ++i) {
    len = 99;
    ranks[0] = SENTINEL;
    assert_xffl_status(xffl_get_communicating_processes(st, bad[i], ranks, 4, &len), XFFL_EINVAL);
    char needle[64];
    snprintf(needle, sizeof needle, "federated rank %d outside [0, 2)", bad[i]);
    api_expect_message_contains(needle, "g out of range");
    assert_true(len == 99 && ranks[0] == SENTINEL);
  }
  assert_xffl_status(xffl_get_communicating_processes(st, 0, NULL, 4, &len), XFFL_EINVAL);
  api_expect_message_contains("ranks is NULL", "NULL ranks");
  assert_xffl_status(xffl_get_communicating_processes(st, 0, ranks, 4, NULL), XFFL_EINVAL);
  api_expect_message_contains("len is NULL", "NULL len");
  assert_xffl_status(xffl_get_communicating_processes(NULL, 0, ranks, 4, &len), XFFL_EINVAL);
  api_expect_message_contains("st is NULL", "NULL st");
  xffl_state_destroy(st);
}

/* Without federated scaling there are no federated groups: ESTATE naming the layout, at every stage. */
static void test_without_federated_scaling(void **state) {
  (void)state;
  int ranks[4];
  size_t len = 99;
  xffl_state_t *st = NULL;
  assert_xffl_ok(xffl_state_create(&st));
  assert_xffl_status(xffl_get_communicating_processes(st, 0, ranks, 4, &len), XFFL_ESTATE);
  xffl_state_destroy(st);

  st = api_global_state(8, 0);
  assert_xffl_status(xffl_get_communicating_processes(st, 0, ranks, 4, &len), XFFL_ESTATE);
  api_expect_message_contains("not set", "no layout");
  assert_xffl_ok(xffl_set_hsdp(st, 2));
  assert_xffl_status(xffl_get_communicating_processes(st, 0, ranks, 4, &len), XFFL_ESTATE);
  api_expect_message_contains("xffl_set_hsdp, not xffl_federated_scaling", "hsdp layout");
  assert_xffl_ok(xffl_unset_hsdp(st));
  const int sizes[] = {4};
  assert_xffl_ok(xffl_federated_scaling(st, sizes, 1, 2));
  assert_xffl_ok(xffl_get_communicating_processes(st, 1, ranks, 4, &len));
  assert_xffl_ok(xffl_unset_federated_scaling(st));
  len = 99;
  assert_xffl_status(xffl_get_communicating_processes(st, 1, ranks, 4, &len), XFFL_ESTATE);
  assert_int_equal(len, 99);
  xffl_state_destroy(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_worked_senders),
      cmocka_unit_test(test_issue_example_and_buffers),
      cmocka_unit_test(test_without_federated_scaling),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
