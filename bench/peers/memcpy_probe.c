/*
 * This machine's limit for moving bytes on one core: single-thread memcpy of a 64 MiB buffer (larger
 * than any cache here), best and mean of ITERS copies after WARMUP. Bandwidth counts the bytes copied
 * (each is read once and written once), the unit busbw uses. Also the cost of a page fault: a fresh
 * block of SIZE_MIB from malloc (glibc maps a block this large and unmaps it on free) touched once per
 * page, the median of 5, in microseconds per page. On this VM it moves between about 1 and 40 us over a
 * day, and a library that takes such a block on every call (Open MPI's allreduce from 64 MiB) moves
 * with it. Prints one JSON object.
 * Run: memcpy_probe [-s SIZE_MIB] [-n ITERS] [-w WARMUP]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Microseconds per page to fault in a fresh malloc'd block of `bytes`, median of 5; -1 without memory. */
static double fault_us_per_page(size_t bytes) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  double each[5];
  for (int k = 0; k < 5; ++k) {
    volatile unsigned char *block = malloc(bytes);
    if (!block) return -1;
    const double start = now();
    for (size_t i = 0; i < bytes; i += page) block[i] = 1;
    each[k] = (now() - start) * 1e6 / (double)(bytes / page);
    free((void *)block);
  }
  qsort(each, 5, sizeof each[0], by_value);
  return each[2];
}

int main(int argc, char **argv) {
  size_t mib = 64;
  int iters = 20, warmup = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-s")) mib = (size_t)atol(argv[i + 1]);
    else if (!strcmp(argv[i], "-n")) iters = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-w")) warmup = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "usage: memcpy_probe [-s SIZE_MIB] [-n ITERS] [-w WARMUP]\n");
      return 2;
    }
  }
  if (mib < 1 || iters < 1 || warmup < 0) {
    fprintf(stderr, "memcpy_probe: need -s >= 1, -n >= 1, -w >= 0\n");
    return 2;
  }
  const size_t bytes = mib << 20;
  unsigned char *from = NULL, *to = NULL;
  if (posix_memalign((void **)&from, 64, bytes) || posix_memalign((void **)&to, 64, bytes)) {
    fprintf(stderr, "memcpy_probe: out of memory\n");
    return 1;
  }
  memset(from, 1, bytes);
  memset(to, 2, bytes);  // both touched: page faults stay out of the timing
  for (int k = 0; k < warmup; ++k) memcpy(to, from, bytes);
  double best = 1e30, total = 0;
  for (int k = 0; k < iters; ++k) {
    from[k % bytes] = (unsigned char)k;  // the copy must really happen each time
    const double start = now();
    memcpy(to, from, bytes);
    const double seconds = now() - start;
    total += seconds;
    if (seconds < best) best = seconds;
  }
  volatile unsigned char sink = to[(size_t)(iters - 1) % bytes];
  (void)sink;
  free(from);
  free(to);
  printf("{\"tool\": \"memcpy_probe\", \"size\": %zu, \"iters\": %d, \"best_gbps\": %.6g, \"mean_gbps\": %.6g, "
         "\"fault_us_per_page\": %.4g}\n",
         bytes, iters, (double)bytes / best / 1e9, (double)bytes / (total / iters) / 1e9, fault_us_per_page(bytes));
  return 0;
}
