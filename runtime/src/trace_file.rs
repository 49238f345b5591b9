//! This rank's trace file: a shared memory map that grows by doubling.
//!
//! The mapping is described by two atomics (base, length) and a file
//! descriptor, so no lock and no `static mut` is needed. A
//! [`TraceWriter`] is two words and is rebuilt from them for each use.
//!
//! Growth maps the larger file at a new address, publishes the new base and
//! then the new length, and only then unmaps the old mapping. A signal
//! handler that interrupts growth therefore sees either the old mapping or
//! the new base with the old (smaller) length: both are valid. Both
//! mappings share the file's pages, so nothing written is lost.

use mbh_trace::rank_trace::{RawOp, TraceWriter, HEADER_SIZE, RECORD_SIZE};
use std::fs::OpenOptions;
use std::io;
use std::os::fd::{AsRawFd, IntoRawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicUsize, Ordering};

/// The capacity, in records, after growing a trace of `capacity` records.
pub fn next_capacity(capacity: u64) -> Option<u64> {
    capacity.max(1).checked_mul(2)
}

/// Records a mapping of `len` bytes holds.
fn capacity_of(len: usize) -> u64 {
    (len.saturating_sub(HEADER_SIZE) / RECORD_SIZE) as u64
}

/// Records faulted in at a time, a stretch ahead of the writer (2 MiB).
const POPULATE_RECORDS: u64 = 32768;

/// A trace file mapped shared into this process.
pub struct TraceFile {
    base: AtomicPtr<u8>,
    len: AtomicUsize,
    fd: AtomicI32,
    /// Growing failed once: later records are counted as lost at once
    /// instead of asking the file system again for each one.
    full: AtomicBool,
}

impl Default for TraceFile {
    fn default() -> Self {
        Self::new()
    }
}

impl TraceFile {
    /// No file yet: [`TraceFile::writer`] returns `None`.
    pub const fn new() -> Self {
        TraceFile {
            base: AtomicPtr::new(ptr::null_mut()),
            len: AtomicUsize::new(0),
            fd: AtomicI32::new(-1),
            full: AtomicBool::new(false),
        }
    }

    /// Creates (or truncates) `path` with room for `records` records and
    /// maps it. Call once, before any other use.
    pub fn create(&self, path: &Path, records: u64) -> io::Result<()> {
        if self.fd.load(Ordering::Acquire) >= 0 {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "trace already open",
            ));
        }
        let len = file_len(records)?;
        // std opens with O_CLOEXEC: children the program spawns do not
        // inherit the trace.
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o644)
            .open(path)?;
        reserve(file.as_raw_fd(), len)?;
        let base = map(file.as_raw_fd(), len)?;
        populate(base, len);
        self.fd.store(file.into_raw_fd(), Ordering::Release);
        self.publish(base, len);
        Ok(())
    }

    fn publish(&self, base: *mut u8, len: usize) {
        // Base first: a reader between the two stores pairs the new base
        // with the old, smaller length, which is safe.
        self.base.store(base, Ordering::Release);
        self.len.store(len, Ordering::Release);
    }

    /// A writer over the current mapping, `None` before [`TraceFile::create`].
    ///
    /// Async-signal-safe. Writers are transient: the runtime's single-writer
    /// rule (one thread calls MPI; a signal handler touches only header
    /// words) is what makes building one here sound.
    #[inline]
    pub fn writer(&self) -> Option<TraceWriter> {
        let base = self.base.load(Ordering::Acquire);
        let len = self.len.load(Ordering::Acquire);
        // SAFETY: `base` is null (from_raw refuses it) or a live shared
        // mapping of at least `len` bytes, page-aligned: it is unmapped only
        // after a larger one is published, and never while a writer built
        // from it is in use on this thread (growth happens between uses).
        unsafe { TraceWriter::from_raw(base, len) }
    }

    /// Appends `op`, growing the file when it is full. `None` when the
    /// trace is not open or cannot grow: the record is dropped and counted
    /// in the header, so the trace never looks complete: a run that lost
    /// records must not be taken for one that was fully seen.
    #[inline(always)]
    pub fn append(&self, op: RawOp) -> Option<u64> {
        if let Some(index) = self.writer()?.append(op) {
            if index % POPULATE_RECORDS == 0 && index > 0 {
                self.populate_ahead(index);
            }
            return Some(index);
        }
        self.append_growing(op)
    }

    /// [`TraceFile::append`] when the mapping is full.
    #[cold]
    #[inline(never)]
    fn append_growing(&self, op: RawOp) -> Option<u64> {
        if self.full.load(Ordering::Relaxed) || self.grow().is_err() {
            self.full.store(true, Ordering::Relaxed);
            // The mapping published last (grow unmaps only after it
            // publishes a larger one).
            self.writer()?.record_lost();
            return None;
        }
        self.writer()?.append(op)
    }

    /// When the writer reaches record `index`, the first of a stretch of
    /// [`POPULATE_RECORDS`]: faults in the next stretch (if mapped), so
    /// the writer never meets a page that is not there yet, and a run never
    /// pays for zeroing pages it does not reach. Faulting in all of the new
    /// half at each doubling did: up to twice the pages the records filled,
    /// and zeroing pages was most of the runtime's own cost per message
    /// (`BENCHMARKS.md`, "Where a message's time goes").
    #[cold]
    fn populate_ahead(&self, index: u64) {
        let base = self.base.load(Ordering::Acquire);
        let len = self.len.load(Ordering::Acquire);
        let stretch = POPULATE_RECORDS as usize * RECORD_SIZE;
        let Some(start) = usize::try_from(index + POPULATE_RECORDS)
            .ok()
            .and_then(|next| next.checked_mul(RECORD_SIZE))
            .and_then(|bytes| bytes.checked_add(HEADER_SIZE))
            .filter(|&start| start < len && !base.is_null())
        else {
            return;
        };
        // SAFETY: `start` < `len`: inside the live mapping.
        populate(unsafe { base.add(start) }, stretch.min(len - start));
    }

    /// Doubles the file and remaps it.
    #[cold]
    pub fn grow(&self) -> io::Result<()> {
        let fd = self.fd.load(Ordering::Acquire);
        if fd < 0 {
            return Err(io::Error::new(io::ErrorKind::NotFound, "no trace file"));
        }
        let old_base = self.base.load(Ordering::Acquire);
        let old_len = self.len.load(Ordering::Acquire);
        let records = next_capacity(capacity_of(old_len))
            .ok_or_else(|| io::Error::new(io::ErrorKind::OutOfMemory, "trace too large"))?;
        let len = file_len(records)?;
        reserve(fd, len)?;
        let base = map(fd, len)?;
        // Only the first stretch: `append` faults in the rest a stretch
        // ahead of the writer (`populate_ahead`).
        let first = (len - old_len).min(POPULATE_RECORDS as usize * RECORD_SIZE);
        // SAFETY: `old_len` < `len`: inside the new mapping.
        populate(unsafe { base.add(old_len) }, first);
        self.publish(base, len);
        if !old_base.is_null() {
            // SAFETY: the old mapping was created by `map` with `old_len`
            // bytes; no writer over it is alive (writers are transient and
            // this runs between uses) and the new one is already published.
            unsafe { libc::munmap(old_base.cast(), old_len) };
        }
        Ok(())
    }

    /// Unmaps and closes (tests only: the runtime keeps its trace mapped
    /// until the process ends, for the exit and signal handlers).
    #[cfg(test)]
    pub fn close(&self) {
        let base = self.base.swap(ptr::null_mut(), Ordering::AcqRel);
        let len = self.len.swap(0, Ordering::AcqRel);
        if !base.is_null() {
            // SAFETY: the mapping was created by `map` with `len` bytes and
            // is no longer published.
            unsafe { libc::munmap(base.cast(), len) };
        }
        let fd = self.fd.swap(-1, Ordering::AcqRel);
        if fd >= 0 {
            // SAFETY: `fd` was owned by `self` and is no longer published.
            unsafe { libc::close(fd) };
        }
    }
}

fn file_len(records: u64) -> io::Result<usize> {
    usize::try_from(TraceWriter::file_len(records))
        .map_err(|_| io::Error::new(io::ErrorKind::OutOfMemory, "trace too large"))
}

/// Faults in `len` bytes of a fresh mapping for writing, now rather than
/// one page at a time on the hot path: each first write to a page of a
/// shared file mapping is a page fault that zeroes the page and makes the
/// file system allocate its block, about a microsecond each, once every
/// 20-odd messages. Best effort: kernels before 5.14 refuse the advice and
/// the pages fault in as before.
fn populate(base: *mut u8, len: usize) {
    // SAFETY: advice on a range of a live mapping `map` made; no memory is
    // changed (the pages are the file's zeroes either way).
    unsafe { libc::madvise(base.cast(), len, libc::MADV_POPULATE_WRITE) };
}

/// Makes the file `fd` `len` bytes long with its blocks allocated, so a
/// full file system is an error here (the record is then counted as lost)
/// and never a `SIGBUS` when the runtime writes into a page of a sparse
/// file the disk has no room for, which would kill the rank. File systems
/// without `fallocate` get a plain `ftruncate`.
fn reserve(fd: i32, len: usize) -> io::Result<()> {
    let len = libc::off_t::try_from(len)
        .map_err(|_| io::Error::new(io::ErrorKind::OutOfMemory, "trace too large"))?;
    // SAFETY: `fd` is an open, writable descriptor of a regular file.
    match unsafe { libc::posix_fallocate(fd, 0, len) } {
        0 => Ok(()),
        libc::EOPNOTSUPP | libc::EINVAL => {
            // SAFETY: as above.
            if unsafe { libc::ftruncate(fd, len) } != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        }
        err => Err(io::Error::from_raw_os_error(err)),
    }
}

/// Maps `len` bytes of `fd`, shared, read-write.
fn map(fd: i32, len: usize) -> io::Result<*mut u8> {
    // SAFETY: a fresh mapping at an address the kernel picks; `fd` is open
    // read-write and at least `len` bytes long.
    let base = unsafe {
        libc::mmap(
            ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(base.cast())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mbh_trace::rank_trace::RankState;
    use mbh_trace::{OpKind, RankTrace};

    #[test]
    fn capacity_doubles() {
        assert_eq!(next_capacity(0), Some(2));
        assert_eq!(next_capacity(16384), Some(32768));
        assert_eq!(next_capacity(u64::MAX), None);
    }

    #[test]
    fn no_file_no_writer() {
        let t = TraceFile::new();
        assert!(t.writer().is_none());
        assert!(t.append(RawOp::default()).is_none());
        assert!(t.grow().is_err());
    }

    #[test]
    fn a_record_that_cannot_be_written_is_counted_as_lost() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rank-0.trace");
        let t = TraceFile::new();
        t.create(&path, 2).unwrap();
        t.writer().unwrap().init_header(0, 1, 99, 0x1000);
        // The file can no longer grow (as on a full disk).
        let fd = t.fd.swap(-1, Ordering::AcqRel);
        let op = RawOp {
            kind: OpKind::Barrier as u16,
            ..Default::default()
        };
        assert_eq!(t.append(op), Some(0));
        assert_eq!(t.append(op), Some(1));
        assert_eq!(t.append(op), None);
        assert_eq!(t.append(op), None);
        let trace = RankTrace::read(&path).unwrap();
        assert_eq!(trace.ops.len(), 2);
        assert_eq!(trace.end.lost_records, 2);
        t.fd.store(fd, Ordering::Release);
        t.close();
    }

    #[test]
    fn records_across_populated_stretches_all_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rank-0.trace");
        let t = TraceFile::new();
        t.create(&path, 16384).unwrap();
        t.writer().unwrap().init_header(0, 1, 99, 0x1000);
        // Past three doublings and several stretches faulted in ahead.
        let n = 3 * POPULATE_RECORDS as u32 + 5;
        for i in 0..n {
            let op = RawOp {
                kind: OpKind::Send as u16,
                site: i,
                ..Default::default()
            };
            assert_eq!(t.append(op), Some(u64::from(i)));
        }
        t.close();
        let trace = RankTrace::read(&path).unwrap();
        assert_eq!(trace.ops.len(), n as usize);
        assert!(trace
            .ops
            .iter()
            .enumerate()
            .all(|(i, op)| op.site == i as u32));
    }

    #[test]
    fn grows_and_keeps_everything() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rank-0.trace");
        let t = TraceFile::new();
        t.create(&path, 2).unwrap();
        t.writer().unwrap().init_header(0, 1, 99, 0x1000);
        for i in 0..11u32 {
            let op = RawOp {
                kind: OpKind::Send as u16,
                site: i,
                peer: 1,
                ..Default::default()
            };
            assert_eq!(t.append(op), Some(u64::from(i)));
        }
        // 2 -> 4 -> 8 -> 16 records.
        assert_eq!(t.writer().unwrap().capacity(), 16);
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            TraceWriter::file_len(16)
        );
        t.writer().unwrap().set_blocking(Some(10));
        assert!(t.create(&path, 2).is_err(), "second create refused");
        t.close();

        let trace = RankTrace::read(&path).unwrap();
        assert_eq!((trace.rank, trace.size, trace.pid), (0, 1, 99));
        assert_eq!(trace.end.state, RankState::Running);
        assert_eq!(trace.end.exe_base, 0x1000);
        assert_eq!(trace.blocking, Some(10));
        let sites: Vec<u32> = trace.ops.iter().map(|op| op.site).collect();
        assert_eq!(sites, (0..11).collect::<Vec<_>>());
        assert!(trace
            .ops
            .iter()
            .enumerate()
            .all(|(i, op)| op.index == i as u64));
    }
}
