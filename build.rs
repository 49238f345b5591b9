//! Puts `mbhybrid-c++` beside the binaries: cargo refuses `+` in a target
//! name, so the C++ driver is built as `mbhybrid-cxx`, and this links the
//! name make and CMake users expect to it. The link is relative and made
//! before the binaries exist (it dangles until they are built).

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let Some(out_dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return;
    };
    // OUT_DIR is <target>/[<triple>/]<profile>/build/<package>-<hash>/out,
    // and the binaries go to <target>/[<triple>/]<profile>/.
    let Some(profile_dir) = out_dir.ancestors().nth(3) else {
        return;
    };
    let link = profile_dir.join("mbhybrid-c++");
    if std::fs::symlink_metadata(&link).is_ok() {
        return;
    }
    if let Err(e) = std::os::unix::fs::symlink("mbhybrid-cxx", &link) {
        println!(
            "cargo:warning=cannot link {} to mbhybrid-cxx ({e}); use mbhybrid-cxx as the C++ compiler",
            link.display()
        );
    }
}
