//! Barrier relevance: which `MPI_Barrier` calls can be deleted without
//! changing what any wildcard receive can match.
//!
//! This is Fib (Sharma, Vakkalanka, Gopalakrishnan, Kirby, Thakur, Gropp,
//! *A Formal Approach to Detect Functionally Irrelevant Barriers in MPI
//! Programs*, EuroPVM/MPI 2008; seed 004), over the IntraHB relation of
//! Vakkalanka, Vo, Gopalakrishnan and Kirby, *Reduced Execution Semantics
//! of MPI* (seed 001, Definition 2). A barrier is relevant when, in some
//! explored run, it is the only thing that orders a wildcard receive R and
//! a send S that targets R's rank with a tag and communicator R accepts:
//! without it, R could take S. A barrier never relevant in a complete,
//! deadlock-free exploration is irrelevant (Siegel and Avrunin show that
//! without wildcards every barrier of a deadlock-free program is).
//!
//! Seed 004 judges barriers one at a time, but the irrelevant ones are
//! deleted together (`audit-barriers --patch`), so [`audit`] then chooses a
//! deletion set: in site order, a group of irrelevant sites joins it only
//! if, with every instance of the set and the group cut out of every run's
//! graph, every pair (R, S) ordered in the full graph stays ordered (see
//! "The deletion set" below). The sites that cannot join are kept:
//! relevant, naming the sites of the set they depend on
//! ([`Verdict::Relevant`]'s `after_deleting`).
//!
//! Owns: the completes-before graphs ([`RunGraph`], stored as
//! [`CbGraph`]), the windowed reachability and cut search
//! ([`WindowedReach`]), CheckRelevant ([`check_relevant`]), the verdicts
//! per site with their evidence and the deletion set ([`audit`]), and the
//! patch that deletes irrelevant calls ([`deletion_patch`]).
//!
//! Must not: run programs, read files or decide exploration; it reads
//! traces (`mbh_trace::RankTrace`) only.
//!
//! # The graph
//!
//! Each call of a run has events (seed 001 §2.1): issued, matched (sends
//! and receives), completed. Edges ([`Edge`]):
//!
//! * a call's own states in order; a receive, and a send that cannot be
//!   buffered ([`SendBuffering::Zero`], `MPI_Ssend`), completes after its
//!   match;
//! * IntraCB (Definition 2): sends to one destination with one tag and
//!   communicator match in order; a receive matches before a later one it
//!   subsumes (wildcard or same source, `MPI_ANY_TAG` or same tag); an
//!   operation completes before the `Wait` of its request; a blocking call
//!   (barrier, wait, blocking send or receive, collective) completes before
//!   anything after it is issued. Two outcome rules of the run: a matched
//!   receive matches before a later, wider one that could have taken its
//!   message (no trumping, seed 004 Example 5), and an earlier receive
//!   that accepts the message a later one took had matched first (MPI
//!   gives a message to the earliest posted receive that accepts it);
//! * InterCB: a send and the receive that took it share one match event
//!   (the receive's `Matched` record names the send); each collective
//!   instance (per communicator, kind and per-rank sequence number) is a
//!   node after its members' issues and before their completions
//!   (barriers and `MPI_Allreduce`: all members; `MPI_Bcast`: after the
//!   root's issue; `MPI_Reduce`: before the root's completion).
//!
//! R is ordered before S when a path leads from R's match event to S's,
//! entering S's from S's own side: its issue, or an earlier send it must
//! match after. (Entering through the receive that took S in this run
//! would make the run's outcome a constraint; seed 004's InterCB edges
//! likewise lead from a match partner to the other's successors, never to
//! the other.) B makes its barrier relevant when every such path goes
//! through B's node: B dominates S's match from R's, computed by
//! [`WindowedReach`] without a transitive closure.
//!
//! CheckRelevant also asks the question with R and S swapped. In this
//! graph a path from S's match to R's, entering R's from R's side, never
//! needs a barrier in a consistent, acyclic trace: S targets R's rank, so
//! the receive R' that took it is on R's rank; if R' comes before R, the
//! matching-order edges join R' to R directly; if after, R's match
//! precedes R''s and the path would close a cycle; an S nobody took has no
//! successor but its own completion, which with eager sends is no match
//! and with unbuffered ones never happens in a deadlock-free run. So the
//! swapped search is off by default and available as a cross-check
//! ([`Options::check_send_first`]).
//!
//! # The deletion set
//!
//! Two barriers in a row that both order R before S are each irrelevant
//! alone (the other still orders the pair); deleting both lets R take S.
//! So after the per-site verdicts, the irrelevant sites are grouped into
//! units (sites whose calls meet in one barrier instance in some run:
//! deleting one of them without the others would pair the remaining
//! barriers differently) and tried in the order of their lowest site id
//! (the order of the calls in the compiled module, which follows the
//! source within a function). A unit joins the deletion set D when, in
//! every run, with the collective node of every instance with a member
//! at a site of D or of the unit removed (a deleted barrier keeps its
//! rank's fence order, as CheckRelevant treats a barrier node), every
//! candidate send S that R's match reached is still reached, entering it
//! from S's side. A unit that cannot join becomes relevant with the pair
//! it would unorder as evidence, and `after_deleting` names the sites of D
//! with an instance on some path from R's match to S's in the full graph
//! (empty when the unit's own instances order the pair only together, as
//! a barrier called twice in a row does). A site whose calls meet a
//! relevant site's in some instance is [`UnknownReason::MeetsKeptBarrier`]
//! rather than irrelevant.
//!
//! Each check is a reachability sweep from R's match in topological order
//! that stops once every candidate send is settled (reached; after a fence
//! completion of its rank that was reached, whose fence chain leads to its
//! issue; or after a send of its rank with its tag whose match was
//! reached, since those match in order), or at the first send ordered in
//! the full graph and no longer reached. A collective node reached (for
//! CheckRelevant: one no barrier dominates, and not a barrier) settles
//! every member whose completion it leads to at once, so a receive
//! followed by an `MPI_Allreduce` stops there instead of after every
//! rank's completion of it, which lie interleaved with the rest of the
//! run (issue 13: 1,024 ranks). A unit re-sweeps only the
//! receives whose last sweep went through one of its instances; receives
//! of different runs and windows are swept in parallel (rayon).
//!
//! # Example
//!
//! ```
//! use mbh_fib::{audit, Coverage, Options, Verdict};
//!
//! // No runs, nothing executed: nothing to say.
//! let audit = audit(&[], Coverage { complete: true, deadlock_free: true }, &Options::default());
//! assert!(audit.barriers.is_empty());
//! assert_eq!(audit.verdict(7), None::<&Verdict>);
//! ```
//!
//! # Limitations
//!
//! * Verdicts hold for the input the program ran with, and only as far as
//!   the exploration reached: a bounded exploration gives
//!   [`UnknownReason::Bounded`] instead of `Irrelevant`, a deadlock
//!   [`UnknownReason::Deadlock`], unusable traces (a rank that did not
//!   finish, a wildcard receive without a `Matched` record) a
//!   [`UnknownReason::Trace`].
//! * The irrelevant verdicts hold for deleting all irrelevant sites at
//!   once, not for any other subset: which of two redundant barriers is
//!   kept follows site order (the lower site id goes), not cost or the
//!   user's preference, and a greedy choice need not delete the most
//!   barriers possible. A kept site's `after_deleting` names the deleted
//!   sites that could also order its evidence's pair, not a minimal set.
//! * Calls are identified across runs by (rank, record index): a receive
//!   that took a send in one run is not asked about that send in another,
//!   which assumes the runs' control flow agrees up to those calls.
//! * Probes, `MPI_Sendrecv`'s two halves (beyond their match events),
//!   `MPI_Waitany`/`MPI_Test` without a `Matched` record, and
//!   nonblocking collectives take no part in the ordering rules; wildcard
//!   probes are not checked as R; `MPI_Finalize` is not a match set.
//! * On communicators other than `MPI_COMM_WORLD`, ranks are learnt from
//!   matched messages; a rooted collective whose root's world rank cannot
//!   be learnt makes the run's verdicts unknown.
//! * Sends are modelled as the exploration ran them ([`Options`]): with
//!   eager buffering a send's completion says nothing about its match.
//! * A run whose graph has a cycle (an inconsistent trace) is searched
//!   without the early stop: one dominator tree per R over its window.
#![deny(missing_docs)]

// The differential tests share the integration tests' trace builder
// (`tests/common`), which names the crate `mbh_fib`.
#[cfg(test)]
extern crate self as mbh_fib;

mod audit;
mod cbgraph;
mod graph;
mod horizon;
mod joint;
mod model;
mod patch;
mod reach;
#[cfg(test)]
mod reference;
mod relevance;

pub use audit::{
    audit, Audit, AuditStats, BarrierVerdict, Coverage, Evidence, UnknownReason, Verdict,
};
pub use cbgraph::{CbGraph, EdgeReference, Neighbors};
pub use graph::{CollectiveSet, OpNodes, P2pMatch, RunGraph, RunIssue};
pub use model::{CollectiveInstance, Edge, Event, Node, OpRef, Options, SendBuffering};
pub use patch::{deletion_patch, DeletionPatch, SkipReason, Skipped};
pub use reach::{CutRules, Every, EveryStep, Sweep, WindowedReach, Workspace};
pub use relevance::{
    check_relevant, evidence_path, Order, PathStep, RelevantPair, RunRelevance, RunStats, Taken,
};
