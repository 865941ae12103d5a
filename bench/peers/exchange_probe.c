/*
 * Where this machine's two cores stand for moving bytes between them: two threads, pinned to the first
 * two CPUs this process may run on, take turns through shared memory as the ranks of a collective on
 * one host do. In each exchange each thread copies SIZE_KIB of its own into its shared buffer (once the
 * other has read what it put there last), raises its flag, waits for the other's flag and copies the
 * other's shared buffer out: every byte it reads there was just written on the other core, every line
 * it writes there was last read on the other core. Reported: the median over ITERS exchanges (after
 * WARMUP) of the time one exchange takes, and the bytes read across per thread per second (GB/s, 1e9
 * B/s). With 1 MiB on AMD, glibc's memcpy no longer uses `rep movsb` (it stops at the L2 size) and its
 * plain stores fetch each line back from the other core first; that write, not the read across, takes
 * most of an exchange in the slow state (bench/peers/README.md, "The result through the output").
 *
 * Why: on this VM the two virtual CPUs sometimes share a last-level cache and sometimes do not, and
 * the placement changes within a minute (bench/peers/README.md, "Two states of the machine"). With
 * 1 MiB each way, more than a core's L2 (the default here), a byte that crosses takes about five times
 * as long in one state as in the other, and collectives on one host follow it; the memcpy probe, on
 * one core, does not see it.
 *
 * Prints one JSON object; with fewer than two CPUs to run on, "exchange_gbps" is null. A thread that
 * waits more than 10 s for the other gives up with an error naming what it awaited.
 * Run: exchange_probe [-s SIZE_KIB] [-n ITERS] [-w WARMUP]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kThreads = 2 };
static const double kWaitLimitS = 10.0;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

struct Shared {
  size_t bytes;
  int exchanges;                      /* warmup + timed */
  int cpu[kThreads];                  /* where each thread runs */
  unsigned char *shared[kThreads];    /* thread t writes shared[t], the other reads it */
  unsigned char *own[kThreads];       /* thread t's private buffer */
  /* [t][0]: exchanges thread t has published, [t][8]: exchanges it has read out; a line each */
  _Alignas(64) atomic_int flag[kThreads][16];
  double *seconds;                    /* thread 0's time per exchange */
  atomic_int failed;
};

struct Thread {
  struct Shared *shared;
  int me;
};

/* Until the other thread's flag [other][slot] reaches k (what: what it does with exchange k, for the
 * message); 0 when it gave up (10 s since `start`) or the other failed. */
static int await_other(struct Shared *s, int me, int slot, int k, double start, const char *what) {
  const int other = 1 - me;
  while (atomic_load_explicit(&s->flag[other][slot], memory_order_acquire) < k) {
    if (atomic_load(&s->failed)) return 0;
    if (now() - start > kWaitLimitS) {
      fprintf(stderr, "exchange_probe: thread %d (CPU %d) waited %.0f s for thread %d (CPU %d) to %s exchange %d\n",
              me, s->cpu[me], kWaitLimitS, other, s->cpu[other], what, k);
      atomic_store(&s->failed, 1);
      return 0;
    }
  }
  return 1;
}

static void *exchange(void *arg) {
  const struct Thread *self = arg;
  struct Shared *s = self->shared;
  const int me = self->me, other = 1 - me;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(s->cpu[me], &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
    fprintf(stderr, "exchange_probe: thread %d could not be pinned to CPU %d\n", me, s->cpu[me]);
    atomic_store(&s->failed, 1);
    return NULL;
  }
  for (int k = 1; k <= s->exchanges; ++k) {
    const double start = now();
    s->own[me][(size_t)k % s->bytes] = (unsigned char)k;  /* the copy must really happen each time */
    if (!await_other(s, me, 8, k - 1, start, "read out")) return NULL;
    memcpy(s->shared[me], s->own[me], s->bytes);
    atomic_store_explicit(&s->flag[me][0], k, memory_order_release);
    if (!await_other(s, me, 0, k, start, "publish")) return NULL;
    memcpy(s->own[me], s->shared[other], s->bytes);
    atomic_store_explicit(&s->flag[me][8], k, memory_order_release);
    if (me == 0) s->seconds[k - 1] = now() - start;
  }
  return NULL;
}

/* The first two CPUs of this process's affinity mask; 0 when it has fewer. */
static int two_cpus(int cpu[kThreads]) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 0;
  int found = 0;
  for (int c = 0; c < CPU_SETSIZE && found < kThreads; ++c)
    if (CPU_ISSET(c, &allowed)) cpu[found++] = c;
  return found == kThreads;
}

int main(int argc, char **argv) {
  size_t kib = 1024;
  int iters = 200, warmup = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-s")) kib = (size_t)atol(argv[i + 1]);
    else if (!strcmp(argv[i], "-n")) iters = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-w")) warmup = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "usage: exchange_probe [-s SIZE_KIB] [-n ITERS] [-w WARMUP]\n");
      return 2;
    }
  }
  if (argc % 2 == 0) {
    fprintf(stderr, "usage: exchange_probe [-s SIZE_KIB] [-n ITERS] [-w WARMUP]\n");
    return 2;
  }
  if (kib < 1 || iters < 1 || warmup < 0) {
    fprintf(stderr, "exchange_probe: need -s >= 1, -n >= 1, -w >= 0\n");
    return 2;
  }
  struct Shared s;
  memset(&s, 0, sizeof s);
  s.bytes = kib << 10;
  s.exchanges = warmup + iters;
  if (!two_cpus(s.cpu)) {
    printf("{\"tool\": \"exchange_probe\", \"size\": %zu, \"iters\": %d, \"cpus\": null, \"exchange_us\": null, "
           "\"exchange_gbps\": null}\n", s.bytes, iters);
    return 0;
  }
  s.seconds = calloc((size_t)s.exchanges, sizeof *s.seconds);
  if (!s.seconds) {
    fprintf(stderr, "exchange_probe: out of memory\n");
    return 1;
  }
  for (int t = 0; t < kThreads; ++t) {
    if (posix_memalign((void **)&s.shared[t], 4096, s.bytes) || posix_memalign((void **)&s.own[t], 4096, s.bytes)) {
      fprintf(stderr, "exchange_probe: out of memory\n");
      return 1;
    }
    memset(s.shared[t], 0, s.bytes);  /* touched: page faults stay out of the timing */
    memset(s.own[t], 1, s.bytes);
    atomic_init(&s.flag[t][0], 0);
    atomic_init(&s.flag[t][8], 0);
  }
  atomic_init(&s.failed, 0);
  pthread_t threads[kThreads];
  struct Thread args[kThreads];
  int started = 0;
  for (int t = 0; t < kThreads; ++t) {
    args[t] = (struct Thread){&s, t};
    if (pthread_create(&threads[t], NULL, exchange, &args[t]) != 0) {
      fprintf(stderr, "exchange_probe: could not start thread %d\n", t);
      atomic_store(&s.failed, 1);
      break;
    }
    ++started;
  }
  for (int t = 0; t < started; ++t) pthread_join(threads[t], NULL);
  if (atomic_load(&s.failed)) return 1;
  qsort(s.seconds + warmup, (size_t)iters, sizeof *s.seconds, by_value);
  const double median = s.seconds[warmup + iters / 2];
  printf("{\"tool\": \"exchange_probe\", \"size\": %zu, \"iters\": %d, \"cpus\": [%d, %d], \"exchange_us\": %.4g, "
         "\"exchange_gbps\": %.4g}\n",
         s.bytes, iters, s.cpu[0], s.cpu[1], median * 1e6, (double)s.bytes / median / 1e9);
  for (int t = 0; t < kThreads; ++t) {
    free(s.shared[t]);
    free(s.own[t]);
  }
  free(s.seconds);
  return 0;
}
