/* xffl_set_log_callback: the library's log lines reach the host's callback with their level, rank and
 * text (no prefix, no newline) and the caller's user_data; the state's level still chooses which lines
 * exist; NULL restores stderr; a callback that calls xffl_set_log_callback gets XFFL_ESTATE instead of a
 * self-deadlock. Through libxffl.so. This program redirects its own stderr to a file to read it back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "api_support.h"
#include "xffl_test.h"

#define MAX_LINES 64

typedef struct captured {
  int count;
  xffl_log_level_t levels[MAX_LINES];
  int ranks[MAX_LINES];
  char texts[MAX_LINES][256];
  int reentry_status; /* what xffl_set_log_callback said from inside the callback (try_reentry) */
  int try_reentry;
} captured;

static void capture(xffl_log_level_t level, int rank, const char *message, void *user_data) {
  captured *into = (captured *)user_data;
  if (into->try_reentry) into->reentry_status = xffl_set_log_callback(NULL, NULL);
  if (into->count == MAX_LINES) return;
  into->levels[into->count] = level;
  into->ranks[into->count] = rank;
  snprintf(into->texts[into->count], sizeof into->texts[0], "%s", message);
  into->count++;
}

/* Index of the first captured line containing needle, or -1. */
static int find_line(const captured *lines, const char *needle) {
  for (int i = 0; i < lines->count; ++i)
    if (strstr(lines->texts[i], needle)) return i;
  return -1;
}

/* Rank 1 of 4 sets up HSDP 2 at the given level: "group creation for xffl_set_hsdp took ..." is an INFO line. */
static void run_layout(xffl_log_level_t level) {
  xffl_state_t *st = NULL;
  assert_xffl_ok(xffl_state_create(&st));
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_LOG_LEVEL, (int)level));
  assert_xffl_ok(xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, API_MASTER_ADDR, API_MASTER_PORT, 1, 4));
  assert_xffl_ok(xffl_set_hsdp(st, 2));
  xffl_state_destroy(st);
}

static void test_lines_reach_the_callback(void **state) {
  (void)state;
  static captured lines;
  memset(&lines, 0, sizeof lines);
  assert_xffl_ok(xffl_set_log_callback(capture, &lines));
  run_layout(XFFL_LOG_INFO);
  assert_xffl_ok(xffl_set_log_callback(NULL, NULL));

  const int at = find_line(&lines, "group creation for xffl_set_hsdp took ");
  if (at < 0) fail_msg("no 'group creation for xffl_set_hsdp' line among %d captured lines", lines.count);
  assert_int_equal(lines.levels[at], XFFL_LOG_INFO);
  assert_int_equal(lines.ranks[at], 1);
  const char *text = lines.texts[at];
  if (strchr(text, '\n') || strstr(text, "[xffl") || strstr(text, "INFO"))
    fail_msg("the callback's text carries a prefix or a newline: '%s'", text);
  const size_t n = strlen(text);
  assert_true(n > 3 && strcmp(text + n - 3, " ms") == 0);
}

static void test_level_still_filters(void **state) {
  (void)state;
  static captured lines;
  memset(&lines, 0, sizeof lines);
  assert_xffl_ok(xffl_set_log_callback(capture, &lines));
  run_layout(XFFL_LOG_WARN);
  assert_xffl_ok(xffl_set_log_callback(NULL, NULL));
  for (int i = 0; i < lines.count; ++i)
    if (lines.levels[i] > XFFL_LOG_WARN)
      fail_msg("a %d line reached the callback at level WARN: '%s'", (int)lines.levels[i], lines.texts[i]);
}

static void test_null_restores_stderr(void **state) {
  (void)state;
  static captured lines;
  memset(&lines, 0, sizeof lines);
  assert_xffl_ok(xffl_set_log_callback(capture, &lines));
  assert_xffl_ok(xffl_set_log_callback(NULL, &lines)); /* user_data without a callback is ignored */

  char path[] = "/tmp/xffl_log_callback_XXXXXX";
  const int file = mkstemp(path);
  assert_true(file >= 0);
  fflush(stderr);
  const int saved = dup(STDERR_FILENO);
  assert_true(saved >= 0);
  assert_true(dup2(file, STDERR_FILENO) >= 0);
  run_layout(XFFL_LOG_INFO);
  fflush(stderr);
  assert_true(dup2(saved, STDERR_FILENO) >= 0);
  close(saved);

  char text[4096] = "";
  const ssize_t got = pread(file, text, sizeof text - 1, 0);
  close(file);
  unlink(path);
  assert_true(got > 0);
  text[got] = '\0';
  assert_int_equal(lines.count, 0);
  if (!strstr(text, "[xffl rank 1] INFO: group creation for xffl_set_hsdp took "))
    fail_msg("stderr lacks the INFO line after xffl_set_log_callback(NULL): '%s'", text);
}

static void test_callback_calling_xffl_is_refused(void **state) {
  (void)state;
  static captured lines;
  memset(&lines, 0, sizeof lines);
  lines.try_reentry = 1;
  lines.reentry_status = 1;
  assert_xffl_ok(xffl_set_log_callback(capture, &lines));
  run_layout(XFFL_LOG_INFO);
  /* Still installed: the refused call changed nothing. */
  const int before = lines.count;
  assert_true(before > 0);
  assert_int_equal(lines.reentry_status, XFFL_ESTATE);
  lines.try_reentry = 0;
  run_layout(XFFL_LOG_INFO);
  assert_true(lines.count > before);
  assert_xffl_ok(xffl_set_log_callback(NULL, NULL));
  api_expect_message_contains("inside the log callback", "xffl_set_log_callback from the callback");
}

/* ---- replacing the callback while other threads log ---------------------------------------------- */

#define LOGGERS 3
#define ROUNDS 500
#define MIN_SWITCHES 50

static atomic_int counts[2];      /* lines received by callback 0 and callback 1 */
static atomic_int loggers_done;
static atomic_int switches_made;  /* the loggers go on until the main thread has switched this often */

static void count_line(xffl_log_level_t level, int rank, const char *message, void *user_data) {
  (void)level, (void)rank, (void)message;
  atomic_fetch_add((atomic_int *)user_data, 1);
}

static void *log_repeatedly(void *unused) {
  (void)unused;
  /* However the threads are scheduled, the switches happen while lines are being logged. */
  for (int i = 0; i < ROUNDS || atomic_load(&switches_made) < MIN_SWITCHES; ++i) run_layout(XFFL_LOG_INFO);
  atomic_fetch_add(&loggers_done, 1);
  return NULL;
}

/* Once xffl_set_log_callback returns, the replaced callback receives nothing more, however many threads
 * are logging at that moment: its count, read right after the switch, never moves again. */
static void test_replaced_callback_gets_no_more_lines(void **state) {
  (void)state;
  pthread_t threads[LOGGERS];
  atomic_store(&counts[0], 0);
  atomic_store(&counts[1], 0);
  atomic_store(&loggers_done, 0);
  atomic_store(&switches_made, 0);
  assert_xffl_ok(xffl_set_log_callback(count_line, &counts[0]));
  for (int t = 0; t < LOGGERS; ++t) assert_int_equal(pthread_create(&threads[t], NULL, log_repeatedly, NULL), 0);
  int switches = 0;
  while (atomic_load(&loggers_done) < LOGGERS) {
    const int to = (switches + 1) % 2, from = switches % 2;
    assert_xffl_ok(xffl_set_log_callback(count_line, &counts[to]));
    const int frozen = atomic_load(&counts[from]);
    assert_xffl_ok(xffl_set_log_callback(count_line, &counts[to])); /* a barrier for lines in flight */
    if (atomic_load(&counts[from]) != frozen)
      fail_msg("callback %d received a line after it was replaced (%d, then %d)", from, frozen,
               atomic_load(&counts[from]));
    atomic_store(&counts[from], 0);
    atomic_store(&switches_made, ++switches);
  }
  for (int t = 0; t < LOGGERS; ++t) pthread_join(threads[t], NULL);
  assert_xffl_ok(xffl_set_log_callback(NULL, NULL));
  assert_true(switches >= MIN_SWITCHES);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lines_reach_the_callback),
      cmocka_unit_test(test_level_still_filters),
      cmocka_unit_test(test_null_restores_stderr),
      cmocka_unit_test(test_callback_calling_xffl_is_refused),
      cmocka_unit_test(test_replaced_callback_gets_no_more_lines),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
