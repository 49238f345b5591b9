//! Tests of IR loading and MPI call-site discovery on `.ll` fixtures and on
//! real clang-16 output.

use std::path::{Path, PathBuf};
use std::process::Command;

use inkwell::context::Context;
use mbh_static::{indirect_calls, mpi_call_sites, LoadError, Module, SourceLocation};

mod analysis;
mod buffers;
mod divergence;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// `(callee, function, file relative to base, line, column)` of each site.
fn summary(module: &Module<'_>, base: &Path) -> Vec<(String, String, String, u32, u32)> {
    mpi_call_sites(module)
        .into_iter()
        .map(|site| {
            let loc = site
                .location
                .expect("every call in the fixture has a location");
            (
                site.callee,
                site.function,
                loc.file_from(base).display().to_string(),
                loc.line,
                loc.column,
            )
        })
        .collect()
}

fn row(
    callee: &str,
    function: &str,
    file: &str,
    line: u32,
    column: u32,
) -> (String, String, String, u32, u32) {
    (callee.into(), function.into(), file.into(), line, column)
}

/// The sites of `fixtures/app.c`, in module order: clang emits `main`
/// first, then the static functions it called, in order of first use.
fn app_sites() -> Vec<(String, String, String, u32, u32)> {
    vec![
        row("MPI_Init", "main", "app.c", 16, 3),
        row("MPI_Comm_rank", "main", "app.c", 17, 3),
        row("PMPI_Finalize", "main", "app.c", 21, 17),
        row("MPI_Send", "send_one", "app.c", 10, 10),
        row("MPI_Barrier", "sync_all", "include/util.h", 3, 3),
    ]
}

#[test]
fn finds_mpi_calls_with_locations_in_fixture() {
    let context = Context::create();
    let module = Module::load(&context, &fixture("app.ll")).unwrap();
    assert_eq!(module.source_file_name(), "app.c");
    assert_eq!(summary(&module, Path::new("/home/user/proj")), app_sites());

    // As recorded: directory joined with the file name, `./` kept.
    let sites = mpi_call_sites(&module);
    let barrier = sites[4].location.as_ref().unwrap();
    assert_eq!(
        barrier.file,
        PathBuf::from("/home/user/proj/./include/util.h")
    );
    // Outside the base directory the path stays absolute.
    assert_eq!(
        barrier.file_from(Path::new("/home/user/other")),
        PathBuf::from("/home/user/proj/include/util.h")
    );
}

#[test]
fn sites_point_at_their_call_instructions() {
    let context = Context::create();
    let module = Module::load(&context, &fixture("app.ll")).unwrap();
    for site in mpi_call_sites(&module) {
        let text = site.instruction.to_string();
        assert!(text.contains(&format!("@{}(", site.callee)), "{text}");
        let parent = site.instruction.get_parent().unwrap().get_parent().unwrap();
        assert_eq!(parent.get_name().to_str().unwrap(), site.function);
    }
}

#[test]
fn lists_indirect_calls_separately() {
    let context = Context::create();
    let module = Module::load(&context, &fixture("app.ll")).unwrap();
    let indirect = indirect_calls(&module);
    assert_eq!(indirect.len(), 1);
    assert_eq!(indirect[0].function, "main");
    let loc = indirect[0].location.as_ref().unwrap();
    assert_eq!((loc.line, loc.column), (21, 10));
    // The pointer held PMPI_Finalize, but statically it is not a site.
    assert_eq!(mpi_call_sites(&module).len(), 5);
}

#[test]
fn loads_bitcode_like_text() {
    let context = Context::create();
    let text = Module::load(&context, &fixture("app.ll")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Not named .bc: the loader goes by content.
    let bc = dir.path().join("app.ir");
    assert!(text.llvm().write_bitcode_to_path(&bc));
    let other = Context::create();
    let module = Module::load(&other, &bc).unwrap();
    assert_eq!(summary(&module, Path::new("/home/user/proj")), app_sites());
}

const NO_DEBUG_INFO: &str = r#"
declare i32 @MPI_Send(ptr, i32, i32, i32, i32, i32)
declare i32 @PMPI_Wait(ptr, ptr)
declare i32 @mpi_send_(ptr)
declare i32 @__gxx_personality_v0(...)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
@MPI_Isend = alias i32 (ptr, i32, i32, i32, i32, i32), ptr @impl

define i32 @impl(ptr %b, i32 %c, i32 %t, i32 %d, i32 %g, i32 %m) {
  ret i32 0
}

define i32 @f(ptr %buf, ptr %fp) personality ptr @__gxx_personality_v0 {
entry:
  call void @llvm.memset.p0.i64(ptr %buf, i8 0, i64 4, i1 false)
  %a = call i32 @MPI_Send(ptr %buf, i32 1, i32 2, i32 3, i32 4, i32 5)
  %b = call i32 @mpi_send_(ptr %buf)
  %c = call i32 @MPI_Isend(ptr %buf, i32 1, i32 2, i32 3, i32 4, i32 5)
  %d = call i32 %fp()
  call void asm sideeffect "nop", ""()
  %e = invoke i32 @PMPI_Wait(ptr %buf, ptr null) to label %ok unwind label %lp
ok:
  ret i32 %a
lp:
  %x = landingpad { ptr, i32 } cleanup
  resume { ptr, i32 } %x
}
"#;

#[test]
fn direct_calls_aliases_and_invokes_without_debug_info() {
    let context = Context::create();
    let module = Module::parse(&context, "nodebug.ll", NO_DEBUG_INFO.as_bytes()).unwrap();
    let sites = mpi_call_sites(&module);
    let callees: Vec<&str> = sites.iter().map(|s| s.callee.as_str()).collect();
    assert_eq!(callees, ["MPI_Send", "MPI_Isend", "PMPI_Wait"]);
    assert!(sites
        .iter()
        .all(|s| s.function == "f" && s.location.is_none()));
    // The inline asm and the intrinsic are not indirect calls.
    assert_eq!(indirect_calls(&module).len(), 1);
    assert_eq!(module.origin(), Path::new("nodebug.ll"));
}

#[test]
fn rejects_garbage_with_llvm_diagnostic() {
    let context = Context::create();
    let err = Module::parse(&context, "bad.ll", b"define oops").unwrap_err();
    match &err {
        LoadError::Parse { path, message } => {
            assert_eq!(path, Path::new("bad.ll"));
            assert!(message.contains("error"), "{message}");
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.starts_with("cannot parse bad.ll as LLVM IR: "),
        "{text}"
    );
}

#[test]
fn rejects_ir_the_verifier_rejects() {
    // Parses, but %a uses %b before %b is defined.
    let ir = "define i32 @f() {\n  %a = add i32 %b, 1\n  %b = add i32 %a, 1\n  ret i32 %a\n}\n";
    let context = Context::create();
    let err = Module::parse(&context, "cycle.ll", ir.as_bytes()).unwrap_err();
    assert!(matches!(err, LoadError::Invalid { .. }), "{err:?}");
    assert!(err.to_string().contains("dominate"), "{err}");
}

#[test]
fn missing_file_is_a_read_error_naming_it() {
    let context = Context::create();
    let err = Module::load(&context, Path::new("/nonexistent/x.ll")).unwrap_err();
    assert!(matches!(err, LoadError::Read { .. }));
    assert!(err.to_string().contains("/nonexistent/x.ll"), "{err}");
}

/// The fixture's expectations hold for what clang-16 produces today, with
/// the directory the file was compiled in.
#[test]
fn real_clang_output() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("include")).unwrap();
    std::fs::copy(fixture("app.c"), dir.path().join("app.c")).unwrap();
    std::fs::copy(fixture("include/util.h"), dir.path().join("include/util.h")).unwrap();
    for (extra, out) in [(&[][..], "app.bc"), (&["-O2"][..], "app-O2.bc")] {
        let status = Command::new("clang-16")
            .current_dir(dir.path())
            .args(["-g", "-emit-llvm", "-c", "app.c", "-o", out])
            .args(["-Xclang", "-disable-llvm-passes"])
            .args(extra)
            .status()
            .expect("clang-16 is needed (scripts/install-deps.sh installs it)");
        assert!(status.success());
        let context = Context::create();
        let module = Module::load(&context, &dir.path().join(out)).unwrap();
        assert_eq!(summary(&module, dir.path()), app_sites(), "{extra:?}");
    }
}

#[test]
fn display_path_sees_through_symlinks() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::fs::write(real.join("a.c"), "").unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    assert_eq!(
        SourceLocation::display_path(&real.join("a.c"), &link),
        PathBuf::from("a.c")
    );
}
