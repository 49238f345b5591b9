//! Type signatures of point-to-point messages, for the `type-mismatch`
//! local check (seed 000 §2.3.6, Fig 2.10; MPI-3.1 §3.3.1).
//!
//! A datatype's *signature* is the sequence of its basic types. A message
//! sent with `count` x `T` matches a receive of `rcount` x `R` when the
//! sender's signature is a prefix of `R` repeated: same basic types in the
//! same order (`MPI_BYTE` matches `MPI_BYTE` only; `MPI_PACKED` is not
//! checked).
//!
//! A signature is summarised by a [`Sig`]: a polynomial hash of the
//! sequence (mod 2^64, base [`BASE`], each basic type a 64-bit code), its
//! length in basic elements, its size in bytes and whether it is one basic
//! type repeated. The hash composes: `hash(S·T) = hash(S)·BASE^|T| +
//! hash(T)`, so the hash of `count` x `T` costs `O(log count)`.
//!
//! The sender puts the hash of its whole signature in the header's
//! signature word ([`send_word`]; 0: not checked). The receiver knows how
//! many bytes arrived, so it knows the prefix of its own repeated signature
//! those bytes hold ([`expected`]) and compares hashes.
//!
//! [`describe`] flattens a datatype with `MPI_Type_get_envelope` /
//! `MPI_Type_get_contents` (once per handle: the engine caches it).

use crate::consts::{packed, SUCCESS};
use crate::handle::HandleBits;
use mpi_sys::{MPI_Aint, MPI_Datatype};
use std::os::raw::c_int;

/// Base of the polynomial hash (odd).
pub const BASE: u64 = 0x9e37_79b9_7f4a_7c15;

/// How a signature is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// No elements.
    Empty,
    /// One basic type repeated.
    Homogeneous {
        /// Its code.
        code: u64,
        /// Its size in bytes.
        size: u64,
    },
    /// Several basic types.
    Mixed,
    /// Not checked (`MPI_PACKED`, `MPI_Type_create_darray`, Fortran
    /// parameterised types, a handle MPI cannot describe).
    Unchecked,
}

/// The summary of a type signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sig {
    /// Polynomial hash of the sequence of basic-type codes.
    pub hash: u64,
    /// Number of basic elements.
    pub elems: u64,
    /// Size in bytes.
    pub bytes: u64,
    /// Its shape.
    pub shape: Shape,
}

impl Sig {
    /// The empty signature.
    pub const EMPTY: Sig = Sig {
        hash: 0,
        elems: 0,
        bytes: 0,
        shape: Shape::Empty,
    };

    /// A signature that is not checked.
    pub const UNCHECKED: Sig = Sig {
        hash: 0,
        elems: 0,
        bytes: 0,
        shape: Shape::Unchecked,
    };

    /// One basic type of code `code` and `size` bytes.
    pub fn basic(code: u64, size: u64) -> Sig {
        if size == 0 {
            return Sig::UNCHECKED;
        }
        Sig {
            hash: code,
            elems: 1,
            bytes: size,
            shape: Shape::Homogeneous { code, size },
        }
    }

    /// Whether it is checked.
    pub fn checked(&self) -> bool {
        self.shape != Shape::Unchecked
    }

    /// `self` followed by `next`.
    pub fn concat(self, next: Sig) -> Sig {
        let shape = match (self.shape, next.shape) {
            (Shape::Unchecked, _) | (_, Shape::Unchecked) => return Sig::UNCHECKED,
            (Shape::Empty, s) | (s, Shape::Empty) => s,
            (a @ Shape::Homogeneous { .. }, b) if a == b => a,
            _ => Shape::Mixed,
        };
        Sig {
            hash: self
                .hash
                .wrapping_mul(pow(BASE, next.elems))
                .wrapping_add(next.hash),
            elems: self.elems.wrapping_add(next.elems),
            bytes: self.bytes.wrapping_add(next.bytes),
            shape,
        }
    }

    /// `self` repeated `k` times (`k` < 0 counts as 0).
    pub fn repeat(self, k: i64) -> Sig {
        if !self.checked() {
            return self;
        }
        let Ok(k) = u64::try_from(k) else {
            return Sig::EMPTY;
        };
        if k == 0 || self.shape == Shape::Empty {
            return Sig::EMPTY;
        }
        Sig {
            hash: self.hash.wrapping_mul(geometric(pow(BASE, self.elems), k)),
            elems: self.elems.wrapping_mul(k),
            bytes: self.bytes.wrapping_mul(k),
            shape: self.shape,
        }
    }
}

/// `x^n` mod 2^64.
pub fn pow(mut x: u64, mut n: u64) -> u64 {
    let mut acc: u64 = 1;
    while n > 0 {
        if n & 1 == 1 {
            acc = acc.wrapping_mul(x);
        }
        x = x.wrapping_mul(x);
        n >>= 1;
    }
    acc
}

/// `1 + p + p^2 + ... + p^(k-1)` mod 2^64, in `O(log k)`.
pub fn geometric(p: u64, k: u64) -> u64 {
    // Invariant over the bits of k from the top: sum = G(m), power = p^m
    // for the prefix m read so far; G(2m) = G(m)(1 + p^m), G(m+1) =
    // G(m) + p^m.
    let mut sum: u64 = 0;
    let mut power: u64 = 1;
    for bit in (0..u64::BITS - k.leading_zeros()).rev() {
        sum = sum.wrapping_mul(power.wrapping_add(1));
        power = power.wrapping_mul(power);
        if (k >> bit) & 1 == 1 {
            sum = sum.wrapping_add(power);
            power = power.wrapping_mul(p);
        }
    }
    sum
}

/// The code of a basic type from its handle bits (odd, well mixed).
pub fn code(bits: u64) -> u64 {
    // splitmix64's finaliser.
    let mut z = bits.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) | 1
}

/// The header's signature word for a send of `count` x `sig`: the hash of
/// the whole signature, 0 when not checked (or empty).
pub fn send_word(sig: Sig, count: c_int) -> u64 {
    let all = sig.repeat(i64::from(count));
    match all.shape {
        Shape::Unchecked | Shape::Empty => 0,
        // A real hash of 0 would read as "not checked": negligible.
        _ => all.hash,
    }
}

/// The last [`send_word`] and [`expected`] answers: a program sends and
/// receives the same count of the same type over and over, and each
/// answer costs a power by repeated squaring.
#[derive(Debug, Default)]
pub struct Memo {
    send: Option<(Sig, c_int, u64)>,
    receive: Option<(Sig, u64, Expect)>,
}

impl Memo {
    /// [`send_word`], remembered.
    #[inline]
    pub fn send_word(&mut self, sig: Sig, count: c_int) -> u64 {
        match self.send {
            Some((s, c, word)) if s == sig && c == count => word,
            _ => {
                let word = send_word(sig, count);
                self.send = Some((sig, count, word));
                word
            }
        }
    }

    /// [`expected`], remembered.
    #[inline]
    pub fn expected(&mut self, recv: Sig, bytes: u64) -> Expect {
        match self.receive {
            Some((s, b, expect)) if s == recv && b == bytes => expect,
            _ => {
                let expect = expected(recv, bytes);
                self.receive = Some((recv, bytes, expect));
                expect
            }
        }
    }
}

/// What the receiver expects of the sender's signature word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Nothing to check.
    Skip,
    /// The sender's word must equal this hash.
    Hash(u64),
    /// No sender's signature can be a prefix (the bytes end inside a basic
    /// element of the receive type).
    Mismatch,
}

/// What a receive with signature `recv` (its datatype, one copy) expects
/// after `bytes` bytes of data arrived.
///
/// A receive type of several basic types is checked only when the bytes
/// fill whole copies of it (otherwise: [`Expect::Skip`]).
pub fn expected(recv: Sig, bytes: u64) -> Expect {
    if bytes == 0 {
        return Expect::Skip;
    }
    match recv.shape {
        Shape::Unchecked | Shape::Empty => Expect::Skip,
        Shape::Homogeneous { code, size } => {
            if !bytes.is_multiple_of(size) {
                Expect::Mismatch
            } else {
                Expect::Hash(code.wrapping_mul(geometric(BASE, bytes / size)))
            }
        }
        Shape::Mixed => {
            if recv.bytes == 0 || !bytes.is_multiple_of(recv.bytes) {
                Expect::Skip
            } else {
                match i64::try_from(bytes / recv.bytes) {
                    Ok(k) => Expect::Hash(recv.repeat(k).hash),
                    Err(_) => Expect::Skip,
                }
            }
        }
    }
}

/// Whether a message whose header says `word` violates `expect`.
pub fn mismatch(word: u64, expect: Expect) -> bool {
    match expect {
        _ if word == 0 => false,
        Expect::Skip => false,
        Expect::Hash(h) => h != word,
        Expect::Mismatch => true,
    }
}

/// `MPI_COMBINER_*` values, from `mpi.h` (see `src/mpi_consts.c`), in this
/// order.
#[repr(C)]
#[derive(Default)]
struct Combiners {
    named: c_int,
    dup: c_int,
    contiguous: c_int,
    vector: c_int,
    hvector: c_int,
    indexed: c_int,
    hindexed: c_int,
    indexed_block: c_int,
    hindexed_block: c_int,
    struct_: c_int,
    subarray: c_int,
    resized: c_int,
}

unsafe extern "C" {
    fn mbhybrid_rt_combiners(out: *mut Combiners);
}

/// Whether `datatype` is a named (predefined) type.
pub fn is_named(datatype: MPI_Datatype) -> bool {
    let mut c = Combiners::default();
    // SAFETY: fills a struct of ints laid out as the C side expects.
    unsafe { mbhybrid_rt_combiners(&mut c) };
    let (mut ni, mut na, mut nd, mut combiner) = (0, 0, 0, 0);
    // SAFETY: valid out-parameters.
    let rc = unsafe {
        mpi_sys::PMPI_Type_get_envelope(datatype, &mut ni, &mut na, &mut nd, &mut combiner)
    };
    rc == SUCCESS && combiner == c.named
}

/// Deepest nesting of derived types followed.
const MAX_DEPTH: u32 = 32;

/// The signature of `datatype`, asking MPI (allocates; the caller caches
/// it). [`Sig::UNCHECKED`] when MPI cannot describe it.
pub fn describe(datatype: MPI_Datatype) -> Sig {
    let mut c = Combiners::default();
    // SAFETY: fills a struct of ints laid out as the C side expects.
    unsafe { mbhybrid_rt_combiners(&mut c) };
    describe_at(&c, datatype, 0)
}

fn describe_at(c: &Combiners, datatype: MPI_Datatype, depth: u32) -> Sig {
    if depth > MAX_DEPTH {
        return Sig::UNCHECKED;
    }
    let (mut ni, mut na, mut nd, mut combiner) = (0, 0, 0, 0);
    // SAFETY: valid out-parameters; an invalid handle makes it fail (the
    // runtime's communicator handlers return errors).
    let rc = unsafe {
        mpi_sys::PMPI_Type_get_envelope(datatype, &mut ni, &mut na, &mut nd, &mut combiner)
    };
    if rc != SUCCESS {
        return Sig::UNCHECKED;
    }
    if combiner == c.named {
        return named_sig(datatype);
    }
    let (Ok(ni), Ok(na), Ok(nd)) = (
        usize::try_from(ni),
        usize::try_from(na),
        usize::try_from(nd),
    ) else {
        return Sig::UNCHECKED;
    };
    let mut ints: Vec<c_int> = vec![0; ni];
    let mut addrs: Vec<MPI_Aint> = vec![0; na];
    let mut types: Vec<MPI_Datatype> = vec![datatype; nd];
    // SAFETY: arrays of the sizes the envelope gave.
    let rc = unsafe {
        mpi_sys::PMPI_Type_get_contents(
            datatype,
            ni as c_int,
            na as c_int,
            nd as c_int,
            ints.as_mut_ptr(),
            addrs.as_mut_ptr(),
            types.as_mut_ptr(),
        )
    };
    if rc != SUCCESS {
        return Sig::UNCHECKED;
    }
    let sigs: Vec<Sig> = types
        .iter()
        .map(|&t| describe_at(c, t, depth + 1))
        .collect();
    let sig = combined(c, combiner, &ints, &sigs);
    free_contents(c, types);
    sig
}

/// The signature of a predefined (named) datatype.
fn named_sig(datatype: MPI_Datatype) -> Sig {
    if datatype.bits() == packed().bits() {
        return Sig::UNCHECKED;
    }
    let mut size: c_int = 0;
    // SAFETY: a valid named type; valid out-parameter.
    if unsafe { mpi_sys::PMPI_Type_size(datatype, &mut size) } != SUCCESS {
        return Sig::UNCHECKED;
    }
    // By its place in a fixed list, not its handle: Open MPI's handles
    // are addresses, different in every process.
    let Some(index) = crate::consts::predefined_type_index(datatype) else {
        return Sig::UNCHECKED;
    };
    Sig::basic(code(index as u64), u64::try_from(size).unwrap_or(0))
}

/// The signature of a derived datatype made by `combiner` from the
/// signatures `sigs` of its datatypes and its integer arguments `ints`
/// (`MPI_Type_get_contents`'s).
fn combined(c: &Combiners, combiner: c_int, ints: &[c_int], sigs: &[Sig]) -> Sig {
    let int = |i: usize| i64::from(ints.get(i).copied().unwrap_or(0));
    let first = sigs.first().copied().unwrap_or(Sig::UNCHECKED);
    if combiner == c.dup || combiner == c.resized {
        first
    } else if combiner == c.contiguous {
        first.repeat(int(0))
    } else if combiner == c.vector
        || combiner == c.hvector
        || combiner == c.indexed_block
        || combiner == c.hindexed_block
    {
        first.repeat(int(0).saturating_mul(int(1)))
    } else if combiner == c.indexed || combiner == c.hindexed {
        let n = usize::try_from(int(0)).unwrap_or(0);
        first.repeat((1..=n).map(int).sum())
    } else if combiner == c.struct_ {
        let n = usize::try_from(int(0)).unwrap_or(0);
        (0..n).fold(Sig::EMPTY, |acc, i| {
            acc.concat(
                sigs.get(i)
                    .copied()
                    .unwrap_or(Sig::UNCHECKED)
                    .repeat(int(1 + i)),
            )
        })
    } else if combiner == c.subarray {
        let n = usize::try_from(int(0)).unwrap_or(0);
        first.repeat((0..n).map(|d| int(1 + n + d)).product())
    } else {
        Sig::UNCHECKED
    }
}

/// Frees the derived datatypes `MPI_Type_get_contents` returned (new
/// handles; the named ones are not).
fn free_contents(c: &Combiners, types: Vec<MPI_Datatype>) {
    for mut t in types {
        let (mut a, mut b, mut d, mut k) = (0, 0, 0, 0);
        // SAFETY: a handle MPI just returned.
        let named = unsafe { mpi_sys::PMPI_Type_get_envelope(t, &mut a, &mut b, &mut d, &mut k) }
            == SUCCESS
            && k == c.named;
        if !named {
            // SAFETY: a derived type MPI_Type_get_contents returned.
            unsafe { mpi_sys::PMPI_Type_free(&mut t) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INT: u64 = 0x4c00_0405;
    const BYTE: u64 = 0x4c00_010d;
    const DOUBLE: u64 = 0x4c00_080b;

    fn int() -> Sig {
        Sig::basic(code(INT), 4)
    }
    fn byte() -> Sig {
        Sig::basic(code(BYTE), 1)
    }
    fn double() -> Sig {
        Sig::basic(code(DOUBLE), 8)
    }

    /// The hash computed one element at a time.
    fn naive(codes: &[u64]) -> u64 {
        codes
            .iter()
            .fold(0u64, |h, &c| h.wrapping_mul(BASE).wrapping_add(c))
    }

    #[test]
    fn pow_and_geometric_agree_with_loops() {
        for p in [0u64, 1, 3, BASE, u64::MAX] {
            let mut sum = 0u64;
            let mut power = 1u64;
            for k in 0..70u64 {
                assert_eq!(geometric(p, k), sum, "p={p} k={k}");
                assert_eq!(pow(p, k), power);
                sum = sum.wrapping_add(power);
                power = power.wrapping_mul(p);
            }
        }
    }

    #[test]
    fn repeat_and_concat_hash_the_flat_sequence() {
        let (i, d) = (code(INT), code(DOUBLE));
        let pair = int().concat(double());
        assert_eq!(pair.shape, Shape::Mixed);
        assert_eq!(pair.hash, naive(&[i, d]));
        let three = pair.repeat(3);
        assert_eq!(three.hash, naive(&[i, d, i, d, i, d]));
        assert_eq!((three.elems, three.bytes), (6, 36));
        assert_eq!(int().repeat(5).hash, naive(&[i; 5]));
        assert_eq!(int().repeat(2).concat(int()), int().repeat(3));
        assert_eq!(int().repeat(0), Sig::EMPTY);
        assert_eq!(Sig::EMPTY.concat(int()), int());
        assert_eq!(int().concat(Sig::UNCHECKED), Sig::UNCHECKED);
    }

    #[test]
    fn e8_four_bytes_do_not_match_one_int() {
        // P0: Send(&i, 4, MPI_BYTE); P1: Recv(&i, 1, MPI_INT): 4 bytes.
        let word = send_word(byte(), 4);
        assert!(mismatch(word, expected(int(), 4)));
        // The same message received as bytes matches.
        assert!(!mismatch(word, expected(byte(), 4)));
        // Ints received as ints match, whatever the receive's count.
        assert!(!mismatch(send_word(int(), 3), expected(int(), 12)));
        // Ints received as floats of the same size do not.
        let float = Sig::basic(code(0x4c00_040a), 4);
        assert!(mismatch(send_word(int(), 3), expected(float, 12)));
        // Bytes that end inside an int.
        assert!(mismatch(send_word(byte(), 3), expected(int(), 3)));
    }

    #[test]
    fn prefix_rule_for_derived_types() {
        // Sender: contiguous(4, int) x 1; receiver: 8 ints, 16 bytes came.
        let contig = int().repeat(4);
        assert!(!mismatch(send_word(contig, 1), expected(int(), 16)));
        // Sender: 2 x {int, double}; receiver: struct {int, double} x 5.
        let pair = int().concat(double());
        assert!(!mismatch(send_word(pair, 2), expected(pair, 24)));
        // Sender: {double, int} (same size, other order).
        let swapped = double().concat(int());
        assert!(mismatch(send_word(swapped, 2), expected(pair, 24)));
        // A partial copy of a mixed receive type is not checked.
        assert_eq!(expected(pair, 4), Expect::Skip);
        // Sender: 3 ints; receiver: {int, int, int} as a struct.
        let triple = int().concat(int()).concat(int());
        assert_eq!(
            triple.shape,
            Shape::Homogeneous {
                code: code(INT),
                size: 4
            }
        );
        assert!(!mismatch(send_word(int(), 3), expected(triple, 12)));
    }

    #[test]
    fn unchecked_and_empty_messages_are_skipped() {
        assert_eq!(send_word(Sig::UNCHECKED, 4), 0);
        assert_eq!(send_word(int(), 0), 0);
        assert!(!mismatch(0, expected(int(), 4)));
        assert_eq!(expected(Sig::UNCHECKED, 4), Expect::Skip);
        assert_eq!(expected(int(), 0), Expect::Skip);
        assert_eq!(Sig::basic(1, 0), Sig::UNCHECKED);
    }
}
