//! One line per location, as GCC and clang print diagnostics, so editors'
//! error parsers (Vim quickfix, Emacs compilation mode, VS Code problem
//! matchers) read them unchanged:
//!
//! ```text
//! app.c:31:5: error: [MBH0002] assertion `x != 33` failed on rank 1
//! app.c:25:5: note: [MBH0002] this wildcard receive took rank 2's message (rank 1)
//! ```

use mbh_trace::{Report, Role, Severity};
use std::fmt::Write;

/// The report as short lines.
///
/// ```
/// use mbh_diagnostics::{explain, short};
/// use mbh_trace::{Finding, FindingKind, Location, Report, Role, Severity};
///
/// let mut finding = Finding::new(FindingKind::Crash, Severity::Error, "rank 1 crashed with SIGSEGV");
/// finding.locations.push(Location {
///     file: "app.c".into(), line: 14, column: 5, rank: 1, call: None, function: None,
///     role: Role::Primary, label: "the rank crashed here".into(),
/// });
/// let report: Report = serde_json::from_value(serde_json::json!({
///     "tool": "mbhybrid", "version": "0.1.0", "program": "./app", "args": [],
///     "np": 2, "clocks": "lamport", "buffering": "infinite", "interleavings": 1,
///     "complete": true, "choice_points": {"found": 0, "explored": 0, "abstracted": 0, "mixing_bounded": 0},
///     "findings": [finding], "wildcards": [], "barriers": [], "run_id": "r", "run_dir": "runs/r",
///     "runs": [], "seconds": 0.1,
/// })).unwrap();
/// assert_eq!(
///     short::render(&report),
///     "app.c:14:5: error: [MBH0003] rank 1 crashed with SIGSEGV\n",
/// );
/// assert!(explain::page("3").unwrap().starts_with("# MBH0003: crash"));
/// ```
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for finding in &report.findings {
        let severity = severity_word(finding.severity);
        if finding.locations.is_empty() {
            let _ = writeln!(
                out,
                "mbhybrid: {severity}: [{}] {}",
                finding.kind.code(),
                finding.message
            );
        }
        for location in &finding.locations {
            let (word, text) = match location.role {
                Role::Primary => (severity, finding.message.as_str()),
                Role::Secondary => ("note", location.label.as_str()),
            };
            let text = crate::with_rank(text, location.rank);
            let _ = writeln!(
                out,
                "{}: {word}: [{}] {text}",
                gcc_place(location),
                finding.kind.code()
            );
        }
    }
    out.push_str(&crate::barriers::short(&report.barriers));
    out
}

/// `file:line:column` as gcc prints it (column 1 when unknown, which
/// editors' patterns need); without a line, the file and the function
/// (``main.c (in `main`)``), as gcc names a file without a line.
fn gcc_place(location: &mbh_trace::Location) -> String {
    match location.line {
        0 => location.place(),
        line => format!("{}:{line}:{}", location.file, location.column.max(1)),
    }
}

fn severity_word(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use mbh_trace::{Finding, FindingKind, Location};

    pub(crate) fn report_with(findings: Vec<Finding>) -> Report {
        Report {
            tool: "mbhybrid".into(),
            version: "0".into(),
            program: "./app".into(),
            args: vec![],
            np: 2,
            clocks: "lamport".into(),
            buffering: "infinite".into(),
            interleavings: 1,
            complete: false,
            choice_points: Default::default(),
            findings,
            wildcards: vec![],
            barriers: vec![],
            barrier_audit: None,
            run_id: "r".into(),
            run_dir: "/tmp/r".into(),
            runs: vec![],
            warnings: vec![],
            limits: vec![],
            not_modelled: vec![],
            run_ahead: None,
            seconds: 0.5,
        }
    }

    #[test]
    fn lines_match_the_gcc_pattern() {
        let mut f = Finding::new(
            FindingKind::Crash,
            Severity::Error,
            "rank 1 crashed with SIGSEGV",
        );
        f.locations.push(Location {
            file: "app.c".into(),
            line: 12,
            column: 0,
            rank: 1,
            call: None,
            function: None,
            role: Role::Primary,
            label: "here".into(),
        });
        let text = render(&report_with(vec![
            f,
            Finding::new(FindingKind::Timeout, Severity::Error, "slow"),
        ]));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "app.c:12:1: error: [MBH0003] rank 1 crashed with SIGSEGV"
        );
        assert_eq!(lines[1], "mbhybrid: error: [MBH0015] slow");
        // The pattern of Vim's default 'errorformat' for GCC: %f:%l:%c: %m
        for line in &lines[..1] {
            let mut parts = line.splitn(4, ':');
            assert!(!parts.next().unwrap().is_empty());
            assert!(parts.next().unwrap().parse::<u32>().is_ok());
            assert!(parts.next().unwrap().parse::<u32>().is_ok());
        }
    }
}
