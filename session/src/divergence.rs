//! Which forced matches a run did not make, with the call each was made
//! at, for the search's error and `replay`'s (the words are
//! `mbh-diagnostics`' `outcome`).
//!
//! A guided run forces a receive to take one sender's message, or a
//! `Waitany`-style call to return one request first; when the run did
//! otherwise, the search's promise was broken (seed 000 §5.3.2.4 assumes a
//! forced match can always be replayed), and `verify` stops with an error
//! that names the call and its line, what was forced in the call's own
//! terms (a sender, or an index into the call's array), and where the
//! run's files are. `replay` tells its own divergences the same way.

use crate::interleaving::Interleaving;
use crate::session::Session;
use mbh_trace::config::{ForcedMatch, RuntimeConfig};
use mbh_trace::forced::UnmatchedForce;
use mbh_trace::layout::InterleavingDir;
use mbh_trace::outcome::{ForcedCall, ForcedMiss};
use mbh_trace::rank_trace::WildcardEvent;

/// The call of `event`, at the site the build recorded for it.
pub fn forced_call(session: &Session, event: &WildcardEvent) -> ForcedCall {
    let site = session.sites.as_ref().and_then(|s| s.get(event.site));
    ForcedCall {
        call: site
            .map_or(event.kind.mpi_name(), |s| s.call.as_str())
            .to_owned(),
        file: site.map_or("", |s| s.file.as_str()).to_owned(),
        line: site.map_or(0, |s| s.line),
        index_choice: event.is_index_choice(),
    }
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
) -> Vec<ForcedMiss> {
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
            ForcedMiss {
                forced: u.forced,
                observed: u.observed,
                call: event.map(|e| forced_call(session, e)),
            }
        })
        .collect()
}

/// The event of `events` that `forced` names.
fn event_of<'a>(events: &'a [WildcardEvent], forced: &ForcedMatch) -> Option<&'a WildcardEvent> {
    events
        .iter()
        .find(|e| e.rank == forced.rank && e.event == forced.event)
}
