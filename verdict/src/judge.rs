//! One interleaving's whole verdict: how its ranks ended
//! ([`crate::outcome::analyze`]), the deadlock the wait-for graph confirmed
//! while it ran, collectives folded into the hang they explain, and the
//! buffering hazard of a run that ended cleanly.

use crate::outcome::{analyze, Analysis, RunContext};
use crate::NoVerdict;
use mbh_analysis::deadlock::Deadlock;
use mbh_trace::{FindingKind, RankTrace};

/// The verdict of the run `ctx` describes, from its traces and their
/// `warnings` ([`crate::read_traces`]) and the deadlock the binary's
/// monitor confirmed, if any.
pub fn judge(
    ctx: &RunContext<'_>,
    traces: Vec<Option<RankTrace>>,
    warnings: Vec<mbh_trace::outcome::TraceGap>,
    deadlock: Option<&Deadlock>,
) -> Result<Analysis, NoVerdict> {
    let mut analysis = analyze(ctx, traces, warnings)?;
    if let Some(deadlock) = deadlock {
        analysis.findings.extend(crate::deadlock::findings(
            deadlock,
            ctx.sites,
            ctx.interleaving,
        ));
    }
    crate::divergence::fold_into_hangs(&mut analysis.findings);
    add_buffering_hazard(ctx, &mut analysis);
    Ok(analysis)
}

/// A run that completed may still have needed MPI's buffering (seed 003
/// §3): its trace is replayed with standard sends as synchronous. What
/// `build` found in the code (buffer arguments, a collective some rank may
/// skip) says nothing of how this run ended, so those findings do not
/// count against "ended cleanly".
fn add_buffering_hazard(ctx: &RunContext<'_>, analysis: &mut Analysis) {
    let ended_cleanly = analysis.findings.iter().all(|f| {
        matches!(
            f.kind,
            FindingKind::BufferType
                | FindingKind::BufferOverflow
                | FindingKind::CollectiveDivergence
        )
    });
    if !ended_cleanly || !analysis.traces.iter().all(Option::is_some) {
        return;
    }
    // The replay borrows every rank's trace: taken out of the analysis and
    // put back, never copied (at 1,024 ranks a copy was 1.6 GiB:
    // BENCHMARKS.md, "Post-run analysis at scale").
    let traces: Vec<RankTrace> = std::mem::take(&mut analysis.traces)
        .into_iter()
        .flatten()
        .collect();
    if let Some(hazard) = mbh_analysis::find_buffering_hazard(&traces) {
        analysis.findings.push(crate::deadlock::buffering_finding(
            &hazard,
            &traces,
            ctx.sites,
            ctx.interleaving,
        ));
    }
    analysis.traces = traces.into_iter().map(Some).collect();
}
