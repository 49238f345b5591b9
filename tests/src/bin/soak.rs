//! The long differential soak of issue 11: `scripts/soak.sh N [START [SECS]]`
//! generates N programs (seeds START..START+N), and for each compares the
//! guided search with the exhaustive reference under both clocks and both
//! buffering modes. A mismatch prints the program and the commands that
//! reproduce it, then shrinks it (the smallest program that still
//! disagrees is written to `target/differential/shrunk-SEED.c`, ready to
//! keep as a regression test). A program whose reference needs more than
//! `REFERENCE_CAP` runs is counted as too large, never as passed. Exit
//! status 1 when any program disagreed.

use mbh_tests::differential::{compare, work_dir, Mismatch, MODES};
use mbh_tests::generator::Program;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let count: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let start: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(0);
    // Optional: start no program after this many seconds (the counts say
    // how far it got).
    let budget: Option<u64> = args.next().and_then(|a| a.parse().ok());
    let began = Instant::now();
    let (mut passed, mut failed, mut too_large) = (0u64, Vec::new(), Vec::new());
    let (mut guided, mut reference) = (0u64, 0u64);
    for seed in start..start + count {
        if budget.is_some_and(|b| began.elapsed().as_secs() >= b) {
            println!("soak: time budget spent before seed {seed}");
            break;
        }
        let program = Program::generate(seed);
        let dir = work_dir(&format!("soak-{seed}"));
        let t = Instant::now();
        match compare(&program.to_c(), program.np(), &dir, &MODES) {
            Ok(summary) if summary.too_large => {
                println!(
                    "seed {seed}: np {} too large: the reference ran {} runs without finishing, {:.1} s",
                    program.np(),
                    summary.reference_runs,
                    t.elapsed().as_secs_f64()
                );
                too_large.push(seed);
                let _ = std::fs::remove_dir_all(&dir);
            }
            Ok(summary) => {
                passed += 1;
                guided += u64::from(summary.guided_runs);
                reference += u64::from(summary.reference_runs);
                println!(
                    "seed {seed}: np {} ok: {} outcomes, {} guided and {} reference runs{}, {:.1} s",
                    program.np(),
                    summary.outcomes,
                    summary.guided_runs,
                    summary.reference_runs,
                    match summary.timed_out {
                        0 => String::new(),
                        n => format!(" ({n} ended by their timeout)"),
                    },
                    t.elapsed().as_secs_f64()
                );
                let _ = std::fs::remove_dir_all(&dir);
            }
            Err(mismatch) => {
                println!("seed {seed}: MISMATCH\n{mismatch}");
                let shrunk = shrink(program, mismatch);
                let path = work_dir("shrunk").with_file_name(format!("shrunk-{seed}.c"));
                let _ = std::fs::write(&path, &shrunk.source);
                println!("seed {seed}: shrunk to {}:\n{shrunk}", path.display());
                failed.push(seed);
            }
        }
    }
    println!(
        "soak: {passed} passed, {} failed ({failed:?}), {} too large for the reference ({too_large:?}); \
         {guided} guided and {reference} reference runs in {:.0} s",
        failed.len(),
        too_large.len(),
        began.elapsed().as_secs_f64()
    );
    std::process::exit(i32::from(!failed.is_empty()));
}

/// Greedily takes the first smaller program that still disagrees, until
/// none does.
fn shrink(mut program: Program, mut mismatch: Mismatch) -> Mismatch {
    'smaller: loop {
        for candidate in program.shrink_candidates() {
            let dir = work_dir("shrinking");
            if let Err(m) = compare(&candidate.to_c(), candidate.np(), &dir, &MODES) {
                if !m.what.contains("build failed") {
                    program = candidate;
                    mismatch = m;
                    continue 'smaller;
                }
            }
        }
        return mismatch;
    }
}
