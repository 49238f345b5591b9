//! One module per subcommand: each turns parsed arguments into calls of the
//! library crates and returns the process exit status.

pub mod analyze;
pub mod audit;
pub mod build;
pub mod explain;
pub mod replay;
pub mod run;
pub mod verify;

use std::path::PathBuf;

/// Where the runtime library is installed: beside the mbhybrid executable
/// (cargo puts both in `target/<profile>/`).
pub fn default_runtime_dir() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.canonicalize().ok())
        .and_then(|exe| exe.parent().map(|p| p.to_owned()))
        .unwrap_or_else(|| PathBuf::from("."))
}
