// CPU cost of the WAN hop's wire formats (federated/wire/wire_format.h) on one core: for each format,
// encodes MIVALUES Mi f32 values (normal, as model updates are), decodes them, and decodes-and-adds
// them (how the hop sums each facility's bytes), with the loops' baseline copy and their AVX2 copy
// (federated/wire/vector_isa.h; "avx2" only where the CPU has it). Best of REPEATS passes, in seconds
// and in ns per value; "x link" is how many 1 Gbit/s links one core keeps up with at that rate (the
// encoded bytes over the time), so >= 1 means the hop is link-bound on that core. Also checks that
// both copies wrote the same bytes and floats.
//
//   facilities-wire-codec-bench [MIVALUES [REPEATS]]     (default 64 and 3)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "federated/wire/vector_isa.h"
#include "federated/wire/wire_format.h"

namespace {

using namespace xffl::federated::wire;
using Clock = std::chrono::steady_clock;

template <typename Pass>
double best_of(int repeats, Pass pass) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    pass();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    best = seconds < best ? seconds : best;
  }
  return best;
}

}  // namespace

int main(int argc, char **argv) {
  const size_t count = (argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 64) << 20;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
  if (count == 0 || repeats <= 0) {
    std::fprintf(stderr, "usage: facilities-wire-codec-bench [MIVALUES > 0 [REPEATS > 0]]\n");
    return 2;
  }
  std::vector<float> values(count), decoded(count), sum(count);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  for (float &v : values) v = normal(rng);

  const double per_value = 1e9 / static_cast<double>(count);
  std::printf("%zu Mi values, best of %d, one core\n\n", count >> 20, repeats);
  std::printf("%-11s %-8s %9s %9s %9s %8s %8s %8s\n", "format", "copy", "encode s", "decode s", "add s", "enc ns",
              "dec ns", "x link");
  const Codec *const formats[] = {&kBf16, &kF16, &kInt8Block, &kInt4Block};
  bool same = true;
  for (const Codec *format : formats) {
    const size_t bytes = format->encoded_size(count);
    std::vector<unsigned char> encoded(bytes), encoded_baseline(bytes);
    std::vector<float> decoded_baseline, sum_baseline;
    for (const bool avx2 : {false, true}) {
      set_portable_vectors(!avx2);
      if (avx2 && !use_avx2()) continue;
      const double encode = best_of(repeats, [&] { format->encode(values.data(), count, encoded.data()); });
      const double decode = best_of(repeats, [&] { format->decode(encoded.data(), count, decoded.data()); });
      const double add = best_of(repeats, [&] {
        std::memcpy(sum.data(), values.data(), count * sizeof(float));
        format->decode_add(encoded.data(), count, sum.data());
      });
      const double link_seconds = static_cast<double>(bytes) * 8 / 1e9;
      std::printf("%-11s %-8s %9.3f %9.3f %9.3f %8.2f %8.2f %8.1f\n", format->name, avx2 ? "avx2" : "baseline",
                  encode, decode, add, encode * per_value, decode * per_value, link_seconds / (encode + decode));
      if (!avx2) {
        encoded_baseline = encoded;
        decoded_baseline = decoded;
        sum_baseline = sum;
      } else if (encoded != encoded_baseline ||
                 std::memcmp(decoded.data(), decoded_baseline.data(), count * sizeof(float)) != 0 ||
                 std::memcmp(sum.data(), sum_baseline.data(), count * sizeof(float)) != 0) {
        std::printf("%-11s the AVX2 copy differs from the baseline copy\n", format->name);
        same = false;
      }
    }
  }
  set_portable_vectors(false);
  std::printf("\nx link = (encoded bytes / 1 Gbit/s) / (encode + decode)\n");
  return same ? 0 : 1;
}
