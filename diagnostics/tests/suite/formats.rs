//! Every format for a finding of every kind, as snapshots (insta): the
//! human text without colour, the short lines, the JSON object and the
//! SARIF results. Accept changes with `cargo insta review` (or
//! `INSTA_UPDATE=always cargo test -p mbh-diagnostics`).

use crate::fixtures;
use mbh_diagnostics::{human, json, sarif, short};
use mbh_trace::{FindingKind, Location, Report, Role, Severity};
use regex::Regex;

/// The pattern editors' error parsers use for GCC-style lines (Vim's
/// `%f:%l:%c: %t%*[^:]: %m`, Emacs' compilation mode, VS Code's `$gcc`).
const EDITOR_PATTERN: &str = r"^(.+):(\d+):(\d+): (error|warning|note): (.*)$";

fn settings(dir: &std::path::Path) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("snapshots");
    let tmp = regex::escape(&dir.display().to_string());
    settings.add_filter(&tmp, "[TMP]");
    settings
}

#[test]
fn every_format_of_every_kind() {
    for &kind in FindingKind::ALL {
        let dir = tempfile::tempdir().unwrap();
        fixtures::write_example(dir.path(), kind);
        let report = fixtures::report_of(kind);
        let code = kind.code();
        settings(dir.path()).bind(|| {
            let text = human::render(&report, dir.path(), false).unwrap();
            assert!(!text.contains('\u{1b}'), "no colour codes");
            insta::assert_snapshot!(format!("{code}_human"), text);
            let lines = short::render(&report);
            check_short_lines(&report, &lines);
            insta::assert_snapshot!(format!("{code}_short"), lines);
            let object = json::render(&report).unwrap();
            let back: Report = serde_json::from_str(&object).unwrap();
            assert_eq!(back, report, "the JSON reads back as the report");
            insta::assert_snapshot!(format!("{code}_json"), object);
            let log: serde_json::Value = serde_json::from_str(&sarif::render(&report)).unwrap();
            let results = serde_json::to_string_pretty(&log["runs"][0]["results"]).unwrap();
            insta::assert_snapshot!(format!("{code}_sarif_results"), results);
        });
    }
}

/// Each short line is `file:line:col: severity: message`, as editors parse
/// it, and names a location of the report.
fn check_short_lines(report: &Report, lines: &str) {
    let pattern = Regex::new(EDITOR_PATTERN).unwrap();
    let locations: Vec<&Location> = report.findings.iter().flat_map(|f| &f.locations).collect();
    assert_eq!(
        lines.lines().count(),
        locations.len(),
        "one line per location"
    );
    for (line, location) in lines.lines().zip(locations) {
        let captures = pattern
            .captures(line)
            .unwrap_or_else(|| panic!("not an editor line: {line}"));
        assert_eq!(&captures[1], location.file);
        assert_eq!(captures[2].parse::<u32>().unwrap(), location.line);
        assert_eq!(captures[3].parse::<u32>().unwrap(), location.column.max(1));
        let severity = match location.role {
            Role::Secondary => "note",
            Role::Primary => match report.findings[0].severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Note => "note",
            },
        };
        assert_eq!(&captures[4], severity, "{line}");
        assert!(captures[5].starts_with('['), "{line}");
    }
}

/// A whole SARIF log once (the rules carry the code page).
#[test]
fn a_whole_sarif_log() {
    let report = fixtures::report_of(FindingKind::Deadlock);
    insta::with_settings!({prepend_module_to_snapshot => false, snapshot_path => "snapshots"}, {
        insta::assert_snapshot!("MBH0001_sarif", sarif::render(&report));
    });
}

/// Files outside the working directory keep their absolute path, and a
/// source that cannot be read is named, not quoted.
#[test]
fn absolute_and_unreadable_files() {
    let dir = tempfile::tempdir().unwrap();
    fixtures::write_example(dir.path(), FindingKind::Crash);
    let mut finding = fixtures::finding(FindingKind::Crash);
    let absolute = dir.path().join("app.c").display().to_string();
    finding.locations[0].file = absolute;
    finding.locations.push(Location {
        file: "missing/helper.c".into(),
        line: 7,
        column: 0,
        rank: 1,
        call: Some("helper".into()),
        function: None,
        role: Role::Secondary,
        label: "called from here".into(),
    });
    let report = fixtures::report(vec![finding], 2, 1);
    let elsewhere = tempfile::tempdir().unwrap();
    let mut settings = settings(dir.path());
    // The fingerprint hashes the (temporary) absolute path.
    settings.add_filter(
        r#""mbhybrid/v1": "[0-9a-f]{16}""#,
        r#""mbhybrid/v1": "[HASH]""#,
    );
    settings.bind(|| {
        insta::assert_snapshot!(
            "absolute_human",
            human::render(&report, elsewhere.path(), false).unwrap()
        );
        insta::assert_snapshot!("absolute_short", short::render(&report));
        let log: serde_json::Value = serde_json::from_str(&sarif::render(&report)).unwrap();
        let results = serde_json::to_string_pretty(&log["runs"][0]["results"]).unwrap();
        insta::assert_snapshot!("absolute_sarif_results", results);
    });
}
