//! Every reader of a file mbhybrid finds on disk, fed bad input: arbitrary
//! bytes, and valid files (made by the crate's own writers) with bits
//! flipped, cut short at every length, with garbage appended or records
//! swapped. A reader returns `Ok` or an error that says what is wrong; it
//! never panics, never hangs and never allocates more than its input
//! suggests. A rank trace cut short keeps every complete record before the
//! cut and says that it was cut (issue 12: faults must not turn into a
//! false clean).
//!
//! The cases come from a fixed seed, so every run tries the same corpus.

use mbh_trace::config::{
    Buffering, Clocks, ConfigError, ForcedMatch, Guidance, RuntimeConfig, RUNTIME_CONFIG_FORMAT,
};
use mbh_trace::finding::{Finding, FindingKind, Location, Role, Severity};
use mbh_trace::layout::RunManifest;
use mbh_trace::op::flags;
use mbh_trace::rank_trace::{
    FormatError, Op, RankEnd, RankState, RankTrace, RawHeader, RawOp, TraceWriter, HEADER_SIZE,
    MAX_FRAMES, RECORD_SIZE, STOP_MESSAGE_BYTES,
};
use mbh_trace::report::{
    AuditCost, BarrierVerdict, ChoicePointStats, RankOutcome, Report, RunAheadStats, RunOutcome,
    WildcardReport,
};
use mbh_trace::site::{Site, SiteFormatError, SiteTable, SiteTableError};
use mbh_trace::static_report::{
    CallClass, CallInfo, CompletionOrder, FunctionInfo, LoopDecision, LoopInfo, LoopMarker, Note,
    Span, StaticReport, UnsupportedCall, WildcardKind, WildcardSite, ZoneInfo,
};
use mbh_trace::OpKind;
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{Config, RngSeed};

/// Bytes of the header fields (the rest of the header page is padding).
const RAW_HEADER: usize = std::mem::size_of::<RawHeader>();

/// `cases` cases from a fixed seed, no regression files.
fn config(cases: u32) -> Config {
    Config {
        cases,
        rng_seed: RngSeed::Fixed(0x6d62_6812),
        failure_persistence: None,
        ..Config::default()
    }
}

// ---------------------------------------------------------------------
// Rank traces
// ---------------------------------------------------------------------

/// How a generated rank ended, set through the writer's own calls.
#[derive(Debug, Clone)]
enum End {
    Running {
        blocking: Option<usize>,
    },
    Finalized {
        status: Option<i32>,
    },
    Exited {
        status: i32,
    },
    Signaled {
        signal: i32,
        fault: u64,
        frames: Vec<u64>,
    },
    Aborted {
        code: i32,
        site: u32,
    },
    ToolStopped {
        code: i32,
        site: u32,
        message: String,
    },
}

/// A trace to write.
#[derive(Debug, Clone)]
struct Spec {
    rank: i32,
    size: i32,
    pid: u32,
    exe_base: u64,
    ops: Vec<RawOp>,
    /// Unwritten slots after the records, as in a mapping that has room.
    spare: u64,
    end: End,
}

/// The bytes of `spec`'s trace file, written by [`TraceWriter`].
fn write(spec: &Spec) -> Vec<u8> {
    let slots = spec.ops.len() as u64 + spec.spare;
    let mut buf = vec![0u64; TraceWriter::file_len(slots) as usize / 8];
    let len = buf.len() * 8;
    // SAFETY: `buf` is 8-aligned, `len` bytes long, and outlives the writer.
    let mut w = unsafe { TraceWriter::from_raw(buf.as_mut_ptr().cast(), len) }.unwrap();
    w.init_header(spec.rank, spec.size, spec.pid, spec.exe_base);
    for (i, op) in spec.ops.iter().enumerate() {
        assert_eq!(w.append(*op), Some(i as u64));
    }
    match &spec.end {
        End::Running { blocking } => w.set_blocking(blocking.map(|b| b as u64)),
        End::Finalized { status } => {
            w.set_state(RankState::Finalized);
            if let Some(status) = status {
                w.record_exit(*status);
            }
        }
        End::Exited { status } => w.record_exit(*status),
        End::Signaled {
            signal,
            fault,
            frames,
        } => {
            w.set_frames(*fault, frames);
            w.record_signal(*signal);
        }
        End::Aborted { code, site } => w.record_abort(*code, *site),
        End::ToolStopped {
            code,
            site,
            message,
        } => w.record_tool_stop(*code, *site, message),
    }
    buf.iter().flat_map(|word| word.to_le_bytes()).collect()
}

/// What [`RankTrace::decode`] must give back for `spec` (valid when no
/// record names a communicator: a `CommId`, or the `MPI_Init` whose
/// communicator is world).
fn expected_ops(spec: &Spec) -> Vec<Op> {
    spec.ops
        .iter()
        .enumerate()
        .map(|(i, raw)| Op {
            index: i as u64,
            kind: OpKind::from_code(raw.kind).unwrap(),
            flags: raw.flags,
            site: raw.site,
            peer: raw.peer,
            tag: raw.tag,
            comm: raw.comm,
            count: raw.count,
            matched: (raw.flags & flags::HAS_STATUS != 0)
                .then_some((raw.matched_source, raw.matched_tag)),
            error: raw.error,
            request: raw.request,
            aux: raw.aux,
        })
        .collect()
}

fn expected_end(spec: &Spec) -> (RankEnd, Option<u64>) {
    let mut end = RankEnd {
        state: RankState::Running,
        exit_status: None,
        signal: None,
        abort: None,
        fault_addr: 0,
        frames: vec![],
        exe_base: spec.exe_base,
        lost_records: 0,
        tool_stop: None,
    };
    let mut blocking = None;
    match &spec.end {
        End::Running { blocking: b } => blocking = b.map(|b| b as u64),
        End::Finalized { status } => {
            end.state = RankState::Finalized;
            end.exit_status = Some(status.unwrap_or(0));
        }
        End::Exited { status } => {
            end.state = RankState::Exited;
            end.exit_status = Some(*status);
        }
        End::Signaled {
            signal,
            fault,
            frames,
        } => {
            end.state = RankState::Signaled;
            end.signal = (*signal != 0).then_some(*signal);
            end.fault_addr = *fault;
            end.frames = frames[..frames.len().min(MAX_FRAMES)].to_vec();
        }
        End::Aborted { code, site } => {
            end.state = RankState::Aborted;
            end.abort = Some((*code, *site));
        }
        End::ToolStopped {
            code,
            site,
            message,
        } => {
            end.state = RankState::ToolStopped;
            end.abort = Some((*code, *site));
            // Cut to the room at a character boundary; empty is none.
            let mut cut = message.len().min(STOP_MESSAGE_BYTES - 1);
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            end.tool_stop = (cut > 0).then(|| message[..cut].to_string());
        }
    }
    (end, blocking)
}

fn raw_op(kinds: &'static [OpKind]) -> impl Strategy<Value = RawOp> {
    (
        select(kinds),
        any::<u16>(),
        any::<u32>(),
        any::<(i32, i32, u64, i32)>(),
        any::<(i32, i32, i32, u64, u64)>(),
    )
        .prop_map(
            |(kind, flags, site, (peer, tag, comm, count), (ms, mt, error, request, aux))| RawOp {
                index: 0,
                kind: kind as u16,
                flags,
                site,
                peer,
                tag,
                comm,
                count,
                matched_source: ms,
                matched_tag: mt,
                error,
                request,
                aux,
            },
        )
}

fn end(records: usize) -> impl Strategy<Value = End> {
    prop_oneof![
        proptest::option::of(0..records.max(1)).prop_map(|blocking| End::Running { blocking }),
        any::<Option<i32>>().prop_map(|status| End::Finalized { status }),
        any::<i32>().prop_map(|status| End::Exited { status }),
        (
            any::<i32>(),
            any::<u64>(),
            vec(any::<u64>(), 0..MAX_FRAMES + 8)
        )
            .prop_map(|(signal, fault, frames)| End::Signaled {
                signal,
                fault,
                frames
            }),
        any::<(i32, u32)>().prop_map(|(code, site)| End::Aborted { code, site }),
        (any::<(i32, u32)>(), "[a-zé ]{0,600}").prop_map(|((code, site), message)| {
            End::ToolStopped {
                code,
                site,
                message,
            }
        }),
    ]
}

/// Every kind but those whose records rename communicators (`CommId`, and
/// `Init`/`InitThread`, which name world).
fn plain_kinds() -> &'static [OpKind] {
    static KINDS: std::sync::OnceLock<Vec<OpKind>> = std::sync::OnceLock::new();
    KINDS.get_or_init(|| {
        OpKind::ALL
            .iter()
            .copied()
            .filter(|k| !matches!(k, OpKind::CommId | OpKind::Init | OpKind::InitThread))
            .collect()
    })
}

fn spec_of(kinds: &'static [OpKind], max_ops: usize) -> impl Strategy<Value = Spec> {
    (vec(raw_op(kinds), 0..max_ops), 0u64..3).prop_flat_map(|(ops, spare)| {
        let records = ops.len();
        (
            any::<(i32, i32, u32, u64)>(),
            Just(ops),
            Just(spare),
            end(records),
        )
            .prop_map(|((rank, size, pid, exe_base), ops, spare, end)| Spec {
                rank,
                size,
                pid,
                exe_base,
                ops,
                spare,
                end,
            })
    })
}

/// Checks what a successful decode promises whatever the bytes: no more
/// records than the file holds, numbered by position; and the analyses of
/// this crate run on it without panicking.
fn check_decoded(bytes: &[u8]) {
    if let Ok(decoded) = RankTrace::decode(bytes) {
        let available = bytes.len().saturating_sub(HEADER_SIZE) / RECORD_SIZE;
        assert!(decoded.trace.ops.len() <= available);
        for (i, op) in decoded.trace.ops.iter().enumerate() {
            assert_eq!(op.index, i as u64);
        }
        assert!(decoded.trace.end.frames.len() <= MAX_FRAMES);
        // A damaged record ends the trace at its position.
        let kept = decoded.trace.ops.len() as u64;
        match &decoded.damaged {
            Some(
                FormatError::UnknownKind { record, .. } | FormatError::Misnumbered { record, .. },
            ) => {
                assert_eq!(*record, kept)
            }
            Some(other) => panic!("not a record's damage: {other:?}"),
            None => {}
        }
        if let Some(t) = decoded.truncated {
            if decoded.damaged.is_none() {
                assert_eq!(t.kept, kept);
            }
            assert!(t.kept >= kept);
            assert!(t.counted > t.kept);
            assert!(!t.to_string().is_empty());
        }
        let _ = decoded.trace.wildcard_events();
    }
}

/// A valid header followed by `rest`: gets arbitrary bytes past the magic
/// and version checks.
fn with_valid_header(rest: &[u8], record_count: u64) -> Vec<u8> {
    let spec = Spec {
        rank: 0,
        size: 1,
        pid: 1,
        exe_base: 0,
        ops: vec![],
        spare: 0,
        end: End::Running { blocking: None },
    };
    let mut bytes = write(&spec);
    bytes[32..40].copy_from_slice(&record_count.to_le_bytes());
    bytes.extend_from_slice(rest);
    bytes
}

proptest! {
    #![proptest_config(config(256))]

    /// (a) Arbitrary bytes.
    #[test]
    fn trace_arbitrary_bytes(bytes in vec(any::<u8>(), 0..2 * HEADER_SIZE)) {
        check_decoded(&bytes);
    }

    /// (a) Arbitrary records (and an arbitrary count) after a valid header.
    #[test]
    fn trace_arbitrary_records(
        rest in vec(any::<u8>(), 0..RECORD_SIZE * 12),
        record_count in prop_oneof![0u64..16, any::<u64>()],
    ) {
        let bytes = with_valid_header(&rest, record_count);
        check_decoded(&bytes);
    }

    /// (a) Arbitrary words over a valid trace's header fields.
    #[test]
    fn trace_arbitrary_header_words(
        spec in spec_of(OpKind::ALL, 6),
        words in vec((0..RAW_HEADER / 8, any::<u64>()), 1..8),
    ) {
        let mut bytes = write(&spec);
        for (at, word) in words {
            bytes[at * 8..at * 8 + 8].copy_from_slice(&word.to_le_bytes());
        }
        check_decoded(&bytes);
    }

    /// (b) Bit flips in a valid trace (header fields and records).
    #[test]
    fn trace_bit_flips(
        spec in spec_of(OpKind::ALL, 8),
        flips in vec((any::<prop::sample::Index>(), 0u8..8), 1..16),
    ) {
        let mut bytes = write(&spec);
        // Aim at the bytes that mean something: header fields and records.
        let meaningful: Vec<usize> = (0..RAW_HEADER).chain(HEADER_SIZE..bytes.len()).collect();
        for (at, bit) in flips {
            bytes[*at.get(&meaningful)] ^= 1 << bit;
        }
        check_decoded(&bytes);
    }

    /// (b) Garbage after the end of a valid trace changes nothing: the
    /// header says how many records count.
    #[test]
    fn trace_appended_garbage(
        spec in spec_of(plain_kinds(), 6),
        garbage in vec(any::<u8>(), 1..3 * RECORD_SIZE),
    ) {
        let mut bytes = write(&spec);
        bytes.extend_from_slice(&garbage);
        let decoded = RankTrace::decode(&bytes).unwrap();
        prop_assert!(decoded.truncated.is_none());
        prop_assert_eq!(decoded.trace.ops, expected_ops(&spec));
    }

    /// (b) Two records swapped: rejected, naming the first out of place.
    #[test]
    fn trace_swapped_records(
        spec in spec_of(OpKind::ALL, 8).prop_filter("two records", |s| s.ops.len() >= 2),
        pick in any::<(prop::sample::Index, prop::sample::Index)>(),
    ) {
        let mut bytes = write(&spec);
        let n = spec.ops.len();
        let (a, b) = (pick.0.index(n), pick.1.index(n));
        prop_assume!(a != b);
        let (i, j) = (a.min(b), a.max(b));
        let (ri, rj) = (HEADER_SIZE + i * RECORD_SIZE, HEADER_SIZE + j * RECORD_SIZE);
        let first: Vec<u8> = bytes[ri..ri + RECORD_SIZE].to_vec();
        bytes.copy_within(rj..rj + RECORD_SIZE, ri);
        bytes[rj..rj + RECORD_SIZE].copy_from_slice(&first);
        // The records before the first one out of place are kept.
        let decoded = RankTrace::decode(&bytes).unwrap();
        prop_assert_eq!(decoded.damaged, Some(FormatError::Misnumbered { record: i as u64, index: j as u64 }));
        prop_assert_eq!(decoded.trace.ops.len(), i);
    }

    /// (c) What the writer writes, the reader reads.
    #[test]
    fn trace_round_trip(spec in spec_of(plain_kinds(), 12)) {
        let decoded = RankTrace::decode(&write(&spec)).unwrap();
        prop_assert!(decoded.truncated.is_none());
        let trace = decoded.trace;
        prop_assert_eq!((trace.rank, trace.size, trace.pid), (spec.rank, spec.size, spec.pid));
        let (end, blocking) = expected_end(&spec);
        prop_assert_eq!(trace.end, end);
        prop_assert_eq!(trace.blocking, blocking);
        prop_assert_eq!(trace.ops, expected_ops(&spec));
    }
}

proptest! {
    // Each case decodes every prefix of its trace (thousands of decodes).
    #![proptest_config(config(24))]

    /// (b) A trace cut at every length: a prefix shorter than the header
    /// fields is rejected; any longer one keeps every complete record
    /// before the cut (communicators named as in the whole file) and
    /// reports the records it lacks.
    #[test]
    fn trace_truncated_at_every_length(spec in spec_of(OpKind::ALL, 6)) {
        let bytes = write(&spec);
        let whole = RankTrace::decode(&bytes).unwrap();
        prop_assert!(whole.truncated.is_none());
        let counted = spec.ops.len() as u64;
        for len in 0..bytes.len() {
            let cut = &bytes[..len];
            if len < RAW_HEADER {
                prop_assert_eq!(
                    RankTrace::decode(cut).unwrap_err(),
                    FormatError::TooShort { len, needed: RAW_HEADER }
                );
                continue;
            }
            let decoded = RankTrace::decode(cut).unwrap();
            let room = len.saturating_sub(HEADER_SIZE);
            let kept = ((room / RECORD_SIZE) as u64).min(counted);
            prop_assert_eq!(&decoded.trace.ops[..], &whole.trace.ops[..kept as usize]);
            prop_assert_eq!(&decoded.trace.end, &whole.trace.end);
            if kept < counted {
                let truncated = decoded.truncated.unwrap();
                prop_assert_eq!(truncated.counted, counted);
                prop_assert_eq!(truncated.kept, kept);
                prop_assert_eq!(truncated.partial_bytes, room % RECORD_SIZE);
            } else {
                prop_assert!(decoded.truncated.is_none());
            }
        }
    }
}

/// A trace of many communicators, each named once: decoding must stay
/// linear (it was quadratic: 40 000 such records took 6 s in a debug
/// build, so a damaged 25 MB trace would hang the CLI for ten minutes).
#[test]
fn trace_of_many_communicator_names_decodes_in_linear_time() {
    let n = 60_000u64;
    let mut ops: Vec<RawOp> = (0..n)
        .map(|i| RawOp {
            kind: OpKind::CommId as u16,
            comm: i,
            aux: 1 << 63 | i,
            ..RawOp::default()
        })
        .collect();
    ops.push(RawOp {
        kind: OpKind::Send as u16,
        comm: n - 1,
        ..RawOp::default()
    });
    let spec = Spec {
        rank: 0,
        size: 1,
        pid: 1,
        exe_base: 0,
        ops,
        spare: 0,
        end: End::Finalized { status: None },
    };
    let started = std::time::Instant::now();
    let trace = RankTrace::parse(&write(&spec)).unwrap();
    assert_eq!(trace.ops.last().unwrap().comm, 1 << 63 | (n - 1));
    // Generous: linear takes milliseconds, quadratic took tens of seconds.
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
}

/// A record count far beyond the file (`u64::MAX`) allocates nothing
/// extra and reports the truncation.
#[test]
fn trace_with_huge_record_count_is_truncated_not_allocated() {
    let bytes = with_valid_header(&[0; RECORD_SIZE + 5], u64::MAX);
    // The one record present is all zeros: kind 0 is no operation.
    let decoded = RankTrace::decode(&bytes).unwrap();
    assert_eq!(
        decoded.damaged,
        Some(FormatError::UnknownKind { record: 0, kind: 0 })
    );
    assert!(decoded.trace.ops.is_empty());
    let bytes = with_valid_header(&[], u64::MAX);
    let decoded = RankTrace::decode(&bytes).unwrap();
    assert!(decoded.trace.ops.is_empty());
    let truncated = decoded.truncated.unwrap();
    assert_eq!((truncated.counted, truncated.kept), (u64::MAX, 0));
    assert!(
        truncated
            .to_string()
            .contains("but the file ends after 0 complete ones"),
        "{truncated}"
    );
}

/// The writer must not trust the mapped header's record count past its
/// own mapping: `update` of a record beyond it changes nothing.
#[test]
fn writer_updates_stay_inside_the_mapping() {
    // Two slots of memory, of which the writer is given one.
    let mut buf = vec![0u64; TraceWriter::file_len(2) as usize / 8];
    let len = TraceWriter::file_len(1) as usize;
    // SAFETY: `buf` is 8-aligned, longer than `len`, and outlives the writer.
    let mut w = unsafe { TraceWriter::from_raw(buf.as_mut_ptr().cast(), len) }.unwrap();
    w.init_header(0, 1, 1, 0);
    assert_eq!(w.append(RawOp::default()), Some(0));
    // The header now claims a second record (damaged, or another writer).
    buf[32 / 8] = 2;
    // SAFETY: as above; the old writer is not used again.
    let mut w = unsafe { TraceWriter::from_raw(buf.as_mut_ptr().cast(), len) }.unwrap();
    w.update(1, |op| op.aux = 0xdead);
    let second = (HEADER_SIZE + RECORD_SIZE) / 8;
    assert!(buf[second..].iter().all(|&word| word == 0));
}

/// Reading a damaged file names the file, what is wrong, and what to do.
#[test]
fn trace_errors_name_the_file_the_problem_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rank-0.trace");
    let spec = Spec {
        rank: 0,
        size: 2,
        pid: 1,
        exe_base: 0,
        ops: vec![
            RawOp {
                kind: OpKind::Init as u16,
                ..RawOp::default()
            };
            3
        ],
        spare: 0,
        end: End::Finalized { status: None },
    };
    let mut bytes = write(&spec);
    bytes[HEADER_SIZE + RECORD_SIZE] = 7; // record 1 says it is record 7
    std::fs::write(&path, &bytes).unwrap();
    // Record 0 is kept; the damage is named.
    let decoded = RankTrace::read_decoded(&path).unwrap();
    assert_eq!(decoded.trace.ops.len(), 1);
    let damage = decoded.damaged.expect("the damage is reported");
    assert_eq!(
        damage,
        FormatError::Misnumbered {
            record: 1,
            index: 7
        }
    );
    let text = damage.to_string();
    assert!(text.contains("record 1 says it is record 7"), "{text}");

    std::fs::write(&path, b"not a trace at all, but long enough?").unwrap();
    let text = RankTrace::read(&path).unwrap_err().to_string();
    assert!(text.contains("fewer than the"), "{text}");

    // Cut inside record 2: records 0 and 1 are kept, and the loss is told.
    let whole = write(&spec);
    std::fs::write(&path, &whole[..HEADER_SIZE + 2 * RECORD_SIZE + 10]).unwrap();
    let decoded = RankTrace::read_decoded(&path).unwrap();
    assert_eq!(decoded.trace.ops.len(), 2);
    let text = decoded.truncated.unwrap().to_string();
    assert!(
        text.contains("counts 3 records but the file ends after 2 complete ones and 10 bytes"),
        "{text}"
    );
    assert_eq!(RankTrace::read(&path).unwrap().ops.len(), 2);
}

// ---------------------------------------------------------------------
// JSON files: runtime configuration (and replay.json), site table with
// its static report, run manifest, report
// ---------------------------------------------------------------------

fn text() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), "[a-z_./:]{0,12}"]
}

fn runtime_config() -> impl Strategy<Value = RuntimeConfig> {
    let forced = vec(
        any::<(i32, u32, i32)>().prop_map(|(rank, event, source)| ForcedMatch {
            rank,
            event,
            source,
        }),
        0..6,
    );
    (
        select(&[Clocks::Lamport, Clocks::Vector][..]),
        select(&[Buffering::Infinite, Buffering::Zero][..]),
        proptest::option::of((any::<u64>(), forced)),
    )
        .prop_map(|(clocks, buffering, guidance)| RuntimeConfig {
            clocks,
            buffering,
            guidance: guidance.map(|(last_guided_clock, forced)| Guidance {
                last_guided_clock,
                forced,
            }),
            ..RuntimeConfig::default()
        })
}

fn span() -> impl Strategy<Value = Span> {
    (text(), any::<u32>(), any::<u32>()).prop_map(|(file, line, column)| Span {
        file,
        line,
        column,
    })
}

fn static_report() -> impl Strategy<Value = StaticReport> {
    let function = (
        text(),
        text(),
        any::<(u32, u32)>(),
        vec(any::<u32>(), 0..3),
        any::<(bool, bool, bool, bool)>(),
    )
        .prop_map(
            |(name, file, (line, mpi_calls), loops, flags)| FunctionInfo {
                symbol: name.clone(),
                name,
                file,
                line,
                mpi_calls,
                loops,
                always_collective: flags.0,
                contains_wildcards: flags.1,
                calls_unknown: flags.2,
                irreducible: flags.3,
            },
        );
    let a_loop = (
        any::<(u32, u32, u32, Option<u32>)>(),
        text(),
        span(),
        vec(any::<u32>(), 0..3),
        vec(text(), 0..2),
        select(
            &[
                LoopDecision::NoWildcards,
                LoopDecision::Abstract,
                LoopDecision::Explore,
            ][..],
        ),
        select(&[LoopMarker::Abstract, LoopMarker::Explore, LoopMarker::None][..]),
        text(),
    )
        .prop_map(
            |(
                (id, end_line, depth, parent),
                function,
                span,
                sites,
                calls,
                decision,
                marker,
                reason,
            )| {
                LoopInfo {
                    id,
                    function,
                    span,
                    end_line,
                    depth,
                    parent,
                    wildcard_sites: sites,
                    through_calls: calls,
                    decision,
                    marker,
                    reason,
                }
            },
        );
    let zone = (
        any::<u32>(),
        text(),
        text(),
        text(),
        span(),
        any::<Option<i64>>(),
        vec(any::<u32>(), 0..3),
    )
        .prop_map(
            |(id, name, function, opened_by, span, bound, wildcard_sites)| ZoneInfo {
                id,
                name,
                function,
                opened_by,
                span,
                bound,
                wildcard_sites,
            },
        );
    let wildcard = (
        any::<u32>(),
        text(),
        text(),
        span(),
        text(),
        text(),
        select(
            &[
                WildcardKind::AnySource,
                WildcardKind::AnyTag,
                WildcardKind::MaybeWildcard,
                WildcardKind::AnyCompletion,
            ][..],
        ),
        any::<Option<u32>>(),
    )
        .prop_map(
            |(site, call, function, span, source, tag, kind, in_loop)| WildcardSite {
                site,
                call,
                function,
                span,
                source,
                tag,
                kind,
                in_loop,
                completion_order: (kind == WildcardKind::AnyCompletion).then(|| {
                    CompletionOrder::Matters {
                        reason: "the index decides a branch".into(),
                    }
                }),
            },
        );
    let call = (
        any::<u32>(),
        select(
            &[
                CallClass::Send,
                CallClass::Receive,
                CallClass::SendReceive,
                CallClass::Probe,
                CallClass::Completion,
                CallClass::Collective,
                CallClass::Communicator,
                CallClass::Datatype,
                CallClass::Other,
            ][..],
        ),
        any::<bool>(),
    )
        .prop_map(|(site, class, zone_boundary)| CallInfo {
            site,
            class,
            zone_boundary,
        });
    let unsupported = (any::<u32>(), text(), text(), span(), text()).prop_map(
        |(site, call, function, span, reason)| UnsupportedCall {
            site,
            call,
            function,
            span,
            reason,
        },
    );
    let note = (span(), text()).prop_map(|(span, message)| Note { span, message });
    (
        vec(function, 0..2),
        vec(a_loop, 0..2),
        vec(zone, 0..2),
        vec(wildcard, 0..2),
        vec(call, 0..3),
        vec(unsupported, 0..2),
        vec(note, 0..2),
    )
        .prop_map(
            |(functions, loops, zones, wildcards, calls, unsupported, notes)| StaticReport {
                functions,
                loops,
                zones,
                wildcards,
                calls,
                unsupported,
                notes,
                buffer_errors: Vec::new(),
                buffer_rooms: Vec::new(),
                divergent_collectives: Vec::new(),
                input_branches: Vec::new(),
            },
        )
}

fn site_table() -> impl Strategy<Value = SiteTable> {
    let site = (any::<u32>(), text(), text(), text(), any::<(u32, u32)>()).prop_map(
        |(id, function, call, file, (line, column))| Site {
            id,
            function,
            call,
            file,
            line,
            column,
        },
    );
    (
        text(),
        vec(text(), 0..3),
        vec(site, 0..5),
        proptest::option::of(static_report()),
    )
        .prop_map(|(program, sources, sites, analysis)| {
            let mut table = SiteTable::new(program, sources);
            table.sites = sites;
            table.analysis = analysis;
            table
        })
}

fn location() -> impl Strategy<Value = Location> {
    (
        text(),
        any::<(u32, u32, i32)>(),
        proptest::option::of(text()),
        select(&[Role::Primary, Role::Secondary][..]),
        text(),
    )
        .prop_map(|(file, (line, column, rank), call, role, label)| Location {
            file,
            line,
            column,
            rank,
            call,
            function: None,
            role,
            label,
        })
}

/// Seconds as the CLI measures them (`Duration::as_secs_f64`).
fn seconds() -> impl Strategy<Value = f64> {
    any::<(u32, u32)>()
        .prop_map(|(s, ns)| std::time::Duration::new(s.into(), ns % 1_000_000_000).as_secs_f64())
}

fn report() -> impl Strategy<Value = Report> {
    let finding = (
        select(FindingKind::ALL),
        select(&[Severity::Error, Severity::Warning, Severity::Note][..]),
        text(),
        any::<u32>(),
        vec(any::<i32>(), 0..3),
        vec(location(), 0..2),
        vec(text(), 0..2),
        proptest::option::of(text()),
    )
        .prop_map(
            |(kind, severity, message, interleaving, ranks, locations, notes, help)| Finding {
                interleaving,
                ranks,
                locations,
                notes,
                help,
                ..Finding::new(kind, severity, message)
            },
        );
    let wildcard = (
        any::<i32>(),
        text(),
        text(),
        any::<(u32, u32, u32, u64)>(),
        vec(any::<i32>(), 0..3),
    )
        .prop_map(
            |(rank, file, call, (line, event, interleaving, clock), senders)| WildcardReport {
                rank,
                file,
                line,
                call,
                matched: senders.iter().copied().take(1).collect(),
                potential: senders.clone(),
                event,
                interleaving,
                clock,
                senders,
            },
        );
    let barrier = (
        text(),
        any::<u32>(),
        text(),
        proptest::option::of(text()),
        vec(location(), 0..2),
    )
        .prop_map(|(file, line, verdict, reason, evidence)| BarrierVerdict {
            file,
            line,
            verdict,
            reason,
            evidence,
        });
    let rank = (
        any::<i32>(),
        text(),
        any::<(Option<i32>, Option<i32>, u64)>(),
        text(),
    )
        .prop_map(
            |(rank, state, (exit_status, signal, operations), stderr)| RankOutcome {
                rank,
                state,
                exit_status,
                signal,
                operations,
                stderr,
            },
        );
    let run = (
        any::<(u32, Option<i32>, bool)>(),
        vec(rank, 0..3),
        seconds(),
        text(),
    )
        .prop_map(
            |((interleaving, launcher_exit, infeasible), ranks, seconds, stdout)| RunOutcome {
                interleaving,
                launcher_exit,
                ranks,
                seconds,
                stdout,
                dir: None,
                infeasible,
            },
        );
    (
        (text(), vec(text(), 0..2), any::<(u32, u32, bool)>()),
        any::<(u64, u64, u64, u64)>(),
        vec(finding, 0..2),
        vec(wildcard, 0..2),
        vec(barrier, 0..2),
        vec(run, 0..2),
        (
            vec(text(), 0..2),
            seconds(),
            text(),
            option::of((seconds(), seconds())),
        ),
    )
        .prop_map(
            |(
                (program, args, (np, interleavings, complete)),
                (found, explored, abstracted, mixing_bounded),
                findings,
                wildcards,
                barriers,
                runs,
                (warnings, seconds, run_id, audit),
            )| Report {
                tool: "mbhybrid".into(),
                version: "0.1.0".into(),
                program,
                args,
                np,
                clocks: "lamport".into(),
                buffering: "infinite".into(),
                interleavings,
                complete,
                choice_points: ChoicePointStats {
                    found,
                    explored,
                    abstracted,
                    mixing_bounded,
                    orderless: found % 3,
                },
                findings,
                wildcards,
                barriers,
                barrier_audit: audit.map(|(fib_seconds, exploration_seconds)| AuditCost {
                    fib_seconds,
                    exploration_seconds,
                }),
                run_dir: format!(".mbhybrid/runs/{run_id}"),
                run_id,
                runs,
                // Limits are strings like warnings: the same ones, in
                // another order, exercise both fields (and an absent one).
                limits: warnings.iter().rev().cloned().collect(),
                not_modelled: Vec::new(),
                run_ahead: (interleavings % 3 == 1).then_some(RunAheadStats {
                    jobs: np,
                    taken: interleavings / 2,
                    unused: np / 2,
                }),
                warnings,
                seconds,
            },
        )
}

fn manifest() -> impl Strategy<Value = RunManifest> {
    (
        text(),
        text(),
        vec(text(), 0..3),
        any::<(u32, u64)>(),
        (text(), vec((text(), text()), 0..3)),
        text(),
        proptest::option::of(text()),
    )
        .prop_map(
            |(run_id, program, args, (np, timeout), (launcher, launcher_env), cwd, preload)| {
                RunManifest {
                    run_id,
                    program: program.into(),
                    args,
                    np,
                    launcher,
                    launcher_env,
                    cwd: cwd.into(),
                    preload: preload.map(Into::into),
                    timeout,
                }
            },
        )
}

/// Feeds `bytes` to every JSON reader; each returns `Ok` or `Err`.
fn read_json_everywhere(bytes: &[u8]) {
    let _ = SiteTable::parse(bytes);
    let _ = serde_json::from_slice::<StaticReport>(bytes);
    let _ = serde_json::from_slice::<RunManifest>(bytes);
    let _ = serde_json::from_slice::<Report>(bytes);
    let _ = RuntimeConfig::parse(&String::from_utf8_lossy(bytes));
}

/// Ways to damage a valid file's text.
#[derive(Debug, Clone)]
enum Damage {
    /// Flip bits at these positions (indices into the text).
    Flips(Vec<(prop::sample::Index, u8)>),
    /// Append this.
    Append(Vec<u8>),
    /// Remove a range.
    Cut(prop::sample::Index, usize),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        vec((any::<prop::sample::Index>(), 0u8..8), 1..8).prop_map(Damage::Flips),
        prop_oneof![
            vec(any::<u8>(), 1..16),
            Just(b"}".to_vec()),
            Just(b",{}".to_vec())
        ]
        .prop_map(Damage::Append),
        (any::<prop::sample::Index>(), 1usize..32).prop_map(|(at, n)| Damage::Cut(at, n)),
    ]
}

fn apply(damage: &Damage, text: &[u8]) -> Vec<u8> {
    let mut bytes = text.to_vec();
    match damage {
        Damage::Flips(flips) => {
            for (at, bit) in flips {
                let at = at.index(bytes.len());
                bytes[at] ^= 1 << bit;
            }
        }
        Damage::Append(more) => bytes.extend_from_slice(more),
        Damage::Cut(at, n) => {
            let at = at.index(bytes.len());
            bytes.drain(at..(at + n).min(bytes.len()));
        }
    }
    bytes
}

/// Every prefix of `text` that leaves its last `}` out is rejected: a file
/// cut short never reads as a smaller valid one. Long texts are cut at 128
/// evenly spaced lengths and at each of the last 64 (where a cut would
/// leave the most behind).
fn check_prefixes_rejected<T>(text: &[u8], read: impl Fn(&[u8]) -> Result<T, String>) {
    let end = text.iter().rposition(|&b| b == b'}').unwrap();
    let step = (end / 128).max(1);
    let lengths = (0..=end).step_by(step).chain(end.saturating_sub(64)..=end);
    for len in lengths {
        assert!(
            read(&text[..len]).is_err(),
            "a prefix of {len} bytes was read: {}",
            String::from_utf8_lossy(&text[..len])
        );
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// (a) Arbitrary bytes, and arbitrary text, to every JSON reader.
    #[test]
    fn json_arbitrary_bytes(bytes in vec(any::<u8>(), 0..256), text in any::<String>()) {
        read_json_everywhere(&bytes);
        read_json_everywhere(text.as_bytes());
    }

    /// (a) JSON-looking noise: right keys, wrong shapes.
    #[test]
    fn json_arbitrary_shapes(
        parts in vec(
            select(&[
                "{", "}", "[", "]", ",", ":", "null", "true", "0", "-1", "1e999",
                "18446744073709551616", "\"x\"", "\"\\ud800\"", "\"format\"",
                "\"mbhybrid-runtime\"", "\"mbhybrid-sites\"", "\"version\"", "1",
                "\"guidance\"", "\"forced\"", "\"sites\"", "\"analysis\"", "\"loops\"",
            ][..]),
            0..40,
        ),
    ) {
        read_json_everywhere(parts.concat().as_bytes());
    }

    /// (b, c) A runtime configuration round-trips; damaged, it is read or
    /// rejected; cut short, it is rejected.
    #[test]
    fn runtime_config_round_trip_and_damage(config in runtime_config(), damage in damage()) {
        let text = config.to_json();
        prop_assert_eq!(&RuntimeConfig::parse(&text).unwrap(), &config);
        let damaged = apply(&damage, text.as_bytes());
        let _ = RuntimeConfig::parse(&String::from_utf8_lossy(&damaged));
        check_prefixes_rejected(text.as_bytes(), |b| {
            RuntimeConfig::parse(&String::from_utf8_lossy(b)).map_err(|e| e.to_string())
        });
    }

    /// (b, c) A site table (with its static report) round-trips through its
    /// file; damaged, it is read or rejected; cut short, it is rejected.
    #[test]
    fn site_table_round_trip_and_damage(table in site_table(), damage in damage()) {
        let text = serde_json::to_vec_pretty(&table).unwrap();
        prop_assert_eq!(&SiteTable::parse(&text).unwrap(), &table);
        let damaged = apply(&damage, &text);
        let _ = SiteTable::parse(&damaged);
        check_prefixes_rejected(&text, |b| SiteTable::parse(b).map_err(|e| e.to_string()));
    }

    /// (b, c) The report and the run manifest round-trip; damaged, they
    /// are read or rejected.
    #[test]
    fn report_and_manifest_round_trip_and_damage(
        report in report(),
        manifest in manifest(),
        damage in damage(),
    ) {
        let text = serde_json::to_vec(&report).unwrap();
        prop_assert_eq!(&serde_json::from_slice::<Report>(&text).unwrap(), &report);
        let _ = serde_json::from_slice::<Report>(&apply(&damage, &text));
        let text = serde_json::to_vec(&manifest).unwrap();
        prop_assert_eq!(&serde_json::from_slice::<RunManifest>(&text).unwrap(), &manifest);
        let _ = serde_json::from_slice::<RunManifest>(&apply(&damage, &text));
    }
}

/// Nesting a hundred thousand deep is an error, not a stack overflow.
#[test]
fn deeply_nested_json_is_rejected() {
    let deep = |open: &str| {
        let mut text = String::from(open);
        text.push_str(&"[".repeat(100_000));
        text
    };
    let error = RuntimeConfig::parse(&deep(
        r#"{"format":"mbhybrid-runtime","version":1,"guidance":"#,
    ))
    .unwrap_err();
    assert!(matches!(error, ConfigError::Json(_)), "{error}");
    assert!(SiteTable::parse(deep(r#"{"format":"mbhybrid-sites","sites":"#).as_bytes()).is_err());
    assert!(serde_json::from_str::<Report>(&deep(r#"{"findings":"#)).is_err());
}

/// A file of another version says so, not which field it lacks; a damaged
/// one says where; both say what to do.
#[test]
fn json_errors_say_what_is_wrong_and_what_to_do() {
    let error = RuntimeConfig::parse(r#"{"format":"mbhybrid-runtime","version":2,"new":true}"#)
        .unwrap_err();
    assert!(
        matches!(&error, ConfigError::Version { version: 2, .. }),
        "{error}"
    );
    assert!(error.help().contains("another version"));
    let error = RuntimeConfig::parse(&RuntimeConfig::default().to_json()[..40]).unwrap_err();
    assert!(error.to_string().contains("line"), "{error}");
    assert!(error.help().contains("run `mbhybrid verify` again"));
    let config = format!(
        r#"{{"format":"{RUNTIME_CONFIG_FORMAT}","version":1,"clocks":"lamport","buffering":"zero","guidance":{{"last_guided_clock":1,"forced":[{{"rank":1,"event":-1,"source":0}}]}}}}"#
    );
    let error = RuntimeConfig::parse(&config).unwrap_err();
    assert!(
        error.to_string().contains("invalid value: integer `-1`"),
        "{error}"
    );

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.mbh.json");
    // Not UTF-8: a format error of the file, not an I/O error.
    std::fs::write(&path, b"{\"format\": \"mbhybrid-sites\xff\"}").unwrap();
    let error = SiteTable::read(&path).unwrap_err();
    assert!(
        matches!(
            error,
            SiteTableError::Format {
                reason: SiteFormatError::Json(_),
                ..
            }
        ),
        "{error}"
    );
    let text = error.to_string();
    assert!(text.contains("app.mbh.json"), "{text}");
    assert!(text.contains("build the program again"), "{text}");
    std::fs::write(&path, r#"{"format":"mbhybrid-sites","version":7}"#).unwrap();
    let text = SiteTable::read(&path).unwrap_err().to_string();
    assert!(text.contains("version 7"), "{text}");
}
