//! `mbhybrid-cxx` (also `mbhybrid-c++`, a link the build script makes): a
//! C++ compiler driver for make and CMake (`CXX=mbhybrid-c++`) that takes
//! what `mpicxx` takes and builds instrumented programs; it is `mbhybrid`
//! run under this name (see `src/wrapper.rs`).

#[path = "../shim.rs"]
mod shim;

fn main() -> std::process::ExitCode {
    shim::exec_mbhybrid("mbhybrid-cxx")
}
