//! What `mbhybrid-cc` and `mbhybrid-cxx` share: cargo cannot give one
//! executable two names, so each is a small program that replaces itself
//! with the `mbhybrid` beside it, run under its own name; `mbhybrid` acts
//! on that name (`src/wrapper.rs`). Nothing of LLVM is linked into these,
//! so they cost the build next to nothing.

use mbh_diagnostics::tool::{emit, ToolDiagnostic};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode};

/// Executes the `mbhybrid` in this program's directory with `name` as its
/// `argv[0]` and this program's arguments; returns only if that fails.
pub fn exec_mbhybrid(name: &str) -> ExitCode {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe.with_file_name("mbhybrid"),
        Err(e) => {
            emit(
                &ToolDiagnostic::error(format!("cannot find where this program is: {e}"))
                    .from(name),
            );
            return ExitCode::from(2);
        }
    };
    let err = Command::new(&exe)
        .arg0(name)
        .args(std::env::args_os().skip(1))
        .exec();
    emit(
        &ToolDiagnostic::error(format!(
            "cannot run {}: {err}; {name} must stay in the directory of the mbhybrid \
             executable (cargo builds both into target/<profile>/), or be a symbolic link to \
             mbhybrid",
            exe.display()
        ))
        .from(name),
    );
    ExitCode::from(2)
}
