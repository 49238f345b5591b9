//! The exploration engine: seed 000 Fig 5.23 as a search state that
//! outlives each run.
//!
//! # The search
//!
//! A *choice point* is a wildcard event (a receive or probe, identified
//! across runs by its rank and per-rank event number) that lists at least
//! one potential sender beyond the one it matched, or a choice among
//! requests (`Waitany`, `Testany`, ...) that lists another index. The runs
//! form a tree:
//!
//! * the root is the first run, free (`SELF_RUN`): all its choice points
//!   are open;
//! * a child of run `R` explores alternative `s` of choice point `p` of `R`
//!   (final clock `c`): it forces to what they matched in `R` the events
//!   `R`'s own guidance forced, every event of `R` that comes before `p`
//!   (see [`Key`]: final clock `< c`, and the tied events of lower ranks),
//!   and every earlier receive of a forced receive's rank that could take
//!   its message (`force_thieves`); it forces `p` to `s` and sets
//!   `last_guided_clock = c`; past that the run is free;
//! * the open choice points of that child are all its free events,
//!   whatever their key: what the forced alternative revealed, every
//!   concurrent event the flip left free, and events whose final clock the
//!   flip moved below `p` (returning another request first from a
//!   `Testany` loop completes the other receives at other clocks,
//!   `tests/programs/f3_testany_irecvs.c`).
//!
//! # Why the search is complete (and where it departs from seed 000)
//!
//! Fig 5.23 orders choice points by Lamport clock alone, as if clocks were
//! a total order, and Fig 5.20 silences every event at or below the last
//! guided clock. Equal clocks on different ranks are *concurrent*: with
//! that rule a flip of rank 0's receive at clock 0 left rank 1's receive at
//! clock 0 free but unexplorable, and one combination of the two was never
//! run (the differential test found it). Here the order is the total
//! order [`Key`] (clock, then rank, then event number), only the events
//! the guidance forces are silent (`runtime/src/llcp.rs`, `find_potential_matches`), and:
//!
//! 1. Each child forces strictly more events than its parent (its choice
//!    point joins its parent's forced set), so every path of the tree is
//!    at most as long as the program has wildcard events: the search ends.
//! 2. Take any reachable combination of outcomes `T` and a run `R` of the
//!    tree whose forced events agree with `T`; let `e` be the first free
//!    event of `R` (in key order) whose outcome differs from `T`'s. An
//!    event causally before `e` has a strictly smaller Lamport clock (a
//!    wildcard receive ticks the clock, seed 000 rule R4), so it is forced
//!    or a free event before `e`: either way it agrees with `T`. So `e`
//!    has in `T` the causal past it has in `R`, and `T`'s outcome for `e`
//!    is one of `e`'s potential outcomes (exact with vector clocks; LLCP
//!    misses some, seed 000 Fig 5.3, and the caller completes them with
//!    the matches-before oracle's, senders and indices alike). The child
//!    of `R` that forces `e` to it forces only events that agree with `T`,
//!    and one more than `R`; by induction on the forced events agreeing
//!    with `T`, a run without a differing free event is reached: `T`.
//!
//! The step "`T`'s outcome for `e` is one of `e`'s potential outcomes"
//! needs more than `e`'s causal past: the sender `T` gives `e` may send
//! only because of a concurrent event ordered after `e` (a
//! rank lives to send only when its own receive, later in key order, takes
//! another message). Then the sender first shows up in the child `C` that
//! flips that later event, where `e` is forced to `R`'s outcome; it is
//! tried as a *revealed* choice of `C` (`revealed_senders`): `C`'s
//! forcing with `e` changed and `e`'s rank's later events free. "New" is
//! judged against every sender a run of the path from the root listed for
//! `e` (`Recorded::known`), not the parent's alone: `e` may have been
//! forced several flips up, by runs that all died before the sender sent.
//! A revealed choice whose forcing turns out impossible
//! is no execution ([`Explorer::last_run_infeasible`]), not a tool
//! failure.
//!
//! Step 1 needs a child to force *every* forcing of its parent, also those
//! the parent's run died before reaching (it recorded no such event, so
//! its node keeps them aside, `Node::unrecorded`): left free, such a
//! receive takes the message a later forced receive waits for.
//!
//! The step "forces only events that agree with `T`" has one exception:
//! an earlier receive forced only because it could take a forced
//! receive's message (`force_thieves`) keeps `R`'s outcome. Leaving it
//! free lets MPI give it that message and hang the replay. Such a receive
//! is still pending when the later one matched, with a pattern that
//! overlaps, so in `R` it did not accept that message (seed 000 rule R2
//! would have completed it first, with a smaller clock): the patterns
//! differ in tag (`MPI_ANY_TAG` on one side), and its own outcomes are
//! explored where it is flipped, under the other receive's outcome there.
//! The differential soak (`scripts/soak.sh`) has not found a combination
//! this misses.
//!
//! The tree is walked depth first (a frame per run on the current path,
//! [`Dfs`]), so memory stays bounded by the depth, not the number of runs.
//! The bounds cut this argument in named places only: the mixing bound
//! (a child's open points beyond its window), loop abstraction (abstracted
//! events are never flipped), and the budgets; each is counted in
//! [`Stats::choice_points`] and makes the report say it is not complete.
//!
//! The [`Policy`] picks the next alternative; with [`Dfs`] the order is
//! Fig 5.23's (highest clock first, a run's own choice points before the
//! remaining alternatives of its parent). Each alternative of a choice
//! point is run once per parent run: the senders already matched or
//! offered are remembered, and a sender that only the forced run lists is
//! added to the parent's alternatives (found once, run once).
//!
//! A run that died (deadlock, crash) is used like any other: its events
//! are what it recorded. A run whose forced matches did not all happen
//! ([`unmatched_forces`], the rule `mbhybrid replay` uses too) is not
//! expanded: its events do not belong to the path the search asked for.
//! Which events a run forced is what the runtime recorded
//! ([`WildcardEvent::forced`]), not worked out again from the guidance.
//!
//! Under `--buffering zero` a forced match can fail for a reason the key
//! order cannot see: the forced sender sends only once a receive of
//! another rank, ordered after the choice point and so left free, took its
//! earlier message (the acknowledgement of a synchronous send carries no
//! clock). Such a run is no execution of the
//! program ([`Explorer::last_run_infeasible`]). It is tried once more with
//! the events the forced messages needed in the parent forced as they
//! matched there (`with_enablers`); those stay open choice points below
//! the retry. When the flip itself took away what a forcing of the
//! parent's own guidance needed (`flip_undid`), no execution has both and
//! the run is dropped as infeasible. Any other failed force is an error of
//! the search, reported as such.

use crate::config::ExploreConfig;
use crate::policy::{Choice, Dfs, Key, NodeId, Policy};
use mbh_trace::config::{ForcedMatch, Guidance};
use mbh_trace::envelope::RecvPattern;
pub use mbh_trace::forced::{unmatched_forces, Reach, UnmatchedForce};
use mbh_trace::rank_trace::WildcardEvent;
use mbh_trace::report::ChoicePointStats;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// How a run ended, as far as the exploration cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunEnd {
    /// Every rank finished.
    Complete,
    /// The run was stopped as deadlocked.
    Deadlocked,
    /// A rank crashed, exited early, aborted, or the run timed out.
    Crashed,
}

impl RunEnd {
    /// Whether the run did not complete.
    pub fn died(self) -> bool {
        self != RunEnd::Complete
    }
}

/// The run the caller should make next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NextRun {
    /// 1-based interleaving number.
    pub number: u32,
    /// The matches to force; `None` for the first, free run.
    pub guidance: Option<Guidance>,
}

/// Counts of the search so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Runs recorded.
    pub runs: u32,
    /// Of those, runs that deadlocked or crashed.
    pub died: u32,
    /// Choice points, counted once per (rank, event):
    ///
    /// * `found`: a choice point in some run;
    /// * `explored`: all of its alternatives were run under some parent run;
    /// * `abstracted`: skipped by loop abstraction (and never explored);
    /// * `mixing_bounded`: left to the MPI library by the mixing bound in
    ///   at least one run (it may have been explored under others).
    ///
    /// Choice points cut off by [`Explorer::stop`] count in `found` only.
    pub choice_points: ChoicePointStats,
    /// Runs not expanded because a forced match did not happen.
    pub unexpanded: u32,
}

#[derive(Debug, Default, Clone, Copy)]
struct PointRecord {
    found: bool,
    offered: bool,
    explored: bool,
    abstracted: bool,
    /// An index choice whose order decides nothing: skipped, and the
    /// search stays complete.
    orderless: bool,
    mixing_bounded: bool,
}

/// An open choice point of a node.
#[derive(Debug)]
struct OpenPoint {
    /// Senders matched or offered (each alternative is offered once).
    senders: BTreeSet<i32>,
    /// Offered alternatives not yet recorded.
    unrecorded: u32,
    /// Mixing bound of a choice made here.
    bound: Option<u32>,
    /// The point was forced in its run, and the flip that made the run
    /// revealed these senders (`revealed_senders`).
    dependent: bool,
}

/// A run with open choice points.
#[derive(Debug)]
struct Node {
    /// Its events, ascending by key: forced prefixes.
    events: Vec<Recorded>,
    /// Forcings of its guidance whose events it did not record (it died
    /// before them), with what was known of each ([`Recorded::known`]).
    unrecorded: Vec<(ForcedMatch, BTreeSet<i32>)>,
    /// Mixing budget of its children (`None`: unbounded).
    budget: Option<u32>,
    points: HashMap<Key, OpenPoint>,
    /// Alternatives not yet handed out.
    unissued: u32,
}

/// A wildcard event of a recorded run, as a child's guidance needs it.
#[derive(Debug)]
struct Recorded {
    key: Key,
    /// The sender (or index) it matched; negative when unknown.
    matched: i32,
    /// What it accepts (`None` for an index choice).
    pattern: Option<RecvPattern>,
    /// The path fixes it ([`PathFacts::fixes`]): the run's guidance (its
    /// first try's) forced it.
    forced: bool,
    /// The senders (or indices) the search knows for it on the path to
    /// this run: what it matched or could have here, and, when the
    /// guidance forced it, what was known where it was forced
    /// ([`known_senders`]). A sender outside it is *revealed*
    /// ([`revealed_senders`]).
    known: BTreeSet<i32>,
    /// Per sender, the wildcard events before its message
    /// ([`WildcardEvent::enablers`]): for the matched sender, what a flip
    /// must not leave this event forced against.
    enablers: Vec<(i32, Vec<(i32, u32)>)>,
    /// Per sender, its enablers with what each matched in the run that
    /// listed the sender (this run, or for a sender only a forced child
    /// listed, that child): what a retry forces (`with_enablers`).
    needs: Vec<(i32, Vec<ForcedMatch>)>,
}

/// What the path from the first run to a run fixed, for its node.
#[derive(Debug, Default)]
struct PathFacts {
    /// Forcings of that guidance whose events the run did not record.
    unrecorded: Vec<(ForcedMatch, BTreeSet<i32>)>,
    /// What the search knew each event could match ([`known_senders`]).
    known: HashMap<(i32, u32), BTreeSet<i32>>,
    /// Events a retry forced ([`with_enablers`]) that its first try left
    /// free: the run forced them, but they stay open choice points below
    /// it, as they were in the first try.
    reopened: HashSet<(i32, u32)>,
}

impl PathFacts {
    /// The facts of a run forced by `guidance` (its first try's, for a
    /// retry, whose own forcings beyond it are `reopened`) that recorded
    /// `events`, with `known` from its parent.
    fn of(
        guidance: &Guidance,
        events: &[WildcardEvent],
        known: HashMap<(i32, u32), BTreeSet<i32>>,
        reopened: HashSet<(i32, u32)>,
    ) -> Self {
        let recorded: HashSet<(i32, u32)> = events.iter().map(|e| (e.rank, e.event)).collect();
        let unrecorded = guidance
            .forced
            .iter()
            .filter(|f| !recorded.contains(&(f.rank, f.event)))
            .map(|f| {
                let was_known = known.get(&(f.rank, f.event)).cloned().unwrap_or_default();
                (*f, was_known)
            })
            .collect();
        PathFacts {
            unrecorded,
            known,
            reopened,
        }
    }

    /// Whether the path fixes event `e` of the run: the runtime forced it
    /// ([`WildcardEvent::forced`]), and not only for a retry.
    fn fixes(&self, e: &WildcardEvent) -> bool {
        e.forced && !self.reopened.contains(&(e.rank, e.event))
    }
}

/// The events `retry` forces that `first` does not ([`with_enablers`]).
fn added_by_retry(first: &Guidance, retry: &Guidance) -> HashSet<(i32, u32)> {
    let before: HashSet<(i32, u32)> = first.forced.iter().map(|f| (f.rank, f.event)).collect();
    retry
        .forced
        .iter()
        .map(|f| (f.rank, f.event))
        .filter(|at| !before.contains(at))
        .collect()
}

#[derive(Debug)]
struct Pending {
    number: u32,
    choice: Option<Choice>,
    guidance: Option<Guidance>,
    /// For a retry ([`with_enablers`]): the guidance the first try had,
    /// which decides what the run opens (the forcings the retry added
    /// stay open choice points below it).
    first_try: Option<Guidance>,
}

/// The exploration engine: the search state that outlives each run.
///
/// ```
/// use mbh_bounding::{ExploreConfig, Explorer, LoopAbstraction, Reach, RunEnd};
/// use mbh_trace::config::Guidance;
/// use mbh_trace::rank_trace::WildcardEvent;
/// use mbh_trace::OpKind;
///
/// // A stand-in for running the job: P1's wildcard receive takes P0 unless
/// // forced, and lists P2 as a potential sender (seed 000's crooked barrier).
/// // The runtime records whether it forced the receive.
/// fn run_job(guidance: Option<&Guidance>) -> Vec<WildcardEvent> {
///     let forced = guidance.and_then(|g| g.index().source_for(1, 0));
///     let matched = forced.unwrap_or(0);
///     vec![WildcardEvent {
///         rank: 1, event: 0, op_index: 3, kind: OpKind::Irecv, site: 7,
///         start_clock: 0, final_clock: 1, matched, matched_tag: 0,
///         potential: vec![2 - matched], loops: vec![], zone: None, pattern: None,
///         enablers: vec![], forced: forced.is_some(), settled_in_loop: false,
///     }]
/// }
///
/// let config = ExploreConfig::new()
///     .loop_abstraction(LoopAbstraction::Off)
///     .mixing_bound(None);
/// let mut explorer = Explorer::new(config);
/// let mut runs = 0;
/// while let Some(run) = explorer.next_run() {
///     let events = run_job(run.guidance.as_ref());
///     let warnings = explorer.record_run(&events, RunEnd::Complete, &Reach::Whole);
///     assert!(warnings.is_empty());
///     runs += 1;
/// }
/// assert_eq!(runs, 2);
/// assert!(explorer.is_complete());
/// assert_eq!(explorer.stats().choice_points.explored, 1);
/// ```
#[derive(Debug)]
pub struct Explorer<P = Dfs> {
    config: ExploreConfig,
    policy: P,
    nodes: HashMap<NodeId, Node>,
    next_node: u64,
    pending: Option<Pending>,
    runs: u32,
    died: u32,
    stopped: bool,
    /// `Some(true)`: search exhausted; `Some(false)`: stopped with work left.
    finished: Option<bool>,
    points: BTreeMap<(i32, u32), PointRecord>,
    unexpanded: u32,
    /// The last run recorded tried a revealed sender that could not match.
    last_infeasible: bool,
}

impl Explorer<Dfs> {
    /// A depth-first exploration (seed 000 Fig 5.23) within `config`.
    pub fn new(config: ExploreConfig) -> Self {
        Self::with_policy(config, Dfs::new())
    }
}

impl<P: Policy> Explorer<P> {
    /// An exploration ordered by `policy`.
    pub fn with_policy(config: ExploreConfig, policy: P) -> Self {
        Explorer {
            config,
            policy,
            nodes: HashMap::new(),
            next_node: 0,
            pending: None,
            runs: 0,
            died: 0,
            stopped: false,
            finished: None,
            points: BTreeMap::new(),
            unexpanded: 0,
            last_infeasible: false,
        }
    }

    /// The bounds.
    pub fn config(&self) -> &ExploreConfig {
        &self.config
    }

    /// The next run to make, or `None` when the space (within the bounds)
    /// is covered or [`Explorer::stop`] was called. The first run is free
    /// (`guidance: None`). Budgets (`--max-interleavings`,
    /// `--time-budget`) are the caller's, kept in one place for both
    /// searches (`session/src/search_loop.rs`).
    ///
    /// Called again before [`Explorer::record_run`], it returns the same run.
    pub fn next_run(&mut self) -> Option<NextRun> {
        if let Some(p) = &self.pending {
            return Some(NextRun {
                number: p.number,
                guidance: p.guidance.clone(),
            });
        }
        if self.finished.is_some() {
            return None;
        }
        let limit_hit = self.stopped;
        if self.runs == 0 {
            if limit_hit {
                self.finished = Some(false);
                return None;
            }
            self.pending = Some(Pending {
                number: 1,
                choice: None,
                guidance: None,
                first_try: None,
            });
            return self.next_run();
        }
        let Some(choice) = self.policy.next_choice() else {
            self.finished = Some(true);
            return None;
        };
        if limit_hit {
            self.finished = Some(false);
            return None;
        }
        let node = self
            .nodes
            .get_mut(&choice.node)
            .expect("[mbh-bounding internal bug] a choice of a freed run");
        node.unissued = node.unissued.saturating_sub(1);
        let guidance = guidance_for(node, &choice);
        self.pending = Some(Pending {
            number: self.runs + 1,
            choice: Some(choice),
            guidance: Some(guidance),
            first_try: None,
        });
        self.next_run()
    }

    /// The guidances of up to `n` runs after the pending one, in the order
    /// [`Explorer::next_run`] would give them if no run before them opened
    /// new choice points: what a caller may launch ahead of time (`verify
    /// --jobs`). The search asks for each of them later unless a budget
    /// stops it first, or a run before it reveals a sender of its choice
    /// point or changes its parent's forcing (then the search asks for
    /// another guidance, and the run made ahead is not used).
    pub fn upcoming(&self, n: usize) -> Vec<Guidance> {
        if self.finished.is_some() || self.stopped || self.runs == 0 {
            return Vec::new();
        }
        self.policy
            .upcoming(n)
            .iter()
            .filter_map(|choice| {
                let node = self.nodes.get(&choice.node)?;
                Some(guidance_for(node, choice))
            })
            .collect()
    }

    /// Records the run [`Explorer::next_run`] gave: the wildcard events of
    /// all ranks (as [`mbh_trace::RankTrace::wildcard_events`] gives them,
    /// [`WildcardEvent::forced`] set by the runtime), how it ended, and
    /// how far its ranks got (`reach`: [`Reach::Crashed`] when `end` is
    /// [`RunEnd::Crashed`]). Returns the forced matches that did not
    /// happen (see [`unmatched_forces`]), for the caller to report as
    /// warnings.
    ///
    /// # Panics
    ///
    /// When no run is pending (call [`Explorer::next_run`] first).
    pub fn record_run(
        &mut self,
        events: &[WildcardEvent],
        end: RunEnd,
        reach: &Reach,
    ) -> Vec<UnmatchedForce> {
        let pending = self
            .pending
            .take()
            .expect("Explorer::record_run called without a run from Explorer::next_run");
        self.count_run(events, end);
        let (Some(choice), Some(tried)) = (pending.choice, pending.guidance) else {
            self.open_node(events, &PathFacts::default(), None, &[]);
            return Vec::new();
        };
        let mut unmatched = unmatched_forces(&tried, events, reach);
        let retried = pending.first_try.is_some();
        let reopened = match &pending.first_try {
            Some(first) => added_by_retry(first, &tried),
            None => HashSet::new(),
        };
        let guidance = pending.first_try.unwrap_or(tried);
        let node = self
            .nodes
            .get_mut(&choice.node)
            .expect("[mbh-bounding internal bug] a recorded run of a freed run");
        let dependent = node.points.get(&choice.key).is_some_and(|p| p.dependent);
        if !unmatched.is_empty() && !dependent && !retried {
            if let Some(retry) = with_enablers(node, &choice, &guidance, &unmatched) {
                // Not an execution of the program: the chosen sender's
                // message needed receives the key order left free, and
                // MPI matched them otherwise. Tried again with them forced.
                self.last_infeasible = true;
                self.pending = Some(Pending {
                    number: self.runs + 1,
                    choice: Some(choice),
                    guidance: Some(retry),
                    first_try: Some(guidance),
                });
                return Vec::new();
            }
        }
        let undone = !unmatched.is_empty() && flip_undid(node, &choice, &unmatched);
        let point = node
            .points
            .get_mut(&choice.key)
            .expect("[mbh-bounding internal bug] a choice of an unknown choice point");
        point.unrecorded = point.unrecorded.saturating_sub(1);
        if !unmatched.is_empty() && (dependent || undone) {
            // A revealed sender under forcings it may not agree with, or
            // forcings of the parent's own guidance whose messages needed
            // what the flip changed: not an execution of the program, and
            // no tool failure.
            unmatched.clear();
            self.last_infeasible = true;
        }
        let forced_event = events
            .iter()
            .find(|e| e.rank == choice.key.rank && e.event == choice.key.event);
        if unmatched.is_empty() && !self.last_infeasible {
            let offered = (&mut node.unissued, &mut node.events);
            offer_listed_senders(
                &mut self.policy,
                point,
                offered,
                choice,
                forced_event,
                events,
            );
        }
        if point.unrecorded == 0 {
            self.points
                .entry((choice.key.rank, choice.key.event))
                .or_default()
                .explored = true;
        }
        let budget = child_budget(node.budget, choice.position, point.bound);
        let known = known_senders(node, choice.key);
        let path = PathFacts::of(&guidance, events, known, reopened);
        let revealed = if dependent || self.last_infeasible {
            Vec::new()
        } else {
            revealed_senders(&path, choice.key, events)
        };
        if node.unissued == 0 {
            self.nodes.remove(&choice.node);
        }
        if unmatched.is_empty() && !self.last_infeasible {
            self.open_node(events, &path, budget, &revealed);
        } else {
            self.unexpanded += 1;
        }
        unmatched
    }

    /// Counts a recorded run, and the choice points its `events` found.
    fn count_run(&mut self, events: &[WildcardEvent], end: RunEnd) {
        self.runs += 1;
        self.last_infeasible = false;
        if end.died() {
            self.died += 1;
        }
        for e in events {
            if !alternatives(e).is_empty() {
                self.points.entry((e.rank, e.event)).or_default().found = true;
            }
        }
    }

    /// Whether the last run recorded was no execution of the program: it
    /// tried a sender a flip revealed for an event ordered before the flip
    /// (`revealed_senders`) under forcings that ruled it out. Its
    /// findings are not the program's; it is not expanded.
    pub fn last_run_infeasible(&self) -> bool {
        self.last_infeasible
    }

    /// Stops the search (a time budget ran out): [`Explorer::next_run`]
    /// returns `None` from now on, except for a run already handed out and
    /// not yet recorded.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// Whether every run within the bounds was made: the search ran out of
    /// alternatives, not of budget. False while the search goes on.
    pub fn is_complete(&self) -> bool {
        self.finished == Some(true) && self.pending.is_none()
    }

    /// Whether loop abstraction or the mixing bound skipped anything, so
    /// that even a complete search covered only part of the space.
    pub fn is_bounded(&self) -> bool {
        self.points
            .values()
            .any(|p| p.mixing_bounded || (p.abstracted && !p.offered))
    }

    /// Runs recorded so far.
    pub fn runs(&self) -> u32 {
        self.runs
    }

    /// The statistics so far.
    pub fn stats(&self) -> Stats {
        let mut choice_points = ChoicePointStats::default();
        for p in self.points.values() {
            choice_points.found += u64::from(p.found);
            choice_points.explored += u64::from(p.explored);
            choice_points.abstracted += u64::from(p.abstracted && !p.offered);
            choice_points.mixing_bounded += u64::from(p.mixing_bounded);
            choice_points.orderless += u64::from(p.orderless && !p.offered);
        }
        Stats {
            runs: self.runs,
            died: self.died,
            choice_points,
            unexpanded: self.unexpanded,
        }
    }

    /// Offers the open choice points of a recorded run: its free events
    /// with alternatives, within the bounds. The events its guidance
    /// forced ([`WildcardEvent::forced`]) are no choice points of it; its
    /// children force them too.
    fn open_node(
        &mut self,
        events: &[WildcardEvent],
        path: &PathFacts,
        budget: Option<u32>,
        revealed: &[(Key, Vec<i32>)],
    ) {
        let mut sorted: Vec<&WildcardEvent> = events.iter().collect();
        sorted.sort_by_key(|e| Key::of(e));
        let id = NodeId(self.next_node);
        let (mut choices, mut points) = self.free_points(&sorted, path, budget, id);
        revealed_points(&sorted, revealed, id, &mut choices, &mut points);
        if choices.is_empty() {
            return;
        }
        self.next_node += 1;
        self.nodes.insert(
            id,
            Node {
                events: recorded_events(&sorted, path, events),
                unrecorded: path.unrecorded.clone(),
                budget,
                points,
                unissued: choices.len() as u32,
            },
        );
        self.policy.open(id, choices);
    }

    /// The choice points of node `id` among its `sorted` events: those
    /// with alternatives the run's guidance did not force, within loop
    /// abstraction and the mixing `budget`; their choices and points.
    fn free_points(
        &mut self,
        sorted: &[&WildcardEvent],
        path: &PathFacts,
        budget: Option<u32>,
        id: NodeId,
    ) -> (Vec<Choice>, HashMap<Key, OpenPoint>) {
        let mut choices = Vec::new();
        let mut points = HashMap::new();
        let mut position = 0u32;
        for e in sorted {
            let alts = alternatives(e);
            if alts.is_empty() || path.fixes(e) {
                continue;
            }
            let key = Key::of(e);
            let record = self.points.entry((e.rank, e.event)).or_default();
            if self.config.is_orderless(e) {
                record.orderless = true;
                continue;
            }
            if self.config.loop_abstraction.abstracts(e) {
                record.abstracted = true;
                continue;
            }
            position += 1;
            if budget.is_some_and(|b| position > b) {
                record.mixing_bounded = true;
                continue;
            }
            record.offered = true;
            let mut senders: BTreeSet<i32> = alts.iter().copied().collect();
            senders.insert(e.matched);
            points.insert(
                key,
                OpenPoint {
                    senders,
                    unrecorded: alts.len() as u32,
                    bound: self.config.mixing_bound_for(e),
                    dependent: false,
                },
            );
            choices.extend(alts.into_iter().map(|sender| Choice {
                node: id,
                key,
                sender,
                position,
            }));
        }
        (choices, points)
    }
}

/// The points of node `id` whose senders a flip `revealed` (dependent
/// points), added to `choices` and `points`.
fn revealed_points(
    sorted: &[&WildcardEvent],
    revealed: &[(Key, Vec<i32>)],
    id: NodeId,
    choices: &mut Vec<Choice>,
    points: &mut HashMap<Key, OpenPoint>,
) {
    for (key, senders) in revealed {
        let Some(e) = sorted.iter().find(|e| Key::of(e) == *key) else {
            continue;
        };
        let mut known: BTreeSet<i32> = e.potential.iter().copied().collect();
        known.insert(e.matched);
        points.insert(
            *key,
            OpenPoint {
                senders: known,
                unrecorded: senders.len() as u32,
                bound: None,
                dependent: true,
            },
        );
        choices.extend(senders.iter().map(|&sender| Choice {
            node: id,
            key: *key,
            sender,
            position: 0,
        }));
    }
}

/// A node's events (`sorted`, of the run's `events`) as the search keeps
/// them: what each matched, could match (with what the `path` knew of a
/// forced one), and needs.
fn recorded_events(
    sorted: &[&WildcardEvent],
    path: &PathFacts,
    events: &[WildcardEvent],
) -> Vec<Recorded> {
    let matched_in_run = matched_by_event(events);
    sorted
        .iter()
        .map(|e| {
            let fixed = path.fixes(e);
            let mut known: BTreeSet<i32> = e.potential.iter().copied().chain([e.matched]).collect();
            if fixed {
                if let Some(before) = path.known.get(&(e.rank, e.event)) {
                    known.extend(before);
                }
            }
            Recorded {
                key: Key::of(e),
                matched: e.matched,
                pattern: e.pattern,
                forced: fixed,
                known,
                enablers: e.enablers.clone(),
                needs: needs_of(e, &matched_in_run),
            }
        })
        .collect()
}

/// Senders only the forced run lists are alternatives under the same
/// prefix: offers each of the `forced_event`'s once, as a choice of
/// `choice`'s point (`point`, of a node whose count of unissued choices
/// and events are `offered`), with what the run's `events` say it needs.
fn offer_listed_senders<P: Policy>(
    policy: &mut P,
    point: &mut OpenPoint,
    (unissued, node_events): (&mut u32, &mut Vec<Recorded>),
    choice: Choice,
    forced_event: Option<&WildcardEvent>,
    events: &[WildcardEvent],
) {
    let mut new_needs = Vec::new();
    let alternatives = forced_event.map(alternatives).unwrap_or_default();
    let listed = match forced_event {
        Some(e) if !alternatives.is_empty() => needs_of(e, &matched_by_event(events)),
        _ => Vec::new(),
    };
    for sender in alternatives {
        if point.senders.insert(sender) {
            point.unrecorded += 1;
            *unissued += 1;
            policy.extend(Choice { sender, ..choice });
            new_needs.extend(listed.iter().filter(|(s, _)| *s == sender).cloned());
        }
    }
    if let Some(r) = node_events.iter_mut().find(|r| r.key == choice.key) {
        r.needs.extend(new_needs);
    }
}

/// What the search knows each event of `parent` could match on the path
/// to the child that flips `flipped` ([`Recorded::known`]): for the
/// flipped event, also every alternative its point offers (the child's
/// siblings run those).
fn known_senders(parent: &Node, flipped: Key) -> HashMap<(i32, u32), BTreeSet<i32>> {
    let mut known: HashMap<(i32, u32), BTreeSet<i32>> = parent
        .events
        .iter()
        .map(|r| ((r.key.rank, r.key.event), r.known.clone()))
        .chain(
            parent
                .unrecorded
                .iter()
                .map(|(f, known)| ((f.rank, f.event), known.clone())),
        )
        .collect();
    if let Some(point) = parent.points.get(&flipped) {
        known
            .entry((flipped.rank, flipped.event))
            .or_default()
            .extend(&point.senders);
    }
    known
}

/// Senders that run `C` (the flip of choice point `flipped`) lists for
/// events its `path` fixes, and that no run of the path to `C` listed for
/// them (`path.known`, from [`known_senders`]).
///
/// Such an event is concurrent with the flip or before it, and the key
/// order assumes its outcomes were all tried where it was still free. But
/// what a receive can match also depends on concurrent events ordered
/// after it: a sender may send only when the flipped event takes another
/// message (rank 3's flip makes it live to send to rank 0,
/// whose receive ordered before the flip then has a sender it never had).
/// The event may have been forced several flips up the path, by runs that
/// all died before that sender sent (rank 2 lives to send
/// to rank 1 only after two flips, and rank 1's receive was forced since
/// the first): comparing with the parent alone, where it was forced too,
/// missed it. Each such sender is tried as a choice of `C`: `C`'s forced
/// matches with that event changed, and its rank's later events left free.
fn revealed_senders(
    path: &PathFacts,
    flipped: Key,
    events: &[WildcardEvent],
) -> Vec<(Key, Vec<i32>)> {
    let mut revealed = Vec::new();
    for e in events {
        if (e.rank, e.event) == (flipped.rank, flipped.event) || !path.fixes(e) {
            continue;
        }
        let Some(before) = path.known.get(&(e.rank, e.event)) else {
            continue;
        };
        let new: Vec<i32> = alternatives(e)
            .into_iter()
            .filter(|s| !before.contains(s))
            .collect();
        if !new.is_empty() {
            revealed.push((Key::of(e), new));
        }
    }
    revealed
}

/// The senders an event could have matched besides the one it did.
fn alternatives(e: &WildcardEvent) -> Vec<i32> {
    let mut alts: Vec<i32> = e
        .potential
        .iter()
        .copied()
        .filter(|&s| s >= 0 && s != e.matched)
        .collect();
    alts.sort_unstable();
    alts.dedup();
    alts
}

/// The mixing budget of a run forced at the `position`-th choice point of
/// a run with budget `parent`, where a choice made there has bound `bound`.
fn child_budget(parent: Option<u32>, position: u32, bound: Option<u32>) -> Option<u32> {
    let inherited = parent.map(|b| b.saturating_sub(position));
    match (inherited, bound) {
        (None, bound) => bound,
        (Some(left), None) => Some(left),
        (Some(left), Some(bound)) => Some(left.min(bound)),
    }
}

/// The guidance of the run that tries `choice.sender` at `choice` below
/// `node`: every event ordered before the choice point keeps the match it
/// had in `node` (seed 000 Fig 5.23, `outputToDecisionDatabase`), and so
/// does every event its own guidance forced (recorded or not), and every earlier receive
/// of the same rank that could take the message a forced receive waits
/// for, whatever its final clock (`force_thieves`).
fn guidance_for(node: &Node, choice: &Choice) -> Guidance {
    let dependent = node.points.get(&choice.key).is_some_and(|p| p.dependent);
    let mut forced: Vec<bool> = node
        .events
        .iter()
        .map(|r| {
            // A revealed sender changes an event the run forced: what its
            // rank did after it is left free (it may not happen again).
            let after_it =
                dependent && r.key.rank == choice.key.rank && r.key.event > choice.key.event;
            (r.forced || r.key <= choice.key) && !after_it
        })
        .collect();
    free_what_the_flip_feeds(&node.events, choice, dependent, &mut forced);
    force_thieves(&node.events, &mut forced);
    let mut forced: Vec<ForcedMatch> = node
        .events
        .iter()
        .zip(forced)
        .filter(|(r, is_forced)| *is_forced && r.key != choice.key && r.matched >= 0)
        .map(|(r, _)| ForcedMatch {
            rank: r.key.rank,
            event: r.key.event,
            source: r.matched,
        })
        .collect();
    // A forcing its run died before reaching binds the child too: left
    // free, that receive could take what a later forced one waits for
    // (a run killed by rank 2's assertion before rank 1's
    // first receive, forced to rank 2, completed; its child forced rank
    // 1's second receive to rank 0 and left the first free to take it).
    forced.extend(node.unrecorded.iter().map(|(f, _)| *f).filter(|f| {
        let after_it = dependent && f.rank == choice.key.rank && f.event > choice.key.event;
        !after_it && (f.rank, f.event) != (choice.key.rank, choice.key.event)
    }));
    forced.push(ForcedMatch {
        rank: choice.key.rank,
        event: choice.key.event,
        source: choice.sender,
    });
    forced.sort();
    Guidance {
        last_guided_clock: choice.key.clock,
        forced,
    }
}

/// The guidance of a second try of `choice` when its first try (`first`)
/// did not make the forced matches `unmatched`: `first` plus, for each of
/// them, the events of `node` in the causal past of the forced sender's
/// message there ([`WildcardEvent::enablers`]: of the chosen sender for
/// the flipped event, of the matched one for the others), each forced to
/// what it matched in `node`. `None` when that adds nothing.
///
/// The key order forces only the events before the choice point, and a
/// forced sender may send only because a concurrent event ordered after
/// it matched as it did in `node` (under
/// `--buffering zero` a rank sends its second message only once its first
/// was received, through an acknowledgement that carries no clock).
/// Forcing those events in every child loses combinations (a
/// message usually needs them to happen, not to match as they did), so
/// they are forced only on a retry, and stay open choice points below it:
/// a flip of one frees what needed it (`free_what_the_flip_feeds`).
fn with_enablers(
    node: &Node,
    choice: &Choice,
    first: &Guidance,
    unmatched: &[UnmatchedForce],
) -> Option<Guidance> {
    let flipped = (choice.key.rank, choice.key.event);
    let mut retry = first.clone();
    for u in unmatched {
        let at = (u.forced.rank, u.forced.event);
        let Some(r) = node.events.iter().find(|r| (r.key.rank, r.key.event) == at) else {
            continue;
        };
        let sender = if at == flipped {
            choice.sender
        } else {
            r.matched
        };
        let Some((_, needed)) = r.needs.iter().find(|(s, _)| *s == sender) else {
            continue;
        };
        for need in needed {
            let here = (need.rank, need.event);
            let already = retry.forced.iter().any(|f| (f.rank, f.event) == here);
            if here != flipped && !already {
                retry.forced.push(*need);
            }
        }
    }
    if retry.forced.len() == first.forced.len() {
        return None;
    }
    retry.forced.sort();
    Some(retry)
}

/// What each wildcard event of a run matched, by (rank, event).
fn matched_by_event(events: &[WildcardEvent]) -> HashMap<(i32, u32), i32> {
    events
        .iter()
        .filter(|e| e.matched >= 0)
        .map(|e| ((e.rank, e.event), e.matched))
        .collect()
}

/// Per sender of `e`, its enablers ([`WildcardEvent::enablers`]) with what
/// each matched in the run `e` is from (`matched`, [`matched_by_event`]).
fn needs_of(e: &WildcardEvent, matched: &HashMap<(i32, u32), i32>) -> Vec<(i32, Vec<ForcedMatch>)> {
    e.enablers
        .iter()
        .map(|(sender, past)| {
            let matches = past
                .iter()
                .filter_map(|&(rank, event)| {
                    let source = *matched.get(&(rank, event))?;
                    Some(ForcedMatch {
                        rank,
                        event,
                        source,
                    })
                })
                .collect();
            (*sender, matches)
        })
        .collect()
}

/// Whether the forced matches of `unmatched` that did not happen are
/// explained by the flip: at least one was forced by the parent `node`'s
/// own guidance for a message that in `node` needed the flipped event
/// ([`WildcardEvent::enablers`]), and the others never completed (they
/// wait behind it). The child must keep the parent's forcings (it forces
/// all its parent did, so the search ends), and the flip took away what
/// made one possible: no execution has both, which is no failure of the
/// clocks (a run that forced rank 1 to take rank 2's
/// message, which rank 2 sends only once rank 0 took its first, cannot
/// also flip that receive of rank 0).
fn flip_undid(node: &Node, choice: &Choice, unmatched: &[UnmatchedForce]) -> bool {
    let flipped = (choice.key.rank, choice.key.event);
    let undone = |u: &UnmatchedForce| {
        node.events.iter().any(|r| {
            (r.key.rank, r.key.event) == (u.forced.rank, u.forced.event)
                && r.forced
                && r.matched == u.forced.source
                && r.enablers
                    .iter()
                    .any(|(s, needed)| *s == r.matched && needed.contains(&flipped))
        })
    };
    unmatched.iter().any(undone) && unmatched.iter().all(|u| u.observed.is_none() || undone(u))
}

/// Leaves free every event whose matched message needs the flipped event
/// or an event left free (its [`WildcardEvent::enablers`] for the sender
/// it matched): it is causally after the flip, whatever its key says.
/// Lamport clocks can order it before the flip: under `--buffering zero`
/// a sender's second message follows the receive that took its first,
/// through an acknowledgement that carries no clock. Its
/// message may not come at all once the flip changed what it needs.
/// Repeated until nothing changes: freeing one may strand another. Events
/// the parent's own guidance forced stay forced (the child forces all it
/// did and one more, so the search ends), except under a revealed choice,
/// which changes an event the parent forced and is never revealed again.
fn free_what_the_flip_feeds(
    events: &[Recorded],
    choice: &Choice,
    dependent: bool,
    forced: &mut [bool],
) {
    let flipped = (choice.key.rank, choice.key.event);
    let at: HashMap<(i32, u32), usize> = events
        .iter()
        .enumerate()
        .map(|(i, r)| ((r.key.rank, r.key.event), i))
        .collect();
    loop {
        let is_free =
            |needed: &(i32, u32)| *needed == flipped || at.get(needed).is_some_and(|&i| !forced[i]);
        let stranded: Vec<usize> = events
            .iter()
            .enumerate()
            .filter(|&(i, r)| forced[i] && (dependent || !r.forced) && r.key != choice.key)
            .filter(|(_, r)| {
                r.enablers
                    .iter()
                    .find(|(s, _)| *s == r.matched)
                    .is_some_and(|(_, needed)| needed.iter().any(is_free))
            })
            .map(|(i, _)| i)
            .collect();
        if stranded.is_empty() {
            return;
        }
        for i in stranded {
            forced[i] = false;
        }
    }
}

/// Marks forced every receive that could take the message a forced
/// receive or probe waits for, and those that could take theirs.
///
/// A nonblocking receive can reach its final clock after a later call
/// (Fig 5.14's `irecv(*, tag=3)`, seed 000 §5.2.2), so the key order alone
/// may leave it free while a receive the same rank issued after it is
/// forced. MPI matches in posting order: free, it takes the first message
/// its pattern accepts, and the forced receive hangs in a deadlock of the
/// tool's making. Only a receive whose pattern overlaps the forced one's
/// can; an index choice forces no message, and a receive on another
/// communicator or tag never competes (forcing those too kept their
/// alternatives from ever being combined with a flip: a
/// `Testany` loop over wildcard `Irecv`s).
///
/// Walks each rank's events from the last issued back (a thief is issued
/// before its victim), keeping the distinct patterns forced so far: linear
/// in the events for a program with a few communicators and tags.
fn force_thieves(events: &[Recorded], forced: &mut [bool]) {
    let mut order: Vec<usize> = (0..events.len()).collect();
    order.sort_by_key(|&i| (events[i].key.rank, std::cmp::Reverse(events[i].key.event)));
    let mut rank = None;
    let mut victims: Vec<RecvPattern> = Vec::new();
    for i in order {
        let event = &events[i];
        if rank != Some(event.key.rank) {
            rank = Some(event.key.rank);
            victims.clear();
        }
        let Some(pattern) = event.pattern else {
            continue;
        };
        if !forced[i] && victims.iter().any(|v| pattern.overlaps(v)) {
            forced[i] = true;
        }
        if forced[i] && !victims.contains(&pattern) {
            victims.push(pattern);
        }
    }
}

#[cfg(test)]
mod tests;
