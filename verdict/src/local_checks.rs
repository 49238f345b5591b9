//! The findings of the checks the runtime made inside a rank (its
//! `LocalCheck` records): MPI errors, invalid arguments, type mismatches,
//! leaks, calls after `MPI_Finalize`, buffer overflows and reuse, and
//! collectives whose signatures disagree across ranks.

use crate::outcome::RunContext;
use crate::place::*;
use crate::printed::*;
use crate::rank_end::*;
use mbh_trace::rank_trace::{RankState, RankTrace};
use mbh_trace::{Finding, FindingKind, Role, Severity, SiteTable};

/// Whether `build`'s static analysis proved an overflow of `buffer` (`send
/// buffer`, `receive buffer`, `buffer`) at `site`.
pub(crate) fn proven_overflow(sites: Option<&SiteTable>, site: u32, buffer: &str) -> bool {
    use mbh_trace::static_report::BufferErrorKind;
    sites
        .and_then(|table| table.analysis.as_ref())
        .is_some_and(|analysis| {
            analysis.buffer_errors.iter().any(|e| {
                e.site == site && e.kind == BufferErrorKind::Overflow && e.argument == buffer
            })
        })
}

/// The findings of the checks the runtime made inside the rank
/// (`LocalCheck` records): MPI errors, type mismatches, leaks, calls after
/// `MPI_Finalize`.
pub(crate) fn local_check_findings(
    ctx: &RunContext<'_>,
    trace: &RankTrace,
    all: &[Option<RankTrace>],
    stderr: &str,
) -> Vec<Finding> {
    use mbh_trace::op::LocalCheck;
    let rank = trace.rank;
    let site_of = |id: u32| ctx.sites.and_then(|s| s.get(id));
    let mut findings = Vec::new();
    for record in trace
        .ops
        .iter()
        .filter(|op| op.kind == mbh_trace::OpKind::LocalCheck)
    {
        let Some(check) = LocalCheck::from_code(record.count) else {
            continue;
        };
        let call = site_of(record.site).map_or("the call".to_string(), |s| format!("`{}`", s.call));
        let (kind, severity, message, label, help) = match check {
            LocalCheck::MpiError => (
                FindingKind::MpiError,
                Severity::Error,
                format!("{call} returned MPI error {} on rank {rank}", record.tag),
                "this call failed".to_string(),
                "check the arguments of the call; `MPI_Error_string` gives MPI's own words for the code",
            ),
            LocalCheck::TypeMismatch => (
                FindingKind::TypeMismatch,
                Severity::Error,
                format!("rank {rank} received with a datatype that does not match what rank {} sent", record.peer),
                format!("receives data sent by rank {} with another type signature", record.peer),
                "send and receive the same sequence of basic types (for example `MPI_INT` on both sides, not `MPI_BYTE` on one)",
            ),
            LocalCheck::RequestLeak => (
                FindingKind::RequestLeak,
                Severity::Warning,
                format!("a request created by {call} on rank {rank} was never completed or freed"),
                // A rank that returned without finalizing is checked at its
                // exit (issue 12).
                if trace.end.state == RankState::Exited {
                    "this request is still pending when the rank exits (it never called `MPI_Finalize`)".to_string()
                } else {
                    "this request is still pending at `MPI_Finalize`".to_string()
                },
                "complete every request with `MPI_Wait`/`MPI_Test` (or `MPI_Request_free`) before `MPI_Finalize`",
            ),
            LocalCheck::ResourceLeak => (
                FindingKind::ResourceLeak,
                Severity::Warning,
                format!("a handle created by {call} on rank {rank} was never freed"),
                "created here, never freed".to_string(),
                "free communicators, datatypes, groups and ops (`MPI_Comm_free`, `MPI_Type_free`, ...) before `MPI_Finalize`",
            ),
            // Legal (MPI-4.1 §3.9: it returns at once with an empty
            // status), so a warning: usually a missing `MPI_Start` (issue 18).
            LocalCheck::MissingStart => (
                FindingKind::MissingStart,
                Severity::Warning,
                format!("{call} on rank {rank} waits on a persistent request that was never started"),
                "this request is inactive: no `MPI_Start` since it was created or last completed".to_string(),
                "waiting on an inactive request is legal and returns at once with an empty status; if the program meant to communicate, call `MPI_Start` (or `MPI_Startall`) on the request before each wait",
            ),
            // Issue 18: checked by the runtime against the buffer's object
            // (runtime/src/buffer_check.rs), before the call.
            LocalCheck::BufferOverflow => {
                let access = crate::buffers::overflow_access(record.tag);
                let buffer = crate::buffers::buffer_name(access);
                // The static analysis proved it already, with the object's
                // name: that finding says it (src/buffer_findings.rs).
                if proven_overflow(ctx.sites, record.site, buffer) {
                    continue;
                }
                let room = crate::buffers::room_of(ctx.sites, record, access);
                let object = room.map_or_else(
                    || "the heap block".to_string(),
                    |r| format!("`{}`", r.object),
                );
                (
                    FindingKind::BufferOverflow,
                    Severity::Error,
                    format!(
                        "{call} {buffer} on rank {rank}: {object} holds {} bytes but {} elements of the datatype need {}",
                        record.request, record.peer, record.aux
                    ),
                    format!(
                        "the {buffer} is {} past the end of {object}",
                        crate::buffers::access_verb(access)
                    ),
                    "make the count at most the buffer's size in elements, or the buffer as large as the count",
                )
            }
            LocalCheck::AfterFinalize => (
                FindingKind::AfterFinalize,
                Severity::Error,
                format!("rank {rank} called {call} after `MPI_Finalize`"),
                "called after `MPI_Finalize`".to_string(),
                "move the call before `MPI_Finalize`; only a few query functions are allowed after it",
            ),
            LocalCheck::BufferReuse
                if mbh_trace::op::ReuseFound::from_code(record.tag).is_access() =>
            {
                findings.push(crate::reuse::access_finding(
                    ctx.sites,
                    trace,
                    record,
                    ctx.interleaving,
                ));
                continue;
            }
            // The access check named the write's line: the completion's
            // comparison would report the same send again.
            LocalCheck::BufferReuse if crate::reuse::superseded(trace, record) => continue,
            LocalCheck::BufferReuse => {
                // The send's call, from its record (`aux`).
                let send_call = trace
                    .ops
                    .get(record.aux as usize)
                    .filter(|op| op.index == record.aux)
                    .map_or("the nonblocking send".to_string(), |op| {
                        let name = site_of(op.site).map_or(op.kind.mpi_name(), |s| s.call.as_str());
                        format!("`{name}`")
                    });
                (
                    FindingKind::BufferReuse,
                    Severity::Error,
                    format!("rank {rank} changed the buffer of {send_call} before the send completed"),
                    "(2) when the send completed here, its buffer had changed".to_string(),
                    "write to a send buffer only after `MPI_Wait` or a successful `MPI_Test` completes its request",
                )
            }
            LocalCheck::CollectiveMismatch => {
                findings.extend(collective_mismatch_finding(ctx, record, rank, all));
                continue;
            }
            LocalCheck::InvalidArgument => {
                let argument = mbh_trace::op::BadArgument::from_code(record.peer);
                (
                    FindingKind::InvalidArgument,
                    Severity::Error,
                    format!(
                        "rank {rank} passed an invalid {} to {call} (MPI error {})",
                        argument.words(),
                        record.tag
                    ),
                    format!("MPI rejected the {} argument of this call", argument.words()),
                    argument.help(),
                )
            }
        };
        let mut finding = Finding::new(kind, severity, message);
        finding.interleaving = ctx.interleaving;
        finding.ranks = vec![rank];
        match site_of(record.site) {
            Some(site) => finding
                .locations
                .push(site_location(site, rank, Role::Primary, &label)),
            None => finding
                .notes
                .push(format!("rank {rank}: {label} (the call's line is unknown)")),
        }
        if matches!(check, LocalCheck::MpiError | LocalCheck::InvalidArgument)
            && aborted_by_mpi_error(trace, record.tag)
            && trace.end.state == RankState::Aborted
        {
            if let Some(words) = mpi_fatal_message(stderr) {
                finding.notes.push(format!("MPI's message: {words}"));
            }
            finding.notes.push(
                "under `MPI_ERRORS_ARE_FATAL` (the default handler) the error stopped the job, as MPI would have"
                    .to_string(),
            );
        }
        if check == LocalCheck::TypeMismatch && record.peer >= 0 {
            finding.ranks.push(record.peer);
            // The send that was received, from the sender's own trace.
            let send = all
                .get(record.peer as usize)
                .and_then(Option::as_ref)
                .and_then(|t| t.ops.get(record.aux as usize))
                .and_then(|op| site_of(op.site));
            if let Some(site) = send {
                finding.locations.push(site_location(
                    site,
                    record.peer,
                    Role::Secondary,
                    "sent with this datatype",
                ));
            }
        }
        if check == LocalCheck::BufferReuse {
            let send = trace
                .ops
                .get(record.aux as usize)
                .filter(|op| op.index == record.aux)
                .and_then(|op| site_of(op.site));
            if let Some(site) = send {
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
        if check == LocalCheck::BufferOverflow {
            let access = crate::buffers::overflow_access(record.tag);
            if let Some(declared) = crate::buffers::room_of(ctx.sites, record, access)
                .and_then(|room| crate::buffers::declaration(room, rank))
            {
                finding.locations.push(declared);
            }
        }
        if check == LocalCheck::MissingStart {
            // The `*_init` that made the request (`aux` = its record).
            let init = trace
                .ops
                .get(record.aux as usize)
                .filter(|op| op.index == record.aux)
                .and_then(|op| site_of(op.site));
            if let Some(site) = init {
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
        finding.help = Some(help.to_string());
        findings.push(finding);
    }
    findings
}

/// Whether `op` is a `CollectiveMismatch` local check.
pub(crate) fn is_collective_mismatch(op: &mbh_trace::rank_trace::Op) -> bool {
    op.kind == mbh_trace::OpKind::LocalCheck
        && op.count == mbh_trace::op::LocalCheck::CollectiveMismatch as i32
}

/// One finding for a collective mismatch the runtime's signature check
/// found, naming each rank's call (every rank of the communicator records
/// its side: same collective number `tag`, same communicator `comm`). Made
/// by the lowest rank that recorded it; `None` for the others.
pub(crate) fn collective_mismatch_finding(
    ctx: &RunContext<'_>,
    record: &mbh_trace::rank_trace::Op,
    rank: i32,
    all: &[Option<RankTrace>],
) -> Option<Finding> {
    let same = |op: &&mbh_trace::rank_trace::Op| {
        is_collective_mismatch(op) && op.tag == record.tag && op.comm == record.comm
    };
    let sides: Vec<(i32, &mbh_trace::rank_trace::Op)> = all
        .iter()
        .flatten()
        .filter_map(|t| t.ops.iter().find(same).map(|op| (t.rank, op)))
        .collect();
    if sides.first().is_some_and(|&(first, _)| first < rank) {
        return None;
    }
    let name = |op: &mbh_trace::rank_trace::Op| {
        u16::try_from(op.peer)
            .ok()
            .and_then(mbh_trace::OpKind::from_code)
            .map_or("a collective", |k| k.mpi_name())
    };
    let calls: Vec<String> = sides
        .iter()
        .map(|&(r, op)| format!("rank {r} `{}`", name(op)))
        .collect();
    let same_kind = sides.windows(2).all(|w| w[0].1.peer == w[1].1.peer);
    let kind = u16::try_from(record.peer)
        .ok()
        .and_then(mbh_trace::OpKind::from_code);
    let what = if same_kind && kind.is_some_and(has_per_rank_counts) {
        // The pairwise check tells that some block differs from what its
        // receiver expects, not which one (runtime/src/engine/coll.rs).
        format!(
            "ranks call `{}` with different roots or datatypes, or a rank sends a block that differs from what its receiver's counts expect, at the same point",
            name(record)
        )
    } else if same_kind {
        format!(
            "ranks call `{}` with different roots or datatype signatures at the same point",
            name(record)
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
    finding.ranks = sides.iter().map(|&(r, _)| r).collect();
    for (i, &(r, op)) in sides.iter().enumerate() {
        let label = format!(
            "collective number {} here is `{}`",
            record.tag + 1,
            name(op)
        );
        let role = if i == 0 {
            Role::Primary
        } else {
            Role::Secondary
        };
        match ctx.sites.and_then(|s| s.get(op.site)) {
            Some(site) => finding.locations.push(site_location(site, r, role, &label)),
            None => finding
                .notes
                .push(format!("rank {r}: {label} (the call's line is unknown)")),
        }
    }
    finding.help = Some(
        "call the same collectives, in the same order, with the same root and matching counts and datatypes, on every rank of the communicator".into(),
    );
    Some(finding)
}
