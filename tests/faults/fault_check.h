/*
 * Shared by the fault programs (each runs under xffl-run, one process per rank): who am I, the
 * per-rank environment a scenario needs, and checks of what a failing call returned.
 *
 * A rank records every check that does not hold ("rank R: FAIL: ...") and ends with
 * fault_finish(), which prints "rank R: PASS <scenario>" and returns 0 only when all checks held.
 * Every rank prints what it saw ("rank R: saw <call> -> <status>: <message>"), so a failing run shows
 * the library's own words.
 */
#ifndef XFFL_TESTS_FAULTS_FAULT_CHECK_H
#define XFFL_TESTS_FAULTS_FAULT_CHECK_H

#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xffl.h>

static int fault_rank_ = -1;
static int fault_failures_ = 0;

/* A launcher variable as an int; exits 2 (not a scenario failure: the harness is wrong) if absent. */
static inline int fault_env_int(const char *name) {
  const char *text = getenv(name);
  if (!text || !*text) {
    fprintf(stderr, "fault test: %s is not set; run me under xffl-run\n", name);
    exit(2);
  }
  return atoi(text);
}

static inline int fault_rank(void) {
  if (fault_rank_ < 0) fault_rank_ = fault_env_int("RANK");
  return fault_rank_;
}

static inline int fault_world(void) { return fault_env_int("WORLD_SIZE"); }

/* Milliseconds on a monotonic clock: printed next to what a rank saw, never compared to a bound. */
static inline double fault_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* XFFL_TIMEOUT (seconds, as xffl-run --timeout passes it) in milliseconds. */
static inline double fault_timeout_ms(void) {
  const char *text = getenv("XFFL_TIMEOUT");
  if (!text || !*text) {
    fprintf(stderr, "fault test: XFFL_TIMEOUT is not set; give xffl-run --timeout\n");
    exit(2);
  }
  return atof(text) * 1e3;
}

static inline void fault_check(int holds, const char *format, ...) {
  if (holds) return;
  va_list args;
  va_start(args, format);
  fprintf(stderr, "rank %d: FAIL: ", fault_rank());
  vfprintf(stderr, format, args);
  fprintf(stderr, "\n");
  va_end(args);
  ++fault_failures_;
}

static inline int fault_contains(const char *text, const char *needle) { return text && strstr(text, needle) != NULL; }

/* Whether a message names `rank`: as "rank 3", or in a list "ranks 1, 3 and 5" (the store's
 * wording); "rank 30" does not name rank 3. */
static inline int fault_names_rank(const char *text, int rank) {
  for (const char *at = text ? strstr(text, "rank") : NULL; at; at = strstr(at + 1, "rank")) {
    const char *p = at + 4;
    if (*p == 's') ++p;
    if (*p != ' ') continue;
    ++p;
    for (;;) { /* a number, then ", " or " and " before the next one */
      if (*p < '0' || *p > '9') break;
      char *end = NULL;
      const long value = strtol(p, &end, 10);
      if (value == rank) return 1;
      p = end;
      if (strncmp(p, ", ", 2) == 0)
        p += 2;
      else if (strncmp(p, " and ", 5) == 0)
        p += 5;
      else
        break;
    }
  }
  return 0;
}

/* The message of the last failed call, copied (the next call may replace it). */
typedef struct {
  xffl_status_t status;
  char message[2048];
  double elapsed_ms;
} fault_seen_t;

static inline fault_seen_t fault_record(const char *call, xffl_status_t status, double started_ms) {
  fault_seen_t seen;
  seen.status = status;
  seen.elapsed_ms = fault_now_ms() - started_ms;
  snprintf(seen.message, sizeof seen.message, "%s", status == XFFL_OK ? "" : xffl_last_error_message());
  printf("rank %d: saw %s -> %s after %.0f ms: %s\n", fault_rank(), call, xffl_status_string(status),
         seen.elapsed_ms, seen.message);
  fflush(stdout);
  return seen;
}

/* Failure detection on one host is by timeout (shared memory cannot report a dead peer) or by UCX
 * (EPEER): both are the documented outcomes of a dead peer. */
static inline void fault_expect_peer_loss(const fault_seen_t *seen, const char *call, int dead_rank) {
  fault_check(seen->status == XFFL_ETIMEOUT || seen->status == XFFL_EPEER,
              "%s returned %s, expected XFFL_ETIMEOUT or XFFL_EPEER", call, xffl_status_string(seen->status));
  fault_check(fault_names_rank(seen->message, dead_rank), "%s: the message does not name rank %d (the one that left): %s",
              call, dead_rank, seen->message);
  fault_check(fault_names_rank(seen->message, fault_rank()), "%s: the message does not name this rank (%d): %s", call,
              fault_rank(), seen->message);
}

/* Ends the rank: 0 when every check held. */
static inline int fault_finish(const char *scenario) {
  if (fault_failures_ == 0) {
    printf("rank %d: PASS %s\n", fault_rank(), scenario);
    fflush(stdout);
    return 0;
  }
  fprintf(stderr, "rank %d: %d check(s) failed in %s\n", fault_rank(), fault_failures_, scenario);
  return 1;
}

/* The pid of the sibling process (same parent: xffl-run) whose environment says RANK=rank, or 0 when
 * there is none (any more). */
static inline pid_t fault_sibling_of_rank(int rank) {
  char wanted[32];
  const int wanted_length = snprintf(wanted, sizeof wanted, "RANK=%d", rank) + 1; /* with its NUL */
  pid_t found = 0;
  DIR *proc = opendir("/proc");
  if (!proc) return 0;
  for (struct dirent *entry; !found && (entry = readdir(proc)) != NULL;) {
    const pid_t pid = (pid_t)atoi(entry->d_name);
    if (pid <= 0 || pid == getpid()) continue;
    char path[64], stat_text[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *stat_file = fopen(path, "r");
    if (!stat_file) continue;
    const size_t got = fread(stat_text, 1, sizeof stat_text - 1, stat_file);
    fclose(stat_file);
    stat_text[got] = 0;
    /* "pid (comm) state ppid ...": comm may hold spaces, so read after the last ')'. */
    const char *after = strrchr(stat_text, ')');
    char state = 0;
    int parent = 0;
    if (!after || sscanf(after + 1, " %c %d", &state, &parent) != 2 || parent != (int)getppid()) continue;
    if (state == 'Z') continue; /* exited already: as good as gone */
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    FILE *environ_file = fopen(path, "r");
    if (!environ_file) continue;
    static char environment[1 << 16];
    const size_t length = fread(environment, 1, sizeof environment, environ_file);
    fclose(environ_file);
    for (size_t at = 0; at < length; at += strnlen(environment + at, length - at) + 1)
      if (length - at >= (size_t)wanted_length && memcmp(environment + at, wanted, (size_t)wanted_length) == 0) {
        found = pid;
        break;
      }
  }
  closedir(proc);
  return found;
}

/* Waits (at most bound_ms) until the process of `rank` has exited; 1 once it has. */
static inline int fault_wait_until_rank_gone(int rank, double bound_ms) {
  const double started = fault_now_ms();
  while (fault_sibling_of_rank(rank) != 0) {
    if (fault_now_ms() - started > bound_ms) return 0;
    usleep(10 * 1000);
  }
  return 1;
}

/* Ranks meet here outside xffl (which is what is being broken): `count` ranks calling with the same
 * tag wait for each other, at most bound_ms; 1 when all arrived. The survivors meet after recording
 * what they saw and before destroying their states, so that what one survivor sees is caused by the
 * rank that left, not by another survivor already tearing down. The meeting point is a counter in
 * POSIX shared memory named after the launcher's pid, the job's port and the tag; a zero-filled new
 * object is a valid counter, so no one has to initialise it. */
static inline int fault_meet(const char *tag, int count, double bound_ms) {
  char name[128];
  snprintf(name, sizeof name, "/xffl-faults-%d-%d-%s", (int)getppid(), fault_env_int("MASTER_PORT"), tag);
  const int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
  if (fd < 0 || ftruncate(fd, sizeof(atomic_int)) != 0) {
    if (fd >= 0) close(fd);
    return 0;
  }
  atomic_int *arrived = mmap(NULL, sizeof(atomic_int), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (arrived == MAP_FAILED) return 0;
  atomic_fetch_add(arrived, 1);
  const double started = fault_now_ms();
  int all = 0;
  while (!(all = atomic_load(arrived) >= count) && fault_now_ms() - started < bound_ms) usleep(5 * 1000);
  munmap(arrived, sizeof(atomic_int));
  shm_unlink(name); /* everyone opened it before the count could be complete; ENOENT is fine */
  return all;
}

/* A rank that leaves the job without a trace xffl-run would call a failure: exit status 0, no atexit
 * handlers, no destructors, sockets closed by the kernel. */
static inline void fault_vanish(const char *when) {
  printf("rank %d: leaving %s\n", fault_rank(), when);
  fflush(stdout);
  _exit(0);
}

#endif
