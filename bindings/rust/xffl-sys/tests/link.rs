//! The raw bindings link against the library they were generated for.
use std::ffi::CStr;
use xffl_sys::*;

#[test]
fn library_version_matches_the_header_the_bindings_came_from() {
    let (mut major, mut minor, mut patch) = (-1, -1, -1);
    unsafe { xffl_version(&mut major, &mut minor, &mut patch) };
    assert_eq!(
        (major as u32, minor as u32),
        (XFFL_VERSION_MAJOR, XFFL_VERSION_MINOR),
        "libxffl {major}.{minor}.{patch} is not the version of include/xffl.h"
    );
    let text = unsafe { CStr::from_ptr(xffl_version_string()) }.to_str().unwrap();
    assert_eq!(text, format!("{major}.{minor}.{patch}"));
}

#[test]
fn unknown_status_values_are_plain_values() {
    // A status this version does not know is representable (newtype), and the library names it.
    let unknown = xffl_status(-1000);
    let text = unsafe { CStr::from_ptr(xffl_status_string(unknown)) }.to_str().unwrap();
    assert!(text.starts_with("XFFL_UNKNOWN"), "{text}");
    let einval = unsafe { CStr::from_ptr(xffl_status_string(xffl_status::XFFL_EINVAL)) }.to_str().unwrap();
    assert!(einval.starts_with("XFFL_EINVAL"), "{einval}");
}

#[test]
fn create_and_destroy_a_state() {
    let mut st: *mut xffl_state_t = std::ptr::null_mut();
    assert_eq!(unsafe { xffl_state_create(&mut st) }, xffl_status::XFFL_OK);
    assert!(!st.is_null());
    unsafe { xffl_state_destroy(st) };
    unsafe { xffl_state_destroy(std::ptr::null_mut()) }; // NULL-safe
}
