#include "topology/layout.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "common/error.h"
#include "common/format.h"

namespace xffl::topology {

namespace {

// The divisors of n closest to wanted (at most four), ascending: what to suggest instead of wanted.
std::vector<int> divisors_near(int n, int wanted) {
  std::vector<int> divisors;
  for (int d = 1; static_cast<long long>(d) * d <= n; ++d) {
    if (n % d) continue;
    divisors.push_back(d);
    if (d != n / d) divisors.push_back(n / d);
  }
  std::sort(divisors.begin(), divisors.end(), [wanted](int a, int b) {
    long long da = std::llabs(static_cast<long long>(a) - wanted), db = std::llabs(static_cast<long long>(b) - wanted);
    return da != db ? da < db : a < b;
  });
  if (divisors.size() > 4) divisors.resize(4);
  std::sort(divisors.begin(), divisors.end());
  return divisors;
}

int gcd_of(const std::vector<int> &values) {
  int g = 0;
  for (int v : values) g = std::gcd(g, v);
  return g;
}

bool all_equal(const std::vector<int> &values) {
  return std::adjacent_find(values.begin(), values.end(), std::not_equal_to<>()) == values.end();
}

}  // namespace

void check_rank(int rank, int world_size) {
  if (world_size < 1) fail(XFFL_EINVAL, "world size ", world_size, " must be at least 1");
  if (rank < 0 || rank >= world_size) fail(XFFL_EINVAL, "rank ", rank, " outside [0, ", world_size, ")");
}

void check_hsdp(int world_size, int hsdp) {
  if (hsdp < 1) fail(XFFL_EINVAL, "hsdp ", hsdp, " must be at least 1");
  if (world_size % hsdp != 0)
    fail(XFFL_EINVAL, "hsdp ", hsdp, " does not divide world size ", world_size, "; hsdp ",
         english_list(divisors_near(world_size, hsdp)), " would");
}

std::vector<int> sorted_rank_set(int world_size, const std::vector<int> &ranks, const char *what) {
  if (ranks.empty()) fail(XFFL_EINVAL, "the ", what, " is empty; give at least this rank");
  std::vector<int> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] < 0 || sorted[i] >= world_size)
      fail(XFFL_EINVAL, "rank ", sorted[i], " of the ", what, " outside [0, ", world_size, ")");
    if (i && sorted[i] == sorted[i - 1]) fail(XFFL_EINVAL, "rank ", sorted[i], " appears twice in the ", what);
  }
  return sorted;
}

void check_fsdp_mesh(int world_size, const std::vector<int> &ranks, int rank) {
  const std::vector<int> sorted = sorted_rank_set(world_size, ranks, "fsdp mesh");
  if (!std::binary_search(sorted.begin(), sorted.end(), rank))
    fail(XFFL_EINVAL, "rank ", rank, " is not in the fsdp mesh ",
         sorted.size() <= 16 ? python_list(ranks) : "of " + std::to_string(sorted.size()) + " ranks",
         ": each rank gives the mesh that contains it");
}

void check_hsdp_manual(int world_size, int rank, int replica_local_rank, int replica_local_size, int replica_rank,
                       const std::vector<int> &replica_world_size) {
  if (replica_local_size < 1) fail(XFFL_EINVAL, "replica_local_size ", replica_local_size, " must be at least 1");
  if (replica_local_rank < 0 || replica_local_rank >= replica_local_size)
    fail(XFFL_EINVAL, "replica_local_rank ", replica_local_rank, " outside [0, ", replica_local_size,
         ") (replica_local_size)");
  if (replica_world_size.size() != 1)
    fail(XFFL_EINVAL, "replica_world_size has ", replica_world_size.size(),
         " entries; without federated scaling it has one (the number of replicas of the world)");
  const int replicas = replica_world_size[0];
  if (world_size % replica_local_size != 0)
    fail(XFFL_EINVAL, "replica_local_size ", replica_local_size, " does not divide world size ", world_size,
         "; replica_local_size ", english_list(divisors_near(world_size, replica_local_size)), " would");
  if (world_size / replica_local_size != replicas)
    fail(XFFL_EINVAL, "replica_world_size (", replicas, ",) is not world size ", world_size,
         " / replica_local_size ", replica_local_size, " = ", world_size / replica_local_size);
  if (replica_rank < 0 || replica_rank >= replicas)
    fail(XFFL_EINVAL, "replica_rank ", replica_rank, " outside [0, ", replicas, ") (replica_world_size)");
  // The HSDP mesh is the row-major (replicas, replica_local_size) grid, so the caller's place is fixed.
  if (rank % replica_local_size != replica_local_rank)
    fail(XFFL_EINVAL, "replica_local_rank ", replica_local_rank, " is not rank ", rank, " mod replica_local_size ",
         replica_local_size, " = ", rank % replica_local_size, " (its column of the row-major hsdp mesh)");
  if (rank / replica_local_size != replica_rank)
    fail(XFFL_EINVAL, "replica_rank ", replica_rank, " is not rank ", rank, " / replica_local_size ", replica_local_size,
         " = ", rank / replica_local_size, " (its row of the row-major hsdp mesh)");
}

std::vector<int> expand_federated_sizes(int world_size, const std::vector<int> &sizes) {
  if (sizes.empty()) fail(XFFL_EINVAL, "federated sizes are empty; give one size or one per group");
  if (sizes.size() != 1) return sizes;
  int size = sizes[0];
  if (size < 1) fail(XFFL_EINVAL, "federated size ", size, " must be at least 1");
  if (world_size % size != 0)
    fail(XFFL_EINVAL, "federated size ", size, " does not divide world size ", world_size, "; federated size ",
         english_list(divisors_near(world_size, size)), " would");
  return std::vector<int>(static_cast<size_t>(world_size / size), size);
}

void check_federated(int world_size, const std::vector<int> &sizes, int hsdp) {
  if (sizes.empty()) fail(XFFL_EINVAL, "federated sizes are empty; give one size or one per group");
  long long sum = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 1)
      fail(XFFL_EINVAL, "federated size ", sizes[i], " at index ", i, " must be at least 1");
    sum += sizes[i];
  }
  if (sum != world_size) {
    if (sizes.size() <= 16)
      fail(XFFL_EINVAL, "federated sizes ", python_tuple(sizes), " sum to ", sum, ", world is ", world_size);
    fail(XFFL_EINVAL, "federated sizes (", sizes.size(), " groups) sum to ", sum, ", world is ", world_size);
  }
  if (hsdp < 0) fail(XFFL_EINVAL, "hsdp ", hsdp, " must be positive, or 0 for none");
  const int common = gcd_of(sizes);
  if (hsdp == 0) {
    if (!all_equal(sizes))
      fail(XFFL_EINVAL, "unequal federated sizes ",
           sizes.size() <= 16 ? python_tuple(sizes) : std::to_string(sizes.size()) + " groups",
           " need hsdp; hsdp ", common, " would work (or any divisor of ", common, ")");
    return;
  }
  if (common % hsdp != 0) {
    std::vector<int> offending;
    for (int s : sizes)
      if (s % hsdp != 0 && std::find(offending.begin(), offending.end(), s) == offending.end()) offending.push_back(s);
    if (offending.size() > 8) offending.resize(8);
    fail(XFFL_EINVAL, "hsdp ", hsdp, " does not divide federated size", offending.size() > 1 ? "s " : " ",
         english_list(offending, "and"), "; hsdp ", english_list(divisors_near(common, hsdp)), " would");
  }
}

}  // namespace xffl::topology
