//! Process groups and their collectives.
use std::ffi::CStr;
use std::marker::PhantomData;
use std::ops::Deref;
use std::os::raw::{c_int, c_void};
use std::ptr::{self, NonNull};

use xffl_sys as sys;

use crate::buffer::read_ints;
use crate::dtype::DType;
use crate::error::{check, Error, Result};
use crate::state::State;
use crate::types::RedOp;

/// A process group borrowed from its [`State`]: a member list (global ranks), this rank's index in
/// it, a description, and (with a backend) a communicator.
///
/// Get one with [`State::group`]; it lives as long as the borrow of the state, so the compiler
/// rejects changing the layout (which frees the layout's groups) while it is in use.
///
/// # Collectives
/// Every member calls the same collectives on the same group in the same order, with the same
/// lengths, types, ops and roots. Every wait is bounded by the state's timeout. Reductions are
/// deterministic: every member ends with bit-identical results. Slice lengths are checked here,
/// before any C call, and a mismatch is an [`ErrorKind::InvalidArgument`](crate::ErrorKind) that
/// names both lengths. With [`Backend::None`](crate::Backend::None) only one-member groups work.
/// Buffers are host memory (for CUDA buffers and streams use `xffl-sys` with [`Group::as_raw`]).
///
/// # Threads
/// Neither [`Send`] nor [`Sync`]: a group is part of its state, which is not thread-safe, and it
/// borrows that state, so it stays on the state's thread.
///
/// ```compile_fail,E0277
/// fn sent_to_another_thread<T: Send>() {}
/// sent_to_another_thread::<xffl::Group<'static>>(); // Group is not Send
/// ```
///
/// ```
/// use xffl::{Backend, Device, GroupKind, RedOp, State};
/// let mut st = State::new()?;
/// st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 0, 1)?;
/// let world = st.group(GroupKind::World, 0)?;
/// let mut sum = [0i64; 3];
/// world.allreduce(&[1, 2, 3], &mut sum, RedOp::Sum)?; // one member: the sum is the input
/// assert_eq!(sum, [1, 2, 3]);
/// world.barrier()?;
/// # Ok::<(), xffl::Error>(())
/// ```
#[derive(Debug)]
pub struct Group<'state> {
    raw: NonNull<sys::xffl_group_t>,
    _state: PhantomData<&'state State>,
}

impl<'state> Group<'state> {
    /// # Safety
    /// `raw` must be a group of a state that stays alive and keeps the group for `'state`.
    pub(crate) unsafe fn borrowed(raw: NonNull<sys::xffl_group_t>) -> Group<'state> {
        Group { raw, _state: PhantomData }
    }

    /// The C handle, for calls through `xffl-sys` that this crate does not wrap. It stays owned by
    /// the state (or the [`OwnedGroup`]): do not destroy it.
    pub fn as_raw(&self) -> *mut sys::xffl_group_t {
        self.raw.as_ptr()
    }

    fn ptr(&self) -> *mut sys::xffl_group_t {
        self.raw.as_ptr()
    }

    /// Number of members.
    pub fn size(&self) -> Result<usize> {
        let mut size: c_int = 0;
        // SAFETY: self.ptr() is a live group; size is a valid out pointer.
        check(unsafe { sys::xffl_group_size(self.ptr(), &mut size) })?;
        Ok(size.max(0) as usize)
    }

    /// This rank's index among the members (its group rank).
    pub fn rank(&self) -> Result<usize> {
        let mut rank: c_int = 0;
        // SAFETY: self.ptr() is a live group; rank is a valid out pointer.
        check(unsafe { sys::xffl_group_rank(self.ptr(), &mut rank) })?;
        Ok(rank.max(0) as usize)
    }

    /// The members as global ranks, in group-rank order.
    pub fn ranks(&self) -> Result<Vec<i32>> {
        read_ints(|buf, cap, len| {
            // SAFETY: self.ptr() is a live group; buf holds cap ints; len is a valid out pointer.
            unsafe { sys::xffl_group_ranks(self.ptr(), buf, cap, len) }
        })
    }

    /// A human-readable description (`"federated group of rank 3"`).
    pub fn description(&self) -> String {
        // SAFETY: self.ptr() is a live group; the string is owned by the group and copied at once.
        unsafe { CStr::from_ptr(sys::xffl_group_description(self.ptr())) }.to_string_lossy().into_owned()
    }

    /// `recv[i]` = `op` over the members of `send[i]`, on every member (`xffl_allreduce`).
    /// `send` and `recv` must have the same length.
    pub fn allreduce<T: DType>(&self, send: &[T], recv: &mut [T], op: RedOp) -> Result<()> {
        if send.len() != recv.len() {
            return Err(Error::invalid(format!(
                "Group::allreduce: send has {} elements, recv has {}; they must be equal",
                send.len(),
                recv.len()
            )));
        }
        // SAFETY: send and recv are valid for send.len() elements of T's C type and do not overlap.
        check(unsafe {
            sys::xffl_allreduce(
                self.ptr(),
                send.as_ptr().cast::<c_void>(),
                recv.as_mut_ptr().cast::<c_void>(),
                send.len(),
                T::DATA_TYPE.raw(),
                op.raw(),
                ptr::null_mut(),
            )
        })
    }

    /// In-place [`allreduce`](Group::allreduce): `buf[i]` becomes `op` over the members' `buf[i]`.
    pub fn allreduce_in_place<T: DType>(&self, buf: &mut [T], op: RedOp) -> Result<()> {
        let pointer = buf.as_mut_ptr().cast::<c_void>();
        // SAFETY: the same pointer as send and recv is the API's in-place form; buf is exclusively
        // borrowed for buf.len() elements of T's C type.
        check(unsafe {
            sys::xffl_allreduce(self.ptr(), pointer, pointer, buf.len(), T::DATA_TYPE.raw(), op.raw(), ptr::null_mut())
        })
    }

    /// Copies `buf` of the member whose global rank is `root` to every member (`xffl_broadcast`).
    /// In place by nature.
    pub fn broadcast<T: DType>(&self, buf: &mut [T], root: i32) -> Result<()> {
        // SAFETY: buf is exclusively borrowed for buf.len() elements of T's C type.
        check(unsafe {
            sys::xffl_broadcast(
                self.ptr(),
                buf.as_mut_ptr().cast::<c_void>(),
                buf.len(),
                T::DATA_TYPE.raw(),
                root,
                ptr::null_mut(),
            )
        })
    }

    /// `recv` = the `send` slices of all members, concatenated in group-rank order
    /// (`xffl_allgather`). `recv.len()` must be `send.len() * size()`.
    pub fn allgather<T: DType>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        let members = self.size()?;
        if send.len().checked_mul(members) != Some(recv.len()) {
            return Err(Error::invalid(format!(
                "Group::allgather: recv has {} elements, expected send ({}) x {} members",
                recv.len(),
                send.len(),
                members
            )));
        }
        // SAFETY: send holds send.len() and recv send.len() * members elements of T's C type; the
        // slices do not overlap.
        check(unsafe {
            sys::xffl_allgather(
                self.ptr(),
                send.as_ptr().cast::<c_void>(),
                recv.as_mut_ptr().cast::<c_void>(),
                send.len(),
                T::DATA_TYPE.raw(),
                ptr::null_mut(),
            )
        })
    }

    /// `recv` = block `rank()` of the reduction of all members' `send` (`xffl_reduce_scatter`).
    /// `send.len()` must be `recv.len() * size()`.
    pub fn reduce_scatter<T: DType>(&self, send: &[T], recv: &mut [T], op: RedOp) -> Result<()> {
        let members = self.size()?;
        if recv.len().checked_mul(members) != Some(send.len()) {
            return Err(Error::invalid(format!(
                "Group::reduce_scatter: send has {} elements, expected recv ({}) x {} members",
                send.len(),
                recv.len(),
                members
            )));
        }
        // SAFETY: send holds recv.len() * members and recv recv.len() elements of T's C type; the
        // slices do not overlap.
        check(unsafe {
            sys::xffl_reduce_scatter(
                self.ptr(),
                send.as_ptr().cast::<c_void>(),
                recv.as_mut_ptr().cast::<c_void>(),
                recv.len(),
                T::DATA_TYPE.raw(),
                op.raw(),
                ptr::null_mut(),
            )
        })
    }

    /// Returns once every member has entered the barrier (bounded by the timeout).
    pub fn barrier(&self) -> Result<()> {
        // SAFETY: self.ptr() is a live group.
        check(unsafe { sys::xffl_barrier(self.ptr()) })
    }
}

/// A group made by [`State::create_process_group`], owned by the caller and destroyed
/// (`xffl_group_destroy`: local, never blocks, never panics) when dropped.
///
/// It dereferences to [`Group`] for the queries and collectives. It borrows its state, so it cannot
/// outlive it; this does not compile:
///
/// ```compile_fail,E0505
/// use xffl::{Backend, Device, State};
/// let mut st = State::new().unwrap();
/// st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 0, 2).unwrap();
/// let group = st.create_process_group(&[0], "alone").unwrap();
/// drop(st); // error[E0505]: cannot move out of `st` because it is borrowed
/// group.barrier().unwrap();
/// ```
///
/// Nor can the layout change under a borrowed group:
///
/// ```compile_fail,E0502
/// use xffl::{Backend, Device, GroupKind, State};
/// let mut st = State::new().unwrap();
/// st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 0, 2).unwrap();
/// st.set_fsdp().unwrap();
/// let fsdp = st.group(GroupKind::Fsdp, 0).unwrap();
/// st.unset_fsdp().unwrap(); // error[E0502]: `st` is also borrowed as immutable
/// fsdp.barrier().unwrap();
/// ```
///
/// ```
/// use xffl::{Backend, Device, RedOp, State};
/// let mut st = State::new()?;
/// st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 0, 2)?;
/// let alone = st.create_process_group(&[0], "just me")?;
/// let mut x = [1.5f32, 2.5];
/// alone.allreduce_in_place(&mut x, RedOp::Avg)?;
/// assert_eq!(x, [1.5, 2.5]);
/// drop(alone); // destroyed here, before the state
/// # Ok::<(), xffl::Error>(())
/// ```
#[derive(Debug)]
pub struct OwnedGroup<'state> {
    group: Group<'state>,
}

impl<'state> OwnedGroup<'state> {
    /// # Safety
    /// `raw` must be a new group owned by the caller, of a state that outlives `'state`.
    pub(crate) unsafe fn owned(raw: NonNull<sys::xffl_group_t>) -> OwnedGroup<'state> {
        OwnedGroup { group: Group::borrowed(raw) }
    }
}

impl<'state> Deref for OwnedGroup<'state> {
    type Target = Group<'state>;

    fn deref(&self) -> &Group<'state> {
        &self.group
    }
}

impl Drop for OwnedGroup<'_> {
    /// `xffl_group_destroy`: local, never blocks, never panics.
    fn drop(&mut self) {
        // SAFETY: the group is owned by us and its state is still alive (borrowck).
        unsafe { sys::xffl_group_destroy(self.group.raw.as_ptr()) }
    }
}
