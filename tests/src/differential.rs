//! The differential test of the search (issue 11): a program's outcomes
//! under the guided search (`verify`, LLCP or LVCP, each buffering mode)
//! must equal its outcomes under the exhaustive reference (`verify
//! --search exhaustive`, which trusts no clock).
//!
//! An *outcome* is what a person would tell apart: the signature a run
//! printed when every rank finalized (each generated program prints one
//! `sig R: ...` line per rank naming the sender of every receive), and
//! each finding, as its kind and source lines. Runs that died print what
//! they got to before being stopped, which depends on timing: only their
//! findings count.

use crate::json::Report;
use crate::run_mbhybrid;
use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

/// What one exploration found, as compared.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outcomes {
    /// The sorted `sig` lines of each run in which every rank finalized.
    pub signatures: BTreeSet<Vec<String>>,
    /// `kind at line, line, ...` of every finding.
    pub findings: BTreeSet<String>,
}

impl Outcomes {
    /// The outcomes of a report.
    pub fn of(report: &Report) -> Outcomes {
        let signatures = report
            .runs
            .iter()
            .filter(|run| !run.infeasible && run.ranks.iter().all(|r| r.state == "finalized"))
            .map(|run| {
                let mut lines: Vec<String> = run
                    .stdout
                    .lines()
                    .filter(|l| l.starts_with("sig "))
                    .map(str::to_string)
                    .collect();
                lines.sort();
                lines
            })
            .collect();
        let findings = report
            .findings
            .iter()
            .map(|f| {
                let lines: BTreeSet<u32> = f.locations.iter().map(|l| l.line).collect();
                let lines: Vec<String> = lines.iter().map(u32::to_string).collect();
                format!("{} at line {}", f.kind, lines.join(", "))
            })
            .collect();
        Outcomes {
            signatures,
            findings,
        }
    }
}

/// One way of running the guided search, beside the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mode {
    /// `lamport` or `vector`.
    pub clocks: &'static str,
    /// `infinite` or `zero`.
    pub buffering: &'static str,
}

/// Every mode the differential test compares: both clocks, both
/// buffering modes.
pub const MODES: [Mode; 4] = [
    Mode {
        clocks: "lamport",
        buffering: "infinite",
    },
    Mode {
        clocks: "vector",
        buffering: "infinite",
    },
    Mode {
        clocks: "lamport",
        buffering: "zero",
    },
    Mode {
        clocks: "vector",
        buffering: "zero",
    },
];

/// How a program fared.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Interleavings the guided search ran, over all modes.
    pub guided_runs: u32,
    /// Runs the reference made (feasible and not), over both buffering
    /// modes.
    pub reference_runs: u32,
    /// Distinct outcomes (signatures and findings) of the reference.
    pub outcomes: usize,
    /// Runs (guided and reference) that ended at their timeout: hangs the
    /// wait-for graph could not confirm, each a run's whole timeout spent.
    /// A soak names the programs that have them, for the graph to learn.
    pub timed_out: u32,
    /// The reference ran [`REFERENCE_CAP`] runs without finishing: the
    /// program is too large to compare, and nothing was compared.
    pub too_large: bool,
}

/// Runs the reference may make per buffering mode. Its cost grows with the
/// product of the ranks' wildcard counts, and every forcing it cannot make
/// costs a run (up to its timeout); past this many, a soak moves on and
/// counts the program as too large, never as passed.
pub const REFERENCE_CAP: u32 = 250;

/// The guided search and the reference disagree (or a run failed).
#[derive(Debug, Clone)]
pub struct Mismatch {
    /// What differs, in words.
    pub what: String,
    /// The program's text.
    pub source: String,
    /// Commands that reproduce it.
    pub commands: Vec<String>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.what)?;
        writeln!(f, "to reproduce:")?;
        for c in &self.commands {
            writeln!(f, "  {c}")?;
        }
        writeln!(f, "--- the program\n{}", self.source)
    }
}

/// Builds `source` (C, `np` ranks) in `dir` and compares the guided search
/// with the reference in every mode of `modes`.
pub fn compare(source: &str, np: u32, dir: &Path, modes: &[Mode]) -> Result<Summary, Mismatch> {
    let c_file = dir.join("program.c");
    let exe = dir.join("program");
    let mismatch = |what: String, commands: Vec<String>| Mismatch {
        what,
        source: source.to_string(),
        commands,
    };
    std::fs::write(&c_file, source).map_err(|e| mismatch(format!("cannot write: {e}"), vec![]))?;
    let build = run_mbhybrid(
        dir,
        &[
            "build",
            "-o",
            path_str(&exe),
            path_str(&c_file),
            "--",
            "-Wall",
        ],
    );
    if !build.status.success() {
        return Err(mismatch(
            format!(
                "mbhybrid build failed:\n{}",
                String::from_utf8_lossy(&build.stderr)
            ),
            vec![],
        ));
    }
    let mut summary = Summary::default();
    let bufferings: BTreeSet<&str> = modes.iter().map(|m| m.buffering).collect();
    for buffering in bufferings {
        // The reference forces senders that may never come; when the
        // wait-for graph cannot confirm the hang (an untracked call), the
        // timeout ends the run, and the run is infeasible. Generated
        // programs take well under a second per run.
        let cap = REFERENCE_CAP.to_string();
        let reference_options = [
            "--search",
            "exhaustive",
            "--timeout",
            "10",
            "--max-interleavings",
            &cap,
        ];
        let (reference, command) = verify(dir, &exe, np, &reference_options, buffering)
            .map_err(|e| mismatch(e, vec![]))?;
        summary.reference_runs += reference.interleavings;
        summary.timed_out += timed_out(&reference);
        if !reference.complete && reference.interleavings >= REFERENCE_CAP {
            summary.too_large = true;
            return Ok(summary);
        }
        if !reference.complete {
            return Err(mismatch(
                format!("the reference did not complete: {:?}", reference.warnings),
                vec![command],
            ));
        }
        let expected = Outcomes::of(&reference);
        summary.outcomes += expected.signatures.len() + expected.findings.len();
        for mode in modes.iter().filter(|m| m.buffering == buffering) {
            let guided_options = ["--clocks", mode.clocks, "--timeout", "60"];
            let (guided, guided_command) = verify(dir, &exe, np, &guided_options, buffering)
                .map_err(|e| mismatch(e, vec![]))?;
            summary.guided_runs += guided.interleavings;
            summary.timed_out += timed_out(&guided);
            let found = Outcomes::of(&guided);
            if !guided.complete || found != expected {
                return Err(mismatch(
                    describe(mode, &guided, &found, &expected),
                    vec![guided_command, command.clone()],
                ));
            }
        }
    }
    Ok(summary)
}

/// The runs of `report` that ended at their timeout.
fn timed_out(report: &Report) -> u32 {
    let hung = report
        .runs
        .iter()
        .filter(|run| run.ranks.iter().any(|r| r.state == "timed-out"))
        .count();
    u32::try_from(hung).unwrap_or(u32::MAX)
}

/// Shows what the guided search missed or added.
fn describe(mode: &Mode, guided: &Report, found: &Outcomes, expected: &Outcomes) -> String {
    let mut text = format!(
        "--clocks {} --buffering {}: the guided search ran {} interleavings (complete: {}) and differs from the reference\n",
        mode.clocks, mode.buffering, guided.interleavings, guided.complete
    );
    for missed in expected.signatures.difference(&found.signatures) {
        text += &format!("  missed run: {}\n", missed.join(" | "));
    }
    for extra in found.signatures.difference(&expected.signatures) {
        text += &format!("  run the reference never made: {}\n", extra.join(" | "));
    }
    for missed in expected.findings.difference(&found.findings) {
        text += &format!("  missed finding: {missed}\n");
    }
    for extra in found.findings.difference(&expected.findings) {
        text += &format!("  finding the reference never made: {extra}\n");
    }
    for w in &guided.warnings {
        text += &format!("  warning: {w}\n");
    }
    text
}

/// `mbhybrid verify --format json` with `extra` options; the report and
/// the command line that ran it.
fn verify(
    dir: &Path,
    exe: &Path,
    np: u32,
    extra: &[&str],
    buffering: &str,
) -> Result<(Report, String), String> {
    let runs = dir.join("runs");
    let np = np.to_string();
    let mut args = vec![
        "verify",
        "--format",
        "json",
        "-n",
        &np,
        "--buffering",
        buffering,
        "--run-dir",
        path_str(&runs),
    ];
    args.extend_from_slice(extra);
    args.push(path_str(exe));
    let command = format!("mbhybrid {}", args.join(" "));
    let out = run_mbhybrid(dir, &args);
    // Exit 2: a tool failure, or forced matches that did not happen (the
    // search's own error, which outcomes alone could hide).
    if out.status.code() == Some(2) {
        return Err(format!(
            "`{command}` failed (exit 2):\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let report: Report = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "`{command}` printed no JSON report ({e}); exit {:?}\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    Ok((report, command))
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("test paths are UTF-8")
}

/// A directory for one program's files that survives a failure (so the
/// replay commands of a mismatch work): `target/differential/NAME`.
pub fn work_dir(name: &str) -> PathBuf {
    let dir = crate::workspace_root()
        .join("target")
        .join("differential")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("target/differential is writable");
    dir
}
