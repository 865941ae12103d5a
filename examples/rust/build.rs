//! When XFFL_LIB_DIR names the library directory (as for building xffl-sys), give the example an
//! rpath to it so `cargo run` works without LD_LIBRARY_PATH. An installed libxffl needs nothing.
fn main() {
    println!("cargo:rerun-if-env-changed=XFFL_LIB_DIR");
    if let Some(dir) = std::env::var_os("XFFL_LIB_DIR").filter(|dir| !dir.is_empty()) {
        println!(
            "cargo:rustc-link-arg=-Wl,-rpath,{}",
            std::path::Path::new(&dir).display()
        );
    }
}
