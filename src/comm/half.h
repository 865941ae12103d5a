// 16-bit floats <-> f32. f16 is IEEE binary16, bf16 the upper half of an f32. Narrowing rounds to
// nearest, ties to even; NaN stays NaN (quiet), overflow becomes infinity. The loops are written
// branch-free on plain integers so the compiler vectorises them without F16C.
#ifndef XFFL_SRC_COMM_HALF_H
#define XFFL_SRC_COMM_HALF_H

#include <cstddef>
#include <cstdint>

namespace xffl::comm {

float f16_to_f32(uint16_t half);
uint16_t f32_to_f16(float value);
float bf16_to_f32(uint16_t half);
uint16_t f32_to_bf16(float value);

// Whole arrays; source and destination must not overlap.
void f16_to_f32(const uint16_t *from, float *to, size_t count);
void f32_to_f16(const float *from, uint16_t *to, size_t count);
void bf16_to_f32(const uint16_t *from, float *to, size_t count);
void f32_to_bf16(const float *from, uint16_t *to, size_t count);

}  // namespace xffl::comm

#endif
