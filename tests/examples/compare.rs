//! Compares the guided search with the exhaustive reference on one C
//! program (a shrunk soak finding, say), as the soak does:
//! `cargo run -p mbh-tests --example compare -- FILE.c NP`.
//! Exit status 1 when they disagree.

use mbh_tests::differential::{compare, work_dir, MODES};

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(file), Some(np)) = (args.next(), args.next().and_then(|n| n.parse().ok())) else {
        eprintln!("usage: compare FILE.c NP");
        std::process::exit(2);
    };
    let source = match std::fs::read_to_string(&file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("compare: cannot read {file}: {e}");
            std::process::exit(2);
        }
    };
    match compare(&source, np, &work_dir("compare"), &MODES) {
        Ok(s) => println!(
            "equal: {} outcomes, {} guided and {} reference runs",
            s.outcomes, s.guided_runs, s.reference_runs
        ),
        Err(m) => {
            println!("MISMATCH\n{m}");
            std::process::exit(1);
        }
    }
}
