#include "comm/streaming_copy.h"

#include <cstdint>
#include <cstring>

#include "comm/wide_vectors.h"

namespace xffl::comm {

void copy_streaming(void *to, const void *from, size_t bytes) {
#if XFFL_STREAMING_STORES
  auto *out = static_cast<unsigned char *>(to);
  const auto *in = static_cast<const unsigned char *>(from);
  // Up to the destination's first cache line with memcpy (the stores need 16-byte alignment, and
  // write whole lines only when aligned to them), whole lines with streaming stores, the tail with
  // memcpy.
  const size_t head = (kCacheLine - reinterpret_cast<uintptr_t>(out) % kCacheLine) % kCacheLine;
  if (bytes < head + kCacheLine) {
    std::memcpy(out, in, bytes);
    return;
  }
  std::memcpy(out, in, head);
  out += head;
  in += head;
  bytes -= head;
  size_t done = 0;
  for (; done + kCacheLine <= bytes; done += kCacheLine) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(in + done));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(in + done + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i *>(in + done + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i *>(in + done + 48));
    _mm_stream_si128(reinterpret_cast<__m128i *>(out + done), a);
    _mm_stream_si128(reinterpret_cast<__m128i *>(out + done + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i *>(out + done + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i *>(out + done + 48), d);
  }
  std::memcpy(out + done, in + done, bytes - done);
  // Streaming stores are not ordered with later stores (the flag that says a round is done, the
  // caller's own): the fence makes them visible first.
  _mm_sfence();
#else
  std::memcpy(to, from, bytes);
#endif
}

void copy_to_output(void *to, const void *from, size_t bytes, bool streaming) {
  if (streaming)
    copy_streaming(to, from, bytes);
  else
    std::memcpy(to, from, bytes);
}

}  // namespace xffl::comm
