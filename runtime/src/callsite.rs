//! Sites for calls the program did not label: a program built by plain
//! `mpicc` (the runtime preloaded), or a call of a built program the
//! instrumentation could not see (through a function pointer).
//!
//! Each export is entered through a trampoline (`exports!` in `lib.rs`)
//! that stores its return address, the instruction after the program's
//! call, in [`CALLER`] and jumps to the export's body with every register
//! and the stack as the program left them. When [`crate::mbhybrid_site`]
//! holds no id the program stored, the body's first step, [`label`], makes
//! one from that address: its offset in the executable, top bit set
//! ([`mbh_trace::site::site_from_offset`]). The offset is the same on every
//! rank and in every run, so these ids compare across ranks and
//! interleavings as `build`'s do, and need no table in the process: the
//! CLI finds the line through the executable's debug information.
//!
//! What the address cannot tell is which MPI function was called: the
//! first time a rank calls from an address, an `OpKind::CallSite` record
//! names it. A fixed table of the ids seen ([`Seen`], open addressing, no
//! allocation) keeps that to once per address; where its probe window is
//! full the record is written again (harmless, the CLI takes any).
//!
//! Cost per call: the trampoline's load, store and jump, and in `label` a
//! few loads and compares, plus one probe of the table when the call is
//! not from the same place as the one before (BENCHMARKS.md, "Call sites
//! from return addresses", has the counts).
//!
//! # Limitations
//!
//! * x86-64 only: elsewhere exports have no trampoline and these calls keep
//!   site 0 ("unknown").
//! * A return address outside the executable (an MPI call from a shared
//!   library) or more than 2 GiB into it gets no id.
//! * A call in tail position (`return MPI_Send(...)` compiled to a jump)
//!   returns to its caller's caller: the site is that caller's call.

use crate::record;
use mbh_trace::op::{call_name, flags};
use mbh_trace::rank_trace::RawOp;
use mbh_trace::site::{offset_of_site, site_from_offset};
use mbh_trace::OpKind;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The return address of the export being entered, stored by its
/// trampoline (0: none, as on targets without trampolines). Read by
/// [`label`] before anything else can make another call.
pub static CALLER: AtomicUsize = AtomicUsize::new(0);

/// Entries of the table of sites seen (16 KiB).
pub const SEEN_SLOTS: usize = 4096;

/// Sites this rank has announced with a `CallSite` record.
static SEEN: Seen<SEEN_SLOTS> = Seen::new();

/// The site announced or found in [`SEEN`] last: a loop calling from one
/// place skips the table.
static LAST: AtomicU32 = AtomicU32::new(0);

/// Where the executable lies in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Image {
    /// Load bias (`dlpi_addr`: 0 for a non-PIE executable).
    pub base: u64,
    /// One past the highest offset its loadable segments cover.
    pub end: u64,
}

impl Image {
    /// The site id of a call that returns to `address`, 0 when the address
    /// is not in the executable or its offset does not fit in an id.
    pub fn site_of(&self, address: u64) -> u32 {
        match address.checked_sub(self.base) {
            Some(offset) if offset < self.end => site_from_offset(offset).unwrap_or(0),
            _ => 0,
        }
    }
}

static IMAGE: OnceLock<Image> = OnceLock::new();

/// The executable's image (the first object `dl_iterate_phdr` reports),
/// looked up once.
pub fn image() -> Image {
    *IMAGE.get_or_init(find_image)
}

fn find_image() -> Image {
    unsafe extern "C" fn first(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: `info` is valid during the callback, `dlpi_phdr` points
        // to `dlpi_phnum` program headers.
        let (base, headers) = unsafe {
            let info = &*info;
            let headers: &[libc::Elf64_Phdr] = if info.dlpi_phdr.is_null() {
                &[]
            } else {
                std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum))
            };
            (info.dlpi_addr, headers)
        };
        let end = headers
            .iter()
            .filter(|h| h.p_type == libc::PT_LOAD)
            .map(|h| h.p_vaddr.saturating_add(h.p_memsz))
            .max()
            .unwrap_or(0);
        // SAFETY: `data` is the `Image` passed below.
        unsafe { *data.cast::<Image>() = Image { base, end } };
        1 // stop after the first object: the executable
    }
    let mut image = Image { base: 0, end: 0 };
    // SAFETY: the callback matches the expected signature and writes only
    // to `image`, which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(first), (&raw mut image).cast()) };
    image
}

/// Labels the call being entered, export `name`, when the program did not:
/// stores the id made from its return address in [`crate::mbhybrid_site`]
/// (every record of the call takes it from there) and announces a new one.
/// Before `MPI_Init` started the runtime the id is stored (`MPI_Init`'s own
/// record takes it, [`announce`]d then); after a start without tracing
/// nothing is done.
#[inline(always)]
pub fn label(name: &'static str) {
    // An id the program stored is kept; one with the top bit set is a
    // label of ours a call that read no site left behind.
    let stored = crate::mbhybrid_site.load(Ordering::Relaxed);
    if stored != 0 && offset_of_site(stored).is_none() {
        return;
    }
    let recording = record::recording();
    if !recording && crate::start::started() {
        return;
    }
    let id = image().site_of(CALLER.load(Ordering::Relaxed) as u64);
    crate::mbhybrid_site.store(id, Ordering::Relaxed);
    if recording && id != LAST.load(Ordering::Relaxed) && !SEEN.at_home(id) {
        announce(id, name);
    }
}

/// The site of the call being entered, as [`label`] would make it, with
/// nothing stored or recorded (for a call that must not touch the trace:
/// another thread owns it).
#[cold]
pub fn site_here() -> u32 {
    let stored = crate::mbhybrid_site.load(Ordering::Relaxed);
    if stored != 0 && offset_of_site(stored).is_none() {
        return stored;
    }
    image().site_of(CALLER.load(Ordering::Relaxed) as u64)
}

/// Writes the `CallSite` record of `id` (calls of `name`) unless this rank
/// wrote it before; ids of the site table need none.
pub fn announce(id: u32, name: &'static str) {
    if offset_of_site(id).is_none() {
        return;
    }
    LAST.store(id, Ordering::Relaxed);
    if !SEEN.insert(id) {
        return;
    }
    let [comm, request, aux] = call_name::encode(name);
    record::append(|| RawOp {
        kind: OpKind::CallSite as u16,
        flags: flags::RETURNED,
        site: id,
        comm,
        request,
        aux,
        ..RawOp::default()
    });
}

/// Words for messages about site `id`: `site 5`, or for an id made here
/// `offset 0x1189 of the executable`.
#[cfg_attr(not(mpi4), allow(dead_code))] // used by the MPI 4 calls' stops
pub fn describe(id: u32) -> String {
    match offset_of_site(id) {
        Some(offset) => format!("offset {offset:#x} of the executable"),
        None => format!("site {id}"),
    }
}

/// A set of nonzero site ids of fixed size: open addressing with a probe
/// window of [`Seen::WINDOW`] slots, never evicting. Slots are atomics
/// only so the table can be a plain static; one thread uses it at a time.
pub struct Seen<const N: usize> {
    slots: [AtomicU32; N],
}

impl<const N: usize> Seen<N> {
    /// Slots probed from an id's home slot.
    pub const WINDOW: usize = 16;

    /// An empty set.
    pub const fn new() -> Self {
        Seen {
            slots: [const { AtomicU32::new(0) }; N],
        }
    }

    /// The slot `id` is looked for first. Fibonacci hashing: nearby
    /// offsets spread over the table.
    #[inline(always)]
    fn home(id: u32) -> usize {
        (u64::from(id).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize % N
    }

    /// Whether `id` is in its home slot: the common case of a site seen
    /// before, answered inline (false says nothing).
    #[inline(always)]
    pub fn at_home(&self, id: u32) -> bool {
        self.slots[Self::home(id)].load(Ordering::Relaxed) == id
    }

    /// Adds `id`: true when it was not in the set, and also when the
    /// window it hashes to is full (the caller then announces it again).
    pub fn insert(&self, id: u32) -> bool {
        let home = Self::home(id);
        for step in 0..Self::WINDOW.min(N) {
            let slot = &self.slots[(home + step) % N];
            match slot.load(Ordering::Relaxed) {
                0 => {
                    slot.store(id, Ordering::Relaxed);
                    return true;
                }
                seen if seen == id => return false,
                _ => {}
            }
        }
        true
    }
}

/// Stores the return address of a call entered without a trampoline
/// (`MPI_Pcontrol`, defined in C, passes its own).
pub fn set_caller(address: *const c_void) {
    CALLER.store(address as usize, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_in_the_executable_become_offsets() {
        let pie = Image {
            base: 0x5555_5555_4000,
            end: 0x5000,
        };
        let id = pie.site_of(0x5555_5555_5189);
        assert_eq!(offset_of_site(id), Some(0x1189));
        // A shared library's address, above or below the executable.
        assert_eq!(pie.site_of(0x7fff_f7a0_1000), 0);
        assert_eq!(pie.site_of(0x1000), 0);
        assert_eq!(pie.site_of(0x5555_5555_9000), 0);
        // No trampoline: no address.
        assert_eq!(pie.site_of(0), 0);
        // Non-PIE: bias 0, the address is the offset.
        let fixed = Image {
            base: 0,
            end: 0x40_5000,
        };
        assert_eq!(offset_of_site(fixed.site_of(0x40_1136)), Some(0x40_1136));
        // An image past 2 GiB: offsets beyond have no id.
        let huge = Image {
            base: 0,
            end: 1 << 32,
        };
        assert_eq!(huge.site_of(1 << 31), 0);
    }

    #[test]
    fn the_test_binary_is_its_own_image() {
        let here = the_test_binary_is_its_own_image as *const () as usize as u64;
        let image = image();
        let id = image.site_of(here);
        assert_eq!(offset_of_site(id), Some(here - image.base));
    }

    #[test]
    fn seen_sites_are_announced_once() {
        let seen: Seen<64> = Seen::new();
        let a = site_from_offset(0x1189).unwrap();
        let b = site_from_offset(0x118e).unwrap();
        assert!(!seen.at_home(a));
        assert!(seen.insert(a));
        assert!(seen.insert(b));
        assert!(!seen.insert(a));
        assert!(!seen.insert(b));
        assert!(seen.at_home(a));
    }

    #[test]
    fn a_full_table_keeps_announcing() {
        let seen: Seen<4> = Seen::new();
        let ids: Vec<u32> = (1..=4)
            .map(|i| site_from_offset(i * 0x10).unwrap())
            .collect();
        for &id in &ids {
            assert!(seen.insert(id));
        }
        for &id in &ids {
            assert!(!seen.insert(id), "{id:#x}");
        }
        let fifth = site_from_offset(0x50).unwrap();
        assert!(seen.insert(fifth));
        assert!(seen.insert(fifth), "no room: announced every time");
    }

    #[test]
    fn descriptions_name_offsets() {
        assert_eq!(describe(5), "site 5");
        assert_eq!(
            describe(site_from_offset(0x1189).unwrap()),
            "offset 0x1189 of the executable"
        );
    }
}
