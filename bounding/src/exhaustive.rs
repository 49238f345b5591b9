//! The exhaustive reference search: slow, simple, obviously complete.
//!
//! It is what the clock-guided [`Explorer`](crate::Explorer) is checked
//! against (issue 11's differential test, `verify --search exhaustive`),
//! so it trusts nothing the clocks compute: not the potential senders, not
//! the final clocks, not the oracle's order. It forces matches through the
//! same decision files ([`Guidance`]) as the explorer, with
//! `last_guided_clock = u64::MAX` so that every listed match is forced and
//! every other wildcard event is free.
//!
//! # The search
//!
//! A *forcing* maps wildcard events `(rank, event)` to senders; for each
//! rank its events form a prefix of that rank's events (event numbers are
//! issue order). A run *realizes* a forcing when every forced match
//! happened and the forced events' matches agree. A run made under forcing
//! `F` realizes `F` and `F` extended by any per-rank prefix of its free
//! events with the senders they took: all of those are remembered.
//!
//! For every forcing `G` a run realizes, and every rank's first event `f`
//! after `G` in that run, every *candidate* sender `s` of `f` other than
//! the one `f` took gives a forcing `G ∪ {f → s}` to run, unless some run
//! realized it by the time its turn comes (forcings with fewer forced
//! events run first: their runs realize the most). A run whose forced matches did not all happen
//! (forced to a sender that never sends, so it deadlocks or matched
//! otherwise) is *infeasible*: it realizes nothing and is not an outcome of
//! the program.
//!
//! A candidate of `f` (on rank `r`) is every rank whose message, in that
//! run, was taken by a receive of `r` completed at or after `f`'s record
//! with a tag `f` accepts on `f`'s communicator, or was never taken at all
//! (any communicator, any tag: over-approximation only costs infeasible
//! runs), and every sender the runtime listed for `f`.
//!
//! # Why it is complete
//!
//! Take a reachable execution `T` and order its wildcard events so that
//! each comes after everything it causally depends on. Let `G_k` be its
//! first `k` events with `T`'s senders: a forcing (per-rank prefixes). By
//! induction some run realizes `G_k`. Its next event `e` (on rank `r`)
//! depends only on `G_k`, so that run reaches `e` with `T`'s causal past,
//! and the message `T` matches `e` with was sent in it too; no receive of
//! `r` before `e` took it (they are matched as in `T`), so it was taken
//! later or never: its sender is a candidate. Either the run matched `e`
//! as `T` does (it realizes `G_{k+1}`) or `G_{k+1}` is queued and run, and
//! forcing only what `T` does is feasible. At the end a run realizes all
//! of `T`'s matches, so it is `T` up to what the matches decide.
//!
//! A rank killed early (another rank crashed and the launcher stopped the
//! job) does not reach its later events; both searches share that limit.
//!
//! Memory and time grow with the product of the ranks' event counts: this
//! is for programs of a few wildcard events, as the generator makes.

use crate::explore::{unmatched_forces, NextRun, RunEnd, UnmatchedForce};
use mbh_trace::config::{ForcedMatch, Guidance};
use mbh_trace::op::{flags, OpClass};
use mbh_trace::rank_trace::{RankTrace, WildcardEvent};
use mbh_trace::OpKind;
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// A forcing: `(rank, event)` → sender, in key order.
type Forcing = BTreeMap<(i32, u32), i32>;

/// The most forcings one run may realize before the search gives up (the
/// program is too big for the reference).
pub const MAX_REALIZED_PER_RUN: usize = 1 << 16;

/// What recording a run of the exhaustive search concluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The forced matches that did not happen. When not empty, the run is
    /// infeasible: not an execution of the program, and not expanded.
    pub unmatched: Vec<UnmatchedForce>,
    /// The run realized more forcings than [`MAX_REALIZED_PER_RUN`]; it
    /// was not expanded, and the search is not complete.
    pub too_big: bool,
}

impl Recorded {
    /// Whether the run is an execution of the program.
    pub fn feasible(&self) -> bool {
        self.unmatched.is_empty()
    }
}

/// The exhaustive search's state.
#[derive(Debug, Default)]
pub struct Exhaustive {
    /// Forcings to run, fewest forced events first: a short forcing's run
    /// realizes the most, so longer ones it covers need no run.
    to_run: BTreeSet<(usize, Vec<((i32, u32), i32)>)>,
    /// Every forcing a run realized.
    realized: HashSet<Vec<((i32, u32), i32)>>,
    pending: Option<(u32, Option<Forcing>)>,
    runs: u32,
    infeasible: u32,
    too_big: bool,
    stopped: bool,
    max_runs: Option<u32>,
}

impl Exhaustive {
    /// A search that makes at most `max_runs` runs (`None`: no limit).
    pub fn new(max_runs: Option<u32>) -> Self {
        Exhaustive {
            max_runs,
            ..Exhaustive::default()
        }
    }

    /// The next run, or `None` when every forcing was run (or a limit hit).
    /// The first run is free.
    pub fn next_run(&mut self) -> Option<NextRun> {
        if let Some((number, forcing)) = &self.pending {
            return Some(NextRun {
                number: *number,
                guidance: forcing.as_ref().map(guidance),
            });
        }
        if self.stopped || self.max_runs.is_some_and(|max| self.runs >= max) {
            return None;
        }
        let forcing = if self.runs == 0 {
            None
        } else {
            loop {
                let (_, next) = self.to_run.pop_first()?;
                if !self.realized.contains(&next) {
                    break Some(next.into_iter().collect());
                }
            }
        };
        self.pending = Some((self.runs + 1, forcing));
        self.next_run()
    }

    /// Records the run [`Exhaustive::next_run`] gave: every rank's wildcard
    /// events, the traces (for the candidate senders), and how it ended.
    ///
    /// # Panics
    ///
    /// When no run is pending.
    pub fn record_run(
        &mut self,
        events: &[WildcardEvent],
        traces: &[RankTrace],
        end: RunEnd,
    ) -> Recorded {
        let (_, forcing) = self
            .pending
            .take()
            .expect("Exhaustive::record_run called without a run from next_run");
        self.runs += 1;
        let forcing = forcing.unwrap_or_default();
        let unmatched = unmatched_forces(&guidance(&forcing), events, end);
        if !unmatched.is_empty() {
            self.infeasible += 1;
            return Recorded {
                unmatched,
                too_big: false,
            };
        }
        let too_big = !self.expand(&forcing, events, traces);
        self.too_big |= too_big;
        Recorded { unmatched, too_big }
    }

    /// Stops the search: no run is handed out any more.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// Whether every forcing was run, and none was too big.
    pub fn is_complete(&self) -> bool {
        self.pending.is_none() && self.to_run.is_empty() && !self.too_big && self.runs > 0
    }

    /// Runs recorded, and of those the infeasible ones.
    pub fn runs(&self) -> (u32, u32) {
        (self.runs, self.infeasible)
    }

    /// Remembers what a feasible run under `forcing` realized and queues
    /// every one-event alternative of it. False when it realized too many.
    fn expand(
        &mut self,
        forcing: &Forcing,
        events: &[WildcardEvent],
        traces: &[RankTrace],
    ) -> bool {
        // Each rank's free events, in issue order.
        let mut free: BTreeMap<i32, Vec<&WildcardEvent>> = BTreeMap::new();
        for e in events {
            if !forcing.contains_key(&(e.rank, e.event)) {
                free.entry(e.rank).or_default().push(e);
            }
        }
        for list in free.values_mut() {
            list.sort_by_key(|e| e.event);
            // A match the trace does not know cannot be forced, nor can
            // what follows it on that rank.
            if let Some(unknown) = list.iter().position(|e| e.matched < 0) {
                list.truncate(unknown);
            }
        }
        let ranks: Vec<&Vec<&WildcardEvent>> = free.values().collect();
        let realized: usize = ranks.iter().map(|l| l.len() + 1).product();
        if realized > MAX_REALIZED_PER_RUN {
            return false;
        }
        let candidates: BTreeMap<(i32, u32), BTreeSet<i32>> = events
            .iter()
            .map(|e| ((e.rank, e.event), candidate_senders(e, traces)))
            .collect();
        // Every per-rank prefix length combination, as a mixed-radix count.
        let mut lengths = vec![0usize; ranks.len()];
        loop {
            let mut extended = forcing.clone();
            for (list, &len) in ranks.iter().zip(&lengths) {
                for e in &list[..len] {
                    extended.insert((e.rank, e.event), e.matched);
                }
            }
            self.realized.insert(key(&extended));
            for (list, &len) in ranks.iter().zip(&lengths) {
                let Some(next) = list.get(len) else { continue };
                for &sender in &candidates[&(next.rank, next.event)] {
                    if sender == next.matched {
                        continue;
                    }
                    let mut child = extended.clone();
                    child.insert((next.rank, next.event), sender);
                    let child = key(&child);
                    if !self.realized.contains(&child) {
                        self.to_run.insert((child.len(), child));
                    }
                }
            }
            if !advance(&mut lengths, &ranks) {
                return true;
            }
        }
    }
}

/// The next combination of prefix lengths; false after the last.
fn advance(lengths: &mut [usize], ranks: &[&Vec<&WildcardEvent>]) -> bool {
    for (len, list) in lengths.iter_mut().zip(ranks) {
        if *len < list.len() {
            *len += 1;
            return true;
        }
        *len = 0;
    }
    false
}

fn key(forcing: &Forcing) -> Vec<((i32, u32), i32)> {
    forcing.iter().map(|(&k, &v)| (k, v)).collect()
}

fn guidance(forcing: &Forcing) -> Guidance {
    Guidance {
        last_guided_clock: u64::MAX,
        forced: forcing
            .iter()
            .map(|(&(rank, event), &source)| ForcedMatch {
                rank,
                event,
                source,
            })
            .collect(),
    }
}

/// Every rank whose message `event` could conceivably have taken in this
/// run (see the module docs): an over-approximation from what the traces
/// show, trusting no clock.
pub fn candidate_senders(event: &WildcardEvent, traces: &[RankTrace]) -> BTreeSet<i32> {
    let mut senders: BTreeSet<i32> = event.potential.iter().copied().collect();
    let Some(receiver) = traces.iter().find(|t| t.rank == event.rank) else {
        return senders;
    };
    let Some(posted) = receiver.ops.get(event.op_index as usize) else {
        return senders;
    };
    let accepts_tag = |tag: i32| posted.has(flags::ANY_TAG) || tag == posted.tag;
    let mut taken: HashSet<(i32, u64)> = HashSet::new();
    for trace in traces {
        for op in trace.ops.iter().filter(|op| op.kind == OpKind::Matched) {
            taken.insert((op.peer, op.aux));
            if trace.rank != event.rank || op.request < event.op_index {
                continue;
            }
            // The receive (or the completion of an `Irecv`) that took it.
            let by = trace.ops.get(op.request as usize);
            let fits = match by {
                Some(r) if r.kind.class() == OpClass::Receive => {
                    r.comm == posted.comm && r.matched.is_some_and(|(_, tag)| accepts_tag(tag))
                }
                // A completion's record carries no communicator: keep it.
                _ => true,
            };
            if fits {
                senders.insert(op.peer);
            }
        }
    }
    for trace in traces {
        let unreceived = trace.ops.iter().any(|op| {
            (op.kind.class() == OpClass::Send || op.kind.is_sendrecv())
                && op.comm == posted.comm
                && !op.has(flags::PROC_NULL)
                && !taken.contains(&(trace.rank, op.index))
        });
        if unreceived {
            senders.insert(trace.rank);
        }
    }
    senders
}

#[cfg(test)]
mod tests;
