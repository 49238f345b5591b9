//! SARIF logs validate against the OASIS SARIF 2.1.0 JSON schema (vendored
//! in `tests/sarif-schema-2.1.0.json`, see `tests/README.md`), and carry
//! what GitHub code scanning and VS Code's SARIF viewer use.

use crate::fixtures;
use mbh_diagnostics::sarif;
use mbh_trace::{Finding, FindingKind, Location, Role, Severity};
use serde_json::Value;
use std::path::Path;

fn schema() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sarif-schema-2.1.0.json");
    let text = std::fs::read_to_string(path).unwrap();
    // The schema's `language` pattern has a stray `]`, a literal outside a
    // class, which the meta-schema's `regex` format (ECMA 262, unicode
    // mode) rejects: escape it, same meaning, so that formats can be
    // checked (`uri` among them).
    let stray = r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$""#;
    assert!(
        text.contains(stray),
        "the vendored schema changed: review this patch"
    );
    let text = text.replace(stray, r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}\\]?$""#);
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles")
}

fn assert_valid(validator: &jsonschema::Validator, log: &str) -> Value {
    let value: Value = serde_json::from_str(log).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "invalid SARIF:\n{}\n{log}",
        errors.join("\n")
    );
    value
}

/// Every kind at once, plus the corner cases: no location at all, an
/// absolute path, a name that needs percent-encoding, unknown line and
/// column, tool warnings, and a defined `%SRCROOT%`.
fn everything() -> mbh_trace::Report {
    let mut findings: Vec<Finding> = FindingKind::ALL
        .iter()
        .map(|&k| fixtures::finding(k))
        .collect();
    findings.push(Finding::new(
        FindingKind::Timeout,
        Severity::Note,
        "no location at all",
    ));
    let mut odd = Finding::new(FindingKind::Crash, Severity::Error, "odd places");
    for (file, line, column) in [
        ("/abs/dir/x.c", 3, 2),
        ("dir with space/α#1.c", 0, 0),
        ("", 4, 0),
    ] {
        odd.locations.push(Location {
            file: file.into(),
            line,
            column,
            rank: 0,
            call: None,
            function: None,
            role: Role::Secondary,
            label: "somewhere".into(),
        });
    }
    findings.push(odd);
    let mut report = fixtures::report(findings, 3, 2);
    report
        .warnings
        .push("`./app` was not built by `mbhybrid build`".into());
    report
}

#[test]
fn logs_validate_against_the_sarif_2_1_0_schema() {
    let validator = schema();
    let report = everything();
    assert_valid(&validator, &sarif::render(&report));
    assert_valid(
        &validator,
        &sarif::render_with_root(&report, Path::new("/work/my project")),
    );
    assert_valid(&validator, &sarif::render(&fixtures::report(vec![], 2, 1)));
    for &kind in FindingKind::ALL {
        assert_valid(&validator, &sarif::render(&fixtures::report_of(kind)));
    }
}

#[test]
fn the_schema_rejects_what_it_should() {
    // The validator is not vacuous: a result without a message is invalid.
    let validator = schema();
    let mut log: Value =
        serde_json::from_str(&sarif::render(&fixtures::report_of(FindingKind::Deadlock))).unwrap();
    log["runs"][0]["results"][0]
        .as_object_mut()
        .unwrap()
        .remove("message");
    assert!(!validator.is_valid(&log));
    log["version"] = Value::from("2.0.0");
    assert!(!validator.is_valid(&log));
    // Formats are checked too: `informationUri` must be an absolute URI.
    let mut log: Value =
        serde_json::from_str(&sarif::render(&fixtures::report_of(FindingKind::Crash))).unwrap();
    assert!(validator.is_valid(&log));
    log["runs"][0]["tool"]["driver"]["informationUri"] = Value::from("not a uri");
    assert!(!validator.is_valid(&log));
}

#[test]
fn results_carry_what_viewers_use() {
    let report = everything();
    let log: Value = serde_json::from_str(&sarif::render_with_root(
        &report,
        Path::new("/work/my project"),
    ))
    .unwrap();
    let run = &log["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "mbhybrid");
    assert_eq!(run["tool"]["driver"]["version"], "0.1.0");
    assert_eq!(
        run["originalUriBaseIds"]["%SRCROOT%"]["uri"],
        "file:///work/my%20project/"
    );
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), FindingKind::ALL.len());
    for (rule, kind) in rules.iter().zip(FindingKind::ALL) {
        assert_eq!(rule["id"], kind.code());
        assert_eq!(rule["name"], kind.name());
        assert!(rule.get("helpUri").is_none(), "no external help");
        assert!(rule["help"]["markdown"]
            .as_str()
            .unwrap()
            .starts_with(&format!("# {}", kind.code())));
        assert!(!rule["shortDescription"]["text"]
            .as_str()
            .unwrap()
            .is_empty());
    }
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), report.findings.len());
    for (result, finding) in results.iter().zip(&report.findings) {
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(
            rules[index]["id"],
            finding.kind.code(),
            "ruleIndex points at the rule"
        );
        assert_eq!(result["ruleId"], finding.kind.code());
        let level = match finding.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        assert_eq!(result["level"], level);
        assert!(result["message"]["text"]
            .as_str()
            .unwrap()
            .starts_with(&finding.message));
        // Code scanning needs a location with an artifact on every result.
        let locations = result["locations"].as_array().unwrap();
        assert!(!locations.is_empty());
        assert!(locations[0]["physicalLocation"]["artifactLocation"]["uri"].is_string());
        let primary = finding
            .locations
            .iter()
            .filter(|l| l.role == Role::Primary)
            .count();
        let related = result["relatedLocations"].as_array().map_or(0, Vec::len);
        if primary > 0 {
            assert_eq!(locations.len(), primary);
            assert_eq!(related, finding.locations.len() - primary);
        }
        // One thread flow per rank with that rank's locations.
        if !finding.locations.is_empty() {
            let flows = result["codeFlows"][0]["threadFlows"].as_array().unwrap();
            let mut ranks: Vec<i32> = finding.locations.iter().map(|l| l.rank).collect();
            ranks.sort_unstable();
            ranks.dedup();
            assert_eq!(flows.len(), ranks.len());
            let steps: usize = flows
                .iter()
                .map(|f| f["locations"].as_array().unwrap().len())
                .sum();
            assert_eq!(steps, finding.locations.len());
        }
    }
    // The deadlock: rank 0's flow goes from the wildcard receive to the
    // blocked receive.
    let flows = &results[0]["codeFlows"][0]["threadFlows"];
    assert_eq!(flows[0]["id"], "rank 0");
    let steps = flows[0]["locations"].as_array().unwrap();
    assert!(steps[0]["location"]["message"]["text"]
        .as_str()
        .unwrap()
        .starts_with("(1)"));
    assert!(steps[1]["location"]["message"]["text"]
        .as_str()
        .unwrap()
        .starts_with("(2)"));
    assert_eq!(steps[1]["importance"], "essential");
    let uri = &results[0]["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(uri["uri"], "app.c");
    assert_eq!(uri["uriBaseId"], "%SRCROOT%");
    let notifications = &run["invocations"][0]["toolExecutionNotifications"];
    assert_eq!(notifications[0]["level"], "warning");
}

/// `audit-barriers` reports: each verdict is a result of its own rule at the
/// barrier's line, valid SARIF, after the findings' results.
#[test]
fn barrier_verdicts_are_results_of_their_own_rules() {
    use mbh_trace::report::BarrierVerdict;
    let mut report = fixtures::report_of(FindingKind::Deadlock);
    let evidence = |line, rank, label: &str| Location {
        file: "app.c".into(),
        line,
        column: 5,
        rank,
        call: None,
        function: None,
        role: Role::Primary,
        label: label.into(),
    };
    report.barriers = vec![
        BarrierVerdict {
            file: "app.c".into(),
            line: 20,
            verdict: "irrelevant".into(),
            reason: None,
            evidence: vec![],
        },
        BarrierVerdict {
            file: "app.c".into(),
            line: 31,
            verdict: "relevant".into(),
            reason: Some("it orders rank 1's wildcard receive before rank 2's send".into()),
            evidence: vec![
                evidence(28, 1, "wildcard receive"),
                evidence(35, 2, "a send it could take"),
            ],
        },
        BarrierVerdict {
            file: "app.c".into(),
            line: 40,
            verdict: "unknown".into(),
            reason: Some("the exploration was bounded".into()),
            evidence: vec![],
        },
    ];
    let validator = schema();
    let log = assert_valid(&validator, &sarif::render(&report));
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), report.findings.len() + 3);
    let barriers = &results[report.findings.len()..];
    let expected = [
        ("barrier/irrelevant", "fail", "note", 20, 0),
        ("barrier/relevant", "pass", "none", 31, 2),
        ("barrier/unknown", "review", "none", 40, 0),
    ];
    for (result, (rule, kind, level, line, related)) in barriers.iter().zip(expected) {
        assert_eq!(result["ruleId"], rule);
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], rule, "ruleIndex points at the rule");
        assert_eq!(result["kind"], kind);
        assert_eq!(result["level"], level);
        let region = &result["locations"][0]["physicalLocation"]["region"];
        assert_eq!(region["startLine"], line);
        assert_eq!(
            result["relatedLocations"].as_array().map_or(0, Vec::len),
            related
        );
        assert_eq!(
            result["partialFingerprints"]["mbhybrid/v1"]
                .as_str()
                .unwrap()
                .len(),
            16
        );
    }
    assert!(barriers[0]["message"]["text"]
        .as_str()
        .unwrap()
        .contains("with the other irrelevant barriers, changes no match"));
    // A verify report has no verdicts, and so no barrier rules.
    let plain = sarif::render(&fixtures::report_of(FindingKind::Deadlock));
    assert!(!plain.contains("barrier/"));
}
