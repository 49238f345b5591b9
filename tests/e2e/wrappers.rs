//! The compiler drivers `mbhybrid-cc` and `mbhybrid-c++` (issue 17): real
//! projects under `tests/projects/` built unmodified by make and CMake with
//! the drivers as their compiler, then verified; and the driver behaving as
//! the compiler does outside compiling and linking.

use crate::util::{describe, line_of};
use mbh_tests::json::Report;
use mbh_tests::{bin_dir, mbhybrid, run_mbhybrid, workspace_root};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A compiler driver beside the `mbhybrid` under test (checked to be
/// built and up to date first, as every end-to-end test does).
fn driver(name: &str) -> PathBuf {
    mbhybrid();
    let path = bin_dir().join(name);
    assert!(
        path.exists(),
        "{} is missing: `cargo build --workspace` builds it",
        path.display()
    );
    path
}

/// Runs `program ARGS` in `cwd`, as a user's shell would (without the
/// `LD_LIBRARY_PATH` cargo test sets, see `run_mbhybrid`).
fn run(program: &Path, args: &[&str], cwd: &Path) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(cwd)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()))
}

fn run_ok(program: &Path, args: &[&str], cwd: &Path) -> Output {
    let out = run(program, args, cwd);
    assert!(
        out.status.success(),
        "{} {args:?} failed\n{}",
        program.display(),
        describe(&out)
    );
    out
}

fn tool(name: &str) -> PathBuf {
    PathBuf::from(name)
}

/// What the wrapper of the MPI under test adds to compile (`link`: to
/// link) lines, asked the way that MPI's wrapper understands.
fn mpi_flags_of_wrapper(link: bool, dir: &Path) -> String {
    let ask = match (mbh_tests::mpi_under_test(), link) {
        ("openmpi", false) => "--showme:compile",
        ("openmpi", true) => "--showme:link",
        (_, false) => "-show-compile-info",
        (_, true) => "-show-link-info",
    };
    String::from_utf8(run_ok(&tool(mbh_tests::mpicc()), &[ask], dir).stdout).unwrap()
}

/// `mbhybrid verify --format json -n NP EXE`, run in `cwd` (where a build
/// tool linked it, so the site table's relative file names read as there).
fn verify(exe: &str, np: u32, cwd: &Path, runs: &Path) -> (i32, Report, Output) {
    let np = np.to_string();
    let runs = runs.to_str().unwrap();
    let out = run_mbhybrid(
        cwd,
        &[
            "verify",
            "--format",
            "json",
            "-n",
            &np,
            "--run-dir",
            runs,
            exe,
        ],
    );
    let report: Report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("verify printed no JSON report ({e})\n{}", describe(&out)));
    (out.status.code().unwrap_or(-1), report, out)
}

/// Copies the directory tree `from` to `to` (the projects are built in a
/// temporary copy, never in the work tree).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The site table of `exe`: (id, file, line, call) of each site.
fn sites(exe: &Path) -> Vec<(u32, String, u32, String)> {
    let mut table = exe.as_os_str().to_owned();
    table.push(".mbh.json");
    let text = std::fs::read_to_string(&table)
        .unwrap_or_else(|e| panic!("no site table {}: {e}", Path::new(&table).display()));
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_u64().unwrap() as u32,
                s["file"].as_str().unwrap().to_owned(),
                s["line"].as_u64().unwrap() as u32,
                s["call"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The names of the ELF sections of `file` (`readelf -SW`).
fn sections(file: &Path) -> String {
    let out = run_ok(
        &tool("readelf"),
        &["-SW", file.to_str().unwrap()],
        Path::new("."),
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The make project: objects compiled with `-MMD -MP`, two of them put in
/// `libhalo.a` by `ar`, linked with `-L. -lhalo`. Its deadlock needs rank
/// 0's wildcard receive, in the library, to take rank 2's message first.
#[test]
fn make_project_builds_with_mbhybrid_cc_and_its_library_deadlock_is_found() {
    let cc = driver("mbhybrid-cc");
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("make-halo");
    copy_tree(&workspace_root().join("tests/projects/make-halo"), &project);
    let cc_arg = format!("CC={}", cc.display());
    run_ok(&tool("make"), &[&cc_arg], &project);

    // Real objects, with the record beside the code, kept by `ar`; the
    // dependency files name the objects, as make needs.
    assert!(sections(&project.join("main.o")).contains(".mbhybrid"));
    assert!(sections(&project.join("libhalo.a")).contains(".mbhybrid"));
    let deps = std::fs::read_to_string(project.join("src/exchange.d")).unwrap();
    assert!(deps.starts_with("src/exchange.o: src/exchange.c"), "{deps}");
    assert!(deps.contains("include/halo.h"), "{deps}");
    // The record stays out of the executable.
    assert!(!sections(&project.join("halo")).contains(".mbhybrid"));

    // Every MPI call of every file, the library's included, has its own id.
    let sites = sites(&project.join("halo"));
    let ids: Vec<u32> = sites.iter().map(|s| s.0).collect();
    assert_eq!(
        ids,
        (1..=sites.len() as u32).collect::<Vec<_>>(),
        "{sites:?}"
    );
    for file in ["main.c", "src/exchange.c", "src/checksum.c"] {
        assert!(sites.iter().any(|s| s.1 == file), "{file} in {sites:?}");
    }
    let deadlock_line = line_of("tests/projects/make-halo/src/exchange.c", "deadlock here");
    assert!(
        sites
            .iter()
            .any(|s| s.1 == "src/exchange.c" && s.2 == deadlock_line && s.3 == "MPI_Recv"),
        "{sites:?}"
    );

    let _lock = mbh_tests::mpi_lock();
    let (status, report, out) = verify("./halo", 3, &project, &tmp.path().join("runs"));
    let context = describe(&out);
    assert_eq!(status, 1, "{context}");
    let deadlock = report
        .findings
        .iter()
        .find(|f| f.kind == "deadlock")
        .unwrap_or_else(|| panic!("no deadlock found\n{context}"));
    assert!(
        deadlock
            .locations
            .iter()
            .any(|l| l.file == "src/exchange.c" && l.line == deadlock_line && l.rank == 0),
        "the deadlock is at src/exchange.c:{deadlock_line} on rank 0: {deadlock:?}"
    );
    assert!(report.interleavings >= 2, "{context}");
    drop(_lock);

    // make knows what depends on what: touching the header rebuilds the
    // objects that include it, and the program is linked and
    // instrumented again.
    let before = std::fs::metadata(project.join("halo.mbh.json"))
        .unwrap()
        .modified()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let header = project.join("include/halo.h");
    let text = std::fs::read_to_string(&header).unwrap();
    std::fs::write(&header, text + "\n").unwrap();
    let out = run_ok(&tool("make"), &[&cc_arg], &project);
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(log.contains("-c src/exchange.c"), "{log}");
    let after = std::fs::metadata(project.join("halo.mbh.json"))
        .unwrap()
        .modified()
        .unwrap();
    assert!(after > before, "the site table was not written again");
}

/// The CMake project, configured with `-DCMAKE_C_COMPILER=mbhybrid-cc`:
/// CMake's compiler checks, `find_package(MPI)` (which finds that the
/// driver is an MPI compiler) and its build of a static library and an
/// executable. The failed assertion is in the library.
#[test]
fn cmake_project_builds_with_mbhybrid_cc_and_its_library_assertion_is_found() {
    let cc = driver("mbhybrid-cc");
    let tmp = tempfile::tempdir().unwrap();
    let source = workspace_root().join("tests/projects/cmake-ring");
    let build = tmp.path().join("build");
    let out = run_ok(
        &tool("cmake"),
        &[
            "-S",
            source.to_str().unwrap(),
            "-B",
            build.to_str().unwrap(),
            &format!("-DCMAKE_C_COMPILER={}", cc.display()),
            "-DCMAKE_BUILD_TYPE=Debug",
        ],
        tmp.path(),
    );
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(
        log.contains("The C compiler identification is Clang 16"),
        "{log}"
    );
    assert!(log.contains("Found MPI_C"), "{log}");
    run_ok(
        &tool("cmake"),
        &["--build", build.to_str().unwrap()],
        tmp.path(),
    );

    let ring = "tests/projects/cmake-ring/ring/ring.c";
    let sites = sites(&build.join("ring_app"));
    assert!(sites.iter().any(|s| s.1.ends_with(ring)), "{sites:?}");
    assert!(
        sites.iter().any(|s| s.1.ends_with("cmake-ring/app/main.c")),
        "{sites:?}"
    );

    let _lock = mbh_tests::mpi_lock();
    let (status, report, out) = verify("./ring_app", 3, &build, &tmp.path().join("runs"));
    let context = describe(&out);
    assert_eq!(status, 1, "{context}");
    let line = line_of(ring, "fails when the last rank");
    let assertion = report
        .findings
        .iter()
        .find(|f| f.kind == "assertion")
        .unwrap_or_else(|| panic!("no assertion found\n{context}"));
    assert!(
        assertion
            .locations
            .iter()
            .any(|l| l.file.ends_with(ring) && l.line == line && l.rank == 0),
        "the assertion is at {ring}:{line} on rank 0: {assertion:?}"
    );
}

const MPI_PROGRAM: &str = r#"#include <mpi.h>
#include <stdio.h>

int plain_twice(int x);
int archived_plus_one(int x);

int main(int argc, char **argv) {
  int rank, sum = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("result %d\n", archived_plus_one(plain_twice(sum + 20)));
  MPI_Finalize();
  return 0;
}
"#;

/// Objects and archives that a plain compiler built link as usual beside
/// the driver's (given on the command line and through a response file, as
/// CMake does for long lines), and the driver's objects link with a plain
/// `mpicc`.
#[test]
fn objects_and_archives_of_other_compilers_link_as_usual() {
    let cc = driver("mbhybrid-cc");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("main.c"), MPI_PROGRAM).unwrap();
    std::fs::write(
        dir.join("plain.c"),
        "int plain_twice(int x) { return 2 * x; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("archived.c"),
        "int archived_plus_one(int x) { return x + 1; }\n",
    )
    .unwrap();
    run_ok(&tool("clang-16"), &["-c", "plain.c", "archived.c"], dir);
    run_ok(&tool("ar"), &["rcs", "libarchived.a", "archived.o"], dir);
    run_ok(&cc, &["-O2", "-c", "main.c"], dir);
    std::fs::write(dir.join("objects.rsp"), "main.o plain.o\n").unwrap();
    // A Makefile written for a plain compiler names the MPI library itself;
    // the runtime must still come first for its MPI_* to be the ones bound.
    let mpi_link = mpi_flags_of_wrapper(true, dir);
    let mut link = vec!["-o", "app", "@objects.rsp", "-L.", "-larchived"];
    link.extend(mpi_link.split_whitespace());
    run_ok(&cc, &link, dir);

    let sites = sites(&dir.join("app"));
    assert_eq!(
        sites.iter().map(|s| s.3.as_str()).collect::<Vec<_>>(),
        ["MPI_Init", "MPI_Comm_rank", "MPI_Allreduce", "MPI_Finalize"]
    );
    assert!(sites.iter().all(|s| s.1 == "main.c"), "{sites:?}");

    // The driver's object is a real one.
    run_ok(
        &tool(mbh_tests::mpicc()),
        &["main.o", "plain.o", "libarchived.a", "-o", "plain-app"],
        dir,
    );

    let _lock = mbh_tests::mpi_lock();
    let (status, report, out) = verify("./app", 2, dir, &dir.join("runs"));
    assert_eq!(status, 0, "{}", describe(&out));
    // (0 + 1 + 20) * 2 + 1 on each rank.
    assert_eq!(
        report.runs[0].stdout.matches("result 43").count(),
        2,
        "{report:?}"
    );
}

/// A compile error reaches the user as the compiler printed it, with the
/// compiler's exit status, whether the driver compiles (`-c`) or compiles
/// and links; so does a link error.
#[test]
fn compile_and_link_errors_are_the_compilers() {
    let cc = driver("mbhybrid-cc");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("bad.c"),
        "#include <mpi.h>\nint main(void) {\n  return MPI_Init(0, 0) + oops;\n}\n",
    )
    .unwrap();
    let mpi_include = mpi_flags_of_wrapper(false, dir);
    let mut clang_args: Vec<&str> = vec!["-c", "bad.c", "-o", "bad.o"];
    clang_args.extend(mpi_include.split_whitespace());
    let clang = run(&tool("clang-16"), &clang_args, dir);
    assert!(!clang.status.success());
    let clang_stderr = String::from_utf8_lossy(&clang.stderr).into_owned();
    assert!(clang_stderr.contains("bad.c:3:27: error: use of undeclared identifier 'oops'"));

    let compiled = run(&cc, &["-c", "bad.c", "-o", "bad.o"], dir);
    assert_eq!(
        compiled.status.code(),
        clang.status.code(),
        "{}",
        describe(&compiled)
    );
    assert_eq!(String::from_utf8_lossy(&compiled.stderr), clang_stderr);
    assert!(compiled.stdout.is_empty());

    let linked = run(&cc, &["bad.c", "-o", "bad"], dir);
    assert_eq!(
        linked.status.code(),
        clang.status.code(),
        "{}",
        describe(&linked)
    );
    assert_eq!(String::from_utf8_lossy(&linked.stderr), clang_stderr);
    assert!(!dir.join("bad").exists());

    std::fs::write(
        dir.join("undefined.c"),
        "#include <mpi.h>\nint missing(void);\nint main(int c, char **v) {\n  \
         MPI_Init(&c, &v);\n  return missing();\n}\n",
    )
    .unwrap();
    let linked = run(&cc, &["undefined.c", "-o", "undefined"], dir);
    assert_eq!(linked.status.code(), Some(1), "{}", describe(&linked));
    let stderr = String::from_utf8_lossy(&linked.stderr);
    assert!(
        stderr.contains("undefined reference to `missing'"),
        "{stderr}"
    );
    assert!(stderr.ends_with("(use -v to see invocation)\n"), "{stderr}");
    // The linker's words only (the object it names is a temporary one, as
    // gcc's are for sources on a link line).
    assert!(!stderr.contains("mbhybrid-cc: error"), "{stderr}");
    assert!(!stderr.contains("fix what the linker reports"), "{stderr}");
}

/// Preprocessing, dependency generation, assembly, shared libraries and
/// the informational flags go to clang with MPI's flags, as `mpicc` sends
/// them to its compiler; MPICH's `-show` options answer as mpicc's do.
#[test]
fn other_modes_behave_as_the_compiler() {
    let cc = driver("mbhybrid-cc");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("main.c"), MPI_PROGRAM).unwrap();
    std::fs::write(dir.join("lib.c"), "#include <mpi.h>\nint lib_size(void) { int s; MPI_Comm_size(MPI_COMM_WORLD, &s); return s; }\n").unwrap();

    let mpi_include = mpi_flags_of_wrapper(false, dir);
    let shown = run_ok(&cc, &["-show-compile-info"], dir);
    assert_eq!(
        String::from_utf8_lossy(&shown.stdout).trim(),
        mpi_include.trim()
    );
    let shown = run_ok(&cc, &["-show", "-c", "main.c"], dir);
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains("clang-16 -c main.c"), "{shown}");
    assert!(shown.contains(mpi_include.trim()), "{shown}");

    // -E: the preprocessed text clang makes with the MPI include flags.
    let mut clang_args = vec!["-E", "main.c"];
    clang_args.extend(mpi_include.split_whitespace());
    let expected = run_ok(&tool("clang-16"), &clang_args, dir).stdout;
    let preprocessed = run_ok(&cc, &["-E", "main.c"], dir).stdout;
    assert_eq!(preprocessed, expected);

    // -M, and -MD -MF beside -c as make and CMake use them.
    let deps = run_ok(&cc, &["-M", "main.c"], dir);
    let deps = String::from_utf8_lossy(&deps.stdout);
    assert!(deps.starts_with("main.o: main.c"), "{deps}");
    assert!(deps.contains("mpi.h"), "{deps}");
    run_ok(
        &cc,
        &[
            "-MD",
            "-MT",
            "obj/main.c.o",
            "-MF",
            "main.d",
            "-c",
            "main.c",
            "-o",
            "main.o",
        ],
        dir,
    );
    let deps = std::fs::read_to_string(dir.join("main.d")).unwrap();
    assert!(deps.starts_with("obj/main.c.o: main.c"), "{deps}");

    // Sources compiled and linked in one command write their dependencies
    // where clang would (OUTPUT.d, naming OUTPUT).
    std::fs::write(
        dir.join("one.c"),
        "#include <mpi.h>\nint main(int c, char **v) { return MPI_Init(&c, &v); }\n",
    )
    .unwrap();
    run_ok(&cc, &["-MMD", "one.c", "-o", "one"], dir);
    let deps = std::fs::read_to_string(dir.join("one.d")).unwrap();
    assert!(deps.starts_with("one: one.c"), "{deps}");

    // -S writes assembly, -shared a shared library (MPI linked, not
    // instrumented), a compiler check's `-o /dev/null` is fine.
    run_ok(&cc, &["-S", "main.c", "-o", "main.s"], dir);
    assert!(std::fs::read_to_string(dir.join("main.s"))
        .unwrap()
        .contains("MPI_Init"));
    run_ok(&cc, &["-shared", "-fPIC", "lib.c", "-o", "liblib.so"], dir);
    let header = run_ok(&tool("readelf"), &["-h", "liblib.so"], dir);
    assert!(String::from_utf8_lossy(&header.stdout).contains("DYN"));
    run_ok(&cc, &["-c", "lib.c", "-o", "/dev/null"], dir);

    // --version and -v are clang's.
    let version = run_ok(&cc, &["--version"], dir);
    assert!(String::from_utf8_lossy(&version.stdout).contains("clang version 16"));
    let verbose = run_ok(&cc, &["-v"], dir);
    let verbose = String::from_utf8_lossy(&verbose.stderr);
    assert!(verbose.contains("mbhybrid-cc for mbhybrid"), "{verbose}");
    assert!(verbose.contains("clang version 16"), "{verbose}");

    // mpicc options that would change what is built are refused.
    let refused = run(&cc, &["-cc=gcc", "-c", "main.c"], dir);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("mbhybrid-cc: error: this compiler driver does not take `-cc=gcc`"),
        "{stderr}"
    );
    let refused = run(&cc, &["-flto", "-c", "main.c"], dir);
    assert_eq!(refused.status.code(), Some(2));
}

/// `mbhybrid-c++` compiles and links C++ with clang++ and mpicxx's flags.
#[test]
fn cxx_driver_builds_cxx_programs() {
    let cxx = driver("mbhybrid-c++");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::copy(
        workspace_root().join("tests/programs/cxx/ring.cpp"),
        dir.join("ring.cpp"),
    )
    .unwrap();
    run_ok(&cxx, &["-std=c++17", "-O1", "-c", "ring.cpp"], dir);
    run_ok(&cxx, &["ring.o", "-o", "ring"], dir);
    let sites = sites(&dir.join("ring"));
    assert!(
        sites
            .iter()
            .any(|s| s.1 == "ring.cpp" && s.3 == "MPI_Allgather"),
        "{sites:?}"
    );
    let _lock = mbh_tests::mpi_lock();
    let (status, _, out) = verify("./ring", 2, dir, &dir.join("runs"));
    assert_eq!(status, 0, "{}", describe(&out));
}

/// Objects compiled for one MPI and linked for the other would not work
/// (handles are `int`s in MPICH, pointers in Open MPI): the link is
/// refused, naming the object's source, and writes no executable.
#[test]
fn a_link_of_objects_of_two_mpis_is_refused_naming_the_file() {
    let cc = driver("mbhybrid-cc");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("main.c"), MPI_PROGRAM).unwrap();
    let with_mpi = |mpi: &str, args: &[&str]| {
        Command::new(&cc)
            .args(args)
            .current_dir(dir)
            .env_remove("LD_LIBRARY_PATH")
            .env("MBHYBRID_MPI", mpi)
            .output()
            .unwrap()
    };
    let compiled = with_mpi("openmpi", &["-c", "main.c"]);
    assert!(compiled.status.success(), "{}", describe(&compiled));
    let linked = with_mpi("mpich", &["-o", "app", "main.o"]);
    assert!(!linked.status.success(), "{}", describe(&linked));
    let stderr = String::from_utf8_lossy(&linked.stderr);
    assert!(
        stderr.contains("main.c was compiled with Open MPI's mpi.h, but this link uses MPICH"),
        "{stderr}"
    );
    assert!(!dir.join("app").exists());
}
