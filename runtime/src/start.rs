//! Starting to trace, right after `PMPI_Init`/`PMPI_Init_thread` succeeded.

use crate::consts::{comm_world, SUCCESS};
use crate::handle::HandleBits;
use crate::record::{self, TRACE};
use mbh_trace::layout::{InterleavingDir, ENV_TRACE_DIR};
use mbh_trace::op::flags;
use mbh_trace::rank_trace::RawOp;
use mbh_trace::OpKind;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::raw::{c_int, c_void};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Records a trace file has room for before it first grows (1 MiB).
pub const INITIAL_RECORDS: u64 = 16384;

static STARTED: AtomicBool = AtomicBool::new(false);

/// After a successful `MPI_Init` (`kind` `Init`) or `MPI_Init_thread`
/// (`InitThread`, with the thread levels required and provided): when
/// [`ENV_TRACE_DIR`] is set, creates this rank's trace, redirects its
/// standard error, installs the crash and exit handlers, and records the
/// call.
pub fn after_init(kind: OpKind, rc: c_int, required: c_int, provided: c_int) {
    if rc != SUCCESS || STARTED.swap(true, Ordering::AcqRel) {
        return;
    }
    record::guard(|| {
        let dir = std::env::var_os(ENV_TRACE_DIR).filter(|d| !d.is_empty())?;
        start(PathBuf::from(dir), kind, required, provided);
        Some(())
    });
}

fn start(dir: PathBuf, kind: OpKind, required: c_int, provided: c_int) {
    let Some((rank, size)) = world_rank_and_size() else {
        warn(format_args!("cannot get the rank in MPI_COMM_WORLD"));
        return;
    };
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
    writer.init_header(rank, size, std::process::id(), exe_base());
    let stderr = layout.stderr(rank);
    if let Err(error) = redirect_stderr(&stderr) {
        warn(format_args!("cannot write {}: {error}", stderr.display()));
    }
    crate::crash::install();
    record::enable();
    let (count, aux) = match kind {
        OpKind::InitThread => (required, u64::from(provided as u32)),
        _ => (0, 0),
    };
    TRACE.append(RawOp {
        kind: kind as u16,
        flags: flags::RETURNED,
        site: record::site(),
        comm: comm_world().bits(),
        count,
        aux,
        ..RawOp::default()
    });
}

/// One line on standard error: the CLI also notices the missing trace.
fn warn(what: std::fmt::Arguments<'_>) {
    let _ = writeln!(io::stderr(), "mbhybrid runtime: {what}");
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

/// The load bias of the main executable (the first object
/// `dl_iterate_phdr` reports), to symbolise recorded program counters.
fn exe_base() -> u64 {
    unsafe extern "C" fn first(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: `info` is valid during the callback.
        let addr = unsafe { (*info).dlpi_addr };
        #[allow(clippy::useless_conversion)] // Elf32_Addr on 32-bit targets
        let addr = u64::from(addr);
        // SAFETY: `data` is the `u64` passed below.
        unsafe { *data.cast::<u64>() = addr };
        1 // stop after the first object: the executable
    }
    let mut base: u64 = 0;
    // SAFETY: the callback matches the expected signature and writes only
    // to `base`, which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(first), (&raw mut base).cast()) };
    base
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exe_base_is_the_test_binarys_bias() {
        // The test binary is a PIE: its bias is where it was loaded, which
        // is at or below the address of its own code.
        let here = exe_base_is_the_test_binarys_bias as *const () as usize as u64;
        let base = exe_base();
        assert!(base <= here, "{base:#x} > {here:#x}");
    }
}
