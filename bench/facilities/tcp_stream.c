/*
 * A plain TCP stream through the simulated link, to measure the rate the link really gives one or a
 * few TCP flows (the denominator of the averaging benchmark's lower bound).
 *
 *   facilities-tcp-stream recv ADDR PORT STREAMS   accept STREAMS connections, read each to EOF; print
 *                                                  "STREAM bytes=B seconds=S rate_bps=R" (first accept
 *                                                  to last EOF)
 *   facilities-tcp-stream send ADDR PORT BYTES     connect (retrying for 10 s) and write BYTES
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_STREAMS 64

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static struct sockaddr_in endpoint(const char *addr, const char *port) {
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((unsigned short)atoi(port));
  if (inet_pton(AF_INET, addr, &a.sin_addr) != 1) {
    fprintf(stderr, "tcp-stream: bad address %s\n", addr);
    exit(2);
  }
  return a;
}

static int receive(const char *addr, const char *port, int streams) {
  struct sockaddr_in a = endpoint(addr, port);
  int listener = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(listener, (struct sockaddr *)&a, sizeof a) != 0 || listen(listener, MAX_STREAMS) != 0) {
    perror("tcp-stream: bind/listen");
    return 1;
  }
  printf("LISTENING\n");
  fflush(stdout);
  struct pollfd fds[MAX_STREAMS];
  double start = 0;
  for (int i = 0; i < streams; ++i) {
    fds[i].fd = accept(listener, NULL, NULL);
    fds[i].events = POLLIN;
    if (i == 0) start = now_s();
  }
  static char buf[1 << 20];
  long long total = 0;
  int open_streams = streams;
  while (open_streams > 0) {
    if (poll(fds, (nfds_t)streams, 10000) <= 0) {
      fprintf(stderr, "tcp-stream: no data for 10 s\n");
      return 1;
    }
    for (int i = 0; i < streams; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        total += n;
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_streams;
      }
    }
  }
  const double seconds = now_s() - start;
  printf("STREAM bytes=%lld seconds=%.4f rate_bps=%.0f\n", total, seconds, (double)total * 8 / seconds);
  return 0;
}

static int send_stream(const char *addr, const char *port, long long bytes) {
  struct sockaddr_in a = endpoint(addr, port);
  int fd = -1;
  const struct timespec pause = {0, 20 * 1000 * 1000};
  for (double deadline = now_s() + 10; now_s() < deadline; nanosleep(&pause, NULL)) {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) break;
    close(fd);
    fd = -1;
  }
  if (fd < 0) {
    perror("tcp-stream: connect");
    return 1;
  }
  static char buf[1 << 20];
  memset(buf, 0x5a, sizeof buf);
  while (bytes > 0) {
    ssize_t n = write(fd, buf, bytes < (long long)sizeof buf ? (size_t)bytes : sizeof buf);
    if (n <= 0) {
      perror("tcp-stream: write");
      return 1;
    }
    bytes -= n;
  }
  close(fd);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 5 && strcmp(argv[1], "recv") == 0) {
    int streams = atoi(argv[4]);
    if (streams < 1 || streams > MAX_STREAMS) return 2;
    return receive(argv[2], argv[3], streams);
  }
  if (argc == 5 && strcmp(argv[1], "send") == 0) return send_stream(argv[2], argv[3], atoll(argv[4]));
  fprintf(stderr, "usage: facilities-tcp-stream recv ADDR PORT STREAMS | send ADDR PORT BYTES\n");
  return 2;
}
