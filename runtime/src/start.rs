//! Starting the runtime, right after `PMPI_Init`/`PMPI_Init_thread`
//! succeeded.
//!
//! 1. Every rank says whether it has [`ENV_TRACE_DIR`]; the runtime starts
//!    only when all do (one all-reduce on world, made in every process
//!    linked with the runtime, so ranks never disagree about piggybacking),
//!    and world's two duplicates the protocol runs on are made with it
//!    (start_colls.rs).
//! 2. The run's configuration is read from `runtime.json` in that
//!    directory, if present (defaults otherwise: Lamport clocks, the MPI
//!    library's buffering, a free run). A file that does not parse stops
//!    the job: it is a bug of the tool that wrote it.
//! 3. The rank's trace is created, its standard error redirected, the crash
//!    and exit handlers installed, and `MPI_Init` recorded.
//! 4. The protocol's state is made ([`Rt::start`]) and the wrappers turn on.

use crate::consts::{comm_world, SUCCESS};
use crate::engine::Rt;
use crate::handle::HandleBits;
use crate::record::{self, TRACE};
use crate::state;
use mbh_trace::config::RuntimeConfig;
use mbh_trace::layout::{InterleavingDir, ENV_TRACE_DIR};
use mbh_trace::op::flags;
use mbh_trace::rank_trace::RawOp;
use mbh_trace::OpKind;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::raw::c_int;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Records a trace file has room for before it first grows (128 KiB).
/// Every run of a verification creates, faults in, reads back and deletes
/// one per rank, most of them a few hundred records long: at 1 MiB,
/// creating one took a millisecond and deleting it up to several on ext4.
/// A trace that needs more grows by doubling.
pub const INITIAL_RECORDS: u64 = 2048;

/// Whether `MPI_Init` decided whether to trace (so before it, calls are
/// labelled for the record `MPI_Init` writes; see `callsite::label`).
#[inline(always)]
pub fn started() -> bool {
    crate::lifecycle::started()
}

/// After a successful `MPI_Init` (`kind` `Init`) or `MPI_Init_thread`
/// (`InitThread`, with the thread levels required and provided): starts the
/// runtime when every rank has [`ENV_TRACE_DIR`] (see the module docs).
pub fn after_init(kind: OpKind, rc: c_int, required: c_int, provided: c_int) {
    if rc == SUCCESS {
        crate::before_init::initialized();
        let level = match kind {
            OpKind::InitThread => provided,
            // SAFETY: initialised from `mpi.h` before main.
            _ => unsafe { mpi_sys::RSMPI_THREAD_SINGLE },
        };
        crate::thread_level::set(level);
    }
    if rc != SUCCESS || crate::lifecycle::start() {
        return;
    }
    crate::watchdog::start();
    let dir = std::env::var_os(ENV_TRACE_DIR)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from);
    let agreed = match crate::start_colls::agree(dir.is_some()) {
        Ok(agreed) => agreed,
        Err(message) => state::fatal(format_args!("cannot start the runtime: {message}")),
    };
    let (Some(dir), Some(shadows)) = (dir, agreed.shadows) else {
        if agreed.any {
            warn(format_args!(
                "{ENV_TRACE_DIR} is not set on every rank: the runtime stays off"
            ));
        }
        return;
    };
    let config = match load_config(&dir) {
        Ok(config) => config,
        Err(message) => state::fatal(format_args!("{message}")),
    };
    crate::buffer_check::set_rooms(config.buffer_rooms.clone());
    crate::access::set_watching(config.watch_buffers);
    let Some((rank, size)) = world_rank_and_size() else {
        state::fatal(format_args!("cannot get the rank in MPI_COMM_WORLD"));
    };
    record::guard(|| {
        // `mbhybrid run` leaves the program's standard error to it.
        let own_stderr = config.deterministic.is_none_or(|d| !d.own_stderr);
        start(dir, rank, size, kind, required, provided, own_stderr);
        Some(())
    });
    match Rt::start(rank, size, config, shadows) {
        Ok(rt) => {
            state::install(rt);
            crate::checks::redirect_errors();
        }
        Err(message) => state::fatal(format_args!("cannot start the runtime: {message}")),
    }
}

/// The run's configuration from `dir`, the default when the file is
/// absent.
fn load_config(dir: &Path) -> Result<RuntimeConfig, String> {
    let path = RuntimeConfig::path(dir);
    match std::fs::read_to_string(&path) {
        Ok(text) => RuntimeConfig::parse(&text).map_err(|e| {
            format!(
                "{} is malformed ({e}); it is written by mbhybrid itself, so this is a bug in mbhybrid",
                path.display()
            )
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(RuntimeConfig::default()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// The interleaving directory, once the runtime started.
static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Writes this rank's deterministic-mode statistics into the run's
/// directory (at `MPI_Finalize`: not a hot path).
pub fn write_decisions(rank: c_int, stats: &mbh_trace::determinism::DecisionStats) {
    let Some(dir) = DIR.get() else {
        return;
    };
    let path = mbh_trace::determinism::DecisionStats::path(dir, rank);
    let written = std::fs::write(&path, stats.to_json());
    if let Err(error) = written {
        warn(format_args!("cannot write {}: {error}", path.display()));
    }
}

fn start(
    dir: PathBuf,
    rank: c_int,
    size: c_int,
    kind: OpKind,
    required: c_int,
    provided: c_int,
    own_stderr: bool,
) {
    let _ = DIR.set(dir.clone());
    let layout = InterleavingDir { path: dir };
    let path = layout.trace(rank);
    let created =
        std::fs::create_dir_all(&layout.path).and_then(|()| TRACE.create(&path, INITIAL_RECORDS));
    if let Err(error) = created {
        warn(format_args!("cannot create {}: {error}", path.display()));
        return;
    }
    let Some(mut writer) = TRACE.writer() else {
        return;
    };
    writer.init_header(
        rank,
        size,
        std::process::id(),
        crate::callsite::image().base,
    );
    let stderr = layout.stderr(rank);
    let redirected = if own_stderr {
        redirect_stderr(&stderr)
    } else {
        Ok(())
    };
    if let Err(error) = redirected {
        warn(format_args!("cannot write {}: {error}", stderr.display()));
    }
    crate::crash::install();
    crate::fault::arm(rank);
    record::enable();
    let (count, aux) = match kind {
        OpKind::InitThread => (required, u64::from(provided as u32)),
        _ => (0, 0),
    };
    // `MPI_Init` was labelled before tracing began: its site is announced
    // now.
    let site = record::site();
    crate::callsite::announce(site, kind.mpi_name());
    TRACE.append(RawOp {
        kind: kind as u16,
        flags: flags::RETURNED,
        site,
        comm: comm_world().bits(),
        count,
        aux,
        ..RawOp::default()
    });
}

/// One line on standard error: the CLI also notices the missing trace.
pub(crate) fn warn(what: std::fmt::Arguments<'_>) {
    // One `write` per line: under Open MPI every rank's standard error
    // reaches the launcher through one pipe, and a line written in pieces
    // interleaves with the other ranks' (a write of at most PIPE_BUF bytes
    // to a pipe is atomic). Formatted on the stack, cut at its size.
    let mut line = [0u8; 512];
    let mut cursor = io::Cursor::new(&mut line[..]);
    let _ = writeln!(cursor, "mbhybrid runtime: {what}");
    let written = cursor.position() as usize;
    if written == line.len() {
        line[written - 1] = b'\n';
    }
    let _ = io::stderr().write_all(&line[..written]);
}

fn world_rank_and_size() -> Option<(c_int, c_int)> {
    let (mut rank, mut size) = (0, 0);
    // SAFETY: MPI is initialised; the out-parameters are valid ints.
    let ok = unsafe {
        mpi_sys::PMPI_Comm_rank(comm_world(), &mut rank) == SUCCESS
            && mpi_sys::PMPI_Comm_size(comm_world(), &mut size) == SUCCESS
    };
    ok.then_some((rank, size))
}

/// Sends this process's standard error (fd 2) to `path`, appending.
fn redirect_stderr(path: &Path) -> io::Result<()> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o644)
        .open(path)?;
    // SAFETY: both descriptors are open; dup2 replaces fd 2 atomically and
    // the new fd 2 does not inherit O_CLOEXEC. `file` closes its own fd.
    if unsafe { libc::dup2(file.as_raw_fd(), libc::STDERR_FILENO) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
