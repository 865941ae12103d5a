//! Reading variable-length answers (rank lists, text) whose C calls report XFFL_EBUFSIZE with the
//! required length: try a small buffer, then retry once with exactly the reported size.
use std::os::raw::{c_char, c_int};

use xffl_sys as sys;

use crate::error::{check, Error, Result};

/// Enough for most rank lists without a second call.
const FIRST_GUESS: usize = 64;

/// Calls `call(buf, cap, &mut len)` until the answer fits; returns the `len` values written.
pub(crate) fn read_ints(mut call: impl FnMut(*mut c_int, usize, &mut usize) -> sys::xffl_status_t) -> Result<Vec<i32>> {
    let mut buf: Vec<c_int> = vec![0; FIRST_GUESS];
    // The length cannot change between the calls (the state is borrowed), but a loop with a bound
    // is as cheap as a proof.
    for _ in 0..3 {
        let mut len = 0usize;
        let status = call(buf.as_mut_ptr(), buf.len(), &mut len);
        if status == sys::xffl_status::XFFL_EBUFSIZE && len > buf.len() {
            buf.resize(len, 0);
            continue;
        }
        check(status)?;
        buf.truncate(len);
        return Ok(buf);
    }
    Err(Error::new(crate::ErrorKind::Internal, "the answer kept growing while it was read"))
}

/// Calls `call(buf, cap, &mut len)` until the NUL-terminated text fits; returns it without the NUL.
pub(crate) fn read_text(mut call: impl FnMut(*mut c_char, usize, &mut usize) -> sys::xffl_status_t) -> Result<String> {
    let mut buf: Vec<u8> = vec![0; 256];
    for _ in 0..3 {
        let mut len = 0usize;
        let status = call(buf.as_mut_ptr().cast(), buf.len(), &mut len);
        if status == sys::xffl_status::XFFL_EBUFSIZE && len >= buf.len() {
            buf.resize(len + 1, 0); // the C side needs room for the NUL
            continue;
        }
        check(status)?;
        buf.truncate(len);
        return String::from_utf8(buf).map_err(|e| {
            Error::new(crate::ErrorKind::Internal, format!("the library returned text that is not UTF-8: {e}"))
        });
    }
    Err(Error::new(crate::ErrorKind::Internal, "the text kept growing while it was read"))
}
