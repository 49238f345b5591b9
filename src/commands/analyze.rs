//! `mbhybrid analyze FILES... [-- CC_FLAGS]`: the static report alone
//! (functions, loops and their abstraction decisions, zones, wildcard
//! sites, calls the runtime does not handle), without linking anything.

use crate::cli::{AnalyzeArgs, AnalyzeFormat};
use anyhow::Result;
use mbh_diagnostics::tool::{emit, ToolDiagnostic};
use std::process::ExitCode;

/// Runs `mbhybrid analyze`.
pub fn run(args: &AnalyzeArgs) -> Result<ExitCode> {
    let out = mbh_instrument::analyze(&mbh_instrument::AnalyzeRequest {
        sources: args.sources.clone(),
        cc_flags: args.cc_flags.clone(),
        base_dir: std::env::current_dir()?,
        zone_bounds: args.zone_bound.clone(),
        mpi: args.mpi.map(crate::cli::MpiArg::family),
    })?;
    emit(&ToolDiagnostic::verbatim(out.warnings));
    match args.format {
        AnalyzeFormat::Json => println!("{}", serde_json::to_string_pretty(&out.report)?),
        AnalyzeFormat::Human => {
            emit(&ToolDiagnostic::verbatim_lines(&out.preflight));
            print!("{}", mbh_diagnostics::static_report::human(&out.report));
        }
    }
    Ok(ExitCode::SUCCESS)
}
