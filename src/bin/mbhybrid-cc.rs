//! `mbhybrid-cc`: a C compiler driver for make and CMake (`CC=mbhybrid-cc`)
//! that takes what `mpicc` takes and builds instrumented programs; it is
//! `mbhybrid` run under this name (see `src/wrapper.rs`).

#[path = "../shim.rs"]
mod shim;

fn main() -> std::process::ExitCode {
    shim::exec_mbhybrid("mbhybrid-cc")
}
