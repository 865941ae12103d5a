/*
 * Run under xffl-run on 2 ranks: an allreduce and a broadcast of a buffer larger than 2^31 bytes
 * (counts are size_t end to end: no 32-bit length may truncate anywhere). u8 SUM keeps the check exact.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <xffl.h>

#define CHECK(call)                                                                                  \
  do {                                                                                               \
    xffl_status_t check_rc_ = (call);                                                                \
    if (check_rc_ != XFFL_OK) {                                                                      \
      fprintf(stderr, "%s failed: %s: %s\n", #call, xffl_status_string(check_rc_), xffl_last_error_message()); \
      return 1;                                                                                      \
    }                                                                                                \
  } while (0)

int main(void) {
  const size_t count = ((size_t)1 << 31) + 4099; /* just past 2^31 bytes, odd tail */
  xffl_state_t *st = NULL;
  xffl_group_t *world = NULL;
  int rank = 0, size = 0;
  CHECK(xffl_state_from_env(&st));
  CHECK(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world));
  CHECK(xffl_group_rank(world, &rank));
  CHECK(xffl_group_size(world, &size));
  uint8_t *buf = malloc(count);
  if (!buf) {
    fprintf(stderr, "rank %d: cannot allocate %zu bytes\n", rank, count);
    return 1;
  }
  for (size_t i = 0; i < count; ++i) buf[i] = (uint8_t)((i >> 20) + (size_t)rank);
  CHECK(xffl_allreduce(world, buf, buf, count, XFFL_U8, XFFL_SUM, NULL));
  for (size_t i = 0; i < count; i += 4093) {
    uint8_t want = (uint8_t)(size * (int)(uint8_t)(i >> 20) + size * (size - 1) / 2);
    if (buf[i] != want) {
      fprintf(stderr, "rank %d: allreduce index %zu is %u, expected %u\n", rank, i, buf[i], want);
      return 1;
    }
  }
  if (buf[count - 1] != (uint8_t)(size * (int)(uint8_t)((count - 1) >> 20) + size * (size - 1) / 2)) {
    fprintf(stderr, "rank %d: allreduce last element wrong\n", rank);
    return 1;
  }
  if (rank == 0)
    for (size_t i = 0; i < count; ++i) buf[i] = (uint8_t)(i * 7);
  CHECK(xffl_broadcast(world, buf, count, XFFL_U8, 0, NULL));
  for (size_t i = 0; i < count; i += 4093)
    if (buf[i] != (uint8_t)(i * 7)) {
      fprintf(stderr, "rank %d: broadcast index %zu wrong\n", rank, i);
      return 1;
    }
  if (buf[count - 1] != (uint8_t)((count - 1) * 7)) return 1;
  printf("rank %d: %zu bytes allreduced and broadcast\n", rank, count);
  free(buf);
  xffl_state_destroy(st);
  return 0;
}
