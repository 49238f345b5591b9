//! The exhaustive reference search: slow, simple, obviously complete.
//!
//! It is what the clock-guided [`Explorer`](crate::Explorer) is checked
//! against (the differential test, `verify --search exhaustive`),
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
//! A candidate of `f` (on rank `r`) is every rank with a message, in that
//! run, on `f`'s communicator with a tag `f` accepts, that was taken by a
//! receive of `r` posted after `f` or never taken at all
//! (its destination is not checked), and was not sent after `f` completed
//! in the run's own happens-before order (program order and delivered
//! messages, read from the `Matched` records; `HappensAfter` says why
//! that is sound), and every sender the runtime listed for `f`. For a
//! choice of which request a `Waitany` (or `Testany`, `Waitsome`,
//! `Testsome`) returns, every index of its array is a candidate.
//! Over-approximation only costs infeasible runs.
//!
//! # Why it is complete
//!
//! Take a reachable execution `T` and order its wildcard events so that
//! each comes after everything it causally depends on. Let `G_k` be its
//! first `k` events with `T`'s senders: a forcing (per-rank prefixes). By
//! induction some run realizes `G_k`. Its next event `e` (on rank `r`)
//! depends only on `G_k`, so that run reaches `e` with `T`'s causal past,
//! and the message `T` matches `e` with was sent in it too, with the causal
//! past it has in `T` (which `e` is not in); no receive of `r` before `e`
//! took it (they are matched as in `T`), so it was taken later or never:
//! its sender is a candidate. Either the run matched `e`
//! as `T` does (it realizes `G_{k+1}`) or `G_{k+1}` is queued and run, and
//! forcing only what `T` does is feasible. At the end a run realizes all
//! of `T`'s matches, so it is `T` up to what the matches decide.
//!
//! A rank killed early (another rank crashed and the launcher stopped the
//! job) does not reach its later events; both searches share that limit.
//!
//! Memory and time grow with the product of the ranks' event counts: this
//! is for programs of a few wildcard events, as the generator makes.

use crate::explore::{unmatched_forces, NextRun, Reach, UnmatchedForce};
use mbh_trace::config::{ForcedMatch, Guidance};
use mbh_trace::envelope::{Envelope, RecvPattern, SendSide};
use mbh_trace::op::OpClass;
use mbh_trace::rank_trace::{Op, RankTrace, WildcardEvent};
use mbh_trace::record::MatchedSend;
use mbh_trace::OpKind;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

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

/// A forcing as a sortable list: ((rank, event), forced source).
type ForcingKey = Vec<((i32, u32), i32)>;

/// The exhaustive search's state.
#[derive(Debug, Default)]
pub struct Exhaustive {
    /// Forcings to run, fewest forced events first: a short forcing's run
    /// realizes the most, so longer ones it covers need no run.
    to_run: BTreeSet<(usize, ForcingKey)>,
    /// Every forcing a run realized.
    realized: HashSet<ForcingKey>,
    pending: Option<(u32, Option<Forcing>)>,
    runs: u32,
    infeasible: u32,
    too_big: bool,
    stopped: bool,
    max_runs: Option<u32>,
    zero_buffering: bool,
}

impl Exhaustive {
    /// A search that makes at most `max_runs` runs (`None`: no limit).
    pub fn new(max_runs: Option<u32>) -> Self {
        Exhaustive {
            max_runs,
            ..Exhaustive::default()
        }
    }

    /// Runs are made under `--buffering zero` (standard sends are
    /// synchronous), which orders more: fewer candidates.
    pub fn zero_buffering(mut self, zero: bool) -> Self {
        self.zero_buffering = zero;
        self
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
    /// events, the traces (for the candidate senders), and how far its
    /// ranks got (for [`unmatched_forces`], the rule of the guided search).
    ///
    /// # Panics
    ///
    /// When no run is pending.
    pub fn record_run(
        &mut self,
        events: &[WildcardEvent],
        traces: &[RankTrace],
        reach: &Reach,
    ) -> Recorded {
        let (_, forcing) = self
            .pending
            .take()
            .expect("Exhaustive::record_run called without a run from next_run");
        self.runs += 1;
        let forcing = forcing.unwrap_or_default();
        let unmatched = unmatched_forces(&guidance(&forcing), events, reach);
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
            .map(|e| {
                let senders = candidate_senders(e, events, traces, self.zero_buffering);
                ((e.rank, e.event), senders)
            })
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

fn key(forcing: &Forcing) -> ForcingKey {
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
pub fn candidate_senders(
    event: &WildcardEvent,
    events: &[WildcardEvent],
    traces: &[RankTrace],
    zero_buffering: bool,
) -> BTreeSet<i32> {
    let mut senders: BTreeSet<i32> = event.potential.iter().copied().collect();
    let Some(receiver) = traces.iter().find(|t| t.rank == event.rank) else {
        return senders;
    };
    let Some(posted) = receiver.ops.get(event.op_index as usize) else {
        return senders;
    };
    if event.is_index_choice() {
        // Which request a `Waitany` returns: any index of its array (the
        // record's `count`); one whose request cannot complete first makes
        // an infeasible run.
        senders.extend(0..posted.count.max(0));
        return senders;
    }
    // The program's pattern, any source (sources are checked nowhere: an
    // over-approximation): the reference asks which senders the program's
    // receive could take in some run, whatever this run forced it to.
    let pattern = RecvPattern {
        source: None,
        ..RecvPattern::as_written(posted)
    };
    let after = HappensAfter::of(event, traces, zero_buffering);
    let mut taken: HashSet<(i32, u64)> = HashSet::new();
    for trace in traces {
        for matched in trace.ops.iter().filter_map(Op::matched_send) {
            let send = matched.send;
            taken.insert((send.sender, send.record));
            // A message taken by a receive posted before the event was
            // taken the same way in every run agreeing on the event's past
            // (its earlier wildcards are forced; MPI gives a message to the
            // earliest posted receive that accepts it).
            if trace.rank != event.rank || issued_at(trace, &matched, events) <= event.op_index {
                continue;
            }
            // The receive (or the completion of an `Irecv`) that took it.
            let fits = match trace.ops.get(matched.receiver as usize) {
                Some(r) if r.kind.class() == OpClass::Receive => {
                    r.matched.is_some_and(|(source, tag)| {
                        pattern.accepts(&Envelope {
                            comm: r.comm,
                            source,
                            tag,
                        })
                    })
                }
                // A completion's record carries no communicator: keep it.
                _ => true,
            };
            if fits && !after.sent_after(send.sender, send.record) {
                senders.insert(send.sender);
            }
        }
    }
    for trace in traces {
        // Any destination: an over-approximation (destinations are ranks
        // of the send's communicator, not world ranks).
        let unreceived = trace.ops.iter().any(|op| {
            SendSide::of(op).is_some_and(|side| pattern.accepts(&side.envelope(trace.rank)))
                && !taken.contains(&(trace.rank, op.index))
                && !after.sent_after(trace.rank, op.index)
        });
        if unreceived {
            senders.insert(trace.rank);
        }
    }
    senders
}

/// The record that posted the receive a `Matched` record completed: the
/// wildcard event's record, the request's origin for a `Wait`, else the
/// completing record itself (never earlier than the posting).
fn issued_at(trace: &RankTrace, matched: &MatchedSend, events: &[WildcardEvent]) -> u64 {
    if let Some(event) = matched.event {
        if let Some(e) = events
            .iter()
            .find(|e| e.rank == trace.rank && e.event == event)
        {
            return e.op_index;
        }
    }
    match trace.ops.get(matched.receiver as usize) {
        Some(wait) if wait.kind == OpKind::Wait => {
            wait.request_origin().unwrap_or(matched.receiver)
        }
        _ => matched.receiver,
    }
}

/// Whether a send of `kind` returns only after its message was received:
/// `MPI_Ssend`, and under `--buffering zero` every blocking standard send
/// (the runtime makes them synchronous). Nonblocking ones return at once
/// (their `Wait` is not followed here: fewer edges only cost candidates).
fn blocks_until_received(kind: OpKind, zero_buffering: bool) -> bool {
    match kind {
        OpKind::Ssend => true,
        OpKind::Send | OpKind::Sendrecv | OpKind::SendrecvReplace => zero_buffering,
        _ => false,
    }
}

/// What happened after a wildcard event completed, in the run's own
/// happens-before order: program order, and each message from its send to
/// the record that completed its receive. A message sent after the event
/// completed cannot have been taken by it in *any* run that agrees with
/// this one on the event's causal past (the reference's induction only
/// asks for candidates there): its send would still depend on the event.
struct HappensAfter {
    /// Per rank, the first record index that happens after the event
    /// (`u64::MAX`: none).
    first: HashMap<i32, u64>,
}

impl HappensAfter {
    fn of(event: &WildcardEvent, traces: &[RankTrace], zero_buffering: bool) -> HappensAfter {
        // Where each message went: (sender, send record) -> (receiver,
        // completing record); and for a blocking synchronous send, the
        // way back: the send returns only after its receive (seed 000
        // §5.2.1), so (receiver, completing record) -> (sender, send).
        let mut delivered: HashMap<(i32, u64), Vec<(i32, u64)>> = HashMap::new();
        let mut returned: HashMap<(i32, u64), Vec<(i32, u64)>> = HashMap::new();
        let mut completion = None;
        for trace in traces {
            for matched in trace.ops.iter().filter_map(Op::matched_send) {
                let (sender, record) = (matched.send.sender, matched.send.record);
                delivered
                    .entry((sender, record))
                    .or_default()
                    .push((trace.rank, matched.receiver));
                let send = traces
                    .iter()
                    .find(|t| t.rank == sender)
                    .and_then(|t| t.ops.get(record as usize));
                if send.is_some_and(|send| blocks_until_received(send.kind, zero_buffering)) {
                    returned
                        .entry((trace.rank, matched.receiver))
                        .or_default()
                        .push((sender, record));
                }
                if trace.rank == event.rank && matched.event == Some(event.event) {
                    completion = Some(matched.receiver);
                }
            }
        }
        let mut first: HashMap<i32, u64> = HashMap::new();
        // Without its completion record the event's end is unknown:
        // nothing is known to come after it.
        let Some(completion) = completion else {
            return HappensAfter { first };
        };
        // Records after a receive's completion; a `Sendrecv`'s own send
        // was issued with its receive, so it is not after it.
        first.insert(event.rank, completion + 1);
        let mut work = vec![event.rank];
        while let Some(rank) = work.pop() {
            let from = first[&rank];
            let Some(trace) = traces.iter().find(|t| t.rank == rank) else {
                continue;
            };
            for op in trace.ops.iter().skip(from as usize) {
                let key = (rank, op.index);
                let edges = delivered.get(&key).into_iter().chain(returned.get(&key));
                for &(to, at) in edges.flatten() {
                    let entry = first.entry(to).or_insert(u64::MAX);
                    if at + 1 < *entry {
                        *entry = at + 1;
                        work.push(to);
                    }
                }
            }
        }
        HappensAfter { first }
    }

    /// Whether `rank`'s record `index` happens after the event (a record
    /// reached through a message or a send's return is after at `index +
    /// 1`: what follows it).
    fn sent_after(&self, rank: i32, index: u64) -> bool {
        self.first.get(&rank).is_some_and(|&first| index >= first)
    }
}

#[cfg(test)]
mod tests;
