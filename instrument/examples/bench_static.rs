//! Times the static analysis and the instrumentation on generated C
//! programs of about 10 000 and 100 000 lines.
//!
//! ```text
//! cargo run --release -p mbh-instrument --example bench_static [LINES...]
//! ```
//!
//! Each program is made of files of about 10 000 lines, each a sequence of
//! MPI "phases" (a master collecting by sender in a loop, a loop whose
//! received value decides a branch, worker sends, a barrier) plus plain
//! computation loops. It prints one Markdown table row per size: the clang
//! front end (`-g -emit-llvm`, two files at a time), loading the IR,
//! [`mbh_static::analyze`], inserting markers and site ids, and the whole
//! [`mbh_instrument::analyze`] call (front end included).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use inkwell::context::Context;
use mbh_instrument::{insert_markers, insert_site_ids, AnalyzeRequest};
use mbh_static::{AnalysisInput, Module, MpiConstants};
use rayon::prelude::*;

const LINES_PER_FILE: usize = 10_000;

/// One phase: about 40 lines.
fn phase(out: &mut String, file: usize, k: usize) {
    let tag = (file * 1000 + k) % 30000;
    write!(
        out,
        r#"
static int helper_{file}_{k}(int x) {{
  int s = 0;
  for (int i = 0; i < x % 17; i++)
    s += (i * {k}) ^ x;
  return s;
}}

int phase_{file}_{k}(int rank, int size) {{
  int results[64] = {{0}};
  int acc = helper_{file}_{k}(rank);
  if (rank == 0) {{
    for (int i = 1; i < size; i++) {{
      int v;
      MPI_Status st;
      MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, {tag}, MPI_COMM_WORLD, &st);
      results[st.MPI_SOURCE % 64] = v;
    }}
    for (int i = 0; i < 64; i++)
      acc += results[i] * (i + {k});
    for (int j = 1; j < size; j++) {{
      int w;
      MPI_Recv(&w, 1, MPI_INT, MPI_ANY_SOURCE, {tag} + 1, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      if (w > acc)
        acc = w;
    }}
  }} else {{
    int v = rank * {k};
    MPI_Send(&v, 1, MPI_INT, 0, {tag}, MPI_COMM_WORLD);
    MPI_Send(&v, 1, MPI_INT, 0, {tag} + 1, MPI_COMM_WORLD);
  }}
  MPI_Barrier(MPI_COMM_WORLD);
  return acc;
}}
"#
    )
    .unwrap();
}

/// Writes a program of about `lines` lines into `dir`: files of about
/// [`LINES_PER_FILE`] lines each ([`write_part`]), then the `main.c` that
/// calls all their phases ([`write_main`]). Returns its files.
fn generate(dir: &Path, lines: usize) -> Vec<PathBuf> {
    let files = lines.div_ceil(LINES_PER_FILE).max(1);
    let per_file = lines / files;
    let mut sources = Vec::new();
    let mut phases = Vec::new();
    for file in 0..files {
        sources.push(write_part(dir, file, per_file, &mut phases));
    }
    sources.push(write_main(dir, &phases));
    sources
}

/// Writes `part{file}.c`, phases until it has `per_file` lines, and adds
/// the names of its phase functions to `phases`.
fn write_part(dir: &Path, file: usize, per_file: usize, phases: &mut Vec<String>) -> PathBuf {
    let mut text = String::from("#include <mpi.h>\n#include <stdio.h>\n");
    let mut k = 0;
    while text.lines().count() < per_file {
        phase(&mut text, file, k);
        phases.push(format!("phase_{file}_{k}"));
        k += 1;
    }
    let path = dir.join(format!("part{file}.c"));
    std::fs::write(&path, text).unwrap();
    path
}

/// The start of `main`, up to the calls of the phases.
const MAIN_START: &str = concat!(
    "int main(int argc, char **argv) {\n",
    "  int rank, size, acc = 0;\n",
    "  MPI_Init(&argc, &argv);\n",
    "  MPI_Comm_rank(MPI_COMM_WORLD, &rank);\n",
    "  MPI_Comm_size(MPI_COMM_WORLD, &size);\n",
);

/// Writes `main.c`: a declaration of each of `phases`, and a `main` that
/// calls them all in order between `MPI_Init` and `MPI_Finalize`.
fn write_main(dir: &Path, phases: &[String]) -> PathBuf {
    let mut main = String::from("#include <mpi.h>\n#include <stdio.h>\n");
    for p in phases {
        writeln!(main, "int {p}(int rank, int size);").unwrap();
    }
    main.push_str(MAIN_START);
    for p in phases {
        writeln!(main, "  acc += {p}(rank, size);").unwrap();
    }
    main.push_str("  printf(\"%d\\n\", acc);\n  MPI_Finalize();\n  return 0;\n}\n");
    let path = dir.join("main.c");
    std::fs::write(&path, main).unwrap();
    path
}

fn mpi_compile_flags() -> Vec<String> {
    let out = Command::new("mpicc")
        .arg("-show-compile-info")
        .output()
        .expect("mpicc");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

fn clang(args: &[String], src: &Path, out: &Path, extra: &[&str]) {
    let status = Command::new("clang-16")
        .args(args)
        .args(extra)
        .arg(src)
        .arg("-o")
        .arg(out)
        .status()
        .expect("clang-16");
    assert!(status.success(), "clang failed on {}", src.display());
}

fn secs(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64())
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number of lines"))
        .collect();
    let sizes = if sizes.is_empty() {
        vec![10_000, 100_000]
    } else {
        sizes
    };
    let flags = mpi_compile_flags();
    println!(
        "| lines | files | functions | loops | wildcard sites | clang -emit-llvm (s) | load IR (s) \
         | analyze (s) | markers + site ids (s) | `analyze()` end to end (s) |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for lines in sizes {
        let dir = tempfile::tempdir().unwrap();
        let sources = generate(dir.path(), lines);
        let total_lines: usize = sources
            .iter()
            .map(|s| std::fs::read_to_string(s).unwrap().lines().count())
            .sum();

        let probe_c = dir.path().join("probe.c");
        std::fs::write(&probe_c, MpiConstants::PROBE_C).unwrap();
        let probe_ll = dir.path().join("probe.ll");
        clang(&flags, &probe_c, &probe_ll, &["-S", "-emit-llvm"]);

        let start = Instant::now();
        let irs: Vec<PathBuf> = sources
            .par_iter()
            .map(|s| {
                let out = s.with_extension("bc");
                clang(
                    &flags,
                    s,
                    &out,
                    &["-g", "-c", "-emit-llvm", "-Xclang", "-disable-llvm-passes"],
                );
                out
            })
            .collect();
        let frontend = start.elapsed();

        let context = Context::create();
        let consts = MpiConstants::from_probe(&Module::load(&context, &probe_ll).unwrap()).unwrap();
        let start = Instant::now();
        let modules: Vec<Module<'_>> = irs
            .iter()
            .map(|ir| Module::load(&context, ir).unwrap())
            .collect();
        let load = start.elapsed();
        let inputs: Vec<AnalysisInput<'_, '_>> = modules
            .iter()
            .zip(&sources)
            .map(|(module, source)| AnalysisInput { module, source })
            .collect();
        let start = Instant::now();
        let analysis = mbh_static::analyze(&inputs, &consts, dir.path());
        let analyze = start.elapsed();
        let start = Instant::now();
        for (module, plan) in modules.iter().zip(&analysis.modules) {
            insert_markers(module, plan, &Default::default()).unwrap();
            insert_site_ids(module, &plan.sites, plan.first_site_id).unwrap();
        }
        let instrument = start.elapsed();
        let report = &analysis.report;
        drop(modules);

        let start = Instant::now();
        mbh_instrument::analyze(&AnalyzeRequest {
            sources: sources.clone(),
            cc_flags: Vec::new(),
            base_dir: dir.path().to_owned(),
            zone_bounds: Vec::new(),
            mpi: None,
        })
        .unwrap();
        let end_to_end = start.elapsed();

        println!(
            "| {total_lines} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            sources.len(),
            report.functions.len(),
            report.loops.len(),
            report.wildcards.len(),
            secs(frontend),
            secs(load),
            secs(analyze),
            secs(instrument),
            secs(end_to_end),
        );
    }
}
