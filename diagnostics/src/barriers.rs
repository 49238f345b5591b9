//! The barrier audit (`mbhybrid audit-barriers`, seed 004) in each text
//! format: one verdict per `MPI_Barrier` line, with the evidence that makes
//! a barrier relevant.
//!
//! A verdict is not a finding: it has no code page and no severity of its
//! own. In SARIF each verdict is a result of one of three rules
//! ([`RULES`]): `irrelevant` is a `note` the user can act on (delete the
//! call), `relevant` a `pass` (the barrier orders a wildcard receive before
//! a send), `unknown` a `review` (the exploration did not settle it).

use mbh_trace::report::{AuditCost, BarrierVerdict, Report};
use std::fmt::Write;

/// What an irrelevant barrier means, in the words every format uses.
pub const IRRELEVANT: &str = "deleting it, with the other irrelevant barriers, changes no match of any wildcard receive for this input";

/// One SARIF rule per verdict: `(id, verdict, short description, help)`.
pub const RULES: [(&str, &str, &str, &str); 3] = [
    (
        "barrier/irrelevant",
        "irrelevant",
        "An MPI_Barrier that orders no wildcard receive before a send it could otherwise take",
        "Delete the call (`mbhybrid audit-barriers --patch FILE` writes the diff), then verify again: \
         the verdict holds for the input and process count the audit ran with.",
    ),
    (
        "barrier/relevant",
        "relevant",
        "An MPI_Barrier that orders a wildcard receive before a send it could otherwise take",
        "Keep the call: without it the receive may take the other send. The result's related \
         locations are the receive and the send.",
    ),
    (
        "barrier/unknown",
        "unknown",
        "An MPI_Barrier whose relevance the exploration did not settle",
        "Read the reason: a deadlock must be fixed first; a bounded exploration decides once it \
         runs without `--mixing-bound`, with `--loop-abstraction off` and a large enough \
         `--max-interleavings`, or on a smaller input.",
    ),
];

/// The rule index of `verdict` in [`RULES`] (`unknown` for anything else).
pub fn rule_index(verdict: &str) -> usize {
    RULES.iter().position(|r| r.1 == verdict).unwrap_or(2)
}

/// The audit for people, appended to the human report:
///
/// ```text
/// barriers:
///   app.c:20: irrelevant: deleting it, with the other irrelevant barriers, changes no match of any wildcard receive for this input
///   app.c:31: relevant: it orders rank 1's wildcard receive before rank 2's send (interleaving 1)
///     app.c:28: wildcard receive (rank 1)
///     app.c:35: a send it could take if the barrier were gone (rank 2)
/// ```
///
/// then what the audit cost:
///
/// ```text
/// barrier audit: 2 barrier sites judged over 3 interleavings in 0.004 s (exploration 1.250 s)
/// ```
///
/// Nothing for a `verify` report (no verdicts, no audit cost).
pub fn human(report: &Report) -> String {
    let mut out = String::new();
    let barriers = &report.barriers;
    if !barriers.is_empty() {
        let _ = writeln!(out, "barriers:");
    }
    for b in barriers {
        let place = mbh_trace::place(&b.file, b.line, 0, None);
        let _ = writeln!(out, "  {place}: {}: {}", b.verdict, reason(b));
        for l in &b.evidence {
            let place = mbh_trace::place(&l.file, l.line, 0, l.function.as_deref());
            let _ = writeln!(out, "    {place}: {}", crate::with_rank(&l.label, l.rank));
        }
    }
    if let Some(cost) = &report.barrier_audit {
        out.push_str(&cost_line(barriers.len(), report.interleavings, cost));
    }
    out
}

/// `barrier audit: N barrier sites judged over M interleavings in F s
/// (exploration E s)`: `scripts/bench.sh` reads this line.
fn cost_line(sites: usize, interleavings: u32, cost: &AuditCost) -> String {
    format!(
        "barrier audit: {sites} barrier sites judged over {interleavings} interleaving{} in {:.3} s (exploration {:.3} s)\n",
        if interleavings == 1 { "" } else { "s" },
        cost.fib_seconds,
        cost.exploration_seconds
    )
}

/// One `file:line:1: note: [barrier] VERDICT: reason` line per verdict,
/// then one `note` line per piece of evidence, as [`crate::short`] prints
/// findings.
pub fn short(barriers: &[BarrierVerdict]) -> String {
    let mut out = String::new();
    for b in barriers {
        let _ = writeln!(
            out,
            "{}:{}:1: note: [barrier] {}: {}",
            b.file,
            b.line,
            b.verdict,
            reason(b)
        );
        for l in &b.evidence {
            let _ = writeln!(
                out,
                "{}:{}:{}: note: [barrier] {}",
                l.file,
                l.line,
                l.column.max(1),
                crate::with_rank(&l.label, l.rank)
            );
        }
    }
    out
}

/// The verdict's explanation: the stored reason, or for an irrelevant
/// barrier without one what deleting it means.
pub fn reason(b: &BarrierVerdict) -> &str {
    match (&b.verdict[..], &b.reason) {
        ("irrelevant", Some(reason)) => reason,
        ("irrelevant", None) => IRRELEVANT,
        (_, Some(reason)) => reason,
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mbh_trace::{Location, Role};

    fn verdicts() -> Vec<BarrierVerdict> {
        vec![
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
                evidence: vec![Location {
                    file: "app.c".into(),
                    line: 28,
                    column: 5,
                    rank: 1,
                    call: None,
                    function: None,
                    role: Role::Primary,
                    label: "wildcard receive".into(),
                }],
            },
        ]
    }

    #[test]
    fn human_lists_each_line_with_its_evidence_then_the_cost() {
        let mut report = crate::short::tests::report_with(Vec::new());
        report.barriers = verdicts();
        report.interleavings = 3;
        report.barrier_audit = Some(AuditCost {
            fib_seconds: 0.004,
            exploration_seconds: 1.25,
        });
        assert_eq!(
            human(&report),
            format!(
                "barriers:\n  app.c:20: irrelevant: {IRRELEVANT}\n  app.c:31: relevant: it orders rank 1's wildcard receive before rank 2's send\n    app.c:28: wildcard receive (rank 1)\n\
                 barrier audit: 2 barrier sites judged over 3 interleavings in 0.004 s (exploration 1.250 s)\n"
            )
        );
        assert_eq!(human(&crate::short::tests::report_with(Vec::new())), "");
    }

    #[test]
    fn short_lines_follow_the_gcc_pattern() {
        let text = short(&verdicts());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(
            lines[0],
            format!("app.c:20:1: note: [barrier] irrelevant: {IRRELEVANT}")
        );
        assert_eq!(
            lines[2],
            "app.c:28:5: note: [barrier] wildcard receive (rank 1)"
        );
    }

    #[test]
    fn every_verdict_has_a_rule() {
        for verdict in ["irrelevant", "relevant", "unknown"] {
            assert_eq!(RULES[rule_index(verdict)].1, verdict);
        }
    }
}
