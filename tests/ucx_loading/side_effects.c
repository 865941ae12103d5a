/*
 * What linking libxffl and making a state does to the process, seen from the host program as a user
 * sees it (only the public C API; one scenario per process, because UCX, once loaded, stays):
 *
 *   none            backend NONE: the host's signal handlers and alternate stack are untouched (a
 *                   fault at a GC-safepoint-like guard page reaches the host's handler), no UCX
 *                   library is even mapped, and the environment is unchanged.
 *   ucx             backend UCX (a world of 1 on 127.0.0.1): UCX is loaded and works (an allreduce),
 *                   found its transport modules, and the host keeps its handlers, its alternate stack,
 *                   its environment, and UCX's log handlers are UCX's own only.
 *   ucx_signals     the same with UCX_ERROR_SIGNALS set (by the test's environment): the user asked for
 *                   UCX's handlers, so SIGSEGV is handled by libucs.
 *   ucx_no_error_signals  UCX_ERROR_SIGNALS set to "" (what the Julia package's __init__ does before
 *                   the load, unless the user set it): UCX installs no error handler at all, so the
 *                   host's handlers never change, not even while UCX loads; UCX works. (The loading
 *                   thread's alternate signal stack does become UCX's: see the scenario.)
 *   process_settings  XFFL_OPT_UCX_PROCESS_SETTINGS=1: the library exports UCX_TCP_PUT_ENABLE=n
 *                   (unset before) and installs its one UCX log handler, as the option documents.
 *
 * Prints "PASS <scenario>" and exits 0 only when every check held; each failed check is printed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xffl.h>

extern char **environ;

static int failures = 0;

#define CHECK(condition, ...)                  \
  do {                                         \
    if (!(condition)) {                        \
      fprintf(stderr, "FAIL: " __VA_ARGS__);   \
      fprintf(stderr, " (%s)\n", #condition);  \
      ++failures;                              \
    }                                          \
  } while (0)

/* The host's handler: a fault on the guard page is expected (a GC safepoint, as Julia's), anything
 * else is not. It jumps back to the safepoint, as a runtime resumes the faulting thread. */
static sigjmp_buf at_safepoint;
static volatile sig_atomic_t safepoint_faults = 0;
static void *guard_page = NULL;

static void host_handler(int signo, siginfo_t *info, void *context) {
  (void)context;
  if (signo == SIGSEGV && guard_page && info->si_addr == guard_page) {
    ++safepoint_faults;
    siglongjmp(at_safepoint, 1);
  }
}

/* What killed Julia with UCX loaded (MPI.jl issue #337): a read of a protected page that the host's
 * SIGSEGV handler must catch. UCX's handler would print "Caught signal 11" and abort instead. */
static void check_safepoint(void) {
  guard_page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (guard_page == MAP_FAILED) {
    perror("mmap");
    exit(2);
  }
  const sig_atomic_t before = safepoint_faults;
  if (sigsetjmp(at_safepoint, 1) == 0) {
    (void)*(volatile char *)guard_page;
    CHECK(0, "reading the guard page did not fault");
  }
  CHECK(safepoint_faults == before + 1, "the host's SIGSEGV handler did not see the safepoint fault");
  munmap(guard_page, 4096);
  guard_page = NULL;
}

static const int host_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGHUP};
static const char *const host_signal_names[] = {"SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE", "SIGHUP"};
#define HOST_SIGNALS (sizeof host_signals / sizeof host_signals[0])
static char alternate_stack[1 << 16];

/* What a host such as Julia, the JVM or Rust's runtime does at start: its own handlers, on its own
 * alternate stack. */
static void install_host_handlers(void) {
  stack_t stack = {.ss_sp = alternate_stack, .ss_size = sizeof alternate_stack, .ss_flags = 0};
  if (sigaltstack(&stack, NULL) != 0) {
    perror("sigaltstack");
    exit(2);
  }
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = host_handler;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (size_t i = 0; i < HOST_SIGNALS; ++i)
    if (sigaction(host_signals[i], &action, NULL) != 0) {
      perror("sigaction");
      exit(2);
    }
}

static int is_host_handler(int signo) {
  struct sigaction now;
  if (sigaction(signo, NULL, &now) != 0) return 0;
  return (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == host_handler;
}

static void check_host_signals(size_t count) {
  for (size_t i = 0; i < count; ++i)
    CHECK(is_host_handler(host_signals[i]), "%s is no longer handled by the host's handler", host_signal_names[i]);
}

static void check_host_stack(void) {
  stack_t now;
  CHECK(sigaltstack(NULL, &now) == 0, "sigaltstack failed");
  CHECK(now.ss_sp == alternate_stack && now.ss_size == sizeof alternate_stack && !(now.ss_flags & SS_DISABLE),
        "the host's alternate signal stack was replaced (now %p, %zu bytes, flags %d)", now.ss_sp, now.ss_size,
        now.ss_flags);
}

/* Whether a library whose file name contains `name` is mapped into this process. */
static int is_mapped(const char *name) {
  FILE *maps = fopen("/proc/self/maps", "r");
  if (!maps) {
    perror("/proc/self/maps");
    exit(2);
  }
  char line[4096];
  int found = 0;
  while (!found && fgets(line, sizeof line, maps)) found = strstr(line, name) != NULL;
  fclose(maps);
  return found;
}

/* The environment as one string, to compare before and after. */
static char *environment_text(void) {
  size_t length = 1;
  for (char **entry = environ; *entry; ++entry) length += strlen(*entry) + 1;
  char *text = calloc(length, 1);
  for (char **entry = environ; *entry; ++entry) {
    strcat(text, *entry);
    strcat(text, "\n");
  }
  return text;
}

/* UCX's count of log handlers, read from the libucs already in the process (RTLD_NOLOAD). */
static int ucx_log_handlers(void) {
  void *ucs = dlopen("libucs.so.0", RTLD_NOW | RTLD_NOLOAD);
  if (!ucs) return -1;
  unsigned (*count)(void) = (unsigned (*)(void))dlsym(ucs, "ucs_log_num_handlers");
  const int handlers = count ? (int)count() : -1;
  dlclose(ucs); /* only drops the reference RTLD_NOLOAD took */
  return handlers;
}

static xffl_state_t *make_state(xffl_backend_t backend, int process_settings) {
  xffl_state_t *st = NULL;
  if (xffl_state_create(&st) != XFFL_OK) {
    fprintf(stderr, "FAIL: xffl_state_create: %s\n", xffl_last_error_message());
    exit(1);
  }
  if (process_settings && xffl_set_option(st, XFFL_OPT_UCX_PROCESS_SETTINGS, 1) != XFFL_OK) {
    fprintf(stderr, "FAIL: xffl_set_option(UCX_PROCESS_SETTINGS): %s\n", xffl_last_error_message());
    exit(1);
  }
  /* A world of 1: rank 0 may let the kernel choose the store's port (0), no one else needs it. */
  const xffl_status_t rc = xffl_set_global(st, backend, XFFL_DEVICE_CPU, "127.0.0.1", 0, 0, 1);
  if (rc != XFFL_OK) {
    fprintf(stderr, "FAIL: xffl_set_global: %s: %s\n", xffl_status_string(rc), xffl_last_error_message());
    exit(1);
  }
  return st;
}

/* The UCX backend works once loaded this way: an allreduce over the world of 1. */
static void check_allreduce(xffl_state_t *st) {
  xffl_group_t *world = NULL;
  float send[4] = {1, 2, 3, 4}, recv[4] = {0};
  CHECK(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world) == XFFL_OK, "no world group: %s", xffl_last_error_message());
  if (!world) return;
  CHECK(xffl_allreduce(world, send, recv, 4, XFFL_F32, XFFL_SUM, NULL) == XFFL_OK, "allreduce over UCX: %s",
        xffl_last_error_message());
  CHECK(memcmp(send, recv, sizeof send) == 0, "allreduce of one rank changed the data");
}

int main(int argc, char **argv) {
  const char *scenario = argc > 1 ? argv[1] : "";
  install_host_handlers();
  char *before = environment_text();

  if (strcmp(scenario, "none") == 0) {
    xffl_state_t *st = make_state(XFFL_BACKEND_NONE, 0);
    check_host_signals(HOST_SIGNALS);
    check_host_stack();
    check_safepoint();
    for (const char *const *name = (const char *const[]){"libucp.so", "libucs.so", "libucm.so", "libuct.so", NULL};
         *name; ++name)
      CHECK(!is_mapped(*name), "%s is mapped with backend NONE", *name);
    xffl_state_destroy(st);
  } else if (strcmp(scenario, "ucx") == 0) {
    CHECK(!is_mapped("libucs.so"), "libucs.so is mapped before any UCX backend was made");
    xffl_state_t *st = make_state(XFFL_BACKEND_UCX, 0);
    CHECK(is_mapped("libucp.so"), "set_global(UCX) succeeded but libucp.so is not mapped");
    /* UCX's module loader found its transports next to libucs, though xffl loaded it RTLD_LOCAL. */
    CHECK(is_mapped("ucx/libuct_cma.so"), "UCX did not load its CMA transport module");
    check_allreduce(st);
    check_host_signals(HOST_SIGNALS);
    check_host_stack();
    check_safepoint();
    CHECK(ucx_log_handlers() == 1, "UCX has %d log handlers, expected only its own default one", ucx_log_handlers());
    CHECK(getenv("UCX_TCP_PUT_ENABLE") == NULL, "xffl set UCX_TCP_PUT_ENABLE=%s", getenv("UCX_TCP_PUT_ENABLE"));
    xffl_state_destroy(st);
  } else if (strcmp(scenario, "ucx_signals") == 0) {
    CHECK(getenv("UCX_ERROR_SIGNALS") != NULL, "the test's environment must set UCX_ERROR_SIGNALS");
    xffl_state_t *st = make_state(XFFL_BACKEND_UCX, 0);
    struct sigaction now;
    Dl_info where;
    memset(&where, 0, sizeof where);
    CHECK(sigaction(SIGSEGV, NULL, &now) == 0 && (now.sa_flags & SA_SIGINFO) &&
              dladdr((void *)now.sa_sigaction, &where) && where.dli_fname && strstr(where.dli_fname, "libucs"),
          "with UCX_ERROR_SIGNALS set, SIGSEGV is not handled by UCX (handler in %s)",
          where.dli_fname ? where.dli_fname : "?");
    CHECK(is_host_handler(SIGHUP), "SIGHUP (not asked for with UCX_DEBUG_SIGNO) is no longer the host's");
    xffl_state_destroy(st);
  } else if (strcmp(scenario, "ucx_no_error_signals") == 0) {
    const char *asked = getenv("UCX_ERROR_SIGNALS");
    CHECK(asked && *asked == '\0', "the test's environment must set UCX_ERROR_SIGNALS to the empty string");
    xffl_state_t *st = make_state(XFFL_BACKEND_UCX, 0);
    CHECK(is_mapped("libucs.so"), "set_global(UCX) succeeded but libucs.so is not mapped");
    check_allreduce(st);
    check_host_signals(HOST_SIGNALS);
    /* Not checked: libucs still gives the loading thread its own alternate signal stack (148 KB), and
     * libxffl, seeing UCX_ERROR_SIGNALS set, leaves it there. A host's handler then runs on that stack,
     * which is valid memory; putting the host's back when the variable is empty is a library change. */
    check_safepoint();
    xffl_state_destroy(st);
  } else if (strcmp(scenario, "process_settings") == 0) {
    CHECK(getenv("UCX_TCP_PUT_ENABLE") == NULL, "the test's environment must leave UCX_TCP_PUT_ENABLE unset");
    xffl_state_t *st = make_state(XFFL_BACKEND_UCX, 1);
    const char *put = getenv("UCX_TCP_PUT_ENABLE");
    CHECK(put && strcmp(put, "n") == 0, "with the option, UCX_TCP_PUT_ENABLE is '%s', expected 'n'", put ? put : "(unset)");
    CHECK(ucx_log_handlers() == 2, "with the option, UCX has %d log handlers, expected its own and xffl's",
          ucx_log_handlers());
    check_allreduce(st);
    check_host_signals(HOST_SIGNALS);
    check_host_stack();
    check_safepoint();
    xffl_state_destroy(st);
    free(before);
    printf(failures ? "FAIL %s\n" : "PASS %s\n", scenario);
    return failures ? 1 : 0;
  } else {
    fprintf(stderr, "usage: %s none|ucx|ucx_signals|ucx_no_error_signals|process_settings\n", argv[0]);
    return 2;
  }

  char *after = environment_text();
  CHECK(strcmp(before, after) == 0, "xffl changed the environment:\n--- before\n%s--- after\n%s", before, after);
  free(before);
  free(after);
  printf(failures ? "FAIL %s\n" : "PASS %s\n", scenario);
  return failures ? 1 : 0;
}
