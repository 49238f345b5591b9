//! Prints, for seeds 0..N, each generated program's size and the
//! constructs it uses: `cargo run -p mbh-tests --example cover -- N`
//! (to pick the differential suite's seeds).

use mbh_tests::generator::Program;

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    for seed in 0..n {
        let p = Program::generate(seed);
        let on: Vec<&str> = p
            .features()
            .flags()
            .into_iter()
            .filter(|f| f.1)
            .map(|f| f.0)
            .collect();
        println!(
            "{seed} np={} wildcards={} size={} {}",
            p.np(),
            p.wildcards(),
            p.size(),
            on.join(",")
        );
    }
}
