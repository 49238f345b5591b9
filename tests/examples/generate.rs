//! Prints the generated C program of a seed:
//! `cargo run -p mbh-tests --example generate -- SEED > p.c` (the first line
//! of stderr is its number of ranks).

use mbh_tests::generator::Program;

fn main() {
    let seed = std::env::args()
        .nth(1)
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(0);
    let program = Program::generate(seed);
    eprintln!("np {}", program.np());
    print!("{}", program.to_c());
}
