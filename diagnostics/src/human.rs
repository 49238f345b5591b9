//! The report for people: each finding with a source snippet of every
//! rank's line involved (codespan-reporting), then how each rank ended and a
//! one-line summary.

use crate::sources::SourceFiles;
use codespan_reporting::diagnostic::{Diagnostic, Label, Severity as CsSeverity};
use codespan_reporting::term::{self, termcolor::Buffer, Config};
use mbh_trace::{Finding, Location, Report, Role, Severity};
use std::fmt::Write;

/// Why rendering failed (a source file changed under us, for instance).
pub type Error = codespan_reporting::files::Error;

/// The report as text, quoting sources relative to `base_dir` (the
/// directory the user ran mbhybrid in); `color` adds ANSI colours (for
/// terminals only).
pub fn render(report: &Report, base_dir: &std::path::Path, color: bool) -> Result<String, Error> {
    let mut sources = SourceFiles::new(base_dir);
    let mut buffer = if color {
        Buffer::ansi()
    } else {
        Buffer::no_color()
    };
    let config = Config::default();
    for warning in &report.warnings {
        let diagnostic = Diagnostic::<usize>::warning().with_message(warning.clone());
        term::emit_to_write_style(&mut buffer, &config, sources.files(), &diagnostic)?;
    }
    for finding in &report.findings {
        let diagnostic = to_diagnostic(finding, &mut sources);
        term::emit_to_write_style(&mut buffer, &config, sources.files(), &diagnostic)?;
        for line in output_of_its_run(report, finding) {
            buffer_line(&mut buffer, &line);
        }
        buffer_line(&mut buffer, "");
    }
    // What the verdict does not cover, beside the verdict.
    for limit in &report.limits {
        let diagnostic = Diagnostic::<usize>::note().with_message(limit.clone());
        term::emit_to_write_style(&mut buffer, &config, sources.files(), &diagnostic)?;
    }
    let mut text = String::from_utf8_lossy(buffer.as_slice()).into_owned();
    text.push_str(&crate::barriers::human(report));
    text.push_str(&outcome_lines(report));
    text.push_str(&summary(report));
    Ok(text)
}

/// One finding as text, as [`render`] prints it but without the summary:
/// the form the code pages (`explain`) quote.
pub fn render_finding(
    finding: &Finding,
    base_dir: &std::path::Path,
    color: bool,
) -> Result<String, Error> {
    let mut sources = SourceFiles::new(base_dir);
    let mut buffer = if color {
        Buffer::ansi()
    } else {
        Buffer::no_color()
    };
    let diagnostic = to_diagnostic(finding, &mut sources);
    term::emit_to_write_style(
        &mut buffer,
        &Config::default(),
        sources.files(),
        &diagnostic,
    )?;
    Ok(String::from_utf8_lossy(buffer.as_slice()).into_owned())
}

fn buffer_line(buffer: &mut Buffer, line: &str) {
    use std::io::Write as _;
    let _ = writeln!(buffer, "{line}");
}

/// The locations with one label per place and text, each with the ranks
/// it holds for, in first-seen order: a leak every rank has reads
/// "created here, never freed (ranks 0-63)", once, with the role of the
/// first (the primary, when it is one of them: a finding merged from
/// several ranks has the lowest rank's place primary and the others' as
/// secondaries). A label that names its rank in its words stays one per
/// rank.
fn same_label_ranks(locations: &[Location]) -> Vec<(&Location, Vec<i32>)> {
    let mut grouped: Vec<(&Location, Vec<i32>)> = Vec::new();
    for location in locations {
        let same = |(l, _): &&mut (&Location, Vec<i32>)| {
            (&l.file, l.line, l.column, &l.label)
                == (
                    &location.file,
                    location.line,
                    location.column,
                    &location.label,
                )
                && !crate::names_rank(&l.label, l.rank)
                && !crate::names_rank(&location.label, location.rank)
        };
        match grouped.iter_mut().find(same) {
            Some((_, ranks)) => ranks.push(location.rank),
            None => grouped.push((location, vec![location.rank])),
        }
    }
    grouped
}

fn to_diagnostic(finding: &Finding, sources: &mut SourceFiles) -> Diagnostic<usize> {
    let severity = match finding.severity {
        Severity::Error => CsSeverity::Error,
        Severity::Warning => CsSeverity::Warning,
        Severity::Note => CsSeverity::Note,
    };
    let mut labels = Vec::new();
    let mut notes = Vec::new();
    for (location, ranks) in same_label_ranks(&finding.locations) {
        let label_text = crate::with_ranks(&location.label, &ranks);
        let span = sources
            .id(&location.file)
            .and_then(|id| Some((id, sources.span(id, location.line, location.column)?)));
        match span {
            Some((id, range)) => labels.push(match location.role {
                Role::Primary => Label::primary(id, range).with_message(label_text),
                Role::Secondary => Label::secondary(id, range).with_message(label_text),
            }),
            // The source is not readable from here: name the place in words.
            None => notes.push(format!("{}: {label_text}", location.place())),
        }
    }
    notes.extend(finding.notes.iter().cloned());
    if let Some(help) = &finding.help {
        notes.push(format!("help: {help}"));
    }
    if let Some(replay) = &finding.replay {
        notes.push(format!("replay: {replay}"));
    }
    Diagnostic::new(severity)
        .with_code(finding.kind.code().to_string())
        .with_message(finding.message.clone())
        .with_labels(labels)
        .with_notes(notes)
}

/// Lines of the program's output shown under a finding.
const OUTPUT_LINES: usize = 5;

/// The last lines the program printed in the interleaving that showed
/// `finding`, and where all of it is: what a person reads next
/// after the diagnostic.
fn output_of_its_run(report: &Report, finding: &Finding) -> Vec<String> {
    let Some(run) = report
        .runs
        .iter()
        .find(|r| r.interleaving == finding.interleaving)
    else {
        return Vec::new();
    };
    let printed: Vec<&str> = run.stdout.lines().collect();
    if printed.is_empty() {
        return Vec::new();
    }
    let shown = &printed[printed.len().saturating_sub(OUTPUT_LINES)..];
    let whole = run.dir.as_ref().map_or(String::new(), |dir| {
        format!("; all of it in {dir}/launcher.stdout")
    });
    let mut lines = vec![format!(
        "   = output of interleaving {} (last {} line{}{whole}):",
        run.interleaving,
        shown.len(),
        if shown.len() == 1 { "" } else { "s" }
    )];
    lines.extend(shown.iter().map(|l| format!("     | {l}")));
    lines
}

fn outcome_lines(report: &Report) -> String {
    let mut out = String::new();
    for run in &report.runs {
        let ranks: Vec<String> = run
            .ranks
            .iter()
            .map(|r| match (r.exit_status, r.signal) {
                (_, Some(signal)) => format!("{} {} (signal {signal})", r.rank, r.state),
                (Some(status), _) if status != 0 => {
                    format!("{} {} (status {status})", r.rank, r.state)
                }
                _ => format!("{} {}", r.rank, r.state),
            })
            .collect();
        let _ = writeln!(
            out,
            "interleaving {}: {:.2} s; ranks: {}",
            run.interleaving,
            run.seconds,
            ranks.join(", ")
        );
    }
    out
}

fn summary(report: &Report) -> String {
    let ahead = report.run_ahead.map_or(String::new(), |a| {
        format!(
            "--jobs {}: {} of the interleavings ran ahead of the search ({} run{} ahead not used)\n",
            a.jobs,
            a.taken,
            a.unused,
            if a.unused == 1 { "" } else { "s" }
        )
    });
    let orderless = match report.choice_points.orderless {
        0 => String::new(),
        n => format!(
            "{n} choice{} of which request a `Waitany`/`Testany`/`Waitsome`/`Testsome` returns \
             first left to MPI: the order decides nothing there (`mbhybrid analyze` says why)\n",
            if n == 1 { "" } else { "s" }
        ),
    };
    format!(
        "{}\n{orderless}{ahead}run directory: {}\n",
        verdict(report),
        report.run_dir
    )
}

/// The one-line verdict: `2 findings (1 error) in 7 interleavings
/// (complete)`, or `no errors found in …`.
pub(crate) fn verdict(report: &Report) -> String {
    let n = report.interleavings;
    let runs = if n == 1 {
        "interleaving"
    } else {
        "interleavings"
    };
    let coverage = if report.complete {
        "complete"
    } else {
        "partial"
    };
    let errors = report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    if report.findings.is_empty() {
        format!("no errors found in {n} {runs} ({coverage})")
    } else {
        format!(
            "{} finding{} ({errors} error{}) in {n} {runs} ({coverage})",
            report.findings.len(),
            if report.findings.len() == 1 { "" } else { "s" },
            if errors == 1 { "" } else { "s" },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mbh_trace::{FindingKind, Location};

    /// A leak every rank has shows one label naming the ranks; a label
    /// that names its rank stays one per rank.
    #[test]
    fn one_label_per_place_names_every_rank_it_holds_for() {
        let at = |rank: i32, label: &str| Location {
            file: "grid.c".into(),
            line: 13,
            column: 3,
            rank,
            call: None,
            function: None,
            role: Role::Secondary,
            label: label.into(),
        };
        let primary = Location {
            role: Role::Primary,
            ..at(0, "created here, never freed")
        };
        let locations = [
            primary,
            at(3, "created here, never freed"),
            at(2, "created here, never freed"),
            at(1, "created here, never freed"),
            at(1, "rank 1 waits here"),
            at(2, "rank 2 waits here"),
        ];
        let grouped: Vec<(String, Vec<i32>)> = same_label_ranks(&locations)
            .into_iter()
            .map(|(l, ranks)| (l.label.clone(), ranks))
            .collect();
        // Rank 0's place is the primary; the other ranks' same place joins it.
        assert_eq!(same_label_ranks(&locations)[0].0.role, Role::Primary);
        assert_eq!(
            grouped,
            [
                ("created here, never freed".to_string(), vec![0, 3, 2, 1]),
                ("rank 1 waits here".to_string(), vec![1]),
                ("rank 2 waits here".to_string(), vec![2]),
            ]
        );
    }

    #[test]
    fn findings_quote_each_ranks_line_and_summarise() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("app.c"),
            "int main() {\n  assert(x != 33);\n  MPI_Recv(b);\n}\n",
        )
        .unwrap();
        let mut f = Finding::new(
            FindingKind::Assertion,
            Severity::Error,
            "assertion `x != 33` failed on rank 1",
        );
        f.locations.push(Location {
            file: "app.c".into(),
            line: 2,
            column: 3,
            rank: 1,
            call: None,
            function: None,
            role: Role::Primary,
            label: "this assertion failed".into(),
        });
        f.locations.push(Location {
            file: "app.c".into(),
            line: 3,
            column: 3,
            rank: 0,
            call: Some("MPI_Recv".into()),
            function: None,
            role: Role::Secondary,
            label: "received here".into(),
        });
        f.locations.push(Location {
            file: "gone.c".into(),
            line: 9,
            column: 1,
            rank: 2,
            call: None,
            function: None,
            role: Role::Secondary,
            label: "elsewhere".into(),
        });
        f.help = Some("fix it".into());
        let report = crate::short::tests::report_with(vec![f]);
        let text = render(&report, dir.path(), false).unwrap();
        assert!(
            text.contains("error[MBH0002]: assertion `x != 33` failed on rank 1"),
            "{text}"
        );
        assert!(text.contains("assert(x != 33);"), "{text}");
        assert!(text.contains("this assertion failed (rank 1)"), "{text}");
        assert!(text.contains("MPI_Recv(b);"), "{text}");
        assert!(text.contains("gone.c:9:1: elsewhere (rank 2)"), "{text}");
        assert!(text.contains("help: fix it"), "{text}");
        assert!(
            text.contains("1 finding (1 error) in 1 interleaving (partial)"),
            "{text}"
        );
        assert!(
            !text.contains('\u{1b}'),
            "no colour codes when colour is off"
        );
    }

    #[test]
    fn a_clean_report_says_so() {
        let report = crate::short::tests::report_with(vec![]);
        let text = render(&report, std::path::Path::new("/"), false).unwrap();
        assert!(
            text.contains("no errors found in 1 interleaving (partial)"),
            "{text}"
        );
    }

    #[test]
    fn limits_are_notes_before_the_summary() {
        let mut report = crate::short::tests::report_with(vec![]);
        report.warnings = vec!["rank 1's trace is unreadable".into()];
        report.limits = vec!["this verdict holds for the input it ran with".into()];
        let text = render(&report, std::path::Path::new("/"), false).unwrap();
        let warning = text.find("warning: rank 1's trace is unreadable");
        let note = text.find("note: this verdict holds for the input it ran with");
        let summary = text.find("no errors found");
        assert!(
            warning < note && note < summary && warning.is_some(),
            "{text}"
        );
    }

    #[test]
    fn a_finding_shows_the_end_of_its_runs_output_and_where_the_rest_is() {
        let f = Finding::new(FindingKind::Assertion, Severity::Error, "assertion failed");
        let mut report = crate::short::tests::report_with(vec![f]);
        report.runs = vec![mbh_trace::report::RunOutcome {
            interleaving: report.findings[0].interleaving,
            launcher_exit: Some(1),
            ranks: Vec::new(),
            seconds: 0.1,
            stdout: (1..=7).map(|k| format!("step {k}\n")).collect(),
            dir: Some("runs/r1/i1".into()),
            infeasible: false,
        }];
        let text = render(&report, std::path::Path::new("/"), false).unwrap();
        assert!(
            text.contains(
                "= output of interleaving 1 (last 5 lines; all of it in runs/r1/i1/launcher.stdout):"
            ),
            "{text}"
        );
        assert!(
            text.contains("     | step 7") && text.contains("     | step 3"),
            "{text}"
        );
        assert!(!text.contains("step 2"), "{text}");
    }
}
