//! xffl::set_log_callback: the library's log lines reach a Rust closure with level, rank and text; the
//! state's level still filters; clear_log_callback restores stderr and drops the closure; a closure
//! that calls set_log_callback gets a State error. One test function: the callback is process-wide and
//! cargo runs the tests of one file in parallel threads.
use std::sync::{Arc, Mutex};

use xffl::{Backend, Device, ErrorKind, LogLevel, OptionKey, State};

type Lines = Arc<Mutex<Vec<(LogLevel, Option<i32>, String)>>>;

/// Rank 1 of 4 sets up HSDP 2 at `level`: "group creation for xffl_set_hsdp took ... ms" is an Info line.
fn run_layout(level: LogLevel) {
    let mut st = State::new().unwrap();
    st.set_option(OptionKey::LogLevel, level.into()).unwrap();
    st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 1, 4).unwrap();
    st.set_hsdp(2).unwrap();
}

fn capture_into(lines: &Lines) -> impl Fn(LogLevel, Option<i32>, &str) + Send + Sync + 'static {
    let sink = Arc::clone(lines);
    move |level, rank, text| sink.lock().unwrap().push((level, rank, text.to_string()))
}

#[test]
fn log_lines_reach_the_closure_until_cleared() {
    let lines: Lines = Arc::default();
    xffl::set_log_callback(capture_into(&lines)).unwrap();
    run_layout(LogLevel::Info);
    {
        let got = lines.lock().unwrap();
        let line = got
            .iter()
            .find(|(_, _, text)| text.starts_with("group creation for xffl_set_hsdp took "))
            .unwrap_or_else(|| panic!("no group creation line among {got:?}"));
        assert_eq!(line.0, LogLevel::Info);
        assert_eq!(line.1, Some(1));
        assert!(line.2.ends_with(" ms") && !line.2.contains('\n'), "{:?}", line.2);
    }

    // The state's level still chooses which lines exist.
    lines.lock().unwrap().clear();
    run_layout(LogLevel::Warn);
    assert!(lines.lock().unwrap().iter().all(|(level, _, _)| *level <= LogLevel::Warn));

    // Replacing the callback drops the old closure (its Arc count falls back).
    let second: Lines = Arc::default();
    xffl::set_log_callback(capture_into(&second)).unwrap();
    assert_eq!(Arc::strong_count(&lines), 1, "the replaced closure was not dropped");
    run_layout(LogLevel::Info);
    assert!(!second.lock().unwrap().is_empty());
    assert!(lines.lock().unwrap().is_empty());

    // A closure calling xffl: the library refuses instead of deadlocking.
    let refused: Arc<Mutex<Option<ErrorKind>>> = Arc::default();
    let seen = Arc::clone(&refused);
    xffl::set_log_callback(move |_, _, _| {
        if let Err(error) = xffl::clear_log_callback() {
            *seen.lock().unwrap() = Some(error.kind());
        }
    })
    .unwrap();
    run_layout(LogLevel::Info);
    assert_eq!(*refused.lock().unwrap(), Some(ErrorKind::State));

    xffl::clear_log_callback().unwrap();
    assert_eq!(Arc::strong_count(&refused), 1, "clear_log_callback did not drop the closure");
    assert_eq!(Arc::strong_count(&second), 1);
}
