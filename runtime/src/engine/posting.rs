//! How a receive or probe is posted: which source MPI is given, and the
//! wildcard event it is. The run's [`Strategy`] decides, in one place
//! ([`Rt::posting`]); the rest of the engine posts what it is handed.
//!
//! - **Free** (a first run, `SELF_RUN`): the source the program gave; a
//!   wildcard takes the next event number.
//! - **Guided** (a replay, `GUIDED_RUN`, seed 000 Fig 5.15): as free, then a
//!   wildcard event the guidance names is posted to its forced sender, so
//!   the match happens whatever the timing.
//! - **Deterministic** (`mbhybrid run`, seed 002): the clock ticks, and
//!   logical time chooses a wildcard's sender (`deterministic.rs`); a
//!   nonblocking receive it cannot decide yet is deferred (`deferred.rs`),
//!   a nonblocking probe reports only the message logical time gives it.
//!
//! Choices among requests (`choose.rs`) follow the same three ways.

use super::Rt;
use crate::consts::any_source;
use crate::llcp::Rank;
use mpi_sys::MPI_Comm;
use std::os::raw::c_int;

/// How a receive was posted.
#[derive(Debug, Clone, Copy)]
pub(super) struct Posting {
    /// The source given to MPI (the forced one in a guided run).
    pub source: c_int,
    /// Its wildcard event number, for `MPI_ANY_SOURCE`.
    pub event: Option<u32>,
    /// The forced sender (world rank) in a guided run.
    pub forced: Option<Rank>,
    /// Deterministic mode's nonblocking probe reports no message.
    pub hold: bool,
    /// Deterministic mode defers this nonblocking receive (`deferred.rs`).
    pub defer: bool,
    /// A wildcard probe deterministic mode does not decide (an
    /// intercommunicator): a message it finds is counted as undetermined.
    pub undecided: bool,
    /// Deterministic mode's nonblocking probe reports the message of
    /// `source`, which was announced: the probe waits for it to arrive.
    pub arrive: bool,
}

impl Posting {
    /// A receive or probe from `source` as given.
    pub fn plain(source: c_int) -> Self {
        Posting {
            source,
            event: None,
            forced: None,
            hold: false,
            arrive: false,
            defer: false,
            undecided: false,
        }
    }
}

/// How a wildcard receive or probe may wait for deterministic mode's
/// decision (seed 002 §3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Waits {
    /// A blocking call: it waits for the decision.
    Block,
    /// A nonblocking receive: decided now, or deferred (`deferred.rs`).
    Post,
    /// The receive of `MPI_Sendrecv`, posted before its send: decided
    /// now, or not by logical time.
    Exchange,
    /// A nonblocking probe: decided now, or it finds nothing yet. Takes no
    /// event number.
    Peek,
}

/// The way this run posts receives (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Strategy {
    /// As the program posts them.
    Free,
    /// Wildcards the guidance names go to their forced senders.
    Guided,
    /// Wildcards go to the sender logical time chooses.
    Deterministic,
}

impl Rt {
    /// This run's way of posting receives: deterministic mode when it is
    /// on, else guided in a replay, else free.
    pub(super) fn strategy(&self) -> Strategy {
        if self.det.is_some() {
            Strategy::Deterministic
        } else if self.llcp.guiding() {
            Strategy::Guided
        } else {
            Strategy::Free
        }
    }

    /// How a receive from `source` with `tag` on `comm` is posted: a
    /// wildcard takes an event number (unless it only peeks: `Waits::Peek`)
    /// and its source from the run's [`Strategy`].
    pub(super) fn posting(
        &mut self,
        comm: MPI_Comm,
        source: c_int,
        tag: c_int,
        waits: Waits,
    ) -> Posting {
        match self.strategy() {
            Strategy::Free => self.free_posting(source, waits),
            Strategy::Guided => self.guided_posting(comm, source, waits),
            Strategy::Deterministic => self.deterministic_posting(comm, source, tag, waits),
        }
    }

    /// [`Rt::posting`] for a receive (not a probe): in deterministic mode
    /// a receive not deferred also claims the message it will take
    /// (`Rt::det_claim`).
    pub(super) fn receive_posting(
        &mut self,
        comm: MPI_Comm,
        source: c_int,
        tag: c_int,
        waits: Waits,
    ) -> Posting {
        let posting = self.posting(comm, source, tag, waits);
        if self.strategy() == Strategy::Deterministic && !posting.defer {
            self.det_claim(comm, posting.source, tag);
        }
        posting
    }

    /// The source as given; a wildcard takes the next event number (a
    /// peek only reads it).
    fn free_posting(&mut self, source: c_int, waits: Waits) -> Posting {
        if source != any_source() {
            return Posting::plain(source);
        }
        let event = if waits == Waits::Peek {
            self.llcp.peek_event()
        } else {
            self.llcp.next_event()
        };
        Posting {
            event: Some(event),
            ..Posting::plain(source)
        }
    }

    /// As free; a wildcard event the guidance names goes to its forced
    /// sender.
    fn guided_posting(&mut self, comm: MPI_Comm, source: c_int, waits: Waits) -> Posting {
        let mut posting = self.free_posting(source, waits);
        if let Some(event) = posting.event {
            if let Some(world) = self.forced.source_for(self.rank, event) {
                self.force(comm, event, world, &mut posting);
            }
        }
        posting
    }

    /// Posts a wildcard to world rank `world`, when it is in `comm`.
    fn force(&mut self, comm: MPI_Comm, event: u32, world: Rank, posting: &mut Posting) {
        match self.comms.comm_rank(comm, world) {
            Some(rank) => {
                posting.source = rank;
                posting.forced = Some(world);
            }
            None => {
                let _ = std::io::Write::write_fmt(
                    &mut std::io::stderr(),
                    format_args!(
                        "mbhybrid: guidance forces event {event} of rank {} to rank {world}, \
                         which is not in the receive's communicator; receiving from any source\n",
                        self.rank
                    ),
                );
            }
        }
    }

    /// The clock ticks; a nonblocking receive behind a deferred one of its
    /// communicator is deferred too; a wildcard's sender is the one
    /// logical time chooses.
    fn deterministic_posting(
        &mut self,
        comm: MPI_Comm,
        source: c_int,
        tag: c_int,
        waits: Waits,
    ) -> Posting {
        self.det_tick();
        if waits == Waits::Post && self.det_has_deferred(comm) {
            return self.deferred_posting(source);
        }
        self.det_resolve_comm(comm);
        if waits == Waits::Peek {
            return self.deterministic_peek(comm, source, tag);
        }
        let mut posting = self.free_posting(source, waits);
        if posting.event.is_some() {
            self.deterministic_source(comm, tag, waits, &mut posting);
        }
        posting
    }

    /// Deterministic mode's sender for a wildcard (see [`Waits`]).
    fn deterministic_source(
        &mut self,
        comm: MPI_Comm,
        tag: c_int,
        waits: Waits,
        posting: &mut Posting,
    ) {
        // Not `forced`: to the clocks this stays the wildcard the program
        // posted, with every potential sender reported (`verify
        // --deterministic` explores from this run).
        if !self.det_decides(comm) {
            // An intercommunicator: the first message to arrive, counted.
            self.det_undetermined();
            return;
        }
        let block = waits == Waits::Block;
        match self.det_choose(comm, tag, block, block) {
            Some(rank) => posting.source = rank,
            None if waits == Waits::Post => posting.defer = true,
            None => self.det_undetermined(),
        }
    }

    /// A nonblocking receive deferred behind another on its communicator.
    fn deferred_posting(&mut self, source: c_int) -> Posting {
        Posting {
            event: (source == any_source()).then(|| self.llcp.next_event()),
            defer: true,
            ..Posting::plain(source)
        }
    }

    /// Deterministic mode's posting of a nonblocking probe (seed 002 §3.3,
    /// `dtp.rs`): the message it reports, or none.
    fn deterministic_peek(&mut self, comm: MPI_Comm, source: c_int, tag: c_int) -> Posting {
        let event = (source == any_source()).then(|| self.llcp.peek_event());
        let mut posting = Posting {
            event,
            ..Posting::plain(source)
        };
        if !self.det_decides(comm) {
            // An intercommunicator: MPI's answer, counted when it finds a
            // message from any source.
            posting.undecided = source == any_source();
            return posting;
        }
        match self.det_peek(comm, source, tag) {
            Some(rank) => {
                posting.source = rank;
                posting.arrive = true;
            }
            None => posting.hold = true,
        }
        posting
    }
}
