//! The distributed state: who this process is in the job, its layout, its groups.
use std::ffi::CString;
use std::os::raw::{c_int, c_void};
use std::ptr::{self, NonNull};

use xffl_sys as sys;

use crate::buffer::{read_ints, read_text};
use crate::dtype::DType;
use crate::error::{check, to_c_int, Error, ErrorKind, Result};
use crate::group::{Group, OwnedGroup};
use crate::mesh::Mesh;
use crate::request::Request;
use crate::types::{Attr, Backend, Device, Format, GroupKind, MeshKind, OptionKey};

/// The distributed state of one process: the C-ABI counterpart of xFFL's Python `DistributedState`.
///
/// A state is built by a fixed sequence of calls:
/// 1. [`State::new`],
/// 2. [`set_global`](State::set_global) (required first; collective for UCX and NCCL),
/// 3. optionally [`set_node`](State::set_node), [`set_exec_device`](State::set_exec_device),
///    [`set_init_device`](State::set_init_device),
/// 4. one layout: [`set_fsdp`](State::set_fsdp), [`set_hsdp`](State::set_hsdp) or
///    [`federated_scaling`](State::federated_scaling) (the `unset_*` methods remove it).
///
/// A call out of this order fails with [`ErrorKind::State`] and changes nothing; an invalid input
/// fails with [`ErrorKind::InvalidArgument`] before anything changes.
///
/// # Borrowing
/// Methods that can replace the layout (and so free the groups it made) take `&mut self`; everything
/// else takes `&self`. A [`Group`] borrows the state, so the compiler rejects changing the layout
/// while a group of the old layout is still in use, and an [`OwnedGroup`] cannot outlive its state.
///
/// # Threads
/// `State` is [`Send`] but not [`Sync`]. The C state is not thread-safe: calls on one state must not
/// overlap, and many calls here take `&self`, so sharing `&State` between threads would let them
/// overlap; hence not `Sync`. Moving the whole state to another thread is fine: the library keeps
/// nothing per thread for a state except the last-error message, which this crate copies right after
/// each failing call on the calling thread. Groups borrow the state and therefore stay on its thread.
///
/// ```compile_fail,E0277
/// fn shared_between_threads<T: Sync>() {}
/// shared_between_threads::<xffl::State>(); // State is not Sync
/// ```
///
/// # Drop
/// Dropping a state calls `xffl_state_destroy`: local, never blocks on peers, never panics.
///
/// # Example
/// ```
/// use xffl::{Attr, Backend, Device, GroupKind, State};
///
/// // Rank 5 of a 12-rank job, federated (4, 8) with replicas of 2 (spec section 5.4).
/// let mut st = State::new()?;
/// st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 5, 12)?;
/// st.federated_scaling(&[4, 8], Some(2))?;
/// assert_eq!(st.get_int(Attr::FederatedRank)?, 1);
/// assert_eq!(st.get_int(Attr::ReceiveFrom)?, 7);
/// assert_eq!(st.group(GroupKind::Replica, 0)?.ranks()?, vec![5, 7, 9, 11]);
/// # Ok::<(), xffl::Error>(())
/// ```
#[derive(Debug)]
pub struct State {
    raw: NonNull<sys::xffl_state_t>,
}

// SAFETY: the C state has no thread affinity; it only must not be used by two threads at once,
// which `!Sync` (from the NonNull field) and the borrow rules guarantee. See "Threads" above.
unsafe impl Send for State {}

fn c_string(text: &str, what: &str) -> Result<CString> {
    CString::new(text).map_err(|_| Error::invalid(format!("{what} {text:?} contains a NUL byte")))
}

impl State {
    /// An empty state (`xffl_state_create`). Local: never communicates. Options start from the
    /// environment (`XFFL_TIMEOUT`, `XFFL_LOG_LEVEL`).
    ///
    /// ```
    /// let st = xffl::State::new()?;
    /// assert!(!st.is_node_setup());
    /// # Ok::<(), xffl::Error>(())
    /// ```
    pub fn new() -> Result<State> {
        let mut raw = ptr::null_mut();
        // SAFETY: raw is a valid out pointer; it is written only on success.
        check(unsafe { sys::xffl_state_create(&mut raw) })?;
        State::from_created(raw)
    }

    /// A state set up entirely from the launcher's environment (`xffl_state_from_env`): torchrun,
    /// SLURM, Open MPI and `XFFL_*` variables, then `set_global`, `set_node`, `set_exec_device` and
    /// the layout. Collective like [`set_global`](State::set_global).
    ///
    /// Fails with [`ErrorKind::InvalidArgument`] naming a missing or contradictory variable (and, in
    /// builds that cannot read the environment yet, with [`ErrorKind::Unsupported`]).
    pub fn from_env() -> Result<State> {
        let mut raw = ptr::null_mut();
        // SAFETY: raw is a valid out pointer; it is written only on success.
        check(unsafe { sys::xffl_state_from_env(&mut raw) })?;
        State::from_created(raw)
    }

    fn from_created(raw: *mut sys::xffl_state_t) -> Result<State> {
        NonNull::new(raw)
            .map(|raw| State { raw })
            .ok_or_else(|| Error::new(ErrorKind::Internal, "the library returned XFFL_OK and a NULL state"))
    }

    /// The C handle, for calls through `xffl-sys` that this crate does not wrap. It stays owned by
    /// this `State`: do not destroy it.
    pub fn as_raw(&self) -> *mut sys::xffl_state_t {
        self.raw.as_ptr()
    }

    fn ptr(&self) -> *mut sys::xffl_state_t {
        self.raw.as_ptr()
    }

    /// Sets the global information and brings up the backend (`xffl_set_global`); makes the WORLD
    /// group. Collective for UCX and NCCL (every rank of the job calls it); local for
    /// [`Backend::None`].
    ///
    /// Fails with `InvalidArgument` (empty address, rank outside `[0, world_size)`, ...), `State` if
    /// already called, `Unsupported` for a backend or device this build lacks, and for UCX and NCCL
    /// also `Timeout`, `Auth`, `Network`, `Peer`, `Backend`.
    ///
    /// ```
    /// use xffl::{Attr, Backend, Device, ErrorKind, State};
    /// let mut st = State::new()?;
    /// let err = st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 5, 4).unwrap_err();
    /// assert_eq!(err.code, ErrorKind::InvalidArgument);
    /// assert!(err.message.contains("rank 5"), "{}", err.message);
    /// st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 3, 4)?;
    /// assert_eq!(st.get_int(Attr::Rank)?, 3);
    /// # Ok::<(), xffl::Error>(())
    /// ```
    pub fn set_global(
        &mut self,
        backend: Backend,
        device_type: Device,
        master_addr: &str,
        master_port: u16,
        rank: i32,
        world_size: i32,
    ) -> Result<()> {
        let addr = c_string(master_addr, "master address")?;
        // SAFETY: self.ptr() is a live state; addr is NUL-terminated and outlives the call.
        check(unsafe {
            sys::xffl_set_global(
                self.ptr(),
                backend.raw(),
                device_type.raw(),
                addr.as_ptr(),
                c_int::from(master_port),
                rank,
                world_size,
            )
        })
    }

    /// Sets the node information (`xffl_set_node`; homogeneous nodes, as in xFFL). Local. Before the
    /// layout.
    pub fn set_node(
        &mut self,
        node_local_rank: i32,
        node_local_size: i32,
        node_rank: i32,
        node_world_size: i32,
    ) -> Result<()> {
        // SAFETY: self.ptr() is a live state.
        check(unsafe { sys::xffl_set_node(self.ptr(), node_local_rank, node_local_size, node_rank, node_world_size) })
    }

    /// Chooses the execution device and the number of stream instances K (`xffl_set_exec_device`).
    /// `device_index` is `-1` to choose `node_local_rank` modulo the device count. Local. K is chosen
    /// before the layout, because it shapes the FEDERATED and REPLICA groups; after the layout (as
    /// [`from_env`](State::from_env) leaves it) the device may still be chosen with the same K.
    pub fn set_exec_device(&mut self, device_index: i32, streams: i32) -> Result<()> {
        // SAFETY: self.ptr() is a live state.
        check(unsafe { sys::xffl_set_exec_device(self.ptr(), device_index, streams) })
    }

    /// Chooses where the model is initialized (`xffl_set_init_device`). Local.
    pub fn set_init_device(&mut self, init_device: Device, meta_initialization: bool) -> Result<()> {
        // SAFETY: self.ptr() is a live state.
        check(unsafe { sys::xffl_set_init_device(self.ptr(), init_device.raw(), c_int::from(meta_initialization)) })
    }

    /// FSDP over the whole world (`xffl_set_fsdp`): the FSDP mesh is `0 .. W-1`.
    pub fn set_fsdp(&mut self) -> Result<()> {
        // SAFETY: self.ptr() is a live state.
        check(unsafe { sys::xffl_set_fsdp(self.ptr()) })
    }

    /// FSDP over the caller's 1-D mesh (`xffl_set_fsdp_mesh`, xFFL's `set_fsdp(mesh)`): the FSDP
    /// group is those ranks, in ascending order whatever order they are given in. The caller must be
    /// one of them; a rank twice or outside the world is an `InvalidArgument` error. With NCCL every
    /// rank of the world calls it with the mesh that contains it (the meshes partition the world).
    ///
    /// ```
    /// use xffl::{Backend, Device, MeshKind, State};
    /// let mut st = State::new()?;
    /// st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 5, 12)?;
    /// st.set_fsdp_mesh(&[7, 5, 9])?;
    /// assert_eq!(st.mesh(MeshKind::Fsdp)?.ranks(), &[5, 7, 9]);
    /// # Ok::<(), xffl::Error>(())
    /// ```
    pub fn set_fsdp_mesh(&mut self, ranks: &[i32]) -> Result<()> {
        // SAFETY: self.ptr() is a live state; ranks holds ranks.len() ints.
        check(unsafe { sys::xffl_set_fsdp_mesh(self.ptr(), ranks.as_ptr(), ranks.len()) })
    }

    /// HSDP from its fields (`xffl_set_hsdp_manual`, xFFL's `_partial_hsdp_setup_manual`),
    /// validated and completed into the layout [`set_hsdp`](State::set_hsdp)`(replica_local_size)`
    /// makes. The fields must be this rank's place in the row-major grid, and `replica_world_size`
    /// has one entry, `W / replica_local_size`.
    pub fn set_hsdp_manual(
        &mut self,
        replica_local_rank: i32,
        replica_local_size: i32,
        replica_rank: i32,
        replica_world_size: &[i32],
    ) -> Result<()> {
        // SAFETY: self.ptr() is a live state; replica_world_size holds its len() ints.
        check(unsafe {
            sys::xffl_set_hsdp_manual(
                self.ptr(),
                replica_local_rank,
                replica_local_size,
                replica_rank,
                replica_world_size.as_ptr(),
                replica_world_size.len(),
            )
        })
    }

    /// The senders `C_g` of federated group `federated_rank` (`xffl_get_communicating_processes`,
    /// xFFL's `_get_communicating_processes`): one rank per shard, or every rank of the group without
    /// HSDP. `State` error without federated scaling.
    ///
    /// ```
    /// use xffl::{Backend, Device, State};
    /// let mut st = State::new()?;
    /// st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 5, 12)?;
    /// st.federated_scaling(&[4, 8], Some(2))?;
    /// assert_eq!(st.communicating_processes(1)?, vec![4, 7]);
    /// # Ok::<(), xffl::Error>(())
    /// ```
    pub fn communicating_processes(&self, federated_rank: i32) -> Result<Vec<i32>> {
        read_ints(|buf, cap, len| {
            // SAFETY: self.ptr() is a live state; buf holds cap ints; len is a valid out pointer.
            unsafe { sys::xffl_get_communicating_processes(self.ptr(), federated_rank, buf, cap, len) }
        })
    }

    /// HSDP with replicas of `hsdp` ranks (`xffl_set_hsdp`): the HSDP mesh is the `(W/hsdp, hsdp)`
    /// row-major grid. An `hsdp` that does not divide the world fails with a message that names a
    /// divisor that would work.
    ///
    /// ```
    /// use xffl::{Backend, Device, ErrorKind, MeshKind, State};
    /// let mut st = State::new()?;
    /// st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 0, 8)?;
    /// assert_eq!(st.set_hsdp(3).unwrap_err().code, ErrorKind::InvalidArgument);
    /// st.set_hsdp(2)?;
    /// assert_eq!(st.mesh(MeshKind::Hsdp)?.shape(), &[4, 2]);
    /// # Ok::<(), xffl::Error>(())
    /// ```
    pub fn set_hsdp(&mut self, hsdp: i32) -> Result<()> {
        // SAFETY: self.ptr() is a live state.
        check(unsafe { sys::xffl_set_hsdp(self.ptr(), hsdp) })
    }

    /// Federated scaling (`xffl_federated_scaling`): the world split into federated groups of the
    /// given sizes (one size expands to `W / size` equal groups), with HSDP replicas of `hsdp` ranks
    /// inside each group, or `None` (then all sizes must be equal).
    ///
    /// `Some(h)` with `h < 1` is refused here rather than passed on as the C API's "0 means none":
    /// nothing ever falls back silently to another layout.
    ///
    /// ```
    /// use xffl::{Backend, Device, ErrorKind, State};
    /// let mut st = State::new()?;
    /// st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 0, 6)?;
    /// let err = st.federated_scaling(&[2, 4], None).unwrap_err();
    /// assert_eq!(err.code, ErrorKind::InvalidArgument);
    /// assert!(err.message.contains("hsdp 2"), "{}", err.message); // suggests what would work
    /// st.federated_scaling(&[2, 4], Some(2))?;
    /// # Ok::<(), xffl::Error>(())
    /// ```
    pub fn federated_scaling(&mut self, sizes: &[i32], hsdp: Option<i32>) -> Result<()> {
        let hsdp = match hsdp {
            None => 0,
            Some(h) if h >= 1 => h,
            Some(h) => {
                return Err(Error::invalid(format!(
                    "State::federated_scaling: hsdp Some({h}) must be at least 1 (None means no HSDP)"
                )))
            }
        };
        if sizes.is_empty() {
            return Err(Error::invalid("State::federated_scaling: sizes is empty; give one size or one per group"));
        }
        // SAFETY: self.ptr() is a live state; sizes holds sizes.len() ints.
        check(unsafe { sys::xffl_federated_scaling(self.ptr(), sizes.as_ptr(), sizes.len(), hsdp) })
    }

    /// Removes a layout set by [`set_fsdp`](State::set_fsdp) or
    /// [`set_fsdp_mesh`](State::set_fsdp_mesh); `State` error otherwise.
    pub fn unset_fsdp(&mut self) -> Result<()> {
        // SAFETY: self.ptr() is a live state; no Group borrows it (we hold &mut self).
        check(unsafe { sys::xffl_unset_fsdp(self.ptr()) })
    }

    /// Removes a layout set by [`set_hsdp`](State::set_hsdp) or
    /// [`set_hsdp_manual`](State::set_hsdp_manual); `State` error otherwise.
    pub fn unset_hsdp(&mut self) -> Result<()> {
        // SAFETY: self.ptr() is a live state; no Group borrows it (we hold &mut self).
        check(unsafe { sys::xffl_unset_hsdp(self.ptr()) })
    }

    /// Removes federated scaling (and its weights); `State` error otherwise.
    pub fn unset_federated_scaling(&mut self) -> Result<()> {
        // SAFETY: self.ptr() is a live state; no Group borrows it (we hold &mut self).
        check(unsafe { sys::xffl_unset_federated_scaling(self.ptr()) })
    }

    /// True once [`set_node`](State::set_node) succeeded.
    pub fn is_node_setup(&self) -> bool {
        // SAFETY: self.ptr() is a live state.
        unsafe { sys::xffl_is_node_setup(self.ptr()) != 0 }
    }

    /// True if an FSDP mesh exists (`set_fsdp`, or federated scaling without HSDP).
    pub fn is_fsdp_setup(&self) -> bool {
        // SAFETY: self.ptr() is a live state.
        unsafe { sys::xffl_is_fsdp_setup(self.ptr()) != 0 }
    }

    /// True if an HSDP mesh exists (`set_hsdp`, or federated scaling with HSDP).
    pub fn is_hsdp_setup(&self) -> bool {
        // SAFETY: self.ptr() is a live state.
        unsafe { sys::xffl_is_hsdp_setup(self.ptr()) != 0 }
    }

    /// True if federated scaling is the layout.
    pub fn is_federated_scaling_setup(&self) -> bool {
        // SAFETY: self.ptr() is a live state.
        unsafe { sys::xffl_is_federated_scaling_setup(self.ptr()) != 0 }
    }

    /// A scalar field (`xffl_get_int`). [`ErrorKind::NotSet`] where Python would hold `None`;
    /// `InvalidArgument` for a tuple field (use [`get_ints`](State::get_ints)).
    pub fn get_int(&self, attr: Attr) -> Result<i32> {
        let mut value: c_int = 0;
        // SAFETY: self.ptr() is a live state; value is a valid out pointer.
        check(unsafe { sys::xffl_get_int(self.ptr(), attr.raw(), &mut value) })?;
        Ok(value)
    }

    /// A scalar field as `Some`, or `None` where Python would hold `None` (the `NotSet` error).
    ///
    /// ```
    /// use xffl::{Attr, Backend, Device, State};
    /// let mut st = State::new()?;
    /// st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 0, 4)?;
    /// assert_eq!(st.get_opt(Attr::WorldSize)?, Some(4));
    /// assert_eq!(st.get_opt(Attr::FederatedRank)?, None);
    /// # Ok::<(), xffl::Error>(())
    /// ```
    pub fn get_opt(&self, attr: Attr) -> Result<Option<i32>> {
        match self.get_int(attr) {
            Ok(value) => Ok(Some(value)),
            Err(e) if e.code == ErrorKind::NotSet => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// A tuple field (or a scalar as a one-element vector) (`xffl_get_ints`).
    ///
    /// ```
    /// use xffl::{Attr, Backend, Device, State};
    /// let mut st = State::new()?;
    /// st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 0, 12)?;
    /// st.federated_scaling(&[4, 8], Some(2))?;
    /// assert_eq!(st.get_ints(Attr::FederatedLocalSize)?, vec![4, 8]);
    /// assert_eq!(st.get_ints(Attr::ReplicaWorldSize)?, vec![2, 4]);
    /// # Ok::<(), xffl::Error>(())
    /// ```
    pub fn get_ints(&self, attr: Attr) -> Result<Vec<i32>> {
        read_ints(|buf, cap, len| {
            // SAFETY: self.ptr() is a live state; buf holds cap ints; len is a valid out pointer.
            unsafe { sys::xffl_get_ints(self.ptr(), attr.raw(), buf, cap, len) }
        })
    }

    /// The master address given to [`set_global`](State::set_global); `NotSet` before it.
    pub fn master_addr(&self) -> Result<String> {
        read_text(|buf, cap, len| {
            // SAFETY: self.ptr() is a live state; buf holds cap bytes; len is a valid out pointer.
            unsafe { sys::xffl_get_master_addr(self.ptr(), buf, cap, len) }
        })
    }

    /// Sets an option; allowed at any time (`xffl_set_option`). Values of
    /// [`FederatedStrategy`](crate::FederatedStrategy) and [`LogLevel`](crate::LogLevel) convert
    /// with `.into()`.
    ///
    /// ```
    /// use xffl::{FederatedStrategy, OptionKey, State};
    /// let st = State::new()?;
    /// st.set_option(OptionKey::TimeoutMs, 5_000)?;
    /// st.set_option(OptionKey::FederatedStrategy, FederatedStrategy::Flat.into())?;
    /// assert_eq!(st.get_option(OptionKey::TimeoutMs)?, 5_000);
    /// assert!(st.set_option(OptionKey::TimeoutMs, -1).is_err());
    /// # Ok::<(), xffl::Error>(())
    /// ```
    pub fn set_option(&self, option: OptionKey, value: i32) -> Result<()> {
        // SAFETY: self.ptr() is a live state. Options change no group, so &self is enough; !Sync
        // keeps calls from overlapping.
        check(unsafe { sys::xffl_set_option(self.ptr(), option.raw(), value) })
    }

    /// Reads an option (`xffl_get_option`).
    pub fn get_option(&self, option: OptionKey) -> Result<i32> {
        let mut value: c_int = 0;
        // SAFETY: self.ptr() is a live state; value is a valid out pointer.
        check(unsafe { sys::xffl_get_option(self.ptr(), option.raw(), &mut value) })?;
        Ok(value)
    }

    /// Sets a string option, [`OptionKey::AuthToken`] or [`OptionKey::JobId`]
    /// (`xffl_set_option_string`): the thread-safe alternative to setting the environment before
    /// [`State::new`]. Only before [`set_global`](State::set_global) (a `State` error after it); an
    /// integer option's key is `InvalidArgument`.
    ///
    /// ```
    /// use xffl::{OptionKey, State};
    /// let st = State::new()?;
    /// st.set_option_string(OptionKey::JobId, "run-42")?;
    /// st.set_option_string(OptionKey::AuthToken, "s3cret")?;
    /// assert_eq!(st.get_option_string(OptionKey::JobId)?, "run-42");
    /// assert!(st.get_option_string(OptionKey::AuthToken).is_err()); // write-only
    /// # Ok::<(), xffl::Error>(())
    /// ```
    pub fn set_option_string(&self, option: OptionKey, text: &str) -> Result<()> {
        // Not c_string: its message quotes the text, and this one may be the secret.
        let text = CString::new(text).map_err(|_| {
            Error::invalid(format!("State::set_option_string: the text of {option:?} contains a NUL byte"))
        })?;
        // SAFETY: self.ptr() is a live state; text is NUL-terminated and outlives the call.
        check(unsafe { sys::xffl_set_option_string(self.ptr(), option.raw(), text.as_ptr()) })
    }

    /// Reads a string option (`xffl_get_option_string`): [`OptionKey::JobId`]. The auth token is
    /// write-only (`InvalidArgument`).
    pub fn get_option_string(&self, option: OptionKey) -> Result<String> {
        read_text(|buf, cap, len| {
            // SAFETY: self.ptr() is a live state; buf holds cap bytes; len is a valid out pointer.
            unsafe { sys::xffl_get_option_string(self.ptr(), option.raw(), buf, cap, len) }
        })
    }

    /// The execution device's stream `index` (`xffl_get_stream`): a `cudaStream_t` for the caller's
    /// own kernels, borrowed from the state. Only with CUDA execution (backend NCCL); with CPU execution
    /// the call fails with [`ErrorKind::Unsupported`](crate::ErrorKind).
    pub fn stream(&self, index: i32) -> Result<*mut std::ffi::c_void> {
        let mut stream: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: self.ptr() is a live state; stream is a valid out pointer.
        check(unsafe { sys::xffl_get_stream(self.ptr(), index, &mut stream) })?;
        Ok(stream)
    }

    /// The state as text (the layout of xFFL's `__str__`) or JSON (`DistributedState` field names)
    /// (`xffl_state_describe`). Works at every stage. Buffers are sized internally.
    ///
    /// ```
    /// use xffl::{Backend, Device, Format, State};
    /// let mut st = State::new()?;
    /// st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 0, 1)?;
    /// let text = st.describe(Format::Text)?;
    /// assert!(text.contains("*** xFFL Distributed Setup ***"));
    /// let json = st.describe(Format::Json)?;
    /// assert!(json.contains("\"world_size\": 1") || json.contains("\"world_size\":1"), "{json}");
    /// # Ok::<(), xffl::Error>(())
    /// ```
    pub fn describe(&self, format: Format) -> Result<String> {
        read_text(|buf, cap, len| {
            // SAFETY: self.ptr() is a live state; buf holds cap bytes; len is a valid out pointer.
            unsafe { sys::xffl_state_describe(self.ptr(), format.raw(), buf, cap, len) }
        })
    }

    /// A group of the current layout, borrowed from the state (`xffl_get_group`). `instance` is 0,
    /// or below the stream count K for [`GroupKind::Federated`] and [`GroupKind::Replica`].
    /// [`ErrorKind::NotSet`] when the layout has no such group.
    ///
    /// ```
    /// use xffl::{Backend, Device, GroupKind, State};
    /// let mut st = State::new()?;
    /// st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 2, 8)?;
    /// st.set_hsdp(2)?;
    /// let shard = st.group(GroupKind::HsdpShard, 0)?;
    /// assert_eq!(shard.ranks()?, vec![2, 3]);
    /// assert_eq!(shard.rank()?, 0);
    /// # Ok::<(), xffl::Error>(())
    /// ```
    pub fn group(&self, kind: GroupKind, instance: usize) -> Result<Group<'_>> {
        let instance = to_c_int(instance, "group instance")?;
        let mut raw = ptr::null_mut();
        // SAFETY: self.ptr() is a live state; raw is a valid out pointer.
        check(unsafe { sys::xffl_get_group(self.ptr(), kind.raw(), instance, &mut raw) })?;
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error::new(ErrorKind::Internal, "the library returned XFFL_OK and a NULL group"))?;
        // SAFETY: the group belongs to the layout, which cannot change while this borrow of self lives.
        Ok(unsafe { Group::borrowed(raw) })
    }

    /// A new group of arbitrary members, owned by the caller (`xffl_create_process_group`).
    /// `ranks` are distinct global ranks in any order (the group's rank order is the sorted one, as
    /// torch's `new_group`), and must contain this rank: only the members call it (never a
    /// world-wide collective; one round trip to the job's store gives the group its identity). The group is destroyed
    /// when the [`OwnedGroup`] is dropped, which the borrow checker forces to happen before the
    /// state is dropped.
    ///
    /// ```
    /// use xffl::{Backend, Device, State};
    /// let mut st = State::new()?;
    /// st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 1, 4)?;
    /// let pair = st.create_process_group(&[3, 1], "pair")?;
    /// assert_eq!(pair.ranks()?, vec![1, 3]);
    /// assert_eq!(pair.rank()?, 0);
    /// assert_eq!(pair.description(), "pair");
    /// # Ok::<(), xffl::Error>(())
    /// ```
    pub fn create_process_group(&self, ranks: &[i32], description: &str) -> Result<OwnedGroup<'_>> {
        if ranks.is_empty() {
            return Err(Error::invalid("State::create_process_group: ranks is empty; a group needs at least one rank"));
        }
        let description = c_string(description, "group description")?;
        let mut raw = ptr::null_mut();
        // SAFETY: self.ptr() is a live state; ranks holds ranks.len() ints; the description is
        // copied by the library; raw is a valid out pointer.
        check(unsafe {
            sys::xffl_create_process_group(self.ptr(), ranks.as_ptr(), ranks.len(), description.as_ptr(), &mut raw)
        })?;
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error::new(ErrorKind::Internal, "the library returned XFFL_OK and a NULL group"))?;
        // SAFETY: raw is a new owned group of this state; OwnedGroup borrows self, so it is
        // destroyed before the state.
        Ok(unsafe { OwnedGroup::owned(raw) })
    }

    /// The mesh of the current layout that contains this rank (`xffl_get_mesh`). `NotSet` when the
    /// layout has no such mesh.
    pub fn mesh(&self, kind: MeshKind) -> Result<Mesh> {
        let mut shape: [c_int; 2] = [0; 2];
        let mut ndim = 0usize;
        let ranks = read_ints(|buf, cap, len| {
            // SAFETY: self.ptr() is a live state; shape holds shape.len() (2, every mesh's most)
            // entries; buf holds cap ints; ndim and len are valid out pointers.
            unsafe {
                sys::xffl_get_mesh(self.ptr(), kind.raw(), shape.as_mut_ptr(), shape.len(), &mut ndim, buf, cap, len)
            }
        })?;
        Ok(Mesh::new(Mesh::check_shape(&shape, ndim, ranks.len())?, ranks))
    }

    /// Averages this rank's shard across federated groups, in place (`xffl_federated_average`).
    /// Collective over the whole job: every rank calls it with the same length and type. Host
    /// memory only (for CUDA buffers call `xffl_sys::xffl_federated_average` with a stream).
    ///
    /// Fails with `State` without federated scaling.
    ///
    /// ```
    /// use xffl::{Backend, Device, State};
    /// // One rank, one federated group: the mean of one copy is the copy itself.
    /// let mut st = State::new()?;
    /// st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 0, 1)?;
    /// st.federated_scaling(&[1], None)?;
    /// let mut weights = vec![0.5f32, -1.0, 2.0];
    /// st.federated_average(&mut weights)?;
    /// assert_eq!(weights, [0.5, -1.0, 2.0]);
    /// # Ok::<(), xffl::Error>(())
    /// ```
    pub fn federated_average<T: DType>(&self, buf: &mut [T]) -> Result<()> {
        // SAFETY: self.ptr() is a live state; buf is buf.len() elements of the C type of T, with
        // exclusive access for the duration of the call; stream NULL means host memory.
        check(unsafe {
            sys::xffl_federated_average(
                self.ptr(),
                buf.as_mut_ptr().cast::<c_void>(),
                buf.len(),
                T::DATA_TYPE.raw(),
                ptr::null_mut(),
            )
        })
    }

    /// Averages several buffers, coalesced into size-balanced buckets; each is updated in place
    /// (`xffl_federated_average_many`). Collective like [`federated_average`](State::federated_average).
    ///
    /// ```
    /// use xffl::{Backend, Device, State};
    /// let mut st = State::new()?;
    /// st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 0, 1)?;
    /// st.federated_scaling(&[1], None)?;
    /// let (mut a, mut b) = (vec![1.0f64; 4], vec![2.0f64; 3]);
    /// st.federated_average_many(&mut [&mut a[..], &mut b[..]])?;
    /// assert_eq!((a[0], b[2]), (1.0, 2.0));
    /// # Ok::<(), xffl::Error>(())
    /// ```
    pub fn federated_average_many<T: DType>(&self, bufs: &mut [&mut [T]]) -> Result<()> {
        let counts: Vec<usize> = bufs.iter().map(|b| b.len()).collect();
        let pointers: Vec<*mut c_void> = bufs.iter_mut().map(|b| b.as_mut_ptr().cast::<c_void>()).collect();
        // SAFETY: self.ptr() is a live state; pointers[i] is counts[i] elements of T's C type, each
        // exclusively borrowed (distinct &mut slices never overlap); stream NULL means host memory.
        check(unsafe {
            sys::xffl_federated_average_many(
                self.ptr(),
                pointers.as_ptr(),
                counts.as_ptr(),
                bufs.len(),
                T::DATA_TYPE.raw(),
                ptr::null_mut(),
            )
        })
    }

    /// Starts [`federated_average`](State::federated_average) without waiting for it
    /// (`xffl_federated_average_start`): the request owns `buf` while the model crosses and
    /// [`Request::wait`] hands it back averaged, with the same bits as the blocking call. Collective
    /// like `federated_average`. While the request is in flight, only the state's getters answer;
    /// other calls fail with `State`.
    ///
    /// ```
    /// use xffl::{Attr, Backend, Device, ErrorKind, State};
    /// let mut st = State::new()?;
    /// st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 0, 1)?;
    /// st.federated_scaling(&[1], None)?;
    /// let mut req = st.federated_average_start(vec![0.5f32, -1.0, 2.0])?;
    /// assert_eq!(st.get_int(Attr::Rank)?, 0); // getters answer meanwhile
    /// assert_eq!(st.federated_average(&mut [1.0f32]).unwrap_err().code, ErrorKind::State);
    /// while !req.test()? { /* a training step */ }
    /// assert_eq!(req.wait()?, [0.5, -1.0, 2.0]);
    /// # Ok::<(), xffl::Error>(())
    /// ```
    pub fn federated_average_start<T: DType + Send>(&self, mut buf: Vec<T>) -> Result<Request<'_, Vec<T>>> {
        let mut raw = ptr::null_mut();
        // SAFETY: self.ptr() is a live state; buf is buf.len() elements of T's C type on the heap,
        // owned by the request from here until its run ends (wait or drop), and the request borrows
        // self, so the state outlives it; stream NULL means host memory; raw is a valid out pointer.
        check(unsafe {
            sys::xffl_federated_average_start(
                self.ptr(),
                buf.as_mut_ptr().cast::<c_void>(),
                buf.len(),
                T::DATA_TYPE.raw(),
                ptr::null_mut(),
                &mut raw,
            )
        })?;
        // SAFETY: raw was just started on buf's heap memory, which moving the Vec does not move.
        unsafe { Request::started(raw, buf) }
    }

    /// Starts [`federated_average_many`](State::federated_average_many) without waiting for it
    /// (`xffl_federated_average_many_start`); [`Request::wait`] hands the buffers back averaged.
    ///
    /// ```
    /// use xffl::{Backend, Device, State};
    /// let mut st = State::new()?;
    /// st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 0, 1)?;
    /// st.federated_scaling(&[1], None)?;
    /// let req = st.federated_average_many_start(vec![vec![1.0f64; 4], vec![2.0; 3]])?;
    /// let bufs = req.wait()?;
    /// assert_eq!((bufs[0][0], bufs[1][2]), (1.0, 2.0));
    /// # Ok::<(), xffl::Error>(())
    /// ```
    pub fn federated_average_many_start<T: DType + Send>(
        &self,
        mut bufs: Vec<Vec<T>>,
    ) -> Result<Request<'_, Vec<Vec<T>>>> {
        let counts: Vec<usize> = bufs.iter().map(|b| b.len()).collect();
        let pointers: Vec<*mut c_void> = bufs.iter_mut().map(|b| b.as_mut_ptr().cast::<c_void>()).collect();
        let mut raw = ptr::null_mut();
        // SAFETY: self.ptr() is a live state; pointers[i] is counts[i] elements of T's C type on the
        // heap, owned by the request until its run ends; the library copies the two arrays; raw is a
        // valid out pointer.
        check(unsafe {
            sys::xffl_federated_average_many_start(
                self.ptr(),
                pointers.as_ptr(),
                counts.as_ptr(),
                bufs.len(),
                T::DATA_TYPE.raw(),
                ptr::null_mut(),
                &mut raw,
            )
        })?;
        // SAFETY: raw was just started on the inner Vecs' heap memory, which moving them does not move.
        unsafe { Request::started(raw, bufs) }
    }

    /// Weights of the federated groups in the average (FedAvg by sample count)
    /// (`xffl_set_federated_weights`): one finite, non-negative value per federated group with a
    /// positive sum. Local, but every rank must set the same weights. Needs federated scaling
    /// (`State` error otherwise); weighted averages need a floating-point type.
    ///
    /// ```
    /// use xffl::{Backend, Device, ErrorKind, State};
    /// let mut st = State::new()?;
    /// st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 0, 8)?;
    /// st.federated_scaling(&[4], None)?; // two groups of four
    /// st.set_federated_weights(&[300.0, 100.0])?;
    /// assert_eq!(st.set_federated_weights(&[1.0]).unwrap_err().code, ErrorKind::InvalidArgument);
    /// st.clear_federated_weights()?;
    /// # Ok::<(), xffl::Error>(())
    /// ```
    pub fn set_federated_weights(&self, weights: &[f64]) -> Result<()> {
        if weights.is_empty() {
            return Err(Error::invalid(
                "State::set_federated_weights: no weights given; use clear_federated_weights for the plain mean",
            ));
        }
        // SAFETY: self.ptr() is a live state; weights holds weights.len() doubles.
        check(unsafe { sys::xffl_set_federated_weights(self.ptr(), weights.as_ptr(), weights.len()) })
    }

    /// Returns to the plain (unweighted) mean.
    pub fn clear_federated_weights(&self) -> Result<()> {
        // SAFETY: self.ptr() is a live state; NULL with n == 0 is the documented reset.
        check(unsafe { sys::xffl_set_federated_weights(self.ptr(), ptr::null(), 0) })
    }
}

impl Drop for State {
    /// `xffl_state_destroy`: local, never blocks on peers, never fails, never panics.
    fn drop(&mut self) {
        // SAFETY: self.raw is a live state that we own; no group borrows it any more (borrowck).
        unsafe { sys::xffl_state_destroy(self.raw.as_ptr()) }
    }
}
