//! End-to-end tests of `build`: real clang, real `mpicc` flags, real
//! `mpiexec -n 2`.
//!
//! The runtime is `target/debug/libmbhybrid_rt.so` when the workspace has
//! built it, and otherwise a stand-in compiled here that only defines the
//! site register. Tests that must see what the runtime sees use a "spy"
//! runtime of their own that wraps a few MPI calls and prints the site id
//! each call found in the register.
//!
//! Only one test runs `mpiexec` at a time ([`MPIEXEC`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use std::collections::HashMap;

use inkwell::context::Context;
use inkwell::values::{InstructionOpcode, InstructionValue};
use mbh_instrument::{
    analyze, build, insert_markers, insert_site_ids, AnalyzeRequest, BuildError, BuildOutput,
    BuildRequest, MarkerCounts, ZoneBound, RUNTIME_LIB,
};
use mbh_static::{mpi_call_sites, AnalysisInput, Module, Placement};
use mbh_trace::static_report::{LoopDecision, LoopMarker};
use mbh_trace::{Site, SiteTable};

/// Held while a test runs `mpiexec`.
static MPIEXEC: Mutex<()> = Mutex::new(());

/// A fresh temporary directory named after the calling test.
macro_rules! workdir {
    ($name:expr) => {
        tempfile::Builder::new()
            .prefix(concat!("mbh-instrument-", $name, "-"))
            .tempdir()
            .unwrap()
    };
}

/// The directory cargo put this test binary's crates in (`target/debug`).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(Path::parent).unwrap().to_owned()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

/// Compiles `source` (C) into `dir/libmbhybrid_rt.so` with `mpicc`.
fn shared_library(dir: &Path, source: &str) -> PathBuf {
    let lib_dir = dir.join("rt");
    let c = write(&lib_dir, "rt.c", source);
    let status = Command::new("mpicc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(lib_dir.join(RUNTIME_LIB))
        .arg(&c)
        .status()
        .unwrap();
    assert!(status.success(), "compiling the stand-in runtime failed");
    lib_dir
}

/// The workspace's runtime if it is built, else a stand-in defining only
/// the site register.
fn runtime_dir(dir: &Path) -> PathBuf {
    let built = target_dir();
    if built.join(RUNTIME_LIB).is_file() {
        eprintln!("using the workspace runtime in {}", built.display());
        return built;
    }
    eprintln!("no {RUNTIME_LIB} in {}: using a stand-in", built.display());
    shared_library(dir, STAND_IN)
}

/// What every stand-in runtime defines: the site register, the heap
/// notes `build` inserts around allocations (issue 18) and the access
/// checks' bounds and check (issue 19), which do nothing.
const STAND_IN: &str = "unsigned mbhybrid_site;\n\
void mbhybrid_note_alloc(void *block, unsigned long size) { (void)block; (void)size; }\n\
void mbhybrid_note_free(void *block) { (void)block; }\n\
unsigned long mbhybrid_pending_hi = 0, mbhybrid_pending_lo = ~0UL, mbhybrid_pending_gap_lo = 0, mbhybrid_pending_gap_hi = 0;\n\
void mbhybrid_check_access(const void *a, unsigned long n, unsigned k) { (void)a; (void)n; (void)k; }\n";

/// A runtime that prints, for a few calls, the site id it finds.
const SPY: &str = r#"
#include <mpi.h>
#include <stdio.h>
void mbhybrid_note_alloc(void *block, unsigned long size) { (void)block; (void)size; }
void mbhybrid_note_free(void *block) { (void)block; }
unsigned long mbhybrid_pending_hi = 0, mbhybrid_pending_lo = ~0UL, mbhybrid_pending_gap_lo = 0, mbhybrid_pending_gap_hi = 0;
void mbhybrid_check_access(const void *a, unsigned long n, unsigned k) { (void)a; (void)n; (void)k; }
unsigned mbhybrid_site;
static void note(const char *call) {
  fprintf(stderr, "spy %s %u\n", call, mbhybrid_site);
}
int MPI_Comm_rank(MPI_Comm comm, int *rank) {
  note("MPI_Comm_rank");
  return PMPI_Comm_rank(comm, rank);
}
int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag,
             MPI_Comm comm) {
  note("MPI_Send");
  return PMPI_Send(buf, count, type, dest, tag, comm);
}
int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag,
             MPI_Comm comm, MPI_Status *status) {
  note("MPI_Recv");
  return PMPI_Recv(buf, count, type, source, tag, comm, status);
}
int MPI_Finalize(void) {
  note("MPI_Finalize");
  return PMPI_Finalize();
}
"#;

/// The program: rank 0 sends a token to rank 1, which sends it back
/// doubled; the exchange lives in a second file.
const MAIN_C: &str = r#"#include <mpi.h>
#include <stdio.h>
#include "lib/exchange.h"

int main(int argc, char **argv) {
  int rank, unused;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int token = exchange(rank, 21);
  if (rank == 0)
    printf("token %d\n", token);
  MPI_Finalize();
  return rank == 0 && token != 42;
}
"#;

const EXCHANGE_H: &str = "int exchange(int rank, int value);\n";

const EXCHANGE_C: &str = r#"#include <mpi.h>
#include "exchange.h"

int exchange(int rank, int value) {
  if (rank == 0) {
    MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    MPI_Recv(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    value *= 2;
    MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  return value;
}
"#;

fn site(id: u32, function: &str, call: &str, file: &str, line: u32, column: u32) -> Site {
    Site {
        id,
        function: function.into(),
        call: call.into(),
        file: file.into(),
        line,
        column,
    }
}

/// The program's sites: main.c's first, then lib/exchange.c's.
fn expected_sites() -> Vec<Site> {
    vec![
        site(1, "main", "MPI_Init", "main.c", 7, 3),
        site(2, "main", "MPI_Comm_rank", "main.c", 8, 3),
        site(3, "main", "MPI_Finalize", "main.c", 12, 3),
        site(4, "exchange", "MPI_Send", "lib/exchange.c", 6, 5),
        site(5, "exchange", "MPI_Recv", "lib/exchange.c", 7, 5),
        site(6, "exchange", "MPI_Recv", "lib/exchange.c", 9, 5),
        site(7, "exchange", "MPI_Send", "lib/exchange.c", 11, 5),
    ]
}

/// Writes the program into `dir` and returns its sources.
fn program(dir: &Path) -> Vec<PathBuf> {
    write(dir, "lib/exchange.h", EXCHANGE_H);
    vec![
        write(dir, "main.c", MAIN_C),
        write(dir, "lib/exchange.c", EXCHANGE_C),
    ]
}

fn request(
    dir: &Path,
    sources: Vec<PathBuf>,
    runtime_dir: PathBuf,
    flags: &[&str],
) -> BuildRequest {
    BuildRequest {
        output: dir.join("app"),
        sources,
        cc_flags: flags.iter().map(|f| f.to_string()).collect(),
        runtime_dir,
        base_dir: dir.to_owned(),
        zone_bounds: Vec::new(),
        mpi: None,
        access_checks: true,
    }
}

/// What `mpiexec -n 2 exe` did.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn mpiexec(dir: &Path, exe: &Path) -> Run {
    let _one_at_a_time = MPIEXEC.lock().unwrap_or_else(|e| e.into_inner());
    let out = dir.join("mpiexec.out");
    let err = dir.join("mpiexec.err");
    let mut child = Command::new("mpiexec")
        // `cargo test` puts target/debug/deps, which holds the workspace's
        // runtime, on LD_LIBRARY_PATH, and that would win over the
        // executable's RUNPATH (the runtime it was built against).
        .env_remove("LD_LIBRARY_PATH")
        .args(["-n", "2"])
        .arg(exe)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("mpiexec is installed (scripts/install-deps.sh)");
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("mpiexec -n 2 {} did not finish in 120 s", exe.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        code: status.code(),
        stdout: std::fs::read_to_string(out).unwrap(),
        stderr: std::fs::read_to_string(err).unwrap(),
    }
}

/// The site ids the spy runtime printed for `call`, sorted.
fn spied(run: &Run, call: &str) -> Vec<u32> {
    let mut ids: Vec<u32> = run
        .stderr
        .lines()
        .filter_map(|line| line.strip_prefix("spy "))
        .filter_map(|rest| rest.strip_prefix(call)?.trim().parse().ok())
        .collect();
    ids.sort_unstable();
    ids
}

fn check_table(out: &BuildOutput, dir: &Path) {
    assert_eq!(out.executable, dir.join("app"));
    assert_eq!(out.site_table_path, dir.join("app.mbh.json"));
    assert_eq!(out.sites.sites, expected_sites());
    assert_eq!(out.sites.program, dir.join("app").to_string_lossy());
    assert_eq!(
        out.sites.sources,
        [
            dir.join("main.c").to_string_lossy(),
            dir.join("lib/exchange.c").to_string_lossy()
        ]
    );
    assert_eq!(SiteTable::read(&out.site_table_path).unwrap(), out.sites);
}

#[test]
fn builds_and_runs_an_mpi_program() {
    let dir = workdir!("run");
    let runtime = runtime_dir(dir.path());
    let req = request(dir.path(), program(dir.path()), runtime, &["-Wall"]);
    let out = build(&req).unwrap_or_else(|e| panic!("{e}"));
    check_table(&out, dir.path());
    // `unused` in main.c: clang's warning comes back verbatim.
    assert!(
        out.warnings
            .contains("main.c:6:13: warning: unused variable 'unused'"),
        "{}",
        out.warnings
    );
    // Nothing but the executable and its table is left behind.
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    let expected_left: &[&str] = if req.runtime_dir.starts_with(dir.path()) {
        &["app", "app.mbh.json", "lib", "main.c", "rt"]
    } else {
        &["app", "app.mbh.json", "lib", "main.c"]
    };
    assert_eq!(left, expected_left);

    let run = mpiexec(dir.path(), &out.executable);
    assert_eq!(
        run.code,
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
    assert_eq!(run.stdout, "token 42\n");
}

/// The runtime's wrappers are the ones called, and each finds its own
/// call's id in the register, without and with optimization.
#[test]
fn the_runtime_sees_each_call_site_id() {
    let dir = workdir!("spy");
    let spy = shared_library(dir.path(), SPY);
    for flags in [&[][..], &["-O2"][..]] {
        let req = request(dir.path(), program(dir.path()), spy.clone(), flags);
        let out = build(&req).unwrap_or_else(|e| panic!("{e}"));
        check_table(&out, dir.path());
        let run = mpiexec(dir.path(), &out.executable);
        assert_eq!(
            run.code,
            Some(0),
            "{flags:?}\n{}\n{}",
            run.stdout,
            run.stderr
        );
        assert_eq!(
            spied(&run, "MPI_Comm_rank"),
            [2, 2],
            "{flags:?}\n{}",
            run.stderr
        );
        // Rank 0 sends at 4 and receives at 5; rank 1 receives at 6 and
        // sends at 7.
        assert_eq!(spied(&run, "MPI_Send"), [4, 7], "{flags:?}\n{}", run.stderr);
        assert_eq!(spied(&run, "MPI_Recv"), [5, 6], "{flags:?}\n{}", run.stderr);
        assert_eq!(
            spied(&run, "MPI_Finalize"),
            [3, 3],
            "{flags:?}\n{}",
            run.stderr
        );
    }
}

/// `.ll` input is instrumented as it is; its sites keep the file names
/// its debug information records.
#[test]
fn builds_from_ir() {
    let dir = workdir!("ir");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ring.ll");
    let runtime = runtime_dir(dir.path());
    let req = request(dir.path(), vec![fixture], runtime, &[]);
    let out = build(&req).unwrap_or_else(|e| panic!("{e}"));
    let calls: Vec<(&str, &str, u32)> = out
        .sites
        .sites
        .iter()
        .map(|s| (s.call.as_str(), s.file.as_str(), s.line))
        .collect();
    let file = "/home/user/proj/ring.c";
    assert_eq!(
        calls,
        [
            ("MPI_Init", file, 9),
            ("MPI_Comm_rank", file, 10),
            ("MPI_Comm_size", file, 11),
            ("MPI_Send", file, 13),
            ("MPI_Recv", file, 14),
            ("MPI_Finalize", file, 17),
        ]
    );
    assert!(out.executable.is_file());
}

/// C++ goes through clang++-16 and `mpicxx`'s flags (MPICH's `mpi.h`
/// pulls in its C++ bindings, which need `-lmpichcxx`).
#[test]
fn builds_and_runs_cxx() {
    let dir = workdir!("cxx");
    let source = write(
        dir.path(),
        "ring.cpp",
        include_str!("../../tests/programs/cxx/ring.cpp"),
    );
    let runtime = runtime_dir(dir.path());
    let req = request(dir.path(), vec![source], runtime, &["-O1"]);
    let out = build(&req).unwrap_or_else(|e| panic!("{e}"));
    let calls: Vec<(&str, &str, u32)> = out
        .sites
        .sites
        .iter()
        .map(|s| (s.call.as_str(), s.file.as_str(), s.line))
        .collect();
    assert_eq!(
        calls,
        [
            ("MPI_Init", "ring.cpp", 8),
            ("MPI_Comm_rank", "ring.cpp", 10),
            ("MPI_Comm_size", "ring.cpp", 11),
            ("MPI_Allgather", "ring.cpp", 13),
            ("MPI_Finalize", "ring.cpp", 14),
        ]
    );
    let run = mpiexec(dir.path(), &out.executable);
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
}

/// Compares `got` with the snapshot `fixtures/NAME`, or rewrites the
/// snapshot when `MBH_BLESS=1` (`MBH_BLESS=1 cargo test -p mbh-instrument`).
fn snapshot(name: &str, got: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    if std::env::var_os("MBH_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    if want == got {
        return;
    }
    let (want_lines, got_lines): (Vec<&str>, Vec<&str>) =
        (want.lines().collect(), got.lines().collect());
    let first = want_lines
        .iter()
        .zip(&got_lines)
        .position(|(w, g)| w != g)
        .unwrap_or(want_lines.len().min(got_lines.len()));
    let show = |lines: &[&str]| {
        lines
            .iter()
            .skip(first)
            .take(8)
            .map(|l| format!("  {l}\n"))
            .collect::<String>()
    };
    panic!(
        "{} differs from the output from line {} on (rerun with MBH_BLESS=1 to accept)\n\
         expected:\n{}got:\n{}",
        path.display(),
        first + 1,
        show(&want_lines),
        show(&got_lines)
    );
}

/// The whole instrumented module, so that any change in what is inserted
/// (or where) shows up in review.
#[test]
fn instrumented_ir_snapshot() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ring.ll");
    let context = Context::create();
    let module = Module::load(&context, &fixture).unwrap();
    let sites = mpi_call_sites(&module);
    assert_eq!(insert_site_ids(&module, &sites, 1).unwrap(), 7);
    // The module id is the path it was loaded from; keep it out.
    let text = module.llvm().print_to_string().to_string();
    let text = text.replace(env!("CARGO_MANIFEST_DIR"), "$CRATE");
    snapshot("ring.instrumented.ll", &text);
}

fn build_err(req: &BuildRequest) -> BuildError {
    match build(req) {
        Ok(out) => panic!("expected an error, built {}", out.executable.display()),
        Err(e) => e,
    }
}

#[test]
fn missing_source_is_named() {
    let dir = workdir!("missing");
    let mut sources = program(dir.path());
    sources.push(dir.path().join("nope.c"));
    let runtime = dir.path().to_owned();
    let err = build_err(&request(dir.path(), sources, runtime, &[]));
    assert!(
        matches!(err, BuildError::SourceUnreadable { .. }),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains(&format!(
            "cannot read source file {}",
            dir.path().join("nope.c").display()
        )),
        "{text}"
    );
    assert!(!dir.path().join("app.mbh.json").exists());
}

#[test]
fn syntax_error_passes_clang_output_through() {
    let dir = workdir!("syntax");
    let bad = write(dir.path(), "bad.c", "int main(void) {\n  return 0\n}\n");
    let runtime = runtime_dir(dir.path());
    let err = build_err(&request(dir.path(), vec![bad.clone()], runtime, &[]));
    let BuildError::Compile {
        file,
        command,
        stderr,
        status,
    } = &err
    else {
        panic!("expected a compile error, got {err:?}");
    };
    assert_eq!(file, &bad);
    // clang's own exit status, for compiler drivers to pass on.
    assert_eq!(*status, 1);
    assert!(command.contains("-emit-llvm"), "{command}");
    assert!(
        stderr.contains("bad.c:2:11: error: expected ';' after return statement"),
        "{stderr}"
    );
    // The message carries clang's output verbatim, after one paragraph.
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("clang could not compile {}; fix", bad.display())),
        "{text}"
    );
    assert!(text.contains(stderr.trim_end()), "{text}");
    assert!(!dir.path().join("app").exists());
}

#[test]
fn other_input_errors() {
    let dir = workdir!("errors");
    let runtime = runtime_dir(dir.path());
    let main = program(dir.path());

    let err = build_err(&request(dir.path(), vec![], runtime.clone(), &[]));
    assert!(matches!(err, BuildError::NoSources), "{err:?}");

    let object = write(dir.path(), "x.o", "");
    let err = build_err(&request(dir.path(), vec![object], runtime.clone(), &[]));
    assert!(
        matches!(err, BuildError::UnsupportedSource { .. }),
        "{err:?}"
    );

    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let err = build_err(&request(dir.path(), main.clone(), empty.clone(), &[]));
    assert!(matches!(err, BuildError::RuntimeMissing { .. }), "{err:?}");
    assert!(err.to_string().contains("cargo build --workspace"), "{err}");

    let mut req = request(dir.path(), main.clone(), runtime.clone(), &[]);
    req.output = dir.path().join("no/such/dir/app");
    assert!(matches!(build_err(&req), BuildError::OutputDir { .. }));

    // Without exchange.c the link fails, and the linker says why.
    let err = build_err(&request(dir.path(), main[..1].to_vec(), runtime, &[]));
    let BuildError::Link { stderr, .. } = &err else {
        panic!("expected a link error, got {err:?}");
    };
    assert!(
        stderr.contains("undefined reference to `exchange'"),
        "{stderr}"
    );
    assert!(err.to_string().starts_with("linking "), "{err}");
}

/// MPICH 4.0.2's constants, which the `.ll` fixtures were generated
/// against (`build` reads them from the installed `mpi.h`).
fn mpich() -> mbh_static::MpiConstants {
    mbh_static::MpiConstants {
        any_source: mbh_static::ConstValue::Int(-2),
        any_tag: mbh_static::ConstValue::Int(-1),
        proc_null: mbh_static::ConstValue::Int(-1),
        undefined: mbh_static::ConstValue::Int(-32766),
        comm_world: mbh_static::ConstValue::Int(0x4400_0000),
        comm_self: mbh_static::ConstValue::Int(0x4400_0001),
        status_size: 20,
        status_source: 8,
        status_tag: 12,
        datatypes: Vec::new(),
    }
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The `MPI_Pcontrol` calls (level and arguments) among `count` calls from
/// instruction `first` on.
fn pcontrols_from(first: Option<InstructionValue<'_>>, count: usize) -> Vec<Vec<i64>> {
    let mut out = Vec::new();
    let mut inst = first;
    while let Some(i) = inst {
        if out.len() == count || i.get_opcode() != InstructionOpcode::Call {
            break;
        }
        let text = i.to_string();
        if !text.contains("@MPI_Pcontrol(") {
            break;
        }
        let n = i.get_num_operands() - 1;
        out.push(
            (0..n)
                .map(|k| {
                    i.get_operand(k)
                        .unwrap()
                        .left()
                        .unwrap()
                        .into_int_value()
                        .get_sign_extended_constant()
                        .unwrap()
                })
                .collect(),
        );
        inst = i.get_next_instruction();
    }
    out
}

/// Checks, on the analysis of an instrumented module, that every entry
/// and exit edge of every marked loop carries its markers: at the end of
/// the edge's source or the start of its target (no edge is critical any
/// more).
fn check_markers_on_edges(plan: &mbh_static::ModulePlan<'_>) -> usize {
    let mut checked = 0;
    for edge in &plan.edges {
        let want: Vec<Vec<i64>> = edge
            .markers
            .iter()
            .map(|m| vec![i64::from(m.level), i64::from(m.id)])
            .collect();
        let got = match edge.placement {
            Placement::EndOfSource => {
                // The calls right before the terminator.
                let term = edge.from.get_terminator().unwrap();
                let mut first = term;
                for _ in 0..want.len() {
                    first = first.get_previous_instruction().unwrap();
                }
                pcontrols_from(Some(first), want.len())
            }
            Placement::StartOfTarget => {
                let mut first = edge.to.get_first_instruction();
                while let Some(i) = first {
                    if i.get_opcode() != InstructionOpcode::Phi {
                        break;
                    }
                    first = i.get_next_instruction();
                }
                pcontrols_from(first, want.len())
            }
            Placement::Split => panic!("an edge is still critical after instrumentation"),
        };
        assert_eq!(
            got,
            want,
            "edge {:?} -> {:?}",
            edge.from.get_name(),
            edge.to.get_name()
        );
        checked += 1;
    }
    checked
}

/// Markers sit on every entry and exit edge (critical ones split, `phi`s
/// kept right), the module verifies, and analysing the instrumented module
/// again finds the same loops with their markers in place.
#[test]
fn markers_on_entry_and_exit_edges() {
    let context = Context::create();
    let path = fixture("master_worker.ll");
    let module = Module::load(&context, &path).unwrap();
    let input = [AnalysisInput {
        module: &module,
        source: &path,
    }];
    let analysis = mbh_static::analyze(&input, &mpich(), Path::new("/home/user/proj"));
    let report = analysis.report.clone();
    let decisions: Vec<(u32, u32, LoopDecision, LoopMarker)> = report
        .loops
        .iter()
        .map(|l| (l.id, l.span.line, l.decision, l.marker))
        .collect();
    assert_eq!(
        decisions,
        [
            (1, 14, LoopDecision::Abstract, LoopMarker::Abstract),
            (2, 20, LoopDecision::NoWildcards, LoopMarker::None),
            (3, 23, LoopDecision::Explore, LoopMarker::Explore),
        ]
    );
    assert_eq!(
        report.loops[0].reason,
        "loop at master_worker.c:14 abstracted: the sender only indexes `results`"
    );
    assert_eq!(
        report.loops[2].reason,
        "loop at master_worker.c:23 not abstracted: the received value decides the branch at \
         master_worker.c:27"
    );
    // The barrier opens zone 2 (MPI_Init opens zone 1).
    let barrier = report.zone_by_id(2).unwrap();
    assert_eq!(barrier.name, "master_worker.c:39");
    let plan = &analysis.modules[0];
    // Loop 3 leaves through its condition and through `break`, into the
    // same block: one of the two edges is critical.
    assert!(plan
        .edges
        .iter()
        .any(|e| e.placement == Placement::Split && e.markers[0].level == 7305));
    let counts = insert_markers(&module, plan, &HashMap::from([(2, 5)])).unwrap();
    assert_eq!(
        counts,
        MarkerCounts {
            loop_markers: 5,
            split_edges: counts.split_edges,
            zone_markers: 1
        }
    );
    assert!(counts.split_edges >= 1);
    module.verify().unwrap();
    let text = module.llvm().print_to_string().to_string();
    assert!(
        text.contains("call i32 (i32, ...) @MPI_Pcontrol(i32 7301, i32 1)"),
        "{text}"
    );
    assert!(
        text.contains("call i32 (i32, ...) @MPI_Pcontrol(i32 7303, i32 2, i32 5)"),
        "{text}"
    );
    assert_eq!(
        text.matches("declare i32 @MPI_Pcontrol(i32, ...)").count(),
        1
    );

    // Again, on the instrumented module: same loops, markers on every edge.
    let again = mbh_static::analyze(&input, &mpich(), Path::new("/home/user/proj"));
    let decisions_again: Vec<(u32, u32, LoopDecision, LoopMarker)> = again
        .report
        .loops
        .iter()
        .map(|l| (l.id, l.span.line, l.decision, l.marker))
        .collect();
    assert_eq!(decisions_again, decisions);
    assert_eq!(check_markers_on_edges(&again.modules[0]), 5);
    // The zone marker follows the barrier's call.
    let barrier_call = &again.modules[0].zone_starts[1].after;
    assert_eq!(
        pcontrols_from(barrier_call.get_next_instruction(), 1),
        [vec![7303, 2, 5]]
    );
}

/// Critical edges into a loop header with `phi`s (optimised IR): the split
/// keeps one `phi` entry per edge.
#[test]
fn splits_critical_edges_with_phis() {
    let ir = r#"
declare i32 @MPI_Recv(ptr, i32, i32, i32, i32, i32, ptr)
declare void @use(i32)

define void @f(i1 %c, i32 %n) {
entry:
  %buf = alloca i32
  switch i32 %n, label %loop [ i32 0, label %done
                               i32 1, label %loop
                               i32 2, label %loop ]
loop:
  %i = phi i32 [ 0, %entry ], [ 0, %entry ], [ 0, %entry ], [ %next, %loop ]
  %r = call i32 @MPI_Recv(ptr %buf, i32 1, i32 1275069445, i32 -2, i32 0, i32 1140850688, ptr null)
  %next = add i32 %i, 1
  %more = icmp slt i32 %next, %n
  br i1 %more, label %loop, label %done
done:
  %j = phi i32 [ -1, %entry ], [ %next, %loop ]
  call void @use(i32 %j)
  ret void
}
"#;
    let context = Context::create();
    let module = Module::parse(&context, "phis.ll", ir.as_bytes()).unwrap();
    let source = PathBuf::from("phis.ll");
    let input = [AnalysisInput {
        module: &module,
        source: &source,
    }];
    let analysis = mbh_static::analyze(&input, &mpich(), Path::new("/"));
    assert_eq!(analysis.report.loops[0].decision, LoopDecision::Abstract);
    let plan = &analysis.modules[0];
    assert_eq!(plan.edges.len(), 2);
    assert!(plan.edges.iter().all(|e| e.placement == Placement::Split));
    let counts = insert_markers(&module, plan, &HashMap::new()).unwrap();
    assert_eq!(counts.split_edges, 2);
    module.verify().unwrap();
    let text = module.llvm().print_to_string().to_string();
    // One entry per incoming edge: the three `switch` edges are now one
    // edge from the new block.
    assert!(
        text.contains("%i = phi i32 [ 0, %mbh.edge ], [ %next, %loop ]"),
        "{text}"
    );
    assert!(
        text.contains("%j = phi i32 [ -1, %entry ], [ %next, %mbh.edge1 ]"),
        "{text}"
    );
    let again = mbh_static::analyze(&input, &mpich(), Path::new("/"));
    assert_eq!(check_markers_on_edges(&again.modules[0]), 2);
}

/// A runtime that prints every `MPI_Pcontrol` it sees.
const PCONTROL_SPY: &str = r#"
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
void mbhybrid_note_alloc(void *block, unsigned long size) { (void)block; (void)size; }
void mbhybrid_note_free(void *block) { (void)block; }
unsigned long mbhybrid_pending_hi = 0, mbhybrid_pending_lo = ~0UL, mbhybrid_pending_gap_lo = 0, mbhybrid_pending_gap_hi = 0;
void mbhybrid_check_access(const void *a, unsigned long n, unsigned k) { (void)a; (void)n; (void)k; }
unsigned mbhybrid_site;
int MPI_Pcontrol(const int level, ...) {
  va_list ap;
  va_start(ap, level);
  int id = va_arg(ap, int);
  int k = level == 7303 ? va_arg(ap, int) : 0;
  va_end(ap);
  int rank;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "pcontrol %d %d %d %d\n", rank, level, id, k);
  return MPI_SUCCESS;
}
"#;

fn mpiexec_n(dir: &Path, exe: &Path, np: u32) -> Run {
    let _one_at_a_time = MPIEXEC.lock().unwrap_or_else(|e| e.into_inner());
    let out = dir.join("mpiexec.out");
    let err = dir.join("mpiexec.err");
    let status = Command::new("timeout")
        .arg("120")
        .arg("mpiexec")
        .args(["-n", &np.to_string()])
        .arg(exe)
        .env_remove("LD_LIBRARY_PATH")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .status()
        .expect("mpiexec is installed (scripts/install-deps.sh)");
    Run {
        code: status.code(),
        stdout: std::fs::read_to_string(out).unwrap(),
        stderr: std::fs::read_to_string(err).unwrap(),
    }
}

/// The master/worker program, built by `build` (markers, a zone bound from
/// `mbhybrid.toml`) and by plain `mpicc`, prints the same under
/// `mpiexec -n 3`; the markers run where they should.
#[test]
fn instrumented_master_worker_computes_the_same() {
    let dir = workdir!("master-worker");
    let source = dir.path().join("master_worker.c");
    std::fs::copy(fixture("master_worker.c"), &source).unwrap();
    std::fs::write(
        dir.path().join("mbhybrid.toml"),
        "[zones]\n\"master_worker.c:39\" = 2\n",
    )
    .unwrap();

    let plain = dir.path().join("plain");
    let status = Command::new("mpicc")
        .arg(&source)
        .arg("-o")
        .arg(&plain)
        .status()
        .unwrap();
    assert!(status.success());
    let want = mpiexec_n(dir.path(), &plain, 3);
    assert_eq!(want.code, Some(0), "{}", want.stderr);
    assert_eq!(
        want.stdout, "result from 1: 1\nresult from 2: 4\nacks 2\n",
        "{}",
        want.stderr
    );

    // With the spy: the markers, in order, on each rank.
    let spy = shared_library(dir.path(), PCONTROL_SPY);
    let mut req = request(dir.path(), vec![source.clone()], spy, &["-O1"]);
    req.zone_bounds = vec![ZoneBound::parse("master_worker.c:9=-1").unwrap()];
    let out = build(&req).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.markers.zone_markers, 2);
    let analysis = out.sites.analysis.as_ref().unwrap();
    assert_eq!(analysis.loops[0].decision, LoopDecision::Abstract);
    assert_eq!(
        analysis.zones.iter().map(|z| z.bound).collect::<Vec<_>>(),
        [Some(-1), Some(2)]
    );
    assert!(out.preflight.is_empty(), "{:?}", out.preflight);
    let run = mpiexec_n(dir.path(), &out.executable, 3);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout, want.stdout);
    let mut marks: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("pcontrol "))
        .collect();
    marks.sort_by_key(|l| l.split(' ').nth(1).unwrap().to_owned()); // stable: by rank
    assert_eq!(
        marks,
        [
            "pcontrol 0 7303 1 -1",
            "pcontrol 0 7301 1 0",
            "pcontrol 0 7302 1 0",
            "pcontrol 0 7304 3 0",
            "pcontrol 0 7305 3 0",
            "pcontrol 0 7303 2 2",
            "pcontrol 1 7303 1 -1",
            "pcontrol 1 7303 2 2",
            "pcontrol 2 7303 1 -1",
            "pcontrol 2 7303 2 2",
        ],
        "{}",
        run.stderr
    );

    // With the workspace's runtime (or the stand-in when it is not built).
    let runtime = runtime_dir(dir.path());
    let req = request(dir.path(), vec![source], runtime, &[]);
    let out = build(&req).unwrap_or_else(|e| panic!("{e}"));
    let run = mpiexec_n(dir.path(), &out.executable, 3);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout, want.stdout, "{}", run.stderr);
}

/// `analyze` reports what `build` would store, and warns about calls the
/// runtime does not handle, by name and line.
#[test]
fn analyze_reports_without_building() {
    let dir = workdir!("analyze");
    let source = write(
        dir.path(),
        "persist.c",
        r#"#include <mpi.h>
int main(int argc, char **argv) {
  int x = 0;
  MPI_Request req;
  MPI_Init(&argc, &argv);
  MPI_Recv_init(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &req);
  MPI_Start(&req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  MPI_Request_free(&req);
  MPI_Finalize();
  return x;
}
"#,
    );
    let out = analyze(&AnalyzeRequest {
        sources: vec![source],
        cc_flags: vec![],
        base_dir: dir.path().to_owned(),
        zone_bounds: vec![ZoneBound::parse("persist.c:99=1").unwrap()],
        mpi: None,
    })
    .unwrap_or_else(|e| panic!("{e}"));
    // Persistent requests are supported: no pre-flight warning for them.
    assert!(
        out.preflight.iter().all(|w| !w.contains("not supported")),
        "{:?}",
        out.preflight
    );
    assert!(
        out.preflight[0].contains("names no zone"),
        "{:?}",
        out.preflight
    );
    assert_eq!(out.report.wildcards.len(), 1);
    assert_eq!(out.report.wildcards[0].source, "MPI_ANY_SOURCE");
    // Nothing written beside the source.
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1);
}

/// The whole instrumented master/worker module (markers, a zone bound and
/// site ids), so that any change in what is inserted, or where, shows up
/// in review.
#[test]
fn markers_snapshot() {
    let path = fixture("master_worker.ll");
    let context = Context::create();
    let module = Module::load(&context, &path).unwrap();
    let input = [AnalysisInput {
        module: &module,
        source: &path,
    }];
    let analysis = mbh_static::analyze(&input, &mpich(), Path::new("/home/user/proj"));
    let plan = &analysis.modules[0];
    insert_markers(&module, plan, &HashMap::from([(2, 5)])).unwrap();
    insert_site_ids(&module, &plan.sites, plan.first_site_id).unwrap();
    let text = module.llvm().print_to_string().to_string();
    let text = text.replace(env!("CARGO_MANIFEST_DIR"), "$CRATE");
    snapshot("master_worker.instrumented.ll", &text);
}
