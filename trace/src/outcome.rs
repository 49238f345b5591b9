//! What a verification could not do, as facts: why its coverage is
//! partial ([`Partial`]), a forced match that did not happen
//! ([`Divergence`], [`ForcedStall`]), a rank the runtime stopped
//! ([`ToolStop`]), what limited it ([`Warning`]). Each is decided once,
//! where it is known (the session, the verdict on a run), and carried as
//! data; `mbh-diagnostics` (`outcome`) turns them into the words every
//! format shows. Nothing here is parsed back from text.

use crate::config::ForcedMatch;
use crate::finding::Location;
use crate::site::Site;
use std::path::PathBuf;

/// The call a forced event was made at, as the run that recorded the
/// event saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForcedCall {
    /// The MPI call, as the program wrote it.
    pub call: String,
    /// Where it is (empty when the build recorded no site).
    pub file: String,
    /// Its line (0 when unknown).
    pub line: u32,
    /// A choice of which request completes, not of a sender.
    pub index_choice: bool,
}

/// A forced match a run did not make: what was forced, what happened
/// instead, and the call, when some run recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForcedMiss {
    /// What was forced.
    pub forced: ForcedMatch,
    /// The sender (or index) taken instead; `None`: it never completed.
    pub observed: Option<i32>,
    /// The call of the forced event; `None` when no run recorded it.
    pub call: Option<ForcedCall>,
}

/// A forced match that took another sender (or index): the search's (or
/// the replay's) promise was broken, so its result is not a verification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// The interleaving that diverged.
    pub interleaving: u32,
    /// What was forced and what happened.
    pub miss: ForcedMiss,
    /// The run directory to report, for a divergence of the search (a bug
    /// of mbhybrid); `None` for a replay's.
    pub run_dir: Option<PathBuf>,
}

/// A forced receive that never completed: its sender did not get to send
/// under this MPI library, so that outcome was not checked (a limit, not
/// an error of the search).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForcedStall {
    /// The interleaving.
    pub interleaving: u32,
    /// What was forced.
    pub miss: ForcedMiss,
    /// The run hung waiting for it, and that hang was not reported.
    pub hung: bool,
}

/// A rank the runtime stopped at a call it cannot handle (or on its own
/// failure): a limit of the tool, never a finding against the program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolStop {
    /// The rank.
    pub rank: i32,
    /// The call site it stopped at (and its call), when known.
    pub site: Option<Site>,
    /// What the runtime said (its trace header); `None` when it holds none.
    pub said: Option<String>,
}

/// What a rank's trace lacks: what it covers is not the whole run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceGap {
    /// The file holds fewer records than its header counts.
    CutShort {
        /// The rank.
        rank: i32,
        /// Records the header counts.
        counted: u64,
        /// Records the file holds.
        kept: u64,
    },
    /// A record is damaged; the ones before it are kept.
    Damaged {
        /// The rank.
        rank: i32,
        /// What is wrong, as the decoder says it.
        damage: String,
        /// Records before it.
        kept: usize,
    },
    /// The runtime could not write some records.
    Lost {
        /// The rank.
        rank: i32,
        /// How many.
        records: u64,
    },
    /// The trace could not be read at all.
    Unreadable {
        /// The rank.
        rank: i32,
        /// Why, as the reader says it.
        error: String,
    },
}

/// An option that would shorten a search a budget stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoundOption {
    /// `--mixing-bound K` (none is set).
    MixingBound,
    /// `--loop-abstraction auto` (`build` marked a loop it may abstract).
    LoopAbstractionAuto,
}

/// Why the coverage of a search is partial: the first reason found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Partial {
    /// A signal (SIGINT, SIGTERM, a batch system's limit) stopped it.
    Signal {
        /// The signal's name (`SIGTERM`).
        signal: &'static str,
        /// Interleavings run before it.
        interleavings: u32,
    },
    /// `--max-interleavings` was reached.
    MaxInterleavings {
        /// The bound.
        max: u32,
        /// Options that would shorten the search.
        advice: Vec<BoundOption>,
    },
    /// `--time-budget` was spent.
    TimeBudget {
        /// Interleavings run.
        interleavings: u32,
        /// Options that would shorten the search.
        advice: Vec<BoundOption>,
    },
    /// An interleaving after the first could not run.
    RunFailed {
        /// The interleaving.
        interleaving: u32,
        /// The error, as it says itself.
        error: String,
    },
    /// The runtime stopped an interleaving ([`ToolStop`]).
    ToolStop {
        /// The interleaving.
        interleaving: u32,
    },
    /// The exhaustive reference could not expand a run.
    TooBigForExhaustive {
        /// The interleaving.
        interleaving: u32,
    },
    /// `--mixing-bound` or `--loop-abstraction` skipped choice points.
    Bounded,
    /// A forced receive never completed.
    ForcedStall(ForcedStall),
    /// A forced match took another sender.
    Diverged(Divergence),
    /// A trace of an interleaving lacks records.
    TraceGap {
        /// The interleaving.
        interleaving: u32,
        /// What is missing.
        gap: TraceGap,
    },
    /// Calls the verdict does not cover (the report's `not_modelled`).
    NotModelled(Vec<UnverifiedCall>),
}

/// What limited a verification: listed in the report's `warnings`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warning {
    /// A site table beside a program since built without mbhybrid.
    StaleSiteTable {
        /// The table.
        table: PathBuf,
        /// The program as given.
        program: PathBuf,
    },
    /// The site table could not be read.
    UnreadableSiteTable {
        /// Why, as the reader says it.
        error: String,
    },
    /// The program was not built by `mbhybrid build`.
    NotBuilt {
        /// The program as given.
        program: PathBuf,
        /// The site table's file name it lacks.
        table: String,
    },
    /// A program not built by mbhybrid has no debug information.
    NoDebugInfo {
        /// The program as given.
        program: PathBuf,
    },
    /// A trace of an interleaving lacks records.
    TraceGap {
        /// The interleaving.
        interleaving: u32,
        /// What is missing.
        gap: TraceGap,
    },
    /// A forced receive never completed.
    ForcedStall(ForcedStall),
    /// A forced match of the search took another sender.
    Diverged(Divergence),
    /// Forced matches of a replay did not happen.
    ReplayDiverged {
        /// Forced matches in all.
        forced: usize,
        /// The ones that did not happen.
        misses: Vec<ForcedMiss>,
    },
    /// The search's coverage is partial.
    Partial(Partial),
}

/// What of a call the verdict does not cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Unverified {
    /// A call of an MPI function the runtime does not model.
    NotModelled,
    /// A one-sided call of a program built without the access checks.
    NoAccessChecks,
    /// A call that opens a passive target epoch.
    PassiveTarget,
    /// `MPI_Win_allocate_shared`.
    SharedWindow,
    /// A one-sided operation whose races were not checked, and why.
    RacesUnchecked(&'static str),
    /// A second thread's call made while another thread of its rank was
    /// inside MPI: the run stopped there.
    ThreadStopped,
}

impl Unverified {
    /// What the report's location of such a call says (its `label`): the
    /// words are part of the JSON, so they live beside the kind.
    pub fn label(self) -> String {
        match self {
            Unverified::NotModelled => "not modelled by mbhybrid: not verified".into(),
            Unverified::NoAccessChecks => "one-sided communication: epochs and remote races checked, local accesses to window memory and origin buffers not".into(),
            Unverified::PassiveTarget => "one-sided communication: passive target epoch, local accesses to the target's window memory not checked".into(),
            Unverified::SharedWindow => "one-sided communication: shared memory window, other processes' loads and stores of its memory not checked".into(),
            Unverified::RacesUnchecked(why) => format!("races not checked: {why}"),
            Unverified::ThreadStopped => "a second thread called MPI here while another was inside MPI: the run stopped".into(),
        }
    }
}

/// A call the verdict does not cover: where (its label says what, in
/// words: [`Unverified::label`]) and what. What is decided from the kind,
/// never from the label, which may say more (where a call without a line
/// is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnverifiedCall {
    /// Where the call is, on the lowest rank that made it.
    pub location: Location,
    /// What of it is not covered.
    pub what: Unverified,
}
