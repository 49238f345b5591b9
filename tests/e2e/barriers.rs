//! `mbhybrid audit-barriers` on the Fib scenarios of SCENARIOS.md (seed 004).

use crate::util::{describe, line_of};
use mbh_tests::json::Report;
use mbh_tests::{run_mbhybrid, workspace_root};
use std::path::Path;

/// Builds `tests/programs/barriers/NAME` and audits it on `np` ranks.
fn audit(name: &str, np: u32, extra: &[&str]) -> (i32, Report, String) {
    let (out, source) = audit_as(name, np, "json", extra);
    let report: Report =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{}", describe(&out)));
    let cost = report
        .barrier_audit
        .as_ref()
        .unwrap_or_else(|| panic!("an audit report without its cost\n{}", describe(&out)));
    assert!(
        cost.exploration_seconds > 0.0 && cost.fib_seconds >= 0.0,
        "{cost:?}"
    );
    (out.status.code().unwrap_or(-1), report, source)
}

/// Builds `tests/programs/barriers/NAME` and audits it on `np` ranks,
/// printing `format`.
fn audit_as(name: &str, np: u32, format: &str, extra: &[&str]) -> (std::process::Output, String) {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let source = format!("tests/programs/barriers/{name}");
    let exe = dir.path().join("prog");
    let root = workspace_root();
    let out = run_mbhybrid(&root, &["build", "-o", exe.to_str().unwrap(), &source]);
    assert!(out.status.success(), "{}", describe(&out));
    let runs = dir.path().join("runs");
    let np = np.to_string();
    let mut args = vec![
        "audit-barriers",
        "--format",
        format,
        "-n",
        &np,
        "--run-dir",
        runs.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    args.push(exe.to_str().unwrap());
    (run_mbhybrid(&root, &args), source)
}

/// The verdicts of the barrier calls on the lines marked `/* barrier */`.
fn verdicts(report: &Report, source: &str) -> Vec<String> {
    let text = std::fs::read_to_string(workspace_root().join(source)).unwrap();
    let lines: Vec<u32> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("/* barrier */"))
        .map(|(i, _)| i as u32 + 1)
        .collect();
    lines
        .iter()
        .map(|&line| {
            report
                .barriers
                .iter()
                .find(|b| b["file"] == source && b["line"] == line)
                .map_or("absent".to_string(), |b| {
                    b["verdict"].as_str().unwrap().to_string()
                })
        })
        .collect()
}

fn assert_all(report: &Report, source: &str, verdict: &str) {
    let found = verdicts(report, source);
    assert!(!found.is_empty());
    assert!(
        found.iter().all(|v| v == verdict),
        "{source}: {found:?}\n{:?}",
        report.barriers
    );
}

#[test]
fn f9_without_wildcards_every_barrier_is_irrelevant_and_says_why() {
    let (status, report, source) = audit("f9_no_wildcards.c", 2, &[]);
    assert_eq!(status, 0);
    assert_all(&report, &source, "irrelevant");
    assert!(
        report.barriers.iter().all(|b| b["reason"]
            .as_str()
            .is_some_and(|r| r.contains("no wildcard receive"))),
        "{:?}",
        report.barriers
    );
}

#[test]
fn f1_deadlock_and_no_verdict() {
    let (status, report, source) = audit("f1_self_deadlock.c", 1, &[]);
    assert_eq!(status, 1);
    assert!(
        report.findings.iter().any(|f| f.kind == "deadlock"),
        "{:?}",
        report.findings
    );
    assert!(verdicts(&report, &source)
        .iter()
        .all(|v| v != "relevant" && v != "irrelevant"));
}

#[test]
fn f1b_irrelevant() {
    let (status, report, source) = audit("f1b_self.c", 1, &[]);
    assert_eq!(status, 0, "{:?}", report.findings);
    assert_all(&report, &source, "irrelevant");
}

#[test]
fn f2_irrelevant() {
    let (_, report, source) = audit("f2.c", 2, &[]);
    assert!(
        report.findings.iter().all(|f| f.kind != "deadlock"),
        "{:?}",
        report.findings
    );
    assert_all(&report, &source, "irrelevant");
}

/// A `Waitall` over several receives: each `Matched` record is tied to the
/// receive its `Completed` record names, so the run is judged (it was
/// "unknown": every receive read as the call's first request).
#[test]
fn f10_a_waitall_halo_is_judged() {
    let (status, report, source) = audit("f10_waitall_halo.c", 3, &[]);
    assert_eq!(status, 0, "{:?}", report.findings);
    assert_all(&report, &source, "irrelevant");
}

#[test]
fn f3_irrelevant() {
    let (status, report, source) = audit("f3.c", 2, &[]);
    // x is always 33 (no assertion fails); the second message, 22, is
    // never received, which MPI calls erroneous (MPI-3.1 Example 8.8,
    // MPI-4.0 §11.2.2; issue 38): that is the one finding.
    assert_eq!(status, 1, "{:?}", report.findings);
    let kinds: Vec<&str> = report.findings.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(kinds, ["unreceived-message"], "{:?}", report.findings);
    assert!(report.findings[0].message.contains("rank 1 sent to rank 0"));
    assert_all(&report, &source, "irrelevant");
}

#[test]
fn f4_irrelevant() {
    let (_, report, source) = audit("f4.c", 3, &[]);
    assert_all(&report, &source, "irrelevant");
}

/// F4a with its messages on a duplicated communicator: Fib compares the
/// communicators of sends and receives across ranks, which only works on
/// the ids the runtime gives them (handles are local).
#[test]
fn f8_relevant_on_a_library_communicator() {
    let (_, report, source) = audit("f8_library_comm.c", 3, &[]);
    assert_all(&report, &source, "relevant");
}

#[test]
fn f4a_relevant_with_evidence() {
    let (_, report, source) = audit("f4a.c", 3, &[]);
    assert_all(&report, &source, "relevant");
    let barrier = &report.barriers[0];
    let evidence = barrier["evidence"].as_array().expect("evidence");
    let irecv = line_of(&source, "MPI_Irecv(&x");
    let isend_p2 = line_of(&source, "v = 22;") + 2;
    assert!(
        evidence
            .iter()
            .any(|l| l["line"] == irecv && l["rank"] == 0),
        "{evidence:?}"
    );
    assert!(
        evidence
            .iter()
            .any(|l| l["line"] == isend_p2 && l["rank"] == 2),
        "{evidence:?}"
    );
}

/// The same verdict in SARIF (a `barrier/relevant` result at the barrier's
/// line, the receive and send as related locations) and in the short
/// format (a `[barrier]` line an editor can jump to).
#[test]
fn f4a_verdict_in_sarif_and_short() {
    let (out, source) = audit_as("f4a.c", 3, "sarif", &[]);
    let log: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{}", describe(&out)));
    let barrier_line = line_of(&source, "/* barrier */");
    let results = log["runs"][0]["results"].as_array().expect("results");
    let result = results
        .iter()
        .find(|r| r["ruleId"] == "barrier/relevant")
        .unwrap_or_else(|| panic!("no barrier/relevant result: {results:?}"));
    let location = &result["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], source);
    assert_eq!(location["region"]["startLine"], barrier_line);
    let irecv = line_of(&source, "MPI_Irecv(&x");
    let related = result["relatedLocations"].as_array().expect("evidence");
    assert!(
        related
            .iter()
            .any(|l| l["physicalLocation"]["region"]["startLine"] == irecv),
        "{related:?}"
    );
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    let index = result["ruleIndex"].as_u64().unwrap() as usize;
    assert_eq!(rules[index]["id"], "barrier/relevant");

    let (out, _) = audit_as("f4a.c", 3, "short", &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    let wanted = format!("{source}:{barrier_line}:1: note: [barrier] relevant: ");
    assert!(text.lines().any(|l| l.starts_with(&wanted)), "{text}");
}

#[test]
fn f5_irrelevant() {
    let (_, report, source) = audit("f5.c", 3, &[]);
    assert_all(&report, &source, "irrelevant");
}

#[test]
fn f6_all_irrelevant_and_the_patch_deletes_them() {
    let (status, report, source) = audit("f6_diffusion.c", 3, &[]);
    assert_eq!(status, 0, "{:?}", report.findings);
    assert_eq!(report.interleavings, 1);
    assert_all(&report, &source, "irrelevant");
    let heat = report.runs[0].stdout.clone();

    // The patch applies with `patch -p1` and the program still computes the same.
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();
    std::fs::copy(workspace_root().join(&source), work.join("f6.c")).unwrap();
    let out = run_mbhybrid(work, &["build", "-o", "prog", "f6.c"]);
    assert!(out.status.success(), "{}", describe(&out));
    let patch = audit_patch(work, "./prog");
    assert!(
        patch.contains("-    MPI_Barrier(MPI_COMM_WORLD); /* barrier */"),
        "{patch}"
    );
    apply_patch(work, &[]);
    assert!(!std::fs::read_to_string(work.join("f6.c"))
        .unwrap()
        .contains("MPI_Barrier"));
    let out = run_mbhybrid(work, &["build", "-o", "prog", "f6.c"]);
    assert!(out.status.success(), "{}", describe(&out));
    let out = run_mbhybrid(work, &["verify", "-n", "3", "--format", "json", "./prog"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let after: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        after.runs[0].stdout, heat,
        "the patched program computes the same"
    );
    assert!(Path::new(&work.join("f6.c")).exists());
}

/// The wildcard receives of a verify report: (rank, line, call, who could
/// send to it), sorted.
fn wildcard_senders(report: &Report) -> Vec<(i32, u32, String, Vec<i32>)> {
    let mut found: Vec<_> = report
        .wildcards
        .iter()
        .map(|w| {
            let mut senders = w.senders.clone();
            senders.extend(&w.potential);
            senders.extend(&w.matched);
            senders.sort_unstable();
            senders.dedup();
            (w.rank, w.line, w.call.clone(), senders)
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

/// Two barriers in a row that each order P0's wildcard receive before
/// P2's send: alone each is irrelevant, together they are not. The audit
/// deletes the first and keeps the second, saying why, and the patched
/// program's wildcard receive has the same senders as the original's.
#[test]
fn f7_redundant_pair_keeps_one_and_the_patch_keeps_the_matches() {
    let (status, report, source) = audit("f7_redundant_pair.c", 3, &[]);
    assert_eq!(status, 0, "{:?}", report.findings);
    let first = line_of(&source, "/* barrier */");
    let second = first + 1;
    assert_eq!(
        verdicts(&report, &source),
        vec!["irrelevant".to_string(), "relevant".to_string()],
        "{:?}",
        report.barriers
    );
    let kept = report
        .barriers
        .iter()
        .find(|b| b["line"] == second)
        .expect("the second barrier's verdict");
    let reason = kept["reason"].as_str().expect("a reason");
    assert!(
        reason.ends_with(&format!("once the barrier at line {first} is deleted")),
        "{reason}"
    );
    assert!(
        reason.contains("rank 0's wildcard receive before rank 2's send"),
        "{reason}"
    );
    let evidence = kept["evidence"].as_array().expect("evidence");
    let irecv = line_of(&source, "MPI_Irecv(&x");
    let send_p2 = line_of(&source, "v = 22;") + 1;
    assert!(
        evidence
            .iter()
            .any(|l| l["line"] == irecv && l["rank"] == 0),
        "{evidence:?}"
    );
    assert!(
        evidence
            .iter()
            .any(|l| l["line"] == send_p2 && l["rank"] == 2),
        "{evidence:?}"
    );

    // The patch deletes the first barrier only; the patched program's
    // wildcard receive has the same senders (P2's message cannot race
    // P1's) and nothing goes wrong.
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();
    std::fs::copy(workspace_root().join(&source), work.join("f7.c")).unwrap();
    let out = run_mbhybrid(work, &["build", "-o", "prog", "f7.c"]);
    assert!(out.status.success(), "{}", describe(&out));
    let out = run_mbhybrid(work, &["verify", "-n", "3", "--format", "json", "./prog"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let before: Report = serde_json::from_slice(&out.stdout).unwrap();
    let out = run_mbhybrid(
        work,
        &[
            "audit-barriers",
            "-n",
            "3",
            "--format",
            "json",
            "--patch",
            "f7.patch",
            "./prog",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let patch = std::fs::read_to_string(work.join("f7.patch")).unwrap();
    assert_eq!(
        patch
            .matches("-  MPI_Barrier(MPI_COMM_WORLD); /* barrier */")
            .count(),
        1,
        "{patch}"
    );
    let applied = std::process::Command::new("patch")
        .args(["-p1", "-i", "f7.patch"])
        .current_dir(work)
        .output()
        .expect("patch runs");
    assert!(applied.status.success(), "{}", describe(&applied));
    let patched = std::fs::read_to_string(work.join("f7.c")).unwrap();
    assert_eq!(patched.matches("MPI_Barrier").count(), 1, "{patched}");
    let out = run_mbhybrid(work, &["build", "-o", "prog", "f7.c"]);
    assert!(out.status.success(), "{}", describe(&out));
    let out = run_mbhybrid(work, &["verify", "-n", "3", "--format", "json", "./prog"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let after: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert!(after.findings.is_empty(), "{:?}", after.findings);
    let senders = wildcard_senders(&before);
    assert_eq!(senders, vec![(0, irecv, "MPI_Irecv".to_string(), vec![1])]);
    assert_eq!(wildcard_senders(&after), senders, "no new potential sender");
}

/// Issue 12: a source outside the build directory is recorded by absolute
/// path; its patch path is relative to the directory the patch is applied
/// in (`--- a/src/f6.c`, not `--- a//tmp/.../src/f6.c`, which `patch -p1`
/// and `git apply` refuse).
#[test]
fn the_patch_of_a_source_given_by_absolute_path_applies_with_p1() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::create_dir_all(work.join("build")).unwrap();
    let source = work.join("src").join("f6.c");
    std::fs::copy(
        workspace_root().join("tests/programs/barriers/f6_diffusion.c"),
        &source,
    )
    .unwrap();
    let out = run_mbhybrid(
        &work.join("build"),
        &["build", "-o", "prog", source.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", describe(&out));
    let patch = audit_patch(work, "build/prog");
    assert!(
        patch.contains("--- a/src/f6.c\n") && patch.contains("+++ b/src/f6.c\n"),
        "{patch}"
    );
    apply_patch(work, &["--dry-run"]);
}

/// `audit-barriers -n 3 --patch f6.patch PROGRAM` in `work` (F6: every
/// barrier irrelevant, exit 0); the patch's text.
fn audit_patch(work: &Path, program: &str) -> String {
    let out = run_mbhybrid(
        work,
        &[
            "audit-barriers",
            "-n",
            "3",
            "--format",
            "json",
            "--patch",
            "f6.patch",
            program,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    std::fs::read_to_string(work.join("f6.patch")).unwrap()
}

/// `patch -p1 [extra] -i f6.patch` in `work`, which must succeed.
fn apply_patch(work: &Path, extra: &[&str]) {
    let applied = std::process::Command::new("patch")
        .arg("-p1")
        .args(extra)
        .args(["-i", "f6.patch"])
        .current_dir(work)
        .output()
        .expect("patch runs");
    assert!(applied.status.success(), "{}", describe(&applied));
}
