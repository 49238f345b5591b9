//! How a forced match that did not happen is told to the user.
//!
//! A guided run forces a receive to take one sender's message, or a
//! `Waitany`-style call to return one request first; when the run did
//! otherwise, the search's promise was broken (seed 000 §5.3.2.4 assumes a
//! forced match can always be replayed), and `verify` stops with an error.
//! The message names the call and its line and says what was forced in
//! the call's own terms (a sender, or an index into the call's array); the
//! search's adds where the run's files are, so a person can report it in
//! one read. `replay` tells its own divergences the same way.

use crate::interleaving::Interleaving;
use crate::session::Session;
use mbh_trace::config::{ForcedMatch, RuntimeConfig};
use mbh_trace::forced::UnmatchedForce;
use mbh_trace::layout::InterleavingDir;
use mbh_trace::rank_trace::WildcardEvent;
use std::path::Path;

/// What the search knows of the forced call, from the run that found it.
#[derive(Debug, Clone, Copy)]
pub struct ForcedCall<'a> {
    /// The MPI call, as the program wrote it.
    pub call: &'a str,
    /// Where it is (empty when the build recorded no site).
    pub file: &'a str,
    /// Its line (0 when unknown).
    pub line: u32,
    /// A choice of which request completes, not of a sender.
    pub index_choice: bool,
}

impl<'a> ForcedCall<'a> {
    /// The call of `event`, at the site the build recorded for it.
    pub fn of(session: &'a Session, event: &'a WildcardEvent) -> ForcedCall<'a> {
        let site = session.sites.as_ref().and_then(|s| s.get(event.site));
        ForcedCall {
            call: site.map_or(event.kind.mpi_name(), |s| s.call.as_str()),
            file: site.map_or("", |s| s.file.as_str()),
            line: site.map_or(0, |s| s.line),
            index_choice: event.is_index_choice(),
        }
    }
}

/// What went otherwise: "rank 1's MPI_Recv at ring.c:42 (its wildcard
/// event 3) was forced to take rank 0's message but took rank 2's";
/// `call` is `None` when no run recorded the event.
pub fn describe(unmatched: &UnmatchedForce, call: Option<ForcedCall<'_>>) -> String {
    let rank = unmatched.forced.rank;
    let event = unmatched.forced.event;
    let forced = unmatched.forced.source;
    let subject = match call {
        Some(c) if c.line > 0 => format!(
            "rank {rank}'s {} at {}:{} (its wildcard event {event})",
            c.call, c.file, c.line
        ),
        Some(c) => format!("rank {rank}'s {} (its wildcard event {event})", c.call),
        None => format!("rank {rank}'s wildcard event {event}"),
    };
    let (wanted, got) = if call.is_some_and(|c| c.index_choice) {
        (
            format!("return request index {forced} first"),
            match unmatched.observed {
                Some(other) => format!("returned index {other}"),
                None => "never returned".to_string(),
            },
        )
    } else {
        (
            format!("take rank {forced}'s message"),
            match unmatched.observed {
                Some(other) => format!("took rank {other}'s"),
                None => "never completed".to_string(),
            },
        )
    };
    format!("{subject} was forced to {wanted} but {got}")
}

/// The search's error for a forced match that did not happen in
/// interleaving `n`, whose files are in `run_dir`.
pub fn search_error(
    unmatched: &UnmatchedForce,
    call: Option<ForcedCall<'_>>,
    n: u32,
    run_dir: &Path,
) -> String {
    format!(
        "interleaving {n}: {}; the clocks claimed a match MPI could not make (a bug of mbhybrid: please report it with the run directory {})",
        describe(unmatched, call),
        run_dir.display()
    )
}

/// The search's note for a forced match that never completed in
/// interleaving `n`: not run, so the search is partial. `stalled` when
/// the run hung on it (the hang is not reported: the program's wildcard
/// receive would have taken another message).
pub fn search_limit(
    unmatched: &UnmatchedForce,
    call: Option<ForcedCall<'_>>,
    n: u32,
    stalled: bool,
) -> String {
    let hang = if stalled {
        "; the run hung waiting for it, which is not reported: without the forcing the receive takes another message"
    } else {
        ""
    };
    format!(
        "interleaving {n}: {}: the sender did not get to send it under this MPI library, though the clocks found the match possible (MPI lets a rank leave a collective before the others enter it where its result does not depend on them; the MPI library kept it inside, where mbhybrid could not let it out), so that outcome was not checked{hang}",
        describe(unmatched, call)
    )
}

/// The forced matches of `config` the replay did not make (by the search's
/// own rule, [`Interleaving::unmatched`]: a rank a crash cut short is not
/// held to its later forcings), each told with its call: as the replay
/// made it, or else as the recorded run did (a receive forced to a sender
/// that never sent never completes, and only the recording, when its
/// traces were kept, knows which call it was).
pub fn replay_divergences(
    session: &Session,
    config: &RuntimeConfig,
    replay: &Interleaving,
    recorded: &InterleavingDir,
) -> Vec<String> {
    let replayed = &replay.events;
    let unmatched: Vec<UnmatchedForce> = config
        .guidance
        .as_ref()
        .map(|g| replay.unmatched(g))
        .unwrap_or_default();
    let recorded_events: Vec<WildcardEvent> = if unmatched.is_empty() {
        Vec::new()
    } else {
        let (traces, _) = mbh_verdict::read_traces(recorded, session.np);
        traces
            .iter()
            .flatten()
            .flat_map(|t| t.wildcard_events())
            .collect()
    };
    unmatched
        .iter()
        .map(|u| {
            let event =
                event_of(replayed, &u.forced).or_else(|| event_of(&recorded_events, &u.forced));
            describe(u, event.map(|e| ForcedCall::of(session, e)))
        })
        .collect()
}

/// The event of `events` that `forced` names.
fn event_of<'a>(events: &'a [WildcardEvent], forced: &ForcedMatch) -> Option<&'a WildcardEvent> {
    events
        .iter()
        .find(|e| e.rank == forced.rank && e.event == forced.event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mbh_trace::config::ForcedMatch;

    fn unmatched(source: i32, observed: Option<i32>) -> UnmatchedForce {
        UnmatchedForce {
            forced: ForcedMatch {
                rank: 1,
                event: 3,
                source,
            },
            observed,
        }
    }

    #[test]
    fn a_receive_is_told_in_senders() {
        let recv = ForcedCall {
            call: "MPI_Recv",
            file: "ring.c",
            line: 42,
            index_choice: false,
        };
        let text = search_error(&unmatched(0, Some(2)), Some(recv), 7, Path::new("/runs/7"));
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
            call: "MPI_Waitany",
            file: "",
            line: 0,
            index_choice: true,
        };
        let text = describe(&unmatched(2, None), Some(waitany));
        assert_eq!(
            text,
            "rank 1's MPI_Waitany (its wildcard event 3) was forced to return request index 2 first but never returned"
        );
    }

    #[test]
    fn an_event_no_run_recorded_is_told_by_number() {
        let text = describe(&unmatched(0, None), None);
        assert_eq!(
            text,
            "rank 1's wildcard event 3 was forced to take rank 0's message but never completed"
        );
    }
}
