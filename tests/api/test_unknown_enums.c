/* Unknown enum values: every enum-typed argument of the C API, given a value outside its enumeration,
 * gives XFFL_EINVAL with a message holding the value, writes no output, and is well-defined behaviour
 * inside the library (a C caller may pass any int; the library is C++, where an out-of-range enum load is
 * undefined, which UBSan turns into an abort). Each call therefore runs in its own child process, so one
 * crash names its call and the others still run. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api_support.h"
#include "xffl_test.h"

#define BAD 1000
#define SENTINEL (-777)

typedef enum {
  SET_GLOBAL_BACKEND_NEG, SET_GLOBAL_BACKEND_BIG, SET_GLOBAL_DEVICE_NEG, SET_GLOBAL_DEVICE_META, SET_GLOBAL_DEVICE_BIG,
  SET_INIT_DEVICE_BIG, SET_INIT_DEVICE_NEG, GET_INT_BIG, GET_INT_NEG, GET_INTS_BIG, GET_GROUP_BIG, GET_GROUP_NEG,
  GET_GROUP_NEXT, GET_MESH_BIG, GET_MESH_NEG, SET_OPTION_BIG, GET_OPTION_BIG, GET_OPTION_NEG, DESCRIBE_BIG,
  DESCRIBE_NEG, ALLREDUCE_DTYPE_BIG, ALLREDUCE_DTYPE_NEG, ALLREDUCE_OP_BIG, ALLREDUCE_OP_NEG, BROADCAST_DTYPE_BIG,
  ALLGATHER_DTYPE_BIG, REDUCE_SCATTER_DTYPE_BIG, REDUCE_SCATTER_OP_BIG, FEDAVG_DTYPE_BIG, FEDAVG_MANY_DTYPE_BIG,
  STATUS_STRING_BIG, STATUS_STRING_NEG, STATUS_STRING_INT_MIN, STATUS_STRING_INT_MAX, CASE_COUNT
} case_id;

static const struct {
  const char *call;
  const char *value; /* must appear in the message; NULL: no requirement */
} cases[CASE_COUNT] = {
    {"xffl_set_global(backend -1)", "-1"},
    {"xffl_set_global(backend 1000)", "1000"},
    {"xffl_set_global(device -1)", "-1"},
    {"xffl_set_global(device META)", NULL},
    {"xffl_set_global(device 1000)", "1000"},
    {"xffl_set_init_device(1000)", "1000"},
    {"xffl_set_init_device(-1)", "-1"},
    {"xffl_get_int(attr 1000)", "1000"},
    {"xffl_get_int(attr -1)", "-1"},
    {"xffl_get_ints(attr 1000)", "1000"},
    {"xffl_get_group(kind 1000)", "1000"},
    {"xffl_get_group(kind -1)", "-1"},
    {"xffl_get_group(kind FEDERATION + 1)", "7"},
    {"xffl_get_mesh(kind 1000)", "1000"},
    {"xffl_get_mesh(kind -1)", "-1"},
    {"xffl_set_option(option 1000)", "1000"},
    {"xffl_get_option(option 1000)", "1000"},
    {"xffl_get_option(option -1)", "-1"},
    {"xffl_state_describe(format 1000)", "1000"},
    {"xffl_state_describe(format -1)", "-1"},
    {"xffl_allreduce(dtype 1000)", "1000"},
    {"xffl_allreduce(dtype -1)", "-1"},
    {"xffl_allreduce(op 1000)", "1000"},
    {"xffl_allreduce(op -1)", "-1"},
    {"xffl_broadcast(dtype 1000)", "1000"},
    {"xffl_allgather(dtype 1000)", "1000"},
    {"xffl_reduce_scatter(dtype 1000)", "1000"},
    {"xffl_reduce_scatter(op 1000)", "1000"},
    {"xffl_federated_average(dtype 1000)", "1000"},
    {"xffl_federated_average_many(dtype 1000)", "1000"},
    {"xffl_status_string(100)", NULL},
    {"xffl_status_string(-100)", NULL},
    {"xffl_status_string(INT_MIN)", NULL},
    {"xffl_status_string(INT_MAX)", NULL},
};

typedef struct {
  int status;
  int outputs_untouched;
  char message[512];
} case_result;

/* A W=1 state with federated scaling (one group): every valid call on it succeeds. */
static xffl_state_t *solo_state(void) {
  const int sizes[] = {1};
  xffl_state_t *st = NULL;
  if (xffl_state_create(&st) != XFFL_OK) return NULL;
  if (xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, API_MASTER_ADDR, API_MASTER_PORT, 0, 1) != XFFL_OK ||
      xffl_federated_scaling(st, sizes, 1, 1) != XFFL_OK) {
    xffl_state_destroy(st);
    return NULL;
  }
  return st;
}

/* Runs one case in this (child) process. */
static case_result run_case(case_id id) {
  case_result result;
  memset(&result, 0, sizeof result);
  result.outputs_untouched = 1;
  xffl_state_t *fresh = NULL;
  xffl_state_create(&fresh);
  xffl_state_t *st = solo_state();
  if (!fresh || !st) {
    result.status = 12345;
    snprintf(result.message, sizeof result.message, "could not build the states: %s", xffl_last_error_message());
    return result;
  }
  xffl_group_t *g = NULL, *world = NULL;
  xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world);
  int value = SENTINEL, shape[2] = {SENTINEL, SENTINEL};
  size_t len = 4242, ndim = 4242;
  int ints[4] = {SENTINEL};
  char text[64];
  float a[2] = {1, 2}, b[2] = {SENTINEL, SENTINEL};
  void *bufs[1] = {a};
  size_t counts[1] = {2};
  xffl_status_t rc = XFFL_OK;
  const char *string = NULL;
  switch (id) {
    case SET_GLOBAL_BACKEND_NEG: rc = xffl_set_global(fresh, (xffl_backend_t)-1, XFFL_DEVICE_CPU, "h", 1, 0, 1); break;
    case SET_GLOBAL_BACKEND_BIG: rc = xffl_set_global(fresh, (xffl_backend_t)BAD, XFFL_DEVICE_CPU, "h", 1, 0, 1); break;
    case SET_GLOBAL_DEVICE_NEG: rc = xffl_set_global(fresh, XFFL_BACKEND_NONE, (xffl_device_t)-1, "h", 1, 0, 1); break;
    case SET_GLOBAL_DEVICE_META: rc = xffl_set_global(fresh, XFFL_BACKEND_NONE, XFFL_DEVICE_META, "h", 1, 0, 1); break;
    case SET_GLOBAL_DEVICE_BIG: rc = xffl_set_global(fresh, XFFL_BACKEND_NONE, (xffl_device_t)BAD, "h", 1, 0, 1); break;
    case SET_INIT_DEVICE_BIG: rc = xffl_set_init_device(st, (xffl_device_t)BAD, 0); break;
    case SET_INIT_DEVICE_NEG: rc = xffl_set_init_device(st, (xffl_device_t)-1, 0); break;
    case GET_INT_BIG: rc = xffl_get_int(st, (xffl_attr_t)BAD, &value); break;
    case GET_INT_NEG: rc = xffl_get_int(st, (xffl_attr_t)-1, &value); break;
    case GET_INTS_BIG: rc = xffl_get_ints(st, (xffl_attr_t)BAD, ints, 4, &len); break;
    case GET_GROUP_BIG: rc = xffl_get_group(st, (xffl_group_kind_t)BAD, 0, &g); break;
    case GET_GROUP_NEG: rc = xffl_get_group(st, (xffl_group_kind_t)-1, 0, &g); break;
    case GET_GROUP_NEXT: rc = xffl_get_group(st, (xffl_group_kind_t)(XFFL_GROUP_FEDERATION + 1), 0, &g); break;
    case GET_MESH_BIG: rc = xffl_get_mesh(st, (xffl_mesh_kind_t)BAD, shape, 2, &ndim, ints, 4, &len); break;
    case GET_MESH_NEG: rc = xffl_get_mesh(st, (xffl_mesh_kind_t)-1, shape, 2, &ndim, ints, 4, &len); break;
    case SET_OPTION_BIG: rc = xffl_set_option(st, (xffl_option_t)BAD, 1); break;
    case GET_OPTION_BIG: rc = xffl_get_option(st, (xffl_option_t)BAD, &value); break;
    case GET_OPTION_NEG: rc = xffl_get_option(st, (xffl_option_t)-1, &value); break;
    case DESCRIBE_BIG: rc = xffl_state_describe(st, (xffl_format_t)BAD, text, sizeof text, &len); break;
    case DESCRIBE_NEG: rc = xffl_state_describe(st, (xffl_format_t)-1, text, sizeof text, &len); break;
    case ALLREDUCE_DTYPE_BIG: rc = xffl_allreduce(world, a, b, 2, (xffl_dtype_t)BAD, XFFL_SUM, NULL); break;
    case ALLREDUCE_DTYPE_NEG: rc = xffl_allreduce(world, a, b, 2, (xffl_dtype_t)-1, XFFL_SUM, NULL); break;
    case ALLREDUCE_OP_BIG: rc = xffl_allreduce(world, a, b, 2, XFFL_F32, (xffl_redop_t)BAD, NULL); break;
    case ALLREDUCE_OP_NEG: rc = xffl_allreduce(world, a, b, 2, XFFL_F32, (xffl_redop_t)-1, NULL); break;
    case BROADCAST_DTYPE_BIG: rc = xffl_broadcast(world, b, 2, (xffl_dtype_t)BAD, 0, NULL); break;
    case ALLGATHER_DTYPE_BIG: rc = xffl_allgather(world, a, b, 2, (xffl_dtype_t)BAD, NULL); break;
    case REDUCE_SCATTER_DTYPE_BIG: rc = xffl_reduce_scatter(world, a, b, 2, (xffl_dtype_t)BAD, XFFL_SUM, NULL); break;
    case REDUCE_SCATTER_OP_BIG: rc = xffl_reduce_scatter(world, a, b, 2, XFFL_F32, (xffl_redop_t)BAD, NULL); break;
    case FEDAVG_DTYPE_BIG: rc = xffl_federated_average(st, b, 2, (xffl_dtype_t)BAD, NULL); break;
    case FEDAVG_MANY_DTYPE_BIG:
      bufs[0] = b;
      rc = xffl_federated_average_many(st, bufs, counts, 1, (xffl_dtype_t)BAD, NULL);
      break;
    case STATUS_STRING_BIG: string = xffl_status_string((xffl_status_t)100); break;
    case STATUS_STRING_NEG: string = xffl_status_string((xffl_status_t)-100); break;
    case STATUS_STRING_INT_MIN: string = xffl_status_string((xffl_status_t)INT_MIN); break;
    case STATUS_STRING_INT_MAX: string = xffl_status_string((xffl_status_t)INT_MAX); break;
    case CASE_COUNT: break;
  }
  if (id >= STATUS_STRING_BIG) { /* not a failing call: the string itself is the answer */
    result.status = string && strcmp(string, "XFFL_UNKNOWN: unknown status") == 0 ? XFFL_EINVAL : XFFL_OK;
    snprintf(result.message, sizeof result.message, "%s", string ? string : "(NULL)");
  } else {
    result.status = rc;
    snprintf(result.message, sizeof result.message, "%s", xffl_last_error_message());
  }
  result.outputs_untouched = value == SENTINEL && shape[0] == SENTINEL && len == 4242 && ndim == 4242 &&
                             ints[0] == SENTINEL && g == NULL && b[0] == SENTINEL && b[1] == SENTINEL;
  xffl_state_destroy(st);
  xffl_state_destroy(fresh);
  return result;
}

/* Runs a case in a child process; returns 0 and the result, or -1 with *how saying how the child died. */
static int run_isolated(case_id id, case_result *result, char *how, size_t how_cap) {
  int fds[2];
  if (pipe(fds) != 0) fail_msg("pipe failed");
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) fail_msg("fork failed");
  if (pid == 0) {
    close(fds[0]);
    case_result r = run_case(id);
    ssize_t wrote = write(fds[1], &r, sizeof r);
    _exit(wrote == (ssize_t)sizeof r ? 0 : 3);
  }
  close(fds[1]);
  ssize_t got = 0, n;
  while ((n = read(fds[0], (char *)result + got, sizeof *result - (size_t)got)) > 0) got += n;
  close(fds[0]);
  int wstatus = 0;
  if (waitpid(pid, &wstatus, 0) != pid) fail_msg("waitpid failed");
  if (WIFSIGNALED(wstatus)) {
    snprintf(how, how_cap, "the call crashed (signal %d)", WTERMSIG(wstatus));
    return -1;
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0 || got != (ssize_t)sizeof *result) {
    snprintf(how, how_cap, "the call aborted the process (exit %d; a sanitizer report is above)",
             WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
    return -1;
  }
  return 0;
}

static void test_unknown_enum_values(void **state) {
  (void)state;
  char report[8192] = "";
  int bad = 0;
  for (int id = 0; id < CASE_COUNT; ++id) {
    case_result r;
    char problem[600] = "";
    char how[128];
    if (run_isolated((case_id)id, &r, how, sizeof how) != 0) {
      snprintf(problem, sizeof problem, "%s", how);
    } else if (r.status != XFFL_EINVAL) {
      snprintf(problem, sizeof problem, "returned %s ('%s'), expected XFFL_EINVAL", xffl_status_string(r.status),
               r.message);
    } else if (cases[id].value && !api_has_word(r.message, cases[id].value) &&
               !(cases[id].value[0] == '-' && strstr(r.message, cases[id].value))) {
      snprintf(problem, sizeof problem, "message '%s' does not hold the value %s", r.message, cases[id].value);
    } else if (!r.outputs_untouched) {
      snprintf(problem, sizeof problem, "wrote an output on failure");
    }
    if (problem[0]) {
      ++bad;
      size_t used = strlen(report);
      snprintf(report + used, sizeof report - used, "\n  %s: %s", cases[id].call, problem);
    }
  }
  if (bad) {
    fprintf(stderr, "%d of %d unknown-enum calls mishandled:%s\n", bad, (int)CASE_COUNT, report);
    fail_msg("%d unknown-enum calls mishandled (listed above)", bad);
  }
}

int main(void) {
  unsetenv("XFFL_TIMEOUT");
  unsetenv("XFFL_LOG_LEVEL");
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_unknown_enum_values)};
  return cmocka_run_group_tests_name("api.unknown_enums", tests, NULL, NULL);
}
