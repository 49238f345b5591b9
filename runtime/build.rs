//! Builds `src/pcontrol.c` (the variadic `MPI_Pcontrol`, which stable Rust
//! cannot define) and makes the cdylib export it, and `src/mpi_consts.c`
//! (MPI constants mpi-sys does not expose).

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=src/pcontrol.c");
    println!("cargo:rerun-if-changed=src/mpi_consts.c");
    println!("cargo:rerun-if-changed=build.rs");

    let mut build = cc::Build::new();
    build
        .file("src/pcontrol.c")
        .file("src/mpi_consts.c")
        .warnings(true);
    // Compile against the installed `mpi.h`, so the definition is checked
    // against the library's own prototype of `MPI_Pcontrol`.
    match build_probe_mpi::probe() {
        Ok(lib) => {
            for dir in &lib.include_paths {
                build.include(dir);
            }
        }
        Err(errors) => {
            for error in errors {
                println!("cargo:warning=MPI probe: {error}");
            }
        }
    }
    build.compile("mbhybrid_pcontrol");

    // rustc's version script for a cdylib exports only Rust items, so a C
    // symbol from a static library would stay local. A second (anonymous)
    // version script naming `MPI_Pcontrol` is merged with rustc's by GNU ld
    // and lld; `--undefined` pulls the object out of the archive.
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" {
        let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
        let script = out.join("pcontrol.ver");
        std::fs::write(&script, "{ global: MPI_Pcontrol; };\n").expect("write version script");
        println!("cargo:rustc-cdylib-link-arg=-Wl,--undefined=MPI_Pcontrol");
        println!(
            "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
            script.display()
        );
    }
}
