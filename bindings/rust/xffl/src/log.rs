//! Routing the library's log lines into the application's own logger (`xffl_set_log_callback`).
use std::ffi::{c_char, c_int, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use crate::error::{check, Result};
use crate::types::LogLevel;
use xffl_sys as sys;

/// What [`set_log_callback`] installs: level, rank (`None` while unknown) and the text of one line.
type Callback = dyn Fn(LogLevel, Option<i32>, &str) + Send + Sync + 'static;

/// The installed closure, kept alive while the library may call it. Boxed twice so the C side holds a
/// thin pointer.
static INSTALLED: Mutex<Option<Box<Box<Callback>>>> = Mutex::new(None);

thread_local! {
    /// True while this thread runs the closure: set_log_callback / clear_log_callback from inside it
    /// would wait for INSTALLED, held by a thread that waits for the line being delivered.
    static IN_CALLBACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn refuse_inside_callback() -> Result<()> {
    if IN_CALLBACK.with(|flag| flag.get()) {
        return Err(crate::error::Error::new(
            crate::ErrorKind::State,
            "xffl::set_log_callback / clear_log_callback called from inside the log callback, which must not call xffl",
        ));
    }
    Ok(())
}

impl LogLevel {
    fn from_raw(level: sys::xffl_log_level_t) -> LogLevel {
        match level {
            sys::xffl_log_level::XFFL_LOG_ERROR => LogLevel::Error,
            sys::xffl_log_level::XFFL_LOG_WARN => LogLevel::Warn,
            sys::xffl_log_level::XFFL_LOG_INFO => LogLevel::Info,
            _ => LogLevel::Debug, // XFFL_LOG_DEBUG, or a finer level of a newer libxffl
        }
    }
}

unsafe extern "C" fn trampoline(
    level: sys::xffl_log_level_t,
    rank: c_int,
    message: *const c_char,
    user_data: *mut c_void,
) {
    // SAFETY: user_data is the Box<Callback> installed with this trampoline; the library stops calling
    // it before xffl_set_log_callback returns, and only then is the box dropped. message is a valid C
    // string for the duration of the call.
    let callback = unsafe { &*(user_data as *const Box<Callback>) };
    let text = unsafe { CStr::from_ptr(message) }.to_string_lossy();
    let rank = if rank >= 0 { Some(rank) } else { None };
    // A panic must not unwind into C: it is swallowed here (the line is lost, nothing else).
    IN_CALLBACK.with(|flag| flag.set(true));
    let _ = catch_unwind(AssertUnwindSafe(|| callback(LogLevel::from_raw(level), rank, &text)));
    IN_CALLBACK.with(|flag| flag.set(false));
}

/// Sends every later log line of the library (from every state of the process) to `callback`
/// instead of stderr: its level, the rank of the state that wrote it (`None` while not known) and
/// the text without the `[xffl rank N] LEVEL: ` prefix. Which lines exist is still chosen per state
/// by [`OptionKey::LogLevel`](crate::OptionKey::LogLevel).
///
/// Process-wide, like libgit2's `git_trace_set`. The callback runs on whichever thread logs (also
/// the library's own threads), one line at a time; it must not call xffl (a call of this function
/// from inside it is a [`ErrorKind::State`](crate::ErrorKind::State) error). A panic inside it is
/// caught and the line dropped.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// let lines = Arc::new(Mutex::new(Vec::new()));
/// let sink = Arc::clone(&lines);
/// xffl::set_log_callback(move |level, _rank, text| sink.lock().unwrap().push(format!("{level:?} {text}")))?;
/// xffl::clear_log_callback()?; // back to stderr
/// # Ok::<(), xffl::Error>(())
/// ```
pub fn set_log_callback<F>(callback: F) -> Result<()>
where
    F: Fn(LogLevel, Option<i32>, &str) + Send + Sync + 'static,
{
    refuse_inside_callback()?;
    let boxed: Box<Box<Callback>> = Box::new(Box::new(callback));
    let mut installed = INSTALLED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let user_data = &*boxed as *const Box<Callback> as *mut c_void;
    // SAFETY: the trampoline matches xffl_log_callback_t; user_data stays alive in INSTALLED until a
    // later call replaces it, after the library has stopped using it.
    check(unsafe { sys::xffl_set_log_callback(Some(trampoline), user_data) })?;
    *installed = Some(boxed); // drops the previous closure: the library no longer calls it
    Ok(())
}

/// Restores the default: log lines go to stderr again. The previous callback is dropped.
pub fn clear_log_callback() -> Result<()> {
    refuse_inside_callback()?;
    let mut installed = INSTALLED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    // SAFETY: NULL restores stderr; no pointer is handed over.
    check(unsafe { sys::xffl_set_log_callback(None, std::ptr::null_mut()) })?;
    *installed = None;
    Ok(())
}
