//! Every C function of the committed bindings is wrapped by the safe crate, or listed below with the
//! reason it is not. A function added to include/xffl.h (then to xffl-sys by regenerate.sh) fails
//! this test until it is wrapped or listed.
use std::fs;
use std::path::Path;

/// C functions the safe crate deliberately does not call, with the reason.
const NOT_WRAPPED: &[(&str, &str)] = &[];

fn functions_of_the_bindings() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../xffl-sys/src/bindings.rs");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.split("pub fn ")
        .skip(1)
        .map(|rest| rest.split('(').next().unwrap().trim().to_string())
        .filter(|name| name.starts_with("xffl_"))
        .collect()
}

fn safe_sources() -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = String::new();
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "rs") {
            all += &fs::read_to_string(&path).unwrap();
        }
    }
    all
}

#[test]
fn every_c_function_is_wrapped_or_listed_with_a_reason() {
    let functions = functions_of_the_bindings();
    assert!(functions.len() >= 40, "found only {} functions in bindings.rs", functions.len());
    let sources = safe_sources();
    let mut missing = Vec::new();
    for name in &functions {
        let called = sources.contains(&format!("sys::{name}("));
        let listed = NOT_WRAPPED.iter().any(|(listed, _)| listed == name);
        assert!(!(called && listed), "{name} is wrapped but still listed in NOT_WRAPPED");
        if !called && !listed {
            missing.push(name.as_str());
        }
    }
    assert!(
        missing.is_empty(),
        "C functions without a safe wrapper (wrap them or list them in NOT_WRAPPED): {missing:?}"
    );
    for (name, reason) in NOT_WRAPPED {
        assert!(functions.iter().any(|f| f == name), "NOT_WRAPPED lists {name}, which is not in the bindings");
        assert!(!reason.is_empty());
    }
}
