//! Nonblocking federated averages: the model crosses while the caller computes (`xffl/request.h`).
use std::marker::PhantomData;
use std::os::raw::c_int;
use std::ptr::NonNull;

use xffl_sys as sys;

use crate::error::{check, Error, ErrorKind, Result};
use crate::state::State;

/// A federated average in flight, from [`State::federated_average_start`] or
/// [`State::federated_average_many_start`].
///
/// The request owns the buffers it averages (`B`: a `Vec<T>` or a `Vec<Vec<T>>`) until it is done, so
/// no safe code can touch them meanwhile, and it borrows its state, which cannot be dropped before it.
/// [`wait`](Request::wait) hands the buffers back, averaged: the same bits as the blocking call.
/// While the request is in flight the state answers its getters; every other call on it fails with
/// [`ErrorKind::State`](crate::ErrorKind::State) naming the request's C call.
///
/// # Drop
/// Dropping a request still in flight waits for it (`xffl_request_free`: bounded by the timeout,
/// never panics) and drops the buffers after. Leaking it (`std::mem::forget`) leaks the buffers too:
/// the library may still write them, and no one can read them.
pub struct Request<'state, B> {
    raw: NonNull<sys::xffl_request_t>,
    buffers: Option<B>,
    _state: PhantomData<&'state State>,
}

impl<'state, B> Request<'state, B> {
    /// Wraps a request the library just started on `buffers`.
    ///
    /// # Safety
    /// `raw` is a live request that owns its run over memory of `buffers` (whose heap memory does not
    /// move when `buffers` does) and ends before `'state`'s state is dropped.
    pub(crate) unsafe fn started(raw: *mut sys::xffl_request_t, buffers: B) -> Result<Self> {
        match NonNull::new(raw) {
            Some(raw) => Ok(Request { raw, buffers: Some(buffers), _state: PhantomData }),
            None => Err(Error::new(ErrorKind::Internal, "the library returned XFFL_OK and a NULL request")),
        }
    }

    /// Whether the request is done (`xffl_request_test`): never blocks. `Ok(false)` while in flight,
    /// `Ok(true)` once done and successful; the average's error once done and failed (a peer gone:
    /// [`ErrorKind::Timeout`](crate::ErrorKind::Timeout) or [`ErrorKind::Peer`](crate::ErrorKind::Peer)).
    pub fn test(&mut self) -> Result<bool> {
        let mut done: c_int = 0;
        // SAFETY: self.raw is a live request (freed only by drop); done is a valid out pointer.
        check(unsafe { sys::xffl_request_test(self.raw.as_ptr(), &mut done) })?;
        Ok(done != 0)
    }

    /// Waits until the request is done (`xffl_request_wait`, sleeping, bounded by the timeout) and
    /// returns its buffers, averaged; or the average's error (the buffers' content is then
    /// unspecified, and they are dropped).
    pub fn wait(mut self) -> Result<B> {
        // SAFETY: self.raw is a live request (freed only by drop).
        check(unsafe { sys::xffl_request_wait(self.raw.as_ptr()) })?;
        Ok(self.buffers.take().expect("a request holds its buffers until wait"))
    }
}

impl<B> Drop for Request<'_, B> {
    fn drop(&mut self) {
        // SAFETY: self.raw is a live request, freed exactly once here; the free waits for a run still
        // in flight, so the buffers (dropped after this) are no longer written.
        unsafe { sys::xffl_request_free(self.raw.as_ptr()) };
    }
}

// SAFETY: a request may be tested, waited for and freed from any thread (xffl/request.h), one call at
// a time, which &mut self and ownership ensure; it holds buffers B and a borrow of a State, which is
// Send.
unsafe impl<B: Send> Send for Request<'_, B> {}
