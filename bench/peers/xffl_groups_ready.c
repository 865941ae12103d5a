/*
 * Time to usable groups with xffl: from main() to the end of one barrier on every group kind the
 * launcher's layout has (xffl_state_from_env, e.g. xffl-run --federated 2,6 --hsdp 2). Prints one JSON
 * line per rank with CLOCK_REALTIME stamps in ns, so that compare.py can also count from a stamp it
 * took before launching: {"rank", "main_ns", "init_ns", "state_ns" (state_from_env returned), "ready_ns",
 * "kinds", "barrier_done_ns" (one per kind)}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <xffl.h>

static long long realtime_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void check(xffl_status_t rc, const char *what) {
  if (rc != XFFL_OK) {
    fprintf(stderr, "xffl_groups_ready: %s: %s: %s\n", what, xffl_status_string(rc), xffl_last_error_message());
    exit(1);
  }
}

int main(void) {
  const long long main_ns = realtime_ns();
  static const struct {
    xffl_group_kind_t kind;
    const char *name;
  } kinds[] = {{XFFL_GROUP_WORLD, "WORLD"},           {XFFL_GROUP_FSDP, "FSDP"},
               {XFFL_GROUP_HSDP_REPLICA, "HSDP_REPLICA"}, {XFFL_GROUP_HSDP_SHARD, "HSDP_SHARD"},
               {XFFL_GROUP_FEDERATED, "FEDERATED"},   {XFFL_GROUP_REPLICA, "REPLICA"},
               {XFFL_GROUP_FEDERATION, "FEDERATION"}};
  const long long init_ns = realtime_ns();
  xffl_state_t *st = NULL;
  check(xffl_state_from_env(&st), "xffl_state_from_env");
  const long long state_ns = realtime_ns();
  char used[256] = "", stamps[512] = "";
  size_t used_len = 0, stamps_len = 0;
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
    xffl_group_t *group = NULL;
    xffl_status_t rc = xffl_get_group(st, kinds[k].kind, 0, &group);
    if (rc == XFFL_ENOTSET) continue;  /* not part of this layout */
    check(rc, kinds[k].name);
    check(xffl_barrier(group), kinds[k].name);
    used_len += (size_t)snprintf(used + used_len, sizeof used - used_len, "%s\"%s\"", used_len ? ", " : "",
                                 kinds[k].name);
    stamps_len += (size_t)snprintf(stamps + stamps_len, sizeof stamps - stamps_len, "%s%lld", stamps_len ? ", " : "",
                                   realtime_ns());
  }
  const long long ready_ns = realtime_ns();
  int rank = -1;
  check(xffl_get_int(st, XFFL_ATTR_RANK, &rank), "rank");
  printf("{\"rank\": %d, \"main_ns\": %lld, \"init_ns\": %lld, \"state_ns\": %lld, \"ready_ns\": %lld, "
         "\"kinds\": [%s], \"barrier_done_ns\": [%s]}\n",
         rank, main_ns, init_ns, state_ns, ready_ns, used, stamps);
  fflush(stdout);
  xffl_state_destroy(st);
  return 0;
}
