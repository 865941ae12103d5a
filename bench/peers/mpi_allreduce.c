/*
 * The peer of `xffl-bench -o allreduce -d f32`, with Open MPI: the same sizes, the same iteration
 * counts and the same timing (a barrier, then ITERS back-to-back out-of-place MPI_Allreduce calls; per
 * rank time per iteration, mean and max over ranks, and CPU time per call; busbw = algbw * 2(n-1)/n). Prints one JSON document
 * shaped like xffl-bench --json. Run: mpirun -np N mpi_allreduce -b 1M -e 64M -f 4 -n 20 -w 5
 */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>

static size_t parse_size(const char *text) {
  char *end = NULL;
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  size_t multiplier = 1;
  if (end && (*end == 'K' || *end == 'k')) multiplier = (size_t)1 << 10, ++end;
  else if (end && (*end == 'M' || *end == 'm')) multiplier = (size_t)1 << 20, ++end;
  else if (end && (*end == 'G' || *end == 'g')) multiplier = (size_t)1 << 30, ++end;
  if (errno || end == text || (*end && strcmp(end, "B") != 0)) {
    fprintf(stderr, "mpi_allreduce: bad size '%s'\n", text);
    exit(2);
  }
  return (size_t)value * multiplier;
}

/* CPU seconds (user + system, all threads) of this process so far. */
static double cpu_seconds(void) {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec * 1e-6 + (double)usage.ru_stime.tv_sec +
         (double)usage.ru_stime.tv_usec * 1e-6;
}

int main(int argc, char **argv) {
  size_t min_bytes = 32 << 20, max_bytes = 32 << 20;
  double factor = 2;
  int iters = 20, warmup = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-b")) min_bytes = parse_size(argv[i + 1]);
    else if (!strcmp(argv[i], "-e")) max_bytes = parse_size(argv[i + 1]);
    else if (!strcmp(argv[i], "-f")) factor = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "-n")) iters = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-w")) warmup = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "usage: mpi_allreduce [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP]\n");
      return 2;
    }
  }
  if (factor <= 1 || iters < 1 || warmup < 0) {
    fprintf(stderr, "mpi_allreduce: need -f > 1, -n >= 1, -w >= 0\n");
    return 2;
  }

  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  float *send = NULL, *recv = NULL;
  if (posix_memalign((void **)&send, 64, max_bytes + 64) || posix_memalign((void **)&recv, 64, max_bytes + 64)) {
    fprintf(stderr, "mpi_allreduce: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (size_t i = 0; i < max_bytes / sizeof(float); ++i) send[i] = (float)((rank * 7 + i * 3) % 4);
  memset(recv, 0, max_bytes);

  const double busbw_factor = 2.0 * (n - 1) / n;
  if (rank == 0)
    printf("{\"tool\": \"mpi_allreduce\", \"op\": \"allreduce\", \"dtype\": \"f32\", \"redop\": \"sum\", "
           "\"world_size\": %d, \"busbw_factor\": %.6g, \"iters\": %d, \"warmup\": %d, \"results\": [",
           n, busbw_factor, iters, warmup);
  int first = 1;
  for (size_t bytes = min_bytes; bytes <= max_bytes;) {
    const int count = (int)(bytes / sizeof(float));
    for (int k = 0; k < warmup; ++k) MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    const double cpu_start = cpu_seconds();
    const double start = MPI_Wtime();
    for (int k = 0; k < iters; ++k) MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    const double seconds = (MPI_Wtime() - start) / iters;
    const double cpu = (cpu_seconds() - cpu_start) / iters;
    double sum = 0, slowest = 0, cpu_sum = 0;
    MPI_Allreduce(&cpu, &cpu_sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&seconds, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const size_t used = (size_t)count * sizeof(float);
    const double time_us = sum / n * 1e6;
    const double algbw = (double)used / time_us / 1e3;
    if (rank == 0) {
      printf("%s\n  {\"size\": %zu, \"count\": %d, \"time_us\": %.3f, \"time_max_us\": %.3f, \"cpu_us\": %.3f, \"algbw_gbps\": %.6g, "
             "\"busbw_gbps\": %.6g}",
             first ? "" : ",", used, count, time_us, slowest * 1e6, cpu_sum / n * 1e6, algbw, algbw * busbw_factor);
      fflush(stdout);
    }
    first = 0;
    size_t next = (size_t)((double)bytes * factor);
    bytes = next > bytes ? next : bytes + 1;
  }
  if (rank == 0) printf("\n]}\n");
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
