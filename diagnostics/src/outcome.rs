//! The words for what a verification could not do
//! ([`mbh_trace::outcome`]): the report's `warnings` (the same text in
//! every format), and the tool errors `verify` and `replay` print after
//! the report ([`tool_stop_error`], [`divergence_error`]).

use crate::tool::ToolDiagnostic;
use mbh_trace::finding::Location;
use mbh_trace::outcome::{
    BoundOption, Divergence, ForcedMiss, ForcedStall, Partial, ToolStop, TraceGap, Unverified,
    UnverifiedCall, Warning,
};
use std::collections::BTreeMap;

/// A warning of the report, as every format shows it.
pub fn warning(warning: &Warning) -> String {
    match warning {
        Warning::StaleSiteTable { table, program } => format!(
            "{} was left by an earlier `mbhybrid build` of `{}`, which was since built without mbhybrid (it does not link the runtime): the table is ignored",
            table.display(),
            program.display()
        ),
        Warning::UnreadableSiteTable { error } => {
            format!("{error}; reports will lack MPI call sites")
        }
        Warning::NotBuilt { program, table } => format!(
            "`{}` was not built by `mbhybrid build` (no {table}); the runtime is preloaded, locations come from debug information only, and a buffer used before its `MPI_Wait` is found only for small sends",
            program.display()
        ),
        Warning::NoDebugInfo { program } => format!(
            "`{}` has no debug information: findings name functions and offsets in the executable only; rebuild it with `-g` for source lines",
            program.display()
        ),
        Warning::TraceGap { interleaving, gap } => {
            format!("interleaving {interleaving}: {}", trace_gap(gap))
        }
        Warning::ForcedStall(stall) => forced_stall(stall),
        Warning::Diverged(divergence) => self::divergence(divergence),
        Warning::ReplayDiverged { forced, misses } => format!(
            "the replay diverged from the recording ({} of {forced} forced matches did not happen): {}",
            misses.len(),
            misses.iter().map(forced_miss).collect::<Vec<_>>().join("; ")
        ),
        Warning::Partial(why) => format!("coverage is partial: {}", partial(why)),
    }
}

/// Why coverage is partial, as the end of "coverage is partial: ...".
pub fn partial(why: &Partial) -> String {
    match why {
        Partial::Signal {
            signal,
            interleavings,
        } => format!(
            "stopped by {signal} after {interleavings} interleaving(s); the report covers those"
        ),
        Partial::MaxInterleavings { max, advice } => format!(
            "stopped at --max-interleavings {max}; raise it{}",
            bounding_advice(advice)
        ),
        Partial::TimeBudget {
            interleavings,
            advice,
        } => format!(
            "stopped by --time-budget after {interleavings} interleavings; raise it{}",
            bounding_advice(advice)
        ),
        Partial::RunFailed {
            interleaving,
            error,
        } => format!("interleaving {interleaving} could not run: {error}"),
        Partial::ToolStop { interleaving } => format!(
            "the runtime stopped interleaving {interleaving}: it cannot handle a call the program makes"
        ),
        Partial::TooBigForExhaustive { interleaving } => format!(
            "interleaving {interleaving} has too many wildcard events for --search exhaustive; use the guided search"
        ),
        Partial::Bounded => {
            "choice points were skipped by --mixing-bound or --loop-abstraction (see choice_points)"
                .into()
        }
        Partial::ForcedStall(stall) => forced_stall(stall),
        Partial::Diverged(divergence) => self::divergence(divergence),
        Partial::TraceGap { interleaving, gap } => {
            format!("interleaving {interleaving}: {}", trace_gap(gap))
        }
        Partial::NotModelled(locations) => not_modelled(locations),
    }
}

/// The options that would shorten a search, as the end of a sentence
/// (", or bound the search with ..."); empty when none would.
fn bounding_advice(options: &[BoundOption]) -> String {
    if options.is_empty() {
        return String::new();
    }
    let options: Vec<&str> = options
        .iter()
        .map(|o| match o {
            BoundOption::MixingBound => "--mixing-bound K",
            BoundOption::LoopAbstractionAuto => "--loop-abstraction auto",
        })
        .collect();
    format!(", or bound the search with {}", options.join(" or "))
}

/// What a rank's trace lacks.
pub fn trace_gap(gap: &TraceGap) -> String {
    match gap {
        TraceGap::CutShort {
            rank,
            counted,
            kept,
        } => format!(
            "rank {rank}'s trace is cut short: its header counts {counted} records, the file holds {kept}; what the rank did after record {kept} is not analysed"
        ),
        TraceGap::Damaged { rank, damage, kept } => format!(
            "rank {rank}'s trace is damaged ({damage}); the {kept} records before it are analysed, what follows is not"
        ),
        TraceGap::Lost { rank, records } => format!(
            "rank {rank}'s runtime could not write {records} record{} (its trace could not grow: is the run directory's disk full?); what they held is not analysed",
            if *records == 1 { "" } else { "s" }
        ),
        TraceGap::Unreadable { rank, error } => {
            format!("rank {rank}'s trace is unreadable: {error}")
        }
    }
}

/// What went otherwise: "rank 1's MPI_Recv at ring.c:42 (its wildcard
/// event 3) was forced to take rank 0's message but took rank 2's", in
/// the call's own terms (a sender, or an index into its array).
pub fn forced_miss(miss: &ForcedMiss) -> String {
    let rank = miss.forced.rank;
    let event = miss.forced.event;
    let forced = miss.forced.source;
    let subject = match &miss.call {
        Some(c) if c.line > 0 => format!(
            "rank {rank}'s {} at {}:{} (its wildcard event {event})",
            c.call, c.file, c.line
        ),
        Some(c) => format!("rank {rank}'s {} (its wildcard event {event})", c.call),
        None => format!("rank {rank}'s wildcard event {event}"),
    };
    let (wanted, got) = if miss.call.as_ref().is_some_and(|c| c.index_choice) {
        (
            format!("return request index {forced} first"),
            match miss.observed {
                Some(other) => format!("returned index {other}"),
                None => "never returned".to_string(),
            },
        )
    } else {
        (
            format!("take rank {forced}'s message"),
            match miss.observed {
                Some(other) => format!("took rank {other}'s"),
                None => "never completed".to_string(),
            },
        )
    };
    format!("{subject} was forced to {wanted} but {got}")
}

/// A forced match that took another sender; the search's says where its
/// files are, so a person can report it in one read.
pub fn divergence(divergence: &Divergence) -> String {
    let what = format!(
        "interleaving {}: {}",
        divergence.interleaving,
        forced_miss(&divergence.miss)
    );
    match &divergence.run_dir {
        Some(dir) => format!(
            "{what}; the clocks claimed a match MPI could not make (a bug of mbhybrid: please report it with the run directory {})",
            dir.display()
        ),
        None => what,
    }
}

/// A forced receive that never completed: not run, so the search is
/// partial.
pub fn forced_stall(stall: &ForcedStall) -> String {
    let hang = if stall.hung {
        "; the run hung waiting for it, which is not reported: without the forcing the receive takes another message"
    } else {
        ""
    };
    format!(
        "interleaving {}: {}: the sender did not get to send it under this MPI library, though the clocks found the match possible (MPI lets a rank leave a collective before the others enter it where its result does not depend on them; the MPI library kept it inside, where mbhybrid could not let it out), so that outcome was not checked{hang}",
        stall.interleaving,
        forced_miss(&stall.miss)
    )
}

/// A rank the runtime stopped: "app.c:12: rank 1: what it said".
pub fn tool_stop(stop: &ToolStop) -> String {
    let rank = stop.rank;
    let said = stop
        .said
        .as_deref()
        .unwrap_or("the runtime stopped it (its trace holds no message)");
    match &stop.site {
        Some(site) => format!(
            "{}: rank {rank}: {said}",
            mbh_trace::place::site_place(site)
        ),
        None => format!("rank {rank}: {said}"),
    }
}

/// The error after the report when the runtime stopped the program at a
/// call it cannot handle: a limit of the tool, never a finding.
pub fn tool_stop_error(stops: &[ToolStop]) -> ToolDiagnostic {
    let mut error = ToolDiagnostic::error(
        "the mbhybrid runtime stopped the program; nothing after this point was verified",
    );
    for stop in stops {
        error = error.detail(tool_stop(stop));
    }
    error.help(
        "a limit (or, when the message says so, a bug) of mbhybrid, not of the program: \
         avoid the call for the verification, or report it (docs/limits.md)",
    )
}

/// The error after the report when forced matches did not happen: the
/// result is not a verification.
pub fn divergence_error(diverged: &[Divergence]) -> ToolDiagnostic {
    let mut error = ToolDiagnostic::error(format!(
        "{} forced match(es) did not happen, so this result is not a verification:",
        diverged.len()
    ));
    for d in diverged {
        error = error.detail(divergence(d));
    }
    error.help("the run directory holds the configurations and traces; please report it")
}

/// Why a run that made `calls` (the report's `not_modelled`) is
/// partial: the calls where a run stopped because two threads were in MPI
/// at once, the unmodelled calls, then the one-sided communication calls
/// whose races are not checked, each named with its first lines. Empty
/// when there are none.
pub fn not_modelled(calls: &[UnverifiedCall]) -> String {
    let with = |want: fn(Unverified) -> bool| -> Vec<Location> {
        calls
            .iter()
            .filter(|c| want(c.what))
            .map(|c| c.location.clone())
            .collect()
    };
    let stopped = with(|w| w == Unverified::ThreadStopped);
    let unmodelled = with(|w| w == Unverified::NotModelled);
    let mut parts = Vec::new();
    if !stopped.is_empty() {
        parts.push(format!(
            "a run stopped where a second thread called MPI while another thread of its rank was inside MPI, so what the program does after that call is not verified: {}",
            summary(&stopped)
        ));
    }
    if !unmodelled.is_empty() {
        parts.push(format!(
            "the program calls MPI functions mbhybrid does not model, so what they do is not verified: {}",
            summary(&unmodelled)
        ));
    }
    parts.extend(rma_reasons(
        &with(|w| w == Unverified::NoAccessChecks),
        &with(|w| w == Unverified::PassiveTarget),
        &with(|w| w == Unverified::SharedWindow),
    ));
    let mut whys: BTreeMap<&str, Vec<Location>> = BTreeMap::new();
    for call in calls {
        if let Unverified::RacesUnchecked(why) = call.what {
            whys.entry(why).or_default().push(call.location.clone());
        }
    }
    for (why, at) in whys {
        parts.push(format!(
            "the races of these one-sided operations were not checked, because {why}: {}",
            summary(&at)
        ));
    }
    parts.join("; ")
}

/// Why a run with one-sided communication calls is partial: what of it is
/// not checked (MPI-4.0 §12.7), one sentence per kind, each naming its
/// calls: of a program built without the access checks (`unchecked`),
/// that open passive target epochs (`passive`), that make shared memory
/// windows (`shared`).
fn rma_reasons(unchecked: &[Location], passive: &[Location], shared: &[Location]) -> Vec<String> {
    let mut reasons = Vec::new();
    if !unchecked.is_empty() {
        reasons.push(format!(
            "the program uses one-sided communication (RMA): mbhybrid checks its epochs and the races between its operations, but not the loads and stores of window memory by its own process during an epoch, nor, as the program was built without the access checks (`--no-access-checks` or MBHYBRID_ACCESS_CHECKS=off), of origin buffers while an operation may be in flight: {}",
            summary(unchecked)
        ));
    }
    if !passive.is_empty() {
        reasons.push(format!(
            "the program uses passive target synchronization of one-sided communication (RMA locks): mbhybrid checks its epochs, the races between its operations and the program's loads and stores of their origin buffers while they may be in flight, but not the loads and stores of window memory by its own process while another rank may hold a lock on it: {}",
            summary(passive)
        ));
    }
    if !shared.is_empty() {
        reasons.push(format!(
            "the program makes shared memory windows: the loads and stores other processes make directly of their memory are not checked: {}",
            summary(shared)
        ));
    }
    reasons
}

/// Places named per function in [`summary`]; the JSON lists them all.
const PLACES_SHOWN: usize = 3;

/// `MPI_Put (rma.c:12), MPI_Win_fence (rma.c:10, rma.c:14)`: the calls of
/// `locations` by function, for a sentence (at most three places each,
/// then how many more).
fn summary(locations: &[Location]) -> String {
    let mut by_call: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for l in locations {
        let place = if l.line == 0 {
            l.file.clone()
        } else {
            format!("{}:{}", l.file, l.line)
        };
        let places = by_call.entry(l.call.as_deref().unwrap_or("?")).or_default();
        if !places.contains(&place) {
            places.push(place);
        }
    }
    by_call
        .into_iter()
        .map(|(call, places)| {
            let more = places.len().saturating_sub(PLACES_SHOWN);
            let shown = places[..places.len().min(PLACES_SHOWN)].join(", ");
            match more {
                0 => format!("{call} ({shown})"),
                n => format!("{call} ({shown} and {n} more)"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use mbh_trace::config::ForcedMatch;
    use mbh_trace::finding::Role;
    use mbh_trace::outcome::ForcedCall;
    use std::path::PathBuf;

    fn at(call: &str, line: u32) -> Location {
        Location {
            file: "rma.c".into(),
            line,
            column: 3,
            rank: 0,
            call: Some(call.into()),
            function: None,
            role: Role::Primary,
            label: Unverified::NotModelled.label(),
        }
    }

    fn unverified(call: &str, line: u32, what: Unverified) -> UnverifiedCall {
        UnverifiedCall {
            location: Location {
                label: what.label(),
                ..at(call, line)
            },
            what,
        }
    }

    #[test]
    fn the_reason_names_unmodelled_and_race_unchecked_calls_apart() {
        let reason = not_modelled(&[
            unverified("MPI_Neighbor_alltoall", 9, Unverified::NotModelled),
            unverified("MPI_Win_lock", 12, Unverified::PassiveTarget),
        ]);
        assert!(
            reason.starts_with("the program calls MPI functions mbhybrid does not model, so what they do is not verified: MPI_Neighbor_alltoall (rma.c:9); "),
            "{reason}"
        );
        assert!(
            reason.ends_with("but not the loads and stores of window memory by its own process while another rank may hold a lock on it: MPI_Win_lock (rma.c:12)"),
            "{reason}"
        );
        let reason = not_modelled(&[unverified("MPI_Put", 12, Unverified::NoAccessChecks)]);
        assert!(
            reason.contains("the races between its operations, but not the loads and stores of window memory by its own process during an epoch, nor, as the program was built without the access checks")
                && reason.ends_with("of origin buffers while an operation may be in flight: MPI_Put (rma.c:12)"),
            "{reason}"
        );
        let holes = Unverified::RacesUnchecked("their target datatype has holes");
        assert_eq!(
            not_modelled(&[unverified("MPI_Get", 14, holes)]),
            "the races of these one-sided operations were not checked, because their target datatype has holes: MPI_Get (rma.c:14)"
        );
    }

    /// A call without a line says where it is in its label; what it is
    /// comes from its kind, never from its label's words.
    #[test]
    fn a_call_is_grouped_by_its_kind_whatever_its_label_says() {
        let mut lock = unverified("MPI_Win_lock", 0, Unverified::PassiveTarget);
        lock.location.label += " (in `main`, the call returning to offset 0x1234)";
        let reason = not_modelled(&[lock]);
        assert!(
            reason.starts_with("the program uses passive target synchronization"),
            "{reason}"
        );
    }

    #[test]
    fn a_run_stopped_by_two_threads_in_mpi_is_said_first() {
        let reason = not_modelled(&[
            unverified("MPI_Neighbor_alltoall", 9, Unverified::NotModelled),
            unverified("MPI_Sendrecv", 24, Unverified::ThreadStopped),
        ]);
        assert!(
            reason.starts_with("a run stopped where a second thread called MPI while another thread of its rank was inside MPI, so what the program does after that call is not verified: MPI_Sendrecv (rma.c:24); the program calls MPI functions mbhybrid does not model"),
            "{reason}"
        );
    }

    #[test]
    fn the_summary_names_each_function_with_its_first_lines() {
        let calls = [
            at("MPI_Win_fence", 10),
            at("MPI_Put", 12),
            at("MPI_Win_fence", 14),
            at("MPI_Win_fence", 16),
            at("MPI_Win_fence", 18),
        ];
        assert_eq!(
            summary(&calls),
            "MPI_Put (rma.c:12), MPI_Win_fence (rma.c:10, rma.c:14, rma.c:16 and 1 more)"
        );
    }

    fn miss(source: i32, observed: Option<i32>, call: Option<ForcedCall>) -> ForcedMiss {
        ForcedMiss {
            forced: ForcedMatch {
                rank: 1,
                event: 3,
                source,
            },
            observed,
            call,
        }
    }

    #[test]
    fn a_receive_is_told_in_senders() {
        let recv = ForcedCall {
            call: "MPI_Recv".into(),
            file: "ring.c".into(),
            line: 42,
            index_choice: false,
        };
        let text = divergence(&Divergence {
            interleaving: 7,
            miss: miss(0, Some(2), Some(recv)),
            run_dir: Some(PathBuf::from("/runs/7")),
        });
        assert!(
            text.starts_with(
                "interleaving 7: rank 1's MPI_Recv at ring.c:42 (its wildcard event 3) was forced to take rank 0's message but took rank 2's;"
            ),
            "{text}"
        );
        assert!(text.ends_with("the run directory /runs/7)"), "{text}");
    }

    #[test]
    fn an_index_choice_is_told_in_indices() {
        let waitany = ForcedCall {
            call: "MPI_Waitany".into(),
            file: String::new(),
            line: 0,
            index_choice: true,
        };
        assert_eq!(
            forced_miss(&miss(2, None, Some(waitany))),
            "rank 1's MPI_Waitany (its wildcard event 3) was forced to return request index 2 first but never returned"
        );
    }

    #[test]
    fn an_event_no_run_recorded_is_told_by_number() {
        assert_eq!(
            forced_miss(&miss(0, None, None)),
            "rank 1's wildcard event 3 was forced to take rank 0's message but never completed"
        );
    }

    #[test]
    fn a_gap_in_a_trace_is_told_with_its_interleaving_and_rank() {
        let cut = Warning::TraceGap {
            interleaving: 2,
            gap: TraceGap::CutShort {
                rank: 1,
                counted: 3,
                kept: 2,
            },
        };
        assert_eq!(
            warning(&cut),
            "interleaving 2: rank 1's trace is cut short: its header counts 3 records, the file holds 2; what the rank did after record 2 is not analysed"
        );
        let lost = TraceGap::Lost {
            rank: 0,
            records: 1,
        };
        assert!(trace_gap(&lost).starts_with("rank 0's runtime could not write 1 record ("));
        let partial = Warning::Partial(Partial::TraceGap {
            interleaving: 1,
            gap: TraceGap::Unreadable {
                rank: 3,
                error: "bad magic".into(),
            },
        });
        assert_eq!(
            warning(&partial),
            "coverage is partial: interleaving 1: rank 3's trace is unreadable: bad magic"
        );
    }

    #[test]
    fn a_tool_error_lists_its_lines_then_its_help() {
        let stops = [ToolStop {
            rank: 1,
            site: None,
            said: Some("MPI_Comm_spawn is not supported".into()),
        }];
        assert_eq!(
            tool_stop_error(&stops).render(),
            "error: the mbhybrid runtime stopped the program; nothing after this point was verified\n  \
             rank 1: MPI_Comm_spawn is not supported\n  \
             = help: a limit (or, when the message says so, a bug) of mbhybrid, not of the program: \
             avoid the call for the verification, or report it (docs/limits.md)\n"
        );
    }
}
