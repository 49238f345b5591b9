//! The barrier verdicts of `audit-barriers` in the report's terms: Fib's
//! verdict on each `MPI_Barrier` site (`mbh_fib::audit`) with its source
//! line, the reason in words, and, for a relevant barrier, the receive and
//! the send it orders.

use crate::place::site_location;
use mbh_fib::{UnknownReason, Verdict};
use mbh_trace::report::BarrierVerdict;
use mbh_trace::{Role, SiteTable};

/// The reason of an irrelevant barrier in a program that made no wildcard
/// receive.
const NO_WILDCARDS: &str = "the program made no wildcard receive for this input, so no barrier can change which message a receive takes (seed 004); delete it only if nothing else relies on it (timing, output order, files)";

/// The verdict of every barrier site of `barriers` that `sites` knows, one
/// per source line, in file and line order. `no_wildcards`: the program
/// made no wildcard receive, so every barrier is irrelevant by Fib's
/// definition, and the reason says that.
pub fn barrier_verdicts(
    sites: Option<&SiteTable>,
    barriers: &[mbh_fib::BarrierVerdict],
    no_wildcards: bool,
) -> Vec<BarrierVerdict> {
    let mut verdicts: Vec<BarrierVerdict> = barriers
        .iter()
        .filter_map(|b| verdict(sites, b, no_wildcards))
        .collect();
    verdicts.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    verdicts.dedup_by(|a, b| a.file == b.file && a.line == b.line);
    verdicts
}

/// One barrier site's verdict; `None` when `sites` does not know the site.
fn verdict(
    sites: Option<&SiteTable>,
    barrier: &mbh_fib::BarrierVerdict,
    no_wildcards: bool,
) -> Option<BarrierVerdict> {
    let site = sites?.get(barrier.site)?;
    let (verdict, reason, evidence) = match &barrier.verdict {
        Verdict::Irrelevant if no_wildcards => (
            "irrelevant",
            Some(NO_WILDCARDS.to_string()),
            Vec::new(),
        ),
        Verdict::Irrelevant => ("irrelevant", None, Vec::new()),
        Verdict::Unknown(why) => (
            "unknown",
            Some(match why {
                UnknownReason::Deadlock => "the exploration found a deadlock or a hang, so the communication structure is not settled".to_string(),
                UnknownReason::Bounded => "the exploration was bounded (mixing bound, loop abstraction or budget)".to_string(),
                UnknownReason::Trace { interleaving, issue } => {
                    format!("interleaving {}'s traces could not be fully used: {issue:?}", interleaving + 1)
                }
                UnknownReason::MeetsKeptBarrier { kept } => format!(
                    "its calls meet those of {} in one MPI_Barrier, which is relevant: deleting this one alone would pair the remaining barriers differently",
                    barriers_at(sites, &site.file, &[*kept]).0
                ),
            }),
            Vec::new(),
        ),
        Verdict::Relevant {
            evidence,
            after_deleting,
            ..
        } => {
            let mut locations = Vec::new();
            if let Some(s) = sites.and_then(|t| t.get(evidence.receive.site)) {
                locations.push(site_location(s, evidence.receive.rank, Role::Primary, "wildcard receive"));
            }
            if let Some(s) = sites.and_then(|t| t.get(evidence.send.site)) {
                locations.push(site_location(
                    s,
                    evidence.send.rank,
                    Role::Secondary,
                    "a send it could take if the barrier were gone",
                ));
            }
            let mut reason = format!(
                "it orders rank {}'s wildcard receive before rank {}'s send (interleaving {})",
                evidence.receive.rank,
                evidence.send.rank,
                evidence.interleaving + 1
            );
            if !after_deleting.is_empty() {
                // Irrelevant alone; kept so the irrelevant ones can all go.
                let (barriers, plural) = barriers_at(sites, &site.file, after_deleting);
                let verb = if plural { "are" } else { "is" };
                reason.push_str(&format!(" once {barriers} {verb} deleted"));
            }
            ("relevant", Some(reason), locations)
        }
    };
    Some(BarrierVerdict {
        file: site.file.clone(),
        line: site.line,
        verdict: verdict.into(),
        reason,
        evidence,
    })
}

/// The source lines of barrier sites `barriers`, `file:line` when in another
/// file than `file`, in order, without repeats.
fn site_lines(sites: Option<&SiteTable>, file: &str, barriers: &[u32]) -> Vec<String> {
    let mut lines: Vec<(bool, &str, u32)> = barriers
        .iter()
        .filter_map(|&s| sites.and_then(|t| t.get(s)))
        .map(|s| (s.file != file, s.file.as_str(), s.line))
        .collect();
    lines.sort_unstable();
    lines.dedup();
    lines
        .into_iter()
        .map(|(other, f, line)| {
            if other {
                format!("{f}:{line}")
            } else {
                line.to_string()
            }
        })
        .collect()
}

/// "the barrier at line 12", "the barriers at lines 12 and 20", "the
/// barriers at lines 12, 20 and 31", and whether that is plural.
fn barriers_at(sites: Option<&SiteTable>, file: &str, barriers: &[u32]) -> (String, bool) {
    let lines = site_lines(sites, file, barriers);
    match lines.as_slice() {
        [] => ("barriers of unknown lines".to_string(), true),
        [one] => (format!("the barrier at line {one}"), false),
        [init @ .., last] => (
            format!("the barriers at lines {} and {last}", init.join(", ")),
            true,
        ),
    }
}
