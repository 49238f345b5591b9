//! Prints the generated C program of a seed, optionally shrunk:
//! `cargo run -p mbh-tests --example generate -- SEED [I J ...] > p.c`
//! takes shrink candidate I of the program, then candidate J of that, and
//! so on. Stderr says the number of ranks (`np N`).

use mbh_tests::generator::Program;

fn main() {
    let mut args = std::env::args().skip(1);
    let seed = args.next().and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
    let mut program = Program::generate(seed);
    for step in args {
        let i: usize = step.parse().expect("a shrink index");
        program = program
            .shrink_candidates()
            .into_iter()
            .nth(i)
            .expect("no such shrink candidate");
    }
    eprintln!("np {}", program.np());
    print!("{}", program.to_c());
}
