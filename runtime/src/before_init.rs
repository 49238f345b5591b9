//! MPI calls before `MPI_Init`. MPI forbids them and MPICH
//! aborts the process at the first one, before any trace exists, so the
//! runtime notes the first such call in the interleaving directory
//! ([`mbh_trace::layout::BeforeInitCall`]) and `verify` reports it at its
//! line instead of "no process reached `MPI_Init`".
//!
//! Cost when the runtime is off or has started: one relaxed load per call.

use mbh_trace::layout::{BeforeInitCall, InterleavingDir, ENV_TRACE_DIR};

/// Calls the standard allows before `MPI_Init` (MPI-4.1 §11.2.1), and
/// `MPI_Init` itself.
const ALLOWED: [&str; 7] = [
    "MPI_Init",
    "MPI_Init_thread",
    "MPI_Initialized",
    "MPI_Finalized",
    "MPI_Get_version",
    "MPI_Get_library_version",
    "MPI_Pcontrol",
];

/// `MPI_Init` returned: calls are no longer "before".
pub fn initialized() {
    crate::lifecycle::see_init();
}

/// A wrapped call named `name` at site `site`, while the runtime is not
/// active: noted if it is the first call before `MPI_Init` of a process
/// that runs under `verify`.
#[cold]
pub fn note(name: &str, site: u32) {
    if crate::lifecycle::init_seen() || ALLOWED.contains(&name) {
        return;
    }
    if crate::lifecycle::see_init() {
        return;
    }
    let Some(dir) = std::env::var_os(ENV_TRACE_DIR).filter(|d| !d.is_empty()) else {
        return;
    };
    let call = BeforeInitCall {
        rank: launcher_rank(),
        site,
        call: name.to_string(),
    };
    let dir = InterleavingDir { path: dir.into() };
    // Best effort: a note that cannot be written leaves MPI's own abort.
    let _ = std::fs::write(dir.before_init(std::process::id()), call.to_line());
}

/// The rank the launcher gave this process in its environment (MPICH's
/// Hydra: `PMI_RANK`; Open MPI: `OMPI_COMM_WORLD_RANK`; PMIx: `PMIX_RANK`).
fn launcher_rank() -> i32 {
    ["PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"]
        .iter()
        .find_map(|var| std::env::var(var).ok()?.parse().ok())
        .unwrap_or(-1)
}
