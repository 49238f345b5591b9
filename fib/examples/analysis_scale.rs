//! Post-run analysis at scale: times what `verify` and
//! `audit-barriers` compute from a finished run's traces, on synthetic
//! traces of many ranks, phase by phase, with the peak memory of each.
//!
//! ```text
//! cargo run --release -p mbh-fib --example analysis_scale -- [RANKS] [CALLS] [--dir DIR] [--skip PHASE,...]
//! ```
//!
//! `RANKS` (default 1024) ranks make about `CALLS` (default 10000) MPI
//! calls each. A child process (this program with `--generate-only`)
//! writes the traces to `DIR` (default a directory under the system's
//! temporary directory, removed at the end) in the runtime's binary format
//! (`TraceWriter`), so the generator's memory is not counted; this process
//! then reads them back (`RankTrace::read_decoded`, as `verify` does) and
//! runs each analysis on them, printing a Markdown table. `--skip` leaves
//! phases out (`events`, `deadlock`, `buffering`, `hazard`, `fib`,
//! `oracle`). The deadlock check, the buffering analysis and the oracle
//! print a digest of their answer: a change that keeps the digests of
//! the old build on every size keeps the answers.
//!
//! # The program the traces record
//!
//! The ranks form a 2-D torus (`px` x `py`, `px` the largest divisor of
//! `RANKS` at most its square root; both must be at least 3, so that the
//! four neighbours are distinct). Each step, every rank:
//!
//! 1. posts `MPI_Irecv` from its four neighbours (tag 1), then `MPI_Isend`
//!    to them, then `MPI_Waitall` on the eight requests (receives first);
//! 2. on every 10th step (the 5th of each ten), `FAN_IN` workers (rotating
//!    over ranks 1.., 16 or fewer) `MPI_Send` a result to rank 0 (tag 2),
//!    which takes them with as many `MPI_Recv(MPI_ANY_SOURCE, 2)`: the
//!    wildcard receives;
//! 3. calls `MPI_Allreduce` every 10th step and `MPI_Barrier` every 50th.
//!
//! The records are those the runtime writes (`runtime/src/wrap.rs`,
//! `engine/complete.rs`, `engine/mod.rs`): a `Waitall` names its first
//! request and is followed, per request, by a `Completed` record (sends
//! first, then receives in the order they were posted) and, for a
//! receive, a `Matched` record naming the send's record; the `Irecv`
//! records get the status. A wildcard receive is followed by its
//! `WildcardClock`, `Matched` and `PotentialMatch` records, with Lamport
//! clocks computed by the runtime's LLCP rules (`runtime/src/llcp.rs`:
//! only rank 0's wildcard receives tick; receives and collectives merge).
//! Collectives carry `tag` = 1 + their sequence number.

use mbh_analysis::{find_buffering_hazard, find_deadlock, potential_senders_and_indices};
use mbh_fib::{audit, Coverage, Options, Verdict};
use mbh_trace::op::flags;
use mbh_trace::rank_trace::{Op, RankState, RawOp, TraceWriter, WildcardEvent, WORLD_COMM};
use mbh_trace::{OpKind, RankTrace};
use rayon::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// `MPI_COMM_WORLD` as MPICH spells it (renamed on reading).
const WORLD: u64 = 0x4400_0000;
/// `MPI_ANY_SOURCE` as MPICH spells it.
const ANY_SOURCE: i32 = -2;
/// `MPI_DOUBLE` as MPICH spells it.
const DOUBLE: u64 = 0x4c00_080b;
/// MPICH request handles, recycled every step as MPICH recycles them.
const REQUEST: u64 = 0xac00_0000;
/// Steps between master rounds (wildcard receives on rank 0).
const MASTER_EVERY: usize = 10;
/// Workers reporting to rank 0 per master round (at most).
const FAN_IN: usize = 16;
/// Steps between `MPI_Allreduce` calls.
const ALLREDUCE_EVERY: usize = 10;
/// Steps between `MPI_Barrier` calls.
const BARRIER_EVERY: usize = 50;
/// Halo calls per step: 4 `Irecv`, 4 `Isend`, a `Waitall`.
const HALO_CALLS: usize = 9;

/// Call sites.
mod site {
    pub const IRECV: u32 = 1;
    pub const ISEND: u32 = 2;
    pub const WAITALL: u32 = 3;
    pub const ALLREDUCE: u32 = 4;
    pub const BARRIER: u32 = 5;
    pub const SEND: u32 = 6;
    pub const RECV: u32 = 7;
    pub const INIT: u32 = 8;
    pub const FINALIZE: u32 = 9;
}

struct Args {
    ranks: usize,
    calls: usize,
    dir: Option<PathBuf>,
    skip: Vec<String>,
    generate_only: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        ranks: 1024,
        calls: 10_000,
        dir: None,
        skip: Vec::new(),
        generate_only: false,
    };
    let mut positional = 0;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--dir" => args.dir = Some(it.next().ok_or("--dir needs a directory")?.into()),
            "--skip" => {
                let list = it.next().ok_or("--skip needs phases")?;
                args.skip.extend(list.split(',').map(str::to_string));
            }
            "--generate-only" => args.generate_only = true,
            _ => {
                let n: usize = arg.parse().map_err(|_| format!("not a number: {arg}"))?;
                match positional {
                    0 => args.ranks = n,
                    1 => args.calls = n,
                    _ => return Err(format!("unexpected argument {arg}")),
                }
                positional += 1;
            }
        }
    }
    Ok(args)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("analysis_scale: {e}\nusage: analysis_scale [RANKS] [CALLS] [--dir DIR] [--skip PHASE,...]");
            return ExitCode::from(2);
        }
    };
    let (dir, temporary) = match &args.dir {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!(
                "mbh-analysis-scale-{}-{}",
                args.ranks,
                std::process::id()
            )),
            true,
        ),
    };
    if args.generate_only {
        return match generate(args.ranks, args.calls, &dir) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("analysis_scale: {e}");
                ExitCode::from(2)
            }
        };
    }
    let started = Instant::now();
    let status = std::env::current_exe().and_then(|exe| {
        std::process::Command::new(exe)
            .arg(args.ranks.to_string())
            .arg(args.calls.to_string())
            .arg("--dir")
            .arg(&dir)
            .arg("--generate-only")
            .status()
    });
    match status {
        Ok(s) if s.success() => {}
        other => {
            eprintln!("analysis_scale: the generator failed: {other:?}");
            return ExitCode::from(2);
        }
    }
    eprintln!(
        "generated {} ranks' traces in {:.1} s in {}",
        args.ranks,
        started.elapsed().as_secs_f64(),
        dir.display()
    );
    let ok = analyse(args.ranks, &dir, &args.skip);
    if temporary {
        let _ = std::fs::remove_dir_all(&dir);
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

// ---------------------------------------------------------------------
// Generation
// ---------------------------------------------------------------------

/// A wildcard event of rank 0 with its final clock (LLCP's `DoneEvent`).
struct Done {
    event: u32,
    end: u64,
    matched: i32,
    /// Senders reported as potential matches (the runtime remembers 4).
    reported: Vec<i32>,
}

/// One rank's trace being written, and its Lamport clock.
struct Gen {
    ops: Vec<RawOp>,
    clock: u64,
    collectives: i32,
    events: u32,
    done: Vec<Done>,
}

impl Gen {
    fn push(&mut self, mut op: RawOp) -> u64 {
        let index = self.ops.len() as u64;
        op.index = index;
        op.flags |= flags::RETURNED;
        self.ops.push(op);
        index
    }
}

/// The torus' shape.
fn torus(ranks: usize) -> Result<(usize, usize), String> {
    let px = (1..=ranks)
        .take_while(|d| d * d <= ranks)
        .filter(|d| ranks.is_multiple_of(*d))
        .max()
        .unwrap_or(1);
    let py = ranks / px;
    if px < 3 || py < 3 {
        return Err(format!(
            "{ranks} ranks make a {px} x {py} torus: both sides must be at least 3"
        ));
    }
    Ok((px, py))
}

/// Neighbours of `r`: left, right, up, down.
fn neighbours(r: usize, (px, py): (usize, usize)) -> [usize; 4] {
    let (x, y) = (r % px, r / px);
    [
        y * px + (x + px - 1) % px,
        y * px + (x + 1) % px,
        ((y + py - 1) % py) * px + x,
        ((y + 1) % py) * px + x,
    ]
}

/// Where `r` is in the neighbour list of its `j`-th neighbour.
const OPPOSITE: [usize; 4] = [1, 0, 3, 2];

fn steps_for(calls: usize) -> usize {
    let per_step = HALO_CALLS as f64 + 1.0 / ALLREDUCE_EVERY as f64 + 1.0 / BARRIER_EVERY as f64;
    ((calls.saturating_sub(2)) as f64 / per_step)
        .round()
        .max(1.0) as usize
}

/// Writes the traces of `ranks` ranks making about `calls` calls each to
/// `dir`: `MPI_Init`, then per step the halo exchange, a master round
/// every [`MASTER_EVERY`] steps and the collectives, then
/// `MPI_Finalize` (the program of the module's docs).
fn generate(ranks: usize, calls: usize, dir: &Path) -> Result<(), String> {
    let shape = torus(ranks)?;
    let steps = steps_for(calls);
    let mut g: Vec<Gen> = (0..ranks)
        .map(|_| Gen {
            ops: Vec::with_capacity(calls * 23 / 10),
            clock: 0,
            collectives: 0,
            events: 0,
            done: Vec::new(),
        })
        .collect();
    for r in &mut g {
        r.push(RawOp {
            kind: OpKind::Init as u16,
            site: site::INIT,
            comm: WORLD,
            ..RawOp::default()
        });
    }
    let mut halo = Halo::new(shape, ranks);
    let mut round = 0;
    for step in 0..steps {
        let before: Vec<u64> = g.iter().map(|r| r.clock).collect();
        halo.post(&mut g);
        halo.complete(&mut g, &before);
        // A master round: a few workers report to rank 0, which takes
        // them with wildcard receives.
        if ranks > 1 && step % MASTER_EVERY == MASTER_EVERY / 2 {
            master_round(&mut g, round);
            round += 1;
        }
        collectives(&mut g, step);
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (rank, gen) in g.into_iter().enumerate() {
        let mut gen = gen;
        gen.push(RawOp {
            kind: OpKind::Finalize as u16,
            site: site::FINALIZE,
            ..RawOp::default()
        });
        write_trace(dir, rank, ranks, &gen.ops)?;
    }
    Ok(())
}

/// The halo exchange of one step on the torus: every rank's neighbours,
/// and the record indices of the step's `Irecv`s and `Isend`s (per rank,
/// per neighbour), which the `Waitall` records name.
struct Halo {
    nbrs: Vec<[usize; 4]>,
    irecv: Vec<[u64; 4]>,
    isend: Vec<[u64; 4]>,
}

impl Halo {
    fn new(shape: (usize, usize), ranks: usize) -> Self {
        Halo {
            nbrs: (0..ranks).map(|r| neighbours(r, shape)).collect(),
            irecv: vec![[0u64; 4]; ranks],
            isend: vec![[0u64; 4]; ranks],
        }
    }

    /// Every rank posts its `MPI_Irecv`s from its four neighbours, then
    /// its `MPI_Isend`s to them.
    fn post(&mut self, g: &mut [Gen]) {
        // The halo exchange: receives posted, then sends.
        for (r, gen) in g.iter_mut().enumerate() {
            for (j, &q) in self.nbrs[r].iter().enumerate() {
                self.irecv[r][j] = gen.push(RawOp {
                    kind: OpKind::Irecv as u16,
                    site: site::IRECV,
                    peer: q as i32,
                    tag: 1,
                    comm: WORLD,
                    count: 64,
                    request: REQUEST + j as u64,
                    aux: DOUBLE,
                    ..RawOp::default()
                });
            }
            for (j, &q) in self.nbrs[r].iter().enumerate() {
                self.isend[r][j] = gen.push(RawOp {
                    kind: OpKind::Isend as u16,
                    site: site::ISEND,
                    peer: q as i32,
                    tag: 1,
                    comm: WORLD,
                    count: 64,
                    request: REQUEST + 4 + j as u64,
                    aux: DOUBLE,
                    ..RawOp::default()
                });
            }
        }
    }

    /// Every rank's `MPI_Waitall` on the eight requests: its `Completed`
    /// records, each receive's `Matched` record naming the neighbour's
    /// send (whose clock was `before[q]` when the step began), the status
    /// on the `Irecv` record, and the merged clock.
    fn complete(&self, g: &mut [Gen], before: &[u64]) {
        for (r, gen) in g.iter_mut().enumerate() {
            let waitall = gen.push(RawOp {
                kind: OpKind::Waitall as u16,
                site: site::WAITALL,
                count: 8,
                request: REQUEST,
                aux: self.irecv[r][0] + 1,
                ..RawOp::default()
            });
            // Sends complete first (the runtime orders receives by their
            // posting and puts the rest before them), then receives.
            for &send in &self.isend[r] {
                gen.push(RawOp {
                    kind: OpKind::Completed as u16,
                    site: site::WAITALL,
                    request: waitall,
                    aux: send,
                    ..RawOp::default()
                });
            }
            for (j, &q) in self.nbrs[r].iter().enumerate() {
                gen.push(RawOp {
                    kind: OpKind::Completed as u16,
                    site: site::WAITALL,
                    request: waitall,
                    aux: self.irecv[r][j],
                    ..RawOp::default()
                });
                gen.push(RawOp {
                    kind: OpKind::Matched as u16,
                    request: waitall,
                    peer: q as i32,
                    aux: self.isend[q][OPPOSITE[j]],
                    comm: before[q],
                    count: -1,
                    ..RawOp::default()
                });
                let op = &mut gen.ops[self.irecv[r][j] as usize];
                op.flags |= flags::HAS_STATUS;
                op.matched_source = q as i32;
                op.matched_tag = 1;
                gen.clock = gen.clock.max(before[q]);
            }
        }
    }
}

/// Master round `round`: a few workers (rotating over ranks 1.., at most
/// [`FAN_IN`]) report to rank 0, which takes them with wildcard receives
/// ([`master_receive`]). Needs two ranks or more.
fn master_round(g: &mut [Gen], round: usize) {
    let ranks = g.len();
    let fan_in = FAN_IN.min(ranks - 1);
    let mut senders: Vec<usize> = (0..fan_in)
        .map(|j| 1 + (round * fan_in + j) % (ranks - 1))
        .collect();
    senders.sort_unstable();
    senders.dedup();
    let mut sent = Vec::new();
    for &w in &senders {
        let index = g[w].push(RawOp {
            kind: OpKind::Send as u16,
            site: site::SEND,
            peer: 0,
            tag: 2,
            comm: WORLD,
            count: 1,
            aux: DOUBLE,
            ..RawOp::default()
        });
        sent.push((w as i32, index, g[w].clock));
    }
    let master = &mut g[0];
    for (w, index, message) in sent {
        master_receive(master, w, index, message);
    }
}

/// The collectives of `step`: `MPI_Allreduce` every [`ALLREDUCE_EVERY`]
/// steps, `MPI_Barrier` every [`BARRIER_EVERY`]; each leaves every rank
/// with the largest clock.
fn collectives(g: &mut [Gen], step: usize) {
    let collectives = [
        (step % ALLREDUCE_EVERY == ALLREDUCE_EVERY - 1)
            .then_some((OpKind::Allreduce, site::ALLREDUCE)),
        (step % BARRIER_EVERY == BARRIER_EVERY - 1).then_some((OpKind::Barrier, site::BARRIER)),
    ];
    for (kind, at) in collectives.into_iter().flatten() {
        // Every member's data reaches every member (rule R5).
        let max = g.iter().map(|r| r.clock).max().unwrap_or(0);
        for gen in g.iter_mut() {
            gen.collectives += 1;
            let tag = gen.collectives;
            gen.push(RawOp {
                kind: kind as u16,
                site: at,
                tag,
                comm: WORLD,
                count: if kind == OpKind::Barrier { 0 } else { 1 },
                aux: if kind == OpKind::Barrier { 0 } else { DOUBLE },
                ..RawOp::default()
            });
            gen.clock = max;
        }
    }
}

/// Rank 0's `MPI_Recv(MPI_ANY_SOURCE, 2)` taking `w`'s send `index`, whose
/// message carried clock `message`: the records the runtime writes, with
/// LLCP's rules R4 (the event takes the clock and advances it) and
/// `FindPotentialMatches` (Fig 5.20).
fn master_receive(master: &mut Gen, w: i32, index: u64, message: u64) {
    let recv = master.push(RawOp {
        kind: OpKind::Recv as u16,
        flags: flags::ANY_SOURCE | flags::HAS_STATUS,
        site: site::RECV,
        peer: ANY_SOURCE,
        tag: 2,
        comm: WORLD,
        count: 1,
        matched_source: w,
        matched_tag: 2,
        aux: DOUBLE,
        ..RawOp::default()
    });
    let event = master.events;
    master.events += 1;
    let end = master.clock;
    master.clock += 1;
    master.push(RawOp {
        kind: OpKind::WildcardClock as u16,
        count: event as i32,
        request: recv,
        comm: end,
        aux: end,
        peer: w,
        tag: 2,
        ..RawOp::default()
    });
    master.done.push(Done {
        event,
        end,
        matched: w,
        reported: Vec::new(),
    });
    master.push(RawOp {
        kind: OpKind::Matched as u16,
        request: recv,
        peer: w,
        aux: index,
        comm: message,
        count: event as i32,
        ..RawOp::default()
    });
    if master.clock > message {
        let from = master.done.partition_point(|d| d.end < message);
        let mut potential = Vec::new();
        for d in &mut master.done[from..] {
            if d.end >= end {
                break;
            }
            // Same communicator and tag, a wildcard, another sender.
            if d.matched == w {
                continue;
            }
            let first = !d.reported.contains(&w);
            if first && d.reported.len() < 4 {
                d.reported.push(w);
            }
            if first {
                potential.push((d.event, message));
            }
        }
        for (event, clock) in potential {
            master.push(RawOp {
                kind: OpKind::PotentialMatch as u16,
                count: event as i32,
                peer: w,
                aux: clock,
                request: recv,
                ..RawOp::default()
            });
        }
    }
    master.clock = master.clock.max(message);
}

fn write_trace(dir: &Path, rank: usize, size: usize, ops: &[RawOp]) -> Result<(), String> {
    let len = TraceWriter::file_len(ops.len() as u64) as usize;
    let mut words = vec![0u64; len.div_ceil(8)];
    // SAFETY: `words` is 8-aligned, `len` bytes long, and outlives the
    // writer; nothing else touches it meanwhile.
    let mut writer = unsafe { TraceWriter::from_raw(words.as_mut_ptr().cast(), len) }
        .ok_or("cannot wrap the buffer")?;
    writer.init_header(rank as i32, size as i32, 10_000 + rank as u32, 0);
    for op in ops {
        writer
            .append(*op)
            .ok_or("the buffer is full (a bug of this program)")?;
    }
    writer.set_state(RankState::Finalized);
    let bytes: &[u8] = bytemuck_bytes(&words, len);
    let path = dir.join(format!("rank-{rank}.trace"));
    std::fs::write(&path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn bytemuck_bytes(words: &[u64], len: usize) -> &[u8] {
    // SAFETY: any u64 is 8 initialised bytes; `len` <= 8 * words.len().
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), len) }
}

// ---------------------------------------------------------------------
// Analysis
// ---------------------------------------------------------------------

/// Peak resident memory (`VmHWM`) in MiB, and the current one (`VmRSS`).
fn memory() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// Resets `VmHWM` to the current RSS (Linux 4.0+), so each phase's peak
/// is its own.
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// CPU time of this process so far (user + system, all threads), in
/// seconds: on a machine shared with other work it says more than the
/// wall clock.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces): state is
    // field 3, utime and stime fields 14 and 15, in clock ticks (100 Hz).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (tick(11) + tick(12)) / 100.0
}

struct Table {
    total: f64,
    cpu: f64,
    peak: f64,
}

/// A phase's wall-clock and CPU seconds.
struct Took {
    wall: f64,
    cpu: f64,
}

impl Table {
    fn row(&mut self, phase: &str, took: Took, result: &str) {
        let (peak, rss) = memory();
        self.total += took.wall;
        self.cpu += took.cpu;
        self.peak = self.peak.max(peak);
        println!(
            "| {phase} | {:.2} | {:.2} | {peak:.0} | {rss:.0} | {result} |",
            took.wall, took.cpu
        );
        let _ = std::io::stdout().flush();
    }
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Took) {
    reset_peak();
    let (t, cpu) = (Instant::now(), cpu_seconds());
    let out = f();
    let took = Took {
        wall: t.elapsed().as_secs_f64(),
        cpu: cpu_seconds() - cpu,
    };
    (out, took)
}

/// Reads the traces back and runs each analysis not in `skip` on them,
/// printing a row of the table per phase; false if an analysis answered
/// wrongly (the traces have no deadlock and no hazard) or the traces could
/// not be read.
fn analyse(ranks: usize, dir: &Path, skip: &[String]) -> bool {
    let run = |phase: &str| !skip.iter().any(|s| s == phase);
    let mut table = Table {
        total: 0.0,
        cpu: 0.0,
        peak: 0.0,
    };
    println!("| phase | wall (s) | CPU (s) | peak RSS in phase (MiB) | RSS after (MiB) | result |");
    println!("| --- | --- | --- | --- | --- | --- |");
    let (traces, took) = timed(|| read_traces(ranks, dir));
    let mut traces = match traces {
        Ok(t) => t,
        Err(e) => {
            eprintln!("analysis_scale: {e}");
            return false;
        }
    };
    table.row(
        "read and decode the traces",
        took,
        &trace_summary(&traces, ranks),
    );
    let mut ok = true;
    if run("events") {
        events_phase(&traces, &mut table);
    }
    if run("deadlock") {
        let found_right;
        (traces, found_right) = deadlock_phase(traces, ranks, &mut table);
        ok &= found_right;
    }
    if run("buffering") {
        ok &= buffering_phase(&traces, &mut table);
    }
    if run("fib") {
        traces = fib_phase(traces, &mut table);
    }
    if run("oracle") {
        oracle_phase(&traces, &mut table);
    }
    // Last: `verify` runs no such analysis after the others (a run that
    // finished has no hazard but in a program that relies on buffering),
    // and what it leaves to the allocator would weigh on their peaks.
    if run("hazard") {
        ok &= hazard_phase(traces, &mut table).1;
    }
    println!(
        "| **total** | **{:.2}** | **{:.2}** | **{:.0}** (largest phase peak) | | |",
        table.total, table.cpu, table.peak
    );
    ok
}

/// Reads and decodes `rank-0.trace` ... of `dir`, as `verify` does (in
/// parallel: `mbh_verdict::read_traces`); a damaged or truncated trace is
/// an error.
fn read_traces(ranks: usize, dir: &Path) -> Result<Vec<RankTrace>, String> {
    (0..ranks)
        .into_par_iter()
        .map(|rank| {
            let path = dir.join(format!("rank-{rank}.trace"));
            let decoded = RankTrace::read_decoded(&path).map_err(|e| e.to_string())?;
            if decoded.truncated.is_some() || decoded.damaged.is_some() {
                return Err(format!("{} is damaged", path.display()));
            }
            Ok(decoded.trace)
        })
        .collect::<Result<Vec<RankTrace>, String>>()
}

/// How many records and MPI calls (records other than clocks) the traces
/// hold.
fn trace_summary(traces: &[RankTrace], ranks: usize) -> String {
    let records: usize = traces.iter().map(|t| t.ops.len()).sum();
    let calls: usize = traces
        .iter()
        .flat_map(|t| &t.ops)
        .filter(|op| op.kind.class() != mbh_trace::op::OpClass::Clock)
        .count();
    format!(
        "{records} records, {calls} MPI calls ({:.0} per rank)",
        calls as f64 / ranks as f64
    )
}

/// Phase `events`: the wildcard events of every rank.
fn events_phase(traces: &[RankTrace], table: &mut Table) {
    let (events, took) = timed(|| {
        traces
            .iter()
            .flat_map(|t| t.wildcard_events())
            .collect::<Vec<WildcardEvent>>()
    });
    table.row("wildcard events", took, &format!("{} events", events.len()));
}

/// Phase `deadlock`: the deadlock check on the final snapshot (no
/// deadlock: every rank finalized) and on the worst case the monitor
/// meets (every rank blocked: a deadlock of all). Gives the traces back
/// as they came, and whether both answers were right.
fn deadlock_phase(
    traces: Vec<RankTrace>,
    ranks: usize,
    table: &mut Table,
) -> (Vec<RankTrace>, bool) {
    let mut ok = true;
    // The final snapshot, as the monitor's last look sees it.
    let mut snapshot: Vec<Option<RankTrace>> = traces.into_iter().map(Some).collect();
    let (found, took) = timed(|| find_deadlock(&snapshot));
    ok &= found.is_none();
    table.row(
        "deadlock check, final snapshot",
        took,
        if found.is_none() {
            "no deadlock (every rank finalized)"
        } else {
            "DEADLOCK (wrong)"
        },
    );
    // The worst case the monitor meets: every rank blocked, instead of
    // finalizing, in a receive from the next rank that nobody sent.
    let saved = block_every_rank(&mut snapshot, ranks);
    let (found, took) = timed(|| find_deadlock(&snapshot));
    ok &= found.is_some();
    table.row(
        "deadlock check, all ranks blocked",
        took,
        &match &found {
            Some(d) => format!(
                "deadlock of {} ranks, answer digest {:016x}",
                d.ranks().len(),
                digest(d)
            ),
            None => "no deadlock (wrong)".to_string(),
        },
    );
    drop(found);
    unblock_every_rank(&mut snapshot, saved);
    (snapshot.into_iter().flatten().collect(), ok)
}

/// Makes every rank of `snapshot` blocked, instead of finalizing, in an
/// `MPI_Recv` from the next rank (of `ranks`) that nobody sent. Returns
/// the `MPI_Finalize` records taken off, for [`unblock_every_rank`].
fn block_every_rank(snapshot: &mut [Option<RankTrace>], ranks: usize) -> Vec<Option<Op>> {
    snapshot
        .iter_mut()
        .flatten()
        .map(|t| {
            let finalize = t.ops.pop();
            let index = t.ops.len() as u64;
            let mut recv = Op::new(index, OpKind::Recv);
            recv.peer = (t.rank + 1) % ranks as i32;
            recv.tag = 99;
            recv.comm = WORLD_COMM;
            recv.count = 1;
            recv.site = 10;
            t.ops.push(recv);
            t.blocking = Some(index);
            t.end.state = RankState::Running;
            finalize
        })
        .collect()
}

/// Undoes [`block_every_rank`]: the blocked receives go, the finalize
/// records `saved` come back.
fn unblock_every_rank(snapshot: &mut [Option<RankTrace>], saved: Vec<Option<Op>>) {
    for (t, finalize) in snapshot.iter_mut().flatten().zip(saved) {
        t.ops.pop();
        t.ops.extend(finalize);
        t.blocking = None;
        t.end.state = RankState::Finalized;
    }
}

/// Phase `buffering`: the buffering analysis; true if it rightly finds
/// no hazard.
fn buffering_phase(traces: &[RankTrace], table: &mut Table) -> bool {
    let (hazard, took) = timed(|| find_buffering_hazard(traces));
    table.row(
        "buffering analysis",
        took,
        &match &hazard {
            None => format!("no hazard, answer digest {:016x}", digest(&hazard)),
            Some(_) => "HAZARD (wrong)".to_string(),
        },
    );
    hazard.is_none()
}

/// Phase `hazard`: the buffering analysis on the same traces with a ring
/// of standard sends added before every `MPI_Finalize` (rank `r` sends to
/// `r + 1`, then receives from `r - 1`: a run that finished only because
/// the sends were buffered), so that the whole run is replayed before
/// every rank gets stuck and the witness has a cycle of all ranks. Gives
/// the traces back as they came, and whether it rightly found a hazard of
/// every rank.
fn hazard_phase(mut traces: Vec<RankTrace>, table: &mut Table) -> (Vec<RankTrace>, bool) {
    let saved = add_send_ring(&mut traces);
    let (hazard, took) = timed(|| find_buffering_hazard(&traces));
    let right = hazard
        .as_ref()
        .is_some_and(|h| h.stuck.len() == traces.len() && h.cycle.len() == traces.len());
    table.row(
        "buffering analysis, a ring of sends at the end",
        took,
        &match &hazard {
            Some(h) => format!(
                "hazard of {} ranks{}, answer digest {:016x}",
                h.stuck.len(),
                if right { "" } else { " (wrong)" },
                digest(&hazard)
            ),
            None => "no hazard (wrong)".to_string(),
        },
    );
    drop(hazard);
    remove_send_ring(&mut traces, saved);
    (traces, right)
}

/// Puts, before every rank's `MPI_Finalize` record (the last), an
/// `MPI_Send` to the next rank, then an `MPI_Recv` from the previous one
/// with its `Matched` record naming that rank's send (tag 99). Returns the
/// `MPI_Finalize` records taken off, for [`remove_send_ring`].
fn add_send_ring(traces: &mut [RankTrace]) -> Vec<Option<Op>> {
    let size = traces.len() as i32;
    let finalize: Vec<Option<Op>> = traces.iter_mut().map(|t| t.ops.pop()).collect();
    let send_at: Vec<u64> = traces.iter().map(|t| t.ops.len() as u64).collect();
    for t in traces.iter_mut() {
        let (next, previous) = ((t.rank + 1) % size, (t.rank + size - 1) % size);
        let at = t.ops.len() as u64;
        let mut send = Op::new(at, OpKind::Send);
        send.flags = flags::RETURNED;
        send.peer = next;
        send.tag = 99;
        send.comm = WORLD_COMM;
        send.count = 1;
        send.site = 11;
        let mut recv = Op::new(at + 1, OpKind::Recv);
        recv.flags = flags::RETURNED | flags::HAS_STATUS;
        recv.peer = previous;
        recv.tag = 99;
        recv.comm = WORLD_COMM;
        recv.count = 1;
        recv.site = 12;
        recv.matched = Some((previous, 99));
        let mut matched = Op::new(at + 2, OpKind::Matched);
        matched.request = at + 1;
        matched.peer = previous;
        matched.aux = send_at[previous as usize];
        matched.count = -1;
        t.ops.extend([send, recv, matched]);
    }
    for (t, last) in traces.iter_mut().zip(&finalize) {
        if let Some(last) = last {
            let mut last = last.clone();
            last.index = t.ops.len() as u64;
            t.ops.push(last);
        }
    }
    finalize
}

/// Undoes [`add_send_ring`].
fn remove_send_ring(traces: &mut [RankTrace], saved: Vec<Option<Op>>) {
    for (t, finalize) in traces.iter_mut().zip(saved) {
        let keep = t.ops.len() - 3 - usize::from(finalize.is_some());
        t.ops.truncate(keep);
        t.ops.extend(finalize);
    }
}

/// Phase `fib`: the barrier audit of the traces as one complete,
/// deadlock-free exploration, with each barrier's verdict and a digest of
/// every verdict with its evidence and path (an A/B check of a change to
/// Fib). Gives the traces back.
fn fib_phase(traces: Vec<RankTrace>, table: &mut Table) -> Vec<RankTrace> {
    let runs = vec![traces];
    let full = Coverage {
        complete: true,
        deadlock_free: true,
    };
    let (result, took) = timed(|| audit(&runs, full, &Options::default()));
    let verdicts: Vec<String> = result
        .barriers
        .iter()
        .map(|b| format!("site {}: {}", b.site, verdict_text(&b.verdict)))
        .collect();
    table.row(
        "Fib (barrier audit)",
        took,
        &format!(
            "{} nodes, {} wildcard receives; {}; verdict digest {:016x}",
            result.stats.nodes,
            result.stats.wildcard_receives,
            verdicts.join("; "),
            digest(&result.barriers)
        ),
    );
    runs.into_iter().next().unwrap_or_default()
}

/// A barrier's verdict in a word, with an unknown one's reason cut to 160
/// characters.
fn verdict_text(verdict: &Verdict) -> String {
    match verdict {
        Verdict::Relevant { .. } => "relevant".to_string(),
        Verdict::Irrelevant => "irrelevant".to_string(),
        Verdict::Unknown(why) => {
            let why = format!("{why:?}");
            format!("unknown: {}", why.chars().take(160).collect::<String>())
        }
    }
}

/// Phase `oracle`: the matches-before oracle's potential senders of every
/// wildcard event, with a digest of its answer (an A/B check of a change
/// to it).
fn oracle_phase(traces: &[RankTrace], table: &mut Table) {
    let (found, took) = timed(|| potential_senders_and_indices(traces, false));
    let senders: usize = found.iter().map(|m| m.senders.len()).sum();
    table.row(
        "matches-before oracle",
        took,
        &format!(
            "{} events, {senders} potential senders, answer digest {:016x}",
            found.len(),
            digest(&found)
        ),
    );
}

/// A hash of a value's `Debug` text: two builds of the oracle give the
/// same answer on the same traces when their digests agree (an A/B check
/// of a change to it, without keeping the answers).
fn digest(value: &impl std::fmt::Debug) -> u64 {
    use std::hash::Hasher;
    struct Digest(std::collections::hash_map::DefaultHasher);
    impl std::fmt::Write for Digest {
        fn write_str(&mut self, text: &str) -> std::fmt::Result {
            self.0.write(text.as_bytes());
            Ok(())
        }
    }
    let mut out = Digest(std::collections::hash_map::DefaultHasher::new());
    let _ = std::fmt::Write::write_fmt(&mut out, format_args!("{value:?}"));
    out.0.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranks(n: usize) -> Vec<Gen> {
        (0..n)
            .map(|_| Gen {
                ops: Vec::new(),
                clock: 0,
                collectives: 0,
                events: 0,
                done: Vec::new(),
            })
            .collect()
    }

    #[test]
    fn the_torus_needs_three_a_side() {
        assert_eq!(torus(9), Ok((3, 3)));
        assert_eq!(torus(12), Ok((3, 4)));
        assert!(torus(8).is_err());
        assert_eq!(neighbours(4, (3, 3)), [3, 5, 1, 7]);
    }

    #[test]
    fn every_halo_receive_names_the_send_of_its_neighbour() {
        let mut g = ranks(9);
        let halo = {
            let mut halo = Halo::new((3, 3), 9);
            halo.post(&mut g);
            halo
        };
        let before: Vec<u64> = (0..9).collect();
        halo.complete(&mut g, &before);
        for (r, gen) in g.iter().enumerate() {
            // 4 Irecv, 4 Isend, Waitall, 4 Completed sends, then per
            // receive a Completed and a Matched.
            assert_eq!(gen.ops.len(), HALO_CALLS + 4 + 8, "rank {r}");
            let matched: Vec<&RawOp> = gen
                .ops
                .iter()
                .filter(|op| op.kind == OpKind::Matched as u16)
                .collect();
            assert_eq!(matched.len(), 4);
            for m in matched {
                let send = &g[m.peer as usize].ops[m.aux as usize];
                assert_eq!(send.kind, OpKind::Isend as u16);
                assert_eq!(send.peer, r as i32, "rank {r} receives what was sent to it");
                assert_eq!(m.comm, before[m.peer as usize]);
            }
            assert_eq!(
                gen.clock,
                *halo.nbrs[r].iter().map(|&q| &before[q]).max().unwrap()
            );
        }
    }

    #[test]
    fn a_master_round_ends_in_as_many_wildcard_receives() {
        let mut g = ranks(9);
        master_round(&mut g, 0);
        let sends = g[1..].iter().map(|gen| gen.ops.len()).sum::<usize>();
        assert_eq!(sends, 8, "every worker of 8 sends once");
        let wildcards = g[0]
            .ops
            .iter()
            .filter(|op| op.kind == OpKind::Recv as u16 && op.peer == ANY_SOURCE)
            .count();
        assert_eq!(wildcards, 8);
        assert_eq!(g[0].events, 8);
    }

    #[test]
    fn a_ring_of_sends_is_a_hazard_of_every_rank_and_is_undone() {
        let dir = tempfile::tempdir().unwrap();
        generate(9, 300, dir.path()).unwrap();
        let mut traces = read_traces(9, dir.path()).unwrap();
        let text = format!("{traces:?}");
        assert!(find_buffering_hazard(&traces).is_none());
        let saved = add_send_ring(&mut traces);
        let hazard = find_buffering_hazard(&traces).expect("a hazard");
        assert_eq!(hazard.ranks(), (0..9).collect::<Vec<i32>>());
        assert_eq!(hazard.cycle.len(), 9);
        assert!(hazard.stuck.iter().all(|s| s.kind == OpKind::Send));
        remove_send_ring(&mut traces, saved);
        assert_eq!(format!("{traces:?}"), text);
    }

    #[test]
    fn blocking_every_rank_is_undone() {
        let dir = tempfile::tempdir().unwrap();
        generate(9, 300, dir.path()).unwrap();
        let traces = read_traces(9, dir.path()).unwrap();
        let text = format!("{traces:?}");
        let mut snapshot: Vec<Option<RankTrace>> = traces.into_iter().map(Some).collect();
        assert!(find_deadlock(&snapshot).is_none());
        let saved = block_every_rank(&mut snapshot, 9);
        assert_eq!(find_deadlock(&snapshot).map(|d| d.ranks().len()), Some(9));
        unblock_every_rank(&mut snapshot, saved);
        let back: Vec<RankTrace> = snapshot.into_iter().flatten().collect();
        assert_eq!(format!("{back:?}"), text);
    }
}
