//! `mbhybrid`: the command line. Parses arguments and orchestrates the
//! library crates; everything else lives in them.
//!
//! Exit status: 0 nothing found, 1 findings, 2 usage error or tool failure.
//!
//! Run under the name `mbhybrid-cc` or `mbhybrid-c++` it is a compiler
//! driver instead ([`wrapper`]).

mod cli;
mod commands;
mod error;
mod mpi_choice;
mod wrapper;

use clap::Parser;
use mbh_diagnostics::tool::{emit, ToolDiagnostic};
use std::process::ExitCode;

fn main() -> ExitCode {
    // Run as `mbhybrid-cc` or `mbhybrid-c++`, this is a compiler driver
    // whose arguments are the compiler's, not mbhybrid's.
    if let Some(language) = std::env::args_os()
        .next()
        .and_then(|argv0| wrapper::invoked_as(&argv0))
    {
        return wrapper::main(language);
    }
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap's own help/version go to stdout with status 0; usage
            // errors to stderr with status 2.
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            emit(&ToolDiagnostic::error(format!("{err:#}")));
            ExitCode::from(2)
        }
    }
}

fn run(cli: cli::Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        cli::Command::Build(args) => commands::build::run(&args),
        cli::Command::Verify(args) => commands::verify::run(&args),
        cli::Command::Replay(args) => commands::replay::run(&args),
        cli::Command::Run(args) => commands::run::run(&args),
        cli::Command::Explain(args) => commands::explain::run(&args),
        cli::Command::Analyze(args) => commands::analyze::run(&args),
        cli::Command::AuditBarriers(args) => commands::audit::run(&args),
        cli::Command::Wrappers => commands::wrappers::run(),
    }
}
