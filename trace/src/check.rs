//! The [`OpKind::LocalCheck`] record, decoded: what the runtime found wrong
//! inside a rank while it ran. The runtime writes these records only
//! through [`Check::record`], and every reader decodes them only through
//! [`Check::decode`], so the variants below are the format's specification:
//! each says which positional field of the record ([`RawOp`]) holds what.
//!
//! Every check record has `count` = its [`LocalCheck`] code, `site` = the
//! site of the call (or access) it is about, and `request` = the index of
//! that call's own record when the check has one (`u64::MAX` when not);
//! the variant's fields take the rest.

use crate::op::{flags, BadArgument, LocalCheck, OpKind, ReuseFound};
use crate::rank_trace::{Op, RawOp};
use crate::static_report::BufferAccess;

/// One local check, with what it found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// An MPI call returned `code` that names no argument. `tag` = the
    /// code, `aux` = the communicator's handle bits.
    MpiError {
        /// The MPI error code.
        code: i32,
        /// The communicator handle bits.
        comm: u64,
    },
    /// An MPI call rejected one of its arguments (an error of an argument
    /// class: `MPI_ERR_RANK`, `MPI_ERR_COUNT`, ...). `tag` = the code,
    /// `peer` = the [`BadArgument`] code, `aux` = the communicator's bits.
    InvalidArgument {
        /// The MPI error code.
        code: i32,
        /// Which argument.
        argument: BadArgument,
        /// The communicator handle bits.
        comm: u64,
    },
    /// The sender's and the receiver's datatype signatures differ. `peer` =
    /// the sender, `aux` = the index of the send's record in the sender's
    /// trace.
    TypeMismatch {
        /// The sending rank.
        sender: i32,
        /// The send's record in the sender's trace.
        send_record: u64,
    },
    /// A request never completed or freed when the rank finalized or
    /// exited. `aux` = the request's handle bits.
    RequestLeak {
        /// The request handle bits.
        request: u64,
    },
    /// A communicator, datatype, group or op never freed. `tag` = the
    /// resource's kind code (the runtime's), `aux` = its handle bits.
    ResourceLeak {
        /// The runtime's code of the resource's kind.
        resource: i32,
        /// The handle bits.
        handle: u64,
    },
    /// A persistent request waited on while inactive (not started since it
    /// was made or last completed). `aux` = the index of the record of the
    /// `*_init` that made it.
    MissingStart {
        /// The `*_init`'s record, `u64::MAX` when unknown.
        init_record: u64,
    },
    /// An MPI call after `MPI_Finalize`.
    AfterFinalize,
    /// The ranks of a communicator called different collectives at the
    /// same point (kind, root or datatype signature differ). `tag` = the
    /// 0-based number of this rank's collective among the collectives on
    /// the communicator, `comm` = the communicator (named across ranks by
    /// the trace decoder, as an MPI call's is), `peer` = the collective's
    /// [`OpKind`] code.
    CollectiveMismatch {
        /// The collective's number on its communicator.
        number: i32,
        /// The communicator.
        comm: u64,
        /// The collective's [`OpKind`] code.
        kind: u16,
    },
    /// A nonblocking operation's buffer was used while it was pending
    /// (seed 000 §2.3.6.3). `tag` = the [`ReuseFound`] code; `aux` = a
    /// record index: for [`ReuseFound::Changed`] (a packed send's buffer
    /// differed, when it completed, from the copy that went; `site` and
    /// `request` are the completing call's) the send's record; for the
    /// accesses (an instrumented load or store touched the buffer; `site`
    /// is the access's, made from its return address as for calls the
    /// program did not label: `crate::site::site_from_offset`) the record
    /// of the call that started the operation.
    BufferReuse {
        /// How it was found.
        found: ReuseFound,
        /// The record of the operation whose buffer it was.
        operation_record: u64,
        /// The threads of the access and of the operation's start, as
        /// the `tag`'s bits above the first 8 and the `peer` hold them.
        threads: ReuseThreads,
    },
    /// A call's `count` elements of its datatype reach past the end of its
    /// buffer's object, checked before the call. `request` =
    /// the object's size in bytes (this check has no call record), `peer`
    /// = the count, `aux` = the bytes the count covers, `tag` = the access
    /// in its low 4 bits (0 read: a send, 1 written: a receive, 2 both)
    /// and above them where the size came from (0 the heap block the
    /// buffer starts, 1 the static analysis's room for the call, whose
    /// object the site table names).
    BufferOverflow {
        /// What the call does to the buffer.
        access: BufferAccess,
        /// Whether the size is the static analysis's room (else the heap
        /// block's).
        from_room: bool,
        /// The object's size in bytes.
        object_bytes: u64,
        /// The count as passed.
        count: i32,
        /// The bytes `count` elements of the datatype cover.
        covered_bytes: u64,
    },
    /// An MPI call from a thread other than the one that initialised MPI,
    /// where only that one may make it: any call under
    /// `MPI_THREAD_SINGLE` or `MPI_THREAD_FUNNELED` (MPI-4.0 §11.6.1),
    /// `MPI_Finalize` at every level (§11.6.2). `tag` = the level the
    /// program was given (0 single, 1 funneled, 2 serialized, 3
    /// multiple), `peer` = the calling thread's id (Linux's `gettid`),
    /// `aux` = the main thread's.
    OffMainThread {
        /// The level: 0 `SINGLE`, 1 `FUNNELED`, 2 `SERIALIZED`, 3
        /// `MULTIPLE`.
        level: i32,
        /// The calling thread's id.
        thread: i32,
        /// The main thread's id.
        main: u64,
    },
}

/// Which threads a [`Check::BufferReuse`] of an access involves: the
/// program's threads may compute while another calls MPI, so the thread
/// that touched a pending buffer need not be the one that started its
/// operation (threads may compute while one of them calls MPI).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReuseThreads {
    /// The accessing thread's id (Linux's `gettid`; 0: not recorded, as
    /// for an MPI call's buffer or a completion's comparison).
    pub access: i32,
    /// The thread that started the operation.
    pub operation: OperationThread,
}

/// The thread that started a pending operation, as the runtime could
/// name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OperationThread {
    /// Not recorded.
    #[default]
    Unknown,
    /// Its id (Linux's `gettid`).
    Id(i32),
    /// A thread other than the accessing and the main one, whose id the
    /// runtime did not keep.
    Other,
}

impl OperationThread {
    /// The code of 23 bits a record holds: 0 unknown, all ones another
    /// thread, else the id (Linux ids stay below 2^22, `PID_MAX_LIMIT`).
    const OTHER: i32 = 0x7f_ffff;

    fn code(self) -> i32 {
        match self {
            OperationThread::Unknown => 0,
            OperationThread::Id(id) if (1..Self::OTHER).contains(&id) => id,
            OperationThread::Id(_) | OperationThread::Other => Self::OTHER,
        }
    }

    fn from_code(code: i32) -> OperationThread {
        match code & Self::OTHER {
            0 => OperationThread::Unknown,
            Self::OTHER => OperationThread::Other,
            id => OperationThread::Id(id),
        }
    }
}

/// A decoded check record: the check and where it was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckRecord {
    /// The site of the call (or access) it is about.
    pub site: u32,
    /// The index of that call's own record, `u64::MAX` when none (or, for
    /// [`Check::BufferOverflow`], unused).
    pub call_record: u64,
    /// What was found.
    pub check: Check,
}

impl Check {
    /// The check's code (the record's `count`).
    pub fn code(&self) -> LocalCheck {
        match self {
            Check::MpiError { .. } => LocalCheck::MpiError,
            Check::InvalidArgument { .. } => LocalCheck::InvalidArgument,
            Check::TypeMismatch { .. } => LocalCheck::TypeMismatch,
            Check::OffMainThread { .. } => LocalCheck::OffMainThread,
            Check::RequestLeak { .. } => LocalCheck::RequestLeak,
            Check::ResourceLeak { .. } => LocalCheck::ResourceLeak,
            Check::MissingStart { .. } => LocalCheck::MissingStart,
            Check::AfterFinalize => LocalCheck::AfterFinalize,
            Check::CollectiveMismatch { .. } => LocalCheck::CollectiveMismatch,
            Check::BufferReuse { .. } => LocalCheck::BufferReuse,
            Check::BufferOverflow { .. } => LocalCheck::BufferOverflow,
        }
    }

    /// The record the runtime stores for this check at `site`, about the
    /// call whose record is `call_record` (its `index` is set when it is
    /// appended). Allocates nothing: the runtime calls it inside the
    /// user's process.
    pub fn record(self, site: u32, call_record: u64) -> RawOp {
        let mut raw = RawOp {
            kind: OpKind::LocalCheck as u16,
            flags: flags::RETURNED,
            site,
            count: self.code() as i32,
            request: call_record,
            peer: -1,
            ..RawOp::default()
        };
        match self {
            Check::MpiError { code, comm } => {
                raw.tag = code;
                raw.aux = comm;
            }
            Check::InvalidArgument {
                code,
                argument,
                comm,
            } => {
                raw.tag = code;
                raw.peer = argument as i32;
                raw.aux = comm;
            }
            Check::TypeMismatch {
                sender,
                send_record,
            } => {
                raw.peer = sender;
                raw.aux = send_record;
            }
            Check::RequestLeak { request } => raw.aux = request,
            Check::ResourceLeak { resource, handle } => {
                raw.tag = resource;
                raw.aux = handle;
            }
            Check::MissingStart { init_record } => raw.aux = init_record,
            Check::AfterFinalize => {}
            Check::CollectiveMismatch { number, comm, kind } => {
                raw.tag = number;
                raw.comm = comm;
                raw.peer = i32::from(kind);
            }
            Check::BufferReuse {
                found,
                operation_record,
                threads,
            } => {
                raw.tag = found as i32 | (threads.operation.code() << 8);
                raw.peer = threads.access;
                raw.aux = operation_record;
            }
            Check::BufferOverflow {
                access,
                from_room,
                object_bytes,
                count,
                covered_bytes,
            } => {
                let access = match access {
                    BufferAccess::Read => 0,
                    BufferAccess::Write => 1,
                    BufferAccess::ReadWrite => 2,
                };
                raw.tag = access | (i32::from(from_room) << 4);
                raw.request = object_bytes;
                raw.peer = count;
                raw.aux = covered_bytes;
            }
            Check::OffMainThread {
                level,
                thread,
                main,
            } => {
                raw.tag = level;
                raw.peer = thread;
                raw.aux = main;
            }
        }
        raw
    }

    /// The check `op` records, `None` when `op` is not a check record or
    /// its code is one this version does not know.
    pub fn decode(op: &Op) -> Option<CheckRecord> {
        if op.kind != OpKind::LocalCheck {
            return None;
        }
        let check = match LocalCheck::from_code(op.count)? {
            LocalCheck::MpiError => Check::MpiError {
                code: op.tag,
                comm: op.aux,
            },
            LocalCheck::InvalidArgument => Check::InvalidArgument {
                code: op.tag,
                argument: BadArgument::from_code(op.peer),
                comm: op.aux,
            },
            LocalCheck::TypeMismatch => Check::TypeMismatch {
                sender: op.peer,
                send_record: op.aux,
            },
            LocalCheck::RequestLeak => Check::RequestLeak { request: op.aux },
            LocalCheck::ResourceLeak => Check::ResourceLeak {
                resource: op.tag,
                handle: op.aux,
            },
            LocalCheck::MissingStart => Check::MissingStart {
                init_record: op.aux,
            },
            LocalCheck::AfterFinalize => Check::AfterFinalize,
            LocalCheck::CollectiveMismatch => Check::CollectiveMismatch {
                number: op.tag,
                comm: op.comm,
                kind: u16::try_from(op.peer).unwrap_or(u16::MAX),
            },
            LocalCheck::BufferReuse => Check::BufferReuse {
                found: ReuseFound::from_code(op.tag & 0xff),
                operation_record: op.aux,
                threads: ReuseThreads {
                    access: op.peer,
                    operation: OperationThread::from_code(op.tag >> 8),
                },
            },
            LocalCheck::BufferOverflow => Check::BufferOverflow {
                access: match op.tag & 0xf {
                    0 => BufferAccess::Read,
                    1 => BufferAccess::Write,
                    _ => BufferAccess::ReadWrite,
                },
                from_room: op.tag >> 4 == 1,
                object_bytes: op.request,
                count: op.peer,
                covered_bytes: op.aux,
            },
            LocalCheck::OffMainThread => Check::OffMainThread {
                level: op.tag,
                thread: op.peer,
                main: op.aux,
            },
        };
        Some(CheckRecord {
            site: op.site,
            call_record: op.request,
            check,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(check: Check) {
        let mut raw = check.record(7, 42);
        raw.index = 3;
        let op = Op::decoded(&raw, OpKind::LocalCheck);
        let decoded = Check::decode(&op).expect("a check record");
        assert_eq!(decoded.check, check);
        assert_eq!(decoded.site, 7);
        if !matches!(check, Check::BufferOverflow { .. }) {
            assert_eq!(decoded.call_record, 42);
        }
    }

    #[test]
    fn every_check_decodes_to_what_was_recorded() {
        let checks = [
            Check::MpiError {
                code: 6,
                comm: 0x4400_0000,
            },
            Check::InvalidArgument {
                code: 6,
                argument: BadArgument::from_code(1),
                comm: 0x4400_0000,
            },
            Check::TypeMismatch {
                sender: 2,
                send_record: 17,
            },
            Check::RequestLeak {
                request: 0xac00_0001,
            },
            Check::ResourceLeak {
                resource: 1,
                handle: 0x8400_0001,
            },
            Check::MissingStart { init_record: 5 },
            Check::OffMainThread {
                level: 1,
                thread: 4242,
                main: 4240,
            },
            Check::AfterFinalize,
            Check::CollectiveMismatch {
                number: 3,
                comm: 9,
                kind: OpKind::Bcast as u16,
            },
            Check::BufferReuse {
                found: ReuseFound::Changed,
                operation_record: 11,
                threads: ReuseThreads::default(),
            },
            Check::BufferReuse {
                found: ReuseFound::RecvRead,
                operation_record: 12,
                threads: ReuseThreads {
                    access: 4242,
                    operation: OperationThread::Id(4240),
                },
            },
            Check::BufferReuse {
                found: ReuseFound::SendWritten,
                operation_record: 13,
                threads: ReuseThreads {
                    access: 4_194_304,
                    operation: OperationThread::Other,
                },
            },
            Check::BufferOverflow {
                access: BufferAccess::Write,
                from_room: true,
                object_bytes: 40,
                count: 20,
                covered_bytes: 80,
            },
            Check::BufferOverflow {
                access: BufferAccess::ReadWrite,
                from_room: false,
                object_bytes: 8,
                count: 4,
                covered_bytes: 16,
            },
        ];
        for check in checks {
            round_trip(check);
        }
    }

    #[test]
    fn other_records_and_unknown_codes_are_not_checks() {
        let barrier = Op::new(0, OpKind::Barrier);
        assert_eq!(Check::decode(&barrier), None);
        let mut unknown = Op::new(0, OpKind::LocalCheck);
        unknown.count = 999;
        assert_eq!(Check::decode(&unknown), None);
    }
}
