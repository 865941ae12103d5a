//! Element types of communication buffers: the sealed [`DType`] trait and the 16-bit float types.
use std::fmt;

use xffl_sys as sys;

mod sealed {
    pub trait Sealed {}
}

/// An element type the library can communicate and reduce: `f32`, `f64`, `i8`, `u8`, `i32`, `i64`,
/// [`F16`] and [`BF16`].
///
/// The trait is sealed: the C library knows exactly these types, and every implementation promises
/// that a slice of `Self` is laid out as the C type named by [`DType::DATA_TYPE`].
///
/// ```
/// use xffl::{DType, DataType, F16};
/// assert_eq!(<f32 as DType>::DATA_TYPE, DataType::F32);
/// assert_eq!(<F16 as DType>::DATA_TYPE, DataType::F16);
/// ```
pub trait DType: sealed::Sealed + Copy + 'static {
    /// The C element type of this Rust type.
    const DATA_TYPE: DataType;
}

/// The element types of the C API (`xffl_dtype_t`).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataType {
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
    /// IEEE binary16, reduced with f32 accumulation.
    F16,
    /// bfloat16, reduced with f32 accumulation.
    BF16,
    /// Signed 8-bit integer.
    I8,
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 32-bit integer.
    I32,
    /// Signed 64-bit integer.
    I64,
}

impl DataType {
    pub(crate) fn raw(self) -> sys::xffl_dtype_t {
        use sys::xffl_dtype as d;
        match self {
            DataType::F32 => d::XFFL_F32,
            DataType::F64 => d::XFFL_F64,
            DataType::F16 => d::XFFL_F16,
            DataType::BF16 => d::XFFL_BF16,
            DataType::I8 => d::XFFL_I8,
            DataType::U8 => d::XFFL_U8,
            DataType::I32 => d::XFFL_I32,
            DataType::I64 => d::XFFL_I64,
        }
    }
}

macro_rules! impl_dtype {
    ($($rust:ty => $variant:ident),* $(,)?) => {$(
        impl sealed::Sealed for $rust {}
        impl DType for $rust {
            const DATA_TYPE: DataType = DataType::$variant;
        }
    )*};
}

impl_dtype!(f32 => F32, f64 => F64, i8 => I8, u8 => U8, i32 => I32, i64 => I64, F16 => F16, BF16 => BF16);

/// An IEEE 754 binary16 value, stored as its bits (`#[repr(transparent)]` over `u16`).
///
/// Equality compares bit patterns. Conversions from `f32` round to nearest, ties to even.
///
/// ```
/// use xffl::F16;
/// let x = F16::from_f32(1.5);
/// assert_eq!(x.to_bits(), 0x3e00);
/// assert_eq!(x.to_f32(), 1.5);
/// assert_eq!(F16::from_f32(65520.0).to_f32(), f32::INFINITY); // beyond the largest half
/// ```
#[repr(transparent)]
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct F16(u16);

impl F16 {
    /// The value with these bits.
    pub const fn from_bits(bits: u16) -> F16 {
        F16(bits)
    }

    /// The bits of the value.
    pub const fn to_bits(self) -> u16 {
        self.0
    }

    /// The nearest half to `value` (ties to even; overflow gives infinity; NaN stays NaN).
    pub fn from_f32(value: f32) -> F16 {
        F16(f32_to_f16_bits(value))
    }

    /// The exact `f32` of this half.
    pub fn to_f32(self) -> f32 {
        f16_bits_to_f32(self.0)
    }
}

impl From<F16> for f32 {
    fn from(value: F16) -> f32 {
        value.to_f32()
    }
}

impl fmt::Debug for F16 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "F16({})", self.to_f32())
    }
}

impl fmt::Display for F16 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_f32(), f)
    }
}

/// A bfloat16 value (the upper half of an `f32`), stored as its bits (`#[repr(transparent)]` over
/// `u16`).
///
/// Equality compares bit patterns. Conversions from `f32` round to nearest, ties to even.
///
/// ```
/// use xffl::BF16;
/// assert_eq!(BF16::from_f32(1.0).to_bits(), 0x3f80);
/// assert_eq!(BF16::from_f32(-2.5).to_f32(), -2.5);
/// ```
#[repr(transparent)]
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct BF16(u16);

impl BF16 {
    /// The value with these bits.
    pub const fn from_bits(bits: u16) -> BF16 {
        BF16(bits)
    }

    /// The bits of the value.
    pub const fn to_bits(self) -> u16 {
        self.0
    }

    /// The nearest bfloat16 to `value` (ties to even; NaN stays NaN).
    pub fn from_f32(value: f32) -> BF16 {
        let bits = value.to_bits();
        if value.is_nan() {
            return BF16(((bits >> 16) as u16) | 0x0040); // keep it a (quiet) NaN
        }
        let rounding = 0x7fff + ((bits >> 16) & 1);
        BF16((bits.wrapping_add(rounding) >> 16) as u16)
    }

    /// The exact `f32` of this bfloat16.
    pub fn to_f32(self) -> f32 {
        f32::from_bits(u32::from(self.0) << 16)
    }
}

impl From<BF16> for f32 {
    fn from(value: BF16) -> f32 {
        value.to_f32()
    }
}

impl fmt::Debug for BF16 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BF16({})", self.to_f32())
    }
}

impl fmt::Display for BF16 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_f32(), f)
    }
}

/// Rounds `mantissa >> shift` to nearest, ties to even.
fn round_shift(mantissa: u32, shift: u32) -> u32 {
    let kept = mantissa >> shift;
    let dropped = mantissa & ((1u32 << shift) - 1);
    let half = 1u32 << (shift - 1);
    if dropped > half || (dropped == half && kept & 1 == 1) {
        kept + 1
    } else {
        kept
    }
}

fn f32_to_f16_bits(value: f32) -> u16 {
    let bits = value.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exponent = ((bits >> 23) & 0xff) as i32;
    let mantissa = bits & 0x007f_ffff;
    if exponent == 0xff {
        let nan = if mantissa != 0 { 0x0200 | (mantissa >> 13) as u16 } else { 0 };
        return sign | 0x7c00 | nan;
    }
    let half_exponent = exponent - 127 + 15;
    if half_exponent >= 0x1f {
        return sign | 0x7c00;
    }
    if half_exponent <= 0 {
        if half_exponent < -10 {
            return sign; // below half the smallest subnormal: a signed zero
        }
        // Subnormal half: the implicit bit becomes explicit; a carry gives the smallest normal.
        return sign | round_shift(mantissa | 0x0080_0000, (14 - half_exponent) as u32) as u16;
    }
    // A carry out of the mantissa correctly bumps the exponent (up to infinity).
    sign | round_shift(((half_exponent as u32) << 23) | mantissa, 13) as u16
}

fn f16_bits_to_f32(bits: u16) -> f32 {
    let negative = bits & 0x8000 != 0;
    let exponent = u32::from((bits >> 10) & 0x1f);
    let mantissa = u32::from(bits & 0x03ff);
    let magnitude = match exponent {
        0 => mantissa as f32 / 16_777_216.0, // subnormal (or zero): mantissa * 2^-24, exact
        0x1f => f32::from_bits(0x7f80_0000 | (mantissa << 13)),
        _ => f32::from_bits(((exponent + 127 - 15) << 23) | (mantissa << 13)),
    };
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_known_values() {
        for (value, bits) in [
            (0.0f32, 0x0000u16),
            (-0.0, 0x8000),
            (1.0, 0x3c00),
            (-2.0, 0xc000),
            (65504.0, 0x7bff),
            (6.103_515_6e-5, 0x0400), // smallest normal
            (5.960_464_5e-8, 0x0001), // smallest subnormal
            (0.1, 0x2e66),
            (f32::INFINITY, 0x7c00),
        ] {
            assert_eq!(F16::from_f32(value).to_bits(), bits, "{value}");
        }
        assert!(F16::from_f32(f32::NAN).to_f32().is_nan());
        assert_eq!(F16::from_f32(1.0e6).to_bits(), 0x7c00);
        assert_eq!(F16::from_f32(2.0e-8).to_bits(), 0x0000); // below half the smallest subnormal
    }

    #[test]
    fn f16_round_trips_every_finite_half() {
        for bits in 0u16..=0xffff {
            let half = F16::from_bits(bits);
            if half.to_f32().is_nan() {
                continue;
            }
            assert_eq!(F16::from_f32(half.to_f32()).to_bits(), bits, "bits {bits:#06x}");
        }
    }

    #[test]
    fn f16_ties_go_to_even() {
        // 1 + 2^-11 lies halfway between 1 (even) and 1 + 2^-10: it rounds down to 1.
        assert_eq!(F16::from_f32(1.0 + 2f32.powi(-11)).to_bits(), 0x3c00);
        // 1 + 3 * 2^-11 lies halfway between 1 + 2^-10 (odd) and 1 + 2^-9: it rounds up.
        assert_eq!(F16::from_f32(1.0 + 3.0 * 2f32.powi(-11)).to_bits(), 0x3c02);
    }

    #[test]
    fn bf16_known_values() {
        assert_eq!(BF16::from_f32(1.0).to_bits(), 0x3f80);
        assert_eq!(BF16::from_f32(-1.0).to_bits(), 0xbf80);
        assert_eq!(BF16::from_f32(3.140625).to_f32(), 3.140625);
        assert!(BF16::from_f32(f32::NAN).to_f32().is_nan());
        // 1 + 2^-8 is halfway between 1 (even) and 1 + 2^-7: ties to even.
        assert_eq!(BF16::from_f32(1.0 + 2f32.powi(-8)).to_bits(), 0x3f80);
        for bits in (0u16..=0xffff).step_by(7) {
            let value = BF16::from_bits(bits);
            if !value.to_f32().is_nan() {
                assert_eq!(BF16::from_f32(value.to_f32()).to_bits(), bits);
            }
        }
    }
}
