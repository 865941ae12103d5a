/* xffl_state_describe: the text form follows the layout of xFFL's __str__ exactly (spec/xffl-examples.md,
 * "Text form of the state"), and the JSON form has the DistributedState field names as keys, in order,
 * null for None, lists for tuples and groups, nested lists for meshes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_support.h"
#include "xffl_test.h"

/* The DistributedState fields, in declaration order (= the order of the text form). */
static const char *const field_names[] = {
    "backend",          "master_addr",        "master_port",         "rank",
    "world_size",       "node_local_rank",    "node_local_size",     "node_rank",
    "node_world_size",  "replica_local_rank", "replica_local_size",  "replica_rank",
    "replica_world_size", "federated_local_rank", "federated_local_size", "federated_rank",
    "federated_world_size", "fsdp_mesh",      "hsdp_mesh",           "is_sender",
    "receive_from",     "federated_group",    "replica_group",       "federation",
    "device_type",      "device_count",       "current_device",      "init_device",
    "meta_initialization", "streams"};
#define FIELD_COUNT (sizeof field_names / sizeof field_names[0])

/* The whole description in a malloc'ed string (sized with the EBUFSIZE protocol). */
static char *describe(const xffl_state_t *st, xffl_format_t format) {
  size_t len = 0;
  assert_xffl_status(xffl_state_describe(st, format, NULL, 0, &len), XFFL_EBUFSIZE);
  char *text = malloc(len + 1);
  assert_non_null(text);
  size_t again = 0;
  assert_xffl_ok(xffl_state_describe(st, format, text, len + 1, &again));
  assert_int_equal(again, len);
  assert_int_equal(strlen(text), len);
  return text;
}

/* ---------------------------------------------------------------- text */

#define SP8 "        "
#define SP16 SP8 SP8
#define SP20 SP16 "    "
#define BANNER SP16 "*** xFFL Distributed Setup ***"

/* One expected line: exact, or (value NULL) only the label, any value after it. */
typedef struct {
  const char *line;
  int label_only;
} text_line;

/* 8 spaces + "NAME " + dashes up to 57 characters. Rotating buffers: one expected table uses them all. */
static char *header(const char *name) {
  static char headers[8][80];
  static int next = 0;
  char *out = headers[next++ % 8];
  snprintf(out, 80, SP8 "%s ", name);
  size_t n = strlen(out);
  while (n < 8 + 57) out[n++] = '-';
  out[n] = '\0';
  return out;
}

/* Splits text on '\n' into a NULL-terminated array of copies. */
static char **split_lines(const char *text, size_t *count) {
  size_t n = 1;
  for (const char *p = text; *p; ++p) n += *p == '\n';
  char **lines = calloc(n + 1, sizeof *lines);
  assert_non_null(lines);
  const char *start = text;
  for (size_t i = 0; i < n; ++i) {
    const char *end = strchr(start, '\n');
    size_t len = end ? (size_t)(end - start) : strlen(start);
    lines[i] = malloc(len + 1);
    assert_non_null(lines[i]);
    memcpy(lines[i], start, len);
    lines[i][len] = '\0';
    start = end ? end + 1 : start + len;
  }
  *count = n;
  return lines;
}

static void free_lines(char **lines, size_t n) {
  for (size_t i = 0; i < n; ++i) free(lines[i]);
  free(lines);
}

static void expect_text(const char *text, const text_line *expected, size_t n_expected) {
  size_t n = 0;
  char **lines = split_lines(text, &n);
  for (size_t i = 0; i < n && i < n_expected; ++i) {
    const char *want = expected[i].line;
    int ok = expected[i].label_only ? strncmp(lines[i], want, strlen(want)) == 0 && strlen(lines[i]) > strlen(want)
                                    : strcmp(lines[i], want) == 0;
    if (!ok) {
      char got[256];
      snprintf(got, sizeof got, "%s", lines[i]);
      free_lines(lines, n);
      fail_msg("text line %zu is '%s', expected %s'%s'", i, got, expected[i].label_only ? "a value after " : "", want);
    }
  }
  free_lines(lines, n);
  if (n != n_expected) fail_msg("the text has %zu lines, expected %zu", n, n_expected);
}

#define EXACT(text) {text, 0}
#define LABEL(text) {text, 1}

/* Rank 1 of 5.2 (W = 8, federated 4, hsdp 2): the spec's example, values as printed there. */
static void test_text_of_5_2_rank_1(void **state) {
  (void)state;
  const int sizes[] = {4};
  xffl_state_t *st = api_global_state(8, 1);
  assert_xffl_ok(xffl_federated_scaling(st, sizes, 1, 2));
  char *text = describe(st, XFFL_FORMAT_TEXT);

  /* the exact frame first, so a mismatch says where */
  assert_memory_equal(text, "\n\n" BANNER "\n\n", strlen("\n\n" BANNER "\n\n"));
  const char *tail = "\n" BANNER "\n" SP16;
  assert_true(strlen(text) > strlen(tail));
  assert_string_equal(text + strlen(text) - strlen(tail), tail);
  assert_int_equal(strlen(header("GLOBAL")), 8 + 57);

  char port_line[64];
  snprintf(port_line, sizeof port_line, SP20 "Master port\t\t\t%d", API_MASTER_PORT);
  const text_line expected[] = {
      EXACT(""),
      EXACT(""),
      EXACT(BANNER),
      EXACT(""),
      EXACT(header("GLOBAL")),
      LABEL(SP20 "Backend\t\t\t"),
      EXACT(SP20 "Master address\t\t127.0.0.1"),
      EXACT(port_line),
      EXACT(SP20 "Rank\t\t\t1"),
      EXACT(SP20 "World size\t\t\t8"),
      EXACT(header("NODE")),
      EXACT(SP20 "Node local rank\t\tNone"),
      EXACT(SP20 "Node local size\t\tNone"),
      EXACT(SP20 "Node rank\t\t\tNone"),
      EXACT(SP20 "Node world size\t\tNone"),
      EXACT(header("REPLICA")),
      EXACT(SP20 "Replica local rank\t\t1"),
      EXACT(SP20 "Replica local size\t\t2"),
      EXACT(SP20 "Replica rank\t\t0"),
      EXACT(SP20 "Replica world size\t\t(2, 2)"),
      EXACT(header("FEDERATION")),
      EXACT(SP20 "Federated local rank\t1"),
      EXACT(SP20 "Federated local size\t(4, 4)"),
      EXACT(SP20 "Federated rank\t\t0"),
      EXACT(SP20 "Federated world size\t2"),
      EXACT(header("MESHES")),
      EXACT(SP20 "FSDP\t\t\tNone"),
      LABEL(SP20 "HSDP\t\t\t"), /* torch's DeviceMesh repr: elided by the spec */
      EXACT(SP20 "Is sender\t\t\tFalse"),
      EXACT(SP20 "Receives from\t\t3"),
      EXACT(SP20 "Federated group\t\t[1, 5]"),
      EXACT(SP20 "Replica group\t\t[1, 3]"),
      EXACT(SP20 "Federation\t\t\t[0, 1, 2, 3]"),
      EXACT(header("DEVICE")),
      EXACT(SP20 "Device type\t\t\tcpu"),
      LABEL(SP20 "Device count\t\t\t"),
      LABEL(SP20 "Current device\t\t"),
      LABEL(SP20 "Initialization device\t"),
      LABEL(SP20 "Meta initialization\t\t"),
      LABEL(SP20 "Streams\t\t\t"),
      EXACT(""),
      EXACT(BANNER),
      EXACT(SP16),
  };
  expect_text(text, expected, sizeof expected / sizeof expected[0]);
  /* The HSDP mesh is not None here. */
  assert_null(strstr(text, "HSDP\t\t\tNone"));
  free(text);
  xffl_state_destroy(st);
}

/* Before set_global every field prints as None, in the same frame. */
static void test_text_of_empty_state(void **state) {
  (void)state;
  xffl_state_t *st = NULL;
  assert_xffl_ok(xffl_state_create(&st));
  char *text = describe(st, XFFL_FORMAT_TEXT);
  size_t n = 0;
  char **lines = split_lines(text, &n);
  assert_int_equal(n, 43);
  size_t fields = 0;
  for (size_t i = 0; i < n; ++i) {
    if (strncmp(lines[i], SP20, 20) != 0) continue;
    ++fields;
    const char *tab = strrchr(lines[i], '\t');
    assert_non_null(tab);
    if (strcmp(tab + 1, "None") != 0) fail_msg("empty state: line '%s' is not None", lines[i]);
  }
  assert_int_equal(fields, FIELD_COUNT);
  free_lines(lines, n);
  free(text);
  xffl_state_destroy(st);
}

/* Node values print once set_node is called. */
static void test_text_node_section(void **state) {
  (void)state;
  xffl_state_t *st = api_global_state(16, 9);
  assert_xffl_ok(xffl_set_node(st, 1, 4, 2, 4));
  char *text = describe(st, XFFL_FORMAT_TEXT);
  assert_non_null(strstr(text, "\n" SP20 "Node local rank\t\t1\n" SP20 "Node local size\t\t4\n" SP20
                               "Node rank\t\t\t2\n" SP20 "Node world size\t\t4\n"));
  free(text);
  xffl_state_destroy(st);
}

/* ---------------------------------------------------------------- JSON */

/* The top-level keys of a flat JSON object, in order; values skipped by bracket depth and strings. */
static size_t json_keys(const char *json, char keys[][32], size_t cap) {
  size_t n = 0;
  int depth = 0;
  const char *p = json;
  assert_int_equal(*p, '{');
  for (; *p; ++p) {
    if (*p == '"') {
      const char *start = ++p;
      while (*p && *p != '"') p += (*p == '\\') ? 2 : 1;
      if (depth == 1) {
        const char *q = p + 1;
        while (*q == ' ') ++q;
        if (*q == ':') { /* a key */
          assert_true(n < cap);
          size_t len = (size_t)(p - start);
          assert_true(len < 32);
          memcpy(keys[n], start, len);
          keys[n][len] = '\0';
          ++n;
        }
      }
    } else if (*p == '{' || *p == '[') {
      ++depth;
    } else if (*p == '}' || *p == ']') {
      --depth;
    }
  }
  assert_int_equal(depth, 0);
  return n;
}

static void expect_field_names(const char *json) {
  char keys[64][32];
  size_t n = json_keys(json, keys, 64);
  if (n != FIELD_COUNT) fail_msg("JSON has %zu keys, expected %zu: %s", n, (size_t)FIELD_COUNT, json);
  for (size_t i = 0; i < n; ++i)
    if (strcmp(keys[i], field_names[i]) != 0) fail_msg("JSON key %zu is '%s', expected '%s'", i, keys[i], field_names[i]);
}

static void expect_json(int world, int rank, const int *sizes, size_t n_sizes, int hsdp, const char *expected) {
  xffl_state_t *st = api_global_state(world, rank);
  assert_xffl_ok(xffl_federated_scaling(st, sizes, n_sizes, hsdp));
  char *json = describe(st, XFFL_FORMAT_JSON);
  expect_field_names(json);
  if (strcmp(json, expected) != 0) {
    fprintf(stderr, "rank %d JSON\n   got: %s\nwanted: %s\n", rank, json, expected);
    free(json);
    fail_msg("JSON of rank %d differs (both printed above)", rank);
  }
  free(json);
  xffl_state_destroy(st);
}

/* DESIGN.md 3.3 (W = 12, F = (4, 8), S = 2). Beyond the contract, these pin what backend NONE on CPU
 * reports for the device fields: backend "none", device_type "cpu", device_count 1, streams 1. */
static void test_json_design_3_3(void **state) {
  (void)state;
  const int sizes[] = {4, 8};
  expect_json(12, 5, sizes, 2, 2,
              "{\"backend\": \"none\", \"master_addr\": \"127.0.0.1\", \"master_port\": 29500, \"rank\": 5, "
              "\"world_size\": 12, \"node_local_rank\": null, \"node_local_size\": null, \"node_rank\": null, "
              "\"node_world_size\": null, \"replica_local_rank\": 1, \"replica_local_size\": 2, \"replica_rank\": 0, "
              "\"replica_world_size\": [2, 4], \"federated_local_rank\": 1, \"federated_local_size\": [4, 8], "
              "\"federated_rank\": 1, \"federated_world_size\": 2, \"fsdp_mesh\": null, "
              "\"hsdp_mesh\": [[4, 5], [6, 7], [8, 9], [10, 11]], \"is_sender\": false, \"receive_from\": 7, "
              "\"federated_group\": [5], \"replica_group\": [5, 7, 9, 11], "
              "\"federation\": [4, 5, 6, 7, 8, 9, 10, 11], \"device_type\": \"cpu\", \"device_count\": 1, "
              "\"current_device\": null, \"init_device\": null, \"meta_initialization\": null, \"streams\": 1}");
  expect_json(12, 0, sizes, 2, 2,
              "{\"backend\": \"none\", \"master_addr\": \"127.0.0.1\", \"master_port\": 29500, \"rank\": 0, "
              "\"world_size\": 12, \"node_local_rank\": null, \"node_local_size\": null, \"node_rank\": null, "
              "\"node_world_size\": null, \"replica_local_rank\": 0, \"replica_local_size\": 2, \"replica_rank\": 0, "
              "\"replica_world_size\": [2, 4], \"federated_local_rank\": 0, \"federated_local_size\": [4, 8], "
              "\"federated_rank\": 0, \"federated_world_size\": 2, \"fsdp_mesh\": null, "
              "\"hsdp_mesh\": [[0, 1], [2, 3]], \"is_sender\": true, \"receive_from\": null, "
              "\"federated_group\": [0, 4], \"replica_group\": [0, 2], \"federation\": [0, 1, 2, 3], "
              "\"device_type\": \"cpu\", \"device_count\": 1, \"current_device\": null, \"init_device\": null, "
              "\"meta_initialization\": null, \"streams\": 1}");
}

/* The raw JSON value of key (up to the next top-level comma), copied into out. */
static const char *json_value(const char *json, const char *key, char *out, size_t cap) {
  char pattern[64];
  snprintf(pattern, sizeof pattern, "\"%s\": ", key);
  const char *p = strstr(json, pattern);
  if (!p) fail_msg("JSON has no key '%s': %s", key, json);
  p += strlen(pattern);
  int depth = 0, in_string = 0;
  size_t n = 0;
  for (; *p; ++p) {
    if (in_string) {
      if (*p == '\\') {
        out[n++] = *p++;
      } else if (*p == '"') {
        in_string = 0;
      }
    } else if (*p == '"') {
      in_string = 1;
    } else if (*p == '[' || *p == '{') {
      ++depth;
    } else if (*p == ']' || *p == '}') {
      if (depth == 0) break;
      --depth;
    } else if (*p == ',' && depth == 0) {
      break;
    }
    assert_true(n + 2 < cap);
    out[n++] = *p;
  }
  out[n] = '\0';
  return out;
}

/* FSDP: fsdp_mesh is a flat list; node fields as set; tuples of one element are one-element lists. */
static void test_json_fsdp_and_hsdp(void **state) {
  (void)state;
  char value[256];
  xffl_state_t *st = api_global_state(4, 2);
  assert_xffl_ok(xffl_set_node(st, 0, 2, 1, 2));
  assert_xffl_ok(xffl_set_fsdp(st));
  char *json = describe(st, XFFL_FORMAT_JSON);
  expect_field_names(json);
  assert_string_equal(json_value(json, "fsdp_mesh", value, sizeof value), "[0, 1, 2, 3]");
  assert_string_equal(json_value(json, "hsdp_mesh", value, sizeof value), "null");
  assert_string_equal(json_value(json, "node_local_rank", value, sizeof value), "0");
  assert_string_equal(json_value(json, "node_local_size", value, sizeof value), "2");
  assert_string_equal(json_value(json, "node_rank", value, sizeof value), "1");
  assert_string_equal(json_value(json, "node_world_size", value, sizeof value), "2");
  assert_string_equal(json_value(json, "is_sender", value, sizeof value), "null");
  assert_string_equal(json_value(json, "federated_group", value, sizeof value), "null");
  free(json);
  xffl_state_destroy(st);

  st = api_global_state(8, 3);
  assert_xffl_ok(xffl_set_hsdp(st, 2));
  json = describe(st, XFFL_FORMAT_JSON);
  expect_field_names(json);
  assert_string_equal(json_value(json, "hsdp_mesh", value, sizeof value), "[[0, 1], [2, 3], [4, 5], [6, 7]]");
  assert_string_equal(json_value(json, "replica_world_size", value, sizeof value), "[4]");
  assert_string_equal(json_value(json, "replica_local_rank", value, sizeof value), "1");
  assert_string_equal(json_value(json, "replica_rank", value, sizeof value), "1");
  assert_string_equal(json_value(json, "fsdp_mesh", value, sizeof value), "null");
  assert_string_equal(json_value(json, "replica_group", value, sizeof value), "null"); /* no federation */
  free(json);
  xffl_state_destroy(st);

  /* 5.3: the federation's own FSDP mesh, every rank a sender, no replica fields */
  const int sizes[] = {4};
  st = api_global_state(8, 6);
  assert_xffl_ok(xffl_federated_scaling(st, sizes, 1, 0));
  json = describe(st, XFFL_FORMAT_JSON);
  assert_string_equal(json_value(json, "fsdp_mesh", value, sizeof value), "[4, 5, 6, 7]");
  assert_string_equal(json_value(json, "is_sender", value, sizeof value), "true");
  assert_string_equal(json_value(json, "receive_from", value, sizeof value), "null");
  assert_string_equal(json_value(json, "federated_group", value, sizeof value), "[2, 6]");
  assert_string_equal(json_value(json, "federated_local_size", value, sizeof value), "[4, 4]");
  assert_string_equal(json_value(json, "replica_world_size", value, sizeof value), "null");
  free(json);
  xffl_state_destroy(st);
}

/* Before set_global every key is there and null. */
static void test_json_of_empty_state(void **state) {
  (void)state;
  xffl_state_t *st = NULL;
  assert_xffl_ok(xffl_state_create(&st));
  char *json = describe(st, XFFL_FORMAT_JSON);
  expect_field_names(json);
  char value[64];
  for (size_t i = 0; i < FIELD_COUNT; ++i)
    if (strcmp(json_value(json, field_names[i], value, sizeof value), "null") != 0)
      fail_msg("empty state: '%s' is %s, expected null", field_names[i], value);
  free(json);
  xffl_state_destroy(st);
}

/* Strings are escaped: the master address may hold any byte a user typed. */
static void test_json_escapes_strings(void **state) {
  (void)state;
  xffl_state_t *st = NULL;
  assert_xffl_ok(xffl_state_create(&st));
  assert_xffl_ok(xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, "a\"b\\c\nd", 1, 0, 1));
  char *json = describe(st, XFFL_FORMAT_JSON);
  char value[64];
  assert_string_equal(json_value(json, "master_addr", value, sizeof value), "\"a\\\"b\\\\c\\u000ad\"");
  expect_field_names(json);
  free(json);
  xffl_state_destroy(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_text_of_5_2_rank_1), cmocka_unit_test(test_text_of_empty_state),
      cmocka_unit_test(test_text_node_section),  cmocka_unit_test(test_json_design_3_3),
      cmocka_unit_test(test_json_fsdp_and_hsdp), cmocka_unit_test(test_json_of_empty_state),
      cmocka_unit_test(test_json_escapes_strings),
  };
  return cmocka_run_group_tests_name("api.describe", tests, NULL, NULL);
}
