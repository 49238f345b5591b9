//! SARIF 2.1.0 (`--format sarif`), for code-scanning viewers: GitHub code
//! scanning, VS Code's SARIF viewer, and any tool that reads the OASIS
//! standard.
//!
//! One `run`, whose `tool.driver` is mbhybrid with one rule per finding code
//! that the report uses (`id` `MBH0001`, `name` the kind, descriptions and
//! help from the code pages of [`crate::explain`]; no `helpUri`: the help is
//! in the file). Each finding is one `result`:
//!
//! * `ruleId`/`ruleIndex`, `level` (`error`, `warning`, `note`), and
//!   `message.text`: the message, then its notes, help and replay command,
//!   one per line;
//! * `locations`: the primary locations (the first location, or the
//!   program, when none is primary: code scanning needs one);
//!   `relatedLocations`: the others; each with the label and rank as message;
//! * one `codeFlow` with a `threadFlow` per rank: that rank's locations,
//!   secondary ones first in the finding's order, then the primary ones (a
//!   finding lists what led to the problem as secondary and the problem as
//!   primary);
//! * `partialFingerprints."mbhybrid/v1"`: a hash of the kind and the sites
//!   involved, the key mbhybrid deduplicates findings by, so viewers track a
//!   finding across runs;
//! * `properties`: `interleaving`, `ranks`, `replay`.
//!
//! File names relative to the working directory become URIs relative to
//! `uriBaseId` `%SRCROOT%`; absolute ones `file://` URIs. [`render_with_root`]
//! also says where `%SRCROOT%` is, for viewers that do not know.
//! The barrier verdicts of `audit-barriers` are results too, of the rules
//! `barrier/irrelevant` (kind `fail`, level `note`: delete the call),
//! `barrier/relevant` (`pass`) and `barrier/unknown` (`review`), each at the
//! barrier's line with the evidence as related locations.
//!
//! `run.properties` carries the verification's parameters and coverage, and
//! the report's warnings become `toolExecutionNotifications` of level
//! `warning`, its limits (what the verdict does not cover) of level `note`.

use crate::explain;
use mbh_trace::report::BarrierVerdict;
use mbh_trace::{Finding, FindingKind, Location, Report, Role, Severity};
use serde_json::json;
use serde_sarif::sarif;
use std::collections::BTreeMap;
use std::path::Path;

/// The `$schema` the log names: the OASIS SARIF 2.1.0 schema (errata 01).
pub const SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The base id relative artifact URIs are relative to.
pub const SRCROOT: &str = "%SRCROOT%";

/// The report as a SARIF 2.1.0 log (pretty JSON, final newline), with file
/// URIs relative to `%SRCROOT%`, which the viewer resolves (code scanning:
/// the repository's root).
pub fn render(report: &Report) -> String {
    to_string(&log(report, None))
}

/// [`render`], with `%SRCROOT%` defined as `root` (the directory the
/// relative file names are relative to: where mbhybrid ran), for viewers
/// that otherwise ask for it.
pub fn render_with_root(report: &Report, root: &Path) -> String {
    to_string(&log(report, Some(root)))
}

fn to_string(log: &sarif::Sarif) -> String {
    // Serializing plain structs of strings and numbers cannot fail.
    serde_json::to_string_pretty(log).unwrap_or_default() + "\n"
}

fn log(report: &Report, root: Option<&Path>) -> sarif::Sarif {
    let kinds = used_kinds(report);
    let mut rules: Vec<sarif::ReportingDescriptor> = kinds.iter().map(|&kind| rule(kind)).collect();
    if !report.barriers.is_empty() {
        rules.extend(crate::barriers::RULES.iter().map(barrier_rule));
    }
    let driver = sarif::ToolComponent::builder()
        .name("mbhybrid")
        .full_name(format!("mbhybrid {}", report.version))
        .version(report.version.clone())
        .semantic_version(report.version.clone())
        .rules(rules)
        .build();
    let mut results: Vec<sarif::Result> = report
        .findings
        .iter()
        .map(|finding| {
            let index = kinds.iter().position(|&k| k == finding.kind).unwrap_or(0);
            result(finding, index, report)
        })
        .collect();
    results.extend(
        report
            .barriers
            .iter()
            .map(|barrier| barrier_result(barrier, kinds.len())),
    );
    let notify = |message: &String, level: &str| {
        sarif::Notification::builder()
            .message(text(message))
            .level(json!(level))
            .build()
    };
    let notifications: Vec<sarif::Notification> = report
        .warnings
        .iter()
        .map(|warning| notify(warning, "warning"))
        .chain(report.limits.iter().map(|limit| notify(limit, "note")))
        .collect();
    let mut invocation = sarif::Invocation::builder()
        .execution_successful(true)
        .build();
    if !notifications.is_empty() {
        invocation.tool_execution_notifications = Some(notifications);
    }
    let mut run = sarif::Run::builder()
        .tool(sarif::Tool::builder().driver(driver).build())
        .results(results)
        .invocations(vec![invocation])
        .column_kind(json!("unicodeCodePoints"))
        .properties(run_properties(report))
        .build();
    if let Some(root) = root {
        let mut uri = file_uri(root);
        if !uri.ends_with('/') {
            uri.push('/');
        }
        let base = sarif::ArtifactLocation::builder().uri(uri).build();
        run.original_uri_base_ids = Some(BTreeMap::from([(SRCROOT.to_string(), base)]));
    }
    sarif::Sarif::builder()
        .schema(SCHEMA)
        .version(json!("2.1.0"))
        .runs(vec![run])
        .build()
}

/// The kinds the report's findings have, in code order.
fn used_kinds(report: &Report) -> Vec<FindingKind> {
    FindingKind::ALL
        .iter()
        .copied()
        .filter(|kind| report.findings.iter().any(|f| f.kind == *kind))
        .collect()
}

fn rule(kind: FindingKind) -> sarif::ReportingDescriptor {
    let page = explain::page_of(kind).unwrap_or("");
    let summary = explain::summary(page);
    let meaning = explain::section(page, "What it means").map_or(String::new(), explain::prose);
    let fix = explain::section(page, "How to fix it").map_or(String::new(), explain::prose);
    let level = match default_severity(kind) {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    };
    sarif::ReportingDescriptor::builder()
        .id(kind.code())
        .name(kind.name())
        .short_description(multiformat(&summary, None))
        .full_description(multiformat(&format!("{summary}\n\n{meaning}"), None))
        .help(multiformat(&fix, Some(page)))
        .default_configuration(
            sarif::ReportingConfiguration::builder()
                .level(json!(level))
                .build(),
        )
        .properties(property_bag(
            Some(vec!["mpi".into(), "correctness".into()]),
            BTreeMap::new(),
        ))
        .build()
}

/// The rule of one barrier verdict ([`crate::barriers::RULES`]).
fn barrier_rule(
    &(id, verdict, summary, help): &(&str, &str, &str, &str),
) -> sarif::ReportingDescriptor {
    // Only an irrelevant barrier is something to act on (a `fail` result of
    // level `note`); the other verdicts are `pass`/`review` results, whose
    // level SARIF fixes to `none` (§3.27.9).
    let level = if verdict == "irrelevant" {
        "note"
    } else {
        "none"
    };
    sarif::ReportingDescriptor::builder()
        .id(id)
        .name(format!("{verdict}-barrier"))
        .short_description(multiformat(summary, None))
        .full_description(multiformat(
            &format!("{summary} (seed 004, Fib: `mbhybrid audit-barriers`)."),
            None,
        ))
        .help(multiformat(help, None))
        .default_configuration(
            sarif::ReportingConfiguration::builder()
                .level(json!(level))
                .build(),
        )
        .properties(property_bag(
            Some(vec!["mpi".into(), "performance".into()]),
            BTreeMap::new(),
        ))
        .build()
}

/// One barrier verdict as a result: the barrier's line, the evidence as
/// related locations, a fingerprint of the line.
fn barrier_result(barrier: &BarrierVerdict, first_rule: usize) -> sarif::Result {
    let index = crate::barriers::rule_index(&barrier.verdict);
    let (kind, level) = match &barrier.verdict[..] {
        "irrelevant" => (sarif::ResultKind::Fail, sarif::ResultLevel::Note),
        "relevant" => (sarif::ResultKind::Pass, sarif::ResultLevel::None),
        _ => (sarif::ResultKind::Review, sarif::ResultLevel::None),
    };
    let here = Location {
        file: barrier.file.clone(),
        line: barrier.line,
        column: 0,
        rank: 0,
        call: Some("MPI_Barrier".into()),
        function: None,
        role: Role::Primary,
        label: format!("MPI_Barrier: {}", barrier.verdict),
    };
    let mut primary = location(&here);
    // The verdict holds for every rank: no rank in the message.
    primary.message = Some(text(&here.label));
    let related: Vec<sarif::Location> = barrier
        .evidence
        .iter()
        .zip(1..)
        .map(|(l, id)| {
            let mut related = location(l);
            related.id = Some(id);
            related
        })
        .collect();
    let message = format!(
        "this MPI_Barrier is {}: {}",
        barrier.verdict,
        crate::barriers::reason(barrier)
    );
    let mut properties = BTreeMap::new();
    properties.insert("verdict".to_string(), json!(barrier.verdict));
    let mut result = sarif::Result::builder()
        .rule_id(crate::barriers::RULES[index].0)
        .rule_index((first_rule + index) as i64)
        .kind(kind)
        .level(level)
        .message(text(&message))
        .locations(vec![primary])
        .partial_fingerprints(BTreeMap::from([(
            "mbhybrid/v1".to_string(),
            fnv1a(&format!("barrier\n{}:{}", barrier.file, barrier.line)),
        )]))
        .properties(property_bag(None, properties))
        .build();
    if !related.is_empty() {
        result.related_locations = Some(related);
    }
    result
}

/// How bad a kind usually is: what a viewer shows before any result says.
fn default_severity(kind: FindingKind) -> Severity {
    match kind {
        FindingKind::BufferingHazard
        | FindingKind::ResourceLeak
        | FindingKind::RequestLeak
        | FindingKind::MissingStart
        | FindingKind::CollectiveDivergence => Severity::Warning,
        _ => Severity::Error,
    }
}

fn result(finding: &Finding, rule_index: usize, report: &Report) -> sarif::Result {
    let level = match finding.severity {
        Severity::Error => sarif::ResultLevel::Error,
        Severity::Warning => sarif::ResultLevel::Warning,
        Severity::Note => sarif::ResultLevel::Note,
    };
    let mut primary: Vec<&Location> = finding
        .locations
        .iter()
        .filter(|l| l.role == Role::Primary)
        .collect();
    if primary.is_empty() {
        primary.extend(finding.locations.first());
    }
    let mut locations: Vec<sarif::Location> = primary.iter().map(|l| location(l)).collect();
    if locations.is_empty() {
        // Code scanning drops results without a location: point at the
        // program itself.
        locations.push(
            sarif::Location::builder()
                .physical_location(
                    sarif::PhysicalLocation::builder()
                        .artifact_location(artifact(&report.program))
                        .build(),
                )
                .message(text(&format!("the program `{}`", report.program)))
                .build(),
        );
    }
    let related: Vec<sarif::Location> = finding
        .locations
        .iter()
        .filter(|l| !primary.iter().any(|p| std::ptr::eq(*p, *l)))
        .zip(1..)
        .map(|(l, id)| {
            let mut related = location(l);
            related.id = Some(id);
            related
        })
        .collect();

    let mut lines = vec![finding.message.clone()];
    lines.extend(finding.notes.iter().map(|n| format!("note: {n}")));
    lines.extend(finding.help.iter().map(|h| format!("help: {h}")));
    lines.extend(finding.replay.iter().map(|r| format!("replay: {r}")));

    let mut properties = BTreeMap::new();
    properties.insert("interleaving".to_string(), json!(finding.interleaving));
    properties.insert("ranks".to_string(), json!(finding.ranks));
    if let Some(replay) = &finding.replay {
        properties.insert("replay".to_string(), json!(replay));
    }

    let mut result = sarif::Result::builder()
        .rule_id(finding.kind.code().to_string())
        .rule_index(rule_index as i64)
        .kind(sarif::ResultKind::Fail)
        .level(level)
        .message(text(&lines.join("\n")))
        .locations(locations)
        .partial_fingerprints(BTreeMap::from([(
            "mbhybrid/v1".to_string(),
            fingerprint(finding),
        )]))
        .properties(property_bag(None, properties))
        .build();
    if !related.is_empty() {
        result.related_locations = Some(related);
    }
    if let Some(flow) = code_flow(finding) {
        result.code_flows = Some(vec![flow]);
    }
    result
}

/// One thread flow per rank, ranks in increasing order.
fn code_flow(finding: &Finding) -> Option<sarif::CodeFlow> {
    if finding.locations.is_empty() {
        return None;
    }
    let mut ordered: Vec<&Location> = finding
        .locations
        .iter()
        .filter(|l| l.role == Role::Secondary)
        .collect();
    ordered.extend(finding.locations.iter().filter(|l| l.role == Role::Primary));
    let mut ranks: Vec<i32> = ordered.iter().map(|l| l.rank).collect();
    ranks.sort_unstable();
    ranks.dedup();
    let thread_flows = ranks
        .iter()
        .map(|&rank| {
            let steps: Vec<sarif::ThreadFlowLocation> = ordered
                .iter()
                .enumerate()
                .filter(|(_, l)| l.rank == rank)
                .map(|(order, l)| {
                    let importance = match l.role {
                        Role::Primary => "essential",
                        Role::Secondary => "important",
                    };
                    sarif::ThreadFlowLocation::builder()
                        .location(location(l))
                        .execution_order(order as i64 + 1)
                        .nesting_level(0)
                        .importance(json!(importance))
                        .build()
                })
                .collect();
            sarif::ThreadFlow::builder()
                .id(format!("rank {rank}"))
                .message(text(&format!("rank {rank}")))
                .locations(steps)
                .build()
        })
        .collect::<Vec<_>>();
    Some(
        sarif::CodeFlow::builder()
            .message(text(&format!(
                "interleaving {}: the calls involved, per rank",
                finding.interleaving
            )))
            .thread_flows(thread_flows)
            .build(),
    )
}

fn location(l: &Location) -> sarif::Location {
    let message = crate::with_rank(&l.label, l.rank);
    let mut location = sarif::Location::builder().message(text(&message)).build();
    if !l.file.is_empty() {
        let mut physical = sarif::PhysicalLocation::builder()
            .artifact_location(artifact(&l.file))
            .build();
        if l.line > 0 {
            let mut region = sarif::Region::builder().start_line(l.line as i64).build();
            if l.column > 0 {
                region.start_column = Some(l.column as i64);
            }
            physical.region = Some(region);
        }
        location.physical_location = Some(physical);
    }
    // Without a line (SARIF lines start at 1), the function names the
    // place: the logical location SARIF viewers show.
    if let Some(function) = l
        .function
        .as_deref()
        .filter(|f| l.line == 0 && !f.is_empty())
    {
        location.logical_locations = Some(vec![sarif::LogicalLocation::builder()
            .name(function)
            .kind("function")
            .build()]);
    }
    location
}

/// A file name as the report has it, as an artifact location.
fn artifact(file: &str) -> sarif::ArtifactLocation {
    if file.starts_with('/') {
        sarif::ArtifactLocation::builder()
            .uri(file_uri(Path::new(file)))
            .build()
    } else {
        let relative = file.trim_start_matches("./");
        sarif::ArtifactLocation::builder()
            .uri(percent_encode(relative))
            .uri_base_id(SRCROOT)
            .build()
    }
}

/// `file:///abs/path`.
fn file_uri(path: &Path) -> String {
    let path = path.to_string_lossy();
    let path = if path.starts_with('/') {
        path.into_owned()
    } else {
        format!("/{path}")
    };
    format!("file://{}", percent_encode(&path))
}

/// Percent-encodes every byte but the unreserved characters of RFC 3986
/// and `/`, so any file name makes a valid URI reference (and a relative one
/// never looks like it has a scheme).
fn percent_encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for &b in path.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// FNV-1a (64 bits) of the finding's dedup key: stable across runs,
/// platforms and Rust versions.
fn fingerprint(finding: &Finding) -> String {
    let (kind, sites) = finding.dedup_key();
    let mut key = kind.name().to_string();
    for (file, line) in sites {
        key.push_str(&format!("\n{file}:{line}"));
    }
    fnv1a(&key)
}

/// FNV-1a (64 bits) of `key`, as 16 hex digits.
fn fnv1a(key: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in key.as_bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

fn run_properties(report: &Report) -> sarif::PropertyBag {
    let mut properties = BTreeMap::new();
    let mut put = |key: &str, value: serde_json::Value| {
        properties.insert(key.to_string(), value);
    };
    put("program", json!(report.program));
    put("args", json!(report.args));
    put("np", json!(report.np));
    put("clocks", json!(report.clocks));
    put("buffering", json!(report.buffering));
    put("interleavings", json!(report.interleavings));
    put("complete", json!(report.complete));
    let cp = &report.choice_points;
    let mut choice_points = json!({
        "found": cp.found,
        "explored": cp.explored,
        "abstracted": cp.abstracted,
        "mixingBounded": cp.mixing_bounded,
    });
    // As in the JSON report: absent when zero.
    if cp.orderless > 0 {
        choice_points["orderless"] = json!(cp.orderless);
    }
    put("choicePoints", choice_points);
    put("runId", json!(report.run_id));
    put("runDir", json!(report.run_dir));
    put("seconds", json!(report.seconds));
    property_bag(None, properties)
}

fn property_bag(
    tags: Option<Vec<String>>,
    properties: BTreeMap<String, serde_json::Value>,
) -> sarif::PropertyBag {
    let mut bag = sarif::PropertyBag::builder()
        .additional_properties(properties)
        .build();
    bag.tags = tags;
    bag
}

fn text(text: &str) -> sarif::Message {
    sarif::Message::builder().text(text).build()
}

fn multiformat(text: &str, markdown: Option<&str>) -> sarif::MultiformatMessageString {
    let mut message = sarif::MultiformatMessageString::builder()
        .text(text)
        .build();
    message.markdown = markdown.map(str::to_string);
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_relative_to_srcroot_or_absolute_file_uris() {
        let relative = artifact("./src/my app.c");
        assert_eq!(relative.uri.as_deref(), Some("src/my%20app.c"));
        assert_eq!(relative.uri_base_id.as_deref(), Some(SRCROOT));
        let absolute = artifact("/usr/include/mpi.h");
        assert_eq!(absolute.uri.as_deref(), Some("file:///usr/include/mpi.h"));
        assert_eq!(absolute.uri_base_id, None);
        assert_eq!(percent_encode("a:b#c"), "a%3Ab%23c");
    }

    #[test]
    fn fingerprints_follow_the_dedup_key() {
        let mut a = Finding::new(FindingKind::Crash, Severity::Error, "one");
        a.locations.push(Location {
            file: "app.c".into(),
            line: 3,
            column: 1,
            rank: 1,
            call: None,
            function: None,
            role: Role::Primary,
            label: "here".into(),
        });
        let mut b = a.clone();
        b.message = "two".into();
        b.locations[0].rank = 2;
        assert_eq!(fingerprint(&a), fingerprint(&b));
        b.locations[0].line = 4;
        assert_ne!(fingerprint(&a), fingerprint(&b));
        assert_eq!(fingerprint(&a).len(), 16);
    }
}
