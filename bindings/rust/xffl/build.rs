//! Gives this crate's tests, doc tests and examples an rpath to the libxffl that xffl-sys linked, so
//! `cargo test` runs without LD_LIBRARY_PATH. xffl-sys passes the directory as DEP_XFFL_LIB_DIR.
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_XFFL_LIB_DIR");
    if let Some(dir) = std::env::var_os("DEP_XFFL_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", std::path::Path::new(&dir).display());
    }
}
