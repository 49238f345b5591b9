//! `mbhybrid run`'s deterministic mode (seed 002, DMPI), on MPI: the
//! logical clock, the announcements, requests and answers of §3.4's
//! deterministic mapping, and the decision loop of a wildcard receive.
//! The rules themselves are [`crate::logical`].
//!
//! Each communicator gets an *announcement duplicate* when it is made
//! (collectively, beside its clock shadow). On it, and only on it, go four
//! kinds of four-word control messages from one rank to another:
//!
//! * `ANNOUNCE` (tagged with the program's tag): "my next message to you on
//!   this communicator is stamped so", sent before the message itself;
//! * `REQUEST`: "tell me when your clock reaches this" (§3.4's on-demand
//!   strategy; answered at once when the asked rank is blocked in MPI,
//!   which is what §4.2.3's checker needs to know);
//! * `ANSWER`: the clock, whether blocked, whether waiting for the asker
//!   alone, and how many messages it received from the asker;
//! * `FINAL`: sent at `MPI_Finalize`: nothing more comes.
//!
//! Where this departs from the seed: DMPI lives inside MPICH, stamps every
//! packet and answers requests from a progress thread. A PMPI runtime
//! cannot read a message's stamp before receiving it, so the sender
//! announces it on the duplicate; and it answers requests whenever the
//! program is inside MPI (every blocking call polls in this mode), which
//! is the only time its clock moves anyway. The clock counts MPI calls, not
//! instructions (§3.2's instruction counting only makes logical time track
//! physical time, for speed; determinism does not need it).

mod decide;

use super::Rt;
use crate::consts::{any_source, any_tag, comm_world, request_null, uint64, SUCCESS};
use crate::handle::HandleBits;
use crate::logical::{Answer, Lanes};
pub(super) use decide::Quiet;
use mbh_trace::determinism::DecisionStats;
use mpi_sys::{MPI_Comm, MPI_Request, MPI_Status};
use std::os::raw::c_int;
use std::time::{Duration, Instant};

const WORDS: usize = 7;
const ANNOUNCE: u64 = 1;
const REQUEST: u64 = 2;
const ANSWER: u64 = 3;
const FINAL: u64 = 4;
/// Answer flag: blocked in MPI.
const BLOCKED: u64 = 1;
/// Answer flag: blocked in a receive or probe from the asker alone.
const WAITS_FOR_YOU: u64 = 2;
/// Answer flag: blocked in a blocking collective the asker is in (its
/// communicator's id and number follow).
const IN_COLLECTIVE_WITH_YOU: u64 = 4;
/// Least time between two requests to one rank for one decision.
const REASK: Duration = Duration::from_micros(200);

/// One communicator's announcement duplicate and lanes.
struct DetComm {
    /// The program's communicator (bits).
    program: u64,
    /// Its id, the same on every rank of it (`coll.rs`'s `name`; 0 for
    /// world).
    id: u64,
    anns: MPI_Comm,
    /// This rank's rank in it.
    me: usize,
    /// World rank of each rank.
    world: Vec<i32>,
    lanes: Lanes,
    /// Per rank: the request for its clock.
    asked: Vec<Ask>,
    /// Per rank: the clock its answers say it is blocked in MPI at, since
    /// when, and when the last such answer came (it made no call since):
    /// stalled, not slow.
    still: Vec<Option<Still>>,
}

/// A rank answering, again and again, that it is blocked at one clock.
#[derive(Debug, Clone, Copy)]
struct Still {
    clock: u64,
    since: Instant,
    last: Instant,
}

/// Where a request for a rank's clock stands.
#[derive(Debug, Clone, Copy)]
enum Ask {
    /// Never asked, for this decision or since the last answer's wait.
    Idle,
    /// Asked; no answer yet.
    Waiting,
    /// Answered then (a blocked rank answers at once: asking it again at
    /// once would only spin).
    Answered(Instant),
}

/// The state of deterministic mode on one rank.
pub struct Det {
    clock: u64,
    comms: Vec<DetComm>,
    /// Control messages in flight, with their words.
    outbox: Vec<(Box<[u64; WORDS]>, MPI_Request)>,
    /// Words of control messages MPI is done with, for the next ones (no
    /// allocation per message once the job has warmed up). Boxed: they go
    /// back into the outbox, where MPI reads them and they must not move.
    #[allow(clippy::vec_box)]
    spare: Vec<Box<[u64; WORDS]>>,
    /// Requests to answer: (communicator index, asker, clock wanted).
    due: Vec<(usize, c_int, u64)>,
    /// Messages sent to / received from each world rank.
    sent_to: Vec<u64>,
    received_from: Vec<u64>,
    /// The world rank a blocking receive or probe waits for alone.
    pub(super) waits_for: Option<i32>,
    /// Inside a blocking call's polling loop.
    pub(super) blocked: bool,
    /// The blocking collective in progress: its communicator's world
    /// ranks (`None`: all of world), id and collective number.
    in_collective: Option<(Option<Vec<i32>>, u64, u64)>,
    /// `FINAL` was sent: nothing more goes out.
    finished: bool,
    patience: Duration,
    pub stats: DecisionStats,
    inbox: [u64; WORDS],
    /// The index the next choice among requests takes (`dtp.rs`).
    pub(super) forced_index: Option<usize>,
    /// Nonblocking wildcard receives not decided yet (`deferred.rs`).
    pub(super) deferred: super::deferred::DeferredReceives,
}

impl Det {
    /// Deterministic mode for a world of `size` ranks.
    pub fn new(size: usize, patience: Duration) -> Self {
        Det {
            clock: 0,
            comms: Vec::with_capacity(8),
            outbox: Vec::with_capacity(64),
            spare: Vec::with_capacity(64),
            due: Vec::with_capacity(8),
            sent_to: vec![0; size],
            received_from: vec![0; size],
            waits_for: None,
            blocked: false,
            in_collective: None,
            finished: false,
            patience,
            stats: DecisionStats::default(),
            inbox: [0; WORDS],
            forced_index: None,
            deferred: super::deferred::DeferredReceives::new(),
        }
    }

    fn find(&self, comm: MPI_Comm) -> Option<usize> {
        let bits = comm.bits();
        self.comms.iter().position(|c| c.program == bits)
    }
}

impl Rt {
    /// Whether deterministic mode decides wildcards on `comm`: it has an
    /// announcement duplicate (not an intercommunicator, nor one whose
    /// ranks could not agree on an id).
    pub(super) fn det_decides(&self, comm: MPI_Comm) -> bool {
        self.det.as_ref().is_some_and(|d| d.find(comm).is_some())
    }

    /// Makes `comm`'s announcement duplicate, a duplicate of `source` (the
    /// clock shadow, or world itself at start-up).
    ///
    /// # Safety
    ///
    /// Every rank of `comm` makes the same call; `source` has its ranks in
    /// its order.
    pub(super) unsafe fn det_attach(&mut self, comm: MPI_Comm, source: MPI_Comm, id: u64) {
        if self.det.is_none() {
            return;
        }
        let world: Vec<i32> = if comm.bits() == comm_world().bits() {
            (0..self.comms_world_size()).collect()
        } else {
            match self.comms.info(comm) {
                Some(info) if !info.inter => info.world.clone(),
                _ => return,
            }
        };
        let me = self.comms.comm_rank(comm, self.rank).unwrap_or(0).max(0) as usize;
        // SAFETY: the caller's contract.
        let anns = unsafe { self.dup(source) };
        let size = world.len();
        if let Some(det) = self.det.as_mut() {
            det.comms.push(DetComm {
                program: comm.bits(),
                id,
                anns,
                me,
                world,
                lanes: Lanes::new(size),
                asked: vec![Ask::Idle; size],
                still: vec![None; size],
            });
        }
    }

    fn comms_world_size(&self) -> i32 {
        self.det.as_ref().map_or(0, |d| d.sent_to.len() as i32)
    }

    /// A send or a posted receive: the clock ticks (seed 002 §3.2), and the
    /// requests it now satisfies are answered. Returns the new clock.
    pub(super) fn det_tick(&mut self) -> u64 {
        let Some(det) = self.det.as_mut() else {
            return 0;
        };
        det.clock += 1;
        let clock = det.clock;
        self.det_pull();
        self.det_answer(false);
        clock
    }

    /// Announces a message to `dest` (rank in `comm`) tagged `tag`, before
    /// it is sent.
    pub(super) fn det_announce(&mut self, comm: MPI_Comm, dest: c_int, tag: c_int) {
        let Some(det) = self.det.as_mut() else {
            return;
        };
        if dest < 0 {
            return;
        }
        // The clock ticks, but requests are answered only after the
        // announcement is out: an answer says every later announcement is
        // stamped above it, and this one is not.
        det.clock += 1;
        let stamp = det.clock;
        let Some(at) = det.find(comm) else {
            return;
        };
        let c = &mut det.comms[at];
        let Some(&world) = c.world.get(dest as usize) else {
            return;
        };
        if let Some(n) = det.sent_to.get_mut(world as usize) {
            *n += 1;
        }
        if dest as usize == c.me {
            c.lanes.announce(c.me, tag, stamp);
            self.det_pull();
            self.det_answer(false);
            return;
        }
        let anns = c.anns;
        self.det_send(anns, dest, tag, [ANNOUNCE, stamp, 0, 0, 0, 0, 0]);
        self.det_pull();
        self.det_answer(false);
    }

    /// Sends one control message (kept until MPI is done with it).
    fn det_send(&mut self, anns: MPI_Comm, to: c_int, tag: c_int, words: [u64; WORDS]) {
        let Some(det) = self.det.as_mut().filter(|d| !d.finished) else {
            return;
        };
        let words = match det.spare.pop() {
            Some(mut spare) => {
                *spare = words;
                spare
            }
            None => Box::new(words),
        };
        let mut request = request_null();
        // SAFETY: the words live in the outbox until the request completes.
        let rc = unsafe {
            mpi_sys::PMPI_Isend(
                words.as_ptr().cast(),
                WORDS as c_int,
                uint64(),
                to,
                tag,
                anns,
                &mut request,
            )
        };
        if rc != SUCCESS {
            crate::state::fatal(format_args!(
                "cannot send a deterministic-mode control message to rank {to} (MPI error {rc})"
            ));
        }
        det.outbox.push((words, request));
    }

    /// Reads every control message that arrived, and lets go of the sent
    /// ones MPI is done with.
    pub(super) fn det_pull(&mut self) {
        let Some(det) = self.det.as_mut() else {
            return;
        };
        let mut i = 0;
        while i < det.outbox.len() {
            let mut flag: c_int = 0;
            // SAFETY: a request the runtime made.
            let rc = unsafe {
                mpi_sys::PMPI_Test(
                    &mut det.outbox[i].1,
                    &mut flag,
                    crate::consts::status_ignore(),
                )
            };
            if rc == SUCCESS && flag == 0 {
                i += 1;
            } else {
                let (words, _) = det.outbox.swap_remove(i);
                det.spare.push(words);
            }
        }
        for at in 0..det.comms.len() {
            loop {
                let anns = det.comms[at].anns;
                let mut flag: c_int = 0;
                let mut status = super::blank_status();
                // SAFETY: the runtime's duplicate; valid out-parameters.
                let rc = unsafe {
                    mpi_sys::PMPI_Iprobe(any_source(), any_tag(), anns, &mut flag, &mut status)
                };
                if rc != SUCCESS || flag == 0 {
                    break;
                }
                let (from, tag) = (status.MPI_SOURCE, status.MPI_TAG);
                // SAFETY: the message just probed, four words.
                let rc = unsafe {
                    mpi_sys::PMPI_Recv(
                        det.inbox.as_mut_ptr().cast(),
                        WORDS as c_int,
                        uint64(),
                        from,
                        tag,
                        anns,
                        crate::consts::status_ignore(),
                    )
                };
                if rc != SUCCESS {
                    break;
                }
                let words = det.inbox;
                let c = &mut det.comms[at];
                let q = from as usize;
                match words[0] {
                    ANNOUNCE => {
                        c.lanes.announce(q, tag, words[1]);
                        // It sent: it is not stalled.
                        if let Some(still) = c.still.get_mut(q) {
                            *still = None;
                        }
                    }
                    REQUEST => det.due.push((at, from, words[1])),
                    ANSWER => {
                        c.lanes.answer(
                            q,
                            words[1],
                            Answer {
                                blocked: words[2] & BLOCKED != 0,
                                waits_for_me: words[2] & WAITS_FOR_YOU != 0,
                                received_from_me: words[3],
                                sent_to_me: words[6],
                                collective: (words[2] & IN_COLLECTIVE_WITH_YOU != 0)
                                    .then_some((words[4], words[5])),
                            },
                        );
                        if let Some(asked) = c.asked.get_mut(q) {
                            *asked = Ask::Answered(Instant::now());
                        }
                        if let Some(still) = c.still.get_mut(q) {
                            let (clock, now) = (words[1], Instant::now());
                            *still = match *still {
                                _ if words[2] & BLOCKED == 0 => None,
                                Some(s) if s.clock == clock => Some(Still { last: now, ..s }),
                                _ => Some(Still {
                                    clock,
                                    since: now,
                                    last: now,
                                }),
                            };
                        }
                    }
                    FINAL => c.lanes.finish(q, words[6]),
                    _ => {}
                }
            }
        }
    }

    /// Answers the requests this rank's clock now satisfies, or all of them
    /// when `blocked` (the asker then learns this rank waits).
    pub(super) fn det_answer(&mut self, blocked: bool) {
        let Some(det) = self.det.as_mut() else {
            return;
        };
        if det.due.is_empty() {
            return;
        }
        let clock = det.clock;
        let mut answers: Vec<(MPI_Comm, c_int, [u64; WORDS])> = Vec::new();
        det.due.retain(|&(at, asker, need)| {
            if clock < need && !blocked {
                return true;
            }
            let c = &det.comms[at];
            let world = c.world.get(asker as usize).copied().unwrap_or(-1);
            let mut flags = if blocked { BLOCKED } else { 0 };
            if blocked && det.waits_for == Some(world) {
                flags |= WAITS_FOR_YOU;
            }
            let mut collective = (0, 0);
            if let Some((members, id, n)) = det.in_collective.as_ref().filter(|_| blocked) {
                if members.as_ref().is_none_or(|m| m.contains(&world)) {
                    flags |= IN_COLLECTIVE_WITH_YOU;
                    collective = (*id, *n);
                }
            }
            let received = det.received_from.get(world as usize).copied().unwrap_or(0);
            let sent = det.sent_to.get(world as usize).copied().unwrap_or(0);
            answers.push((
                c.anns,
                asker,
                [
                    ANSWER,
                    clock,
                    flags,
                    received,
                    collective.0,
                    collective.1,
                    sent,
                ],
            ));
            false
        });
        for (anns, asker, words) in answers {
            self.det_send(anns, asker, 0, words);
        }
    }

    /// The logical time of the DTP of a request made now (seed 002 §3.3;
    /// `dtp.rs`).
    pub(super) fn det_due(&self) -> u64 {
        self.det.as_ref().map_or(0, |d| d.clock + super::dtp::K)
    }

    /// A decision the breaker made (`DecisionStats::relaxed`).
    pub(super) fn det_relaxed(&mut self) {
        if let Some(det) = self.det.as_mut() {
            det.stats.relaxed += 1;
        }
    }

    /// Asks `blockers` of communicator `at` for their clocks to reach
    /// `need`: once per answer, and not sooner than [`REASK`] after it.
    fn det_ask(&mut self, at: usize, blockers: &[usize], need: u64) {
        let mut to_ask: Vec<usize> = Vec::new();
        let anns = {
            let Some(det) = self.det.as_mut() else {
                return;
            };
            let c = &mut det.comms[at];
            for &q in blockers {
                let Some(asked) = c.asked.get_mut(q) else {
                    continue;
                };
                let ask = match *asked {
                    Ask::Idle => true,
                    Ask::Waiting => false,
                    Ask::Answered(when) => when.elapsed() >= REASK,
                };
                if ask {
                    *asked = Ask::Waiting;
                    to_ask.push(q);
                }
            }
            c.anns
        };
        for q in to_ask {
            self.det_send(anns, q as c_int, 0, [REQUEST, need, 0, 0, 0, 0, 0]);
        }
    }

    /// A receive or matched probe from `source` (rank in `comm`) with
    /// `tag` was posted, or took its message: it claims the message it
    /// will take ([`Lanes::claim`]).
    pub(super) fn det_claim(&mut self, comm: MPI_Comm, source: c_int, tag: c_int) {
        let Some(det) = self.det.as_mut() else {
            return;
        };
        let Some(at) = det.find(comm) else {
            return;
        };
        if source < 0 {
            return;
        }
        let tag = (tag != any_tag()).then_some(tag);
        det.comms[at].lanes.claim(source as usize, tag);
    }

    /// A receive completed with a message of `source` (rank in `comm`):
    /// counted for [`Answer::received_from_me`].
    pub(super) fn det_received(&mut self, comm: MPI_Comm, source: c_int) {
        let Some(det) = self.det.as_mut() else {
            return;
        };
        let Some(at) = det.find(comm) else {
            return;
        };
        let world = det.comms[at].world.get(source.max(0) as usize).copied();
        if let Some(n) = world.and_then(|w| det.received_from.get_mut(w as usize)) {
            *n += 1;
        }
    }

    /// A receive posted without a source (see `DecisionStats::undetermined`)
    /// took the message of `source` tagged `tag`: its announcement is done
    /// with (read on until it arrived: it was sent before the message).
    pub(super) fn det_took_unclaimed(&mut self, comm: MPI_Comm, source: c_int, tag: c_int) {
        let Some(at) = self.det.as_ref().and_then(|d| d.find(comm)) else {
            return;
        };
        if source < 0 {
            return;
        }
        while let Some(det) = self.det.as_mut() {
            if det.comms[at].lanes.consume(source as usize, tag) {
                return;
            }
            self.det_pull();
            super::pause();
        }
    }

    /// At `MPI_Finalize`, before the ranks meet: answers what was asked,
    /// then tells every other rank of every communicator that nothing more
    /// comes (and sends nothing after that).
    pub(super) fn det_finish(&mut self) {
        self.det_pull();
        self.det_answer(true);
        let Some(det) = self.det.as_ref() else {
            return;
        };
        let sent_to = &det.sent_to;
        let finals: Vec<(MPI_Comm, c_int, u64)> = det
            .comms
            .iter()
            .flat_map(|c| {
                (0..c.world.len())
                    .filter(move |&q| q != c.me)
                    .map(move |q| {
                        let sent = sent_to.get(c.world[q] as usize).copied().unwrap_or(0);
                        (c.anns, q as c_int, sent)
                    })
            })
            .collect();
        for (anns, q, sent) in finals {
            self.det_send(anns, q, 0, [FINAL, u64::MAX, 0, 0, 0, 0, sent]);
        }
        if let Some(det) = self.det.as_mut() {
            det.finished = true;
            det.due.clear();
        }
    }

    /// After every rank reached `MPI_Finalize`: reads every control message
    /// still coming (each rank's `FINAL` is its last, so none is left
    /// unreceived at `MPI_Finalize`), waits for those sent, writes the
    /// statistics, frees the duplicates.
    pub(super) fn det_close(&mut self) {
        while self
            .det
            .as_ref()
            .is_some_and(|d| d.comms.iter().any(|c| !c.lanes.all_finished_but(c.me)))
        {
            self.det_pull();
            super::pause();
        }
        let Some(mut det) = self.det.take() else {
            return;
        };
        for (_, request) in det.outbox.iter_mut() {
            let mut status: MPI_Status = super::blank_status();
            // SAFETY: a request the runtime made; its words live until
            // here.
            unsafe { mpi_sys::PMPI_Wait(request, &mut status) };
        }
        crate::start::write_decisions(self.rank, &det.stats);
        for c in det.comms.iter_mut() {
            // SAFETY: a duplicate the runtime made.
            unsafe { mpi_sys::PMPI_Comm_free(&mut c.anns) };
        }
    }
}

impl Rt {
    /// A blocking collective begins (its communicator and number among
    /// the communicator's collectives) or ends (`None`): a rank asked for
    /// its clock meanwhile says so to the ranks of the communicator (seed
    /// 002 §4.2.3: it can send nothing until they start that collective).
    pub(super) fn det_collective(&mut self, collective: Option<(MPI_Comm, u64)>) {
        if self.det.is_none() {
            return;
        }
        let entry = collective.and_then(|(comm, n)| {
            let id = self
                .det
                .as_ref()?
                .comms
                .iter()
                .find(|c| c.program == comm.bits())?
                .id;
            let members = (comm.bits() != comm_world().bits())
                .then(|| self.comms.info(comm).map(|i| i.world.clone()))
                .flatten();
            Some((members, id, n))
        });
        if let Some(det) = self.det.as_mut() {
            det.in_collective = entry;
        }
    }

    /// How many collectives this rank has started on each communicator
    /// deterministic mode knows, by id.
    fn collectives_started(&self) -> Vec<(u64, u64)> {
        let Some(det) = self.det.as_ref() else {
            return Vec::new();
        };
        det.comms
            .iter()
            .map(|c| (c.id, self.sig_started(c.program)))
            .collect()
    }

    /// Marks this rank as blocked in MPI (or not) for the answers it gives;
    /// returns what it was, for nested loops to restore.
    pub(super) fn det_blocking(&mut self, blocked: bool) -> bool {
        match self.det.as_mut() {
            Some(det) => std::mem::replace(&mut det.blocked, blocked),
            None => false,
        }
    }

    /// A blocking receive or probe from world rank `world` alone begins
    /// (`Some`) or ends (`None`): a rank asked for its clock meanwhile says
    /// it waits for that rank (seed 002 §4.2.3's confirmed dependence).
    pub(super) fn det_waits_for(&mut self, world: Option<i32>) {
        if let Some(det) = self.det.as_mut() {
            det.waits_for = world;
        }
    }

    /// A blocking receive or probe posted to `source` (rank in `comm`;
    /// a wildcard waits for no one alone) begins.
    pub(super) fn det_alone(&mut self, comm: MPI_Comm, source: c_int) {
        if self.det.is_some() && source >= 0 {
            let world = self.comms.world_rank(comm, source);
            self.det_waits_for(Some(world));
        }
    }

    /// A wildcard receive deterministic mode could not decide: it takes
    /// the first message to arrive.
    pub(super) fn det_undetermined(&mut self) {
        if let Some(det) = self.det.as_mut() {
            det.stats.undetermined += 1;
        }
    }
}
