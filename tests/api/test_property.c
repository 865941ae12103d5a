/* Property test of the topology contract (DESIGN.md section 3) over thousands of random valid
 * configurations: plain FSDP, plain HSDP, symmetric federations with and without HSDP, and asymmetric
 * federations of up to 16 unequal groups, in worlds up to 4096. Every rank of every configuration is planned
 * through the C API and checked against the formulas of DESIGN.md 3.1-3.2 and against the others:
 *   - all members of a group compute the same member list, and the groups of one kind partition the world;
 *   - mesh rows are the HSDP_SHARD groups and mesh columns the HSDP_REPLICA groups;
 *   - exactly one sender per shard per federated group, and receive_from points at it.
 * Deterministic: the seed is fixed (XFFL_PROPERTY_SEED overrides it) and printed with every failure. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_support.h"
#include "xffl_test.h"

#define MAX_WORLD 4096
#define MAX_GROUPS 16

/* ---------------------------------------------------------------- deterministic randomness */

static uint64_t seed;

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static int uniform(uint64_t *s, int lo, int hi) { /* inclusive */
  return lo + (int)(splitmix64(s) % (uint64_t)(hi - lo + 1));
}

/* ---------------------------------------------------------------- configurations and the model */

typedef enum { CFG_FSDP, CFG_HSDP, CFG_SYM, CFG_SYM_HSDP, CFG_ASYM, CFG_KINDS } cfg_kind;
static const char *const kind_names[] = {"fsdp", "hsdp", "symmetric", "symmetric+hsdp", "asymmetric+hsdp"};

typedef struct {
  cfg_kind kind;
  int world;
  int hsdp;   /* S; 0 without HSDP */
  int groups; /* G; 0 without federation */
  int sizes[MAX_GROUPS];
  int offsets[MAX_GROUPS];
  int single;    /* pass the federated size as one value (expands to W/F groups) */
  int node_size; /* 0: no set_node */
  int streams;   /* 0: no set_exec_device */
} config;

static char config_text[512];
static int config_index;

static const char *describe_config(const config *c) {
  int n = snprintf(config_text, sizeof config_text, "%s W=%d S=%d", kind_names[c->kind], c->world, c->hsdp);
  if (c->groups) {
    n += snprintf(config_text + n, sizeof config_text - (size_t)n, " F=(");
    for (int g = 0; g < c->groups && n < 480; ++g)
      n += snprintf(config_text + n, sizeof config_text - (size_t)n, g ? ",%d" : "%d", c->sizes[g]);
    n += snprintf(config_text + n, sizeof config_text - (size_t)n, ")%s", c->single ? " passed as one size" : "");
  }
  snprintf(config_text + n, sizeof config_text - (size_t)n, " L=%d K=%d", c->node_size, c->streams);
  return config_text;
}

static void prop_fail(int rank, const char *fmt, ...) {
  char what[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(what, sizeof what, fmt, args);
  va_end(args);
  fail_msg("seed %llu, configuration %d (%s), rank %d: %s", (unsigned long long)seed, config_index, config_text, rank,
           what);
}

static int pick_divisor(uint64_t *s, int n) {
  int divisors[64], count = 0;
  for (int d = 1; d <= n && count < 64; ++d)
    if (n % d == 0) divisors[count++] = d;
  return divisors[uniform(s, 0, count - 1)];
}

/* A random valid configuration of the given kind with W <= max_world. */
static config make_config(uint64_t *s, cfg_kind kind, int max_world) {
  config c;
  memset(&c, 0, sizeof c);
  c.kind = kind;
  switch (kind) {
    case CFG_FSDP: c.world = uniform(s, 1, max_world); break;
    case CFG_HSDP: {
      c.hsdp = uniform(s, 1, max_world < 64 ? max_world : 64);
      c.world = c.hsdp * uniform(s, 1, max_world / c.hsdp);
      break;
    }
    case CFG_SYM:
    case CFG_SYM_HSDP: {
      c.groups = uniform(s, 1, max_world < MAX_GROUPS ? max_world : MAX_GROUPS);
      c.hsdp = kind == CFG_SYM ? 0 : uniform(s, 1, max_world / c.groups < 32 ? max_world / c.groups : 32);
      const int unit = c.hsdp ? c.hsdp : 1;
      const int size = unit * uniform(s, 1, max_world / c.groups / unit);
      for (int g = 0; g < c.groups; ++g) c.sizes[g] = size;
      c.world = size * c.groups;
      c.single = uniform(s, 0, 1);
      break;
    }
    default: { /* unequal sizes, all multiples of a random hsdp */
      c.groups = uniform(s, 2, max_world / 2 < MAX_GROUPS ? max_world / 2 : MAX_GROUPS);
      const int max_hsdp = max_world / (c.groups + 1);
      c.hsdp = uniform(s, 1, max_hsdp < 16 ? max_hsdp : 16);
      const int max_replicas = max_world / (c.hsdp * c.groups);
      do {
        c.world = 0;
        for (int g = 0; g < c.groups; ++g) {
          c.sizes[g] = c.hsdp * uniform(s, 1, max_replicas > 1 ? max_replicas : 2);
          c.world += c.sizes[g];
        }
      } while (c.world > max_world || c.sizes[0] == c.sizes[1]); /* at least two sizes differ */
      break;
    }
  }
  for (int g = 1; g < c.groups; ++g) c.offsets[g] = c.offsets[g - 1] + c.sizes[g - 1];
  if (uniform(s, 0, 1)) c.node_size = pick_divisor(s, c.world);
  if (c.world <= 256 && uniform(s, 0, 2) == 0) c.streams = uniform(s, 1, 3);
  return c;
}

static int symmetric(const config *c) {
  for (int g = 1; g < c->groups; ++g)
    if (c->sizes[g] != c->sizes[0]) return 0;
  return 1;
}

/* What DESIGN.md 3.1 says rank r computes. Without federation, HSDP is one "federation" of W ranks. */
typedef struct {
  int federated, f, fl, offset, size, replicas;
  int rl, rr;
  int sender;       /* C_f[rl], or -1 without HSDP */
  int is_sender;    /* API_NONE without federation */
  int receive_from; /* API_NONE when unset */
} rank_model;

static int sender_of(const config *c, int g, int shard) {
  const int replicas = c->sizes[g] / c->hsdp;
  return c->offsets[g] + (shard % replicas) * c->hsdp + shard;
}

static rank_model model_of(const config *c, int r) {
  rank_model m;
  memset(&m, 0, sizeof m);
  m.federated = c->groups > 0;
  m.size = c->world;
  if (m.federated) {
    while (r >= c->offsets[m.f] + c->sizes[m.f]) ++m.f;
    m.offset = c->offsets[m.f];
    m.size = c->sizes[m.f];
  }
  m.fl = r - m.offset;
  m.sender = -1;
  m.is_sender = API_NONE;
  m.receive_from = API_NONE;
  if (c->hsdp) {
    m.replicas = m.size / c->hsdp;
    m.rl = r % c->hsdp;
    m.rr = m.fl / c->hsdp;
    if (m.federated) m.sender = sender_of(c, m.f, m.rl);
  }
  if (m.federated) {
    m.is_sender = c->hsdp ? r == m.sender : 1;
    if (c->hsdp && r != m.sender) m.receive_from = m.sender;
  }
  return m;
}

/* The expected member list of a group kind (DESIGN.md 3.2); returns -1 when the layout has none. */
static int expected_members(const config *c, const rank_model *m, int r, xffl_group_kind_t kind, int *out) {
  const int S = c->hsdp;
  int n = 0;
  switch (kind) {
    case XFFL_GROUP_WORLD:
      for (int i = 0; i < c->world; ++i) out[n++] = i;
      return n;
    case XFFL_GROUP_FSDP:
      if (c->kind == CFG_FSDP || (m->federated && !S)) {
        for (int i = 0; i < m->size; ++i) out[n++] = m->offset + i;
        return n;
      }
      return -1;
    case XFFL_GROUP_REPLICA: /* same members as HSDP_REPLICA, only with federation */
    case XFFL_GROUP_HSDP_REPLICA:
      if (!S || (kind == XFFL_GROUP_REPLICA && !m->federated)) return -1;
      for (int j = 0; j < m->replicas; ++j) out[n++] = m->offset + j * S + m->rl;
      return n;
    case XFFL_GROUP_HSDP_SHARD:
      if (!S) return -1;
      for (int i = 0; i < S; ++i) out[n++] = m->offset + m->rr * S + i;
      return n;
    case XFFL_GROUP_FEDERATION:
      if (!m->federated) return -1;
      for (int i = 0; i < m->size; ++i) out[n++] = m->offset + i;
      return n;
    case XFFL_GROUP_FEDERATED:
      if (!m->federated) return -1;
      if (symmetric(c)) { /* {g*F + federated_local_rank}, = g*F + replica_rank*S + replica_local_rank */
        for (int g = 0; g < c->groups; ++g) out[n++] = g * c->sizes[0] + m->fl;
      } else if (r == m->sender) { /* (C_0[p], ..., C_{G-1}[p]) */
        for (int g = 0; g < c->groups; ++g) out[n++] = sender_of(c, g, m->rl);
      } else {
        out[n++] = r;
      }
      return n;
  }
  return -1;
}

/* ---------------------------------------------------------------- per-configuration bookkeeping */

#define KIND_COUNT 7
static const char *const group_names[KIND_COUNT] = {"WORLD",     "FSDP",    "HSDP_REPLICA", "HSDP_SHARD",
                                                    "FEDERATED", "REPLICA", "FEDERATION"};

/* For each kind and rank: the hash and length of the member list the rank computed (length 0: no group). */
static uint64_t list_hash[KIND_COUNT][MAX_WORLD];
static int list_len[KIND_COUNT][MAX_WORLD];
static int seen_is_sender[MAX_WORLD], seen_receive_from[MAX_WORLD], seen_rl[MAX_WORLD], seen_f[MAX_WORLD];
static int stamp[MAX_WORLD], stamp_now;
static int members[MAX_WORLD], expected[MAX_WORLD], mesh[MAX_WORLD];

static uint64_t hash_list(const int *list, size_t n) {
  uint64_t h = 1469598103934665603ULL ^ n;
  for (size_t i = 0; i < n; ++i) h = (h ^ (uint64_t)(uint32_t)list[i]) * 1099511628211ULL;
  return h;
}

static int get(const xffl_state_t *st, xffl_attr_t attr, int r) {
  int value = 0;
  xffl_status_t rc = xffl_get_int(st, attr, &value);
  if (rc == XFFL_ENOTSET) return API_NONE;
  if (rc != XFFL_OK) prop_fail(r, "xffl_get_int(%d) returned %s (%s)", attr, xffl_status_string(rc),
                               xffl_last_error_message());
  return value;
}

static void expect_field(const xffl_state_t *st, xffl_attr_t attr, int want, const char *name, int r) {
  int got = get(st, attr, r);
  if (got != want) {
    char g[16], w[16];
    snprintf(g, sizeof g, "%d", got);
    snprintf(w, sizeof w, "%d", want);
    prop_fail(r, "%s is %s, expected %s", name, got == API_NONE ? "None" : g, want == API_NONE ? "None" : w);
  }
}

static void expect_tuple(const xffl_state_t *st, xffl_attr_t attr, const int *want, int n, const char *name, int r) {
  int got[MAX_GROUPS + 1];
  size_t len = 0;
  xffl_status_t rc = xffl_get_ints(st, attr, got, MAX_GROUPS + 1, &len);
  if (n < 0) {
    if (rc != XFFL_ENOTSET) prop_fail(r, "%s should be None, got %s", name, xffl_status_string(rc));
    return;
  }
  if (rc != XFFL_OK) prop_fail(r, "%s: %s (%s)", name, xffl_status_string(rc), xffl_last_error_message());
  if ((int)len != n || memcmp(got, want, (size_t)n * sizeof(int)) != 0) prop_fail(r, "%s differs from DESIGN 3.1", name);
}

/* Reads and checks the groups of rank r; records their hashes for the cross-rank checks. */
static void check_groups(const config *c, const rank_model *m, const xffl_state_t *st, int r) {
  for (int kind = 0; kind < KIND_COUNT; ++kind) {
    if (kind == XFFL_GROUP_WORLD && c->world > 512) { /* W^2 work: checked on the smaller worlds */
      list_len[kind][r] = 0;
      continue;
    }
    const int n_expected = expected_members(c, m, r, (xffl_group_kind_t)kind, expected);
    xffl_group_t *group = NULL;
    xffl_status_t rc = xffl_get_group(st, (xffl_group_kind_t)kind, 0, &group);
    if (n_expected < 0) {
      if (rc != XFFL_ENOTSET) prop_fail(r, "group %s should be unset, got %s", group_names[kind], xffl_status_string(rc));
      list_len[kind][r] = 0;
      continue;
    }
    if (rc != XFFL_OK)
      prop_fail(r, "group %s: %s (%s)", group_names[kind], xffl_status_string(rc), xffl_last_error_message());
    size_t len = 0;
    rc = xffl_group_ranks(group, members, MAX_WORLD, &len);
    if (rc != XFFL_OK) prop_fail(r, "group_ranks of %s: %s", group_names[kind], xffl_status_string(rc));
    if ((int)len != n_expected || memcmp(members, expected, len * sizeof(int)) != 0) {
      char got_text[200], want_text[200];
      prop_fail(r, "group %s is [%s], DESIGN 3.2 says [%s]", group_names[kind],
                api_format_ranks(members, len, got_text, sizeof got_text),
                api_format_ranks(expected, (size_t)n_expected, want_text, sizeof want_text));
    }
    /* the caller is a member, at its group rank; members are distinct ranks of the world */
    int my_index = -1;
    assert_xffl_ok(xffl_group_rank(group, &my_index));
    if (my_index < 0 || (size_t)my_index >= len || members[my_index] != r)
      prop_fail(r, "group %s: group rank %d does not point at rank %d", group_names[kind], my_index, r);
    ++stamp_now;
    for (size_t i = 0; i < len; ++i) {
      if (members[i] < 0 || members[i] >= c->world) prop_fail(r, "group %s has rank %d", group_names[kind], members[i]);
      if (stamp[members[i]] == stamp_now) prop_fail(r, "group %s lists %d twice", group_names[kind], members[i]);
      stamp[members[i]] = stamp_now;
    }
    list_hash[kind][r] = hash_list(members, len);
    list_len[kind][r] = (int)len;

    /* K stream instances of FEDERATED and REPLICA: same members, distinct handles */
    if (c->streams > 1 && (kind == XFFL_GROUP_FEDERATED || kind == XFFL_GROUP_REPLICA)) {
      xffl_group_t *last = NULL;
      assert_xffl_ok(xffl_get_group(st, (xffl_group_kind_t)kind, c->streams - 1, &last));
      size_t last_len = 0;
      assert_xffl_ok(xffl_group_ranks(last, expected, MAX_WORLD, &last_len));
      if (last == group || last_len != len || memcmp(expected, members, len * sizeof(int)) != 0)
        prop_fail(r, "instance %d of %s is not a distinct copy of instance 0", c->streams - 1, group_names[kind]);
    }
  }
}

/* Meshes: DESIGN 3.1 grids; HSDP rows = HSDP_SHARD, columns = HSDP_REPLICA; FSDP mesh = FSDP group. */
static void check_meshes(const config *c, const rank_model *m, const xffl_state_t *st, int r) {
  int shape[2] = {0, 0};
  size_t ndim = 0, len = 0;
  const int has_fsdp = c->kind == CFG_FSDP || (m->federated && !c->hsdp);
  xffl_status_t rc = xffl_get_mesh(st, XFFL_MESH_FSDP, shape, 2, &ndim, mesh, MAX_WORLD, &len);
  if (!has_fsdp) {
    if (rc != XFFL_ENOTSET) prop_fail(r, "fsdp_mesh should be None, got %s", xffl_status_string(rc));
  } else {
    if (rc != XFFL_OK) prop_fail(r, "fsdp_mesh: %s", xffl_status_string(rc));
    if (ndim != 1 || shape[0] != m->size || (int)len != m->size) prop_fail(r, "fsdp_mesh shape (%d,)", shape[0]);
    int n = expected_members(c, m, r, XFFL_GROUP_FSDP, expected);
    if (n != (int)len || memcmp(mesh, expected, len * sizeof(int)) != 0) prop_fail(r, "fsdp_mesh != FSDP group");
  }
  if (xffl_is_fsdp_setup(st) != has_fsdp) prop_fail(r, "xffl_is_fsdp_setup is %d", xffl_is_fsdp_setup(st));

  rc = xffl_get_mesh(st, XFFL_MESH_HSDP, shape, 2, &ndim, mesh, MAX_WORLD, &len);
  if (xffl_is_hsdp_setup(st) != (c->hsdp > 0)) prop_fail(r, "xffl_is_hsdp_setup is %d", xffl_is_hsdp_setup(st));
  if (!c->hsdp) {
    if (rc != XFFL_ENOTSET) prop_fail(r, "hsdp_mesh should be None, got %s", xffl_status_string(rc));
    return;
  }
  if (rc != XFFL_OK) prop_fail(r, "hsdp_mesh: %s", xffl_status_string(rc));
  const int S = c->hsdp, R = m->replicas;
  if (ndim != 2 || shape[0] != R || shape[1] != S || (int)len != R * S)
    prop_fail(r, "hsdp_mesh shape (%d, %d), expected (%d, %d)", shape[0], shape[1], R, S);
  for (int i = 0; i < R * S; ++i)
    if (mesh[i] != m->offset + i) prop_fail(r, "hsdp_mesh entry %d is %d, expected %d", i, mesh[i], m->offset + i);
  /* the row of r is its HSDP_SHARD group, its column the HSDP_REPLICA group */
  int row = -1;
  for (int i = 0; i < R * S; ++i)
    if (mesh[i] == r) row = i / S;
  if (row != m->rr) prop_fail(r, "rank in mesh row %d, replica_rank %d", row, m->rr);
  xffl_group_t *g = NULL;
  size_t n = 0;
  assert_xffl_ok(xffl_get_group(st, XFFL_GROUP_HSDP_SHARD, 0, &g));
  assert_xffl_ok(xffl_group_ranks(g, members, MAX_WORLD, &n));
  if ((int)n != S || memcmp(members, mesh + row * S, (size_t)S * sizeof(int)) != 0)
    prop_fail(r, "HSDP_SHARD group is not row %d of the mesh", row);
  assert_xffl_ok(xffl_get_group(st, XFFL_GROUP_HSDP_REPLICA, 0, &g));
  assert_xffl_ok(xffl_group_ranks(g, members, MAX_WORLD, &n));
  if ((int)n != R) prop_fail(r, "HSDP_REPLICA group has %zu members, the mesh %d rows", n, R);
  for (int j = 0; j < R; ++j)
    if (members[j] != mesh[j * S + m->rl]) prop_fail(r, "HSDP_REPLICA group is not column %d of the mesh", m->rl);
}

static void check_rank(const config *c, int r) {
  xffl_state_t *st = NULL;
  assert_xffl_ok(xffl_state_create(&st));
  xffl_status_t rc = xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, API_MASTER_ADDR, API_MASTER_PORT, r,
                                     c->world);
  if (rc != XFFL_OK) prop_fail(r, "set_global: %s (%s)", xffl_status_string(rc), xffl_last_error_message());
  if (c->node_size) {
    const int L = c->node_size;
    rc = xffl_set_node(st, r % L, L, r / L, c->world / L);
    if (rc != XFFL_OK) prop_fail(r, "set_node: %s (%s)", xffl_status_string(rc), xffl_last_error_message());
  }
  if (c->streams) assert_xffl_ok(xffl_set_exec_device(st, -1, c->streams));
  switch (c->kind) {
    case CFG_FSDP: rc = xffl_set_fsdp(st); break;
    case CFG_HSDP: rc = xffl_set_hsdp(st, c->hsdp); break;
    default:
      rc = c->single ? xffl_federated_scaling(st, c->sizes, 1, c->hsdp)
                     : xffl_federated_scaling(st, c->sizes, (size_t)c->groups, c->hsdp);
  }
  if (rc != XFFL_OK) prop_fail(r, "layout refused: %s (%s)", xffl_status_string(rc), xffl_last_error_message());

  const rank_model m = model_of(c, r);
  const int S = c->hsdp;
  expect_field(st, XFFL_ATTR_RANK, r, "rank", r);
  expect_field(st, XFFL_ATTR_WORLD_SIZE, c->world, "world_size", r);
  if (c->node_size) {
    expect_field(st, XFFL_ATTR_NODE_LOCAL_RANK, r % c->node_size, "node_local_rank", r);
    expect_field(st, XFFL_ATTR_NODE_RANK, r / c->node_size, "node_rank", r);
  }
  expect_field(st, XFFL_ATTR_REPLICA_LOCAL_RANK, S ? m.rl : API_NONE, "replica_local_rank", r);
  expect_field(st, XFFL_ATTR_REPLICA_LOCAL_SIZE, S ? S : API_NONE, "replica_local_size", r);
  expect_field(st, XFFL_ATTR_REPLICA_RANK, S ? m.rr : API_NONE, "replica_rank", r);
  expect_field(st, XFFL_ATTR_HSDP, S ? S : API_NONE, "hsdp", r);
  int replicas[MAX_GROUPS];
  const int n_replicas = !S ? -1 : m.federated ? c->groups : 1;
  for (int g = 0; g < n_replicas; ++g) replicas[g] = (m.federated ? c->sizes[g] : c->world) / S;
  expect_tuple(st, XFFL_ATTR_REPLICA_WORLD_SIZE, replicas, n_replicas, "replica_world_size", r);
  expect_field(st, XFFL_ATTR_FEDERATED_LOCAL_RANK, m.federated ? m.fl : API_NONE, "federated_local_rank", r);
  expect_field(st, XFFL_ATTR_FEDERATED_RANK, m.federated ? m.f : API_NONE, "federated_rank", r);
  expect_field(st, XFFL_ATTR_FEDERATED_WORLD_SIZE, m.federated ? c->groups : API_NONE, "federated_world_size", r);
  expect_tuple(st, XFFL_ATTR_FEDERATED_LOCAL_SIZE, c->sizes, m.federated ? c->groups : -1, "federated_local_size", r);
  expect_field(st, XFFL_ATTR_IS_SENDER, m.is_sender, "is_sender", r);
  expect_field(st, XFFL_ATTR_RECEIVE_FROM, m.receive_from, "receive_from", r);
  if (xffl_is_federated_scaling_setup(st) != m.federated) prop_fail(r, "xffl_is_federated_scaling_setup is wrong");

  check_groups(c, &m, st, r);
  check_meshes(c, &m, st, r);
  seen_is_sender[r] = get(st, XFFL_ATTR_IS_SENDER, r);
  seen_receive_from[r] = get(st, XFFL_ATTR_RECEIVE_FROM, r);
  seen_rl[r] = S ? get(st, XFFL_ATTR_REPLICA_LOCAL_RANK, r) : 0;
  seen_f[r] = m.federated ? get(st, XFFL_ATTR_FEDERATED_RANK, r) : 0;
  xffl_state_destroy(st);
}

static int compare_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static uint64_t sorted_hashes[MAX_WORLD];

/* Number of ranks whose list of this kind has hash h. */
static int class_size(uint64_t h, int world) {
  const uint64_t *lo = sorted_hashes, *hi = sorted_hashes + world;
  while (lo < hi) { /* lower bound */
    const uint64_t *mid = lo + (hi - lo) / 2;
    if (*mid < h) lo = mid + 1; else hi = mid;
  }
  int n = 0;
  while (lo + n < sorted_hashes + world && lo[n] == h) ++n;
  return n;
}

/* Cross-rank properties, once every rank of the configuration is planned. */
static void check_whole_world(const config *c) {
  const int W = c->world;
  /* Every rank lists itself in its own group of each kind (checked per rank). If the ranks that computed the
   * same list number exactly its length, they are exactly its members: every member computed the same list,
   * and the groups of the kind partition the world. */
  for (int kind = 0; kind < KIND_COUNT; ++kind) {
    if (list_len[kind][0] == 0) continue; /* kind not in this layout (or WORLD skipped) */
    for (int r = 0; r < W; ++r) {
      if (list_len[kind][r] == 0) prop_fail(r, "group %s missing here but present on rank 0", group_names[kind]);
      sorted_hashes[r] = list_hash[kind][r];
    }
    qsort(sorted_hashes, (size_t)W, sizeof sorted_hashes[0], compare_u64);
    for (int r = 0; r < W; ++r) {
      int same = class_size(list_hash[kind][r], W);
      if (same != list_len[kind][r])
        prop_fail(r, "group %s has %d members but %d ranks computed that list: members disagree",
                  group_names[kind], list_len[kind][r], same);
    }
  }
  if (!c->groups) return;
  /* Senders: per federated group and shard exactly one; receive_from points at it. The slot of (f, p) is
   * O_f + p, unique since p < S <= F_f. */
  static int senders_of_slot[MAX_WORLD];
  memset(senders_of_slot, 0, sizeof senders_of_slot);
  for (int r = 0; r < W; ++r) {
    if (seen_is_sender[r] == 1) ++senders_of_slot[c->offsets[seen_f[r]] + seen_rl[r]];
    if (!c->hsdp) {
      if (seen_is_sender[r] != 1 || seen_receive_from[r] != API_NONE)
        prop_fail(r, "without HSDP every rank is a sender with no receive_from");
      continue;
    }
    if (seen_is_sender[r] == 1) {
      if (seen_receive_from[r] != API_NONE) prop_fail(r, "a sender has receive_from %d", seen_receive_from[r]);
      continue;
    }
    const int t = seen_receive_from[r];
    if (t == API_NONE || t < 0 || t >= W) prop_fail(r, "non-sender with receive_from %d", t);
    if (seen_is_sender[t] != 1 || seen_rl[t] != seen_rl[r] || seen_f[t] != seen_f[r])
      prop_fail(r, "receive_from %d is not the sender of shard %d in federated group %d", t, seen_rl[r], seen_f[r]);
  }
  if (!c->hsdp) return;
  for (int g = 0; g < c->groups; ++g)
    for (int p = 0; p < c->hsdp; ++p)
      if (senders_of_slot[c->offsets[g] + p] != 1)
        prop_fail(-1, "federated group %d shard %d has %d senders", g, p, senders_of_slot[c->offsets[g] + p]);
  /* FEDERATED lists in asymmetric layouts: a sender's crosses every federation once, through senders of its
   * shard; a non-sender's is the singleton (checked per rank against DESIGN 3.2 already). */
  if (!symmetric(c))
    for (int r = 0; r < W; ++r)
      if (seen_is_sender[r] == 1 && list_len[XFFL_GROUP_FEDERATED][r] != c->groups)
        prop_fail(r, "a sender's FEDERATED group has %d members for %d groups", list_len[XFFL_GROUP_FEDERATED][r],
                  c->groups);
}

static void run_config(const config *c) {
  describe_config(c);
  for (int r = 0; r < c->world; ++r) check_rank(c, r);
  check_whole_world(c);
}

/* ---------------------------------------------------------------- the tests */

/* Sanitized builds (XFFL_TEST_SANITIZED, defined by CMake there) run about 15 times slower: they draw
 * a sixteenth of the small configurations and an eighth of the medium ones, and plan each kind's large
 * world at 1024 ranks instead of 4096 (planning every rank of a world is quadratic in it: 48 s of CPU
 * under ASan at 4096). Every kind and every branch of the planner still runs under the sanitizer, and
 * so does the largest case, 16 unequal groups in 4096 ranks; the ci build draws everything. */
#ifdef XFFL_TEST_SANITIZED
#define SMALL_SCALE 16
#define MEDIUM_SCALE 8
#define LARGE_WORLD 1024
#else
#define SMALL_SCALE 1
#define MEDIUM_SCALE 1
#define LARGE_WORLD MAX_WORLD
#endif

typedef struct {
  int count, max_world;
} batch;

static int configs_by_kind[CFG_KINDS];
static long ranks_planned;

static void run_batch(uint64_t stream, const batch *b) {
  for (int i = 0; i < b->count; ++i) {
    uint64_t s = seed ^ (stream * 0xD1B54A32D192ED03ULL) ^ (uint64_t)i * 0x9E3779B97F4A7C15ULL;
    config_index = (int)(stream * 100000) + i;
    const cfg_kind kind = (cfg_kind)uniform(&s, 0, CFG_KINDS - 1);
    const config c = make_config(&s, kind, b->max_world);
    run_config(&c);
    ++configs_by_kind[kind];
    ranks_planned += c.world;
  }
}

static void test_small_worlds(void **state) {
  (void)state;
  const batch b = {2500 / SMALL_SCALE, 48};
  run_batch(1, &b);
}

static void test_medium_worlds(void **state) {
  (void)state;
  const batch b = {100 / MEDIUM_SCALE, 512};
  run_batch(2, &b);
}

/* A few of the largest worlds: each kind once with W = LARGE_WORLD or close to it. */
static void test_large_worlds(void **state) {
  (void)state;
  for (int kind = 0; kind < CFG_KINDS; ++kind) {
    uint64_t s = seed ^ 0xB16B00B5ULL ^ (uint64_t)kind;
    config_index = 300000 + kind;
    config c = make_config(&s, (cfg_kind)kind, LARGE_WORLD);
    if (kind == CFG_FSDP) c.world = LARGE_WORLD;
    if (kind == CFG_HSDP) c.world = LARGE_WORLD - LARGE_WORLD % c.hsdp;
    if (c.node_size && c.world % c.node_size) c.node_size = 0;
    run_config(&c);
    ++configs_by_kind[kind];
    ranks_planned += c.world;
  }
  /* the largest asymmetric case: 16 unequal groups, hsdp 8, W = 4096 */
  config c;
  memset(&c, 0, sizeof c);
  c.kind = CFG_ASYM;
  c.hsdp = 8;
  c.groups = 16;
  const int replicas[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 392};
  for (int g = 0; g < 16; ++g) {
    c.sizes[g] = 8 * replicas[g];
    c.world += c.sizes[g];
    if (g) c.offsets[g] = c.offsets[g - 1] + c.sizes[g - 1];
  }
  assert_int_equal(c.world, MAX_WORLD);
  c.node_size = 8;
  config_index = 399999;
  run_config(&c);
  ++configs_by_kind[CFG_ASYM];
  ranks_planned += c.world;
}

static void test_every_kind_was_drawn(void **state) {
  (void)state;
  for (int kind = 0; kind < CFG_KINDS; ++kind)
    if (configs_by_kind[kind] < 50 / SMALL_SCALE) fail_msg("only %d configurations of kind %s", configs_by_kind[kind], kind_names[kind]);
  printf("property: seed %llu, %d/%d/%d/%d/%d configurations (%s/%s/%s/%s/%s), %ld ranks planned\n",
         (unsigned long long)seed, configs_by_kind[0], configs_by_kind[1], configs_by_kind[2], configs_by_kind[3],
         configs_by_kind[4], kind_names[0], kind_names[1], kind_names[2], kind_names[3], kind_names[4], ranks_planned);
}

int main(int argc, char **argv) {
  if (argc > 1) cmocka_set_test_filter(argv[1]); /* e.g. test_large_worlds */
  const char *text = getenv("XFFL_PROPERTY_SEED");
  seed = text && *text ? strtoull(text, NULL, 0) : 20261130ULL;
  unsetenv("XFFL_TIMEOUT"); /* xffl_state_create reads them; the property is about topology only */
  unsetenv("XFFL_LOG_LEVEL");
  printf("property: seed %llu (set XFFL_PROPERTY_SEED to change it)\n", (unsigned long long)seed);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_small_worlds),
      cmocka_unit_test(test_medium_worlds),
      cmocka_unit_test(test_large_worlds),
      cmocka_unit_test(test_every_kind_was_drawn),
  };
  return cmocka_run_group_tests_name("api.property", tests, NULL, NULL);
}
