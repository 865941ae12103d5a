#include "comm/streaming_copy.h"

#include <algorithm>
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

namespace {

#if XFFL_STREAMING_STORES
// copy_interleaved's whole lines, `bytes` of each copy (second_out aligned to a line when
// streaming). Two copies of one loop: SSE2 (every x86-64) and AVX-512 (wide_vectors.h: a line in one
// register).
void copy_lines(unsigned char *first_out, const unsigned char *first_in, unsigned char *second_out,
                const unsigned char *second_in, size_t bytes, bool stream_second) {
  for (size_t done = 0; done < bytes; done += kCacheLine) {
    __m128i line[4];
    for (int k = 0; k < 4; ++k) line[k] = _mm_loadu_si128(reinterpret_cast<const __m128i *>(first_in + done + 16 * k));
    for (int k = 0; k < 4; ++k) _mm_storeu_si128(reinterpret_cast<__m128i *>(first_out + done + 16 * k), line[k]);
    for (int k = 0; k < 4; ++k) line[k] = _mm_loadu_si128(reinterpret_cast<const __m128i *>(second_in + done + 16 * k));
    if (stream_second) {
      for (int k = 0; k < 4; ++k) _mm_stream_si128(reinterpret_cast<__m128i *>(second_out + done + 16 * k), line[k]);
    } else {
      for (int k = 0; k < 4; ++k) _mm_storeu_si128(reinterpret_cast<__m128i *>(second_out + done + 16 * k), line[k]);
    }
  }
}

#if XFFL_HAS_AVX512_COPY
XFFL_AVX512 void copy_lines_avx512(unsigned char *first_out, const unsigned char *first_in, unsigned char *second_out,
                                   const unsigned char *second_in, size_t bytes, bool stream_second) {
  for (size_t done = 0; done < bytes; done += kCacheLine) {
    _mm512_storeu_si512(first_out + done, _mm512_loadu_si512(first_in + done));
    const __m512i line = _mm512_loadu_si512(second_in + done);
    if (stream_second)
      _mm512_stream_si512(reinterpret_cast<__m512i *>(second_out + done), line);
    else
      _mm512_storeu_si512(second_out + done, line);
  }
}
#endif
#endif

}  // namespace

void copy_interleaved(CopyRange first, CopyRange second, bool stream_second) {
  if (first.bytes == 0 || second.bytes == 0) {  // one copy (an empty range's pointers may be null)
    if (first.bytes) std::memcpy(first.to, first.from, first.bytes);
    if (second.bytes) copy_to_output(second.to, second.from, second.bytes, stream_second);
    return;
  }
#if XFFL_STREAMING_STORES
  auto *first_out = static_cast<unsigned char *>(first.to);
  const auto *first_in = static_cast<const unsigned char *>(first.from);
  auto *second_out = static_cast<unsigned char *>(second.to);
  const auto *second_in = static_cast<const unsigned char *>(second.from);
  size_t second_bytes = second.bytes;
  if (stream_second) {  // the streaming stores need the destination's lines whole and aligned
    const size_t head =
        std::min((kCacheLine - reinterpret_cast<uintptr_t>(second_out) % kCacheLine) % kCacheLine, second_bytes);
    std::memcpy(second_out, second_in, head);
    second_out += head;
    second_in += head;
    second_bytes -= head;
  }
  const size_t together = std::min(first.bytes, second_bytes) / kCacheLine * kCacheLine;
#if XFFL_HAS_AVX512_COPY
  if (use_avx512_for(together))
    copy_lines_avx512(first_out, first_in, second_out, second_in, together, stream_second);
  else
#endif
    copy_lines(first_out, first_in, second_out, second_in, together, stream_second);
  std::memcpy(first_out + together, first_in + together, first.bytes - together);
  if (stream_second) {
    copy_streaming(second_out + together, second_in + together, second_bytes - together);
    _mm_sfence();  // copy_streaming fences only when it streamed
  } else {
    std::memcpy(second_out + together, second_in + together, second_bytes - together);
  }
#else
  (void)stream_second;
  std::memcpy(first.to, first.from, first.bytes);
  std::memcpy(second.to, second.from, second.bytes);
#endif
}

}  // namespace xffl::comm
