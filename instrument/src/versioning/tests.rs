use crate::insert_access_checks;
use inkwell::context::Context;
use mbh_static::Module;

/// `@fill` makes an MPI call, then writes through its parameter in a
/// loop: checked, and the loop versioned when it calls only what cannot
/// reach MPI.
fn module_with_loop_calling(callee: &str, attrs: &str) -> String {
    format!(
        r#"
declare void @MPI_Isend(ptr)
declare double @sqrt(double)
declare void @external(ptr)

define double @pure(double %x) {{
  %r = call double @sqrt(double %x)
  ret double %r
}}

define void @sends(ptr %p) {{
  call void @MPI_Isend(ptr %p)
  ret void
}}

define void @fill(ptr %out, i64 %n) {attrs} {{
entry:
  call void @MPI_Isend(ptr null)
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %p = getelementptr double, ptr %out, i64 %i
  %v = call double @{callee}(double 2.0)
  store double %v, ptr %p
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  %last = phi i64 [ %next, %loop ]
  ret void
}}
"#
    )
}

/// Instruments `ir`; returns the module's text.
fn instrumented(ir: &str) -> String {
    let context = Context::create();
    let module = Module::parse(&context, "f.ll", ir.as_bytes()).unwrap();
    insert_access_checks(&module).unwrap();
    module.llvm().print_to_string().to_string()
}

/// The text of function `name` in `text`.
fn function<'t>(text: &'t str, name: &str) -> &'t str {
    let start = text.find(&format!("@{name}(")).unwrap();
    let end = text[start..].find("\n}\n").unwrap();
    &text[start..start + end]
}

#[test]
fn a_loop_calling_only_math_runs_unchecked_while_nothing_is_pending() {
    let text = instrumented(&module_with_loop_calling("pure", ""));
    let fill = function(&text, "fill");
    assert!(fill.contains("mbh.version:"), "{fill}");
    assert!(fill.contains("icmp eq i64 %mbh.hi"), "{fill}");
    // The clone has no check: one call, in the original loop, whose
    // three blocks are the only ones named after it.
    assert_eq!(
        fill.matches("call void @mbhybrid_check_access").count(),
        1,
        "{fill}"
    );
    assert_eq!(fill.matches("\nmbh.range").count(), 1, "{fill}");
    // The exit's phi takes the clone's value from the clone's latch.
    let exit = &fill[fill.find("\nexit:").unwrap()..];
    let phi = exit.lines().find(|l| l.contains(" = phi i64")).unwrap();
    assert_eq!(phi.matches('[').count(), 2, "{phi}");
}

#[test]
fn a_loop_that_can_reach_mpi_stays_checked() {
    for callee in ["sends_double", "external_double"] {
        let ir = module_with_loop_calling(callee, "")
            .replace("declare void @external(ptr)", "declare double @external_double(double)")
            .replace(
                "define void @sends(ptr %p) {",
                "define double @sends_double(double %x) {\n  call void @MPI_Isend(ptr null)\n  ret double %x\n}\ndefine void @sends(ptr %p) {",
            );
        let text = instrumented(&ir);
        let fill = function(&text, "fill");
        assert!(!fill.contains("mbh.version"), "{callee}: {fill}");
    }
}

/// `-O0` code (`optnone`) is versioned too: the clone has no check left
/// for an optimizer to delete.
#[test]
fn optnone_functions_are_versioned_without_the_optimizer() {
    let text = instrumented(&module_with_loop_calling("pure", "noinline optnone"));
    let fill = function(&text, "fill");
    assert!(fill.contains("mbh.version"), "{fill}");
    assert_eq!(
        fill.matches("call void @mbhybrid_check_access").count(),
        1,
        "{fill}"
    );
}

#[test]
fn a_loop_whose_value_is_used_after_it_stays_checked() {
    let ir = module_with_loop_calling("pure", "").replace(
        "  %last = phi i64 [ %next, %loop ]\n  ret void",
        "  %use = add i64 %next, 1\n  ret void",
    );
    let text = instrumented(&ir);
    assert!(!function(&text, "fill").contains("mbh.version"));
}

#[test]
fn nested_loops_are_versioned_once_around_the_outer_one() {
    let ir = r#"
declare void @MPI_Barrier(ptr)

define void @grid(ptr %out, i64 %n) {
entry:
  call void @MPI_Barrier(ptr null)
  br label %outer
outer:
  %i = phi i64 [ 0, %entry ], [ %inext, %outer.latch ]
  br label %inner
inner:
  %j = phi i64 [ 0, %outer ], [ %jnext, %inner ]
  %k = mul i64 %i, %j
  %p = getelementptr i64, ptr %out, i64 %k
  store i64 %k, ptr %p
  %jnext = add i64 %j, 1
  %jdone = icmp eq i64 %jnext, %n
  br i1 %jdone, label %outer.latch, label %inner
outer.latch:
  %inext = add i64 %i, 1
  %idone = icmp eq i64 %inext, %n
  br i1 %idone, label %exit, label %outer
exit:
  ret void
}
"#;
    let text = instrumented(ir);
    assert_eq!(text.matches("mbh.version:").count(), 1, "{text}");
}

/// A loop over an accessor (C++'s `v[i]` before inlining) that is checked
/// inside the accessor: after `-O2`, the unchecked copy must be free of
/// the accessor's inlined checks too, which shows as vectorized code.
const ACCESSOR_LOOP: &str = r#"
target triple = "x86_64-pc-linux-gnu"

define linkonce_odr double @get(ptr %v, i64 %i) {
  %p = getelementptr double, ptr %v, i64 %i
  %x = load double, ptr %p, !tbaa !1
  ret double %x
}

define void @scale(ptr %out, ptr %in, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %x = call double @get(ptr %in, i64 %i)
  %y = fmul double %x, 2.0
  %q = getelementptr double, ptr %out, i64 %i
  store double %y, ptr %q, !tbaa !1
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}

!0 = !{!"Simple C++ TBAA"}
!2 = !{!"omnipotent char", !0, i64 0}
!3 = !{!"double", !2, i64 0}
!1 = !{!3, !3, i64 0}
"#;

#[test]
fn the_unchecked_copy_vectorizes_after_its_checked_callees_are_inlined() {
    use inkwell::passes::PassBuilderOptions;
    use inkwell::targets::{CodeModel, InitializationConfig, RelocMode, Target, TargetMachine};
    use inkwell::OptimizationLevel;

    Target::initialize_native(&InitializationConfig::default()).unwrap();
    let triple = TargetMachine::get_default_triple();
    let machine = Target::from_triple(&triple)
        .unwrap()
        .create_target_machine(
            &triple,
            "x86-64",
            "",
            OptimizationLevel::Default,
            RelocMode::PIC,
            CodeModel::Default,
        )
        .unwrap();
    let context = Context::create();
    let module = Module::parse(&context, "f.ll", ACCESSOR_LOOP.as_bytes()).unwrap();
    insert_access_checks(&module).unwrap();
    let llvm = module.llvm();
    llvm.run_passes("default<O2>", &machine, PassBuilderOptions::create())
        .unwrap();
    let text = llvm.print_to_string().to_string();
    let scale = function(&text, "scale");
    assert!(scale.contains("x double>"), "{scale}");
    // The checked loop keeps its checks.
    assert!(
        scale.contains("call void @mbhybrid_check_access"),
        "{scale}"
    );
}

/// `@fill`'s loop calls `@helper`, which another unit of the program
/// defines: it runs unchecked only when that definition cannot reach MPI.
#[test]
fn a_call_into_another_unit_is_judged_by_that_units_definition() {
    let caller = r#"
declare double @helper(double)

define void @fill(ptr %out, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %p = getelementptr double, ptr %out, i64 %i
  %v = call double @helper(double 2.0)
  store double %v, ptr %p
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
"#;
    for (body, versioned) in [
        ("  ret double %x", true),
        ("  call void @MPI_Barrier(ptr null)\n  ret double %x", false),
    ] {
        let callee = format!(
            "declare void @MPI_Barrier(ptr)\ndefine double @helper(double %x) {{\n{body}\n}}\n"
        );
        let context = Context::create();
        let a = Module::parse(&context, "a.ll", caller.as_bytes()).unwrap();
        let b = Module::parse(&context, "b.ll", callee.as_bytes()).unwrap();
        let stays = crate::versioning::StaysUnchecked::program(&[a.llvm(), b.llvm()]);
        crate::accesses::insert_access_checks_with(&a, &stays).unwrap();
        let text = a.llvm().print_to_string().to_string();
        assert_eq!(text.contains("mbh.version"), versioned, "{body}\n{text}");
    }
}

/// A function none of whose calls can reach MPI is versioned whole, once
/// per call, with its stack slots left in its entry block: a loop's
/// unchecked copy that calls it (inlined or not) runs it unchecked.
#[test]
fn a_function_that_cannot_reach_mpi_is_versioned_whole() {
    let ir = r#"
define void @kernel(ptr %out, i64 %n) {
entry:
  %t = alloca double
  store double 1.0, ptr %t
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %p = getelementptr double, ptr %out, i64 %i
  %v = load double, ptr %t
  store double %v, ptr %p
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  call void @escape(ptr %t)
  ret void
}
declare void @escape(ptr)
"#
    .replace(
        "declare void @escape(ptr)",
        "define void @escape(ptr %x) {\n  ret void\n}",
    );
    let text = instrumented(&ir);
    let kernel = function(&text, "kernel");
    assert!(
        kernel.starts_with("@kernel(ptr %out, i64 %n) {\nmbh.entry:\n  %t = alloca double"),
        "{kernel}"
    );
    assert_eq!(kernel.matches("mbh.version:").count(), 1, "{kernel}");
    // The entry's store into `t` and the loop's accesses are checked once:
    // in the checked body only.
    let checks = kernel.matches("call void @mbhybrid_check_access").count();
    assert!(checks >= 2, "{kernel}");
    assert_eq!(kernel.matches("\nmbh.range").count(), checks, "{kernel}");
    assert!(kernel.contains("ret void\n\nmbh.fast"), "{kernel}");
}
