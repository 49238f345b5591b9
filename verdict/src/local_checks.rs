//! The findings of the checks the runtime made inside a rank (its
//! `LocalCheck` records, read only through [`Check::decode`]): MPI errors,
//! invalid arguments, type mismatches, leaks, calls after `MPI_Finalize`,
//! buffer overflows and reuse, and collectives whose signatures disagree
//! across ranks.

use crate::outcome::RunContext;
use crate::place::site_location;
use crate::printed::mpi_fatal_message;
use crate::rank_end::{aborted_by_mpi_error, has_per_rank_counts};
use mbh_trace::check::{Check, CheckRecord};
use mbh_trace::rank_trace::{RankState, RankTrace};
use mbh_trace::{Finding, FindingKind, OpKind, Role, Severity, SiteTable};

/// The findings of the checks the runtime made inside `trace`'s rank, in
/// record order. `all` holds every rank's trace (a type mismatch points at
/// the sender's call, a collective mismatch names every rank's);
/// `stderr` is the rank's standard error (MPI's own words for a fatal
/// error).
pub(crate) fn local_check_findings(
    ctx: &RunContext<'_>,
    trace: &RankTrace,
    all: &[Option<RankTrace>],
    stderr: &str,
) -> Vec<Finding> {
    trace
        .ops
        .iter()
        .filter_map(Check::decode)
        .filter_map(|record| check_finding(ctx, trace, all, stderr, record))
        .collect()
}

/// The finding of one check record, `None` when another finding already
/// says it.
fn check_finding(
    ctx: &RunContext<'_>,
    trace: &RankTrace,
    all: &[Option<RankTrace>],
    stderr: &str,
    record: CheckRecord,
) -> Option<Finding> {
    match record.check {
        Check::CollectiveMismatch { .. } => {
            return collective_mismatch_finding(ctx, &record, trace.rank, all)
        }
        Check::BufferReuse {
            found,
            operation_record,
            threads,
        } if found.is_access() => {
            let access = crate::reuse::Access {
                site: record.site,
                found,
                threads,
            };
            return Some(crate::reuse::access_finding(
                ctx.sites,
                trace,
                access,
                operation_record,
                ctx.interleaving,
            ));
        }
        // The access check named the write's line: the completion's
        // comparison would report the same send again.
        Check::BufferReuse { .. } if crate::reuse::superseded(trace, &record) => return None,
        // The static analysis proved it already, with the object's name:
        // that finding says it (buffers.rs).
        Check::BufferOverflow { access, .. }
            if proven_overflow(ctx.sites, record.site, crate::buffers::buffer_name(access)) =>
        {
            return None
        }
        _ => {}
    }
    let said = Said::of(ctx, trace, &record)?;
    let rank = trace.rank;
    let mut finding = Finding::new(said.kind, said.severity, said.message);
    finding.interleaving = ctx.interleaving;
    finding.ranks = vec![rank];
    match ctx.sites.and_then(|s| s.get(record.site)) {
        Some(site) => finding
            .locations
            .push(site_location(site, rank, Role::Primary, &said.label)),
        None => finding.notes.push(format!(
            "rank {rank}: {} (the call's line is unknown)",
            said.label
        )),
    }
    add_context(ctx, trace, all, stderr, &record, &mut finding);
    finding.help = Some(said.help.to_string());
    Some(finding)
}

/// What a check's finding says: its kind, the message, the label at the
/// call, and the help.
struct Said {
    kind: FindingKind,
    severity: Severity,
    message: String,
    label: String,
    help: &'static str,
}

impl Said {
    /// The words of `record`; `None` for a collective mismatch, whose
    /// finding names every rank's call ([`collective_mismatch_finding`]).
    fn of(ctx: &RunContext<'_>, trace: &RankTrace, record: &CheckRecord) -> Option<Said> {
        let call = ctx
            .sites
            .and_then(|s| s.get(record.site))
            .map_or("the call".to_string(), |s| format!("`{}`", s.call));
        match record.check {
            Check::MpiError { .. } | Check::InvalidArgument { .. } | Check::TypeMismatch { .. } => {
                Said::of_error(trace.rank, record, &call)
            }
            Check::RequestLeak { .. }
            | Check::ResourceLeak { .. }
            | Check::MissingStart { .. }
            | Check::AfterFinalize => Said::of_lifetime(trace, record, &call),
            Check::BufferReuse { .. } | Check::BufferOverflow { .. } => {
                Said::of_buffer(ctx, trace, record, &call)
            }
            Check::OffMainThread { .. } => Said::of_thread(trace.rank, record, &call),
            Check::CollectiveMismatch { .. } => None,
        }
    }

    fn new(
        kind: FindingKind,
        severity: Severity,
        message: String,
        label: &str,
        help: &'static str,
    ) -> Said {
        Said {
            kind,
            severity,
            message,
            label: label.to_string(),
            help,
        }
    }

    /// An MPI error, an invalid argument or a datatype mismatch.
    fn of_error(rank: i32, record: &CheckRecord, call: &str) -> Option<Said> {
        Some(match record.check {
            Check::MpiError { code, .. } => Said::new(
                FindingKind::MpiError,
                Severity::Error,
                format!("{call} returned MPI error {code} on rank {rank}"),
                "this call failed",
                "check the arguments of the call; `MPI_Error_string` gives MPI's own words for the code",
            ),
            Check::InvalidArgument { argument, .. } if argument.null_array().is_some() => {
                let name = argument.null_array().unwrap_or_default();
                Said::new(
                    FindingKind::InvalidArgument,
                    Severity::Error,
                    format!("rank {rank} passed NULL as `{name}` to {call}"),
                    &format!("`{name}` is NULL but this rank's call reads it: mbhybrid refused the call before MPI read it"),
                    argument.help(),
                )
            }
            Check::InvalidArgument { code, argument, .. } => Said::new(
                FindingKind::InvalidArgument,
                Severity::Error,
                format!("rank {rank} passed an invalid {} to {call} (MPI error {code})", argument.words()),
                &format!("MPI rejected the {} argument of this call", argument.words()),
                argument.help(),
            ),
            Check::TypeMismatch { sender, .. } => Said::new(
                FindingKind::TypeMismatch,
                Severity::Error,
                format!("rank {rank} received with a datatype that does not match what rank {sender} sent"),
                &format!("receives data sent by rank {sender} with another type signature"),
                "send and receive the same sequence of basic types (for example `MPI_INT` on both sides, not `MPI_BYTE` on one)",
            ),
            _ => return None,
        })
    }

    /// A request or handle's life: never completed or freed, waited on
    /// unstarted, or used after `MPI_Finalize`.
    fn of_lifetime(trace: &RankTrace, record: &CheckRecord, call: &str) -> Option<Said> {
        let rank = trace.rank;
        Some(match record.check {
            Check::RequestLeak { .. } => Said::new(
                FindingKind::RequestLeak,
                Severity::Warning,
                format!("a request created by {call} on rank {rank} was never completed or freed"),
                // A rank that returned without finalizing is checked at
                // its exit: it never reaches `MPI_Finalize`.
                if trace.end.state == RankState::Exited {
                    "this request is still pending when the rank exits (it never called `MPI_Finalize`)"
                } else {
                    "this request is still pending at `MPI_Finalize`"
                },
                "complete every request with `MPI_Wait`/`MPI_Test` (or `MPI_Request_free`) before `MPI_Finalize`",
            ),
            Check::ResourceLeak { .. } => Said::new(
                FindingKind::ResourceLeak,
                Severity::Warning,
                format!("a handle created by {call} on rank {rank} was never freed"),
                "created here, never freed",
                "free communicators, datatypes, groups and ops (`MPI_Comm_free`, `MPI_Type_free`, ...) before `MPI_Finalize`",
            ),
            // Legal (MPI-4.1 §3.9: it returns at once with an empty
            // status), so a warning: usually a missing `MPI_Start` (issue
            // 18).
            Check::MissingStart { .. } => Said::new(
                FindingKind::MissingStart,
                Severity::Warning,
                format!("{call} on rank {rank} waits on a persistent request that was never started"),
                "this request is inactive: no `MPI_Start` since it was created or last completed",
                "waiting on an inactive request is legal and returns at once with an empty status; if the program meant to communicate, call `MPI_Start` (or `MPI_Startall`) on the request before each wait",
            ),
            Check::AfterFinalize => Said::new(
                FindingKind::AfterFinalize,
                Severity::Error,
                format!("rank {rank} called {call} after `MPI_Finalize`"),
                "called after `MPI_Finalize`",
                "move the call before `MPI_Finalize`; only a few query functions are allowed after it",
            ),
            _ => return None,
        })
    }

    /// A send buffer changed before the send completed, or a buffer
    /// smaller than its count.
    fn of_buffer(
        ctx: &RunContext<'_>,
        trace: &RankTrace,
        record: &CheckRecord,
        call: &str,
    ) -> Option<Said> {
        let rank = trace.rank;
        Some(match record.check {
            Check::BufferReuse { .. } => Said::new(
                FindingKind::BufferReuse,
                Severity::Error,
                format!(
                    "rank {rank} changed the buffer of {} before the send completed",
                    send_call(ctx.sites, trace, record)
                ),
                "(2) when the send completed here, its buffer had changed",
                "write to a send buffer only after `MPI_Wait` or a successful `MPI_Test` completes its request",
            ),
            Check::BufferOverflow {
                access,
                from_room,
                object_bytes,
                count,
                covered_bytes,
            } => {
                let object = crate::buffers::room_of(ctx.sites, record.site, access, from_room)
                    .map_or_else(|| "the heap block".to_string(), |r| format!("`{}`", r.object));
                let buffer = crate::buffers::buffer_name(access);
                Said::new(
                    FindingKind::BufferOverflow,
                    Severity::Error,
                    format!(
                        "{call} {buffer} on rank {rank}: {object} holds {object_bytes} bytes but {count} elements of the datatype need {covered_bytes}"
                    ),
                    &format!(
                        "the {buffer} is {} past the end of {object}",
                        crate::buffers::access_verb(access)
                    ),
                    "make the count at most the buffer's size in elements, or the buffer as large as the count",
                )
            }
            _ => return None,
        })
    }

    /// An MPI call from a thread the thread level does not allow.
    fn of_thread(rank: i32, record: &CheckRecord, call: &str) -> Option<Said> {
        Some(match record.check {
            // MPI-4.0 §11.6.1: under `FUNNELED` only the main thread
            // (the one that initialised MPI) may call MPI; under `SINGLE`
            // only one thread runs at all; §11.6.2: `MPI_Finalize` runs on
            // the main thread at every level.
            Check::OffMainThread { level, thread, .. } => {
                let rule = match level {
                    0 => "which MPI_THREAD_SINGLE does not allow",
                    1 => "which MPI_THREAD_FUNNELED does not allow",
                    _ => "and `MPI_Finalize` must be called on the thread that initialised MPI at every thread level",
                };
                let help = if level <= 1 {
                    "make MPI calls from the main thread only (in OpenMP: inside `#pragma omp master` or outside parallel regions), or initialise MPI with `MPI_Init_thread` asking for `MPI_THREAD_SERIALIZED` or `MPI_THREAD_MULTIPLE` and check the level `provided`"
                } else {
                    "call `MPI_Finalize` from the thread that called `MPI_Init` or `MPI_Init_thread`, after the other threads' MPI calls are done"
                };
                Said::new(
                    FindingKind::ThreadLevel,
                    Severity::Error,
                    format!(
                        "rank {rank} called {call} from a thread other than the main one (thread {thread}), {rule}"
                    ),
                    &format!("called from thread {thread}, not the thread that initialised MPI"),
                    help,
                )
            }
            _ => return None,
        })
    }
}

/// The send whose buffer a [`Check::BufferReuse`] of the packed send's
/// comparison is about, named by its call.
fn send_call(sites: Option<&SiteTable>, trace: &RankTrace, record: &CheckRecord) -> String {
    operation_op(trace, record).map_or("the nonblocking send".to_string(), |op| {
        let name = sites
            .and_then(|s| s.get(op.site))
            .map_or(op.kind.mpi_name(), |s| s.call.as_str());
        format!("`{name}`")
    })
}

/// The record of this rank's own trace that a check names: the send of a
/// buffer reuse, the `*_init` of a missing start.
fn operation_op<'t>(
    trace: &'t RankTrace,
    record: &CheckRecord,
) -> Option<&'t mbh_trace::rank_trace::Op> {
    let index = match record.check {
        Check::BufferReuse {
            operation_record, ..
        } => operation_record,
        Check::MissingStart { init_record } => init_record,
        _ => return None,
    };
    trace
        .ops
        .get(usize::try_from(index).ok()?)
        .filter(|op| op.index == index)
}

/// The notes and second locations of a check's finding: MPI's words for a
/// fatal error, the sender's call of a type mismatch, the start of a
/// reused send, the object of an overflow, the `*_init` of a missing start.
fn add_context(
    ctx: &RunContext<'_>,
    trace: &RankTrace,
    all: &[Option<RankTrace>],
    stderr: &str,
    record: &CheckRecord,
    finding: &mut Finding,
) {
    let rank = trace.rank;
    let site_of = |id: u32| ctx.sites.and_then(|s| s.get(id));
    let own_op_site = || operation_op(trace, record).and_then(|op| site_of(op.site));
    match record.check {
        Check::MpiError { code, .. } | Check::InvalidArgument { code, .. }
            if aborted_by_mpi_error(trace, code) && trace.end.state == RankState::Aborted =>
        {
            // A call the runtime refused never reached MPI: no words of
            // MPI's to quote.
            let refused = matches!(record.check,
                Check::InvalidArgument { argument, .. } if argument.null_array().is_some());
            if let Some(words) = mpi_fatal_message(stderr).filter(|_| !refused) {
                finding.notes.push(format!("MPI's message: {words}"));
            }
            finding.notes.push(if refused {
                "under `MPI_ERRORS_ARE_FATAL` (the default handler) the error stopped the job".to_string()
            } else {
                "under `MPI_ERRORS_ARE_FATAL` (the default handler) the error stopped the job, as MPI would have"
                    .to_string()
            });
        }
        Check::TypeMismatch {
            sender,
            send_record,
        } if sender >= 0 => {
            finding.ranks.push(sender);
            // The send that was received, from the sender's own trace.
            let send = all
                .get(sender as usize)
                .and_then(Option::as_ref)
                .and_then(|t| t.ops.get(usize::try_from(send_record).ok()?))
                .and_then(|op| site_of(op.site));
            if let Some(site) = send {
                finding.locations.push(site_location(
                    site,
                    sender,
                    Role::Secondary,
                    "sent with this datatype",
                ));
            }
        }
        Check::BufferReuse { .. } => {
            if let Some(site) = own_op_site() {
                finding.locations.push(site_location(
                    site,
                    rank,
                    Role::Secondary,
                    "(1) the send started here",
                ));
            }
            finding
                .notes
                .push("the receiver may get the old contents, the new ones, or a mix".to_string());
        }
        Check::BufferOverflow {
            access, from_room, ..
        } => {
            if let Some(declared) =
                crate::buffers::room_of(ctx.sites, record.site, access, from_room)
                    .and_then(|room| crate::buffers::declaration(room, rank))
            {
                finding.locations.push(declared);
            }
        }
        Check::MissingStart { .. } => {
            if let Some(site) = own_op_site() {
                finding.locations.push(site_location(
                    site,
                    rank,
                    Role::Secondary,
                    "the persistent request is created here",
                ));
            }
            finding
                .notes
                .push("the wait returns at once: nothing is sent or received".into());
        }
        _ => {}
    }
}

/// Whether `build`'s static analysis proved an overflow of `buffer` (`send
/// buffer`, `receive buffer`, `buffer`) at `site`.
fn proven_overflow(sites: Option<&SiteTable>, site: u32, buffer: &str) -> bool {
    use mbh_trace::static_report::BufferErrorKind;
    sites
        .and_then(|table| table.analysis.as_ref())
        .is_some_and(|analysis| {
            analysis.buffer_errors.iter().any(|e| {
                e.site == site && e.kind == BufferErrorKind::Overflow && e.argument == buffer
            })
        })
}

/// Whether `op` is a collective mismatch's check record.
pub(crate) fn is_collective_mismatch(op: &mbh_trace::rank_trace::Op) -> bool {
    Check::decode(op).is_some_and(|r| matches!(r.check, Check::CollectiveMismatch { .. }))
}

/// A rank's side of a collective mismatch: its rank, the call's site, the
/// collective's kind.
struct Side {
    rank: i32,
    site: u32,
    kind: u16,
}

/// The collective number and communicator of a mismatch record.
fn mismatch_of(record: &CheckRecord) -> Option<(i32, u64, u16)> {
    match record.check {
        Check::CollectiveMismatch { number, comm, kind } => Some((number, comm, kind)),
        _ => None,
    }
}

/// One finding for a collective mismatch the runtime's signature check
/// found, naming each rank's call (every rank of the communicator records
/// its side: the same collective number, the same communicator). Made by
/// the lowest rank that recorded it; `None` for the others.
fn collective_mismatch_finding(
    ctx: &RunContext<'_>,
    record: &CheckRecord,
    rank: i32,
    all: &[Option<RankTrace>],
) -> Option<Finding> {
    let (number, comm, kind) = mismatch_of(record)?;
    let sides: Vec<Side> = all
        .iter()
        .flatten()
        .filter_map(|t| {
            t.ops.iter().filter_map(Check::decode).find_map(|r| {
                let (n, c, k) = mismatch_of(&r)?;
                (n == number && c == comm).then_some(Side {
                    rank: t.rank,
                    site: r.site,
                    kind: k,
                })
            })
        })
        .collect();
    if sides.first().is_some_and(|first| first.rank < rank) {
        return None;
    }
    let name = |kind: u16| OpKind::from_code(kind).map_or("a collective", |k| k.mpi_name());
    let calls: Vec<String> = sides
        .iter()
        .map(|s| format!("rank {} `{}`", s.rank, name(s.kind)))
        .collect();
    let same_kind = sides.windows(2).all(|w| w[0].kind == w[1].kind);
    let what = if same_kind && OpKind::from_code(kind).is_some_and(has_per_rank_counts) {
        // The pairwise check tells that some block differs from what its
        // receiver expects, not which one (runtime/src/engine/coll.rs).
        format!(
            "ranks call `{}` with different roots or datatypes, or a rank sends a block that differs from what its receiver's counts expect, at the same point",
            name(kind)
        )
    } else if same_kind {
        format!(
            "ranks call `{}` with different roots or datatype signatures at the same point",
            name(kind)
        )
    } else {
        "ranks call different collectives at the same point".to_string()
    };
    let mut finding = Finding::new(
        FindingKind::CollectiveMismatch,
        Severity::Error,
        format!("{what}: {}", calls.join(", ")),
    );
    finding.interleaving = ctx.interleaving;
    finding.ranks = sides.iter().map(|s| s.rank).collect();
    for (i, side) in sides.iter().enumerate() {
        let label = format!(
            "collective number {} here is `{}`",
            number + 1,
            name(side.kind)
        );
        let role = if i == 0 {
            Role::Primary
        } else {
            Role::Secondary
        };
        match ctx.sites.and_then(|s| s.get(side.site)) {
            Some(site) => finding
                .locations
                .push(site_location(site, side.rank, role, &label)),
            None => finding.notes.push(format!(
                "rank {}: {label} (the call's line is unknown)",
                side.rank
            )),
        }
    }
    finding.help = Some(
        "call the same collectives, in the same order, with the same root and matching counts and datatypes, on every rank of the communicator".into(),
    );
    Some(finding)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mbh_trace::op::ReuseFound;
    use mbh_trace::rank_trace::Op;

    /// Sites 1.. at lines 10, 20, ... of `app.c`, one per call.
    fn table(calls: &[&str]) -> SiteTable {
        crate::fixtures::site_table(calls, 10)
    }

    /// A record of `kind` at `site`, at position `index`.
    fn call(index: u64, kind: OpKind, site: u32) -> Op {
        let mut op = Op::new(index, kind);
        op.site = site;
        op
    }

    /// The check record the runtime writes, as a reader decodes it.
    fn check(index: u64, check: Check, site: u32, call_record: u64) -> Op {
        let raw = check.record(site, call_record);
        let mut op = Op::new(index, OpKind::LocalCheck);
        op.site = raw.site;
        op.peer = raw.peer;
        op.tag = raw.tag;
        op.comm = raw.comm;
        op.count = raw.count;
        op.request = raw.request;
        op.aux = raw.aux;
        op
    }

    /// The findings of every rank's checks in `traces`.
    fn findings(sites: &SiteTable, traces: &[Option<RankTrace>]) -> Vec<Finding> {
        crate::fixtures::with_run(
            3,
            Some(sites),
            |_| {},
            |ctx| {
                traces
                    .iter()
                    .flatten()
                    .flat_map(|t| local_check_findings(ctx, t, traces, ""))
                    .collect()
            },
        )
    }

    #[test]
    fn a_type_mismatch_points_at_the_receive_and_at_the_senders_send() {
        let sites = table(&["MPI_Send", "MPI_Recv"]);
        let sender = RankTrace::finalized(1, 2, vec![call(0, OpKind::Send, 1)]);
        let mismatch = Check::TypeMismatch {
            sender: 1,
            send_record: 0,
        };
        let receiver = RankTrace::finalized(
            0,
            2,
            vec![call(0, OpKind::Recv, 2), check(1, mismatch, 2, 0)],
        );
        let found = findings(&sites, &[Some(receiver), Some(sender)]);
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert_eq!(f.kind, FindingKind::TypeMismatch);
        assert_eq!(f.interleaving, 3);
        assert_eq!(f.ranks, [0, 1]);
        let lines: Vec<(i32, u32, Role)> = f
            .locations
            .iter()
            .map(|l| (l.rank, l.line, l.role))
            .collect();
        assert_eq!(lines, [(0, 20, Role::Primary), (1, 10, Role::Secondary)]);
    }

    #[test]
    fn a_changed_send_buffer_an_access_already_named_is_said_once() {
        let sites = table(&["MPI_Isend", "MPI_Wait", "store"]);
        let changed = Check::BufferReuse {
            found: ReuseFound::Changed,
            operation_record: 0,
            threads: Default::default(),
        };
        let written = Check::BufferReuse {
            found: ReuseFound::SendWritten,
            operation_record: 0,
            threads: Default::default(),
        };
        let alone = RankTrace::finalized(
            0,
            1,
            vec![
                call(0, OpKind::Isend, 1),
                call(1, OpKind::Wait, 2),
                check(2, changed, 2, 1),
            ],
        );
        let found = findings(&sites, &[Some(alone.clone())]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].message.contains("`MPI_Isend`"),
            "{}",
            found[0].message
        );
        assert_eq!(found[0].locations[1].line, 10, "the send's start");

        let mut both = alone;
        both.ops.insert(2, check(2, written, 3, u64::MAX));
        both.ops[3].index = 3;
        let found = findings(&sites, &[Some(both)]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].message.contains("wrote to"),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn a_collective_mismatch_is_one_finding_naming_every_ranks_call() {
        let sites = table(&["MPI_Bcast", "MPI_Reduce"]);
        let side = |rank: i32, kind: OpKind, site: u32| {
            let mismatch = Check::CollectiveMismatch {
                number: 4,
                comm: 7,
                kind: kind as u16,
            };
            RankTrace::finalized(
                rank,
                2,
                vec![call(0, kind, site), check(1, mismatch, site, 0)],
            )
        };
        let traces = [
            Some(side(0, OpKind::Bcast, 1)),
            Some(side(1, OpKind::Reduce, 2)),
        ];
        let found = findings(&sites, &traces);
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert_eq!(f.kind, FindingKind::CollectiveMismatch);
        assert_eq!(f.ranks, [0, 1]);
        assert!(
            f.message
                .contains("rank 0 `MPI_Bcast`, rank 1 `MPI_Reduce`"),
            "{}",
            f.message
        );
        assert!(f.locations[0].label.contains("collective number 5"));
    }

    #[test]
    fn an_overflow_of_a_static_room_names_the_object() {
        use mbh_trace::static_report::{BufferAccess, BufferRoom, StaticReport};
        let mut sites = table(&["MPI_Recv"]);
        sites.analysis = Some(StaticReport {
            buffer_rooms: vec![BufferRoom {
                site: 1,
                access: BufferAccess::Write,
                object: "halo".into(),
                bytes: 40,
                declared: None,
            }],
            ..StaticReport::default()
        });
        let overflow = Check::BufferOverflow {
            access: BufferAccess::Write,
            from_room: true,
            object_bytes: 40,
            count: 20,
            covered_bytes: 80,
        };
        let trace = RankTrace::finalized(0, 1, vec![check(0, overflow, 1, u64::MAX)]);
        let found = findings(&sites, &[Some(trace)]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            found[0].message,
            "`MPI_Recv` receive buffer on rank 0: `halo` holds 40 bytes but 20 elements of the datatype need 80"
        );
    }
}
