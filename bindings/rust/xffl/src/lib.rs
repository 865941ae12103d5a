//! Safe Rust API of xffl: the distributed state of cross-facility federated learning.
//!
//! xffl answers three questions for a training process: *who am I in this job* (global rank, node,
//! HSDP replica and shard, federated group), *who do I talk to* (the process groups of FSDP, HSDP
//! and federated scaling) and *make the model the same everywhere* (federated averaging across
//! facilities). It is the C-ABI counterpart of xFFL's Python `DistributedState`; this crate wraps
//! that C ABI (through [`xffl_sys`]) with ownership, lifetimes and `Result`s.
//!
//! - [`State`] owns the C state and drops it with the local destroy.
//! - [`Group`] is borrowed from the state (`Group<'state>`); [`OwnedGroup`] is made by
//!   [`State::create_process_group`] and destroyed on drop, before its state (checked at compile
//!   time).
//! - [`Request`] is a federated average in flight ([`State::federated_average_start`]): it owns the
//!   buffers until [`Request::wait`] hands them back, and waits on drop.
//! - Every fallible call returns [`Result<T>`]; an [`Error`] carries the [`ErrorKind`] (one variant
//!   per C status, plus `Unknown`) and the library's message, read at once.
//! - Buffers are typed slices of a [`DType`]: `f32`, `f64`, `i8`, `u8`, `i32`, `i64`, [`F16`],
//!   [`BF16`]; their lengths are checked before any C call.
//!
//! # Example: the plan of a job and one federated average
//! Backend [`Backend::None`] computes the whole topology without any communication, for any rank of
//! any world; collectives then work on one-member groups, so a one-rank job can average locally.
//! ```
//! use xffl::{Attr, Backend, Device, Format, GroupKind, State};
//!
//! let mut st = State::new()?;
//! st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 0, 1)?;
//! st.federated_scaling(&[1], None)?; // one federated group of one rank
//! println!("{}", st.describe(Format::Text)?);
//! assert_eq!(st.group(GroupKind::Federated, 0)?.ranks()?, vec![0]);
//!
//! let mut model = vec![0.25f32; 1024];
//! st.federated_average(&mut model)?;
//! assert!(model.iter().all(|&w| w == 0.25));
//! # Ok::<(), xffl::Error>(())
//! ```
//!
//! # Linking
//! `xffl-sys` finds `libxffl` through `XFFL_LIB_DIR` or `pkg-config xffl`, and this crate's tests and
//! examples get an rpath to that directory. Cargo does not pass a dependency's link arguments on to
//! your binary: give it the run-time path in your `.cargo/config.toml`
//! (`rustflags = ["-C", "link-arg=-Wl,-rpath,<libdir>"]` under `[build]`, libdir from
//! `pkg-config --variable=libdir xffl`), as xffl's README shows, or install the library on the
//! loader's default path.
//!
//! # Log lines
//! [`set_log_callback`] sends the library's log lines to a closure of yours instead of stderr.
#![deny(missing_docs)]
#![warn(rust_2018_idioms)]

mod buffer;
mod dtype;
mod error;
mod group;
mod log;
mod mesh;
mod request;
mod state;
mod types;

pub use dtype::{DType, DataType, BF16, F16};
pub use error::{Error, ErrorKind, Result};
pub use group::{Group, OwnedGroup};
pub use log::{clear_log_callback, set_log_callback};
pub use mesh::Mesh;
pub use request::Request;
pub use state::State;
pub use types::{
    Attr, Backend, Device, FederatedStrategy, Format, GroupKind, LogLevel, MeshKind, OptionKey, RedOp, WireFormat,
};

/// The raw bindings this crate is built on, for calls it does not wrap.
pub use xffl_sys;

/// The version of the loaded library as `(major, minor, patch)`.
///
/// ```
/// let (major, minor, _) = xffl::version();
/// assert_eq!(format!("{major}.{minor}"), xffl::version_string().rsplitn(2, '.').last().unwrap());
/// ```
pub fn version() -> (i32, i32, i32) {
    let (mut major, mut minor, mut patch) = (0, 0, 0);
    // SAFETY: three valid out pointers.
    unsafe { xffl_sys::xffl_version(&mut major, &mut minor, &mut patch) };
    (major, minor, patch)
}

/// The version of the loaded library as `"MAJOR.MINOR.PATCH"`.
pub fn version_string() -> &'static str {
    // SAFETY: a static NUL-terminated string, valid for the life of the process.
    unsafe { std::ffi::CStr::from_ptr(xffl_sys::xffl_version_string()) }.to_str().unwrap_or("unknown")
}
