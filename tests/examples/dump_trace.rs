//! Prints rank traces record by record, for debugging the runtime and the
//! analyses: `cargo run -p mbh-tests --example dump_trace -- TRACE...`
//! (the `rank-N.trace` files of a run kept with `verify --keep-traces`).

use mbh_trace::rank_trace::RankTrace;

fn main() {
    for path in std::env::args().skip(1) {
        match RankTrace::read(std::path::Path::new(&path)) {
            Ok(trace) => {
                println!(
                    "{path}: rank {} of {}, {:?}, blocking {:?}",
                    trace.rank, trace.size, trace.end.state, trace.blocking
                );
                for op in &trace.ops {
                    println!("  {op:?}");
                }
            }
            Err(e) => println!("{path}: {e}"),
        }
    }
}
