//! `mbhybrid explain CODE`: the page of a finding code.

use crate::cli::ExplainArgs;
use crate::error::UsageError;
use anyhow::Result;
use is_terminal::IsTerminal;
use std::process::ExitCode;

/// Runs `mbhybrid explain`.
pub fn run(args: &ExplainArgs) -> Result<ExitCode> {
    let page = mbh_diagnostics::explain::page(&args.code).ok_or_else(|| {
        UsageError::NoSuchCode(args.code.clone(), mbh_trace::FindingKind::ALL.len())
    })?;
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    print!("{}", mbh_diagnostics::explain::render_terminal(page, color));
    Ok(ExitCode::SUCCESS)
}
