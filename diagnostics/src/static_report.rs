//! The static report of `mbhybrid analyze` ([`StaticReport`]) for people:
//! counts, then the wildcard sites, the loops that hold them and what the
//! loop abstraction decided, zones, calls the runtime does not handle
//! fully, and the analysis's notes. (`--format json` is the report's own
//! serialization.)

use mbh_trace::static_report::{
    CompletionOrder, LoopDecision, StaticReport, WildcardKind, WildcardSite,
};
use std::fmt::Write;

/// The static report for people.
pub fn human(report: &StaticReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} functions, {} MPI calls, {} wildcard sites, {} loops, {} zones",
        report.functions.len(),
        report.calls.len(),
        report.wildcards.len(),
        report.loops.len(),
        report.zones.len()
    );
    if !report.wildcards.is_empty() {
        let _ = writeln!(out, "\nwildcard sites:");
        for w in &report.wildcards {
            let what = if w.kind == WildcardKind::AnyCompletion {
                format!("which request completes first{}", order_words(w))
            } else {
                format!("source {}, tag {}", w.source, w.tag)
            };
            let _ = writeln!(
                out,
                "  {}: `{}` in `{}` ({what})",
                w.span, w.call, w.function
            );
        }
    }
    let with_wildcards: Vec<_> = report
        .loops
        .iter()
        .filter(|l| l.decision != LoopDecision::NoWildcards)
        .collect();
    if !with_wildcards.is_empty() {
        let _ = writeln!(out, "\nloops with wildcard sites:");
        for l in with_wildcards {
            let decision = match l.decision {
                LoopDecision::Abstract => "abstracted under --loop-abstraction auto",
                _ => "explored (abstracted only under --loop-abstraction all)",
            };
            let _ = writeln!(
                out,
                "  {} (lines {}-{}, in `{}`): {decision}: {}",
                l.span, l.span.line, l.end_line, l.function, l.reason
            );
        }
    }
    if !report.zones.is_empty() {
        let _ = writeln!(out, "\nzones:");
        for z in &report.zones {
            let bound = z
                .bound
                .map_or("no bound".to_string(), |k| format!("mixing bound {k}"));
            let _ = writeln!(
                out,
                "  zone {} at {}, opened by `{}` in `{}` ({bound})",
                z.id, z.name, z.opened_by, z.function
            );
        }
    }
    if !report.unsupported.is_empty() {
        let _ = writeln!(out, "\nnot verified fully by the runtime (not modelled, not supported, or races not checked):");
        for u in &report.unsupported {
            let _ = writeln!(out, "  {}: `{}`: {}", u.span, u.call, u.reason);
        }
    }
    for note in &report.notes {
        let _ = writeln!(out, "note: {}: {}", note.span, note.message);
    }
    out
}

/// What the analysis decided about an any-completion site's order.
fn order_words(w: &WildcardSite) -> String {
    match &w.completion_order {
        Some(CompletionOrder::Irrelevant { collected }) if collected.is_empty() => {
            ": the order decides nothing, so it is no choice where the loop completes \
             every request"
                .into()
        }
        Some(CompletionOrder::Irrelevant { collected }) => format!(
            ": the order decides nothing ({} filled slot by slot), so it is no choice where \
             the loop completes every request",
            collected.join(", ")
        ),
        Some(CompletionOrder::Matters { reason }) => format!(": every order explored: {reason}"),
        None => String::new(),
    }
}
