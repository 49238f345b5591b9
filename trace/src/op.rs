//! The kinds of MPI operation a rank trace records.
//!
//! Codes are part of the rank trace format: append new kinds at the end of
//! their group, never renumber (a reader of an older trace must still read it).

use serde::{Deserialize, Serialize};

macro_rules! op_kinds {
    ($( $(#[$doc:meta])* $variant:ident = $code:literal => $name:literal, $class:ident; )*) => {
        /// An MPI operation, as recorded in a rank trace.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[repr(u16)]
        pub enum OpKind {
            $( $(#[$doc])* $variant = $code, )*
        }

        impl OpKind {
            /// Every kind, in code order.
            pub const ALL: &'static [OpKind] = &[$(OpKind::$variant,)*];

            /// The kind with trace code `code`.
            pub fn from_code(code: u16) -> Option<OpKind> {
                match code {
                    $( $code => Some(OpKind::$variant), )*
                    _ => None,
                }
            }

            /// The MPI function's name (`MPI_Send`).
            pub fn mpi_name(self) -> &'static str {
                match self { $( OpKind::$variant => $name, )* }
            }

            /// What the operation does, for matching and reporting.
            #[inline]
            pub fn class(self) -> OpClass {
                match self { $( OpKind::$variant => OpClass::$class, )* }
            }
        }
    };
}

op_kinds! {
    /// `MPI_Init`.
    Init = 1 => "MPI_Init", Lifecycle;
    /// `MPI_Init_thread`.
    InitThread = 2 => "MPI_Init_thread", Lifecycle;
    /// `MPI_Finalize`.
    Finalize = 3 => "MPI_Finalize", Lifecycle;
    /// `MPI_Abort`: the program gave up on purpose.
    Abort = 4 => "MPI_Abort", Lifecycle;
    /// `MPI_Pcontrol` (mbhybrid's markers use levels 7301-7305).
    Pcontrol = 5 => "MPI_Pcontrol", Marker;
    /// `MPI_Send`.
    Send = 16 => "MPI_Send", Send;
    /// `MPI_Ssend`.
    Ssend = 17 => "MPI_Ssend", Send;
    /// `MPI_Bsend`.
    Bsend = 18 => "MPI_Bsend", Send;
    /// `MPI_Rsend`.
    Rsend = 19 => "MPI_Rsend", Send;
    /// `MPI_Isend`.
    Isend = 20 => "MPI_Isend", Send;
    /// `MPI_Issend`.
    Issend = 21 => "MPI_Issend", Send;
    /// `MPI_Ibsend`.
    Ibsend = 22 => "MPI_Ibsend", Send;
    /// `MPI_Irsend`.
    Irsend = 23 => "MPI_Irsend", Send;
    /// `MPI_Send_init`: makes a persistent request; no message. `peer`,
    /// `tag`, `comm`, `count`, `aux` as for `MPI_Send`; `request` = the
    /// program's handle.
    SendInit = 24 => "MPI_Send_init", Request;
    /// `MPI_Bsend_init`.
    BsendInit = 25 => "MPI_Bsend_init", Request;
    /// `MPI_Ssend_init`.
    SsendInit = 26 => "MPI_Ssend_init", Request;
    /// `MPI_Rsend_init`.
    RsendInit = 27 => "MPI_Rsend_init", Request;
    /// `MPI_Start` (or one request of `MPI_Startall`) of an
    /// `MPI_Send_init` request: recorded like the `MPI_Isend` it stands
    /// for, at the start's site (`request` = the runtime's inner request,
    /// `aux` = datatype); completions link to it as to an `Isend`.
    StartSend = 28 => "MPI_Start", Send;
    /// `MPI_Start` of an `MPI_Bsend_init` request (like `MPI_Ibsend`).
    StartBsend = 29 => "MPI_Start", Send;
    /// `MPI_Start` of an `MPI_Ssend_init` request (like `MPI_Issend`).
    StartSsend = 30 => "MPI_Start", Send;
    /// `MPI_Start` of an `MPI_Rsend_init` request (like `MPI_Irsend`).
    StartRsend = 31 => "MPI_Start", Send;
    /// `MPI_Recv`.
    Recv = 32 => "MPI_Recv", Receive;
    /// `MPI_Irecv`.
    Irecv = 33 => "MPI_Irecv", Receive;
    /// `MPI_Sendrecv`.
    Sendrecv = 34 => "MPI_Sendrecv", Receive;
    /// `MPI_Probe`.
    Probe = 35 => "MPI_Probe", Probe;
    /// `MPI_Iprobe`.
    Iprobe = 36 => "MPI_Iprobe", Probe;
    /// `MPI_Recv_init`: makes a persistent request; no message. Fields as
    /// for `MPI_Irecv` (`peer` = the source given).
    RecvInit = 37 => "MPI_Recv_init", Request;
    /// `MPI_Start` (or one request of `MPI_Startall`) of an `MPI_Recv_init`
    /// request: recorded like the `MPI_Irecv` it stands for, at the start's
    /// site (one wildcard event per start for `MPI_ANY_SOURCE`).
    StartRecv = 38 => "MPI_Start", Receive;
    /// `MPI_Mprobe`: a probe that takes the message it finds (fields as for
    /// `MPI_Probe`; with `MPI_ANY_SOURCE` a wildcard event, forced in a
    /// replay). `request` = the message handle.
    Mprobe = 39 => "MPI_Mprobe", Probe;
    /// `MPI_Improbe`, recorded only when it finds a message.
    Improbe = 40 => "MPI_Improbe", Probe;
    /// `MPI_Mrecv`: receives the message a matched probe took. `peer`,
    /// `tag`, `comm` = the message's (from the probe); `count`, `aux` as
    /// for `MPI_Recv`; `Matched` names this record.
    Mrecv = 41 => "MPI_Mrecv", Receive;
    /// `MPI_Imrecv`: the nonblocking `MPI_Mrecv`, completed by a
    /// `Wait`/`Test` like an `MPI_Irecv`.
    Imrecv = 42 => "MPI_Imrecv", Receive;
    /// `MPI_Sendrecv_replace`: fields as for `MPI_Sendrecv`.
    SendrecvReplace = 43 => "MPI_Sendrecv_replace", Receive;
    /// `MPI_Wait`.
    Wait = 48 => "MPI_Wait", Completion;
    /// `MPI_Waitall`.
    Waitall = 49 => "MPI_Waitall", Completion;
    /// `MPI_Waitany`.
    Waitany = 50 => "MPI_Waitany", Completion;
    /// `MPI_Test`.
    Test = 51 => "MPI_Test", Completion;
    /// `MPI_Waitsome`.
    Waitsome = 52 => "MPI_Waitsome", Completion;
    /// `MPI_Testall`, recorded only when it completes the requests.
    Testall = 53 => "MPI_Testall", Completion;
    /// `MPI_Testany`, recorded only when it completes a request.
    Testany = 54 => "MPI_Testany", Completion;
    /// `MPI_Testsome`, recorded only when it completes a request.
    Testsome = 55 => "MPI_Testsome", Completion;
    /// `MPI_Request_free` of a persistent request (`request` = its handle,
    /// `aux` = 1 + index of its init's record).
    RequestFree = 58 => "MPI_Request_free", Request;
    /// `MPI_Cancel` (`request` = the request, `aux` = 1 + index of the
    /// record that made it, 0 if unknown).
    Cancel = 59 => "MPI_Cancel", Request;
    /// `MPI_Barrier`.
    Barrier = 64 => "MPI_Barrier", Collective;
    /// `MPI_Bcast`.
    Bcast = 65 => "MPI_Bcast", Collective;
    /// `MPI_Reduce`.
    Reduce = 66 => "MPI_Reduce", Collective;
    /// `MPI_Allreduce`.
    Allreduce = 67 => "MPI_Allreduce", Collective;
    /// `MPI_Gather`.
    Gather = 68 => "MPI_Gather", Collective;
    /// `MPI_Scatter`.
    Scatter = 69 => "MPI_Scatter", Collective;
    /// `MPI_Allgather`.
    Allgather = 70 => "MPI_Allgather", Collective;
    /// `MPI_Alltoall`.
    Alltoall = 71 => "MPI_Alltoall", Collective;
    /// `MPI_Gatherv`.
    Gatherv = 72 => "MPI_Gatherv", Collective;
    /// `MPI_Scatterv`.
    Scatterv = 73 => "MPI_Scatterv", Collective;
    /// `MPI_Allgatherv`.
    Allgatherv = 74 => "MPI_Allgatherv", Collective;
    /// `MPI_Alltoallv`.
    Alltoallv = 75 => "MPI_Alltoallv", Collective;
    /// `MPI_Alltoallw`.
    Alltoallw = 76 => "MPI_Alltoallw", Collective;
    /// `MPI_Reduce_scatter`.
    ReduceScatter = 77 => "MPI_Reduce_scatter", Collective;
    /// `MPI_Reduce_scatter_block`.
    ReduceScatterBlock = 78 => "MPI_Reduce_scatter_block", Collective;
    /// `MPI_Scan`.
    Scan = 79 => "MPI_Scan", Collective;
    /// `MPI_Exscan`.
    Exscan = 80 => "MPI_Exscan", Collective;
    /// `MPI_Ibarrier`. Nonblocking collectives (96-112) are recorded at
    /// the call with `request` = the request handle; the call that
    /// completes the request is named by a [`OpKind::CollectiveComplete`]
    /// record. A `Wait` on the request names this record
    /// ([`Op::request_origin`](crate::rank_trace::Op::request_origin)), a
    /// `Waitall`/`Waitany`/`Waitsome` in a [`OpKind::WaitRequest`] record.
    /// Every collective record (blocking or not) has `comm` = the
    /// communicator, `peer` = the root (0 when none), `tag` = 1 + its
    /// sequence number among the collectives on the communicator (0: not
    /// known, as for intercommunicators; read it through
    /// [`Op::collective_sequence`](crate::rank_trace::Op::collective_sequence)), `count`/`aux` = the send side's
    /// count and datatype.
    Ibarrier = 96 => "MPI_Ibarrier", Collective;
    /// `MPI_Ibcast`.
    Ibcast = 97 => "MPI_Ibcast", Collective;
    /// `MPI_Ireduce`.
    Ireduce = 98 => "MPI_Ireduce", Collective;
    /// `MPI_Iallreduce`.
    Iallreduce = 99 => "MPI_Iallreduce", Collective;
    /// `MPI_Igather`.
    Igather = 100 => "MPI_Igather", Collective;
    /// `MPI_Igatherv`.
    Igatherv = 101 => "MPI_Igatherv", Collective;
    /// `MPI_Iscatter`.
    Iscatter = 102 => "MPI_Iscatter", Collective;
    /// `MPI_Iscatterv`.
    Iscatterv = 103 => "MPI_Iscatterv", Collective;
    /// `MPI_Iallgather`.
    Iallgather = 104 => "MPI_Iallgather", Collective;
    /// `MPI_Iallgatherv`.
    Iallgatherv = 105 => "MPI_Iallgatherv", Collective;
    /// `MPI_Ialltoall`.
    Ialltoall = 106 => "MPI_Ialltoall", Collective;
    /// `MPI_Ialltoallv`.
    Ialltoallv = 107 => "MPI_Ialltoallv", Collective;
    /// `MPI_Ialltoallw`.
    Ialltoallw = 108 => "MPI_Ialltoallw", Collective;
    /// `MPI_Ireduce_scatter`.
    IreduceScatter = 109 => "MPI_Ireduce_scatter", Collective;
    /// `MPI_Ireduce_scatter_block`.
    IreduceScatterBlock = 110 => "MPI_Ireduce_scatter_block", Collective;
    /// `MPI_Iscan`.
    Iscan = 111 => "MPI_Iscan", Collective;
    /// `MPI_Iexscan`.
    Iexscan = 112 => "MPI_Iexscan", Collective;
    /// `MPI_Win_create`. One-sided communication (RMA, MPI-4.0 chapter 12;
    /// 160-189) is recorded, one record per call, with `request` = the window's
    /// id on this rank (1 for the first window it made, then 2, ...), `comm` =
    /// the window's communicator, `peer` = the target as a rank of
    /// `MPI_COMM_WORLD` where the call has one (-1 otherwise, `PROC_NULL`
    /// flagged); the other fields per kind:
    /// [`Op::rma`](crate::rank_trace::Op::rma). The epoch checks read them;
    /// races are not checked yet.
    WinCreate = 160 => "MPI_Win_create", Rma;
    /// `MPI_Win_allocate`.
    WinAllocate = 161 => "MPI_Win_allocate", Rma;
    /// `MPI_Win_allocate_shared`.
    WinAllocateShared = 162 => "MPI_Win_allocate_shared", Rma;
    /// `MPI_Win_create_dynamic`.
    WinCreateDynamic = 163 => "MPI_Win_create_dynamic", Rma;
    /// `MPI_Win_free`.
    WinFree = 164 => "MPI_Win_free", Rma;
    /// `MPI_Win_fence` (`tag` = its assert).
    WinFence = 165 => "MPI_Win_fence", Rma;
    /// `MPI_Win_lock` (`count` = the lock type, [`crate::rma::RmaLock`] code; `tag` =
    /// assert).
    WinLock = 166 => "MPI_Win_lock", Rma;
    /// `MPI_Win_unlock`.
    WinUnlock = 167 => "MPI_Win_unlock", Rma;
    /// `MPI_Win_lock_all` (`tag` = assert).
    WinLockAll = 168 => "MPI_Win_lock_all", Rma;
    /// `MPI_Win_unlock_all`.
    WinUnlockAll = 169 => "MPI_Win_unlock_all", Rma;
    /// `MPI_Win_post` (`tag` = assert, `count` = the group's size, `aux` =
    /// its world ranks as a bit set, [`crate::rma::GROUP_RANKS`]).
    WinPost = 170 => "MPI_Win_post", Rma;
    /// `MPI_Win_start` (`tag` = assert, `count` = the group's size, `aux` =
    /// its world ranks as a bit set, [`crate::rma::GROUP_RANKS`]).
    WinStart = 171 => "MPI_Win_start", Rma;
    /// `MPI_Win_complete`.
    WinComplete = 172 => "MPI_Win_complete", Rma;
    /// `MPI_Win_wait`.
    WinWait = 173 => "MPI_Win_wait", Rma;
    /// `MPI_Win_test`, recorded only when it ends the exposure epoch
    /// (`count` = 1) or fails (`count` = 0).
    WinTest = 174 => "MPI_Win_test", Rma;
    /// `MPI_Win_flush`.
    WinFlush = 175 => "MPI_Win_flush", Rma;
    /// `MPI_Win_flush_all`.
    WinFlushAll = 176 => "MPI_Win_flush_all", Rma;
    /// `MPI_Win_flush_local`.
    WinFlushLocal = 177 => "MPI_Win_flush_local", Rma;
    /// `MPI_Win_flush_local_all`.
    WinFlushLocalAll = 178 => "MPI_Win_flush_local_all", Rma;
    /// `MPI_Win_sync`.
    WinSync = 179 => "MPI_Win_sync", Rma;
    /// `MPI_Put` (`count` = origin count, `aux` = target displacement, two's
    /// complement).
    Put = 180 => "MPI_Put", Rma;
    /// `MPI_Get`.
    Get = 181 => "MPI_Get", Rma;
    /// `MPI_Accumulate`.
    Accumulate = 182 => "MPI_Accumulate", Rma;
    /// `MPI_Get_accumulate`.
    GetAccumulate = 183 => "MPI_Get_accumulate", Rma;
    /// `MPI_Fetch_and_op` (`count` = 1).
    FetchAndOp = 184 => "MPI_Fetch_and_op", Rma;
    /// `MPI_Compare_and_swap` (`count` = 1).
    CompareAndSwap = 185 => "MPI_Compare_and_swap", Rma;
    /// `MPI_Rput`.
    Rput = 186 => "MPI_Rput", Rma;
    /// `MPI_Rget`.
    Rget = 187 => "MPI_Rget", Rma;
    /// `MPI_Raccumulate`.
    Raccumulate = 188 => "MPI_Raccumulate", Rma;
    /// `MPI_Rget_accumulate`.
    RgetAccumulate = 189 => "MPI_Rget_accumulate", Rma;
    /// Not an MPI call: the request of a nonblocking collective completed,
    /// and which call completed it (the fields:
    /// [`Op::collective_completion`](crate::rank_trace::Op::collective_completion)).
    CollectiveComplete = 127 => "mbhybrid:collective-complete", Clock;
    /// Not an MPI call: a wildcard receive or probe reached its final clock
    /// (seed 000 §5.1.2, rules R2/R4); the fields:
    /// [`Op::event_clock`](crate::rank_trace::Op::event_clock).
    WildcardClock = 240 => "mbhybrid:wildcard-clock", Clock;
    /// Not an MPI call: a sender found as a potential match of a wildcard
    /// event it did not match (seed 000 Theorem 5.3, Figs 5.19/5.20); the
    /// fields: [`Op::potential`](crate::rank_trace::Op::potential).
    PotentialMatch = 241 => "mbhybrid:potential-match", Clock;
    /// Not an MPI call: which remote send a receive matched, from the
    /// piggybacked header. Its fields are decoded, and specified, by
    /// [`Op::matched_send`](crate::rank_trace::Op::matched_send).
    Matched = 242 => "mbhybrid:matched", Clock;
    /// Not an MPI call: a local check failed (DESIGN.md "Local checks").
    /// `count` = the check ([`LocalCheck`] code), `site` = site of the call
    /// at fault (for a leak: the call that created the handle), `request` =
    /// index of that call's record, `peer` = the other rank involved (the
    /// sender, for a type mismatch; -1 if none), `tag` = the MPI error code
    /// (for `MpiError`), `aux` = check-specific detail: for `TypeMismatch`
    /// the sender's record index; for leaks the handle bits.
    LocalCheck = 243 => "mbhybrid:local-check", Clock;
    /// Not an MPI call: the name every member's trace gives a communicator,
    /// and this rank's rank in it, so analyses can compare communicators
    /// across ranks and name its ranks in `MPI_COMM_WORLD` (the fields:
    /// [`Op::comm_naming`](crate::rank_trace::Op::comm_naming)). Written
    /// when the runtime sees a communicator made;
    /// [`RankTrace::parse`](crate::RankTrace::parse) renames the records
    /// that follow. `site` = the constructor's call (`MPI_Comm_split`,
    /// ...), so reports can say which communicator they mean (0 in traces
    /// from before).
    CommId = 244 => "mbhybrid:comm-id", Clock;
    /// Not an MPI call: one request a blocked `MPI_Waitall`, `MPI_Waitany`
    /// or `MPI_Waitsome` waits for (the fields:
    /// [`Op::wait_request`](crate::rank_trace::Op::wait_request)), so the
    /// wait-for graph knows what the call cannot return without (a
    /// `Waitall` every listed request, a `Waitany` one of them). One record
    /// per active request in the order given (only the one a replay forces,
    /// for a forced `Waitany`/`Waitsome`), written after the call's record
    /// once the call has polled for a while (the runtime's busy passes), or
    /// before it blocks inside MPI: a call that completes at once, as in a
    /// halo exchange whose messages arrived, writes none. Other records the
    /// call writes may come between.
    WaitRequest = 245 => "mbhybrid:wait-request", Clock;
    /// Not an MPI call: a point-to-point request that a call on several
    /// requests (`MPI_Waitall`, `MPI_Waitany`, `MPI_Waitsome`,
    /// `MPI_Testall`, `MPI_Testany`, `MPI_Testsome`) completed, one record
    /// per request, written during that call (after its record, before the
    /// `Matched` record of a receive); the fields:
    /// [`Op::completed_request`](crate::rank_trace::Op::completed_request).
    /// The completion records name only their first request
    /// ([`Op::request_origin`](crate::rank_trace::Op::request_origin)), so
    /// without these an analysis cannot tell which sends such a call waited
    /// for (the buffering analysis needs it, seed 003 §3). Traces written
    /// before this record existed have none: readers must treat a call on
    /// several requests without them as completing unknown requests.
    Completed = 246 => "mbhybrid:completed", Clock;
    /// Not an MPI call: a choice among requests reached its final clock
    /// (seed 001 §4 treats which request `MPI_Waitany` returns like the
    /// sender a wildcard receive takes). Made by an `MPI_Waitany`, a
    /// `MPI_Testany` that completed a request, an `MPI_Waitsome` or a
    /// `MPI_Testsome` that completed some, given more than one active
    /// request. Fields as for [`OpKind::WildcardClock`]
    /// ([`Op::event_clock`](crate::rank_trace::Op::event_clock)), in the
    /// same per-rank event numbering.
    ChoiceClock = 247 => "mbhybrid:choice-clock", Clock;
    /// Not an MPI call: an index a choice among requests could have
    /// returned instead (a request of the array that completed with a
    /// message not causally after the choice); the fields:
    /// [`Op::potential`](crate::rank_trace::Op::potential).
    PotentialIndex = 248 => "mbhybrid:potential-index", Clock;
    /// Not an MPI call: a communicator constructor (`MPI_Comm_split`,
    /// `MPI_Comm_dup`, ...) synchronised the clocks of every rank of `comm`
    /// (its parent; for `MPI_Comm_create_group`, the new communicator): the
    /// `k`-th such record on `comm` of each member is one synchronising
    /// match set, as a `MPI_Barrier` would be. Constructors have no record
    /// of their own; the matches-before oracle orders by this one.
    CommMade = 249 => "mbhybrid:comm-made", Clock;
    /// Not an MPI call: a receive of a choice's array still incomplete when
    /// the choice returned, which the choice could have returned instead if
    /// its message came first (the fields:
    /// [`Op::choice_candidate`](crate::rank_trace::Op::choice_candidate)).
    /// The clocks judge it when it completes
    /// ([`OpKind::PotentialIndex`]); the matches-before oracle judges it
    /// from the whole run, where Lamport clocks cannot (seed 000 Fig 5.3).
    ChoiceCandidate = 250 => "mbhybrid:choice-candidate", Clock;
    /// Not an MPI call: which MPI function the call of site `site` calls,
    /// for a site the runtime made from a return address (top bit set,
    /// [`crate::site::FROM_RETURN_ADDRESS`]): the site table of a program
    /// `build` did not make cannot say. Written the first time the rank
    /// makes a call from that address (again, rarely, when its table of
    /// addresses seen is full there). `comm`, `request`, `aux` = the
    /// function's name after `MPI_` ([`call_name`]).
    CallSite = 251 => "mbhybrid:call-site", Clock;
    /// Not an MPI call: a receive that MPI completed before the program
    /// completed it, so the runtime has not processed it (clock, `Matched`
    /// record): inside a blocked `MPI_Waitall` that processes its
    /// completions only when it returns (written once the call has polled
    /// long enough to look stuck), or seen complete by the runtime's
    /// polling while the rank waited or polled for something else. The
    /// fields are a `Matched` record's except `request`, the receive's own
    /// record (`MPI_Irecv`, ...)
    /// ([`Op::settled_send`](crate::rank_trace::Op::settled_send)). The
    /// wait-for graph must not count the receive as still posted: a send
    /// it took would look takeable by it (a `Waitall` over a wildcard
    /// receive MPI completed inside the call looked "slow, not stuck", and
    /// its deadlock was left to the timeout). Only
    /// the graph reads it; the `Matched` record follows when the program
    /// completes the receive, if it does.
    Settled = 252 => "mbhybrid:settled", Clock;
    /// Not an MPI call: the program called an MPI function the runtime
    /// passes to MPI without modelling it
    /// ([`Support::NotModelled`](crate::support::Support::NotModelled):
    /// `MPI_Put`, `MPI_Neighbor_alltoall`, ...), at `site`. Written the
    /// first time the rank calls it from that site. `count` = the
    /// function's position in [`crate::support::calls`] (-1 for a
    /// function of the header the table does not know, likewise passed
    /// through); `comm`, `request`, `aux` = its name as [`call_name`]
    /// encodes it (a check that both agree).
    NotModelled = 253 => "mbhybrid:not-modelled", Clock;
    /// Not an MPI call: bytes of a window's memory its own process loaded
    /// or stored during an exposure epoch of the window (MPI-4.0 §12.7),
    /// one record per merged range, written when the epoch ends, before
    /// the record of the call that ends it. Its fields are decoded, and
    /// specified, by
    /// [`WindowAccess::decode`](crate::window_access::WindowAccess::decode).
    WindowAccess = 254 => "mbhybrid:window-access", Clock;
}

/// The MPI function's name a [`OpKind::CallSite`] record carries in its
/// `comm`, `request` and `aux` words: the bytes after `MPI_`, ASCII, in
/// order, zero-padded to 24 (every MPI function's name fits).
pub mod call_name {
    /// Bytes of the name the three words hold.
    pub const BYTES: usize = 24;

    /// The words for `name` (`MPI_Send`); a name longer than the words
    /// keeps its first [`BYTES`] bytes after `MPI_`.
    pub fn encode(name: &str) -> [u64; 3] {
        let short = name.strip_prefix("MPI_").unwrap_or(name).as_bytes();
        let mut bytes = [0u8; BYTES];
        let n = short.len().min(BYTES);
        bytes[..n].copy_from_slice(&short[..n]);
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[i * 8..i * 8 + 8]);
            u64::from_le_bytes(w)
        };
        [word(0), word(1), word(2)]
    }

    /// The name the words hold (`MPI_Send`), `None` when they hold no
    /// name an MPI function could have (a damaged record).
    pub fn decode(words: [u64; 3]) -> Option<String> {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let len = bytes.iter().position(|&b| b == 0).unwrap_or(BYTES);
        let name = &bytes[..len];
        if name.is_empty()
            || !name.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
            || bytes[len..].iter().any(|&b| b != 0)
        {
            return None;
        }
        Some(format!("MPI_{}", String::from_utf8_lossy(name)))
    }
}

/// The exit code with which the runtime stops a job after every rank of a
/// communicator recorded a [`LocalCheck::CollectiveMismatch`] (the ranks'
/// abort records carry it; it is the tool's stop, not the program's).
pub const COLLECTIVE_MISMATCH_EXIT: i32 = 71;

/// The exit code with which the runtime stops a job after a thread called
/// MPI while another thread of its process was inside an MPI call, at a
/// thread level that forbids it ([`crate::layout::ThreadOverlap`] says
/// which calls; the rank's abort record carries the code and the second
/// call's site). The program's error; the tool's stop.
pub const THREAD_OVERLAP_EXIT: i32 = 72;

impl OpKind {
    /// Whether a record of this kind holds a communicator in `comm`: every
    /// MPI call, and of the runtime's own records a constructor's parent
    /// ([`OpKind::CommMade`]) and a local check's communicator
    /// ([`OpKind::LocalCheck`]; 0, which no communicator is, when the check
    /// names none). The others use `comm` for clocks and the like.
    pub fn comm_is_communicator(self) -> bool {
        matches!(self, OpKind::CommMade | OpKind::LocalCheck)
            || !matches!(self.class(), OpClass::Clock | OpClass::Marker)
    }

    /// A receive completed later by a `Wait`/`Test` (`MPI_Irecv`, a started
    /// `MPI_Recv_init`).
    pub fn is_nonblocking_receive(self) -> bool {
        matches!(self, OpKind::Irecv | OpKind::StartRecv | OpKind::Imrecv)
    }

    /// A send completed later by a `Wait`/`Test` (`MPI_Isend` ..., a
    /// started `MPI_Send_init` ...).
    pub fn is_nonblocking_send(self) -> bool {
        matches!(
            self,
            OpKind::Isend
                | OpKind::Issend
                | OpKind::Ibsend
                | OpKind::Irsend
                | OpKind::StartSend
                | OpKind::StartBsend
                | OpKind::StartSsend
                | OpKind::StartRsend
        )
    }

    /// `MPI_Sendrecv` or `MPI_Sendrecv_replace`: a receive with a send
    /// half (in its record's `request` word).
    pub fn is_sendrecv(self) -> bool {
        matches!(self, OpKind::Sendrecv | OpKind::SendrecvReplace)
    }

    /// A `Test` form: recorded only when it completes a request.
    pub fn is_test(self) -> bool {
        matches!(
            self,
            OpKind::Test | OpKind::Testall | OpKind::Testany | OpKind::Testsome
        )
    }

    /// A completion call that picks among requests (`Waitany`, `Testany`,
    /// `Waitsome`, `Testsome`): its wildcard events are choices of an
    /// index, not of a sender (seed 001 §4).
    pub fn chooses_request(self) -> bool {
        matches!(
            self,
            OpKind::Waitany | OpKind::Testany | OpKind::Waitsome | OpKind::Testsome
        )
    }

    /// A send that completes only once its receive matched it.
    pub fn is_synchronous_send(self) -> bool {
        matches!(self, OpKind::Ssend | OpKind::Issend | OpKind::StartSsend)
    }
}

/// What a [`OpKind::LocalCheck`] record reports (its `count`). The other
/// fields of each kind of check, and the one place that writes and reads
/// them, are [`crate::check::Check`]'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(i32)]
pub enum LocalCheck {
    /// An MPI call returned an error code ([`crate::check::Check::MpiError`]).
    MpiError = 1,
    /// Sender and receiver datatype signatures differ
    /// ([`crate::check::Check::TypeMismatch`]).
    TypeMismatch = 2,
    /// A request never completed or freed before `MPI_Finalize`
    /// ([`crate::check::Check::RequestLeak`]).
    RequestLeak = 3,
    /// A communicator, datatype, group or op never freed
    /// ([`crate::check::Check::ResourceLeak`]).
    ResourceLeak = 4,
    /// A persistent request waited on while inactive
    /// ([`crate::check::Check::MissingStart`]).
    MissingStart = 5,
    /// An MPI call after `MPI_Finalize` ([`crate::check::Check::AfterFinalize`]).
    AfterFinalize = 6,
    /// An MPI call rejected one of its arguments
    /// ([`crate::check::Check::InvalidArgument`]).
    InvalidArgument = 7,
    /// The ranks of a communicator called different collectives at the
    /// same point ([`crate::check::Check::CollectiveMismatch`]).
    CollectiveMismatch = 8,
    /// A nonblocking operation's buffer was used while it was pending
    /// ([`crate::check::Check::BufferReuse`]).
    BufferReuse = 9,
    /// A call's count reaches past the end of its buffer's object
    /// ([`crate::check::Check::BufferOverflow`]).
    BufferOverflow = 10,
    /// An MPI call from a thread other than the main one under
    /// `MPI_THREAD_SINGLE` or `FUNNELED` ([`crate::check::Check::OffMainThread`]).
    OffMainThread = 11,
}

/// How a [`LocalCheck::BufferReuse`] record was found (its `tag`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(i32)]
pub enum ReuseFound {
    /// A packed send's buffer changed, seen when it completed.
    Changed = 0,
    /// A store into a pending send's buffer.
    SendWritten = 1,
    /// A load from a pending receive's buffer.
    RecvRead = 2,
    /// A store into a pending receive's buffer.
    RecvWritten = 3,
    /// An MPI call (a send) read a pending receive's buffer: its site is
    /// the call's.
    CallReadRecv = 4,
    /// An MPI call (a receive) writes into a pending send's buffer.
    CallWroteSend = 5,
    /// An MPI call (a receive) writes into a pending receive's buffer.
    CallWroteRecv = 6,
}

impl ReuseFound {
    /// The kind with code `code` (`Changed` for unknown codes).
    pub fn from_code(code: i32) -> ReuseFound {
        match code {
            1 => ReuseFound::SendWritten,
            2 => ReuseFound::RecvRead,
            3 => ReuseFound::RecvWritten,
            4 => ReuseFound::CallReadRecv,
            5 => ReuseFound::CallWroteSend,
            6 => ReuseFound::CallWroteRecv,
            _ => ReuseFound::Changed,
        }
    }

    /// Whether an instrumented access or an MPI call's buffer found it
    /// (so `site` is the access's or the call's).
    pub fn is_access(self) -> bool {
        self != ReuseFound::Changed
    }

    /// Whether an MPI call's buffer found it (its site is an MPI call).
    pub fn is_call(self) -> bool {
        matches!(
            self,
            ReuseFound::CallReadRecv | ReuseFound::CallWroteSend | ReuseFound::CallWroteRecv
        )
    }
}

/// Which argument an [`LocalCheck::InvalidArgument`] record blames (its
/// `peer`), from the MPI error class of the code the call returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(i32)]
pub enum BadArgument {
    /// `MPI_ERR_BUFFER`.
    Buffer = 1,
    /// `MPI_ERR_COUNT`.
    Count = 2,
    /// `MPI_ERR_TYPE`.
    Datatype = 3,
    /// `MPI_ERR_TAG`.
    Tag = 4,
    /// `MPI_ERR_COMM`.
    Communicator = 5,
    /// `MPI_ERR_RANK`.
    Rank = 6,
    /// `MPI_ERR_ROOT`.
    Root = 7,
    /// `MPI_ERR_GROUP`.
    Group = 8,
    /// `MPI_ERR_OP`.
    Op = 9,
    /// `MPI_ERR_REQUEST`.
    Request = 10,
    /// `MPI_ERR_ARG` (another argument).
    Other = 11,
    /// `sendcounts` NULL where the call reads it: refused by the runtime
    /// before MPI read it (the program gets `MPI_ERR_ARG`). So are the
    /// other `Null*` arrays of the `v` and `w` collectives
    /// ([`BadArgument::null_array`]).
    NullSendcounts = 12,
    /// `recvcounts` NULL where the call reads it.
    NullRecvcounts = 13,
    /// `displs` NULL where the call reads it.
    NullDispls = 14,
    /// `sdispls` NULL where the call reads it.
    NullSdispls = 15,
    /// `rdispls` NULL where the call reads it.
    NullRdispls = 16,
    /// `sendtypes` NULL where the call reads it.
    NullSendtypes = 17,
    /// `recvtypes` NULL where the call reads it.
    NullRecvtypes = 18,
}

impl BadArgument {
    /// The argument with code `code` (`Other` for unknown codes).
    pub fn from_code(code: i32) -> BadArgument {
        match code {
            1 => BadArgument::Buffer,
            2 => BadArgument::Count,
            3 => BadArgument::Datatype,
            4 => BadArgument::Tag,
            5 => BadArgument::Communicator,
            6 => BadArgument::Rank,
            7 => BadArgument::Root,
            8 => BadArgument::Group,
            9 => BadArgument::Op,
            10 => BadArgument::Request,
            12 => BadArgument::NullSendcounts,
            13 => BadArgument::NullRecvcounts,
            14 => BadArgument::NullDispls,
            15 => BadArgument::NullSdispls,
            16 => BadArgument::NullRdispls,
            17 => BadArgument::NullSendtypes,
            18 => BadArgument::NullRecvtypes,
            _ => BadArgument::Other,
        }
    }

    /// The parameter's name, for an array the call reads that was NULL
    /// (the runtime refused the call: MPI never saw it); `None` for the
    /// arguments MPI rejected.
    pub fn null_array(self) -> Option<&'static str> {
        Some(match self {
            BadArgument::NullSendcounts => "sendcounts",
            BadArgument::NullRecvcounts => "recvcounts",
            BadArgument::NullDispls => "displs",
            BadArgument::NullSdispls => "sdispls",
            BadArgument::NullRdispls => "rdispls",
            BadArgument::NullSendtypes => "sendtypes",
            BadArgument::NullRecvtypes => "recvtypes",
            _ => return None,
        })
    }

    /// What the argument is, in words (`a rank`, `a count`).
    pub fn words(self) -> &'static str {
        match self {
            BadArgument::Buffer => "buffer",
            BadArgument::Count => "count",
            BadArgument::Datatype => "datatype",
            BadArgument::Tag => "tag",
            BadArgument::Communicator => "communicator",
            BadArgument::Rank => "rank",
            BadArgument::Root => "root",
            BadArgument::Group => "group",
            BadArgument::Op => "reduction operation",
            BadArgument::Request => "request",
            BadArgument::Other => "argument",
            BadArgument::NullSendcounts => "`sendcounts` array",
            BadArgument::NullRecvcounts => "`recvcounts` array",
            BadArgument::NullDispls => "`displs` array",
            BadArgument::NullSdispls => "`sdispls` array",
            BadArgument::NullRdispls => "`rdispls` array",
            BadArgument::NullSendtypes => "`sendtypes` array",
            BadArgument::NullRecvtypes => "`recvtypes` array",
        }
    }

    /// How to fix it.
    pub fn help(self) -> &'static str {
        match self {
            BadArgument::Buffer => "pass a valid buffer (not NULL when the count is positive; not aliased send and receive buffers)",
            BadArgument::Count => "counts must be zero or positive",
            BadArgument::Datatype => "use a predefined datatype or one committed with `MPI_Type_commit` and not yet freed",
            BadArgument::Tag => "tags of sends must be between 0 and `MPI_TAG_UB`; only receives and probes may use `MPI_ANY_TAG`",
            BadArgument::Communicator => "pass a communicator that exists (not `MPI_COMM_NULL`, not freed)",
            BadArgument::Rank => "ranks must be between 0 and the communicator's size - 1 (or `MPI_PROC_NULL`); only receives and probes may use `MPI_ANY_SOURCE`",
            BadArgument::Root => "the root must be a rank of the communicator, the same on every rank",
            BadArgument::Group => "pass a group that exists",
            BadArgument::Op => "use a predefined operation valid for the datatype, or one made with `MPI_Op_create`",
            BadArgument::Request => "pass a request that exists (not freed, not already completed and deallocated)",
            BadArgument::Other => "check the call's arguments against the MPI standard's description of the call",
            BadArgument::NullSendcounts
            | BadArgument::NullRecvcounts
            | BadArgument::NullDispls
            | BadArgument::NullSdispls
            | BadArgument::NullRdispls
            | BadArgument::NullSendtypes
            | BadArgument::NullRecvtypes => "pass an array of one entry per rank of the communicator (of the remote group on an intercommunicator); NULL is allowed only where the call ignores the array: the counts and displacements of `MPI_Gatherv` and `MPI_Scatterv` on ranks other than the root (MPI-4.0 §6.5, §6.6: \"significant only at root\"), and the send arrays of `MPI_Alltoallv`/`MPI_Alltoallw` with `MPI_IN_PLACE`",
        }
    }
}

impl LocalCheck {
    /// The check with code `code`.
    pub fn from_code(code: i32) -> Option<LocalCheck> {
        Some(match code {
            1 => LocalCheck::MpiError,
            2 => LocalCheck::TypeMismatch,
            3 => LocalCheck::RequestLeak,
            4 => LocalCheck::ResourceLeak,
            5 => LocalCheck::MissingStart,
            6 => LocalCheck::AfterFinalize,
            7 => LocalCheck::InvalidArgument,
            8 => LocalCheck::CollectiveMismatch,
            9 => LocalCheck::BufferReuse,
            10 => LocalCheck::BufferOverflow,
            11 => LocalCheck::OffMainThread,
            _ => return None,
        })
    }
}

/// Which way a collective's data, and so the matches-before order, flows
/// (seed 000 Fig 5.7, rule R5; seed 003 Fig 4: a collective orders no more
/// than its data flow does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DataFlow {
    /// Every rank's data reaches every rank: each member's call precedes
    /// every member's completion.
    All,
    /// The root's data reaches the others: the root's call precedes every
    /// completion.
    FromRoot,
    /// Everyone's data reaches the root: every call precedes the root's
    /// completion.
    ToRoot,
    /// Rank `i` gets the data of ranks `0..=i` (`Scan`).
    Prefix,
    /// Rank `i` gets the data of ranks `0..i` (`Exscan`).
    ExclusivePrefix,
}

impl OpKind {
    /// How a collective's data flows; `None` for other kinds.
    pub fn data_flow(self) -> Option<DataFlow> {
        use OpKind::*;
        Some(match self {
            Barrier | Allreduce | Allgather | Alltoall | Allgatherv | Alltoallv | Alltoallw
            | ReduceScatter | ReduceScatterBlock | Ibarrier | Iallreduce | Iallgather
            | Iallgatherv | Ialltoall | Ialltoallv | Ialltoallw | IreduceScatter
            | IreduceScatterBlock => DataFlow::All,
            Bcast | Scatter | Scatterv | Ibcast | Iscatter | Iscatterv => DataFlow::FromRoot,
            Reduce | Gather | Gatherv | Ireduce | Igather | Igatherv => DataFlow::ToRoot,
            Scan | Iscan => DataFlow::Prefix,
            Exscan | Iexscan => DataFlow::ExclusivePrefix,
            _ => return None,
        })
    }

    /// Whether the record's `peer` is a root (a rooted collective).
    pub fn is_rooted(self) -> bool {
        matches!(
            self.data_flow(),
            Some(DataFlow::FromRoot | DataFlow::ToRoot)
        )
    }

    /// A nonblocking collective (`MPI_Ibarrier`, ...): it completes in the
    /// `Wait`/`Test` a [`OpKind::CollectiveComplete`] record names.
    pub fn is_nonblocking_collective(self) -> bool {
        (96..=112).contains(&(self as u16))
    }
}

/// What an operation does, coarsely.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum OpClass {
    /// Init, finalize, abort.
    Lifecycle,
    /// Tool markers.
    Marker,
    /// Point-to-point sends.
    Send,
    /// Point-to-point receives.
    Receive,
    /// Probes.
    Probe,
    /// Completion of requests.
    Completion,
    /// Making, freeing or cancelling requests without communicating
    /// (`MPI_Send_init`, `MPI_Request_free`, `MPI_Cancel`).
    Request,
    /// Collectives.
    Collective,
    /// One-sided communication (RMA): windows, their synchronization and
    /// their operations.
    Rma,
    /// Records of the tool's causality tracking, not MPI calls.
    Clock,
}

/// Bits of a record's `flags`.
pub mod flags {
    /// The call returned (for blocking calls: it is no longer in progress).
    pub const RETURNED: u16 = 1 << 0;
    /// The source argument was `MPI_ANY_SOURCE`.
    pub const ANY_SOURCE: u16 = 1 << 1;
    /// The tag argument was `MPI_ANY_TAG`.
    pub const ANY_TAG: u16 = 1 << 2;
    /// `matched_source`/`matched_tag` hold the status of a completed receive.
    pub const HAS_STATUS: u16 = 1 << 3;
    /// The MPI library returned an error code (in `error`).
    pub const FAILED: u16 = 1 << 4;
    /// The peer was `MPI_PROC_NULL`.
    pub const PROC_NULL: u16 = 1 << 5;
    /// The request the call made was cancelled (`MPI_Cancel` succeeded):
    /// it matched nothing.
    pub const CANCELLED: u16 = 1 << 6;
    /// On a `WildcardClock` or `ChoiceClock` record (format version 2):
    /// the guidance forced this wildcard event. The runtime posted the
    /// receive or probe for the guidance's sender, or waited for the
    /// guidance's request alone; whether that sender (or index) is what
    /// the event matched is the record's `peer`. The runtime sets it
    /// where it decides to force, so readers need not work it out again
    /// from the guidance ([`crate::record::EventClock::forced`]).
    pub const FORCED: u16 = 1 << 7;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_arguments_round_trip_and_null_arrays_name_their_parameter() {
        for code in 1..=18 {
            let argument = BadArgument::from_code(code);
            assert_eq!(argument as i32, code, "{argument:?}");
            assert_eq!(argument.null_array().is_some(), code >= 12, "{argument:?}");
        }
        assert_eq!(BadArgument::from_code(99), BadArgument::Other);
        assert_eq!(BadArgument::NullRecvcounts.null_array(), Some("recvcounts"));
    }

    #[test]
    fn codes_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for &kind in OpKind::ALL {
            assert!(seen.insert(kind as u16), "duplicate code for {kind:?}");
            assert_eq!(OpKind::from_code(kind as u16), Some(kind));
            let name = kind.mpi_name();
            if kind.class() == OpClass::Clock {
                assert!(name.starts_with("mbhybrid:"), "{name}");
            } else {
                assert!(name.starts_with("MPI_"), "{name}");
            }
        }
        assert_eq!(OpKind::from_code(0), None);
        for &kind in OpKind::ALL {
            let collective = kind.class() == OpClass::Collective;
            assert_eq!(kind.data_flow().is_some(), collective, "{kind:?}");
            if kind.is_nonblocking_collective() {
                assert!(
                    collective && kind.mpi_name().starts_with("MPI_I"),
                    "{kind:?}"
                );
            }
        }
        assert_eq!(OpKind::Gatherv.data_flow(), Some(DataFlow::ToRoot));
        assert_eq!(OpKind::Iexscan.data_flow(), Some(DataFlow::ExclusivePrefix));
        assert!(OpKind::Iscatterv.is_rooted() && !OpKind::Scan.is_rooted());
        assert_eq!(
            LocalCheck::from_code(8),
            Some(LocalCheck::CollectiveMismatch)
        );
        assert_eq!(OpKind::Irecv.class(), OpClass::Receive);
        assert_eq!(OpKind::StartRecv.class(), OpClass::Receive);
        assert_eq!(OpKind::StartSsend.class(), OpClass::Send);
        assert!(OpKind::StartSsend.is_synchronous_send());
        assert!(OpKind::StartRecv.is_nonblocking_receive());
        assert!(OpKind::StartBsend.is_nonblocking_send());
        assert!(!OpKind::Send.is_nonblocking_send());
        assert!(OpKind::SendrecvReplace.is_sendrecv());
        assert!(OpKind::Testsome.is_test() && !OpKind::Waitsome.is_test());
    }

    #[test]
    fn call_names_round_trip_through_their_words() {
        for name in [
            "MPI_Send",
            "MPI_Ireduce_scatter_block",
            "MPI_Isendrecv_replace_c",
        ] {
            assert_eq!(
                call_name::decode(call_name::encode(name)).as_deref(),
                Some(name)
            );
        }
        // Longer than the words: cut, still a name.
        let long = "MPI_Neighbor_allgatherv_init_c_extra";
        assert_eq!(
            call_name::decode(call_name::encode(long)).as_deref(),
            Some("MPI_Neighbor_allgatherv_init")
        );
        assert_eq!(call_name::decode([0, 0, 0]), None);
        assert_eq!(call_name::decode([u64::MAX, 0, 0]), None);
        // A name, then garbage after its end.
        let mut words = call_name::encode("MPI_Send");
        words[2] = 0x41;
        assert_eq!(call_name::decode(words), None);
    }
}
