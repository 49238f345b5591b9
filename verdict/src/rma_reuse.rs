//! `buffer-reuse` findings on one-sided operations' buffers: the program
//! loaded or stored an origin or result buffer of an RMA operation while
//! the operation could still be in flight (MPI-4.0 §12.7: such a buffer
//! must not be accessed, or for one MPI only reads, not updated, until the
//! operation completes at the origin). The runtime watches those buffers
//! until the call that completes the operation (`runtime/src/rma_watch.rs`)
//! and records an access as it does a nonblocking send's or receive's
//! ([`ReuseFound`]); here the finding names the operation, its buffer, and
//! the call of the rank's trace that completed it after the access
//! ([`RmaCall::completes`], or the completion of an `R` operation's
//! request), or says that none did.

use crate::place::site_location;
use mbh_trace::op::{OpClass, ReuseFound};
use mbh_trace::rank_trace::Op;
use mbh_trace::rma::RmaCall;
use mbh_trace::{Finding, FindingKind, OpKind, RankTrace, Role, Severity, SiteTable};

/// The finding of an access of `trace`'s rank (run `interleaving`) at
/// site `access`, `found` on a buffer of `operation`, a one-sided
/// operation of the same trace.
pub fn access_finding(
    sites: Option<&SiteTable>,
    trace: &RankTrace,
    access: u32,
    found: ReuseFound,
    operation: &Op,
    interleaving: u32,
) -> Finding {
    let rank = trace.rank;
    let name_of = |op: &Op| {
        let site = sites.and_then(|s| s.get(op.site));
        site.map_or(op.kind.mpi_name(), |s| s.call.as_str())
            .to_owned()
    };
    let call = format!("`{}`", name_of(operation));
    let completion = completing_call(trace, operation);
    let words = crate::reuse::words(found);
    let buffer = buffer_name(operation, found);
    let until = completion.map_or("any call completed it".to_string(), |op| {
        format!("the `{}` that completes it", name_of(op))
    });
    let mut finding = Finding::new(
        FindingKind::BufferReuse,
        Severity::Error,
        format!(
            "rank {rank} {} the {buffer} of {call} before {until}",
            words.verb
        ),
    );
    finding.interleaving = interleaving;
    finding.ranks = vec![rank];
    crate::reuse::push_access(&mut finding, sites, rank, access, found);
    if let Some(site) = sites.and_then(|s| s.get(operation.site)) {
        let label = format!("(1) {call} started here");
        finding
            .locations
            .push(site_location(site, rank, Role::Secondary, &label));
    }
    if let Some(op) = completion {
        if let Some(site) = sites.and_then(|s| s.get(op.site)) {
            let label = format!("(3) `{}` completes it here", name_of(op));
            finding
                .locations
                .push(site_location(site, rank, Role::Secondary, &label));
        }
    }
    finding.notes.push(note(found).to_string());
    finding.help = Some(help_for(operation, found, completion, name_of));
    finding
}

/// The help of a finding `found` on `operation`'s buffer, completed by
/// `completion` (named by `name_of`), if any: a flush is offered in a
/// passive-target epoch only, the request's `MPI_Wait` for an `R`
/// operation when another call completed it.
fn help_for(
    operation: &Op,
    found: ReuseFound,
    completion: Option<&Op>,
    name_of: impl Fn(&Op) -> String,
) -> String {
    let passive = operation.kind.is_request_operation()
        || completion.is_some_and(|op| {
            matches!(
                op.kind,
                OpKind::WinUnlock | OpKind::WinUnlockAll | OpKind::WinFlush | OpKind::WinFlushAll
            )
        });
    // Named already when it is the request's completion.
    let by_request = completion.is_some_and(|op| op.kind.class() == OpClass::Completion);
    let request_named = operation.kind.is_request_operation() && !by_request;
    help(
        operation,
        found,
        completion.map(name_of),
        (passive, request_named),
    )
}

/// Whether MPI writes the buffer `found` was met on (else it only reads
/// it): a receive's kind of buffer.
fn mpi_writes(found: ReuseFound) -> bool {
    !matches!(found, ReuseFound::SendWritten | ReuseFound::CallWroteSend)
}

/// Which of `operation`'s buffers an access `found` touched: the one MPI
/// writes is a get's origin buffer or the result buffer of the others.
fn buffer_name(operation: &Op, found: ReuseFound) -> &'static str {
    match (mpi_writes(found), operation.kind) {
        (true, kind) if kind.has_result_buffer() => "result buffer",
        (false, OpKind::CompareAndSwap) => "origin or compare buffer",
        _ => "origin buffer",
    }
}

/// What may go wrong, by what MPI does to the buffer and what the access
/// did (MPI-4.0 §12.7).
fn note(found: ReuseFound) -> &'static str {
    match found {
        ReuseFound::SendWritten | ReuseFound::CallWroteSend => {
            "MPI may read the buffer at any time until the operation completes at the origin: the target may get the old contents, the new ones, or a mix (MPI-4.0 §12.7)"
        }
        ReuseFound::RecvRead | ReuseFound::CallReadRecv => {
            "MPI may write the buffer at any time until the operation completes at the origin: the read may see the old contents, the target's, or a mix (MPI-4.0 §12.7)"
        }
        _ => {
            "MPI may write the buffer at any time until the operation completes at the origin: the target's data may overwrite the write, or part of it (MPI-4.0 §12.7)"
        }
    }
}

/// The help: touch the buffer after the call that completes the
/// operation (`completion`, when the trace has one), naming the calls that
/// can (MPI-4.0 §12.5); in a passive-target epoch (`passive`), an
/// `MPI_Win_flush_local` can, without ending it (§12.5.4: only there);
/// `request`: an `R` operation's request's `MPI_Wait` can too.
fn help(
    operation: &Op,
    found: ReuseFound,
    completion: Option<String>,
    (passive, request): (bool, bool),
) -> String {
    let touch = if mpi_writes(found) { "use" } else { "write to" };
    let buffer = buffer_name(operation, found);
    let name = operation.kind.mpi_name();
    let request = if request {
        ", or its request's `MPI_Wait`"
    } else {
        ""
    };
    match completion {
        Some(call) if passive => format!(
            "{touch} the {buffer} of `{name}` only after the `{call}` that completes it at the origin (or an `MPI_Win_flush_local` of its target before the access{request})"
        ),
        Some(call) => format!(
            "{touch} the {buffer} of `{name}` only after the `{call}` that completes it at the origin"
        ),
        None => format!(
            "{touch} the {buffer} of `{name}` only after a call completes it at the origin: the next `MPI_Win_fence`, `MPI_Win_complete`, an unlock or flush of its target{request}"
        ),
    }
}

/// The first record after `operation` in `trace` that completes it at the
/// origin: a synchronization call on its window (and target), or for an
/// `R` operation the completion of its request.
fn completing_call<'t>(trace: &'t RankTrace, operation: &Op) -> Option<&'t Op> {
    let started = operation.rma()?;
    let at = trace
        .ops
        .iter()
        .position(|op| op.index == operation.index)?;
    let request = operation.kind.is_request_operation();
    trace.ops.get(at + 1..)?.iter().find_map(|op| {
        if op
            .rma()
            .is_some_and(|call: RmaCall| call.completes(&started))
        {
            return Some(op);
        }
        if !request {
            return None;
        }
        if op.request_origin() == Some(operation.index) {
            return Some(op);
        }
        let completed = op.completed_request()?;
        (completed.origin == operation.index)
            .then(|| trace.ops.iter().find(|c| c.index == completed.call))
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rma(index: u64, kind: OpKind, window: u64, peer: i32) -> Op {
        let mut op = Op::new(index, kind);
        op.request = window;
        op.peer = peer;
        op
    }

    #[test]
    fn the_completing_call_is_the_first_on_the_window_and_target() {
        let ops = vec![
            rma(0, OpKind::WinLock, 1, 0),
            rma(1, OpKind::Put, 1, 0),
            rma(2, OpKind::WinFlush, 1, 1),
            rma(3, OpKind::WinFence, 2, -1),
            rma(4, OpKind::WinUnlock, 1, 0),
        ];
        let trace = RankTrace::finalized(1, 2, ops.clone());
        let found = completing_call(&trace, &ops[1]).map(|op| op.index);
        assert_eq!(found, Some(4), "not the flush of rank 1, nor window 2");
        let open = RankTrace::finalized(1, 2, ops[..4].to_vec());
        assert_eq!(completing_call(&open, &ops[1]), None);
    }

    #[test]
    fn an_r_operation_is_completed_by_its_request_too() {
        let mut wait = Op::new(2, OpKind::Wait);
        wait.aux = 2; // 1 + the Rput's index
        let ops = vec![
            rma(0, OpKind::WinLockAll, 1, -1),
            rma(1, OpKind::Rput, 1, 0),
            wait,
            rma(3, OpKind::WinUnlockAll, 1, -1),
        ];
        let trace = RankTrace::finalized(1, 2, ops.clone());
        let found = completing_call(&trace, &ops[1]).map(|op| op.kind);
        assert_eq!(found, Some(OpKind::Wait));
        let put = rma(1, OpKind::Put, 1, 0);
        assert_eq!(
            completing_call(&trace, &put).map(|op| op.kind),
            Some(OpKind::WinUnlockAll),
            "a put has no request"
        );
    }

    #[test]
    fn the_buffer_is_named_by_what_mpi_does_to_it() {
        let op = |kind| Op::new(0, kind);
        let name = |kind, found| buffer_name(&op(kind), found);
        assert_eq!(name(OpKind::Put, ReuseFound::SendWritten), "origin buffer");
        assert_eq!(name(OpKind::Get, ReuseFound::RecvRead), "origin buffer");
        assert_eq!(
            name(OpKind::FetchAndOp, ReuseFound::RecvRead),
            "result buffer"
        );
        assert_eq!(
            name(OpKind::FetchAndOp, ReuseFound::SendWritten),
            "origin buffer"
        );
        assert_eq!(
            name(OpKind::CompareAndSwap, ReuseFound::SendWritten),
            "origin or compare buffer"
        );
        let help = help(
            &op(OpKind::Rput),
            ReuseFound::SendWritten,
            None,
            (true, true),
        );
        assert!(help.contains("request's `MPI_Wait`"), "{help}");
    }
}
