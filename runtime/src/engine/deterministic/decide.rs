//! Deterministic mode's decisions (seed 002 §3.3, §3.4, §4.2.3): what a
//! wildcard receive, a nonblocking probe or a test at its DTP may do now,
//! from what the messages of `deterministic.rs` told about the other
//! ranks, and when the deadlock breaker acts. The rules themselves are
//! [`crate::logical`].

use crate::consts::{any_source, any_tag};
use crate::engine::Rt;
use crate::logical::{Decision, Lanes, Peek};
use mpi_sys::MPI_Comm;
use std::os::raw::c_int;
use std::time::Duration;

/// What [`Rt::det_quiet`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::engine) enum Quiet {
    /// Nothing can arrive before this rank acts.
    Yes,
    /// The ranks it could come from are all stalled
    /// ([`Rt::det_stalled`]), some not provably for good: the breaker acts.
    Stalled,
    /// Something may still arrive.
    Unknown,
}

/// How recent the last answer of a stalled rank must be: a rank answered
/// again every [`super::REASK`] while a decision waits for it.
const FRESH: Duration = Duration::from_millis(50);

impl Rt {
    /// Reads what arrived, then hands communicator `at`'s lanes, this
    /// rank's clock (its own lane bounded by it) and who is released
    /// ([`Lanes::released`]) to `look`. With `forced`, this rank's own lane
    /// is released too (see [`Rt::det_choose`]).
    fn det_look<T>(
        &mut self,
        at: usize,
        forced: bool,
        look: impl FnOnce(&Lanes, u64, &dyn Fn(usize) -> bool) -> T,
    ) -> Option<T> {
        self.det_pull();
        let counts = self.collectives_started();
        let collectives = |id: u64| counts.iter().find(|(i, _)| *i == id).map(|(_, n)| *n);
        let det = self.det.as_mut()?;
        let clock = det.clock;
        let c = &mut det.comms[at];
        c.lanes.own_clock(c.me, clock);
        let (sent_to, world, lanes, me) = (&det.sent_to, &c.world, &c.lanes, c.me);
        let released = |q: usize| {
            if forced && q == me {
                return true;
            }
            let sent = world
                .get(q)
                .and_then(|&w| sent_to.get(w as usize))
                .copied()
                .unwrap_or(0);
            lanes.released(q, sent, collectives)
        };
        Some(look(lanes, clock, &released))
    }

    /// Whether each of `blockers` of communicator `at` has answered, for
    /// the breaker's patience, that it is blocked in MPI at one and the
    /// same clock: stalled, as the ranks of a deadlock are (a rank that is
    /// only slow makes calls, and its clock moves).
    fn det_stalled(&self, at: usize, blockers: &[usize]) -> bool {
        self.det.as_ref().is_some_and(|d| {
            let still = &d.comms[at].still;
            blockers.iter().all(|&q| {
                still
                    .get(q)
                    .copied()
                    .flatten()
                    .is_some_and(|s| s.since.elapsed() >= d.patience && s.last.elapsed() < FRESH)
            })
        })
    }

    /// Waits (one pass) for the clocks of `blockers` of communicator `at`
    /// to reach `need`; `true` when they are all stalled
    /// ([`Rt::det_stalled`]): the breaker (seed 002 §4.2.3) acts, counted.
    fn det_wait_for(&mut self, at: usize, blockers: &[usize], need: u64) -> bool {
        let give_up = self.det_stalled(at, blockers);
        if give_up {
            self.det_relaxed();
            return true;
        }
        self.det_ask(at, blockers, need);
        false
    }

    /// The sender (rank in `comm`) a wildcard receive with `tag` takes, by
    /// logical time; `None` when it cannot be decided without waiting and
    /// `block` is false.
    ///
    /// `forced`: the decision is made at a point of the program where it
    /// must be, whatever comes later: a blocking receive or probe, a wait
    /// (or a test at its DTP) on the deferred receive, or a later receive
    /// on its communicator that MPI must see posted after it. A message
    /// this rank sends itself after that point is then no candidate (for a
    /// blocking receive MPI could not match one either), so its own lane
    /// does not hold the decision up: its clock does not move while it
    /// waits. Elsewhere (at a nonblocking receive's posting, or while the
    /// rank polls) the own lane counts with the rank's clock, so that a
    /// decision made there is the one a forced decision would make.
    pub(in crate::engine) fn det_choose(
        &mut self,
        comm: MPI_Comm,
        tag: c_int,
        block: bool,
        forced: bool,
    ) -> Option<c_int> {
        let at = self.det.as_ref()?.find(comm)?;
        let tag = (tag != any_tag()).then_some(tag);
        loop {
            match self.det_look(at, forced, |lanes, _, released| lanes.decide(tag, released))? {
                Decision::Take { source, .. } => {
                    if let Some(det) = self.det.as_mut() {
                        det.stats.decided += 1;
                    }
                    return Some(source as c_int);
                }
                Decision::Wait {
                    source,
                    stamp,
                    blockers,
                } => {
                    if block && self.det_wait_for(at, &blockers, stamp) {
                        return Some(source as c_int);
                    }
                }
                Decision::Nothing => {}
            }
            if !block {
                return None;
            }
            // SAFETY: MPI is initialised (a wildcard receive is being made).
            unsafe { self.det_wait_pass() };
        }
    }

    /// What a nonblocking probe of `source` (rank in `comm`, or
    /// `MPI_ANY_SOURCE`) with `tag` finds now: the sender whose message
    /// the probe reports (it has been announced; the caller waits for it
    /// to arrive), or `None` (seed 002 §3.3; [`Peek`]). Waits for the
    /// clocks of senders that could still announce an earlier message.
    pub(in crate::engine) fn det_peek(
        &mut self,
        comm: MPI_Comm,
        source: c_int,
        tag: c_int,
    ) -> Option<c_int> {
        let at = self.det.as_ref()?.find(comm)?;
        let tag = (tag != any_tag()).then_some(tag);
        let only = (source != any_source()).then_some(source.max(0) as usize);
        loop {
            let (peek, clock) = self.det_look(at, false, |lanes, clock, released| {
                (lanes.peek(tag, only, clock, released), clock)
            })?;
            match peek {
                Peek::Found(q) => return Some(q as c_int),
                Peek::Nothing => return None,
                Peek::Wait(blockers) => {
                    if self.det_wait_for(at, &blockers, clock) {
                        return None;
                    }
                }
            }
            // SAFETY: MPI is initialised (a probe is being made).
            unsafe { self.det_wait_pass() };
        }
    }

    /// Whether a receive on `comm` from `only` (a rank in it; any when
    /// `None`, with `tag`) can get nothing before this rank acts: each
    /// rank it could come from is quiet ([`Lanes::quiet`]: finalized or
    /// waiting for this rank, every message it sent here received), and
    /// for a wildcard nothing it matches is pending. A receive due at its
    /// DTP is then postponed to the next (seed 002 §4.2.3: "we postpone
    /// this waiting to the next DTP"), the same on every run, since that
    /// state lasts until this rank acts. Asks the others to answer when
    /// they are blocked.
    pub(in crate::engine) fn det_quiet(
        &mut self,
        comm: MPI_Comm,
        only: Option<c_int>,
        tag: c_int,
    ) -> Quiet {
        self.det_pull();
        let counts = self.collectives_started();
        let collectives = |id: u64| counts.iter().find(|(i, _)| *i == id).map(|(_, n)| *n);
        let Some(det) = self.det.as_ref() else {
            return Quiet::Unknown;
        };
        let Some(at) = det.find(comm) else {
            return Quiet::Unknown;
        };
        let c = &det.comms[at];
        if only.is_none() && c.lanes.any_pending((tag != any_tag()).then_some(tag)) {
            return Quiet::Unknown;
        }
        let mut unknown = Vec::new();
        for q in 0..c.world.len() {
            if q == c.me || only.is_some_and(|o| o as usize != q) {
                continue;
            }
            let world = c.world[q] as usize;
            let sent = det.sent_to.get(world).copied().unwrap_or(0);
            let received = det.received_from.get(world).copied().unwrap_or(0);
            if !c.lanes.quiet(q, sent, received, collectives) {
                unknown.push(q);
            }
        }
        if unknown.is_empty() {
            return Quiet::Yes;
        }
        let stalled = self.det_stalled(at, &unknown);
        // Answered when blocked (no clock reaches it).
        self.det_ask(at, &unknown, u64::MAX);
        if stalled {
            Quiet::Stalled
        } else {
            Quiet::Unknown
        }
    }

    /// One pass of waiting: answers requests as a blocked rank, polls.
    pub(in crate::engine) unsafe fn det_wait_pass(&mut self) {
        if let Some(det) = self.det.as_mut() {
            det.blocked = true;
        }
        // SAFETY: the caller's contract.
        unsafe { self.service(None) };
        if let Some(det) = self.det.as_mut() {
            det.blocked = false;
        }
        crate::engine::pause();
    }
}
