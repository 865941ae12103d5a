//! Finds libxffl: XFFL_LIB_DIR first, then the `pkg-config` program (no crate needed), else the
//! linker's default search path. Emits `lib_dir` and `include` metadata for dependents
//! (DEP_XFFL_LIB_DIR, DEP_XFFL_INCLUDE) so they can add an rpath for their tests and examples.
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn pkg_config(args: &[&str]) -> Option<String> {
    let program = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
    let output = Command::new(program).args(args).arg("xffl").output().ok()?;
    if !output.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

fn from_pkg_config() -> Option<(PathBuf, Option<PathBuf>)> {
    let lib_dir = pkg_config(&["--variable=libdir"]).filter(|dir| !dir.is_empty())?;
    let include_dir = pkg_config(&["--variable=includedir"]).filter(|dir| !dir.is_empty());
    Some((PathBuf::from(lib_dir), include_dir.map(PathBuf::from)))
}

fn main() {
    for var in ["XFFL_LIB_DIR", "XFFL_INCLUDE_DIR", "PKG_CONFIG", "PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=build.rs");

    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let source_include = manifest_dir.join("../../../include");

    let (lib_dir, include_dir) = match env::var_os("XFFL_LIB_DIR").filter(|dir| !dir.is_empty()) {
        Some(dir) => (Some(PathBuf::from(dir)), env::var_os("XFFL_INCLUDE_DIR").map(PathBuf::from)),
        None => match from_pkg_config() {
            Some((lib, include)) => (Some(lib), include),
            None => {
                println!(
                    "cargo:warning=xffl-sys: neither XFFL_LIB_DIR nor `pkg-config xffl` gave a library \
                     directory; linking -lxffl from the default search path"
                );
                (None, None)
            }
        },
    };

    if let Some(dir) = &lib_dir {
        if !Path::new(dir).join("libxffl.so").exists() && !Path::new(dir).join("libxffl.dylib").exists() {
            println!("cargo:warning=xffl-sys: no libxffl.so in {}", dir.display());
        }
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:lib_dir={}", dir.display());
        // This crate's own test binaries find the library without LD_LIBRARY_PATH.
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    }
    println!("cargo:rustc-link-lib=dylib=xffl");
    let include = include_dir.unwrap_or(source_include);
    println!("cargo:include={}", include.display());
}
