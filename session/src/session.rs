//! What every run of one verification shares: the checked program, the
//! launcher, the run directory, the call sites, the runtime to preload.
//! `verify` prepares a session from the command line; `replay` from the
//! manifest a `verify` wrote.

use crate::error::{Result, SessionError};
use crate::progress::ProgressMode;
use mbh_launch::Launcher;
use mbh_trace::layout::RunManifest;
use mbh_trace::outcome::Warning;
use mbh_trace::SiteTable;
use mbh_verdict::symbolize::Symbolizer;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One verification's fixed parts.
pub struct Session {
    /// The working directory (sources are shown relative to it).
    pub cwd: PathBuf,
    /// The program, absolute.
    pub program: PathBuf,
    /// The program as the user wrote it.
    pub program_arg: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Number of processes.
    pub np: u32,
    /// The launcher.
    pub launcher: Launcher,
    /// How long one run may take.
    pub timeout: Duration,
    /// Call sites, for programs built by `mbhybrid build`.
    pub sites: Option<SiteTable>,
    /// The runtime to preload, for programs not built by mbhybrid.
    pub preload: Option<PathBuf>,
    /// Debug information of the program.
    pub symbolizer: Symbolizer,
    /// The run id.
    pub run_id: String,
    /// The run directory (absolute).
    pub run_dir: PathBuf,
    /// Where a search shows its progress.
    pub progress: ProgressMode,
    /// Warnings found while preparing (they go into the report).
    pub warnings: Vec<Warning>,
}

/// What `prepare` needs from the command line.
pub struct SessionRequest<'a> {
    /// The program as given.
    pub program: &'a Path,
    /// Its arguments.
    pub args: &'a [String],
    /// Number of processes.
    pub np: u32,
    /// Launcher template, `{np}` still in it (the binary chose the MPI's
    /// `mpiexec` when the user named none).
    pub launcher: &'a str,
    /// Environment the launcher of the program's MPI needs.
    pub launcher_env: Vec<(String, String)>,
    /// The runtime library to preload, and how to tell whether a program
    /// links it.
    pub runtime: &'a RuntimeLookup,
    /// The run root (`--run-dir`).
    pub run_root: &'a Path,
    /// `--timeout`, seconds.
    pub timeout: u64,
    /// Where a search shows its progress.
    pub progress: ProgressMode,
}

/// Where the runtime library is, for programs not built by mbhybrid, and
/// how to tell the ones that were. The binary knows both: where it is
/// installed, and how to read an executable's libraries (`mbh-instrument`).
#[derive(Debug, Clone)]
pub struct RuntimeLookup {
    /// The runtime library to preload.
    pub library: PathBuf,
    /// Whether the executable at a path links the runtime (a program
    /// built by `mbhybrid build` or the compiler drivers).
    pub links_runtime: fn(&Path) -> bool,
}

impl Session {
    /// Checks the request and creates the run directory with its manifest.
    pub fn prepare(request: &SessionRequest<'_>) -> Result<Session> {
        let cwd = std::env::current_dir().map_err(SessionError::WorkingDir)?;
        let program = check_program(request.program, &cwd)?;
        let template = request.launcher.to_owned();
        let launcher = Launcher::new(&template, request.np)?.with_env(request.launcher_env.clone());
        let mut warnings = Vec::new();
        let (sites, preload) =
            sites_and_preload(&program, request.program, request.runtime, &mut warnings)?;

        let run_id = new_run_id();
        let run_dir = request.run_root.join(&run_id);
        std::fs::create_dir_all(&run_dir).map_err(|e| SessionError::RunDirUnwritable {
            path: request.run_root.to_owned(),
            reason: e.to_string(),
        })?;
        let run_dir = run_dir.canonicalize().unwrap_or(run_dir);
        let manifest = RunManifest {
            run_id: run_id.clone(),
            program: program.clone(),
            args: request.args.to_vec(),
            np: request.np,
            launcher: template.clone(),
            launcher_env: launcher.env.clone(),
            cwd: cwd.clone(),
            preload: preload.clone(),
            timeout: request.timeout,
        };
        let text = serde_json::to_string_pretty(&manifest).map_err(|e| SessionError::Write {
            path: RunManifest::path(&run_dir),
            source: std::io::Error::other(e),
        })?;
        std::fs::write(RunManifest::path(&run_dir), text).map_err(|e| {
            SessionError::RunDirUnwritable {
                path: run_dir.clone(),
                reason: e.to_string(),
            }
        })?;
        let symbolizer = Symbolizer::new(&program, &cwd);
        if preload.is_some() && !symbolizer.has_debug_info() {
            warnings.push(Warning::NoDebugInfo {
                program: request.program.to_owned(),
            });
        }
        Ok(Session {
            symbolizer,
            cwd,
            program,
            program_arg: request.program.display().to_string(),
            args: request.args.to_vec(),
            np: request.np,
            launcher,
            timeout: Duration::from_secs(request.timeout),
            sites,
            preload,
            run_id,
            run_dir,
            progress: request.progress,
            warnings,
        })
    }

    /// The session of an earlier run, from its manifest (for `replay`).
    pub fn resume(
        run_dir: &Path,
        progress: ProgressMode,
        runtime: &RuntimeLookup,
    ) -> Result<Session> {
        let manifest_path = RunManifest::path(run_dir);
        let text = std::fs::read_to_string(&manifest_path)
            .map_err(|_| SessionError::NoSuchRun(run_dir.to_owned()))?;
        let manifest: RunManifest =
            serde_json::from_str(&text).map_err(|source| SessionError::BadManifest {
                path: manifest_path.clone(),
                source,
            })?;
        let program = check_program(&manifest.program, &manifest.cwd)?;
        let launcher =
            Launcher::new(&manifest.launcher, manifest.np)?.with_env(manifest.launcher_env);
        let mut warnings = Vec::new();
        let (sites, _) = sites_and_preload(&program, &manifest.program, runtime, &mut warnings)?;
        Ok(Session {
            symbolizer: Symbolizer::new(&program, &manifest.cwd),
            cwd: manifest.cwd.clone(),
            program_arg: manifest.program.display().to_string(),
            program,
            args: manifest.args,
            np: manifest.np,
            launcher,
            timeout: Duration::from_secs(manifest.timeout),
            sites,
            preload: manifest.preload,
            run_id: manifest.run_id,
            run_dir: run_dir.to_owned(),
            progress,
            warnings,
        })
    }

    /// Adds to the site table every site of `traces` that the runtime made
    /// from a return address (a call the program did not label) and the
    /// table lacks, found through the executable's debug information: from
    /// then on such a site is looked up like one `build` wrote, by every
    /// finding. The MPI function comes from the traces' `CallSite` records
    /// (else from a record of the call). Sites are the same in every rank
    /// and run, so each is resolved once per session.
    pub fn learn_sites(&mut self, traces: &[Option<mbh_trace::RankTrace>]) {
        use mbh_trace::op::OpClass;
        use mbh_trace::site::offset_of_site;
        use std::collections::BTreeMap;
        let known = |id: u32| self.sites.as_ref().is_some_and(|t| t.get(id).is_some());
        // id -> the MPI function, when a record says
        let mut new: BTreeMap<u32, Option<String>> = BTreeMap::new();
        let mut note = |id: u32, call: Option<&str>| {
            if offset_of_site(id).is_none() || known(id) {
                return;
            }
            let entry = new.entry(id).or_default();
            if entry.is_none() {
                *entry = call.map(str::to_string);
            }
        };
        for trace in traces.iter().flatten() {
            for (id, name) in trace.call_sites() {
                note(id, Some(&name));
            }
            for op in &trace.ops {
                let call = match op.kind.class() {
                    OpClass::Clock => None,
                    _ => Some(op.kind.mpi_name()),
                };
                note(op.site, call);
            }
            if let Some((_, site)) = trace.end.abort {
                note(site, None);
            }
        }
        if new.is_empty() {
            return;
        }
        let table = self
            .sites
            .get_or_insert_with(|| mbh_trace::SiteTable::new(self.symbolizer.exe(), Vec::new()));
        for (id, call) in new {
            let call = call.as_deref().unwrap_or("an MPI function");
            if let Some(site) = self.symbolizer.return_site(id, call) {
                table.add(site);
            }
        }
    }

    /// Adds to each finding with a location in code without debug
    /// information (a site made from a return address that has no line) a
    /// note saying how to get lines.
    pub fn note_missing_debug_info(&self, findings: &mut [mbh_trace::Finding]) {
        let exe = self.symbolizer.exe();
        for finding in findings {
            if finding
                .locations
                .iter()
                .any(|l| l.line == 0 && l.file == exe)
            {
                finding.notes.push(format!(
                    "`{exe}` has no debug information for this code: the location names the function and the offset in the executable; rebuild it with `-g` for source lines"
                ));
            }
        }
    }

    /// The command that replays interleaving `n` of this run.
    pub fn replay_command(&self, n: u32) -> String {
        let default_root = self.cwd.join(mbh_trace::layout::DEFAULT_RUN_ROOT);
        match self.run_dir.parent() {
            Some(root) if root == default_root => {
                format!("mbhybrid replay {} --interleaving {n}", self.run_id)
            }
            Some(root) => format!(
                "mbhybrid replay {} --interleaving {n} --run-dir {}",
                self.run_id,
                shell_words::quote(&root.display().to_string())
            ),
            None => format!(
                "mbhybrid replay {} --interleaving {n}",
                self.run_dir.display()
            ),
        }
    }
}

/// The program's site table, or else the runtime to preload.
fn sites_and_preload(
    program: &Path,
    given: &Path,
    runtime: &RuntimeLookup,
    warnings: &mut Vec<Warning>,
) -> Result<(Option<SiteTable>, Option<PathBuf>)> {
    let site_path = SiteTable::path_for(program);
    let stale = site_path.exists() && !(runtime.links_runtime)(program);
    if stale {
        // `make clean` removes objects and executables, not our sidecar:
        // the table of an earlier mbhybrid build beside a plain one.
        warnings.push(Warning::StaleSiteTable {
            table: site_path.clone(),
            program: given.to_owned(),
        });
    } else if site_path.exists() {
        match SiteTable::read(&site_path) {
            Ok(table) => return Ok((Some(table), None)),
            Err(e) => warnings.push(Warning::UnreadableSiteTable {
                error: e.to_string(),
            }),
        }
    }
    let runtime = runtime.library.clone();
    if !runtime.is_file() {
        return Err(SessionError::RuntimeMissing(runtime));
    }
    warnings.push(Warning::NotBuilt {
        program: given.to_owned(),
        table: site_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    });
    Ok((None, Some(runtime.canonicalize().unwrap_or(runtime))))
}

/// The program as an absolute path, after checking it can be run.
pub fn check_program(program: &Path, cwd: &Path) -> Result<PathBuf> {
    let path = if program.is_absolute() {
        program.to_owned()
    } else {
        cwd.join(program)
    };
    let meta =
        std::fs::metadata(&path).map_err(|_| SessionError::NoSuchProgram(program.to_owned()))?;
    use std::os::unix::fs::PermissionsExt;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return Err(SessionError::NotExecutable(program.to_owned()));
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
            Err(SessionError::NoSuchProgram(_))
        ));
        std::fs::write(dir.path().join("data"), "x").unwrap();
        assert!(matches!(
            check_program(Path::new("data"), dir.path()),
            Err(SessionError::NotExecutable(_))
        ));
        assert!(matches!(
            check_program(Path::new("."), dir.path()),
            Err(SessionError::NotExecutable(_))
        ));
    }
}
