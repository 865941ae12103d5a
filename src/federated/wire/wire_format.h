// The wire formats of the WAN hop (XFFL_OPT_WIRE_FORMAT): how an f32 contribution is written on the
// bytes that cross facilities. Each codec is a pair of pure functions over whole arrays, one file each
// (f32.cpp, bf16.cpp, f16.cpp, int8_block.cpp, int4_block.cpp); wan_average.h is the one user.
//
// Non-finite values: BF16 and F16 keep NaN as NaN and +-Inf as +-Inf (F16 also turns finite values
// beyond 65504 into +-Inf). The block formats write a block that holds a NaN or an Inf with a NaN scale,
// so the whole block decodes as NaN: a diverged model stays visibly diverged, never silently finite.
#ifndef XFFL_SRC_FEDERATED_WIRE_WIRE_FORMAT_H
#define XFFL_SRC_FEDERATED_WIRE_WIRE_FORMAT_H

#include <cstddef>
#include <cstdint>

#include "xffl/types.h"

namespace xffl::federated::wire {

struct Codec {
  xffl_wire_format_t format;
  const char *name;  // as XFFL_WIRE_FORMAT spells it: "int8_block"
  // Bytes that `count` values take on the wire (0 for 0).
  size_t (*encoded_size)(size_t count);
  // values[0, count) -> encoded_size(count) bytes at `out` (any alignment). A count of whole blocks
  // encodes to bytes that the next values' encoding may follow: encoding values[0, a) then values[a, b)
  // at encoded_size(a) gives the bytes of values[0, b) when a is a multiple of `block` (every count
  // for the formats without blocks).
  void (*encode)(const float *values, size_t count, unsigned char *out);
  // The inverse, as exact as the format allows: encoded_size(count) bytes -> values[0, count).
  void (*decode)(const unsigned char *encoded, size_t count, float *values);
  // sum[i] += the decoded values[i], as decode into a scratch then one f32 addition per value (the
  // same bits), without the scratch: the WAN hop sums every member's bytes with it.
  void (*decode_add)(const unsigned char *encoded, size_t count, float *sum);
  // Bound of |decode(encode(x))[i] - x[i]| for finite x: relative (times |x[i]|) for the float formats,
  // relative to the block's largest |x| for the block formats (block > 0).
  double relative_error;
  size_t block;  // values per scale (0: no blocks)
};

// decode_add for a codec without a fused loop: decodes through a buffer on the stack, then adds.
// Formats without blocks only (the bytes of values[first, ...) start at encoded_size(first)).
void decode_add_through(void (*decode)(const unsigned char *, size_t, float *), size_t (*encoded_size)(size_t),
                        const unsigned char *encoded, size_t count, float *sum);

// Whether `format` is one of XFFL_WIRE_*.
bool valid_format(int format);
// The codec of a valid format.
const Codec &codec(xffl_wire_format_t format);
// "f32", "bf16", ...; "unknown" for an invalid value.
const char *format_name(int format);

// The codecs, defined in their own files.
extern const Codec kF32;
extern const Codec kBf16;
extern const Codec kF16;
extern const Codec kInt8Block;
extern const Codec kInt4Block;

}  // namespace xffl::federated::wire

#endif
