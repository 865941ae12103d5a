// Encryption cost of the cross-facility transport (comm/wan/wan_crypto.h): seals and opens GIB GiB in
// the transport's frames (256 KiB, header as AAD) with each cipher on one core, and prints the CPU
// seconds per GB and the rate against a 1 Gbit/s link ("x link": how many such links one core keeps
// up with; the goal is >= 1, i.e. still link-bound).
//
//   facilities-wan-crypto-bench [GIB]      (default 1)
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "comm/wan/framing.h"
#include "comm/wan/wan_crypto.h"
#include "comm/wan/wan_settings.h"

namespace {

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

}  // namespace

int main(int argc, char **argv) {
  using namespace xffl::comm::wan;
  const double gib = argc > 1 ? std::atof(argv[1]) : 1.0;
  const size_t frames = static_cast<size_t>(gib * (1u << 30) / kFrameBytes);
  const double bytes = static_cast<double>(frames * kFrameBytes);
  std::vector<uint8_t> plain(kFrameBytes, 0x5a), sealed(kFrameBytes), opened(kFrameBytes);
  uint8_t tag[kTagBytes];
  KeyContext context;
  std::printf("%-18s %-5s %12s %12s %10s\n", "cipher", "op", "cpu s/GB", "Gbit/s", "x 1Gbit/s");
  for (xffl_wan_encryption_t cipher : {XFFL_WAN_ENCRYPTION_AES_256_GCM, XFFL_WAN_ENCRYPTION_CHACHA20_POLY1305}) {
    const Key key = derive_key(cipher, "bench-secret", "bench", context);
    FrameHeader header;
    header.payload_bytes = static_cast<uint32_t>(kFrameBytes);
    for (int op = 0; op < 2; ++op) {
      FrameCipher sealer(cipher, key), opener(cipher, key);  // counters from 0 on both sides
      const double cpu0 = cpu_seconds();
      const auto wall0 = std::chrono::steady_clock::now();
      for (size_t f = 0; f < frames; ++f) {
        header.offset = f * kFrameBytes;
        const HeaderBytes aad = encode(header);
        if (op == 0) {
          sealer.seal(aad.data(), aad.size(), plain.data(), kFrameBytes, sealed.data(), tag);
        } else {
          // Open what was sealed under the same counter (re-sealing keeps the counters in step).
          sealer.seal(aad.data(), aad.size(), plain.data(), kFrameBytes, sealed.data(), tag);
          if (!opener.open(aad.data(), aad.size(), sealed.data(), kFrameBytes, opened.data(), tag)) {
            std::fprintf(stderr, "a frame failed to open\n");
            return 1;
          }
        }
      }
      const double cpu = cpu_seconds() - cpu0;
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
      // For "open" the loop sealed too: count the open alone as the difference with the seal pass.
      static double seal_cpu = 0, seal_wall = 0;
      double c = cpu, w = wall;
      if (op == 0) {
        seal_cpu = cpu;
        seal_wall = wall;
      } else {
        c = cpu - seal_cpu;
        w = wall - seal_wall;
      }
      const double gbps = bytes * 8 / w / 1e9;
      std::printf("%-18s %-5s %12.3f %12.2f %10.1f\n", encryption_name(cipher), op == 0 ? "seal" : "open",
                  c / (bytes / 1e9), gbps, gbps / 1.0);
      if (op == 1) seal_cpu = seal_wall = 0;
    }
  }
  return 0;
}
