//! How a rank ends: fatal signals and `exit`, written into the trace header.
//!
//! Installed by [`install`] once tracing starts:
//!
//! * handlers for `SIGSEGV`, `SIGBUS`, `SIGFPE`, `SIGILL` and `SIGABRT`
//!   (`SA_SIGINFO | SA_ONSTACK`, on an alternate stack so a stack overflow
//!   is caught too) record the signal, the faulting address and the
//!   program counters, then put back the action that was there before
//!   (usually the default; MPICH over UCX installs its own for the faults)
//!   and let the signal happen again: a fault by returning, so the
//!   instruction faults again with the kernel's own `siginfo`, a sent
//!   signal (`abort`, `kill`) by raising it. The process then dies (or
//!   not) exactly as it would have without the runtime;
//! * a glibc `on_exit` handler records the exit status (with return
//!   addresses when it is nonzero, so the CLI can point at the `exit` call).
//!
//! When the `mbhybrid` that launched the job asks for it
//! ([`ENV_HOLD_FAILED`]), a rank that fails (a fatal signal, an exit
//! without `MPI_Finalize`, `MPI_Abort` through [`wait_to_be_released`])
//! waits after recording its end and before it dies, until `verify`'s
//! deadlock monitor sees every other rank blocked or ended and releases
//! it. The launcher kills the whole job when one rank dies; without the
//! wait, a rank slow to reach a send that does not need the failed rank
//! would be killed before the send was recorded, and the search would
//! never try that sender.
//!
//! Both record only in the process that started tracing: a child the rank
//! `fork`s shares the trace's mapping, and its end is not the rank's.
//!
//! Handlers are async-signal-safe: no allocation, no locks, no panics; they
//! only store header words through a transient [`TraceWriter`].
//!
//! [`TraceWriter`]: mbh_trace::rank_trace::TraceWriter

use crate::record::TRACE;
use mbh_trace::layout::ENV_HOLD_FAILED;
use mbh_trace::rank_trace::{TraceWriter, MAX_FRAMES};
use std::os::raw::{c_int, c_void};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::OnceLock;

/// The signals whose death the trace records.
const SIGNALS: [c_int; 5] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGILL,
    libc::SIGABRT,
];

/// The actions in place before [`install`], by position in [`SIGNALS`].
static PREVIOUS: OnceLock<[libc::sigaction; SIGNALS.len()]> = OnceLock::new();

/// Bytes of the alternate signal stack (the unwinder needs room).
const ALT_STACK_SIZE: usize = 256 * 1024;

/// The process whose trace this is: a child made by `fork` shares the
/// trace's mapping, and its exit or crash must not be written as the
/// rank's.
static OWNER: AtomicI32 = AtomicI32::new(0);

/// Whether this process is the rank itself, not a forked child of it
/// (`getpid` is async-signal-safe).
fn is_owner() -> bool {
    // SAFETY: getpid has no preconditions.
    OWNER.load(Ordering::Relaxed) == unsafe { libc::getpid() }
}

/// Whether a failed rank waits to be released ([`ENV_HOLD_FAILED`]), read
/// by [`install`]: a signal handler may not read the environment.
static HOLD_FAILED: AtomicBool = AtomicBool::new(false);

/// The longest a failed rank waits when nobody releases it. `verify`
/// releases it within its own, shorter limit; this only bounds a wait
/// whose releaser is gone (the watchdog ends the rank then anyway).
const HOLD_LIMIT_SECONDS: i64 = 30;

/// Return addresses gathered before skipping the handler's own frames.
const RAW_FRAMES: usize = MAX_FRAMES + 16;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod glibc {
    use std::os::raw::{c_int, c_void};

    unsafe extern "C" {
        /// glibc's `backtrace(3)`.
        pub fn backtrace(buffer: *mut *mut c_void, size: c_int) -> c_int;
        /// glibc's `on_exit(3)`.
        pub fn on_exit(function: extern "C" fn(c_int, *mut c_void), arg: *mut c_void) -> c_int;
    }
}

/// Fills `buffer` with return addresses, innermost first; returns how many.
fn backtrace(buffer: &mut [*mut c_void]) -> usize {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let size = c_int::try_from(buffer.len()).unwrap_or(c_int::MAX);
        // SAFETY: `buffer` is valid for `size` pointers. After the first
        // call (made by `install`, which loads libgcc's unwinder) this does
        // not allocate and is usable in a signal handler.
        let n = unsafe { glibc::backtrace(buffer.as_mut_ptr(), size) };
        usize::try_from(n).unwrap_or(0).min(buffer.len())
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        let _ = buffer;
        0
    }
}

/// Installs the signal handlers and the exit handler. Call once, after the
/// trace file exists (so after `PMPI_Init`, whose own handlers are kept and
/// chained to). Signals the process ignores stay ignored.
pub fn install() {
    // SAFETY: getpid has no preconditions.
    OWNER.store(unsafe { libc::getpid() }, Ordering::Relaxed);
    HOLD_FAILED.store(
        std::env::var_os(ENV_HOLD_FAILED).is_some_and(|v| v == "1"),
        Ordering::Relaxed,
    );
    // Warm up: the first call of backtrace() loads libgcc_s and allocates.
    let mut warm = [ptr::null_mut(); 4];
    let _ = backtrace(&mut warm);
    install_alt_stack();
    // SAFETY: a zeroed sigaction is a valid value (SIG_DFL, empty mask).
    let mut previous: [libc::sigaction; SIGNALS.len()] = unsafe { std::mem::zeroed() };
    for (sig, old) in SIGNALS.into_iter().zip(previous.iter_mut()) {
        // SAFETY: querying only, into a valid out-parameter.
        if unsafe { libc::sigaction(sig, ptr::null(), old) } != 0 {
            old.sa_sigaction = libc::SIG_DFL;
        }
    }
    // The handlers read this, so it is set before any is installed.
    if PREVIOUS.set(previous).is_err() {
        return; // installed already
    }
    for (sig, old) in SIGNALS.into_iter().zip(previous.iter()) {
        if old.sa_sigaction != libc::SIG_IGN {
            install_handler(sig);
        }
    }
    install_exit_handler();
}

fn install_alt_stack() {
    // SAFETY: a zeroed stack_t is a valid out-parameter.
    let mut current: libc::stack_t = unsafe { std::mem::zeroed() };
    // SAFETY: querying only.
    if unsafe { libc::sigaltstack(ptr::null(), &mut current) } != 0 {
        return;
    }
    if current.ss_flags & libc::SS_DISABLE == 0 {
        return; // the process has an alternate stack already
    }
    // SAFETY: a fresh anonymous mapping, never freed (the handlers may run
    // until the process ends).
    let stack = unsafe {
        libc::mmap(
            ptr::null_mut(),
            ALT_STACK_SIZE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if stack == libc::MAP_FAILED {
        return;
    }
    let new = libc::stack_t {
        ss_sp: stack,
        ss_flags: 0,
        ss_size: ALT_STACK_SIZE,
    };
    // SAFETY: `new` describes the mapping above, which lives forever.
    unsafe { libc::sigaltstack(&new, ptr::null_mut()) };
}

fn install_handler(sig: c_int) {
    // SAFETY: a zeroed sigaction is valid; every field used is set below.
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction =
        on_signal as extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void) as libc::sighandler_t;
    action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
    // SAFETY: `action.sa_mask` is a valid sigset_t to initialise.
    unsafe { libc::sigemptyset(&mut action.sa_mask) };
    // SAFETY: installs a handler with the signature SA_SIGINFO expects.
    unsafe { libc::sigaction(sig, &action, ptr::null_mut()) };
}

fn install_exit_handler() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: registers a function with the signature on_exit expects; its
    // argument is unused.
    unsafe {
        glibc::on_exit(on_exit, ptr::null_mut());
    }
}

/// The instruction pointer the signal interrupted, from the ucontext.
fn interrupted_ip(context: *mut c_void) -> Option<u64> {
    if context.is_null() {
        return None;
    }
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    {
        let context: *const libc::ucontext_t = context.cast();
        // SAFETY: the kernel passes a valid ucontext_t to SA_SIGINFO
        // handlers.
        let ip = unsafe { (*context).uc_mcontext.gregs[libc::REG_RIP as usize] };
        Some(ip as u64)
    }
    #[cfg(all(target_os = "linux", target_arch = "aarch64"))]
    {
        let context: *const libc::ucontext_t = context.cast();
        // SAFETY: as above.
        Some(unsafe { (*context).uc_mcontext.pc })
    }
    #[cfg(not(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    )))]
    {
        None
    }
}

/// Whether the kernel raised `sig` for a faulting instruction (which then
/// faults again when the handler returns), rather than someone sending it.
fn is_fault(sig: c_int, info: *const libc::siginfo_t) -> bool {
    if info.is_null() {
        return false;
    }
    // SAFETY: the kernel passes a valid siginfo_t to SA_SIGINFO handlers.
    let code = unsafe { (*info).si_code };
    code > 0 && [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE, libc::SIGILL].contains(&sig)
}

/// The faulting data address of a `SIGSEGV`/`SIGBUS` fault.
fn fault_address(sig: c_int, info: *mut libc::siginfo_t) -> Option<u64> {
    if !(sig == libc::SIGSEGV || sig == libc::SIGBUS) || !is_fault(sig, info) {
        return None;
    }
    // SAFETY: non-null (is_fault), and si_addr is the valid union member
    // of a kernel-raised SIGSEGV/SIGBUS.
    Some(unsafe { (*info).si_addr() } as u64)
}

/// Writes into `out`: `ip` first when known, then the frames of `raw` that
/// lie beyond it (the handler's own frames and the signal trampoline
/// precede the interrupted one in a backtrace taken inside a handler).
/// When `ip` is not among them, all of `raw` follows. Returns the count.
pub fn splice_frames(ip: Option<u64>, raw: &[u64], out: &mut [u64]) -> usize {
    let mut n = 0;
    if let (Some(ip), Some(first)) = (ip, out.first_mut()) {
        *first = ip;
        n = 1;
    }
    let skip = ip
        .and_then(|ip| raw.iter().position(|&pc| pc == ip))
        .map_or(0, |at| at + 1);
    for (slot, &pc) in out.iter_mut().skip(n).zip(raw.iter().skip(skip)) {
        *slot = pc;
        n += 1;
    }
    n
}

/// Program counters of the current stack, after `ip` if given.
fn frames(ip: Option<u64>, out: &mut [u64; MAX_FRAMES]) -> usize {
    let mut raw = [ptr::null_mut::<c_void>(); RAW_FRAMES];
    let got = backtrace(&mut raw);
    let mut pcs = [0u64; RAW_FRAMES];
    for (pc, &p) in pcs.iter_mut().zip(raw.iter().take(got)) {
        *pc = p as u64;
    }
    splice_frames(ip, pcs.get(..got).unwrap_or(&[]), out)
}

/// Waits, when the launching `mbhybrid` asked for it, until it releases
/// this failed rank (see the module doc). Call after the rank's end is
/// recorded. Async-signal-safe: a flag in the trace header, `nanosleep` and
/// `clock_gettime`.
pub fn wait_to_be_released(writer: &TraceWriter) {
    if !HOLD_FAILED.load(Ordering::Relaxed) || !is_owner() {
        return;
    }
    writer.hold();
    let started = monotonic_seconds();
    let pause = libc::timespec {
        tv_sec: 0,
        tv_nsec: 2_000_000,
    };
    while writer.is_held() && monotonic_seconds() - started < HOLD_LIMIT_SECONDS {
        // SAFETY: a valid timespec; an interrupted sleep just loops.
        unsafe { libc::nanosleep(&pause, ptr::null_mut()) };
    }
}

/// Seconds on the monotonic clock (async-signal-safe).
fn monotonic_seconds() -> i64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-parameter; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    now.tv_sec
}

extern "C" fn on_signal(sig: c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
    if let Some(writer) = TRACE.writer().filter(|_| is_owner()) {
        let ip = interrupted_ip(context);
        let mut pcs = [0u64; MAX_FRAMES];
        let n = frames(ip, &mut pcs);
        let fault = fault_address(sig, info).or(ip).unwrap_or(0);
        writer.set_frames(fault, pcs.get(..n).unwrap_or(&[]));
        writer.record_signal(sig);
        wait_to_be_released(&writer);
    }
    let previous = PREVIOUS.get().and_then(|all| {
        let at = SIGNALS.iter().position(|&s| s == sig)?;
        all.get(at)
    });
    // SAFETY: sigaction and raise are async-signal-safe; `previous` is an
    // action the kernel gave us for this signal.
    unsafe {
        match previous {
            Some(old) => {
                libc::sigaction(sig, old, ptr::null_mut());
            }
            None => {
                libc::signal(sig, libc::SIG_DFL);
            }
        }
        // A fault happens again when this returns; a sent signal is raised
        // again (blocked until this handler returns).
        if !is_fault(sig, info) {
            libc::raise(sig);
        }
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" fn on_exit(status: c_int, _arg: *mut c_void) {
    let Some(writer) = TRACE.writer().filter(|_| is_owner()) else {
        return;
    };
    use mbh_trace::rank_trace::RankState;
    // MPI_Abort ends in exit() in MPICH: keep the abort.
    if matches!(
        writer.state(),
        Some(RankState::Aborted | RankState::Signaled | RankState::ToolStopped)
    ) {
        return;
    }
    let finalized = writer.state() == Some(RankState::Finalized);
    if !finalized && crate::state::active() {
        // The leak checks of `MPI_Finalize` run here too, so a rank that
        // exits without it still has its leaks reported (they read the
        // runtime's tables and write records; no MPI call).
        crate::state::try_with(|rt| rt.report_leaks());
    }
    if status != 0 || !finalized {
        let mut pcs = [0u64; MAX_FRAMES];
        let n = frames(None, &mut pcs);
        let pcs = pcs.get(..n).unwrap_or(&[]);
        // Drop this handler's own frames: the first is then in libc's exit.
        let ours = object_base(on_exit as *const c_void);
        let first = pcs
            .iter()
            .position(|&pc| ours.is_none() || object_base(pc as *const c_void) != ours)
            .unwrap_or(0);
        writer.set_frames(0, pcs.get(first..).unwrap_or(&[]));
    }
    writer.record_exit(status);
    if !finalized {
        wait_to_be_released(&writer);
    }
}

/// The load address of the object (executable or library) holding `pc`.
/// Not async-signal-safe: for the exit handler only.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn object_base(pc: *const c_void) -> Option<usize> {
    // SAFETY: a zeroed Dl_info is a valid out-parameter.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables for `pc`.
    let found = unsafe { libc::dladdr(pc, &mut info) } != 0;
    (found && !info.dli_fbase.is_null()).then_some(info.dli_fbase as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splice_skips_handler_frames() {
        let mut out = [0u64; 8];
        // handler, handler, trampoline, ip, caller, caller's caller
        let raw = [10, 11, 12, 500, 600, 700];
        let n = splice_frames(Some(500), &raw, &mut out);
        assert_eq!(&out[..n], &[500, 600, 700]);
    }

    #[test]
    fn splice_keeps_everything_when_ip_is_unknown_or_absent() {
        let mut out = [0u64; 8];
        let raw = [10, 11, 12];
        let n = splice_frames(None, &raw, &mut out);
        assert_eq!(&out[..n], &raw);
        let n = splice_frames(Some(99), &raw, &mut out);
        assert_eq!(&out[..n], &[99, 10, 11, 12]);
    }

    #[test]
    fn splice_truncates() {
        let mut out = [0u64; 3];
        let n = splice_frames(Some(1), &[1, 2, 3, 4, 5], &mut out);
        assert_eq!(&out[..n], &[1, 2, 3]);
        let n = splice_frames(Some(1), &[], &mut []);
        assert_eq!(n, 0);
    }

    #[test]
    fn backtrace_finds_this_test() {
        let mut out = [0u64; MAX_FRAMES];
        let n = frames(None, &mut out);
        assert!(n > 1, "{n} frames");
    }
}
