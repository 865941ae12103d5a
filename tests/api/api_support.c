/* Helpers of the black-box API tests (see api_support.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_support.h"
#include "xffl_test.h"

int api_option_of_new_state(xffl_option_t option) {
  xffl_state_t *st = NULL;
  assert_xffl_ok(xffl_state_create(&st));
  int value = -1;
  assert_xffl_ok(xffl_get_option(st, option, &value));
  xffl_state_destroy(st);
  return value;
}

xffl_state_t *api_global_state(int world, int rank) {
  xffl_state_t *st = NULL;
  assert_xffl_ok(xffl_state_create(&st));
  assert_non_null(st);
  xffl_status_t rc = xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, API_MASTER_ADDR, API_MASTER_PORT, rank,
                                     world);
  if (rc != XFFL_OK) {
    xffl_state_destroy(st);
    fail_msg("xffl_set_global(rank %d, world %d) returned %s (%s)", rank, world, xffl_status_string(rc),
             xffl_last_error_message());
  }
  return st;
}

size_t api_parse_ranks(const char *text, int *out, size_t cap) {
  size_t n = 0;
  const char *p = text;
  while (*p) {
    if (*p == '(' || *p == ')' || *p == ',' || *p == ' ') {
      ++p;
      continue;
    }
    char *end = NULL;
    long first = strtol(p, &end, 10);
    if (end == p) fail_msg("bad rank list '%s' in the test data", text);
    long last = first;
    p = end;
    if (*p == '-') {
      last = strtol(p + 1, &end, 10);
      if (end == p + 1) fail_msg("bad rank range in '%s' in the test data", text);
      p = end;
    }
    for (long r = first; r <= last; ++r) {
      if (n >= cap) fail_msg("rank list '%s' longer than %zu", text, cap);
      out[n++] = (int)r;
    }
  }
  return n;
}

const char *api_format_ranks(const int *ranks, size_t n, char *buf, size_t cap) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < n; ++i) {
    int wrote = snprintf(buf + used, cap - used, i ? ",%d" : "%d", ranks[i]);
    if (wrote < 0 || (size_t)wrote >= cap - used) {
      if (cap >= 4) strcpy(buf + cap - 4, "...");
      return buf;
    }
    used += (size_t)wrote;
  }
  return buf;
}

size_t api_group_members(const xffl_group_t *group, int *out, size_t cap, const char *ctx) {
  size_t len = 0;
  xffl_status_t rc = xffl_group_ranks(group, out, cap, &len);
  if (rc != XFFL_OK)
    fail_msg("%s: xffl_group_ranks returned %s (%s)", ctx, xffl_status_string(rc), xffl_last_error_message());
  return len;
}

static const char *kind_name(xffl_group_kind_t kind) {
  static const char *names[] = {"WORLD", "FSDP", "HSDP_REPLICA", "HSDP_SHARD", "FEDERATED", "REPLICA", "FEDERATION"};
  return kind >= 0 && kind <= XFFL_GROUP_FEDERATION ? names[kind] : "?";
}

xffl_group_t *api_expect_group(const xffl_state_t *st, xffl_group_kind_t kind, int instance, const char *expected,
                               const char *ctx) {
  xffl_group_t *group = NULL;
  xffl_status_t rc = xffl_get_group(st, kind, instance, &group);
  if (!expected) {
    if (rc != XFFL_ENOTSET)
      fail_msg("%s: group %s[%d] should be unset (XFFL_ENOTSET), got %s (%s)", ctx, kind_name(kind), instance,
               xffl_status_string(rc), rc == XFFL_OK ? "set" : xffl_last_error_message());
    if (group) fail_msg("%s: group %s[%d]: *out written on failure", ctx, kind_name(kind), instance);
    return NULL;
  }
  if (rc != XFFL_OK)
    fail_msg("%s: xffl_get_group(%s, %d) returned %s (%s), expected members %s", ctx, kind_name(kind), instance,
             xffl_status_string(rc), xffl_last_error_message(), expected);
  assert_non_null(group);

  static int want[API_MAX_LIST], got[API_MAX_LIST];
  char want_text[256], got_text[256];
  size_t n_want = api_parse_ranks(expected, want, API_MAX_LIST);
  size_t n_got = api_group_members(group, got, API_MAX_LIST, ctx);
  if (n_got != n_want || memcmp(want, got, n_want * sizeof(int)) != 0)
    fail_msg("%s: group %s[%d] has members [%s], expected [%s]", ctx, kind_name(kind), instance,
             api_format_ranks(got, n_got, got_text, sizeof got_text),
             api_format_ranks(want, n_want, want_text, sizeof want_text));

  int size = -1, my_index = -1, rank = -1;
  assert_xffl_ok(xffl_group_size(group, &size));
  if ((size_t)size != n_want) fail_msg("%s: group %s size %d, expected %zu", ctx, kind_name(kind), size, n_want);
  assert_xffl_ok(xffl_get_int(st, XFFL_ATTR_RANK, &rank));
  assert_xffl_ok(xffl_group_rank(group, &my_index));
  int expected_index = -1;
  for (size_t i = 0; i < n_want; ++i)
    if (want[i] == rank) expected_index = (int)i;
  if (my_index != expected_index)
    fail_msg("%s: group %s: xffl_group_rank %d, expected %d (index of rank %d in [%s])", ctx, kind_name(kind),
             my_index, expected_index, rank, api_format_ranks(want, n_want, want_text, sizeof want_text));
  const char *description = xffl_group_description(group);
  if (!description || !*description) fail_msg("%s: group %s has an empty description", ctx, kind_name(kind));
  return group;
}

void api_expect_int(const xffl_state_t *st, xffl_attr_t attr, int expected, const char *ctx) {
  const int sentinel = -12345;
  int value = sentinel;
  xffl_status_t rc = xffl_get_int(st, attr, &value);
  if (expected == API_NONE) {
    if (rc != XFFL_ENOTSET)
      fail_msg("%s: attribute %d should be unset (XFFL_ENOTSET), got %s value %d", ctx, (int)attr,
               xffl_status_string(rc), value);
    if (value != sentinel) fail_msg("%s: attribute %d: value written on failure", ctx, (int)attr);
    return;
  }
  if (rc != XFFL_OK)
    fail_msg("%s: xffl_get_int(attribute %d) returned %s (%s), expected %d", ctx, (int)attr, xffl_status_string(rc),
             xffl_last_error_message(), expected);
  if (value != expected) fail_msg("%s: attribute %d is %d, expected %d", ctx, (int)attr, value, expected);
}

void api_expect_ints(const xffl_state_t *st, xffl_attr_t attr, const char *expected, const char *ctx) {
  int got[64], want[64];
  size_t len = 9999;
  xffl_status_t rc = xffl_get_ints(st, attr, got, 64, &len);
  if (!expected) {
    if (rc != XFFL_ENOTSET)
      fail_msg("%s: tuple attribute %d should be unset (XFFL_ENOTSET), got %s", ctx, (int)attr, xffl_status_string(rc));
    return;
  }
  if (rc != XFFL_OK)
    fail_msg("%s: xffl_get_ints(attribute %d) returned %s (%s), expected (%s)", ctx, (int)attr,
             xffl_status_string(rc), xffl_last_error_message(), expected);
  size_t n = api_parse_ranks(expected, want, 64);
  char text[256];
  if (len != n || memcmp(got, want, n * sizeof(int)) != 0)
    fail_msg("%s: tuple attribute %d is (%s), expected (%s)", ctx, (int)attr,
             api_format_ranks(got, len <= 64 ? len : 64, text, sizeof text), expected);
}

void api_expect_mesh(const xffl_state_t *st, xffl_mesh_kind_t kind, const char *expected, const char *ctx) {
  static int ranks[API_MAX_LIST], want[API_MAX_LIST];
  int shape[2] = {-7, -7};
  size_t ndim = 99, len = 99;
  xffl_status_t rc = xffl_get_mesh(st, kind, shape, 2, &ndim, ranks, API_MAX_LIST, &len);
  const char *name = kind == XFFL_MESH_FSDP ? "fsdp_mesh" : "hsdp_mesh";
  if (!expected) {
    if (rc != XFFL_ENOTSET)
      fail_msg("%s: %s should be unset (XFFL_ENOTSET), got %s", ctx, name, xffl_status_string(rc));
    if (shape[0] != -7 || ndim != 99 || len != 99) fail_msg("%s: %s: outputs written on failure", ctx, name);
    return;
  }
  if (rc != XFFL_OK)
    fail_msg("%s: xffl_get_mesh(%s) returned %s (%s)", ctx, name, xffl_status_string(rc), xffl_last_error_message());
  const char *colon = strchr(expected, ':');
  assert_non_null(colon);
  char shape_text[32];
  size_t shape_len = (size_t)(colon - expected);
  memcpy(shape_text, expected, shape_len);
  shape_text[shape_len] = '\0';
  int want_shape[4];
  size_t want_ndim = api_parse_ranks(shape_text, want_shape, 4);
  if (ndim != want_ndim) fail_msg("%s: %s has %zu dimensions, expected %zu", ctx, name, ndim, want_ndim);
  for (size_t d = 0; d < ndim; ++d)
    if (shape[d] != want_shape[d])
      fail_msg("%s: %s extent %zu is %d, expected %d", ctx, name, d, shape[d], want_shape[d]);
  size_t n = api_parse_ranks(colon + 1, want, API_MAX_LIST);
  char text[256];
  if (len != n || memcmp(ranks, want, n * sizeof(int)) != 0)
    fail_msg("%s: %s ranks [%s], expected [%s]", ctx, name, api_format_ranks(ranks, len, text, sizeof text),
             colon + 1);
}

static int is_ident(char c) { return isalnum((unsigned char)c) || c == '_'; }

int api_has_word(const char *text, const char *word) {
  size_t n = strlen(word);
  for (const char *p = strstr(text, word); p; p = strstr(p + 1, word)) {
    int before_ok = p == text || !is_ident(p[-1]);
    int after_ok = !is_ident(p[n]);
    if (before_ok && after_ok) return 1;
  }
  return 0;
}

void api_expect_message_contains(const char *needle, const char *ctx) {
  const char *message = xffl_last_error_message();
  if (!message) fail_msg("%s: xffl_last_error_message returned NULL", ctx);
  if (!strstr(message, needle)) fail_msg("%s: message '%s' does not contain '%s'", ctx, message, needle);
}
