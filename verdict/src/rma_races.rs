//! Remote races of one-sided communication (MPI-4.0 §12.7):
//! two RMA operations (`MPI_Put`, `MPI_Get`, the accumulate family and
//! their `R` forms) from different origins, or from one origin in one
//! epoch, on overlapping bytes of one target's window, at least one
//! writing, that no synchronization orders.
//!
//! From the ranks' records ([`mbh_trace::rma`]): each window is named
//! the same on every rank by its communicator and the ordinal of its
//! making on it; an operation's bytes are its target displacement times
//! the *target's* displacement unit (from the target's own record of the
//! window) plus the true lower bound of its target datatype, for the
//! target count times the datatype's size.
//!
//! What orders two operations on the same target bytes (the epochs as
//! each origin opened them):
//!
//! * fence epochs: a fence is a barrier of the window's group, so
//!   operations of different fence epochs are ordered, and two of the
//!   same one never are, whatever else the ranks do meanwhile (an
//!   operation completes at its target only at the next fence, §12.5.1);
//! * general active target (PSCW): the operations of one exposure epoch
//!   of the target (its `MPI_Win_post` to `MPI_Win_wait`) are concurrent,
//!   from any origins (the k-th `MPI_Win_start` of an origin whose group
//!   holds the target matches the target's k-th `MPI_Win_post` whose
//!   group holds the origin, §12.5.2);
//! * passive target, one origin: its operations in one lock epoch are
//!   concurrent unless a `MPI_Win_flush` (`_all`) of the target comes
//!   between them (§12.5.4); of two epochs, ordered;
//! * passive target, two origins: an exclusive lock on either side
//!   serializes the two epochs (§12.5.3); under shared locks (or
//!   `MPI_Win_lock_all`) they are concurrent only when nothing can order
//!   them: neither origin's epoch end (its `unlock` or `flush` after its
//!   operation) happens before the other's operation through messages or
//!   collectives (vector clocks over the matched sends and the
//!   collectives, every collective taken as a barrier, which can only add
//!   order), and no one-sided operation that could carry the news
//!   (a write after one epoch end, a read, lock or PSCW call before the
//!   other operation) exists: then the two are reported, otherwise not.
//!
//! Two accumulate-family operations with the same basic datatype are
//! atomic with each other when their operations are the same or one is
//! `MPI_NO_OP` (§12.7.1, the default `accumulate_ops` of
//! `same_op_no_op`), and an origin's accumulates are ordered among
//! themselves (the default `accumulate_ordering`): neither is a race.
//! `MPI_NO_OP` only reads.
//!
//! # Limitations
//!
//! What cannot be decided is not reported, and named as not checked
//! ([`RaceCheck::unchecked`]): operations whose target datatype has
//! holes (their exact bytes are not recorded), dynamic windows (their
//! displacements are addresses), windows on communicators that cannot be
//! matched across ranks, PSCW epochs with groups of more than 64 ranks,
//! pairs in epochs of two different kinds, `R` operations of one origin
//! in one epoch (their requests may order them), shared-lock pairs whose
//! order clocks cannot tell (a run cut short, memory shared through
//! `MPI_Win_allocate_shared`). A process's own loads and stores of its
//! window memory are not checked here; those of origin and result
//! buffers are `buffer-reuse` findings of the access checks
//! (`runtime/src/rma_watch.rs`, `verdict/src/rma_reuse.rs`).

use crate::place::site_location;
use mbh_trace::rank_trace::{Op, WORLD_COMM};
use mbh_trace::rma::{acc_op, acc_op_name, RmaCall, RmaLock, TargetData};
use mbh_trace::{Finding, FindingKind, OpKind, RankTrace, Role, Severity, SiteTable};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What the race check found, and what it could not decide.
#[derive(Debug, Default)]
pub struct RaceCheck {
    /// One `rma-race` error per pair of call sites.
    pub findings: Vec<Finding>,
    /// Operations whose races were not checked, each with why: (rank,
    /// record, reason).
    pub unchecked: Vec<(i32, Op, &'static str)>,
}

/// Why operations were not checked (a partial run's reason names them).
pub mod why {
    /// A target datatype with holes.
    pub const HOLES: &str =
        "their target datatype has holes, whose exact bytes mbhybrid does not record";
    /// A dynamic window.
    pub const DYNAMIC: &str = "they target a dynamic window, whose displacements are addresses";
    /// A window whose communicator is not known across ranks.
    pub const UNKNOWN_WINDOW: &str =
        "their window is made on a communicator mbhybrid cannot match across ranks";
    /// A PSCW group that is not known.
    pub const GROUP: &str =
        "their epoch's `MPI_Win_start` or `MPI_Win_post` group is not known (more than 64 ranks)";
    /// Epochs of two kinds.
    pub const MIXED: &str =
        "they meet operations of another kind of epoch (fence, lock, PSCW) on the same bytes";
    /// R operations of one epoch.
    pub const REQUEST: &str =
        "they are `R` operations of one epoch, whose completion by their requests is not followed";
    /// Shared locks whose order clocks cannot tell.
    pub const CLOCKS: &str = "they run under shared locks and what orders them could not be told (one-sided operations that may carry the order, a run cut short, or memory shared through `MPI_Win_allocate_shared`)";
    /// Past the pairs one run's check looks at.
    pub const TOO_MANY: &str =
        "they are among too many operations on the same bytes for the check to pair them all";
    /// An epoch never closed.
    pub const OPEN: &str = "their lock epoch was never closed";
    /// No record of the window from the target.
    pub const NO_TARGET: &str =
        "their target's trace does not record the window (its displacement unit is not known)";
}

/// A window, the same on every rank: its communicator's name and the
/// ordinal of its making among the windows made on it.
pub(crate) type WinKey = (u64, u32);

/// A rank's `MPI_Win_post`s of a window: (record index, group).
pub(crate) type Posts = Vec<(u64, Option<u64>)>;

/// The epoch an operation is in, as its origin opened it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Epoch {
    /// The `k`-th fence epoch of the window (k fences before it).
    Fence(u32),
    /// A lock epoch: its record's index on the origin, whether exclusive,
    /// the flushes of the target in it so far, and the index of the call
    /// that completes the operation (unlock or flush; `None`: never).
    Lock {
        opened: u64,
        exclusive: bool,
        flushes: u32,
        completed: Option<u64>,
    },
    /// The `n`-th access epoch of the origin whose group holds the target
    /// (its `MPI_Win_start`), and the origin's record of it.
    Start { nth: u32, opened: u64 },
}

/// One operation, ready to pair.
#[derive(Debug, Clone)]
pub(crate) struct Access {
    pub(crate) rank: i32,
    pub(crate) op: Op,
    pub(crate) target: i32,
    pub(crate) window: WinKey,
    /// The window's id on the origin (for the message).
    pub(crate) local_window: u64,
    pub(crate) data: TargetData,
    pub(crate) epoch: Epoch,
    acc_op: u8,
    basic_type: u8,
}

impl Access {
    fn is_accumulate(&self) -> bool {
        matches!(
            self.op.kind,
            OpKind::Accumulate
                | OpKind::Raccumulate
                | OpKind::GetAccumulate
                | OpKind::RgetAccumulate
                | OpKind::FetchAndOp
                | OpKind::CompareAndSwap
        )
    }

    fn is_request(&self) -> bool {
        matches!(
            self.op.kind,
            OpKind::Rput | OpKind::Rget | OpKind::Raccumulate | OpKind::RgetAccumulate
        )
    }

    /// Whether it changes the target's bytes.
    pub(crate) fn writes(&self) -> bool {
        match self.op.kind {
            OpKind::Get | OpKind::Rget => false,
            _ if self.is_accumulate() => self.acc_op != acc_op::NO_OP,
            _ => true,
        }
    }

    /// `MPI_Put` or `MPI_Accumulate` with `MPI_SUM`.
    pub(crate) fn words(&self) -> String {
        if self.is_accumulate() && self.op.kind != OpKind::CompareAndSwap && self.acc_op != 0 {
            format!(
                "`{}` with `{}`",
                self.op.kind.mpi_name(),
                acc_op_name(self.acc_op)
            )
        } else {
            format!("`{}`", self.op.kind.mpi_name())
        }
    }
}

/// Whether two accumulate-family operations are atomic with each other
/// (MPI-4.0 §12.7.1): same basic datatype, and the same operation or
/// one of them `MPI_NO_OP` (the default `accumulate_ops`).
fn atomic(a: &Access, b: &Access) -> bool {
    a.is_accumulate()
        && b.is_accumulate()
        && a.basic_type != 0
        && a.basic_type == b.basic_type
        && a.acc_op != 0
        && b.acc_op != 0
        && (a.acc_op == b.acc_op || a.acc_op == acc_op::NO_OP || b.acc_op == acc_op::NO_OP)
}

/// What a window is on one rank.
#[derive(Debug, Clone)]
pub(crate) struct Made {
    pub(crate) key: Option<WinKey>,
    disp_unit: Option<i64>,
    made: Op,
}

/// The per-window state of one origin's walk.
#[derive(Debug, Default)]
struct Walk {
    fences: u32,
    fence_open: bool,
    /// target -> (lock record, exclusive, flushes of the target so far)
    locks: BTreeMap<i32, (u64, bool, u32)>,
    lock_all: Option<(u64, u32)>,
    /// flushes of each target under lock_all
    all_flushes: BTreeMap<i32, u32>,
    start: Option<(u64, Option<u64>)>,
    /// how many starts so far held each target
    starts_of: BTreeMap<i32, u32>,
    /// the nth of the open start epoch for each target it holds
    open_start: BTreeMap<i32, u32>,
    /// posts: (record index, group)
    posts: Posts,
}

/// The group bits hold rank `r`.
fn holds(group: u64, r: i32) -> bool {
    u32::try_from(r).is_ok_and(|r| r < mbh_trace::rma::GROUP_RANKS && group & 1 << r != 0)
}

/// The remote races of the run of `traces`.
pub fn rma_race_check(sites: Option<&SiteTable>, traces: &[Option<RankTrace>]) -> RaceCheck {
    let mut check = RaceCheck::default();
    if !traces
        .iter()
        .flatten()
        .any(|t| t.ops.iter().any(|op| op.kind.is_rma_operation()))
    {
        return check;
    }
    let windows = Windows::of(traces);
    let (accesses, posts) = walk_origins(traces, &windows.made, &mut check.unchecked);
    // Pairs on the same target bytes.
    let mut by_target: BTreeMap<(WinKey, i32), Vec<usize>> = BTreeMap::new();
    for (i, a) in accesses.iter().enumerate() {
        by_target.entry((a.window, a.target)).or_default().push(i);
    }
    let mut pairing = Pairing::new(traces, &windows, &accesses, &posts);
    for ((window, target), list) in &by_target {
        pairing.pair_target(*window, *target, list);
    }
    pairing.finish(sites, &mut check);
    // The targets' own loads and stores against the same operations.
    let local = crate::rma_local::LocalRaces {
        windows: &windows,
        accesses: &accesses,
        by_target: &by_target,
        posts: &posts,
    };
    local.check(sites, traces, &mut check);
    check
}

/// The windows of each rank, and each window's displacement unit and
/// size on each rank (from that rank's own record of making it).
pub(crate) struct Windows {
    pub(crate) made: Vec<BTreeMap<u64, Made>>,
    pub(crate) units: HashMap<(WinKey, i32), Option<i64>>,
    sizes: HashMap<(WinKey, i32), u64>,
}

impl Windows {
    fn of(traces: &[Option<RankTrace>]) -> Windows {
        let mut windows = Windows {
            made: vec![BTreeMap::new(); traces.len()],
            units: HashMap::new(),
            sizes: HashMap::new(),
        };
        for (r, trace) in traces.iter().enumerate() {
            let Some(trace) = trace else { continue };
            let mut ordinal: HashMap<u64, u32> = HashMap::new();
            for op in &trace.ops {
                let Some(call) = op.rma() else { continue };
                if !call.kind.makes_window() || call.window == 0 {
                    continue;
                }
                let n = ordinal.entry(op.comm).or_insert(0);
                *n += 1;
                let known = op.comm == WORLD_COMM || op.comm >> 63 == 1;
                let key = (known && !call.failed).then_some((op.comm, *n));
                if let Some(key) = key {
                    windows.units.insert((key, trace.rank), call.disp_unit);
                    if let Some(size) = call.win_size {
                        windows.sizes.insert((key, trace.rank), size);
                    }
                }
                windows.made[r].insert(
                    call.window,
                    Made {
                        key,
                        disp_unit: call.disp_unit,
                        made: op.clone(),
                    },
                );
            }
        }
        windows
    }
}

/// Every origin's operations, ready to pair, and each rank's posts, by
/// window, for PSCW matching.
fn walk_origins(
    traces: &[Option<RankTrace>],
    made: &[BTreeMap<u64, Made>],
    unchecked: &mut Vec<(i32, Op, &'static str)>,
) -> (Vec<Access>, HashMap<(WinKey, i32), Posts>) {
    let mut accesses = Vec::new();
    let mut posts: HashMap<(WinKey, i32), Posts> = HashMap::new();
    for (r, trace) in traces.iter().enumerate() {
        let Some(trace) = trace else { continue };
        let (found, walked) = walk(trace, &made[r], unchecked);
        accesses.extend(found);
        for (key, w) in walked {
            posts.insert((key, trace.rank), w.posts);
        }
    }
    (accesses, posts)
}

/// Pairing one run's operations on the same target bytes, one target's
/// window at a time, with what it found so far; the budget of pairs
/// ([`MAX_COMPARED`]) is the whole run's.
struct Pairing<'a> {
    traces: &'a [Option<RankTrace>],
    windows: &'a Windows,
    accesses: &'a [Access],
    posts: &'a HashMap<(WinKey, i32), Posts>,
    /// Memory shared through `MPI_Win_allocate_shared`: loads and stores
    /// may order shared-lock epochs where clocks cannot see it.
    shared_memory: bool,
    /// Only shared-lock pairs of two origins need clocks: made once, when
    /// the first one comes.
    clocks: Option<Clocks>,
    found: BTreeMap<(u32, u32), Race>,
    /// Pairs of overlapping operations looked at in this run.
    compared: usize,
    /// Operations reaching outside their target's window, one per site.
    beyond: BTreeMap<u32, Beyond>,
    undecided: BTreeSet<(usize, &'static str)>,
}

/// A pair's verdict: a race and why, or no race (`Err(None)`), or not
/// decided and why (`Err(Some(reason))`).
type PairVerdict = Result<Why, Option<&'static str>>;

impl<'a> Pairing<'a> {
    fn new(
        traces: &'a [Option<RankTrace>],
        windows: &'a Windows,
        accesses: &'a [Access],
        posts: &'a HashMap<(WinKey, i32), Posts>,
    ) -> Pairing<'a> {
        let shared_memory = traces
            .iter()
            .flatten()
            .any(|t| t.ops.iter().any(|op| op.kind == OpKind::WinAllocateShared));
        Pairing {
            traces,
            windows,
            accesses,
            posts,
            shared_memory,
            clocks: None,
            found: BTreeMap::new(),
            compared: 0,
            beyond: BTreeMap::new(),
            undecided: BTreeSet::new(),
        }
    }

    /// Pairs the operations `list` (indices of accesses) on `target`'s
    /// `window`.
    fn pair_target(&mut self, window: WinKey, target: i32, list: &[usize]) {
        let unit = match self.windows.units.get(&(window, target)) {
            Some(Some(unit)) => *unit,
            found => {
                let reason = if found.is_some() {
                    why::DYNAMIC
                } else {
                    why::NO_TARGET
                };
                for &i in list {
                    self.undecided.insert((i, reason));
                }
                return;
            }
        };
        // By first byte: each operation meets only the ones that start
        // before it ends (a sweep, not every pair: a stencil's thousands of
        // operations on disjoint bytes cost a sort).
        let accesses = self.accesses;
        let mut ranged: Vec<(i64, i64, usize)> = list
            .iter()
            .filter_map(|&i| accesses[i].data.range(unit).map(|(lo, hi)| (lo, hi, i)))
            .filter(|(lo, hi, _)| lo < hi)
            .collect();
        if let Some(&size) = self.windows.sizes.get(&(window, target)) {
            self.note_beyond(&ranged, size);
        }
        ranged.sort_unstable();
        self.sweep((window, target), &ranged);
    }

    /// Keeps the operations of `ranged` that reach outside the `size`
    /// bytes their target exposes.
    fn note_beyond(&mut self, ranged: &[(i64, i64, usize)], size: u64) {
        for &(lo, hi, i) in ranged {
            let a = &self.accesses[i];
            let outside = lo < 0 || u64::try_from(hi).is_ok_and(|hi| hi > size);
            if outside && self.beyond.len() < MAX_BEYOND {
                let made = made_on(&self.windows.made, a.rank, a.local_window);
                self.beyond
                    .entry(a.op.site)
                    .or_insert_with(|| Beyond::new(a, (lo, hi), size, made));
            }
        }
    }

    /// Pairs each operation of `ranged` (sorted by first byte) with those
    /// that start before it ends.
    fn sweep(&mut self, key: (WinKey, i32), ranged: &[(i64, i64, usize)]) {
        let accesses = self.accesses;
        'sweep: for (x, &(a0, a1, i)) in ranged.iter().enumerate() {
            for &(b0, b1, j) in ranged[x + 1..].iter().take_while(|(b0, ..)| *b0 < a1) {
                self.compared += 1;
                if self.compared > MAX_COMPARED {
                    // Thousands of operations on the same bytes (a counter,
                    // a benchmark's loop) would cost their square: what
                    // is left is named as not checked, never guessed.
                    for &(_, _, k) in &ranged[x..] {
                        self.undecided.insert((k, why::TOO_MANY));
                    }
                    break 'sweep;
                }
                let (a, b) = (&accesses[i], &accesses[j]);
                let (lo, hi) = (a0.max(b0), a1.min(b1));
                if lo >= hi || !(a.writes() || b.writes()) || atomic(a, b) {
                    continue;
                }
                if a.rank == b.rank && a.is_accumulate() && b.is_accumulate() {
                    // An origin's accumulates are ordered (§12.7.2).
                    continue;
                }
                let verdict = self.pair_verdict(key, a, b);
                self.record(verdict, (i, j), (lo, hi));
            }
        }
    }

    /// Whether `a` and `b`, overlapping and one writing, race on `key`'s
    /// target window: what their epochs say.
    fn pair_verdict(&mut self, key: (WinKey, i32), a: &Access, b: &Access) -> PairVerdict {
        let same = a.rank == b.rank;
        match (a.epoch, b.epoch) {
            (Epoch::Fence(k), Epoch::Fence(l)) => (k == l).then_some(Why::SameFence).ok_or(None),
            (Epoch::Start { opened: oa, .. }, Epoch::Start { opened: ob, .. }) => {
                match (self.exposure(key, a), self.exposure(key, b)) {
                    _ if same => (oa == ob).then_some(Why::SameStart).ok_or(None),
                    (Ok(ea), Ok(eb)) => (ea == eb).then_some(Why::SameExposure).ok_or(None),
                    (Err(e), _) | (_, Err(e)) => Err(Some(e)),
                }
            }
            (
                Epoch::Lock {
                    opened: oa,
                    exclusive: xa,
                    flushes: fa,
                    completed: ca,
                },
                Epoch::Lock {
                    opened: ob,
                    exclusive: xb,
                    flushes: fb,
                    completed: cb,
                },
            ) => {
                if same {
                    if oa != ob || fa != fb {
                        Err(None)
                    } else if a.is_request() || b.is_request() {
                        Err(Some(why::REQUEST))
                    } else {
                        Ok(Why::SameLock)
                    }
                } else if xa || xb {
                    Err(None)
                } else if self.shared_memory {
                    Err(Some(why::CLOCKS))
                } else {
                    self.shared_locks((a, ca), (b, cb))
                }
            }
            _ => Err(Some(why::MIXED)),
        }
    }

    /// The exposure epoch (the target's `MPI_Win_post` record) of a PSCW
    /// operation `a` on `key`'s target window; `None` outside PSCW.
    fn exposure(&self, key: (WinKey, i32), a: &Access) -> Result<Option<u64>, &'static str> {
        exposure(self.posts, key, a)
    }

    /// Two origins' operations under shared locks, each with the record
    /// that completes it: a race only when clocks show nothing can order
    /// either epoch's end before the other operation.
    fn shared_locks(
        &mut self,
        (a, ca): (&Access, Option<u64>),
        (b, cb): (&Access, Option<u64>),
    ) -> PairVerdict {
        match (ca, cb) {
            (Some(ca), Some(cb)) => {
                let traces = self.traces;
                let clocks = self.clocks.get_or_insert_with(|| Clocks::new(traces));
                use Order::*;
                match (
                    clocks.order(a.rank, ca, b.rank, b.op.index),
                    clocks.order(b.rank, cb, a.rank, a.op.index),
                ) {
                    (Some(Not), Some(Not)) => Ok(Why::SharedLocks),
                    (Some(Before), _) | (_, Some(Before)) => Err(None),
                    _ => Err(Some(why::CLOCKS)),
                }
            }
            _ => Err(Some(why::OPEN)),
        }
    }

    /// Keeps the verdict on accesses `i` and `j` on bytes `lo..hi`: one
    /// race per pair of call sites, or both named as not checked.
    fn record(&mut self, verdict: PairVerdict, (i, j): (usize, usize), bytes: (i64, i64)) {
        let (a, b) = (&self.accesses[i], &self.accesses[j]);
        match verdict {
            Ok(why) => {
                let (first, second) = if (a.rank, a.op.index) <= (b.rank, b.op.index) {
                    (a, b)
                } else {
                    (b, a)
                };
                let key = (first.op.site, second.op.site);
                let made = &self.windows.made;
                self.found.entry(key).or_insert_with(|| Race {
                    first: first.clone(),
                    second: second.clone(),
                    bytes,
                    why,
                    made: made_on(made, second.rank, second.local_window),
                });
            }
            Err(Some(reason)) => {
                self.undecided.insert((i, reason));
                self.undecided.insert((j, reason));
            }
            Err(None) => {}
        }
    }

    /// What the pairing found, and what it could not decide, into `check`.
    fn finish(self, sites: Option<&SiteTable>, check: &mut RaceCheck) {
        for (i, reason) in self.undecided {
            let a = &self.accesses[i];
            check.unchecked.push((a.rank, a.op.clone(), reason));
        }
        check.findings = self
            .found
            .into_values()
            .map(|race| race.finding(sites))
            .chain(self.beyond.into_values().map(|b| b.finding(sites)))
            .collect();
    }
}

/// The exposure epoch (the target's `MPI_Win_post` record, from its
/// `posts`) of a PSCW operation `a` on `key`'s target window; `None`
/// outside PSCW. The `n`-th `MPI_Win_start` of an origin whose group
/// holds the target matches the target's `n`-th `MPI_Win_post` whose
/// group holds the origin (MPI-4.0 §12.5.2).
pub(crate) fn exposure(
    posts: &HashMap<(WinKey, i32), Posts>,
    key: (WinKey, i32),
    a: &Access,
) -> Result<Option<u64>, &'static str> {
    let Epoch::Start { nth, .. } = a.epoch else {
        return Ok(None);
    };
    let posts = posts.get(&key).ok_or(why::GROUP)?;
    let mut seen = 0;
    for &(index, group) in posts {
        let group = group.ok_or(why::GROUP)?;
        if holds(group, a.rank) {
            seen += 1;
            if seen == nth {
                return Ok(Some(index));
            }
        }
    }
    Err(why::GROUP)
}

/// Pairs of overlapping operations one run's check looks at, at most
/// (a second or two); past it the rest are named as not checked.
const MAX_COMPARED: usize = 1_000_000;

/// Findings of operations outside their target's window kept per run: one
/// per call site, and no more than this many sites.
const MAX_BEYOND: usize = 64;

/// The call that made window `local` on `rank`, from `made`.
pub(crate) fn made_on(made: &[BTreeMap<u64, Made>], rank: i32, local: u64) -> Option<Op> {
    made.get(usize::try_from(rank).ok()?)?
        .get(&local)
        .map(|m| m.made.clone())
}

/// `window N (made by `MPI_Win_allocate` at app.c:14)`: a window as its
/// origin names it.
pub(crate) fn window_name(sites: Option<&SiteTable>, local: u64, made: Option<&Op>) -> String {
    let Some(op) = made else {
        return format!("window {local}");
    };
    let place = sites
        .and_then(|s| s.get(op.site))
        .filter(|s| s.line > 0)
        .map(|s| format!(" at {}", mbh_trace::place(&s.file, s.line, 0, None)))
        .unwrap_or_default();
    format!("window {local} (made by `{}`{place})", op.kind.mpi_name())
}

/// An operation that reaches outside the memory its target exposes in the
/// window (MPI-4.0 §12.3: the target displacement and the target
/// datatype's extent must lie within the target window; MPI need not
/// check it).
#[derive(Debug)]
struct Beyond {
    access: Access,
    bytes: (i64, i64),
    size: u64,
    made: Option<Op>,
}

impl Beyond {
    fn new(access: &Access, bytes: (i64, i64), size: u64, made: Option<Op>) -> Beyond {
        Beyond {
            access: access.clone(),
            bytes,
            size,
            made,
        }
    }

    fn finding(self, sites: Option<&SiteTable>) -> Finding {
        let a = &self.access;
        let (lo, hi) = self.bytes;
        let window = window_name(sites, a.local_window, self.made.as_ref());
        let message = format!(
            "{} by rank {} reaches bytes {lo}..{hi} of rank {}'s {window}, which exposes {} bytes",
            a.words(),
            a.rank,
            a.target,
            self.size
        );
        let mut finding = Finding::new(FindingKind::BufferOverflow, Severity::Error, message);
        finding.ranks = vec![a.rank];
        let label = format!("the target's window ends at byte {}", self.size);
        match sites.and_then(|s| s.get(a.op.site)) {
            Some(site) => {
                finding
                    .locations
                    .push(site_location(site, a.rank, Role::Primary, &label))
            }
            None => finding.notes.push(label),
        }
        finding.notes.push(
            "the target displacement times the target's displacement unit, plus the target datatype's extent, must stay within the memory the target gave the window (MPI-4.0 §12.3); MPI does not check it".to_owned(),
        );
        finding.help = Some(
            "check the target displacement and count against the size and displacement unit the target passed when it made the window".to_owned(),
        );
        finding
    }
}

/// Walks one origin's records: its operations with their epochs, and
/// each window's walk state at the end (its posts).
fn walk(
    trace: &RankTrace,
    made: &BTreeMap<u64, Made>,
    unchecked: &mut Vec<(i32, Op, &'static str)>,
) -> (Vec<Access>, HashMap<WinKey, Walk>) {
    let mut walks: HashMap<u64, Walk> = HashMap::new();
    let mut found: Vec<Access> = Vec::new();
    // Lock-epoch operations waiting for the call that completes them:
    // (index in `found`, window, target).
    let mut pending: Vec<(usize, u64, i32)> = Vec::new();
    for op in &trace.ops {
        let Some(call) = op.rma() else { continue };
        if call.failed || call.window == 0 || call.kind.makes_window() {
            continue;
        }
        let w = walks.entry(call.window).or_default();
        if !call.kind.is_rma_operation() {
            let of = match w.synchronize(op.index, &call) {
                Completes::Nothing => continue,
                Completes::Target(t) => Some(t),
                Completes::All => None,
            };
            // Completes the pending operations on the window to `of`
            // (None: all).
            pending.retain(|&(i, win, t)| {
                if win != call.window || of.is_some_and(|of| of != t) {
                    return true;
                }
                if let Epoch::Lock { completed, .. } = &mut found[i].epoch {
                    *completed = Some(op.index);
                }
                false
            });
            continue;
        }
        let Some(access) = w.access(trace.rank, op, &call, made, unchecked) else {
            continue;
        };
        if matches!(access.epoch, Epoch::Lock { .. }) {
            pending.push((found.len(), call.window, access.target));
        }
        found.push(access);
    }
    let walks = walks
        .into_iter()
        .filter_map(|(id, w)| Some((made.get(&id)?.key?, w)))
        .collect();
    (found, walks)
}

/// The lock-epoch operations a synchronization call completes at their
/// target.
enum Completes {
    Nothing,
    /// Those to one target.
    Target(i32),
    /// Those to every target.
    All,
}

impl Walk {
    /// Follows synchronization call `call` (record `index`) on the window;
    /// says which pending lock-epoch operations it completes.
    fn synchronize(&mut self, index: u64, call: &RmaCall) -> Completes {
        let target = call.target;
        match call.kind {
            OpKind::WinFence => {
                self.fences += 1;
                self.fence_open = call.assert & mbh_trace::rma::assert::NOSUCCEED == 0;
            }
            OpKind::WinLock if !call.proc_null => {
                if let Some(t) = target {
                    let exclusive = call.lock == Some(RmaLock::Exclusive);
                    self.locks.insert(t, (index, exclusive, 0));
                }
            }
            OpKind::WinUnlock => {
                if let Some(t) = target {
                    self.locks.remove(&t);
                    return Completes::Target(t);
                }
            }
            OpKind::WinLockAll => {
                self.lock_all = Some((index, 0));
                self.all_flushes.clear();
            }
            OpKind::WinUnlockAll => {
                self.lock_all = None;
                return Completes::All;
            }
            OpKind::WinFlush => {
                if let Some(t) = target {
                    if let Some(l) = self.locks.get_mut(&t) {
                        l.2 += 1;
                    }
                    *self.all_flushes.entry(t).or_insert(0) += 1;
                    return Completes::Target(t);
                }
            }
            OpKind::WinFlushAll => {
                for l in self.locks.values_mut() {
                    l.2 += 1;
                }
                if let Some(all) = &mut self.lock_all {
                    all.1 += 1;
                }
                return Completes::All;
            }
            OpKind::WinStart => self.begin_access_epoch(index, call.group),
            OpKind::WinComplete => {
                self.start = None;
                self.open_start.clear();
            }
            OpKind::WinPost => self.posts.push((index, call.group)),
            _ => {}
        }
        Completes::Nothing
    }

    /// Opens an access epoch (`MPI_Win_start`, record `index`) of `group`.
    fn begin_access_epoch(&mut self, index: u64, group: Option<u64>) {
        self.open_start.clear();
        if let Some(group) = group {
            for r in 0..mbh_trace::rma::GROUP_RANKS as i32 {
                if holds(group, r) {
                    let n = self.starts_of.entry(r).or_insert(0);
                    *n += 1;
                    self.open_start.insert(r, *n);
                }
            }
        }
        self.start = Some((index, group));
    }

    /// Operation `op` of origin `rank`, ready to pair; `None` when it is
    /// not checked (named in `unchecked` with why) or is outside any
    /// epoch (an epoch error, `rma-epoch`'s).
    fn access(
        &self,
        rank: i32,
        op: &Op,
        call: &RmaCall,
        made: &BTreeMap<u64, Made>,
        unchecked: &mut Vec<(i32, Op, &'static str)>,
    ) -> Option<Access> {
        let t = call.target?;
        let window = made.get(&call.window)?;
        let Some(key) = window.key else {
            unchecked.push((rank, op.clone(), why::UNKNOWN_WINDOW));
            return None;
        };
        if window.disp_unit.is_none() {
            unchecked.push((rank, op.clone(), why::DYNAMIC));
            return None;
        }
        let Some(data) = call.data else {
            unchecked.push((rank, op.clone(), why::HOLES));
            return None;
        };
        let epoch = match self.epoch(t) {
            Ok(epoch) => epoch,
            Err(Some(reason)) => {
                unchecked.push((rank, op.clone(), reason));
                return None;
            }
            Err(None) => return None,
        };
        Some(Access {
            rank,
            op: op.clone(),
            target: t,
            window: key,
            local_window: call.window,
            data,
            epoch,
            acc_op: call.acc_op,
            basic_type: call.basic_type,
        })
    }

    /// The epoch an operation to `target` is in now; `Err(None)` outside
    /// any (an epoch error, `rma-epoch`'s), `Err(Some(reason))` when it
    /// cannot be told.
    fn epoch(&self, target: i32) -> Result<Epoch, Option<&'static str>> {
        let flushes_all = self.all_flushes.get(&target).copied().unwrap_or(0);
        if let Some(&(opened, exclusive, flushes)) = self.locks.get(&target) {
            Ok(Epoch::Lock {
                opened,
                exclusive,
                flushes,
                completed: None,
            })
        } else if let Some((opened, all)) = self.lock_all {
            Ok(Epoch::Lock {
                opened,
                exclusive: false,
                flushes: all + flushes_all,
                completed: None,
            })
        } else if let Some((opened, group)) = self.start {
            match (group, self.open_start.get(&target)) {
                (Some(_), Some(&nth)) => Ok(Epoch::Start { nth, opened }),
                (None, _) => Err(Some(why::GROUP)),
                // Outside the group: an epoch error (rma-epoch).
                (Some(_), None) => Err(None),
            }
        } else if self.fence_open {
            Ok(Epoch::Fence(self.fences))
        } else {
            // Outside any epoch: an epoch error (rma-epoch).
            Err(None)
        }
    }
}

/// Why nothing orders a race's two operations.
#[derive(Debug, Clone, Copy)]
enum Why {
    SameFence,
    SameStart,
    SameExposure,
    SameLock,
    SharedLocks,
}

/// A race found: its two operations (in rank, then record order).
#[derive(Debug)]
struct Race {
    first: Access,
    second: Access,
    bytes: (i64, i64),
    why: Why,
    /// The call that made the window, on the second's origin.
    made: Option<Op>,
}

impl Race {
    fn finding(self, sites: Option<&SiteTable>) -> Finding {
        let (a, b) = (&self.first, &self.second);
        let target = a.target;
        let window = window_name(sites, b.local_window, self.made.as_ref());
        let (lo, hi) = self.bytes;
        let bytes = if hi - lo == 1 {
            format!("byte {lo}")
        } else {
            format!("bytes {lo}..{hi}")
        };
        let who = |x: &Access| format!("{} by rank {}", x.words(), x.rank);
        let message = format!(
            "{} and {} race on {bytes} of rank {target}'s {window}",
            who(a),
            who(b)
        );
        let why = match self.why {
            Why::SameFence => "both are in the same fence epoch: nothing completes either before the next `MPI_Win_fence`".to_owned(),
            Why::SameExposure => format!("both are in the same exposure epoch of rank {target} (one `MPI_Win_post` to its `MPI_Win_wait`): the access epochs of two origins are not ordered"),
            Why::SameStart => format!("both are in one access epoch of rank {} (`MPI_Win_start` to `MPI_Win_complete`), which does not order its operations", a.rank),
            Why::SameLock => format!("both are in one lock epoch of rank {} with no `MPI_Win_flush` of rank {target} between them", a.rank),
            Why::SharedLocks => format!("both run under shared locks of rank {target} (`MPI_LOCK_SHARED` or `MPI_Win_lock_all`), which do not exclude each other, and no message, collective or other one-sided operation orders one epoch's end before the other operation"),
        };
        let conflict = match (a.writes(), b.writes()) {
            (true, true) if a.is_accumulate() && b.is_accumulate() => {
                "both change them with different operations or basic datatypes, which are not atomic with each other"
            }
            (true, true) => "both write them",
            _ => "one writes what the other reads",
        };
        let mut finding = Finding::new(FindingKind::RmaRace, Severity::Error, message);
        finding.ranks = if a.rank == b.rank {
            vec![a.rank]
        } else {
            vec![a.rank, b.rank]
        };
        let site = |op: &Op| sites.and_then(|s| s.get(op.site));
        let label = |x: &Access, n: u8| {
            format!(
                "({n}) {} by rank {} to rank {target}, {bytes} of its window",
                x.words(),
                x.rank
            )
        };
        for (x, n, role) in [(b, 2, Role::Primary), (a, 1, Role::Secondary)] {
            match site(&x.op) {
                Some(s) => finding
                    .locations
                    .push(site_location(s, x.rank, role, &label(x, n))),
                None => finding.notes.push(label(x, n)),
            }
        }
        finding.notes.push(format!("{conflict}; {why}"));
        finding.help = Some(match self.why {
            Why::SameFence => "separate the two operations by a `MPI_Win_fence`, or make them touch different bytes (MPI-4.0 §12.7)".to_owned(),
            Why::SameExposure | Why::SameStart => "order the two operations with a new epoch between them (`MPI_Win_complete`/`MPI_Win_wait`, then a new `MPI_Win_start`/`MPI_Win_post`), or make them touch different bytes (MPI-4.0 §12.7)".to_owned(),
            Why::SameLock => format!("call `MPI_Win_flush({target}, win)` between the two operations, or make them touch different bytes (MPI-4.0 §12.7)"),
            Why::SharedLocks => "lock the target with `MPI_LOCK_EXCLUSIVE` on both sides, use accumulate operations with the same operation and datatype (atomic with each other), or order the epochs (a message after one `MPI_Win_unlock`, received before the other lock) (MPI-4.0 §12.7)".to_owned(),
        });
        finding
    }
}

/// Whether `op` may let news travel outside messages and collectives,
/// and whether it may take news in: one-sided writes, the end of an
/// exclusive lock (`exclusive_unlock`), `MPI_Win_post` and
/// `MPI_Win_complete` send it; one-sided reads, lock acquisitions,
/// `MPI_Win_start` and `MPI_Win_wait` take it. A shared lock's end sends
/// nothing: shared locks do not exclude each other.
fn rma_news(op: &Op, exclusive_unlock: bool) -> (bool, bool) {
    let Some(call) = op.rma() else {
        return (false, false);
    };
    match call.kind {
        OpKind::Get | OpKind::Rget => (false, true),
        OpKind::GetAccumulate
        | OpKind::RgetAccumulate
        | OpKind::FetchAndOp
        | OpKind::CompareAndSwap => (call.acc_op != acc_op::NO_OP, true),
        kind if kind.is_rma_operation() => (true, false),
        OpKind::WinUnlock => (exclusive_unlock, false),
        OpKind::WinPost | OpKind::WinComplete => (true, false),
        OpKind::WinLock | OpKind::WinLockAll | OpKind::WinStart | OpKind::WinWait => (false, true),
        _ => (false, false),
    }
}

/// Vector clocks of the records of a run: program order, matched sends
/// to their receives, and every collective taken as a barrier of the
/// ranks that made it (which can only add order: a race is reported
/// only where even these leave the two unordered).
struct Clocks {
    /// Per rank, per record: the clock after it, `None` where the walk
    /// could not reach (a receive whose send no trace holds...).
    at: Vec<Vec<Option<Vec<u32>>>>,
    /// Per rank: the highest count of its records any RMA writer's clock
    /// covers.
    writers_cover: Vec<u32>,
    /// Per rank: the index of its first RMA reader (u64::MAX: none).
    first_reader: Vec<u64>,
}

/// How an epoch's end and another rank's operation are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    /// Messages and collectives order the end before the operation.
    Before,
    /// A one-sided write after the end and a one-sided read (lock, PSCW
    /// call) before the operation may carry the order: not known.
    Maybe,
    /// Nothing can.
    Not,
}

/// A collective's identity on every rank: its communicator (or window)
/// name and ordinal.
type CollKey = (u64, bool, u32);

/// Records beyond which clocks are not kept (ranks × records).
const CLOCK_LIMIT: usize = 20_000_000;

impl Clocks {
    fn new(traces: &[Option<RankTrace>]) -> Clocks {
        let n = traces.len();
        let empty = Clocks {
            at: vec![Vec::new(); n],
            writers_cover: vec![u32::MAX; n],
            first_reader: vec![0; n],
        };
        let records: usize = traces.iter().flatten().map(|t| t.ops.len()).sum();
        if records.saturating_mul(n) > CLOCK_LIMIT {
            return empty;
        }
        let joins = Joins::of(traces);
        let at = ClockWalk::new(traces, &joins).run();
        let (writers_cover, first_reader) = news(traces, &at);
        Clocks {
            at,
            writers_cover,
            first_reader,
        }
    }

    /// Whether record `end` of rank `a` (an epoch's end) happens before
    /// record `op` of rank `b` ([`Order`]); `None` when the clocks do not
    /// reach them.
    fn order(&self, a: i32, end: u64, b: i32, op: u64) -> Option<Order> {
        let (a, b) = (usize::try_from(a).ok()?, usize::try_from(b).ok()?);
        let clock = self.at.get(b)?.get(usize::try_from(op).ok()?)?.as_ref()?;
        self.at.get(a)?.get(usize::try_from(end).ok()?)?.as_ref()?;
        if u64::from(clock[a]) > end {
            return Some(Order::Before);
        }
        // A write whose clock covers the end, and a read before `op`.
        let written = u64::from(self.writers_cover[a]) > end;
        let read = (0..clock.len()).any(|y| {
            let before = if y == b { op } else { u64::from(clock[y]) };
            self.first_reader[y] < before
        });
        Some(if written && read {
            Order::Maybe
        } else {
            Order::Not
        })
    }
}

/// What joins the ranks' clocks: each rank's collectives, keyed the same
/// on every rank, with how many ranks make each, and the sends its
/// receives took.
struct Joins {
    /// Per rank: record index -> the collective's key.
    coll: Vec<HashMap<u64, CollKey>>,
    /// How many ranks make each collective.
    members: HashMap<CollKey, usize>,
    /// Per rank: a receive's record index -> the send it took (sender,
    /// record).
    took: Vec<HashMap<u64, (i32, u64)>>,
}

impl Joins {
    fn of(traces: &[Option<RankTrace>]) -> Joins {
        let n = traces.len();
        let mut joins = Joins {
            coll: vec![HashMap::new(); n],
            members: HashMap::new(),
            took: vec![HashMap::new(); n],
        };
        for (r, t) in traces.iter().enumerate() {
            let Some(t) = t else { continue };
            let mut ordinal: HashMap<(u64, bool), u32> = HashMap::new();
            for (i, op) in t.ops.iter().enumerate() {
                if let Some(m) = op.matched_send() {
                    joins.took[r].insert(i as u64, (m.send.sender, m.send.record));
                    continue;
                }
                let name = match op.kind.class() {
                    mbh_trace::op::OpClass::Collective => Some((op.comm, false)),
                    mbh_trace::op::OpClass::Rma => match op.kind {
                        k if k.makes_window() => Some((op.comm, false)),
                        // Fences and frees of the windows of one
                        // communicator, in one sequence.
                        OpKind::WinFence | OpKind::WinFree => Some((op.comm, true)),
                        _ => None,
                    },
                    _ => None,
                };
                if let Some(name) = name {
                    let k = ordinal.entry(name).or_insert(0);
                    *k += 1;
                    let key = (name.0, name.1, *k);
                    joins.coll[r].insert(i as u64, key);
                    *joins.members.entry(key).or_insert(0) += 1;
                }
            }
        }
        joins
    }
}

/// The walk that gives every record its clock: each rank moves on until
/// a receive whose send has no clock yet, or a collective that not all
/// its members reached; rounds go on while any rank moves.
struct ClockWalk<'a> {
    traces: &'a [Option<RankTrace>],
    joins: &'a Joins,
    /// Per rank, per record: the clock after it.
    at: Vec<Vec<Option<Vec<u32>>>>,
    /// Per rank: its next record.
    cursor: Vec<usize>,
    /// Per rank: its clock now.
    clock: Vec<Vec<u32>>,
    /// The ranks waiting in each collective.
    arrived: HashMap<CollKey, Vec<usize>>,
}

impl<'a> ClockWalk<'a> {
    fn new(traces: &'a [Option<RankTrace>], joins: &'a Joins) -> ClockWalk<'a> {
        let n = traces.len();
        ClockWalk {
            traces,
            joins,
            at: traces
                .iter()
                .map(|t| vec![None; t.as_ref().map_or(0, |t| t.ops.len())])
                .collect(),
            cursor: vec![0usize; n],
            clock: vec![vec![0; n]; n],
            arrived: HashMap::new(),
        }
    }

    /// The clocks after every record.
    fn run(mut self) -> Vec<Vec<Option<Vec<u32>>>> {
        loop {
            let mut moved = false;
            for r in 0..self.traces.len() {
                moved |= self.advance(r);
            }
            if !moved {
                break;
            }
        }
        self.at
    }

    /// Moves rank `r` as far as it can go; whether it moved.
    fn advance(&mut self, r: usize) -> bool {
        let len = self.traces[r].as_ref().map_or(0, |t| t.ops.len());
        let mut moved = false;
        while self.cursor[r] < len {
            let i = self.cursor[r];
            let mut c = self.clock[r].clone();
            if let Some(&(sender, record)) = self.joins.took[r].get(&(i as u64)) {
                let sent = usize::try_from(sender)
                    .ok()
                    .and_then(|s| self.at.get(s)?.get(usize::try_from(record).ok()?)?.as_ref());
                match sent {
                    Some(s) => c.iter_mut().zip(s).for_each(|(x, y)| *x = (*x).max(*y)),
                    None => break,
                }
            }
            if let Some(key) = self.joins.coll[r].get(&(i as u64)).copied() {
                if !self.arrive(r, key) {
                    break;
                }
                moved = true;
                continue;
            }
            c[r] = i as u32 + 1;
            self.at[r][i] = Some(c.clone());
            self.clock[r] = c;
            self.cursor[r] += 1;
            moved = true;
        }
        moved
    }

    /// Rank `r` reaches collective `key`: the last to arrive lets every
    /// member leave with the join of their clocks (true); the others wait
    /// (false).
    fn arrive(&mut self, r: usize, key: CollKey) -> bool {
        let n = self.traces.len();
        let list = self.arrived.entry(key).or_default();
        if !list.contains(&r) {
            list.push(r);
        }
        if list.len() < self.joins.members[&key] {
            return false;
        }
        let mut join = vec![0u32; n];
        for &m in list.iter() {
            join.iter_mut()
                .zip(&self.clock[m])
                .for_each(|(x, y)| *x = (*x).max(*y));
        }
        for &m in list.clone().iter() {
            let mi = self.cursor[m];
            let mut mc = join.clone();
            mc[m] = mi as u32 + 1;
            self.clock[m] = mc.clone();
            self.at[m][mi] = Some(mc);
            self.cursor[m] += 1;
        }
        true
    }
}

/// Per rank: the highest count of its records any RMA writer's clock
/// covers, and the index of its first RMA reader (u64::MAX: none), from
/// the clocks `at` ([`rma_news`] says which records are which).
fn news(traces: &[Option<RankTrace>], at: &[Vec<Option<Vec<u32>>>]) -> (Vec<u32>, Vec<u64>) {
    let n = traces.len();
    let mut writers_cover = vec![0u32; n];
    let mut first_reader = vec![u64::MAX; n];
    for (r, t) in traces.iter().enumerate() {
        let Some(t) = t else { continue };
        // The exclusive locks held: (window, target).
        let mut exclusive: BTreeSet<(u64, i32)> = BTreeSet::new();
        for (i, op) in t.ops.iter().enumerate() {
            let mut ends_exclusive = false;
            if let Some(call) = op.rma() {
                let key = (call.window, call.target.unwrap_or(-1));
                match call.kind {
                    OpKind::WinLock if call.lock == Some(RmaLock::Exclusive) => {
                        exclusive.insert(key);
                    }
                    OpKind::WinUnlock => ends_exclusive = exclusive.remove(&key),
                    _ => {}
                }
            }
            let (writer, reader) = rma_news(op, ends_exclusive);
            if writer {
                match &at[r][i] {
                    Some(c) => writers_cover
                        .iter_mut()
                        .zip(c)
                        .for_each(|(x, y)| *x = (*x).max(*y)),
                    // A writer never reached: it may cover anything.
                    None => writers_cover.iter_mut().for_each(|x| *x = u32::MAX),
                }
            }
            if reader && first_reader[r] == u64::MAX {
                first_reader[r] = i as u64;
            }
        }
    }
    (writers_cover, first_reader)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mbh_trace::op::flags;
    use mbh_trace::rma::operation_tag;

    const EXCL: i32 = RmaLock::Exclusive as i32;
    const SHARED: i32 = RmaLock::Shared as i32;
    const SUM: u8 = 3;
    const INT: u8 = 3;

    /// A call of a hand-built trace.
    #[derive(Clone, Copy)]
    enum C {
        /// a window of this displacement unit and 1 MiB
        Make(i32),
        /// a window of this displacement unit and size in bytes
        MakeOf(i32, u64),
        Fence,
        Lock(i32, i32),
        Unlock(i32),
        LockAll,
        UnlockAll,
        Flush(i32),
        /// kind, target, disp, bytes, acc op
        Rma(OpKind, i32, i64, i32, u8),
        Barrier,
        Send(i32),
        /// a receive that took record `1` of rank `0`
        Recv(i32, u64),
        Free,
        /// `MPI_Win_post` / `MPI_Win_start` of a group (bits)
        Post(u64),
        Start(u64),
        Complete,
        Wait,
        /// the owner's own range of window 1: first byte, end, tag bits
        /// (`mbh_trace::window_access::bits`)
        Local(u64, u64, i32),
    }

    fn trace(rank: i32, size: i32, calls: &[C]) -> RankTrace {
        let mut ops: Vec<Op> = Vec::new();
        let push = |ops: &mut Vec<Op>, mut op: Op| {
            op.index = ops.len() as u64;
            op.site = (rank as u32 + 1) * 100 + ops.len() as u32;
            op.flags |= flags::RETURNED;
            ops.push(op);
        };
        for &c in calls {
            let mut op = Op::new(0, OpKind::Barrier);
            op.comm = WORLD_COMM;
            op.request = 1;
            op.peer = -1;
            match c {
                C::Make(unit) => {
                    op.kind = OpKind::WinAllocate;
                    op.count = unit;
                    op.aux = 1 << 20;
                }
                C::MakeOf(unit, size) => {
                    op.kind = OpKind::WinAllocate;
                    op.count = unit;
                    op.aux = size;
                }
                C::Fence => op.kind = OpKind::WinFence,
                C::Lock(t, lock) => {
                    op.kind = OpKind::WinLock;
                    op.peer = t;
                    op.count = lock;
                }
                C::Unlock(t) => {
                    op.kind = OpKind::WinUnlock;
                    op.peer = t;
                }
                C::LockAll => op.kind = OpKind::WinLockAll,
                C::UnlockAll => op.kind = OpKind::WinUnlockAll,
                C::Flush(t) => {
                    op.kind = OpKind::WinFlush;
                    op.peer = t;
                }
                C::Rma(kind, t, disp, bytes, acc) => {
                    op.kind = kind;
                    op.peer = t;
                    op.aux = disp as u64;
                    op.count = bytes;
                    op.tag = operation_tag(acc, if acc != 0 { INT } else { 0 }, 0);
                }
                C::Barrier => op.request = 0,
                C::Send(to) => {
                    op.kind = OpKind::Send;
                    op.peer = to;
                }
                C::Recv(from, record) => {
                    op.kind = OpKind::Recv;
                    op.peer = from;
                    push(&mut ops, op.clone());
                    let mut m = Op::new(0, OpKind::Matched);
                    m.peer = from;
                    m.aux = record;
                    m.request = ops.len() as u64 - 1;
                    m.count = -1;
                    push(&mut ops, m);
                    continue;
                }
                C::Free => op.kind = OpKind::WinFree,
                C::Post(group) => {
                    op.kind = OpKind::WinPost;
                    op.aux = group;
                }
                C::Start(group) => {
                    op.kind = OpKind::WinStart;
                    op.aux = group;
                }
                C::Complete => op.kind = OpKind::WinComplete,
                C::Wait => op.kind = OpKind::WinWait,
                C::Local(first, end, bits) => {
                    op.kind = OpKind::WindowAccess;
                    op.aux = first;
                    op.comm = end;
                    op.tag = bits;
                }
            }
            push(&mut ops, op);
        }
        RankTrace::finalized(rank, size, ops)
    }

    fn check(ranks: &[&[C]]) -> RaceCheck {
        let traces: Vec<Option<RankTrace>> = ranks
            .iter()
            .enumerate()
            .map(|(r, calls)| Some(trace(r as i32, ranks.len() as i32, calls)))
            .collect();
        rma_race_check(None, &traces)
    }

    fn put(t: i32, disp: i64) -> C {
        C::Rma(OpKind::Put, t, disp, 4, 0)
    }

    /// Many operations of one origin on the same bytes (a benchmark's
    /// loop; 2,000 puts make 2 million pairs) stop at the check's budget
    /// of pairs: the race between the first ones is found, the rest named
    /// as not checked.
    #[test]
    fn operations_past_the_pair_budget_are_named_not_checked() {
        use C::*;
        let mut origin = vec![Make(4), LockAll];
        origin.extend(std::iter::repeat_n(put(0, 0), 2_000));
        origin.push(UnlockAll);
        let found = check(&[&[Make(4), Barrier], &origin]);
        assert!(!found.findings.is_empty(), "the race of the first pairs");
        assert!(
            found
                .unchecked
                .iter()
                .any(|(_, _, why)| *why == why::TOO_MANY),
            "the rest named"
        );
    }

    /// A put past the end of the target's window (in the target's
    /// displacement unit) is reported at the put; one inside it is not.
    #[test]
    fn an_operation_past_its_targets_window_is_a_buffer_overflow() {
        use C::*;
        // Rank 0 exposes 16 bytes in units of 4: displacements 0..4.
        let target = [MakeOf(4, 16), Fence, Fence];
        let inside = check(&[&target, &[MakeOf(4, 16), Fence, put(0, 3), Fence]]);
        assert!(inside.findings.is_empty(), "{:?}", inside.findings);
        let past = check(&[&target, &[MakeOf(4, 16), Fence, put(0, 4), Fence]]);
        let kinds: Vec<FindingKind> = past.findings.iter().map(|f| f.kind).collect();
        assert_eq!(kinds, [FindingKind::BufferOverflow], "{:?}", past.findings);
        assert_eq!(
            past.findings[0].message,
            "`MPI_Put` by rank 1 reaches bytes 16..20 of rank 0's window 1 (made by `MPI_Win_allocate`), which exposes 16 bytes"
        );
        assert_eq!(past.findings[0].ranks, [1]);
    }

    use C::*;

    #[test]
    fn two_puts_in_one_fence_epoch_race_on_the_same_bytes_only() {
        let target: &[C] = &[Make(4), Fence, Fence, Free];
        let same = check(&[
            target,
            &[Make(4), Fence, put(0, 1), Fence, Free],
            &[Make(4), Fence, put(0, 1), Fence, Free],
        ]);
        assert_eq!(same.findings.len(), 1, "{:?}", same.findings);
        let f = &same.findings[0];
        assert_eq!(f.kind, FindingKind::RmaRace);
        assert_eq!(f.ranks, [1, 2]);
        assert!(
            f.message.contains("bytes 4..8 of rank 0's window 1"),
            "{}",
            f.message
        );
        assert!(f.notes[2].contains("same fence epoch"), "{:?}", f.notes);
        assert!(same.unchecked.is_empty());
        // Disjoint bytes: displacement 1 and 2 in units of 4.
        let apart = check(&[
            target,
            &[Make(4), Fence, put(0, 1), Fence, Free],
            &[Make(4), Fence, put(0, 2), Fence, Free],
        ]);
        assert!(apart.findings.is_empty(), "{:?}", apart.findings);
        // The target's unit decides: in bytes, displacements 1 and 2 of
        // four bytes overlap.
        let bytes = check(&[
            &[Make(1), Fence, Fence, Free],
            &[Make(4), Fence, put(0, 1), Fence, Free],
            &[Make(4), Fence, put(0, 2), Fence, Free],
        ]);
        assert_eq!(bytes.findings.len(), 1);
        assert!(
            bytes.findings[0].message.contains("bytes 2..5"),
            "{}",
            bytes.findings[0].message
        );
    }

    #[test]
    fn a_put_and_a_get_race_in_one_fence_epoch_not_in_two() {
        let target: &[C] = &[Make(4), Fence, Fence, Fence, Free];
        let get = C::Rma(OpKind::Get, 0, 0, 4, 0);
        let one = check(&[
            target,
            &[Make(4), Fence, put(0, 0), Fence, Fence, Free],
            &[Make(4), Fence, get, Fence, Fence, Free],
        ]);
        assert_eq!(one.findings.len(), 1);
        let two = check(&[
            target,
            &[Make(4), Fence, put(0, 0), Fence, Fence, Free],
            &[Make(4), Fence, Fence, get, Fence, Free],
        ]);
        assert!(two.findings.is_empty(), "{:?}", two.findings);
        // Two gets never race.
        let reads = check(&[
            target,
            &[Make(4), Fence, get, Fence, Fence, Free],
            &[Make(4), Fence, get, Fence, Fence, Free],
        ]);
        assert!(reads.findings.is_empty());
    }

    fn locked(lock: i32, op: C) -> Vec<C> {
        vec![
            Make(4),
            Barrier,
            Lock(0, lock),
            op,
            Unlock(0),
            Barrier,
            Free,
        ]
    }

    #[test]
    fn exclusive_locks_serialize_shared_ones_do_not() {
        let target: &[C] = &[Make(4), Barrier, Barrier, Free];
        let excl = check(&[target, &locked(EXCL, put(0, 0)), &locked(EXCL, put(0, 0))]);
        assert!(excl.findings.is_empty(), "{:?}", excl.findings);
        let mixed = check(&[target, &locked(EXCL, put(0, 0)), &locked(SHARED, put(0, 0))]);
        assert!(mixed.findings.is_empty());
        let shared = check(&[
            target,
            &locked(SHARED, put(0, 0)),
            &locked(SHARED, put(0, 0)),
        ]);
        assert_eq!(shared.findings.len(), 1, "{:?}", shared.unchecked);
        assert!(shared.findings[0].notes[2].contains("shared locks"));
        // lock_all is shared.
        let all = |op| vec![Make(4), Barrier, LockAll, op, UnlockAll, Barrier, Free];
        let both = check(&[target, &all(put(0, 0)), &all(put(0, 0))]);
        assert_eq!(both.findings.len(), 1);
    }

    #[test]
    fn a_message_after_an_unlock_orders_shared_epochs() {
        let target: &[C] = &[Make(4), Barrier, Barrier, Free];
        // Rank 1: records 0 make, 1 barrier, 2 lock, 3 put, 4 unlock, 5 send.
        let first = [
            Make(4),
            Barrier,
            Lock(0, SHARED),
            put(0, 0),
            Unlock(0),
            Send(2),
            Barrier,
            Free,
        ];
        let second = [
            Make(4),
            Barrier,
            Recv(1, 5),
            Lock(0, SHARED),
            put(0, 0),
            Unlock(0),
            Barrier,
            Free,
        ];
        let ordered = check(&[target, &first, &second]);
        assert!(ordered.findings.is_empty(), "{:?}", ordered.findings);
        assert!(ordered.unchecked.is_empty(), "{:?}", ordered.unchecked);
        // A barrier between the epochs orders them too.
        let a = [
            Make(4),
            Barrier,
            Lock(0, SHARED),
            put(0, 0),
            Unlock(0),
            Barrier,
            Barrier,
            Free,
        ];
        let b = [
            Make(4),
            Barrier,
            Barrier,
            Lock(0, SHARED),
            put(0, 0),
            Unlock(0),
            Barrier,
            Free,
        ];
        let target3: &[C] = &[Make(4), Barrier, Barrier, Barrier, Free];
        assert!(check(&[target3, &a, &b]).findings.is_empty());
    }

    #[test]
    fn one_sided_news_keeps_shared_epochs_undecided() {
        // Rank 1 puts, then raises a flag; rank 2 reads the flag first.
        let target: &[C] = &[Make(4), Barrier, Barrier, Free];
        let flag = C::Rma(OpKind::Accumulate, 0, 8, 4, SUM);
        let poll = C::Rma(OpKind::FetchAndOp, 0, 8, 4, acc_op::NO_OP);
        let a = [
            Make(4),
            Barrier,
            LockAll,
            put(0, 0),
            Flush(0),
            flag,
            UnlockAll,
            Barrier,
            Free,
        ];
        let b = [
            Make(4),
            Barrier,
            LockAll,
            poll,
            Flush(0),
            C::Rma(OpKind::Get, 0, 0, 4, 0),
            UnlockAll,
            Barrier,
            Free,
        ];
        let found = check(&[target, &a, &b]);
        assert!(found.findings.is_empty(), "{:?}", found.findings);
        assert!(found.unchecked.iter().any(|u| u.2 == why::CLOCKS));
    }

    #[test]
    fn accumulates_are_atomic_with_the_same_op_and_type_only() {
        let target: &[C] = &[Make(4), Barrier, Barrier, Free];
        let sum = C::Rma(OpKind::Accumulate, 0, 0, 4, SUM);
        let clean = check(&[target, &locked(SHARED, sum), &locked(SHARED, sum)]);
        assert!(clean.findings.is_empty(), "{:?}", clean.findings);
        let read = C::Rma(OpKind::FetchAndOp, 0, 0, 4, acc_op::NO_OP);
        assert!(
            check(&[target, &locked(SHARED, sum), &locked(SHARED, read)])
                .findings
                .is_empty()
        );
        let racy = check(&[target, &locked(SHARED, sum), &locked(SHARED, put(0, 0))]);
        assert_eq!(racy.findings.len(), 1);
        assert!(
            racy.findings[0]
                .message
                .contains("`MPI_Accumulate` with `MPI_SUM` by rank 1"),
            "{}",
            racy.findings[0].message
        );
        let replace = C::Rma(OpKind::Accumulate, 0, 0, 4, acc_op::REPLACE);
        assert_eq!(
            check(&[target, &locked(SHARED, sum), &locked(SHARED, replace)])
                .findings
                .len(),
            1
        );
    }

    #[test]
    fn one_origin_races_in_one_epoch_unless_flushed() {
        let target: &[C] = &[Make(4), Barrier, Barrier, Free];
        let get = C::Rma(OpKind::Get, 0, 0, 4, 0);
        let racy = [
            Make(4),
            Barrier,
            Lock(0, EXCL),
            put(0, 0),
            get,
            Unlock(0),
            Barrier,
            Free,
        ];
        let found = check(&[target, &racy]);
        assert_eq!(found.findings.len(), 1);
        assert_eq!(found.findings[0].ranks, [1]);
        let flushed = [
            Make(4),
            Barrier,
            Lock(0, EXCL),
            put(0, 0),
            Flush(0),
            get,
            Unlock(0),
            Barrier,
            Free,
        ];
        assert!(check(&[target, &flushed]).findings.is_empty());
        let epochs = [
            Make(4),
            Barrier,
            Lock(0, EXCL),
            put(0, 0),
            Unlock(0),
            Lock(0, EXCL),
            get,
            Unlock(0),
            Barrier,
            Free,
        ];
        assert!(check(&[target, &epochs]).findings.is_empty());
    }

    #[test]
    fn holes_and_dynamic_windows_are_named_not_checked() {
        let target: &[C] = &[Make(4), Fence, Fence, Free];
        let holes = C::Rma(OpKind::Put, 0, 0, -1, 0);
        let found = check(&[
            target,
            &[Make(4), Fence, holes, Fence, Free],
            &[Make(4), Fence, put(0, 0), Fence, Free],
        ]);
        assert!(found.findings.is_empty());
        assert!(found.unchecked.iter().any(|u| u.2 == why::HOLES));
        let mut traces: Vec<Option<RankTrace>> =
            [target, &[Make(4), Fence, put(0, 0), Fence, Free]]
                .iter()
                .enumerate()
                .map(|(r, c)| Some(trace(r as i32, 2, c)))
                .collect();
        for t in traces.iter_mut().flatten() {
            t.ops[0].kind = OpKind::WinCreateDynamic;
        }
        let dynamic = rma_race_check(None, &traces);
        assert!(
            dynamic.unchecked.iter().any(|u| u.2 == why::DYNAMIC),
            "{:?}",
            dynamic.unchecked
        );
    }

    #[test]
    fn origins_of_one_exposure_epoch_race_of_two_do_not() {
        let origin = |_r: i32| vec![Make(4), Start(0b1), put(0, 0), Complete, Free];
        let one = check(&[&[Make(4), Post(0b110), Wait, Free], &origin(1), &origin(2)]);
        assert_eq!(one.findings.len(), 1, "{:?}", one.unchecked);
        assert!(one.findings[0].notes[2].contains("same exposure epoch of rank 0"));
        let two = check(&[
            &[Make(4), Post(0b010), Wait, Post(0b100), Wait, Free],
            &origin(1),
            &origin(2),
        ]);
        assert!(two.findings.is_empty(), "{:?}", two.findings);
        assert!(two.unchecked.is_empty(), "{:?}", two.unchecked);
        // A group not known: not decided, and said so.
        let unknown = check(&[&[Make(4), Post(0), Wait, Free], &origin(1), &origin(2)]);
        assert!(unknown.findings.is_empty());
        assert!(unknown.unchecked.iter().any(|u| u.2 == why::GROUP));
    }

    /// The owner's own ranges (`rma_local`): a store in the put's fence
    /// epoch races, one in the epoch before does not, a load meets only
    /// writes, bytes apart meet nothing; a coarse range or an unwatched
    /// epoch names the put as not checked; a PSCW range meets the
    /// operations of its own exposure only.
    #[test]
    fn an_owners_ranges_race_with_the_operations_of_their_epoch_only() {
        use crate::rma_local::why as local;
        use mbh_trace::window_access::bits::{COARSE, PSCW, STORE, UNWATCHED};
        let origin: &[C] = &[Make(4), Fence, put(0, 2), Fence, Fence, Free];
        let owner = |calls: &[C]| check(&[calls, origin]);
        let race = owner(&[Make(4), Fence, Local(8, 12, STORE), Fence, Fence, Free]);
        assert_eq!(race.findings.len(), 1, "{:?}", race.unchecked);
        let f = &race.findings[0];
        assert!(
            f.message
                .contains("`MPI_Put` by rank 1 and a store by rank 0 race on bytes 8..12"),
            "{}",
            f.message
        );
        assert_eq!(f.ranks, [1, 0]);
        let before = owner(&[Make(4), Local(8, 12, STORE), Fence, Fence, Fence, Free]);
        assert!(
            before.findings.is_empty(),
            "fence epoch 0: before the first fence"
        );
        let after = owner(&[Make(4), Fence, Fence, Local(0, 64, STORE), Fence, Free]);
        assert!(after.findings.is_empty(), "the next epoch");
        let load = owner(&[Make(4), Fence, Local(10, 11, 0), Fence, Fence, Free]);
        assert_eq!(load.findings.len(), 1, "a load of a put's byte");
        assert!(load.findings[0].message.contains("byte 10 of"));
        let apart = owner(&[
            Make(4),
            Fence,
            Local(0, 8, STORE),
            Local(12, 64, STORE),
            Fence,
            Fence,
            Free,
        ]);
        assert!(apart.findings.is_empty() && apart.unchecked.is_empty());
        let coarse = owner(&[
            Make(4),
            Fence,
            Local(0, 64, STORE | COARSE),
            Fence,
            Fence,
            Free,
        ]);
        assert!(coarse.findings.is_empty());
        assert!(coarse
            .unchecked
            .iter()
            .any(|u| u.0 == 1 && u.2 == local::COARSE));
        let unwatched = owner(&[Make(4), Fence, Local(0, 0, UNWATCHED), Fence, Fence, Free]);
        assert!(unwatched.unchecked.iter().any(|u| u.2 == local::UNWATCHED));
        // A get only reads: the owner's load of its bytes is no race.
        let get = check(&[
            &[Make(4), Fence, Local(8, 12, 0), Fence, Free],
            &[Make(4), Fence, C::Rma(OpKind::Get, 0, 2, 4, 0), Fence, Free],
        ]);
        assert!(get.findings.is_empty());
        // PSCW: the store between post and wait meets the put of that
        // exposure, not the next one's.
        let pscw = |local_in_first: bool| {
            let store = Local(0, 4, STORE | PSCW);
            let mut target = vec![Make(4), Post(0b10)];
            if local_in_first {
                target.push(store);
            }
            target.extend([Wait, Post(0b10)]);
            if !local_in_first {
                target.push(store);
            }
            target.extend([Wait, Free]);
            let origin = [
                Make(4),
                Start(0b1),
                Complete,
                Start(0b1),
                put(0, 0),
                Complete,
                Free,
            ];
            check(&[&target, &origin])
        };
        assert!(
            pscw(true).findings.is_empty(),
            "the put is in the second exposure"
        );
        assert_eq!(pscw(false).findings.len(), 1);
        assert!(pscw(false).findings[0]
            .notes
            .iter()
            .any(|n| n.contains("same exposure epoch of rank 0")));
    }
}
