//! `mbhybrid build`: compile, find MPI call sites, instrument, link.

use crate::cli::BuildArgs;
use anyhow::Result;
use mbh_diagnostics::tool::{emit, ToolDiagnostic};
use std::process::ExitCode;

/// Runs `mbhybrid build`.
pub fn run(args: &BuildArgs) -> Result<ExitCode> {
    let base_dir = std::env::current_dir()?;
    let request = mbh_instrument::BuildRequest {
        output: args.output.clone(),
        sources: args.sources.clone(),
        cc_flags: args.cc_flags.clone(),
        runtime_dir: args
            .runtime_dir
            .clone()
            .unwrap_or_else(super::default_runtime_dir),
        base_dir,
        zone_bounds: args.zone_bound.clone(),
        mpi: args.mpi.map(crate::cli::MpiArg::family),
        access_checks: !args.no_access_checks,
    };
    let built = mbh_instrument::build(&request)?;
    // clang's warnings, exactly as clang printed them, then what the runtime
    // will not handle: better known now than in the middle of a long run.
    emit(&ToolDiagnostic::verbatim(built.warnings));
    emit(&ToolDiagnostic::verbatim_lines(&built.preflight));
    emit(
        &ToolDiagnostic::info(format!(
            "built {} ({} MPI call sites, table in {})",
            built.executable.display(),
            built.sites.sites.len(),
            built.site_table_path.display()
        ))
        .from("mbhybrid"),
    );
    Ok(ExitCode::SUCCESS)
}
