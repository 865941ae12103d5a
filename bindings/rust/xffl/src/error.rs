//! Errors: the status of a failed call and the library's message, read at once.
use std::ffi::CStr;
use std::fmt;

use xffl_sys as sys;

/// The kind of failure, one variant per `xffl_status_t` error value.
///
/// New statuses may appear in later versions of the library; they arrive as [`ErrorKind::Unknown`]
/// holding the raw value, never as undefined behaviour. The enum is `#[non_exhaustive]` so that a
/// later version of this crate can name them without breaking your `match`.
///
/// ```
/// use xffl::ErrorKind;
/// assert_eq!(ErrorKind::from_raw(-2), ErrorKind::State);
/// assert_eq!(ErrorKind::State.raw(), -2);
/// assert_eq!(ErrorKind::from_raw(-1000), ErrorKind::Unknown(-1000));
/// assert_eq!(ErrorKind::InvalidArgument.name(), "XFFL_EINVAL");
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// `XFFL_EINVAL`: an argument is invalid (out of range, inconsistent, wrong length).
    InvalidArgument,
    /// `XFFL_ESTATE`: the call is out of order for the state (e.g. a layout before `set_global`).
    State,
    /// `XFFL_ENOTSET`: the field or group is not set (Python's `DistributedState` would hold `None`).
    NotSet,
    /// `XFFL_ENOMEM`: an allocation failed.
    OutOfMemory,
    /// `XFFL_EUNSUPPORTED`: the feature is not in this build or not available with this backend.
    Unsupported,
    /// `XFFL_ETIMEOUT`: a bounded wait expired; the message names the rank, group and what was awaited.
    Timeout,
    /// `XFFL_EPEER`: a peer failed; the message names its rank.
    Peer,
    /// `XFFL_EAUTH`: rendezvous authentication failed.
    Auth,
    /// `XFFL_ENETWORK`: a network operation failed.
    Network,
    /// `XFFL_EBACKEND`: UCX, NCCL or CUDA refused; the message carries their words.
    Backend,
    /// `XFFL_EBUFSIZE`: an output buffer was too small. The safe API sizes its buffers itself, so
    /// you only see this from code that calls `xffl-sys` directly.
    BufferTooSmall,
    /// `XFFL_EINTERNAL`: a bug in xffl; please report the message.
    Internal,
    /// `XFFL_EQUORUM`: fewer facilities than the quorum remain; every survivor stops.
    Quorum,
    /// A status this version of the crate does not know (from a newer library).
    Unknown(i32),
}

impl ErrorKind {
    /// The kind of a raw `xffl_status_t` value. `0` (`XFFL_OK`) is not an error and maps to
    /// `Unknown(0)`.
    pub fn from_raw(status: i32) -> ErrorKind {
        match sys::xffl_status(status) {
            sys::xffl_status::XFFL_EINVAL => ErrorKind::InvalidArgument,
            sys::xffl_status::XFFL_ESTATE => ErrorKind::State,
            sys::xffl_status::XFFL_ENOTSET => ErrorKind::NotSet,
            sys::xffl_status::XFFL_ENOMEM => ErrorKind::OutOfMemory,
            sys::xffl_status::XFFL_EUNSUPPORTED => ErrorKind::Unsupported,
            sys::xffl_status::XFFL_ETIMEOUT => ErrorKind::Timeout,
            sys::xffl_status::XFFL_EPEER => ErrorKind::Peer,
            sys::xffl_status::XFFL_EAUTH => ErrorKind::Auth,
            sys::xffl_status::XFFL_ENETWORK => ErrorKind::Network,
            sys::xffl_status::XFFL_EBACKEND => ErrorKind::Backend,
            sys::xffl_status::XFFL_EBUFSIZE => ErrorKind::BufferTooSmall,
            sys::xffl_status::XFFL_EINTERNAL => ErrorKind::Internal,
            sys::xffl_status::XFFL_EQUORUM => ErrorKind::Quorum,
            _ => ErrorKind::Unknown(status),
        }
    }

    /// The raw `xffl_status_t` value.
    pub fn raw(self) -> i32 {
        let status = match self {
            ErrorKind::InvalidArgument => sys::xffl_status::XFFL_EINVAL,
            ErrorKind::State => sys::xffl_status::XFFL_ESTATE,
            ErrorKind::NotSet => sys::xffl_status::XFFL_ENOTSET,
            ErrorKind::OutOfMemory => sys::xffl_status::XFFL_ENOMEM,
            ErrorKind::Unsupported => sys::xffl_status::XFFL_EUNSUPPORTED,
            ErrorKind::Timeout => sys::xffl_status::XFFL_ETIMEOUT,
            ErrorKind::Peer => sys::xffl_status::XFFL_EPEER,
            ErrorKind::Auth => sys::xffl_status::XFFL_EAUTH,
            ErrorKind::Network => sys::xffl_status::XFFL_ENETWORK,
            ErrorKind::Backend => sys::xffl_status::XFFL_EBACKEND,
            ErrorKind::BufferTooSmall => sys::xffl_status::XFFL_EBUFSIZE,
            ErrorKind::Internal => sys::xffl_status::XFFL_EINTERNAL,
            ErrorKind::Quorum => sys::xffl_status::XFFL_EQUORUM,
            ErrorKind::Unknown(raw) => return raw,
        };
        status.0
    }

    /// The C name of the status (`"XFFL_ESTATE"`), or `"XFFL_UNKNOWN"` for an unknown one.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::InvalidArgument => "XFFL_EINVAL",
            ErrorKind::State => "XFFL_ESTATE",
            ErrorKind::NotSet => "XFFL_ENOTSET",
            ErrorKind::OutOfMemory => "XFFL_ENOMEM",
            ErrorKind::Unsupported => "XFFL_EUNSUPPORTED",
            ErrorKind::Timeout => "XFFL_ETIMEOUT",
            ErrorKind::Peer => "XFFL_EPEER",
            ErrorKind::Auth => "XFFL_EAUTH",
            ErrorKind::Network => "XFFL_ENETWORK",
            ErrorKind::Backend => "XFFL_EBACKEND",
            ErrorKind::BufferTooSmall => "XFFL_EBUFSIZE",
            ErrorKind::Internal => "XFFL_EINTERNAL",
            ErrorKind::Quorum => "XFFL_EQUORUM",
            ErrorKind::Unknown(_) => "XFFL_UNKNOWN",
        }
    }

    /// The library's description of the status (`"XFFL_ESTATE: ..."`), from `xffl_status_string`.
    pub fn description(self) -> String {
        // SAFETY: xffl_status_string accepts any integer and returns a static, NUL-terminated string.
        let text = unsafe { CStr::from_ptr(sys::xffl_status_string(sys::xffl_status(self.raw()))) };
        text.to_string_lossy().into_owned()
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Unknown(raw) => write!(f, "XFFL_UNKNOWN({raw})"),
            kind => f.write_str(kind.name()),
        }
    }
}

/// A failed xffl call: what kind of failure, and the library's message naming the values involved.
///
/// The message is copied from the thread-local `xffl_last_error_message` right after the failing
/// call, so it always belongs to this error. Checks done on the Rust side before calling C (slice
/// lengths, for example) produce the same kind of error with a message that names the method.
///
/// ```
/// use xffl::{Backend, Device, ErrorKind, State};
/// let mut st = State::new()?;
/// let err = st.set_hsdp(2).unwrap_err(); // before set_global: out of order
/// assert_eq!(err.code, ErrorKind::State);
/// assert!(err.message.contains("set_global"), "{}", err.message);
/// println!("{err}"); // XFFL_ESTATE: xffl_set_hsdp needs xffl_set_global first
/// # Ok::<(), xffl::Error>(())
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The kind of failure (the C status).
    pub code: ErrorKind,
    /// The library's message (never empty for a failure the library reported).
    pub message: String,
}

impl Error {
    /// An error made on the Rust side, before any C call.
    pub(crate) fn new(code: ErrorKind, message: impl Into<String>) -> Error {
        Error { code, message: message.into() }
    }

    /// An invalid-argument error made on the Rust side.
    pub(crate) fn invalid(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidArgument, message)
    }

    /// The error of a failed call: its status and the thread's last message, read at once.
    pub(crate) fn from_status(status: sys::xffl_status_t) -> Error {
        // SAFETY: xffl_last_error_message never returns NULL; the string stays valid until the next
        // failing xffl call on this thread, and we copy it before returning.
        let message = unsafe { CStr::from_ptr(sys::xffl_last_error_message()) }.to_string_lossy().into_owned();
        Error { code: ErrorKind::from_raw(status.0), message }
    }

    /// The kind of failure (the same as the `code` field).
    pub fn kind(&self) -> ErrorKind {
        self.code
    }

    /// The library's message (the same as the `message` field).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            f.write_str(&self.code.description())
        } else {
            write!(f, "{}: {}", self.code, self.message)
        }
    }
}

impl std::error::Error for Error {}

/// The result of every fallible call of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// `Ok(())` for `XFFL_OK`, otherwise the error with the message read at once.
pub(crate) fn check(status: sys::xffl_status_t) -> Result<()> {
    if status == sys::xffl_status::XFFL_OK {
        Ok(())
    } else {
        Err(Error::from_status(status))
    }
}

/// Converts a count or index to the C `int` the API takes, or explains why it cannot.
pub(crate) fn to_c_int(value: usize, what: &str) -> Result<i32> {
    i32::try_from(value).map_err(|_| Error::invalid(format!("{what} {value} does not fit in a C int")))
}
