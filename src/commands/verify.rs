//! `mbhybrid verify`: run the job under the runtime, read the traces, report.

use crate::cli::{Format, VerifyArgs};
use crate::error::UsageError;
use crate::launch::{self, Job, Launcher};
use crate::outcome::{self, RunContext};
use crate::symbolize::Symbolizer;
use anyhow::{Context, Result};
use is_terminal::IsTerminal;
use mbh_trace::layout::{InterleavingDir, RunManifest, ENV_TRACE_DIR};
use mbh_trace::report::{ChoicePointStats, Report};
use mbh_trace::SiteTable;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Runs `mbhybrid verify`.
pub fn run(args: &VerifyArgs) -> Result<ExitCode> {
    let started = Instant::now();
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let program = check_program(&args.program, &cwd)?;
    let launcher = Launcher::new(&args.launcher, args.np)?;

    let mut warnings = Vec::new();
    let site_path = SiteTable::path_for(&program);
    let sites = if site_path.exists() {
        match SiteTable::read(&site_path) {
            Ok(table) => Some(table),
            Err(e) => {
                warnings.push(format!("{e}; reports will lack MPI call sites"));
                None
            }
        }
    } else {
        None
    };
    // A program built by `mbhybrid build` links the runtime; any other is
    // given it through the dynamic loader.
    let preload = match sites {
        Some(_) => None,
        None => {
            let runtime = args
                .runtime
                .clone()
                .unwrap_or_else(|| super::default_runtime_dir().join(super::RUNTIME_LIBRARY));
            if !runtime.is_file() {
                return Err(UsageError::RuntimeMissing(runtime).into());
            }
            warnings.push(format!(
                "`{}` was not built by `mbhybrid build` (no {}); the runtime is preloaded and locations come from debug information only",
                args.program.display(),
                site_path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
            ));
            Some(runtime.canonicalize().unwrap_or(runtime))
        }
    };

    let run_id = new_run_id();
    let run_dir = args.run_dir.join(&run_id);
    let dir = InterleavingDir::new(&run_dir, 1);
    std::fs::create_dir_all(&dir.path).map_err(|e| UsageError::RunDirUnwritable {
        path: args.run_dir.clone(),
        reason: e.to_string(),
    })?;
    let run_dir = run_dir.canonicalize().unwrap_or(run_dir);
    let dir = InterleavingDir::new(&run_dir, 1);
    let manifest = RunManifest {
        run_id: run_id.clone(),
        program: program.clone(),
        args: args.args.clone(),
        np: args.np,
        launcher: args.launcher.clone(),
        cwd: cwd.clone(),
        preload: preload.clone(),
    };
    std::fs::write(
        RunManifest::path(&run_dir),
        serde_json::to_string_pretty(&manifest)?,
    )
    .map_err(|e| UsageError::RunDirUnwritable {
        path: run_dir.clone(),
        reason: e.to_string(),
    })?;

    let mut env = vec![(ENV_TRACE_DIR.to_string(), dir.path.display().to_string())];
    if let Some(lib) = &preload {
        let existing = std::env::var("LD_PRELOAD").unwrap_or_default();
        let value = if existing.is_empty() {
            lib.display().to_string()
        } else {
            format!("{}:{existing}", lib.display())
        };
        env.push(("LD_PRELOAD".into(), value));
    }
    let progress = args.format == Format::Human && std::io::stderr().is_terminal();
    if progress {
        eprintln!(
            "mbhybrid: running {} (interleaving 1)",
            launcher.command_line(&args.program, &args.args)
        );
    }
    let job = Job {
        launcher: &launcher,
        program: &program,
        args: &args.args,
        env,
        stdout: dir.launcher_stdout(),
        stderr: dir.launcher_stderr(),
        timeout: Duration::from_secs(args.timeout),
    };
    let ended = launch::run(&job).map_err(|e| UsageError::LauncherFailed {
        command: launcher.command_line(&program, &args.args),
        status: e.to_string(),
        stderr: String::new(),
    })?;

    let symbolizer = Symbolizer::new(&program, &cwd);
    let analysis = outcome::analyze(&RunContext {
        np: args.np,
        interleaving: 1,
        dir: &dir,
        ended: &ended,
        sites: sites.as_ref(),
        symbolizer: &symbolizer,
        timeout_secs: args.timeout,
    })?;
    warnings.extend(analysis.warnings);

    let report = Report {
        tool: "mbhybrid".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        program: args.program.display().to_string(),
        args: args.args.clone(),
        np: args.np,
        clocks: "lamport".into(),
        buffering: "infinite".into(),
        interleavings: 1,
        // One run explores no alternative matches: coverage of the wildcard
        // space is complete only when the run had no choice to make, which
        // this version cannot tell yet.
        complete: false,
        choice_points: ChoicePointStats::default(),
        findings: analysis.findings,
        wildcards: Vec::new(),
        barriers: Vec::new(),
        run_id,
        run_dir: run_dir.display().to_string(),
        runs: vec![analysis.outcome],
        warnings,
        seconds: started.elapsed().as_secs_f64(),
    };
    print_report(&report, args.format, &cwd)?;
    Ok(if report.findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn print_report(report: &Report, format: Format, cwd: &Path) -> Result<()> {
    use std::io::Write;
    let text = match format {
        Format::Json => mbh_diagnostics::json::render(report)?,
        Format::Short => mbh_diagnostics::short::render(report),
        Format::Human => {
            let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            mbh_diagnostics::human::render(report, cwd, color)?
        }
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// The program as an absolute path, after checking it can be run.
fn check_program(program: &Path, cwd: &Path) -> Result<PathBuf, UsageError> {
    let path = if program.is_absolute() {
        program.to_owned()
    } else {
        cwd.join(program)
    };
    let meta =
        std::fs::metadata(&path).map_err(|_| UsageError::NoSuchProgram(program.to_owned()))?;
    use std::os::unix::fs::PermissionsExt;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return Err(UsageError::NotExecutable(program.to_owned()));
    }
    Ok(path.canonicalize().unwrap_or(path))
}

/// A run id that sorts by time: `20261121-233015-12345` (UTC, then the pid
/// so that two runs started in the same second differ).
fn new_run_id() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let t = secs % 86_400;
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}-{}",
        t / 3600,
        t / 60 % 60,
        t % 60,
        std::process::id()
    )
}

/// Days since 1970-01-01 to (year, month, day); Howard Hinnant's algorithm.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_413), (2025, 11, 21));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }

    #[test]
    fn missing_and_non_executable_programs_are_usage_errors() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            check_program(Path::new("nope"), dir.path()),
            Err(UsageError::NoSuchProgram(_))
        ));
        std::fs::write(dir.path().join("data"), "x").unwrap();
        assert!(matches!(
            check_program(Path::new("data"), dir.path()),
            Err(UsageError::NotExecutable(_))
        ));
        assert!(matches!(
            check_program(Path::new("."), dir.path()),
            Err(UsageError::NotExecutable(_))
        ));
    }
}
