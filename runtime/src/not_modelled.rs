//! The MPI functions the runtime passes to MPI without modelling them
//! ([`mbh_trace::support::Support::NotModelled`]: one-sided
//! communication, neighbourhood and persistent collectives, `MPI_T`, ...):
//! each is exported as a pass-through that records the call
//! ([`OpKind::NotModelled`], once per function and site) and jumps to the
//! MPI library's `PMPI_` entry point with the program's arguments
//! untouched. `verify` then names the calls and reports the run as
//! partial: a verdict never covers what the runtime did not see.
//!
//! The list is the installed header's unmodelled functions, and those the
//! table does not know (a newer MPI's: not modelled either), which the
//! build script writes (`build.rs`), so the library never refers to a
//! function its MPI lacks. A pass-through needs no signature: it saves the
//! six argument registers, records, restores them and jumps, so the stack
//! arguments and the return address are the program's. No MPI function
//! takes a floating-point or variadic argument, so the vector registers
//! and `al`, which the recorder may change, carry nothing. x86-64 only,
//! as the call-site trampolines; elsewhere the calls go straight to MPI,
//! unrecorded.

// Test builds do not export the pass-throughs (as the other exports), so
// nothing there calls them.
#![cfg_attr(test, allow(dead_code))]

use crate::record;
use crate::seen::Seen;
use mbh_trace::op::{call_name, flags};
use mbh_trace::rank_trace::RawOp;
use mbh_trace::OpKind;
use std::sync::atomic::Ordering;

/// (function position + 1) << 32 | site, of each pair recorded.
static SEEN: Seen<1024> = Seen::new();

/// Records that the program called the unmodelled function at position
/// `index` of [`mbh_trace::support::calls`] (past it: of the build
/// script's `UNKNOWN`), returning to `caller`. Called by the pass-throughs
/// with the program's argument registers saved; never unwinds. Nothing is
/// recorded outside tracing, nor for a call made while a wrapper holds the
/// runtime's state (MPI calling itself inside a wrapper's call, or a
/// second thread: holding the state keeps the trace to one writer).
pub extern "C" fn note(index: usize, caller: usize) {
    if !record::recording() {
        return;
    }
    let _ = std::panic::catch_unwind(|| {
        crate::state::try_with(|_| record_call(index, caller));
    });
}

/// Writes the [`OpKind::NotModelled`] record of the call, unless this rank
/// wrote one for the function and site before.
fn record_call(index: usize, caller: usize) {
    let known = mbh_trace::support::known();
    let Some(name) = mbh_trace::support::name_at(index)
        .or_else(|| UNKNOWN.get(index.checked_sub(known)?).copied())
    else {
        return;
    };
    crate::callsite::CALLER.store(caller, Ordering::Relaxed);
    crate::callsite::label(name);
    let site = record::site();
    if SEEN.seen_before(((index as u64 + 1) << 32) | u64::from(site)) {
        return;
    }
    let [comm, request, aux] = call_name::encode(name);
    record::append(|| RawOp {
        kind: OpKind::NotModelled as u16,
        flags: flags::RETURNED,
        site,
        count: if index < known {
            i32::try_from(index).unwrap_or(-1)
        } else {
            -1
        },
        comm,
        request,
        aux,
        ..RawOp::default()
    });
}

/// Defines the pass-through export of each `index name => pmpi` given
/// (see the module's doc).
macro_rules! pass_through {
    ($( $index:literal $name:ident => $pmpi:ident; )*) => {
        /// The MPI library's entry points the pass-throughs jump to.
        #[allow(clashing_extern_declarations, dead_code)]
        mod pmpi {
            unsafe extern "C" {
                $( pub(super) fn $pmpi(); )*
            }
        }

        /// The functions passed through, as the build script listed them.
        #[cfg(test)]
        pub(crate) const PASSED_THROUGH: &[&str] = &[$( stringify!($name), )*];

        $(
            #[doc = concat!("`", stringify!($name), "`: passed to MPI unmodelled; the call is recorded.")]
            ///
            /// # Safety
            ///
            /// As for the MPI function of the same name.
            #[cfg(target_arch = "x86_64")]
            #[cfg_attr(not(test), unsafe(no_mangle))]
            #[allow(non_snake_case)] // the MPI name
            #[unsafe(naked)]
            pub unsafe extern "C" fn $name() {
                // At entry rsp = 8 mod 16; six pushes and 8 bytes align it
                // for the call. `[rsp + 56]` is then the return address.
                core::arch::naked_asm!(
                    "push rdi",
                    "push rsi",
                    "push rdx",
                    "push rcx",
                    "push r8",
                    "push r9",
                    "sub rsp, 8",
                    "mov edi, {index}",
                    "mov rsi, qword ptr [rsp + 56]",
                    "call {note}",
                    "add rsp, 8",
                    "pop r9",
                    "pop r8",
                    "pop rcx",
                    "pop rdx",
                    "pop rsi",
                    "pop rdi",
                    "jmp {target}@PLT",
                    index = const $index,
                    note = sym note,
                    target = sym pmpi::$pmpi,
                )
            }
        )*
    };
}

include!(concat!(env!("OUT_DIR"), "/not_modelled.rs"));
