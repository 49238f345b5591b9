//! Small random MPI programs in C, for differential testing of the search.
//!
//! [`Program::generate`] builds, from a seed, a structured program of 2 to 5
//! ranks: a list of *phases*, each a self-contained communication pattern
//! whose message counts balance by construction (every message sent in a
//! phase is received in that phase, with a tag of its own). What varies with
//! the wildcard outcomes is the order of matches, which the program turns
//! into control flow: who gets an extra message, who is replied to, which
//! collective runs, and, in about one program in four, an intentional bug
//! (a failed `assert`/`abort()` or a deadlock) reachable only for some
//! outcomes.
//!
//! Every rank prints one line, `sig R: …`, just before `MPI_Finalize`: for
//! every receive in program order (probes and `Waitany`/`Testany`/
//! `Waitsome`/`Testsome` indices included), a letter and the sender's world
//! rank (`t` and the tag after an `MPI_ANY_TAG` receive). The sorted lines
//! of a run identify its wildcard outcomes.
//!
//! ```
//! use mbh_tests::generator::Program;
//! let program = Program::generate(7);
//! assert_eq!(program.to_c(), Program::generate(7).to_c());
//! assert!((2..=5).contains(&program.np()));
//! assert!(program.shrink_candidates().iter().all(|p| p.size() < program.size()));
//! ```
//!
//! # Limitations
//!
//! - Programs assume MPICH's eager delivery of small standard sends: a
//!   blocking `MPI_Send` is sometimes issued before the matching receive is
//!   posted by a rank that is itself about to block.
//! - A phase on the parity-split communicator runs in each half whose size
//!   is large enough (a run-time guard); with an odd `np` the halves differ.
//! - Values carried by messages are the sender's rank in the communicator,
//!   so decisions on values and on `status.MPI_SOURCE` coincide.

use std::fmt::Write as _;

/// splitmix64: a tiny, good-enough PRNG (no dependency).
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: u32) -> u32 {
        (self.next() % u64::from(n)) as u32
    }
    /// True with probability `num/den`.
    fn chance(&mut self, num: u32, den: u32) -> bool {
        self.below(den) < num
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u32) as usize]
    }
}

/// The communicator a phase runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comm {
    /// `MPI_COMM_WORLD`.
    World,
    /// `MPI_Comm_dup(MPI_COMM_WORLD)`: same ranks, separate matching.
    Dup,
    /// `MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank)`: the phase runs in
    /// both halves that are large enough, sources translated to world ranks.
    Split,
}

/// How the root of a fan-in takes its wildcard messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecvStyle {
    /// Blocking `MPI_Recv(MPI_ANY_SOURCE, tag)`.
    Recv,
    /// Blocking `MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG)`; a barrier on the
    /// communicator closes the phase so no later message can match.
    RecvAnyTag,
    /// `MPI_Irecv` each, then `MPI_Wait` each.
    IrecvWait,
    /// `MPI_Irecv` each, then `MPI_Waitall`.
    IrecvWaitall,
    /// `MPI_Irecv` each, then `MPI_Waitany` until all are done.
    IrecvWaitany,
    /// `MPI_Irecv` each, then an `MPI_Test` loop on each.
    IrecvTest,
    /// `MPI_Irecv` each, then an `MPI_Testany` loop.
    IrecvTestany,
    /// `MPI_Irecv` each, then `MPI_Waitsome` until all are done.
    IrecvWaitsome,
    /// `MPI_Irecv` each, then an `MPI_Testsome` loop.
    IrecvTestsome,
    /// `MPI_Irecv` each, then `MPI_Waitany` until all are done, each
    /// sender kept in the slot of its request: the order decides nothing
    /// (`build` says so, and the guided search skips it) and the record is
    /// made after the loop, in request order.
    IrecvWaitanySlots,
    /// The same with an `MPI_Testany` loop.
    IrecvTestanySlots,
    /// `MPI_Probe(MPI_ANY_SOURCE)`, then `MPI_Recv` from `status.MPI_SOURCE`.
    Probe,
    /// An `MPI_Iprobe(MPI_ANY_SOURCE)` loop, then `MPI_Recv` from the source.
    Iprobe,
}

const RECV_STYLES: [RecvStyle; 9] = [
    RecvStyle::Recv,
    RecvStyle::RecvAnyTag,
    RecvStyle::IrecvWait,
    RecvStyle::IrecvWaitall,
    RecvStyle::IrecvWaitany,
    RecvStyle::IrecvTest,
    RecvStyle::IrecvTestany,
    RecvStyle::Probe,
    RecvStyle::Iprobe,
];

/// One rank sending to the root of a fan-in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sender {
    /// Its rank in the phase's communicator.
    pub rank: u32,
    /// How many messages it sends (1 or 2).
    pub count: u32,
    /// `MPI_Isend` + `MPI_Waitall` instead of `MPI_Send`.
    pub isend: bool,
}

/// What a fan-in does with what it learnt, after its receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FollowUp {
    /// The root broadcasts the first source; that rank sends one more
    /// message to `to` (never a candidate sender), which receives it from
    /// `MPI_ANY_SOURCE` (`wildcard`) or from the broadcast rank.
    ChosenExtra {
        /// The receiver of the extra message.
        to: u32,
        /// Decide on the received value rather than `status.MPI_SOURCE`.
        by_value: bool,
        /// The extra receive is a wildcard.
        wildcard: bool,
    },
    /// The root replies to whoever it heard from first; every rank learns
    /// who that was through `MPI_Allreduce` (MAX) or `MPI_Bcast`.
    ReplyFirst {
        /// Share the choice with `MPI_Allreduce` rather than `MPI_Bcast`.
        allreduce: bool,
    },
    /// The root broadcasts the first source; everyone calls `MPI_Barrier`
    /// when it is `rank`, `MPI_Allreduce` otherwise.
    Branch {
        /// The source that selects the barrier.
        rank: u32,
    },
    /// Intentional bug: the root fails when its first two wildcard
    /// receives came from `first` then `second`.
    Fail {
        /// First source of the failing combination.
        first: u32,
        /// Second source of the failing combination.
        second: u32,
        /// `abort()` instead of `assert`.
        abort: bool,
    },
}

/// A collective call on every member of the communicator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collective {
    /// `MPI_Barrier`.
    Barrier,
    /// `MPI_Bcast` from a root.
    Bcast(u32),
    /// `MPI_Allreduce` (SUM).
    Allreduce,
    /// `MPI_Reduce` (MAX) to a root.
    Reduce(u32),
    /// `MPI_Gather` to a root.
    Gather(u32),
}

/// One self-contained, balanced communication pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PhaseKind {
    /// Senders send to `root`, which receives them with wildcards.
    FanIn {
        /// The receiving rank.
        root: u32,
        /// The senders (distinct, not the root).
        senders: Vec<Sender>,
        /// How the root receives.
        style: RecvStyle,
        /// A sender that also sends one message with a tag of its own,
        /// received by a specific-source receive, before the wildcards
        /// (`true`) or after.
        specific: Option<(u32, bool)>,
        /// What happens after the receives.
        follow: Option<FollowUp>,
    },
    /// `MPI_Sendrecv` ring among ranks `0..members`, receiving from the
    /// predecessor or from `MPI_ANY_SOURCE`.
    Ring {
        /// Ranks taking part (at least 2).
        members: u32,
        /// The receive half is a wildcard.
        wildcard: bool,
    },
    /// A collective.
    Collective(Collective),
    /// Intentional bug (the issue's shape): ranks `receivers` and
    /// `receivers + 1` each send one message to every rank below
    /// `receivers`; those take two wildcard receives each, pass their first
    /// source around a `MPI_Sendrecv` ring, and block on a receive from
    /// their predecessor that is never sent when both their first source
    /// and their predecessor's are the last sender.
    CrossDeadlock {
        /// Receiving ranks: 2 or 3.
        receivers: u32,
    },
}

/// A phase: a pattern on a communicator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phase {
    /// Where it runs.
    pub comm: Comm,
    /// What it does.
    pub kind: PhaseKind,
}

impl Phase {
    /// Ranks the communicator must have for the phase to run (the phase is
    /// guarded by `size >= need`).
    pub fn need(&self) -> u32 {
        match &self.kind {
            PhaseKind::FanIn {
                root,
                senders,
                specific,
                follow,
                ..
            } => {
                let mut top = *root;
                for s in senders {
                    top = top.max(s.rank);
                }
                if let Some((s, _)) = specific {
                    top = top.max(*s);
                }
                if let Some(FollowUp::ChosenExtra { to, .. }) = follow {
                    top = top.max(*to);
                }
                top + 1
            }
            PhaseKind::Ring { members, .. } => *members,
            PhaseKind::Collective(
                Collective::Bcast(r) | Collective::Reduce(r) | Collective::Gather(r),
            ) => r + 1,
            PhaseKind::Collective(_) => 1,
            PhaseKind::CrossDeadlock { receivers } => receivers + 2,
        }
    }

    /// Wildcard receives per group running the phase.
    fn wildcards(&self) -> u32 {
        match &self.kind {
            PhaseKind::FanIn {
                senders, follow, ..
            } => {
                let k: u32 = senders.iter().map(|s| s.count).sum();
                let extra = matches!(follow, Some(FollowUp::ChosenExtra { wildcard: true, .. }));
                k + u32::from(extra)
            }
            PhaseKind::Ring { members, wildcard } => {
                if *wildcard {
                    *members
                } else {
                    0
                }
            }
            PhaseKind::Collective(_) => 0,
            PhaseKind::CrossDeadlock { receivers } => 2 * receivers,
        }
    }

    fn size(&self) -> u32 {
        match &self.kind {
            PhaseKind::FanIn {
                senders,
                style,
                specific,
                follow,
                ..
            } => {
                2 + senders.iter().map(|s| s.count + 1).sum::<u32>()
                    + u32::from(*style != RecvStyle::Recv)
                    + u32::from(specific.is_some())
                    + u32::from(follow.is_some())
            }
            PhaseKind::Ring { members, wildcard } => 1 + members + u32::from(*wildcard),
            PhaseKind::Collective(_) => 1,
            PhaseKind::CrossDeadlock { receivers } => 2 + receivers,
        }
    }

    fn is_bug(&self) -> bool {
        matches!(
            self.kind,
            PhaseKind::CrossDeadlock { .. }
                | PhaseKind::FanIn {
                    follow: Some(FollowUp::Fail { .. }),
                    ..
                }
        )
    }
}

/// Which constructs a program uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct Features {
    pub wildcard_recv: bool,
    pub specific_recv: bool,
    pub any_tag: bool,
    pub blocking_recv: bool,
    pub irecv_wait: bool,
    pub irecv_waitall: bool,
    pub irecv_waitany: bool,
    pub irecv_test_loop: bool,
    pub irecv_testany_loop: bool,
    pub irecv_waitsome: bool,
    pub irecv_testsome_loop: bool,
    pub irecv_waitany_slots: bool,
    pub irecv_testany_slots: bool,
    pub send: bool,
    pub isend_wait: bool,
    pub probe: bool,
    pub iprobe_loop: bool,
    pub sendrecv: bool,
    pub barrier: bool,
    pub bcast: bool,
    pub allreduce: bool,
    pub reduce: bool,
    pub gather: bool,
    pub comm_split: bool,
    pub comm_dup: bool,
    pub traffic_on_split: bool,
    pub traffic_on_dup: bool,
    pub source_dependent_flow: bool,
    pub assertion_bug: bool,
    pub abort_bug: bool,
    pub deadlock_bug: bool,
    pub three_receiver_deadlock: bool,
}

impl Features {
    /// Every flag with its name, for coverage checks.
    pub fn flags(&self) -> Vec<(&'static str, bool)> {
        vec![
            ("wildcard_recv", self.wildcard_recv),
            ("specific_recv", self.specific_recv),
            ("any_tag", self.any_tag),
            ("blocking_recv", self.blocking_recv),
            ("irecv_wait", self.irecv_wait),
            ("irecv_waitall", self.irecv_waitall),
            ("irecv_waitany", self.irecv_waitany),
            ("irecv_test_loop", self.irecv_test_loop),
            ("irecv_testany_loop", self.irecv_testany_loop),
            ("irecv_waitsome", self.irecv_waitsome),
            ("irecv_testsome_loop", self.irecv_testsome_loop),
            ("irecv_waitany_slots", self.irecv_waitany_slots),
            ("irecv_testany_slots", self.irecv_testany_slots),
            ("send", self.send),
            ("isend_wait", self.isend_wait),
            ("probe", self.probe),
            ("iprobe_loop", self.iprobe_loop),
            ("sendrecv", self.sendrecv),
            ("barrier", self.barrier),
            ("bcast", self.bcast),
            ("allreduce", self.allreduce),
            ("reduce", self.reduce),
            ("gather", self.gather),
            ("comm_split", self.comm_split),
            ("comm_dup", self.comm_dup),
            ("traffic_on_split", self.traffic_on_split),
            ("traffic_on_dup", self.traffic_on_dup),
            ("source_dependent_flow", self.source_dependent_flow),
            ("assertion_bug", self.assertion_bug),
            ("abort_bug", self.abort_bug),
            ("deadlock_bug", self.deadlock_bug),
            ("three_receiver_deadlock", self.three_receiver_deadlock),
        ]
    }
}

/// A generated program: ranks, communicators and a list of phases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// The seed it was generated from (kept through shrinking).
    pub seed: u64,
    /// Number of ranks, 2..=5.
    pub np: u32,
    /// Creates (and frees) the duplicate of `MPI_COMM_WORLD`.
    pub dup: bool,
    /// Creates (and frees) the parity split of `MPI_COMM_WORLD`.
    pub split: bool,
    /// The phases, in program order.
    pub phases: Vec<Phase>,
}

/// At most this many wildcard receives per program (keeps verify short).
const MAX_WILDCARDS: u32 = 6;

fn group_size(comm: Comm, np: u32) -> u32 {
    match comm {
        Comm::World | Comm::Dup => np,
        // The larger half: even world ranks.
        Comm::Split => np.div_ceil(2),
    }
}

fn groups(comm: Comm) -> u32 {
    if comm == Comm::Split {
        2
    } else {
        1
    }
}

impl Program {
    /// The program of `seed` (deterministic).
    pub fn generate(seed: u64) -> Program {
        let mut rng = Rng(seed ^ 0x6d62_6879_6272_6964);
        let bug = rng.chance(1, 4);
        let np = if bug {
            3 + rng.below(3)
        } else {
            rng.pick(&[2, 3, 3, 4, 4, 5])
        };
        let mut program = Program {
            seed,
            np,
            dup: rng.chance(1, 3),
            split: np >= 3 && rng.chance(1, 3),
            phases: Vec::new(),
        };
        let nphases = 1 + rng.below(4);
        let bug_at = if bug { rng.below(nphases) } else { u32::MAX };
        let mut wildcards = 0;
        for i in 0..nphases {
            let mut comms = vec![Comm::World];
            if program.dup {
                comms.push(Comm::Dup);
            }
            if program.split {
                comms.push(Comm::Split);
            }
            let comm = rng.pick(&comms);
            let phase = if i == bug_at {
                program.bug_phase(&mut rng, comm)
            } else {
                program.phase(&mut rng, comm, MAX_WILDCARDS.saturating_sub(wildcards))
            };
            let cost = phase.wildcards() * groups(phase.comm);
            if wildcards + cost > MAX_WILDCARDS && !phase.is_bug() {
                continue;
            }
            wildcards += cost;
            program.phases.push(phase);
        }
        // A communicator that is created gets traffic or a collective.
        for (used, comm) in [(program.dup, Comm::Dup), (program.split, Comm::Split)] {
            if used && !program.phases.iter().any(|p| p.comm == comm) {
                let root = rng.below(group_size(comm, np));
                program.phases.push(Phase {
                    comm,
                    kind: PhaseKind::Collective(rng.pick(&[
                        Collective::Bcast(root),
                        Collective::Allreduce,
                        Collective::Reduce(root),
                        Collective::Gather(root),
                    ])),
                });
            }
        }
        program.some_forms(seed);
        program.slot_forms(seed);
        debug_assert_eq!(program.validate(), Ok(()), "seed {seed}");
        program
    }

    /// Turns about half of the `Waitany`/`Testany` fan-ins into their
    /// `Waitsome`/`Testsome` forms, drawing from a stream of its own: the
    /// main stream, and so every other part of each seed's program, stays
    /// as it was before the `some` forms joined the generator (the suite's
    /// seeds were picked on it, and soak rows name them).
    fn some_forms(&mut self, seed: u64) {
        let mut rng = Rng(seed ^ 0x736f_6d65_666f_726d);
        for phase in &mut self.phases {
            if let PhaseKind::FanIn { style, .. } = &mut phase.kind {
                let some = match *style {
                    RecvStyle::IrecvWaitany => RecvStyle::IrecvWaitsome,
                    RecvStyle::IrecvTestany => RecvStyle::IrecvTestsome,
                    _ => continue,
                };
                if rng.chance(1, 2) {
                    *style = some;
                }
            }
        }
    }

    /// Turns about half of the `Waitall` fan-ins into `Waitany`/`Testany`
    /// loops whose order decides nothing ([`RecvStyle::IrecvWaitanySlots`]),
    /// from a stream of its own like [`Program::some_forms`]. Their
    /// outcomes are the `Waitall` form's, so the reference, which runs every
    /// completion order, must find exactly what the guided search finds
    /// without them.
    fn slot_forms(&mut self, seed: u64) {
        let mut rng = Rng(seed ^ 0x736c_6f74_666f_726d);
        for phase in &mut self.phases {
            if let PhaseKind::FanIn { style, .. } = &mut phase.kind {
                if *style == RecvStyle::IrecvWaitall && rng.chance(1, 2) {
                    *style = if rng.chance(1, 2) {
                        RecvStyle::IrecvWaitanySlots
                    } else {
                        RecvStyle::IrecvTestanySlots
                    };
                }
            }
        }
    }

    fn bug_phase(&self, rng: &mut Rng, comm: Comm) -> Phase {
        if self.np >= 4 && rng.chance(1, 2) {
            let receivers = if self.np == 5 && rng.chance(1, 2) {
                3
            } else {
                2
            };
            // On MPI_COMM_WORLD only: the same deadlock on the duplicate is
            // not confirmed by verify (the run times out instead).
            let comm = Comm::World;
            return Phase {
                comm,
                kind: PhaseKind::CrossDeadlock { receivers },
            };
        }
        // A fan-in from at least two senders with a failing combination.
        let comm = if group_size(comm, self.np) >= 3 {
            comm
        } else {
            Comm::World
        };
        let size = group_size(comm, self.np);
        let root = rng.below(size);
        let others: Vec<u32> = (0..size).filter(|&r| r != root).collect();
        let a = rng.pick(&others);
        let b = loop {
            let b = rng.pick(&others);
            if b != a {
                break b;
            }
        };
        let senders = [a.min(b), a.max(b)]
            .into_iter()
            .map(|rank| Sender {
                rank,
                count: 1,
                isend: rng.chance(1, 3),
            })
            .collect();
        Phase {
            comm,
            kind: PhaseKind::FanIn {
                root,
                senders,
                style: rng.pick(&RECV_STYLES),
                specific: None,
                follow: Some(FollowUp::Fail {
                    first: a,
                    second: b,
                    abort: rng.chance(1, 2),
                }),
            },
        }
    }

    fn phase(&self, rng: &mut Rng, comm: Comm, budget: u32) -> Phase {
        let size = group_size(comm, self.np);
        let roll = rng.below(10);
        let kind = if size < 2 || roll == 0 || budget / groups(comm) == 0 {
            let root = rng.below(size);
            PhaseKind::Collective(rng.pick(&[
                Collective::Barrier,
                Collective::Bcast(root),
                Collective::Allreduce,
                Collective::Reduce(root),
                Collective::Gather(root),
            ]))
        } else if roll == 1 {
            let members = 2 + rng.below(size - 1);
            PhaseKind::Ring {
                members,
                wildcard: members * groups(comm) <= budget && rng.chance(1, 2),
            }
        } else {
            let root = rng.below(size);
            let mut others: Vec<u32> = (0..size).filter(|&r| r != root).collect();
            let want = 1 + rng.below(others.len().min(3) as u32);
            let mut senders = Vec::new();
            for _ in 0..want.max(if others.len() >= 2 { 2 } else { 1 }) {
                let i = rng.below(others.len() as u32) as usize;
                senders.push(Sender {
                    rank: others.remove(i),
                    count: if rng.chance(1, 4) { 2 } else { 1 },
                    isend: rng.chance(1, 3),
                });
                if others.is_empty() {
                    break;
                }
            }
            senders.sort_by_key(|s| s.rank);
            let style = rng.pick(&RECV_STYLES);
            let specific = if rng.chance(1, 3) {
                let s = rng.pick(&senders).rank;
                Some((s, style == RecvStyle::RecvAnyTag || rng.chance(1, 2)))
            } else {
                None
            };
            let non_senders: Vec<u32> = (0..size)
                .filter(|r| !senders.iter().any(|s| s.rank == *r))
                .collect();
            let follow = match rng.below(5) {
                0 => Some(FollowUp::ChosenExtra {
                    to: rng.pick(&non_senders),
                    by_value: rng.chance(1, 2),
                    wildcard: rng.chance(1, 2),
                }),
                1 => Some(FollowUp::ReplyFirst {
                    allreduce: rng.chance(1, 2),
                }),
                2 => Some(FollowUp::Branch {
                    rank: rng.pick(&senders).rank,
                }),
                _ => None,
            };
            let mut phase = PhaseKind::FanIn {
                root,
                senders,
                style,
                specific,
                follow,
            };
            // Trim to the wildcard budget: single messages, no wildcard extra.
            let over = |p: &PhaseKind| {
                Phase {
                    comm,
                    kind: p.clone(),
                }
                .wildcards()
                    * groups(comm)
                    > budget
            };
            if over(&phase) {
                if let PhaseKind::FanIn {
                    senders, follow, ..
                } = &mut phase
                {
                    for s in senders.iter_mut() {
                        s.count = 1;
                    }
                    if let Some(FollowUp::ChosenExtra { wildcard, .. }) = follow {
                        *wildcard = false;
                    }
                    while senders.len() > 1
                        && senders.iter().map(|s| s.count).sum::<u32>() * groups(comm) > budget
                    {
                        let gone = senders.pop().map(|s| s.rank);
                        if let Some(FollowUp::Branch { rank }) = follow {
                            if Some(*rank) == gone {
                                *follow = None;
                            }
                        }
                    }
                }
                // Trimmed senders may have been the chosen extra's target
                // (no: targets are non-senders) or the specific sender.
                if let PhaseKind::FanIn {
                    senders, specific, ..
                } = &mut phase
                {
                    if let Some((s, _)) = specific {
                        if !senders.iter().any(|x| x.rank == *s) {
                            *specific = None;
                        }
                    }
                }
            }
            phase
        };
        Phase { comm, kind }
    }

    /// Number of ranks.
    pub fn np(&self) -> u32 {
        self.np
    }

    /// Whether an intentional bug (failed assertion, abort or deadlock) is
    /// reachable in some (never all) wildcard outcomes.
    pub fn has_bug(&self) -> bool {
        self.phases.iter().any(Phase::is_bug)
    }

    /// Wildcard receives in a run (both halves of the split counted).
    pub fn wildcards(&self) -> u32 {
        self.phases
            .iter()
            .map(|p| p.wildcards() * groups(p.comm))
            .sum()
    }

    /// A measure that every shrink candidate strictly decreases.
    pub fn size(&self) -> u32 {
        self.np
            + 2 * u32::from(self.dup)
            + 2 * u32::from(self.split)
            + self.phases.iter().map(Phase::size).sum::<u32>()
    }

    /// Checks the invariants that make a program balanced and well-formed.
    pub fn validate(&self) -> Result<(), String> {
        if !(2..=5).contains(&self.np) {
            return Err(format!("np {} outside 2..=5", self.np));
        }
        for (i, phase) in self.phases.iter().enumerate() {
            let err = |what: &str| Err(format!("phase {i}: {what}: {phase:?}"));
            match phase.comm {
                Comm::Dup if !self.dup => return err("dup communicator not created"),
                Comm::Split if !self.split => return err("split communicator not created"),
                _ => {}
            }
            if phase.need() > group_size(phase.comm, self.np) {
                return err("needs more ranks than the communicator has");
            }
            match &phase.kind {
                PhaseKind::FanIn {
                    root,
                    senders,
                    style,
                    specific,
                    follow,
                } => {
                    if senders.is_empty() {
                        return err("no sender");
                    }
                    for (j, s) in senders.iter().enumerate() {
                        if s.rank == *root || !(1..=2).contains(&s.count) {
                            return err("bad sender");
                        }
                        if senders[..j].iter().any(|t| t.rank == s.rank) {
                            return err("duplicate sender");
                        }
                    }
                    let is_sender = |r: u32| senders.iter().any(|s| s.rank == r);
                    if let Some((s, first)) = specific {
                        if !is_sender(*s) {
                            return err("specific receive from a non-sender");
                        }
                        if *style == RecvStyle::RecvAnyTag && !first {
                            return err("MPI_ANY_TAG receives would starve the specific one");
                        }
                    }
                    match follow {
                        Some(FollowUp::ChosenExtra { to, .. }) if is_sender(*to) => {
                            return err("extra message target is a candidate sender")
                        }
                        Some(FollowUp::Branch { rank }) if !is_sender(*rank) => {
                            return err("branch on a non-sender")
                        }
                        Some(FollowUp::Fail { first, second, .. })
                            if first == second || !is_sender(*first) || !is_sender(*second) =>
                        {
                            return err("failing combination not reachable in some outcomes only")
                        }
                        _ => {}
                    }
                }
                PhaseKind::Ring { members, .. } => {
                    if *members < 2 {
                        return err("ring of fewer than 2");
                    }
                }
                PhaseKind::Collective(_) => {}
                PhaseKind::CrossDeadlock { receivers } => {
                    if !(2..=3).contains(receivers) || phase.comm != Comm::World {
                        return err("bad cross deadlock");
                    }
                }
            }
        }
        Ok(())
    }

    /// Which constructs the program uses (phases that can run only).
    pub fn features(&self) -> Features {
        let mut f = Features {
            comm_split: self.split,
            comm_dup: self.dup,
            ..Features::default()
        };
        for phase in &self.phases {
            let traffic = !matches!(phase.kind, PhaseKind::Collective(_));
            match phase.comm {
                Comm::Split => f.traffic_on_split |= traffic,
                Comm::Dup => f.traffic_on_dup |= traffic,
                Comm::World => {}
            }
            match &phase.kind {
                PhaseKind::FanIn {
                    senders,
                    style,
                    specific,
                    follow,
                    ..
                } => {
                    f.wildcard_recv = true;
                    f.send |= senders.iter().any(|s| !s.isend);
                    f.isend_wait |= senders.iter().any(|s| s.isend);
                    match style {
                        RecvStyle::Recv => f.blocking_recv = true,
                        RecvStyle::RecvAnyTag => {
                            f.blocking_recv = true;
                            f.any_tag = true;
                            f.barrier = true;
                        }
                        RecvStyle::IrecvWait => f.irecv_wait = true,
                        RecvStyle::IrecvWaitall => f.irecv_waitall = true,
                        RecvStyle::IrecvWaitany => f.irecv_waitany = true,
                        RecvStyle::IrecvTest => f.irecv_test_loop = true,
                        RecvStyle::IrecvTestany => f.irecv_testany_loop = true,
                        RecvStyle::IrecvWaitsome => f.irecv_waitsome = true,
                        RecvStyle::IrecvTestsome => f.irecv_testsome_loop = true,
                        RecvStyle::IrecvWaitanySlots => f.irecv_waitany_slots = true,
                        RecvStyle::IrecvTestanySlots => f.irecv_testany_slots = true,
                        RecvStyle::Probe => {
                            f.probe = true;
                            f.specific_recv = true;
                        }
                        RecvStyle::Iprobe => {
                            f.iprobe_loop = true;
                            f.specific_recv = true;
                        }
                    }
                    if specific.is_some() {
                        f.specific_recv = true;
                        f.send = true;
                    }
                    match follow {
                        Some(FollowUp::ChosenExtra { wildcard, .. }) => {
                            f.source_dependent_flow = true;
                            f.bcast = true;
                            f.send = true;
                            if !wildcard {
                                f.specific_recv = true;
                            }
                        }
                        Some(FollowUp::ReplyFirst { allreduce }) => {
                            f.source_dependent_flow = true;
                            f.specific_recv = true;
                            f.send = true;
                            if *allreduce {
                                f.allreduce = true;
                            } else {
                                f.bcast = true;
                            }
                        }
                        Some(FollowUp::Branch { .. }) => {
                            f.source_dependent_flow = true;
                            f.bcast = true;
                            f.barrier = true;
                            f.allreduce = true;
                        }
                        Some(FollowUp::Fail { abort, .. }) => {
                            if *abort {
                                f.abort_bug = true;
                            } else {
                                f.assertion_bug = true;
                            }
                        }
                        None => {}
                    }
                }
                PhaseKind::Ring { wildcard, .. } => {
                    f.sendrecv = true;
                    if *wildcard {
                        f.wildcard_recv = true;
                    } else {
                        f.specific_recv = true;
                    }
                }
                PhaseKind::Collective(c) => match c {
                    Collective::Barrier => f.barrier = true,
                    Collective::Bcast(_) => f.bcast = true,
                    Collective::Allreduce => f.allreduce = true,
                    Collective::Reduce(_) => f.reduce = true,
                    Collective::Gather(_) => f.gather = true,
                },
                PhaseKind::CrossDeadlock { receivers } => {
                    f.deadlock_bug = true;
                    f.three_receiver_deadlock |= *receivers == 3;
                    f.wildcard_recv = true;
                    f.blocking_recv = true;
                    f.sendrecv = true;
                    f.send = true;
                    f.source_dependent_flow = true;
                }
            }
        }
        f
    }

    /// Strictly smaller programs (by [`Program::size`]) that are still
    /// well-formed: a phase dropped, a sender dropped, fewer messages or
    /// ranks, a simpler receive, an unused communicator gone.
    pub fn shrink_candidates(&self) -> Vec<Program> {
        let mut out = Vec::new();
        for i in 0..self.phases.len() {
            let mut p = self.clone();
            p.phases.remove(i);
            out.push(p);
        }
        if self.np > 2 {
            let mut p = self.clone();
            p.np -= 1;
            let np = p.np;
            p.phases.retain(|ph| ph.need() <= group_size(ph.comm, np));
            out.push(p);
        }
        if self.dup && !self.phases.iter().any(|p| p.comm == Comm::Dup) {
            let mut p = self.clone();
            p.dup = false;
            out.push(p);
        }
        if self.split && !self.phases.iter().any(|p| p.comm == Comm::Split) {
            let mut p = self.clone();
            p.split = false;
            out.push(p);
        }
        for (i, phase) in self.phases.iter().enumerate() {
            let mut with = |kind: PhaseKind| {
                let mut p = self.clone();
                p.phases[i].kind = kind;
                out.push(p);
            };
            match &phase.kind {
                PhaseKind::FanIn {
                    root,
                    senders,
                    style,
                    specific,
                    follow,
                } => {
                    let fan =
                        |senders: Vec<Sender>,
                         style: RecvStyle,
                         specific: Option<(u32, bool)>,
                         follow: Option<FollowUp>| PhaseKind::FanIn {
                            root: *root,
                            senders,
                            style,
                            specific,
                            follow,
                        };
                    if follow.is_some() {
                        with(fan(senders.clone(), *style, *specific, None));
                    }
                    if specific.is_some() {
                        with(fan(senders.clone(), *style, None, follow.clone()));
                    }
                    if *style != RecvStyle::Recv {
                        with(fan(
                            senders.clone(),
                            RecvStyle::Recv,
                            *specific,
                            follow.clone(),
                        ));
                    }
                    for j in 0..senders.len() {
                        if senders[j].count > 1 {
                            let mut s = senders.clone();
                            s[j].count -= 1;
                            with(fan(s, *style, *specific, follow.clone()));
                        }
                        if senders.len() > 1 {
                            let mut s = senders.clone();
                            let gone = s.remove(j).rank;
                            let follow = match follow {
                                Some(FollowUp::Branch { rank }) if *rank == gone => None,
                                Some(FollowUp::Fail { first, second, .. })
                                    if *first == gone || *second == gone =>
                                {
                                    None
                                }
                                f => f.clone(),
                            };
                            let specific = specific.filter(|(r, _)| *r != gone);
                            with(fan(s, *style, specific, follow));
                        }
                    }
                }
                PhaseKind::Ring { members, wildcard } => {
                    if *wildcard {
                        with(PhaseKind::Ring {
                            members: *members,
                            wildcard: false,
                        });
                    }
                    if *members > 2 {
                        with(PhaseKind::Ring {
                            members: members - 1,
                            wildcard: *wildcard,
                        });
                    }
                }
                PhaseKind::Collective(_) => {}
                PhaseKind::CrossDeadlock { receivers } => {
                    if *receivers == 3 {
                        with(PhaseKind::CrossDeadlock { receivers: 2 });
                    }
                }
            }
        }
        out
    }

    /// The C source, with a header comment naming the seed.
    pub fn to_c(&self) -> String {
        let mut c = String::new();
        let w = &mut c;
        wl(
            w,
            0,
            &format!(
                "/* mbhybrid generated program: seed {} (0x{:x}), np {}, {} phase(s){}",
                self.seed,
                self.seed,
                self.np,
                self.phases.len(),
                if self.has_bug() {
                    ", intentional bug in some outcomes"
                } else {
                    ""
                }
            ),
        );
        wl(
            w,
            0,
            " * from mbh_tests::generator::Program::generate (possibly shrunk) */",
        );
        for h in ["mpi.h", "stdio.h", "stdlib.h", "assert.h"] {
            wl(w, 0, &format!("#include <{h}>"));
        }
        wl(w, 0, "");
        wl(w, 0, "static char sig[4096];");
        wl(w, 0, "static int sig_len = 0;");
        wl(w, 0, "");
        wl(w, 0, "/* Appends \" KV\" to this rank's signature. */");
        wl(w, 0, "static void rec(char kind, int value) {");
        wl(w, 1, "if (sig_len < (int)sizeof sig - 32)");
        wl(
            w,
            2,
            "sig_len += snprintf(sig + sig_len, sizeof sig - (size_t)sig_len, \" %c%d\", kind, value);",
        );
        wl(w, 0, "}");
        wl(w, 0, "");
        wl(w, 0, "int main(int argc, char **argv) {");
        wl(w, 1, "int rank, size, acc = 0;");
        wl(w, 1, "MPI_Init(&argc, &argv);");
        wl(w, 1, "MPI_Comm_rank(MPI_COMM_WORLD, &rank);");
        wl(w, 1, "MPI_Comm_size(MPI_COMM_WORLD, &size);");
        wl(w, 1, &format!("if (size != {}) {{", self.np));
        wl(
            w,
            2,
            &format!(
                "if (rank == 0) fprintf(stderr, \"this program needs {} ranks\\n\");",
                self.np
            ),
        );
        wl(w, 2, "MPI_Abort(MPI_COMM_WORLD, 2);");
        wl(w, 1, "}");
        if self.dup {
            wl(w, 1, "MPI_Comm dup_comm;");
            wl(w, 1, "int dup_rank, dup_size;");
            wl(w, 1, "MPI_Comm_dup(MPI_COMM_WORLD, &dup_comm);");
            wl(w, 1, "MPI_Comm_rank(dup_comm, &dup_rank);");
            wl(w, 1, "MPI_Comm_size(dup_comm, &dup_size);");
        }
        if self.split {
            wl(w, 1, "MPI_Comm split_comm;");
            wl(w, 1, "int split_rank, split_size, split_w[8];");
            wl(
                w,
                1,
                "MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &split_comm);",
            );
            wl(w, 1, "MPI_Comm_rank(split_comm, &split_rank);");
            wl(w, 1, "MPI_Comm_size(split_comm, &split_size);");
            wl(w, 1, "/* world rank of every split rank */");
            wl(
                w,
                1,
                "MPI_Allgather(&rank, 1, MPI_INT, split_w, 1, MPI_INT, split_comm);",
            );
        }
        for (i, phase) in self.phases.iter().enumerate() {
            emit_phase(w, i, phase);
        }
        if self.dup {
            wl(w, 1, "MPI_Comm_free(&dup_comm);");
        }
        if self.split {
            wl(w, 1, "MPI_Comm_free(&split_comm);");
        }
        wl(w, 1, "(void)acc; (void)rec;");
        wl(w, 1, "printf(\"sig %d:%s\\n\", rank, sig);");
        wl(w, 1, "fflush(stdout);");
        wl(w, 1, "MPI_Finalize();");
        wl(w, 1, "return 0;");
        wl(w, 0, "}");
        c
    }
}

/// Writes one line at an indentation level.
fn wl(w: &mut String, level: usize, line: &str) {
    if line.is_empty() {
        w.push('\n');
    } else {
        let _ = writeln!(w, "{:width$}{line}", "", width = 4 * level);
    }
}

/// The world rank of communicator rank `expr`.
fn world(comm: Comm, expr: &str) -> String {
    match comm {
        Comm::World | Comm::Dup => format!("({expr})"),
        Comm::Split => format!("split_w[{expr}]"),
    }
}

fn emit_phase(w: &mut String, index: usize, phase: &Phase) {
    let tag = 100 * (index as u32 + 1);
    let (comm, me, csize) = match phase.comm {
        Comm::World => ("MPI_COMM_WORLD", "rank", "size"),
        Comm::Dup => ("dup_comm", "dup_rank", "dup_size"),
        Comm::Split => ("split_comm", "split_rank", "split_size"),
    };
    wl(
        w,
        1,
        &format!(
            "/* phase {index}: {} on {:?} */",
            format!("{:?}", phase.kind).replace("*/", "* /"),
            phase.comm
        ),
    );
    wl(w, 1, "{");
    wl(w, 2, &format!("MPI_Comm comm = {comm};"));
    wl(w, 2, &format!("int me = {me}, csize = {csize};"));
    wl(w, 2, &format!("if (csize >= {}) {{", phase.need()));
    wl(w, 3, "int src[8], val[8], nsrc = 0, v = 0;");
    wl(w, 3, "MPI_Status st;");
    wl(
        w,
        3,
        "(void)me; (void)comm; (void)src; (void)val; (void)nsrc; (void)v; (void)st;",
    );
    let tr = |e: &str| world(phase.comm, e);
    match &phase.kind {
        PhaseKind::FanIn {
            root,
            senders,
            style,
            specific,
            follow,
        } => emit_fan_in(
            w,
            phase.comm,
            tag,
            *root,
            senders,
            *style,
            *specific,
            follow.as_ref(),
        ),
        PhaseKind::Ring { members, wildcard } => {
            let m = members;
            wl(w, 3, &format!("if (me < {m}) {{"));
            wl(w, 4, "int x = me;");
            let from = if *wildcard {
                "MPI_ANY_SOURCE".to_string()
            } else {
                format!("(me + {}) % {m}", m - 1)
            };
            wl(
                w,
                4,
                &format!(
                    "MPI_Sendrecv(&x, 1, MPI_INT, (me + 1) % {m}, {tag}, &v, 1, MPI_INT, {from}, {tag}, comm, &st);"
                ),
            );
            wl(w, 4, &format!("rec('e', {});", tr("st.MPI_SOURCE")));
            wl(w, 4, "acc += v;");
            wl(w, 3, "}");
        }
        PhaseKind::Collective(coll) => emit_collective(w, 3, *coll),
        PhaseKind::CrossDeadlock { receivers } => {
            let nr = *receivers;
            let last = nr + 1;
            wl(w, 3, &format!("if (me >= {nr}) {{"));
            wl(w, 4, "int x = me;");
            wl(w, 4, &format!("for (int i = 0; i < {nr}; i++)"));
            wl(w, 5, &format!("MPI_Send(&x, 1, MPI_INT, i, {tag}, comm);"));
            wl(w, 3, "}");
            wl(w, 3, &format!("if (me < {nr}) {{"));
            wl(w, 4, &format!("int f, g, prev = (me + {}) % {nr};", nr - 1));
            wl(
                w,
                4,
                &format!("MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, {tag}, comm, &st);"),
            );
            wl(w, 4, "f = st.MPI_SOURCE;");
            wl(w, 4, &format!("rec('r', {});", tr("f")));
            wl(
                w,
                4,
                &format!("MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, {tag}, comm, &st);"),
            );
            wl(w, 4, &format!("rec('r', {});", tr("st.MPI_SOURCE")));
            wl(w, 4, "/* swap first sources around the ring */");
            wl(
                w,
                4,
                &format!(
                    "MPI_Sendrecv(&f, 1, MPI_INT, (me + 1) % {nr}, {}, &g, 1, MPI_INT, prev, {}, comm, &st);",
                    tag + 1,
                    tag + 1
                ),
            );
            wl(w, 4, &format!("rec('e', {});", tr("st.MPI_SOURCE")));
            wl(
                w,
                4,
                &format!(
                    "/* intentional bug: never sent; blocks when both first sources are {last} */"
                ),
            );
            wl(w, 4, &format!("if (f == {last} && g == {last}) {{"));
            wl(
                w,
                5,
                &format!("MPI_Recv(&v, 1, MPI_INT, prev, {}, comm, &st);", tag + 2),
            );
            wl(w, 5, &format!("rec('z', {});", tr("prev")));
            wl(w, 4, "}");
            wl(w, 3, "}");
        }
    }
    wl(w, 2, "}");
    wl(w, 1, "}");
}

fn emit_collective(w: &mut String, l: usize, coll: Collective) {
    match coll {
        Collective::Barrier => wl(w, l, "MPI_Barrier(comm);"),
        Collective::Bcast(root) => {
            wl(w, l, "v = acc;");
            wl(w, l, &format!("MPI_Bcast(&v, 1, MPI_INT, {root}, comm);"));
            wl(w, l, "acc += v;");
        }
        Collective::Allreduce => {
            wl(w, l, "v = acc;");
            wl(w, l, "MPI_Allreduce(&v, &acc, 1, MPI_INT, MPI_SUM, comm);");
        }
        Collective::Reduce(root) => {
            wl(w, l, "int out = 0;");
            wl(w, l, "v = acc;");
            wl(
                w,
                l,
                &format!("MPI_Reduce(&v, &out, 1, MPI_INT, MPI_MAX, {root}, comm);"),
            );
            wl(w, l, &format!("if (me == {root}) acc = out;"));
        }
        Collective::Gather(root) => {
            wl(w, l, "int all[8] = {0};");
            wl(w, l, "v = acc;");
            wl(
                w,
                l,
                &format!("MPI_Gather(&v, 1, MPI_INT, all, 1, MPI_INT, {root}, comm);"),
            );
            wl(w, l, &format!("if (me == {root})"));
            wl(w, l + 1, "for (int i = 0; i < csize; i++) acc += all[i];");
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn emit_fan_in(
    w: &mut String,
    comm: Comm,
    tag: u32,
    root: u32,
    senders: &[Sender],
    style: RecvStyle,
    specific: Option<(u32, bool)>,
    follow: Option<&FollowUp>,
) {
    let tr = |e: &str| world(comm, e);
    let k: u32 = senders.iter().map(|s| s.count).sum();
    let stag = tag + 50;
    // The root.
    wl(w, 3, &format!("if (me == {root}) {{"));
    let specific_recv = |w: &mut String, s: u32| {
        wl(
            w,
            4,
            &format!("MPI_Recv(&v, 1, MPI_INT, {s}, {stag}, comm, &st);"),
        );
        wl(w, 4, &format!("rec('s', {});", tr(&s.to_string())));
        wl(w, 4, "acc += v;");
    };
    if let Some((s, true)) = specific {
        specific_recv(w, s);
    }
    let record = |w: &mut String, l: usize, letter: char, s: &str, value: &str| {
        wl(
            w,
            l,
            &format!("src[nsrc] = {s}; val[nsrc] = {value}; nsrc++;"),
        );
        wl(w, l, &format!("rec('{letter}', {});", tr(s)));
    };
    let irecvs = |w: &mut String| {
        wl(w, 4, &format!("MPI_Request rq[{k}];"));
        wl(w, 4, &format!("int rb[{k}];"));
        wl(w, 4, &format!("for (int i = 0; i < {k}; i++)"));
        wl(
            w,
            5,
            &format!("MPI_Irecv(&rb[i], 1, MPI_INT, MPI_ANY_SOURCE, {tag}, comm, &rq[i]);"),
        );
    };
    match style {
        RecvStyle::Recv | RecvStyle::RecvAnyTag => {
            let any_tag = style == RecvStyle::RecvAnyTag;
            wl(w, 4, &format!("for (int i = 0; i < {k}; i++) {{"));
            wl(
                w,
                5,
                &format!(
                    "MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, {}, comm, &st);",
                    if any_tag {
                        "MPI_ANY_TAG".to_string()
                    } else {
                        tag.to_string()
                    }
                ),
            );
            record(w, 5, 'r', "st.MPI_SOURCE", "v");
            if any_tag {
                wl(w, 5, "rec('t', st.MPI_TAG);");
            }
            wl(w, 4, "}");
        }
        RecvStyle::IrecvWait => {
            irecvs(w);
            wl(w, 4, &format!("for (int i = 0; i < {k}; i++) {{"));
            wl(w, 5, "MPI_Wait(&rq[i], &st);");
            record(w, 5, 'w', "st.MPI_SOURCE", "rb[i]");
            wl(w, 4, "}");
        }
        RecvStyle::IrecvWaitall => {
            irecvs(w);
            wl(w, 4, &format!("MPI_Status sts[{k}];"));
            wl(w, 4, &format!("MPI_Waitall({k}, rq, sts);"));
            wl(w, 4, &format!("for (int i = 0; i < {k}; i++) {{"));
            record(w, 5, 'a', "sts[i].MPI_SOURCE", "rb[i]");
            wl(w, 4, "}");
        }
        RecvStyle::IrecvWaitany => {
            irecvs(w);
            wl(w, 4, &format!("for (int n = 0; n < {k}; n++) {{"));
            wl(w, 5, "int idx;");
            wl(w, 5, &format!("MPI_Waitany({k}, rq, &idx, &st);"));
            wl(w, 5, "rec('i', idx);");
            record(w, 5, 'w', "st.MPI_SOURCE", "rb[idx]");
            wl(w, 4, "}");
        }
        RecvStyle::IrecvWaitanySlots | RecvStyle::IrecvTestanySlots => {
            irecvs(w);
            let wait = style == RecvStyle::IrecvWaitanySlots;
            wl(w, 4, &format!("int slot[{k}], done = 0;"));
            wl(w, 4, &format!("while (done < {k}) {{"));
            wl(w, 5, "int idx, flag = 1;");
            wl(w, 5, "MPI_Status ast;");
            if wait {
                wl(w, 5, &format!("MPI_Waitany({k}, rq, &idx, &ast);"));
            } else {
                wl(w, 5, &format!("MPI_Testany({k}, rq, &idx, &flag, &ast);"));
            }
            wl(w, 5, "if (flag && idx != MPI_UNDEFINED) {");
            wl(w, 6, "slot[idx] = ast.MPI_SOURCE;");
            wl(w, 6, "done++;");
            wl(w, 5, "}");
            wl(w, 4, "}");
            wl(w, 4, &format!("for (int i = 0; i < {k}; i++) {{"));
            record(w, 5, 'a', "slot[i]", "rb[i]");
            wl(w, 4, "}");
        }
        RecvStyle::IrecvTest => {
            irecvs(w);
            wl(w, 4, &format!("for (int i = 0; i < {k}; i++) {{"));
            wl(w, 5, "int flag = 0;");
            wl(w, 5, "while (!flag)");
            wl(w, 6, "MPI_Test(&rq[i], &flag, &st);");
            record(w, 5, 'w', "st.MPI_SOURCE", "rb[i]");
            wl(w, 4, "}");
        }
        RecvStyle::IrecvTestany => {
            irecvs(w);
            wl(w, 4, "int done = 0;");
            wl(w, 4, &format!("while (done < {k}) {{"));
            wl(w, 5, "int idx, flag = 0;");
            wl(w, 5, &format!("MPI_Testany({k}, rq, &idx, &flag, &st);"));
            wl(w, 5, "if (flag && idx != MPI_UNDEFINED) {");
            wl(w, 6, "rec('x', idx);");
            record(w, 6, 'w', "st.MPI_SOURCE", "rb[idx]");
            wl(w, 6, "done++;");
            wl(w, 5, "}");
            wl(w, 4, "}");
        }
        RecvStyle::IrecvWaitsome | RecvStyle::IrecvTestsome => {
            let wait = style == RecvStyle::IrecvWaitsome;
            irecvs(w);
            wl(w, 4, "int done = 0;");
            wl(w, 4, &format!("while (done < {k}) {{"));
            wl(w, 5, &format!("int out = 0, some_idx[{k}];"));
            wl(w, 5, &format!("MPI_Status some_st[{k}];"));
            let call = if wait { "MPI_Waitsome" } else { "MPI_Testsome" };
            wl(w, 5, &format!("{call}({k}, rq, &out, some_idx, some_st);"));
            wl(
                w,
                5,
                "for (int j = 0; j < out && out != MPI_UNDEFINED; j++) {",
            );
            wl(w, 6, "int idx = some_idx[j];");
            wl(
                w,
                6,
                &format!("rec('{}', idx);", if wait { 'i' } else { 'x' }),
            );
            record(w, 6, 'w', "some_st[j].MPI_SOURCE", "rb[idx]");
            wl(w, 6, "done++;");
            wl(w, 5, "}");
            wl(w, 4, "}");
        }
        RecvStyle::Probe | RecvStyle::Iprobe => {
            wl(w, 4, &format!("for (int i = 0; i < {k}; i++) {{"));
            if style == RecvStyle::Probe {
                wl(
                    w,
                    5,
                    &format!("MPI_Probe(MPI_ANY_SOURCE, {tag}, comm, &st);"),
                );
            } else {
                wl(w, 5, "int flag = 0;");
                wl(w, 5, "while (!flag)");
                wl(
                    w,
                    6,
                    &format!("MPI_Iprobe(MPI_ANY_SOURCE, {tag}, comm, &flag, &st);"),
                );
            }
            wl(w, 5, "int from = st.MPI_SOURCE;");
            wl(w, 5, &format!("rec('p', {});", tr("from")));
            wl(
                w,
                5,
                &format!("MPI_Recv(&v, 1, MPI_INT, from, {tag}, comm, &st);"),
            );
            record(w, 5, 'r', "st.MPI_SOURCE", "v");
            wl(w, 4, "}");
        }
    }
    if let Some((s, false)) = specific {
        specific_recv(w, s);
    }
    wl(w, 4, "for (int i = 0; i < nsrc; i++) acc += val[i];");
    if let Some(FollowUp::Fail {
        first,
        second,
        abort,
    }) = follow
    {
        wl(
            w,
            4,
            &format!(
                "/* intentional bug: fails when the first two sources are {first} then {second} */"
            ),
        );
        let cond = format!("src[0] == {first} && src[1] == {second}");
        if *abort {
            wl(w, 4, &format!("if ({cond}) abort();"));
        } else {
            wl(w, 4, &format!("assert(!({cond}));"));
        }
    }
    wl(w, 3, "}");
    // The senders.
    for s in senders {
        wl(w, 3, &format!("if (me == {}) {{", s.rank));
        wl(w, 4, "int x = me;");
        // The specific message goes in the order the root receives it, so
        // nothing depends on MPI buffering it.
        if specific == Some((s.rank, true)) {
            wl(
                w,
                4,
                &format!("MPI_Send(&x, 1, MPI_INT, {root}, {stag}, comm);"),
            );
        }
        // Under MPI_ANY_TAG, a sender's messages carry distinct tags so the
        // signature shows which one came.
        let tag_of = |j: u32| {
            if style == RecvStyle::RecvAnyTag {
                tag + 1 + 10 * j
            } else {
                tag
            }
        };
        if s.isend {
            wl(w, 4, &format!("MPI_Request sq[{}];", s.count));
            for j in 0..s.count {
                wl(
                    w,
                    4,
                    &format!(
                        "MPI_Isend(&x, 1, MPI_INT, {root}, {}, comm, &sq[{j}]);",
                        tag_of(j)
                    ),
                );
            }
            if s.count == 1 {
                wl(w, 4, "MPI_Wait(&sq[0], MPI_STATUS_IGNORE);");
            } else {
                wl(
                    w,
                    4,
                    &format!(
                        "MPI_Status sst[{n}]; MPI_Waitall({n}, sq, sst);",
                        n = s.count
                    ),
                );
            }
        } else {
            for j in 0..s.count {
                wl(
                    w,
                    4,
                    &format!("MPI_Send(&x, 1, MPI_INT, {root}, {}, comm);", tag_of(j)),
                );
            }
        }
        if specific == Some((s.rank, false)) {
            wl(
                w,
                4,
                &format!("MPI_Send(&x, 1, MPI_INT, {root}, {stag}, comm);"),
            );
        }
        wl(w, 3, "}");
    }
    if style == RecvStyle::RecvAnyTag {
        wl(
            w,
            3,
            "/* no later message on comm may match the MPI_ANY_TAG receives */",
        );
        wl(w, 3, "MPI_Barrier(comm);");
    }
    match follow {
        Some(FollowUp::ChosenExtra {
            to,
            by_value,
            wildcard,
        }) => {
            let t = tag + 60;
            wl(w, 3, "int chosen = -1;");
            wl(
                w,
                3,
                &format!(
                    "if (me == {root}) chosen = {};",
                    if *by_value { "val[0]" } else { "src[0]" }
                ),
            );
            wl(
                w,
                3,
                &format!("MPI_Bcast(&chosen, 1, MPI_INT, {root}, comm);"),
            );
            wl(w, 3, "if (me == chosen) {");
            wl(w, 4, "int x = me;");
            wl(w, 4, &format!("MPI_Send(&x, 1, MPI_INT, {to}, {t}, comm);"));
            wl(w, 3, "}");
            wl(w, 3, &format!("if (me == {to}) {{"));
            let from = if *wildcard {
                "MPI_ANY_SOURCE"
            } else {
                "chosen"
            };
            wl(
                w,
                4,
                &format!("MPI_Recv(&v, 1, MPI_INT, {from}, {t}, comm, &st);"),
            );
            wl(w, 4, &format!("rec('c', {});", tr("st.MPI_SOURCE")));
            wl(w, 3, "}");
        }
        Some(FollowUp::ReplyFirst { allreduce }) => {
            let t = tag + 70;
            wl(w, 3, "int chosen = -1;");
            wl(w, 3, &format!("if (me == {root}) chosen = src[0];"));
            if *allreduce {
                wl(w, 3, "int mine = chosen;");
                wl(
                    w,
                    3,
                    "MPI_Allreduce(&mine, &chosen, 1, MPI_INT, MPI_MAX, comm);",
                );
            } else {
                wl(
                    w,
                    3,
                    &format!("MPI_Bcast(&chosen, 1, MPI_INT, {root}, comm);"),
                );
            }
            wl(w, 3, &format!("if (me == {root}) {{"));
            wl(w, 4, "int x = me;");
            wl(
                w,
                4,
                &format!("MPI_Send(&x, 1, MPI_INT, chosen, {t}, comm);"),
            );
            wl(w, 3, "}");
            wl(w, 3, "if (me == chosen) {");
            wl(
                w,
                4,
                &format!("MPI_Recv(&v, 1, MPI_INT, {root}, {t}, comm, &st);"),
            );
            wl(w, 4, &format!("rec('q', {});", tr("st.MPI_SOURCE")));
            wl(w, 3, "}");
        }
        Some(FollowUp::Branch { rank }) => {
            wl(w, 3, "int chosen = -1;");
            wl(w, 3, &format!("if (me == {root}) chosen = src[0];"));
            wl(
                w,
                3,
                &format!("MPI_Bcast(&chosen, 1, MPI_INT, {root}, comm);"),
            );
            wl(w, 3, &format!("if (chosen == {rank}) {{"));
            emit_collective(w, 4, Collective::Barrier);
            wl(w, 3, "} else {");
            emit_collective(w, 4, Collective::Allreduce);
            wl(w, 3, "}");
        }
        Some(FollowUp::Fail { .. }) | None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_text() {
        for seed in 0..50 {
            assert_eq!(
                Program::generate(seed).to_c(),
                Program::generate(seed).to_c()
            );
        }
        assert_ne!(Program::generate(1).to_c(), Program::generate(2).to_c());
    }

    #[test]
    fn generated_programs_are_well_formed_and_small() {
        for seed in 0..500 {
            let p = Program::generate(seed);
            assert_eq!(p.validate(), Ok(()), "seed {seed}");
            assert!((2..=5).contains(&p.np()), "seed {seed}");
            assert!(p.phases.len() <= 5, "seed {seed}");
            assert!(
                p.has_bug() || p.wildcards() <= MAX_WILDCARDS,
                "seed {seed}: {} wildcards",
                p.wildcards()
            );
            assert!(p.to_c().contains(&format!("seed {seed} ")));
        }
    }

    #[test]
    fn about_one_program_in_four_has_a_bug() {
        let bugs = (0..400).filter(|&s| Program::generate(s).has_bug()).count();
        assert!((60..=140).contains(&bugs), "{bugs} of 400");
    }

    #[test]
    fn shrink_candidates_are_smaller_and_well_formed() {
        for seed in 0..200 {
            let p = Program::generate(seed);
            for q in p.shrink_candidates() {
                assert!(q.size() < p.size(), "seed {seed}: {q:?}");
                assert_eq!(q.validate(), Ok(()), "seed {seed}: {q:?}");
                // Shrinking further stays well-formed too.
                for r in q.shrink_candidates() {
                    assert_eq!(r.validate(), Ok(()), "seed {seed}: {r:?}");
                }
            }
        }
    }

    #[test]
    fn shrinking_reaches_the_empty_program() {
        let mut p = Program::generate(3);
        while let Some(q) = p.shrink_candidates().into_iter().next() {
            p = q;
        }
        assert!(p.phases.is_empty(), "{p:?}");
    }

    #[test]
    fn every_construct_appears_over_200_seeds() {
        let mut seen: Vec<(&str, bool)> = Features::default().flags();
        for seed in 0..200 {
            for (i, (_, on)) in Program::generate(seed)
                .features()
                .flags()
                .into_iter()
                .enumerate()
            {
                seen[i].1 |= on;
            }
        }
        let missing: Vec<&str> = seen.iter().filter(|(_, on)| !on).map(|(n, _)| *n).collect();
        assert!(missing.is_empty(), "never generated: {missing:?}");
    }

    #[test]
    fn programs_compile_without_warnings() {
        // clang-16 -Wall -Werror with MPICH's headers, syntax only.
        // Never skipped: a missing mpicc is a failure with its reason.
        let out = std::process::Command::new("mpicc")
            .arg("-show")
            .output()
            .expect("mpicc is installed (scripts/install-deps.sh)");
        let show = String::from_utf8_lossy(&out.stdout).to_string();
        let includes: Vec<String> = show
            .split_whitespace()
            .filter(|a| a.starts_with("-I"))
            .map(str::to_owned)
            .collect();
        let dir = tempfile::tempdir().unwrap();
        for seed in 0..40 {
            let path = dir.path().join(format!("g{seed}.c"));
            std::fs::write(&path, Program::generate(seed).to_c()).unwrap();
            let out = std::process::Command::new("clang-16")
                .args(["-Wall", "-Wextra", "-Werror", "-fsyntax-only"])
                .args(&includes)
                .arg(&path)
                .output()
                .expect("clang-16 runs");
            assert!(
                out.status.success(),
                "seed {seed}\n{}\n{}",
                String::from_utf8_lossy(&out.stderr),
                Program::generate(seed).to_c()
            );
        }
    }
}
