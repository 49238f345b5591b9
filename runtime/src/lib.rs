//! `libmbhybrid_rt.so`: the PMPI runtime mbhybrid loads into every MPI
//! process of a verified program (DESIGN.md, "The runtime"; seed 000
//! chapter 5 is the specification).
//!
//! It owns what happens inside the program's processes: every `MPI_*` call
//! the program makes lands in an export listed in this file (a trampoline
//! that keeps the return address, then a body inside a panic boundary), which
//! records the call in the rank's trace (a shared memory map that survives
//! the process being killed), piggybacks a header (clock, sender, record
//! index, type signature) on every point-to-point message, keeps the lazy
//! Lamport or vector clocks, forces the matches a replay's guidance names,
//! decides wildcards in `mbhybrid run`'s deterministic mode, and makes the
//! local checks (type signatures, leaks, collective mismatches, buffer reuse
//! and overflow, thread level, one-sided epochs), and notes the ranges of
//! window memory the process loads and stores during an exposure epoch
//! (`rma_exposure.rs`). Without
//! `MBHYBRID_TRACE_DIR` every export forwards to MPI and does nothing else.
//!
//! It must not change what the program computes, allocate or do I/O on the
//! per-call path (scratch buffers, request slots and event lists are made at
//! `MPI_Init`), panic or `unwrap` on anything a program can cause (a bug
//! stops the run with a message, never unwinds into C), or decide anything
//! the verdict decides: it records facts, `mbh-verdict` judges them. A call
//! it cannot follow stops the run naming the call, so that a message without
//! a header never reaches a receive that expects one.
//!
//! How each part works, and everything it does not do yet:
//! `docs/design/runtime.md`.
//!
//! # Example
//!
//! ```text
//! $ cargo build -p mbh-runtime
//! $ mpicc app.c -o app -L target/debug -Wl,-rpath,$PWD/target/debug \
//!       -Wl,--no-as-needed -lmbhybrid_rt        # mpicc adds -lmpich after
//! $ MBHYBRID_TRACE_DIR=/tmp/t mpiexec -n 3 ./app
//! $ cargo run -p mbh-runtime --example dump_trace -- /tmp/t
//! ```
//!
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod access;
mod before_init;
mod buffer_check;
mod callsite;
mod checks;
mod choice;
mod coll_pending;
mod comms;
mod consts;
mod crash;
mod engine;
mod fault;
mod handle;
mod heap;
mod lifecycle;
pub mod llcp;
pub mod logical;
#[cfg(target_arch = "x86_64")]
mod not_modelled;
mod null_arrays;
pub mod packed;
mod pending;
pub mod piggyback;
mod record;
mod requests;
mod rma;
mod rma_exposure;
mod rma_watch;
mod seen;
mod slots;
mod start;
mod start_colls;
mod state;
mod thread_level;
mod trace_file;
pub mod typesig;
mod watchdog;
mod wrap;
mod wrap_coll;
mod wrap_early;

pub use handle::HandleBits;

use buffer_check::check_fits;
use engine::{PersistentOp, SendMode};
use mbh_trace::static_report::BufferAccess as Access;
use mbh_trace::OpKind;
#[cfg(mpi4)]
use mpi_sys::MPI_Count;
use mpi_sys::{
    MPI_Aint, MPI_Comm, MPI_Datatype, MPI_Errhandler, MPI_Group, MPI_Info, MPI_Message, MPI_Op,
    MPI_Request, MPI_Status, MPI_Win,
};
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::AtomicU32;

/// The id of the MPI call site about to run, stored by the instrumented
/// program before each MPI call, or by the runtime from the call's return
/// address when the program stored none (`callsite::label`; 0: unknown).
/// Every record takes its `site` from here.
#[allow(non_upper_case_globals)]
#[unsafe(no_mangle)]
pub static mbhybrid_site: AtomicU32 = AtomicU32::new(0);

/// Defines export `$name`: a trampoline that stores its return address
/// (the instruction after the program's call) in `callsite::CALLER` and
/// jumps to `$body`, an `extern "C"` function of the same signature, with
/// every register and the stack as the program left them, so `$body` runs
/// as if the program had called it and returns straight to the program.
/// Two instructions and a jump: the address needs no frame pointer, no
/// unwinding, nothing the program could notice. Where there is no
/// trampoline (not x86-64) the export calls `$body` and calls keep the
/// sites the program stored.
macro_rules! trampoline {
    ($(#[$attr:meta])* fn $name:ident($($arg:ident: $ty:ty),*) => $body:path) => {
        $(#[$attr])*
        ///
        /// # Safety
        ///
        /// As for the MPI function of the same name.
        #[cfg(target_arch = "x86_64")]
        #[cfg_attr(not(test), unsafe(no_mangle))]
        #[allow(non_snake_case)] // the MPI name
        #[unsafe(naked)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> c_int {
            // r11 is free at any call (a scratch register no argument
            // uses); `[rsp]` is the return address the `call` pushed.
            core::arch::naked_asm!(
                "mov r11, qword ptr [rsp]",
                "mov qword ptr [rip + {caller}], r11",
                "jmp {body}",
                caller = sym crate::callsite::CALLER,
                body = sym $body,
            )
        }
        $(#[$attr])*
        ///
        /// # Safety
        ///
        /// As for the MPI function of the same name.
        #[cfg(not(target_arch = "x86_64"))]
        #[cfg_attr(not(test), unsafe(no_mangle))]
        #[allow(non_snake_case)] // the MPI name
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> c_int {
            // SAFETY: the caller upholds the MPI function's contract.
            unsafe { $body($($arg),*) }
        }
    };
}

/// What every export does before its call: while the runtime runs, makes
/// the thread the owner of the runtime for the call (`state::claim`: a
/// compare-and-swap; a call while another thread is inside one is
/// `thread_level::overlap`'s, which never returns), labels the call site,
/// checks the call against `MPI_Finalize` and `MPI_Init` and, owning, the
/// thread level (a relaxed load or two); returns the site and the claim,
/// which the export holds until it returns. `claims` is false for
/// `MPI_Abort`, which needs no state: it stays callable from any thread
/// and from inside callbacks.
#[inline(always)]
fn enter(name: &'static &'static str, claims: bool) -> (u32, Option<state::Claim>) {
    let mut claim = None;
    let mut me = 0;
    if claims && state::active() {
        me = state::me();
        match state::claim(me) {
            state::Entry::Claimed(c) => claim = Some(c),
            state::Entry::Nested => state::note_nested_call(name),
            state::Entry::Busy(owner) => thread_level::overlap(name, owner),
        }
    }
    callsite::label(name);
    if lifecycle::finalized() {
        checks::after_finalize();
    }
    let site = checks::before_call();
    if claim.is_some() {
        state::note_owner_call(name, site);
        thread_level::check(me);
    }
    if !state::active() {
        before_init::note(name, site);
    }
    (site, claim)
}

/// Whether export `name` claims the runtime ([`enter`]).
const fn claims(name: &str) -> bool {
    !matches!(name.as_bytes(), b"MPI_Abort")
}

/// Defines exports: each is a thin shim (a [`trampoline!`]) running its
/// body in the panic boundary.
/// Every export first labels a call the program did not label with its
/// return address (`callsite::label`), then makes the local checks that
/// need no knowledge of the call (`checks`): a call after `MPI_Finalize`
/// is recorded, and an error code is recorded and handled as the
/// program's handler for the call's communicator (`@ comm`;
/// `MPI_COMM_WORLD` when not given) says.
///
/// An entry is written one of two ways:
///
/// - `fn MPI_X(args) => body;`: `body` is the whole call, run as written
///   whether the runtime is on or off (`wrap.rs`, `wrap_coll.rs`).
/// - `fn MPI_X/PMPI_X(args) => |rt| rt.x(..);`: the call goes to `PMPI_X`
///   with the program's arguments, untouched, while the runtime is off;
///   otherwise the closure runs holding the runtime's state (the
///   [`Rt`](engine::Rt) method does the work). `, buffers: check` runs
///   `check` (the buffer overflow check, which needs no state) first.
///
/// So each such call's signature is written here and in its `Rt` method,
/// nowhere else.
macro_rules! exports {
    ($(
        $(#[$doc:meta])*
        fn $name:ident $(/ $pmpi:ident)? ($($arg:ident: $ty:ty),* $(,)?) $(@ $comm:expr)?
            => $body:expr $(, buffers: $buffers:expr)?;
    )*) => {
        /// The calls defined below, which `mbh_trace::support` must class
        /// as modelled.
        #[cfg(test)]
        const EXPORTED: &[&str] = &[$( stringify!($name), )*];
        /// The exports that forward while the runtime is off, with the
        /// call they forward to.
        #[cfg(test)]
        const FORWARDED: &[(&str, &str)] = &[$($( (stringify!($name), stringify!($pmpi)), )?)*];
        /// The bodies of the exports, entered from their trampolines.
        mod bodies {
            #[allow(unused_imports)] // each body uses some
            use super::*;
            $(
                #[allow(non_snake_case)] // the MPI name
                pub(super) unsafe extern "C" fn $name($($arg: $ty),*) -> c_int {
                    state::boundary(stringify!($name), || {
                        static NAME: &str = stringify!($name);
                        let (site, _claim) = enter(&NAME, const { claims(stringify!($name)) });
                        let rc = export_body!([$($pmpi)?] ($($arg),*) [$($buffers)?] $body);
                        #[allow(unused_variables)]
                        let comm = consts::comm_world();
                        $( let comm = $comm; )?
                        checks::on_error(stringify!($name), comm, site, rc)
                    })
                }
            )*
        }
        $(
            trampoline! {
                $(#[$doc])*
                fn $name($($arg: $ty),*) => bodies::$name
            }
        )*
    };
}

/// The call an [`exports!`] entry makes: its body as written, or (with a
/// `PMPI_X`) `PMPI_X` while the runtime is off and the body holding the
/// runtime's state while it is on.
macro_rules! export_body {
    ([] ($($arg:ident),*) [] $body:expr) => {
        // SAFETY: the caller upholds the MPI function's contract.
        unsafe { $body }
    };
    ([$pmpi:ident] ($($arg:ident),*) [$($buffers:expr)?] $body:expr) => {
        if !state::active() {
            // SAFETY: the caller's arguments, passed on unchanged.
            unsafe { mpi_sys::$pmpi($($arg),*) }
        } else {
            $( $buffers; )?
            // SAFETY: the caller upholds the MPI function's contract.
            unsafe { state::with($body) }
        }
    };
}

/// Defines exports of calls the runtime does not handle: they forward
/// while the runtime is off and stop the run, naming the call, when it is
/// on.
macro_rules! unsupported {
    ($( $(#[$cfg:meta])* fn $name:ident => $pmpi:ident($($arg:ident: $ty:ty),* $(,)?); )*) => {
    /// The calls defined below, which `mbh_trace::support::UNSUPPORTED`
    /// must list (so `build` warns about them).
    #[cfg(test)]
    // Pushes, not `vec![]`: each entry has its own `cfg`.
    #[allow(clippy::vec_init_then_push)]
    fn stopped() -> Vec<&'static str> {
        #[allow(unused_mut)] // no entry when the MPI has none of the calls
        let mut names = Vec::new();
        $( $(#[$cfg])* names.push(stringify!($name)); )*
        names
    }
    /// The bodies of the unsupported exports, entered from their
    /// trampolines.
    mod unsupported_bodies {
        #[allow(unused_imports)] // each body uses some
        use super::*;
        $(
            $(#[$cfg])*
            #[allow(non_snake_case)] // the MPI name
            pub(super) unsafe extern "C" fn $name($($arg: $ty),*) -> c_int {
                if !state::active() {
                    // SAFETY: the caller upholds the MPI function's contract.
                    return unsafe { mpi_sys::$pmpi($($arg),*) };
                }
                callsite::label(stringify!($name));
                wrap::unsupported(stringify!($name))
            }
        )*
    }
    $(
        trampoline! {
            $(#[$cfg])*
            #[doc = concat!("`", stringify!($name), "`: not supported by this version of the runtime; stops the run with a message naming it.")]
            fn $name($($arg: $ty),*) => unsupported_bodies::$name
        }
    )* };
}

exports! {
    /// `MPI_Init`: starts the runtime when `MBHYBRID_TRACE_DIR` is set.
    fn MPI_Init(argc: *mut c_int, argv: *mut *mut *mut c_char) => wrap::init(argc, argv);
    /// `MPI_Init_thread`: starts the runtime when `MBHYBRID_TRACE_DIR` is set.
    fn MPI_Init_thread(argc: *mut c_int, argv: *mut *mut *mut c_char, required: c_int, provided: *mut c_int)
        => wrap::init_thread(argc, argv, required, provided);
    /// `MPI_Finalize`: clocks to the maximum (rule R5); the rank's state
    /// becomes `Finalized` when it succeeds.
    fn MPI_Finalize() => wrap::finalize();
    /// `MPI_Abort`: the rank's state becomes `Aborted` before the call.
    fn MPI_Abort(comm: MPI_Comm, errorcode: c_int) @ comm => wrap::abort(comm, errorcode);
    /// `MPI_Buffer_attach`: the runtime attaches a buffer with room for
    /// the headers in its place (`engine/bsend.rs`).
    fn MPI_Buffer_attach/PMPI_Buffer_attach(buffer: *mut c_void, size: c_int) => |rt| rt.buffer_attach(buffer, size);
    /// `MPI_Buffer_detach`: returns the program's buffer and size.
    fn MPI_Buffer_detach/PMPI_Buffer_detach(buffer_addr: *mut c_void, size: *mut c_int)
        => |rt| rt.buffer_detach(buffer_addr, size);

    /// `MPI_Send` (synchronous under `--buffering zero`).
    fn MPI_Send/PMPI_Send(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) @ comm
        => |rt| rt.send(SendMode::Standard, OpKind::Send, buf, count, datatype, dest, tag, comm),
        buffers: check_fits(buf, count, datatype, Access::Read);
    /// `MPI_Ssend`: returns once the receiver acknowledged with its clock.
    fn MPI_Ssend/PMPI_Ssend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) @ comm
        => |rt| rt.send(SendMode::Sync, OpKind::Ssend, buf, count, datatype, dest, tag, comm),
        buffers: check_fits(buf, count, datatype, Access::Read);
    /// `MPI_Bsend`.
    fn MPI_Bsend/PMPI_Bsend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) @ comm
        => |rt| rt.send(SendMode::Buffered, OpKind::Bsend, buf, count, datatype, dest, tag, comm),
        buffers: check_fits(buf, count, datatype, Access::Read);
    /// `MPI_Rsend`.
    fn MPI_Rsend/PMPI_Rsend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) @ comm
        => |rt| rt.send(SendMode::Ready, OpKind::Rsend, buf, count, datatype, dest, tag, comm),
        buffers: check_fits(buf, count, datatype, Access::Read);
    /// `MPI_Isend` (synchronous under `--buffering zero`).
    fn MPI_Isend/PMPI_Isend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => |rt| rt.isend(SendMode::Standard, OpKind::Isend, buf, count, datatype, dest, tag, comm, request),
        buffers: check_fits(buf, count, datatype, Access::Read);
    /// `MPI_Issend`: completes once the receiver acknowledged.
    fn MPI_Issend/PMPI_Issend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => |rt| rt.isend(SendMode::Sync, OpKind::Issend, buf, count, datatype, dest, tag, comm, request),
        buffers: check_fits(buf, count, datatype, Access::Read);
    /// `MPI_Ibsend`.
    fn MPI_Ibsend/PMPI_Ibsend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => |rt| rt.isend(SendMode::Buffered, OpKind::Ibsend, buf, count, datatype, dest, tag, comm, request),
        buffers: check_fits(buf, count, datatype, Access::Read);
    /// `MPI_Irsend`.
    fn MPI_Irsend/PMPI_Irsend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => |rt| rt.isend(SendMode::Ready, OpKind::Irsend, buf, count, datatype, dest, tag, comm, request),
        buffers: check_fits(buf, count, datatype, Access::Read);
    /// `MPI_Recv`: a wildcard one is an event (forced in a replay).
    fn MPI_Recv/PMPI_Recv(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) @ comm
        => |rt| rt.recv(buf, count, datatype, source, tag, comm, status),
        buffers: check_fits(buf, count, datatype, Access::Write);
    /// `MPI_Irecv`: a wildcard one is a pending event until it completes.
    fn MPI_Irecv/PMPI_Irecv(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => |rt| rt.irecv(buf, count, datatype, source, tag, comm, request),
        buffers: check_fits(buf, count, datatype, Access::Write);
    /// `MPI_Sendrecv`.
    fn MPI_Sendrecv/PMPI_Sendrecv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int,
                                  recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, source: c_int, recvtag: c_int,
                                  comm: MPI_Comm, status: *mut MPI_Status) @ comm
        => |rt| rt.sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status),
        buffers: {
            check_fits(sendbuf, sendcount, sendtype, Access::Read);
            check_fits(recvbuf, recvcount, recvtype, Access::Write);
        };
    /// `MPI_Sendrecv_replace`.
    fn MPI_Sendrecv_replace/PMPI_Sendrecv_replace(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, sendtag: c_int,
                                                  source: c_int, recvtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) @ comm
        => |rt| rt.sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status),
        buffers: check_fits(buf, count, datatype, Access::ReadWrite);
    /// `MPI_Probe`: a wildcard one is an event; the status counts the
    /// program's data only.
    fn MPI_Probe/PMPI_Probe(source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) @ comm
        => |rt| rt.probe(source, tag, comm, status);
    /// `MPI_Iprobe`: an event only when it finds a message.
    fn MPI_Iprobe/PMPI_Iprobe(source: c_int, tag: c_int, comm: MPI_Comm, flag: *mut c_int, status: *mut MPI_Status) @ comm
        => |rt| rt.iprobe(source, tag, comm, flag, status);

    /// `MPI_Wait`.
    fn MPI_Wait/PMPI_Wait(request: *mut MPI_Request, status: *mut MPI_Status) => |rt| rt.wait(request, status);
    /// `MPI_Waitall`.
    fn MPI_Waitall/PMPI_Waitall(count: c_int, array_of_requests: *mut MPI_Request, array_of_statuses: *mut MPI_Status)
        => |rt| rt.waitall(count, array_of_requests, array_of_statuses);
    /// `MPI_Waitany`.
    fn MPI_Waitany/PMPI_Waitany(count: c_int, array_of_requests: *mut MPI_Request, index: *mut c_int, status: *mut MPI_Status)
        => |rt| rt.waitany(count, array_of_requests, index, status);
    /// `MPI_Waitsome`.
    fn MPI_Waitsome/PMPI_Waitsome(incount: c_int, array_of_requests: *mut MPI_Request, outcount: *mut c_int, array_of_indices: *mut c_int, array_of_statuses: *mut MPI_Status)
        => |rt| rt.waitsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
    /// `MPI_Test`.
    fn MPI_Test/PMPI_Test(request: *mut MPI_Request, flag: *mut c_int, status: *mut MPI_Status)
        => |rt| rt.test(request, flag, status);
    /// `MPI_Testall`.
    fn MPI_Testall/PMPI_Testall(count: c_int, array_of_requests: *mut MPI_Request, flag: *mut c_int, array_of_statuses: *mut MPI_Status)
        => |rt| rt.testall(count, array_of_requests, flag, array_of_statuses);
    /// `MPI_Testany`.
    fn MPI_Testany/PMPI_Testany(count: c_int, array_of_requests: *mut MPI_Request, index: *mut c_int, flag: *mut c_int, status: *mut MPI_Status)
        => |rt| rt.testany(count, array_of_requests, index, flag, status);
    /// `MPI_Testsome`.
    fn MPI_Testsome/PMPI_Testsome(incount: c_int, array_of_requests: *mut MPI_Request, outcount: *mut c_int, array_of_indices: *mut c_int, array_of_statuses: *mut MPI_Status)
        => |rt| rt.testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
    /// `MPI_Send_init`: a persistent request; each `MPI_Start` is an
    /// `MPI_Isend` (synchronous under `--buffering zero`).
    fn MPI_Send_init/PMPI_Send_init(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => |rt| rt.persistent_init(PersistentOp::Send(SendMode::Standard), OpKind::SendInit, buf.cast_mut(), count, datatype, dest, tag, comm, request),
        buffers: check_fits(buf, count, datatype, Access::Read);
    /// `MPI_Bsend_init`: each start is an `MPI_Ibsend`.
    fn MPI_Bsend_init/PMPI_Bsend_init(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => |rt| rt.persistent_init(PersistentOp::Send(SendMode::Buffered), OpKind::BsendInit, buf.cast_mut(), count, datatype, dest, tag, comm, request),
        buffers: check_fits(buf, count, datatype, Access::Read);
    /// `MPI_Ssend_init`: each start is an `MPI_Issend`.
    fn MPI_Ssend_init/PMPI_Ssend_init(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => |rt| rt.persistent_init(PersistentOp::Send(SendMode::Sync), OpKind::SsendInit, buf.cast_mut(), count, datatype, dest, tag, comm, request),
        buffers: check_fits(buf, count, datatype, Access::Read);
    /// `MPI_Rsend_init`: each start is an `MPI_Irsend`.
    fn MPI_Rsend_init/PMPI_Rsend_init(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => |rt| rt.persistent_init(PersistentOp::Send(SendMode::Ready), OpKind::RsendInit, buf.cast_mut(), count, datatype, dest, tag, comm, request),
        buffers: check_fits(buf, count, datatype, Access::Read);
    /// `MPI_Recv_init`: each start is an `MPI_Irecv` (a wildcard event
    /// per start for `MPI_ANY_SOURCE`).
    fn MPI_Recv_init/PMPI_Recv_init(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => |rt| rt.persistent_init(PersistentOp::Recv, OpKind::RecvInit, buf, count, datatype, source, tag, comm, request),
        buffers: check_fits(buf, count, datatype, Access::Write);
    /// `MPI_Start`: the nonblocking call the persistent request stands for.
    fn MPI_Start/PMPI_Start(request: *mut MPI_Request) => |rt| rt.start_request(request);
    /// `MPI_Startall`: each request started in turn at the call's site.
    fn MPI_Startall/PMPI_Startall(count: c_int, array_of_requests: *mut MPI_Request)
        => |rt| rt.startall(count, array_of_requests);
    /// `MPI_Cancel`: a cancelled receive matches nothing (its wildcard
    /// event is dropped).
    fn MPI_Cancel/PMPI_Cancel(request: *mut MPI_Request) => |rt| rt.cancel_request(request);
    /// `MPI_Mprobe`: a wildcard one is a wildcard event (forced in a
    /// replay); the status counts the program's data only.
    fn MPI_Mprobe/PMPI_Mprobe(source: c_int, tag: c_int, comm: MPI_Comm, message: *mut MPI_Message, status: *mut MPI_Status) @ comm
        => |rt| rt.mprobe(source, tag, comm, message, status);
    /// `MPI_Improbe`: an event only when it finds a message.
    fn MPI_Improbe/PMPI_Improbe(source: c_int, tag: c_int, comm: MPI_Comm, flag: *mut c_int, message: *mut MPI_Message, status: *mut MPI_Status) @ comm
        => |rt| rt.improbe(source, tag, comm, flag, message, status);
    /// `MPI_Mrecv`: receives the probed message with its header.
    fn MPI_Mrecv/PMPI_Mrecv(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, message: *mut MPI_Message, status: *mut MPI_Status)
        => |rt| rt.mrecv(buf, count, datatype, message, status),
        buffers: check_fits(buf, count, datatype, Access::Write);
    /// `MPI_Imrecv`: completed like an `MPI_Irecv`.
    fn MPI_Imrecv/PMPI_Imrecv(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, message: *mut MPI_Message, request: *mut MPI_Request)
        => |rt| rt.imrecv(buf, count, datatype, message, request),
        buffers: check_fits(buf, count, datatype, Access::Write);
    /// `MPI_Request_free`: the runtime completes the request itself.
    fn MPI_Request_free/PMPI_Request_free(request: *mut MPI_Request) => |rt| rt.request_free(request);
    /// `MPI_Request_get_status`: a receive's status counts the program's
    /// data only.
    fn MPI_Request_get_status/PMPI_Request_get_status(request: MPI_Request, flag: *mut c_int, status: *mut MPI_Status)
        => |rt| rt.request_get_status(request, flag, status);

    /// `MPI_Barrier`: clocks to the maximum over the communicator.
    fn MPI_Barrier(comm: MPI_Comm) @ comm
        => wrap_coll::barrier(comm);
    /// `MPI_Bcast`: the root's clock reaches the others.
    fn MPI_Bcast(buffer: *mut c_void, count: c_int, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm) @ comm
        => wrap_coll::bcast(buffer, count, datatype, root, comm);
    /// `MPI_Reduce`: the others' clocks reach the root.
    fn MPI_Reduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm) @ comm
        => wrap_coll::reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    /// `MPI_Allreduce`: clocks to the maximum.
    fn MPI_Allreduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) @ comm
        => wrap_coll::allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    /// `MPI_Scan`: rank i takes the maximum of ranks 0..=i.
    fn MPI_Scan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) @ comm
        => wrap_coll::scan(sendbuf, recvbuf, count, datatype, op, comm);
    /// `MPI_Exscan`: rank i takes the maximum of ranks 0..i and its own.
    fn MPI_Exscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) @ comm
        => wrap_coll::exscan(sendbuf, recvbuf, count, datatype, op, comm);
    /// `MPI_Reduce_scatter_block`: clocks to the maximum.
    fn MPI_Reduce_scatter_block(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) @ comm
        => wrap_coll::reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
    /// `MPI_Reduce_scatter`: clocks to the maximum.
    fn MPI_Reduce_scatter(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) @ comm
        => wrap_coll::reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
    /// `MPI_Gather`: the others' clocks reach the root.
    fn MPI_Gather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) @ comm
        => wrap_coll::gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    /// `MPI_Scatter`: the root's clock reaches the others.
    fn MPI_Scatter(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) @ comm
        => wrap_coll::scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    /// `MPI_Allgather`: clocks to the maximum.
    fn MPI_Allgather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm) @ comm
        => wrap_coll::allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    /// `MPI_Alltoall`: clocks to the maximum.
    fn MPI_Alltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm) @ comm
        => wrap_coll::alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    /// `MPI_Gatherv`: the others' clocks reach the root.
    fn MPI_Gatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) @ comm
        => wrap_coll::gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
    /// `MPI_Scatterv`: the root's clock reaches the others.
    fn MPI_Scatterv(sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) @ comm
        => wrap_coll::scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
    /// `MPI_Allgatherv`: clocks to the maximum.
    fn MPI_Allgatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm) @ comm
        => wrap_coll::allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    /// `MPI_Alltoallv`: clocks to the maximum.
    fn MPI_Alltoallv(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm) @ comm
        => wrap_coll::alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    /// `MPI_Alltoallw`: clocks to the maximum.
    fn MPI_Alltoallw(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const MPI_Datatype, comm: MPI_Comm) @ comm
        => wrap_coll::alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
    /// `MPI_Ibarrier`: as `MPI_Barrier`, the clocks merged where the request completes.
    fn MPI_Ibarrier(comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => wrap_coll::ibarrier(comm, request);
    /// `MPI_Ibcast`: as `MPI_Bcast`, the clocks merged where the request completes.
    fn MPI_Ibcast(buffer: *mut c_void, count: c_int, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => wrap_coll::ibcast(buffer, count, datatype, root, comm, request);
    /// `MPI_Ireduce`: as `MPI_Reduce`, the clocks merged where the request completes.
    fn MPI_Ireduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => wrap_coll::ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request);
    /// `MPI_Iallreduce`: as `MPI_Allreduce`, the clocks merged where the request completes.
    fn MPI_Iallreduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => wrap_coll::iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
    /// `MPI_Iscan`: as `MPI_Scan`, the clocks merged where the request completes.
    fn MPI_Iscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => wrap_coll::iscan(sendbuf, recvbuf, count, datatype, op, comm, request);
    /// `MPI_Iexscan`: as `MPI_Exscan`, the clocks merged where the request completes.
    fn MPI_Iexscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => wrap_coll::iexscan(sendbuf, recvbuf, count, datatype, op, comm, request);
    /// `MPI_Ireduce_scatter_block`: as `MPI_Reduce_scatter_block`, the clocks merged where the request completes.
    fn MPI_Ireduce_scatter_block(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => wrap_coll::ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request);
    /// `MPI_Ireduce_scatter`: as `MPI_Reduce_scatter`, the clocks merged where the request completes.
    fn MPI_Ireduce_scatter(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => wrap_coll::ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
    /// `MPI_Igather`: as `MPI_Gather`, the clocks merged where the request completes.
    fn MPI_Igather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => wrap_coll::igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
    /// `MPI_Iscatter`: as `MPI_Scatter`, the clocks merged where the request completes.
    fn MPI_Iscatter(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => wrap_coll::iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
    /// `MPI_Iallgather`: as `MPI_Allgather`, the clocks merged where the request completes.
    fn MPI_Iallgather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => wrap_coll::iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    /// `MPI_Ialltoall`: as `MPI_Alltoall`, the clocks merged where the request completes.
    fn MPI_Ialltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => wrap_coll::ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    /// `MPI_Igatherv`: as `MPI_Gatherv`, the clocks merged where the request completes.
    fn MPI_Igatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => wrap_coll::igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request);
    /// `MPI_Iscatterv`: as `MPI_Scatterv`, the clocks merged where the request completes.
    fn MPI_Iscatterv(sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => wrap_coll::iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
    /// `MPI_Iallgatherv`: as `MPI_Allgatherv`, the clocks merged where the request completes.
    fn MPI_Iallgatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => wrap_coll::iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
    /// `MPI_Ialltoallv`: as `MPI_Alltoallv`, the clocks merged where the request completes.
    fn MPI_Ialltoallv(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => wrap_coll::ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request);
    /// `MPI_Ialltoallw`: as `MPI_Alltoallw`, the clocks merged where the request completes.
    fn MPI_Ialltoallw(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) @ comm
        => wrap_coll::ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, request);
    /// `MPI_Comm_free`: also frees the runtime's shadow of the
    /// communicator. Not recorded.
    fn MPI_Comm_free/PMPI_Comm_free(comm: *mut MPI_Comm) => |rt| rt.comm_free(comm);

    // Handles followed for the resource-leak check (not recorded).
    /// `MPI_Comm_dup`.
    fn MPI_Comm_dup(comm: MPI_Comm, newcomm: *mut MPI_Comm) @ comm
        => wrap::new_comm(comm, newcomm, wrap::Made::Duplicate, || mpi_sys::PMPI_Comm_dup(comm, newcomm));
    /// `MPI_Comm_dup_with_info`.
    fn MPI_Comm_dup_with_info(comm: MPI_Comm, info: MPI_Info, newcomm: *mut MPI_Comm) @ comm
        => wrap::new_comm(comm, newcomm, wrap::Made::Duplicate, || mpi_sys::PMPI_Comm_dup_with_info(comm, info, newcomm));
    /// `MPI_Comm_idup`.
    fn MPI_Comm_idup(comm: MPI_Comm, newcomm: *mut MPI_Comm, request: *mut MPI_Request) @ comm
        => wrap::new_comm(comm, newcomm, wrap::Made::Later, || mpi_sys::PMPI_Comm_idup(comm, newcomm, request));
    /// `MPI_Comm_split`.
    fn MPI_Comm_split(comm: MPI_Comm, color: c_int, key: c_int, newcomm: *mut MPI_Comm) @ comm
        => wrap::new_comm(comm, newcomm, wrap::Made::OverParent, || mpi_sys::PMPI_Comm_split(comm, color, key, newcomm));
    /// `MPI_Comm_split_type`.
    fn MPI_Comm_split_type(comm: MPI_Comm, split_type: c_int, key: c_int, info: MPI_Info, newcomm: *mut MPI_Comm) @ comm
        => wrap::new_comm(comm, newcomm, wrap::Made::OverParent, || mpi_sys::PMPI_Comm_split_type(comm, split_type, key, info, newcomm));
    /// `MPI_Comm_create`.
    fn MPI_Comm_create(comm: MPI_Comm, group: MPI_Group, newcomm: *mut MPI_Comm) @ comm
        => wrap::new_comm(comm, newcomm, wrap::Made::OverParent, || mpi_sys::PMPI_Comm_create(comm, group, newcomm));
    /// `MPI_Comm_create_group`.
    fn MPI_Comm_create_group(comm: MPI_Comm, group: MPI_Group, tag: c_int, newcomm: *mut MPI_Comm) @ comm
        => wrap::new_comm(comm, newcomm, wrap::Made::ByGroup, || mpi_sys::PMPI_Comm_create_group(comm, group, tag, newcomm));
    /// `MPI_Cart_create`.
    fn MPI_Cart_create(comm: MPI_Comm, ndims: c_int, dims: *const c_int, periods: *const c_int, reorder: c_int, newcomm: *mut MPI_Comm) @ comm
        => wrap::new_comm(comm, newcomm, wrap::Made::OverParent, || mpi_sys::PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm));
    /// `MPI_Cart_sub`.
    fn MPI_Cart_sub(comm: MPI_Comm, remain_dims: *const c_int, newcomm: *mut MPI_Comm) @ comm
        => wrap::new_comm(comm, newcomm, wrap::Made::OverParent, || mpi_sys::PMPI_Cart_sub(comm, remain_dims, newcomm));
    /// `MPI_Intercomm_create`.
    fn MPI_Intercomm_create(comm: MPI_Comm, local_leader: c_int, peer_comm: MPI_Comm, remote_leader: c_int, tag: c_int, newcomm: *mut MPI_Comm) @ comm
        => wrap::new_comm(comm, newcomm, wrap::Made::Inter, || mpi_sys::PMPI_Intercomm_create(comm, local_leader, peer_comm, remote_leader, tag, newcomm));
    /// `MPI_Intercomm_merge`.
    fn MPI_Intercomm_merge(comm: MPI_Comm, high: c_int, newcomm: *mut MPI_Comm) @ comm
        => wrap::new_comm(comm, newcomm, wrap::Made::Inter, || mpi_sys::PMPI_Intercomm_merge(comm, high, newcomm));
    /// `MPI_Comm_group`.
    fn MPI_Comm_group(comm: MPI_Comm, group: *mut MPI_Group) @ comm
        => wrap::new_group(group, || mpi_sys::PMPI_Comm_group(comm, group));
    /// `MPI_Group_incl`.
    fn MPI_Group_incl(group: MPI_Group, n: c_int, ranks: *const c_int, newgroup: *mut MPI_Group)
        => wrap::new_group(newgroup, || mpi_sys::PMPI_Group_incl(group, n, ranks, newgroup));
    /// `MPI_Group_excl`.
    fn MPI_Group_excl(group: MPI_Group, n: c_int, ranks: *const c_int, newgroup: *mut MPI_Group)
        => wrap::new_group(newgroup, || mpi_sys::PMPI_Group_excl(group, n, ranks, newgroup));
    /// `MPI_Group_union`.
    fn MPI_Group_union(group1: MPI_Group, group2: MPI_Group, newgroup: *mut MPI_Group)
        => wrap::new_group(newgroup, || mpi_sys::PMPI_Group_union(group1, group2, newgroup));
    /// `MPI_Group_intersection`.
    fn MPI_Group_intersection(group1: MPI_Group, group2: MPI_Group, newgroup: *mut MPI_Group)
        => wrap::new_group(newgroup, || mpi_sys::PMPI_Group_intersection(group1, group2, newgroup));
    /// `MPI_Group_difference`.
    fn MPI_Group_difference(group1: MPI_Group, group2: MPI_Group, newgroup: *mut MPI_Group)
        => wrap::new_group(newgroup, || mpi_sys::PMPI_Group_difference(group1, group2, newgroup));
    /// `MPI_Group_free`.
    fn MPI_Group_free(group: *mut MPI_Group) => wrap::group_free(group);
    /// `MPI_Type_commit`: a derived type is followed from its commit.
    fn MPI_Type_commit(datatype: *mut MPI_Datatype) => wrap::type_commit(datatype);
    /// `MPI_Type_free`.
    fn MPI_Type_free(datatype: *mut MPI_Datatype) => wrap::type_free(datatype);
    /// `MPI_Op_create`.
    fn MPI_Op_create(user_fn: mpi_sys::MPI_User_function, commute: c_int, op: *mut MPI_Op)
        => wrap::op_create(user_fn, commute, op);
    /// `MPI_Op_free`.
    fn MPI_Op_free(op: *mut MPI_Op) => wrap::op_free(op);
    /// `MPI_Comm_set_errhandler`: `MPI_ERRORS_ARE_FATAL` is remembered,
    /// not applied (the runtime aborts after recording the error).
    fn MPI_Comm_set_errhandler(comm: MPI_Comm, errhandler: MPI_Errhandler) @ comm
        => wrap::comm_set_errhandler(comm, errhandler);
    /// `MPI_Errhandler_set`: as `MPI_Comm_set_errhandler`.
    fn MPI_Errhandler_set(comm: MPI_Comm, errhandler: MPI_Errhandler) @ comm
        => wrap::comm_set_errhandler(comm, errhandler);
    /// `MPI_Comm_get_errhandler`: the handler the program chose.
    fn MPI_Comm_get_errhandler(comm: MPI_Comm, errhandler: *mut MPI_Errhandler) @ comm
        => wrap::comm_get_errhandler(comm, errhandler);
}

unsupported! {
    #[cfg(mpi4)]
    fn MPI_Isendrecv => PMPI_Isendrecv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, source: c_int, recvtag: c_int, comm: MPI_Comm, request: *mut MPI_Request);
    #[cfg(mpi4)]
    fn MPI_Isendrecv_replace => PMPI_Isendrecv_replace(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: MPI_Comm, request: *mut MPI_Request);
    #[cfg(mpi4)]
    fn MPI_Psend_init => PMPI_Psend_init(buf: *const c_void, partitions: c_int, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request);
    #[cfg(mpi4)]
    fn MPI_Precv_init => PMPI_Precv_init(buf: *mut c_void, partitions: c_int, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request);
    #[cfg(mpi4)]
    fn MPI_Send_c => PMPI_Send_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm);
    #[cfg(mpi4)]
    fn MPI_Buffer_attach_c => PMPI_Buffer_attach_c(buffer: *mut c_void, size: MPI_Count);
    #[cfg(mpi4)]
    fn MPI_Buffer_detach_c => PMPI_Buffer_detach_c(buffer_addr: *mut c_void, size: *mut MPI_Count);
    #[cfg(mpi4)]
    fn MPI_Bsend_c => PMPI_Bsend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm);
    #[cfg(mpi4)]
    fn MPI_Ssend_c => PMPI_Ssend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm);
    #[cfg(mpi4)]
    fn MPI_Rsend_c => PMPI_Rsend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm);
    #[cfg(mpi4)]
    fn MPI_Isend_c => PMPI_Isend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request);
    #[cfg(mpi4)]
    fn MPI_Ibsend_c => PMPI_Ibsend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request);
    #[cfg(mpi4)]
    fn MPI_Issend_c => PMPI_Issend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request);
    #[cfg(mpi4)]
    fn MPI_Irsend_c => PMPI_Irsend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request);
    #[cfg(mpi4)]
    fn MPI_Recv_c => PMPI_Recv_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status);
    #[cfg(mpi4)]
    fn MPI_Irecv_c => PMPI_Irecv_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request);
    #[cfg(mpi4)]
    fn MPI_Sendrecv_c => PMPI_Sendrecv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, source: c_int, recvtag: c_int, comm: MPI_Comm, status: *mut MPI_Status);
    #[cfg(mpi4)]
    fn MPI_Sendrecv_replace_c => PMPI_Sendrecv_replace_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: MPI_Comm, status: *mut MPI_Status);
    #[cfg(mpi4)]
    fn MPI_Mrecv_c => PMPI_Mrecv_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, message: *mut MPI_Message, status: *mut MPI_Status);
    #[cfg(mpi4)]
    fn MPI_Imrecv_c => PMPI_Imrecv_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, message: *mut MPI_Message, request: *mut MPI_Request);
    #[cfg(mpi4)]
    fn MPI_Send_init_c => PMPI_Send_init_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request);
    #[cfg(mpi4)]
    fn MPI_Bsend_init_c => PMPI_Bsend_init_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request);
    #[cfg(mpi4)]
    fn MPI_Ssend_init_c => PMPI_Ssend_init_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request);
    #[cfg(mpi4)]
    fn MPI_Rsend_init_c => PMPI_Rsend_init_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request);
    #[cfg(mpi4)]
    fn MPI_Recv_init_c => PMPI_Recv_init_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request);
    #[cfg(mpi4)]
    fn MPI_Isendrecv_c => PMPI_Isendrecv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, source: c_int, recvtag: c_int, comm: MPI_Comm, request: *mut MPI_Request);
    #[cfg(mpi4)]
    fn MPI_Isendrecv_replace_c => PMPI_Isendrecv_replace_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: MPI_Comm, request: *mut MPI_Request);
}

/// Defines the one-sided communication exports (`rma.rs`): as
/// [`exports!`], the body runs holding the runtime's state, and an error
/// is handled as the program's handler for the
/// window's communicator (`@ comm`, evaluated after a failed call only)
/// says: MPICH's windows inherit the handler the runtime set on the
/// communicator (`MPI_ERRORS_RETURN`), so without this a call MPI would
/// have aborted on returns to the program.
macro_rules! rma_exports {
    ($( $(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) @ $comm:expr => $body:expr; )*) => {
        /// The calls defined below, which `mbh_trace::support` must class
        /// as recorded with races not checked.
        #[cfg(test)]
        const RMA_EXPORTED: &[&str] = &[$( stringify!($name), )*];
        /// The bodies of the RMA exports, entered from their trampolines.
        mod rma_bodies {
            #[allow(unused_imports)] // each body uses some
            use super::*;
            $(
                #[allow(non_snake_case)] // the MPI name
                pub(super) unsafe extern "C" fn $name($($arg: $ty),*) -> c_int {
                    state::boundary(stringify!($name), || {
                        static NAME: &str = stringify!($name);
                        let (site, _claim) = enter(&NAME, true);
                        // SAFETY: the caller upholds the MPI function's contract.
                        let call = || unsafe { $body };
                        if !state::active() {
                            return call();
                        }
                        // Made holding the runtime's state, as every
                        // wrapper: one caller records at a time.
                        let rc = state::with(|rt| {
                            let rc = call();
                            rma::follow_requests(rt);
                            rc
                        });
                        if rc == consts::SUCCESS {
                            return rc;
                        }
                        checks::on_error(stringify!($name), $comm, site, rc)
                    })
                }
            )*
        }
        $(
            trampoline! {
                $(#[$doc])*
                fn $name($($arg: $ty),*) => rma_bodies::$name
            }
        )*
    };
}

rma_exports! {
    /// `MPI_Win_create`: recorded with the window's id.
    fn MPI_Win_create(base: *mut c_void, size: MPI_Aint, disp_unit: c_int, info: MPI_Info, comm: MPI_Comm, win: *mut MPI_Win) @ comm
        => rma::win_create(base, size, disp_unit, info, comm, win);
    /// `MPI_Win_allocate`: recorded with the window's id.
    fn MPI_Win_allocate(size: MPI_Aint, disp_unit: c_int, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) @ comm
        => rma::win_allocate(size, disp_unit, info, comm, baseptr, win);
    /// `MPI_Win_allocate_shared`: recorded with the window's id.
    fn MPI_Win_allocate_shared(size: MPI_Aint, disp_unit: c_int, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) @ comm
        => rma::win_allocate_shared(size, disp_unit, info, comm, baseptr, win);
    /// `MPI_Win_create_dynamic`: recorded with the window's id.
    fn MPI_Win_create_dynamic(info: MPI_Info, comm: MPI_Comm, win: *mut MPI_Win) @ comm
        => rma::win_create_dynamic(info, comm, win);
    /// `MPI_Win_free`: recorded; the window leaves the table.
    fn MPI_Win_free(win: *mut MPI_Win) @ rma::comm_behind(win) => rma::win_free(win);
    /// `MPI_Win_fence`: recorded with its assert; closes the window's
    /// exposure epoch and opens the next (`rma_exposure.rs`).
    fn MPI_Win_fence(assert: c_int, win: MPI_Win) @ rma::comm_of(win) => rma::win_fence(assert, win);
    /// `MPI_Win_lock`: recorded with its lock type, target and assert.
    fn MPI_Win_lock(lock_type: c_int, rank: c_int, assert: c_int, win: MPI_Win) @ rma::comm_of(win)
        => rma::win_lock(lock_type, rank, assert, win);
    /// `MPI_Win_unlock`: recorded with its target.
    fn MPI_Win_unlock(rank: c_int, win: MPI_Win) @ rma::comm_of(win) => rma::win_unlock(rank, win);
    /// `MPI_Win_lock_all`: recorded with its assert.
    fn MPI_Win_lock_all(assert: c_int, win: MPI_Win) @ rma::comm_of(win) => rma::win_lock_all(assert, win);
    /// `MPI_Win_unlock_all`: recorded.
    fn MPI_Win_unlock_all(win: MPI_Win) @ rma::comm_of(win) => rma::win_unlock_all(win);
    /// `MPI_Win_post`: recorded with its assert and group size; opens
    /// an exposure epoch (`rma_exposure.rs`).
    fn MPI_Win_post(group: MPI_Group, assert: c_int, win: MPI_Win) @ rma::comm_of(win) => rma::win_post(group, assert, win);
    /// `MPI_Win_start`: recorded with its assert and group size.
    fn MPI_Win_start(group: MPI_Group, assert: c_int, win: MPI_Win) @ rma::comm_of(win) => rma::win_start(group, assert, win);
    /// `MPI_Win_complete`: recorded.
    fn MPI_Win_complete(win: MPI_Win) @ rma::comm_of(win) => rma::win_complete(win);
    /// `MPI_Win_wait`: recorded; closes the exposure epoch.
    fn MPI_Win_wait(win: MPI_Win) @ rma::comm_of(win) => rma::win_wait(win);
    /// `MPI_Win_test`: recorded with the flag it returned.
    fn MPI_Win_test(win: MPI_Win, flag: *mut c_int) @ rma::comm_of(win) => rma::win_test(win, flag);
    /// `MPI_Win_flush`: recorded with its target.
    fn MPI_Win_flush(rank: c_int, win: MPI_Win) @ rma::comm_of(win) => rma::win_flush(rank, win);
    /// `MPI_Win_flush_all`: recorded.
    fn MPI_Win_flush_all(win: MPI_Win) @ rma::comm_of(win) => rma::win_flush_all(win);
    /// `MPI_Win_flush_local`: recorded with its target.
    fn MPI_Win_flush_local(rank: c_int, win: MPI_Win) @ rma::comm_of(win) => rma::win_flush_local(rank, win);
    /// `MPI_Win_flush_local_all`: recorded.
    fn MPI_Win_flush_local_all(win: MPI_Win) @ rma::comm_of(win) => rma::win_flush_local_all(win);
    /// `MPI_Win_sync`: recorded.
    fn MPI_Win_sync(win: MPI_Win) @ rma::comm_of(win) => rma::win_sync(win);
    /// `MPI_Put`: recorded with its target, displacement and count.
    fn MPI_Put(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, win: MPI_Win) @ rma::comm_of(win)
        => rma::put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win);
    /// `MPI_Get`: recorded with its target, displacement and count.
    fn MPI_Get(origin_addr: *mut c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, win: MPI_Win) @ rma::comm_of(win)
        => rma::get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win);
    /// `MPI_Accumulate`: recorded with its target, displacement and count.
    fn MPI_Accumulate(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win) @ rma::comm_of(win)
        => rma::accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op, win);
    /// `MPI_Get_accumulate`: recorded with its target, displacement and count.
    fn MPI_Get_accumulate(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, result_addr: *mut c_void, result_count: c_int, result_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win) @ rma::comm_of(win)
        => rma::get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op, win);
    /// `MPI_Fetch_and_op`: recorded with its target and displacement.
    fn MPI_Fetch_and_op(origin_addr: *const c_void, result_addr: *mut c_void, datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, op: MPI_Op, win: MPI_Win) @ rma::comm_of(win)
        => rma::fetch_and_op(origin_addr, result_addr, datatype, target_rank, target_disp, op, win);
    /// `MPI_Compare_and_swap`: recorded with its target and displacement.
    fn MPI_Compare_and_swap(origin_addr: *const c_void, compare_addr: *const c_void, result_addr: *mut c_void, datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, win: MPI_Win) @ rma::comm_of(win)
        => rma::compare_and_swap(origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win);
    /// `MPI_Rput`: recorded with its target, displacement and count.
    fn MPI_Rput(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, win: MPI_Win, request: *mut MPI_Request) @ rma::comm_of(win)
        => rma::rput(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, request);
    /// `MPI_Rget`: recorded with its target, displacement and count.
    fn MPI_Rget(origin_addr: *mut c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, win: MPI_Win, request: *mut MPI_Request) @ rma::comm_of(win)
        => rma::rget(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, request);
    /// `MPI_Raccumulate`: recorded with its target, displacement and count.
    fn MPI_Raccumulate(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win, request: *mut MPI_Request) @ rma::comm_of(win)
        => rma::raccumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op, win, request);
    /// `MPI_Rget_accumulate`: recorded with its target, displacement and count.
    fn MPI_Rget_accumulate(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, result_addr: *mut c_void, result_count: c_int, result_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win, request: *mut MPI_Request) @ rma::comm_of(win)
        => rma::rget_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op, win, request);
}

/// Records an `MPI_Pcontrol` call; called by `MPI_Pcontrol` in
/// `src/pcontrol.c` with the level, for mbhybrid's marker levels
/// 7301-7305 its one or two arguments (0 when absent), and its return
/// address (for a call the program did not label). Not part of the MPI
/// interface.
#[unsafe(no_mangle)]
pub extern "C" fn mbhybrid_rt_pcontrol(level: c_int, a: c_int, b: c_int, caller: *const c_void) {
    callsite::set_caller(caller);
    callsite::label("MPI_Pcontrol");
    wrap::pcontrol(level, a, b);
}

#[cfg(test)]
mod support_tests {
    use mbh_trace::support::{of_class, support, Support};

    /// `build` warns about exactly the calls the runtime stops at.
    #[test]
    fn the_stopped_calls_are_the_ones_build_warns_about() {
        let mut stopped = super::stopped();
        if cfg!(mpi4) {
            let listed: Vec<&str> = of_class(Support::Stops).collect();
            stopped.sort_unstable();
            assert_eq!(stopped, listed);
        } else {
            // The calls are all MPI 4's: an MPI 3 (Open MPI 4) has none,
            // so a program built against it cannot call them.
            assert!(stopped.is_empty(), "{stopped:?}");
        }
    }

    /// An export that forwards while the runtime is off forwards to its
    /// own `PMPI_` name.
    #[test]
    fn each_export_forwards_to_its_own_pmpi_call() {
        assert!(super::FORWARDED.len() > 30, "{}", super::FORWARDED.len());
        for (name, pmpi) in super::FORWARDED {
            assert_eq!(format!("P{name}"), *pmpi);
        }
    }

    /// The functions the installed `mpi.h` declares, as the build script
    /// read them.
    fn header_functions() -> Vec<&'static str> {
        include_str!(concat!(env!("OUT_DIR"), "/mpi_functions.txt"))
            .lines()
            .collect()
    }

    /// The runtime's wrappers are what the table says (issue 38): every
    /// export is a modelled function, every modelled function of the
    /// header is exported, and every unmodelled one is passed through
    /// (and recorded); the rest, harmless, is not interposed.
    #[test]
    fn the_exports_agree_with_the_support_table() {
        let exported = super::EXPORTED;
        for name in exported {
            assert_eq!(support(name), Some(Support::Modelled), "{name}");
        }
        for name in super::RMA_EXPORTED {
            assert_eq!(support(name), Some(Support::RacesNotChecked), "{name}");
        }
        let header = header_functions();
        assert!(header.len() > 300, "the header was read: {}", header.len());
        for name in &header {
            match support(name) {
                Some(Support::Modelled) => assert!(
                    exported.contains(name) || *name == "MPI_Pcontrol",
                    "{name} is modelled but not exported"
                ),
                Some(Support::RacesNotChecked) => assert!(
                    super::RMA_EXPORTED.contains(name),
                    "{name} is recorded but not exported"
                ),
                Some(Support::NotModelled) => {
                    #[cfg(target_arch = "x86_64")]
                    assert!(
                        crate::not_modelled::PASSED_THROUGH.contains(name),
                        "{name} is not passed through"
                    );
                }
                Some(Support::Stops | Support::Harmless) => {}
                None => panic!("{name} of the installed mpi.h is not in mbh_trace::support"),
            }
        }
        #[cfg(target_arch = "x86_64")]
        for name in crate::not_modelled::PASSED_THROUGH {
            assert_eq!(support(name), Some(Support::NotModelled), "{name}");
            assert!(header.contains(name), "{name}");
        }
    }
}
