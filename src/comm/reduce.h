// Element-wise reduction kernels of the collectives. Contiguous loops on restrict pointers, built at
// -O3 so they vectorise and run at memory speed.
//
// Semantics, identical on every member (the collectives rely on it for bit-identical results):
// - Operands have an order: out = left op right. The algorithms always pass the lower-indexed
//   members' partial result as left, so even MIN/MAX on NaN or signed zeros agree everywhere.
// - f16 and bf16 are never reduced in their own type: accumulation_dtype() gives f32, the data is
//   widened, reduced and transmitted in f32, and narrowed once at the end (round to nearest even).
// - Integer SUM and PROD wrap modulo 2^bits (two's complement), never undefined behaviour.
// - AVG reduces as SUM and divides once at the end (divide()); floats divide by the member count,
//   integers truncate toward zero. i8, u8 and i32 sum in i64 for AVG, so their mean never overflows;
//   i64 AVG sums in i64 and wraps like SUM.
#ifndef XFFL_SRC_COMM_REDUCE_H
#define XFFL_SRC_COMM_REDUCE_H

#include <cstddef>

#include "xffl/types.h"

namespace xffl::comm {

// The type a reduction of `dtype` with `op` is carried out and transmitted in.
xffl_dtype_t accumulation_dtype(xffl_dtype_t dtype, xffl_redop_t op);

// out[i] = left[i] op right[i] for count elements of `type` (AVG combines as SUM). out may be the
// same pointer as left or right; partial overlaps are not allowed.
void combine(void *out, const void *left, const void *right, size_t count, xffl_dtype_t type, xffl_redop_t op);

// values[i] /= divisor: AVG's single division (integers truncate toward zero).
void divide(void *values, size_t count, xffl_dtype_t type, int divisor);

// Converts count elements between a dtype and its accumulation type (or copies when they are equal):
// f16/bf16 <-> f32, i8/u8/i32 <-> i64. Narrowing integers keeps the low bits (a mean always fits).
void convert(const void *from, xffl_dtype_t from_type, void *to, xffl_dtype_t to_type, size_t count);

}  // namespace xffl::comm

#endif
