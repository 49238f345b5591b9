//! Builds `src/pcontrol.c` (the variadic `MPI_Pcontrol`, which stable Rust
//! cannot define) and makes the cdylib export it, and `src/mpi_consts.c`
//! (MPI constants mpi-sys does not expose), and sets `cfg(mpi4)` when the
//! installed `mpi.h` is MPI 4's (MPICH 4 declares the MPI 4 calls, Open MPI
//! 4 does not). `MPICC` chooses the MPI, as it does for `mpi-sys`; each MPI's
//! runtime is built in its own target directory (`scripts/build-runtimes.sh`).
//!
//! It also reads every function the header declares and writes, for those
//! `mbh_trace::support` classes as not modelled, the list the runtime's
//! pass-through wrappers are made from (`$OUT_DIR/not_modelled.rs`, see
//! `src/not_modelled.rs`), and the header's functions
//! (`$OUT_DIR/mpi_functions.txt`, for the runtime's tests).

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=src/pcontrol.c");
    println!("cargo:rerun-if-changed=src/mpi_consts.c");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=MPICC");
    println!("cargo::rustc-check-cfg=cfg(mpi4)");
    println!("cargo::rustc-check-cfg=cfg(mpi_pointer_handles)");

    let mut build = cc::Build::new();
    build
        .file("src/pcontrol.c")
        .file("src/mpi_consts.c")
        .warnings(true);
    // Compile against the installed `mpi.h`, so the definition is checked
    // against the library's own prototype of `MPI_Pcontrol`.
    let include_dirs = match build_probe_mpi::probe() {
        Ok(lib) => lib.include_paths,
        Err(errors) => {
            for error in errors {
                println!("cargo:warning=MPI probe: {error}");
            }
            Vec::new()
        }
    };
    build.includes(&include_dirs);
    let header = probe_header(&include_dirs);
    if header.version >= 4 {
        println!("cargo:rustc-cfg=mpi4");
    }
    if header.open_mpi {
        // Open MPI's handles are pointers (MPICH's are `int`s): only tests
        // that make handles from numbers care.
        println!("cargo:rustc-cfg=mpi_pointer_handles");
    }
    build.compile("mbhybrid_pcontrol");
    write_not_modelled(&header.functions);

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

/// Writes the pass-through list of the header's unmodelled functions and
/// the list of the header's functions (see the crate's build doc).
fn write_not_modelled(functions: &std::collections::BTreeSet<String>) {
    use mbh_trace::support::{index_of, support, Support};
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    // A function the table does not know (a newer MPI) is passed through
    // as not modelled too, past the table's positions: never silent.
    let mut list = String::from("pass_through! {\n");
    let mut unknown = Vec::new();
    for name in functions {
        let index = match support(name) {
            Some(Support::NotModelled) => index_of(name),
            None => {
                unknown.push(name.as_str());
                Some(mbh_trace::support::known() + unknown.len() - 1)
            }
            Some(_) => None,
        };
        if let Some(index) = index {
            list.push_str(&format!("    {index} {name} => P{name};\n"));
        }
    }
    list.push_str("}\n");
    list.push_str(&format!(
        "/// Functions of the header the table does not know, by position past it.\n\
         pub(crate) const UNKNOWN: &[&str] = &{unknown:?};\n"
    ));
    std::fs::write(out.join("not_modelled.rs"), list).expect("write not_modelled.rs");
    let names: Vec<&str> = functions.iter().map(String::as_str).collect();
    std::fs::write(out.join("mpi_functions.txt"), names.join("\n"))
        .expect("write mpi_functions.txt");
}

/// What the installed `mpi.h` says of its MPI.
struct Header {
    /// `MPI_VERSION` (3 when it cannot be read).
    version: u32,
    /// Whether it is Open MPI's (`OPEN_MPI` defined).
    open_mpi: bool,
    /// The MPI functions it declares.
    functions: std::collections::BTreeSet<String>,
}

/// Reads [`Header`] from the `mpi.h` in `include_dirs` by running the
/// preprocessor over a few lines.
fn probe_header(include_dirs: &[PathBuf]) -> Header {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let probe = out.join("mpi_probe.c");
    std::fs::write(
        &probe,
        "#include <mpi.h>\nmbh_version MPI_VERSION\n\
         #ifdef OPEN_MPI\nmbh_open_mpi\n#endif\n",
    )
    .expect("write the MPI header probe");
    let mut build = cc::Build::new();
    build.file(&probe).includes(include_dirs);
    let expanded = build.expand();
    let text = String::from_utf8_lossy(&expanded);
    let mut lines = text.lines().map(str::trim);
    Header {
        version: lines
            .clone()
            .find_map(|line| line.strip_prefix("mbh_version"))
            .and_then(|version| version.trim().parse().ok())
            .unwrap_or(3),
        open_mpi: lines.any(|line| line == "mbh_open_mpi"),
        functions: mbh_trace::support::declared_functions(&text),
    }
}
