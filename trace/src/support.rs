//! What the runtime does with each MPI function: one table
//! ([`calls`], every function of the `mpi.h` of MPICH 4 and Open MPI 4)
//! that `build` warns from, the runtime's wrappers are checked against
//! (`runtime/src/lib.rs`'s tests, `runtime/tests/header_calls.rs`), and
//! `verify` names unmodelled calls from, so a run that made one says it is partial.
//!
//! Five classes ([`Support`]):
//!
//! * modelled: the runtime wraps the call (piggyback, clocks, trace,
//!   checks);
//! * races not checked: one-sided communication: the runtime
//!   wraps the call and records it, `verify` checks the epochs, the
//!   windows' lifecycle, the remote races between operations and (with
//!   the access checks) the program's loads and stores of origin buffers
//!   while an operation may be in flight and of its window memory during
//!   fence and PSCW epochs, but not under passive target synchronization,
//!   so a run that locks a window (or makes a shared one, or was built
//!   without the access checks) is partial and names the calls;
//! * harmless: calls that neither communicate nor change what the
//!   verification follows (queries, datatype, info and attribute
//!   management, timing): they pass straight to MPI;
//! * not modelled: calls that communicate or synchronise in ways the
//!   runtime does not follow (one-sided communication, neighbourhood,
//!   persistent and large-count collectives, MPI-4 sessions and
//!   partitioned calls, `MPI_T`, file I/O, dynamic processes): they pass to
//!   MPI and run as they would, the runtime records each call site
//!   ([`crate::OpKind::NotModelled`]), and `verify` names them and reports
//!   the run as partial;
//! * stops: point-to-point calls whose message would reach a receive that
//!   expects mbhybrid's piggyback header, so the runtime stops the job
//!   with a message naming the call.

use std::collections::BTreeSet;

mod calls;

/// What the runtime does with an MPI function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Support {
    /// Wrapped: the runtime follows what it does.
    Modelled,
    /// Wrapped and recorded (one-sided communication): its epochs and
    /// remote races are checked, and local accesses to window memory under
    /// fence and PSCW synchronization in a program built with the access
    /// checks, not under locks: a run that locks a window is partial.
    RacesNotChecked,
    /// Passed straight to MPI: nothing it does matters to the verification.
    Harmless,
    /// Passed to MPI unchecked: a run that calls it is partial.
    NotModelled,
    /// Stops the run when called (it would corrupt the piggyback protocol).
    Stops,
}

/// Every MPI function the table knows, with its class, sorted by name.
pub fn calls() -> impl Iterator<Item = (&'static str, Support)> {
    calls::CALLS.iter().copied()
}

/// How many functions [`calls`] lists.
pub fn known() -> usize {
    calls::CALLS.len()
}

/// The class of `function` (`MPI_Put`; a `PMPI_` name is accepted), or
/// `None` for a name the table does not know.
pub fn support(function: &str) -> Option<Support> {
    index_of(function).map(|i| calls::CALLS[i].1)
}

/// The position of `function` in [`calls`] (a `PMPI_` name is accepted):
/// what a [`crate::OpKind::NotModelled`] record carries.
pub fn index_of(function: &str) -> Option<usize> {
    let name = function
        .strip_prefix('P')
        .filter(|n| n.starts_with("MPI_"))
        .unwrap_or(function);
    calls::CALLS.binary_search_by(|(n, _)| n.cmp(&name)).ok()
}

/// The function at position `index` of [`calls`].
pub fn name_at(index: usize) -> Option<&'static str> {
    calls::CALLS.get(index).map(|(name, _)| *name)
}

/// The functions of class `class`, sorted.
pub fn of_class(class: Support) -> impl Iterator<Item = &'static str> {
    calls().filter(move |(_, c)| *c == class).map(|(n, _)| n)
}

/// What part of MPI an unmodelled function belongs to, in words
/// ("one-sided communication"), for warnings and docs/limits.md.
pub fn family(function: &str) -> &'static str {
    let name = function.strip_prefix("MPI_").unwrap_or(function);
    let rma = [
        "Put",
        "Get",
        "Accumulate",
        "Get_accumulate",
        "Fetch_and_op",
        "Compare_and_swap",
        "Rput",
        "Rget",
        "Raccumulate",
        "Rget_accumulate",
    ];
    let base = name.strip_suffix("_c").unwrap_or(name);
    if name.starts_with("Win_") || rma.contains(&base) {
        "one-sided communication (RMA)"
    } else if name.starts_with("Neighbor_") || name.starts_with("Ineighbor_") {
        "neighbourhood collectives"
    } else if base.ends_with("_init") {
        "persistent collectives"
    } else if name.starts_with("T_") {
        "the tool information interface (MPI_T)"
    } else if name.starts_with("Session_")
        || name.contains("from_group")
        || name == "Group_from_session_pset"
    {
        "MPI-4 sessions"
    } else if name.starts_with("Pready") || name == "Parrived" {
        "partitioned communication"
    } else if name.starts_with("File_") {
        "file I/O (MPI-IO)"
    } else if name.starts_with("Comm_spawn")
        || [
            "Comm_accept",
            "Comm_connect",
            "Comm_join",
            "Comm_disconnect",
        ]
        .contains(&name)
    {
        "dynamic processes"
    } else if name.starts_with("Grequest_") {
        "generalized requests"
    } else if name.ends_with("_c") {
        "large-count collectives"
    } else {
        "communicator constructors the runtime does not follow"
    }
}

/// What a call of class [`Support::RacesNotChecked`] is, in words: the
/// start of `build`'s warning and of `verify`'s reason for a partial run.
pub const RACES_NOT_CHECKED: &str =
    "recorded by this version of mbhybrid, which checks its epochs, remote races and (with the access checks) local accesses to window memory under fence and PSCW synchronization, but not local accesses to window memory under locks";

/// Why `function` cannot be verified fully by this version, or `None` when
/// the runtime handles it (modelled or harmless). An `MPI_` function the
/// table does not know (from an MPI newer than it) is not modelled: the
/// runtime passes it through and records it as such. Accepts `PMPI_`
/// names.
pub fn unsupported_reason(function: &str) -> Option<String> {
    let Some(class) = support(function) else {
        return function.contains("MPI_").then(|| {
            "not known to this version of mbhybrid (an MPI function newer than its table): it runs as it would, but what it does is not verified, and `verify` reports the run as partial".to_owned()
        });
    };
    match class {
        Support::Stops => Some(
            "not supported by this version of the mbhybrid runtime: the run stops when the call is made"
                .to_owned(),
        ),
        Support::NotModelled => Some(format!(
            "not modelled by this version of mbhybrid ({}): it runs as it would, but what it does is not verified, and `verify` reports the run as partial",
            family(function)
        )),
        Support::RacesNotChecked => Some(format!(
            "{RACES_NOT_CHECKED} ({}): `verify` reports a run as partial when it locks a window, makes a shared one, or was built without the access checks",
            family(function)
        )),
        Support::Modelled | Support::Harmless => None,
    }
}

/// The MPI functions a preprocessed `mpi.h` declares (`cc -E`): every
/// `MPI_x(` or `PMPI_x(` after a return type, outside `typedef`s, as
/// `MPI_x`. The runtime's build script wraps the unmodelled ones it finds,
/// and its header test checks each is in [`calls`].
pub fn declared_functions(preprocessed: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    // Declarations span lines: join them, then split at `;`.
    let text: String = preprocessed
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join(" ");
    for declaration in text.split([';', '{', '}']) {
        let declaration = declaration.trim_start();
        if declaration.starts_with("typedef") {
            continue;
        }
        if let Some(name) = declared_name(declaration) {
            found.insert(name);
        }
    }
    found
}

/// The function a declaration declares, when it is an MPI function: the
/// first `MPI_x` or `PMPI_x` outside parentheses that a `(` follows, after
/// a return type (`__attribute__((...))` before it is skipped).
fn declared_name(declaration: &str) -> Option<String> {
    let bytes = declaration.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let (mut depth, mut at) = (0usize, 0usize);
    while at < bytes.len() {
        match bytes[at] {
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            b if depth == 0 && is_ident(b) && (at == 0 || !is_ident(bytes[at - 1])) => {
                let end = at + bytes[at..].iter().take_while(|&&b| is_ident(b)).count();
                let ident = &declaration[at..end];
                let name = ident.strip_prefix('P').unwrap_or(ident);
                if name.starts_with("MPI_") && declaration[end..].trim_start().starts_with('(') {
                    let before = declaration[..at].trim();
                    if before.is_empty() || before.ends_with("return") {
                        return None;
                    }
                    return Some(name.to_owned());
                }
                at = end;
                continue;
            }
            _ => {}
        }
        at += 1;
    }
    None
}

/// docs/limits.md's list of what the runtime models and what it does not,
/// generated from the table (its test, `limits_calls`, compares them): Markdown.
pub fn limits_markdown() -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let modelled: Vec<&str> = of_class(Support::Modelled).collect();
    let _ = writeln!(
        out,
        "Modelled ({} functions: `verify`'s verdicts cover them): {}.\n",
        modelled.len(),
        code_list(&modelled)
    );
    let _ = writeln!(
        out,
        "Not modelled: they run as they would, but what they do is not verified; \
         `build` warns at each call, and a run that makes one is reported with the \
         calls and their lines, `complete: false`, exit status 3:\n"
    );
    let mut families: Vec<(&str, Vec<&str>)> = Vec::new();
    for name in of_class(Support::NotModelled) {
        let family = family(name);
        match families.iter_mut().find(|(f, _)| *f == family) {
            Some((_, names)) => names.push(name),
            None => families.push((family, vec![name])),
        }
    }
    families.sort_by_key(|(f, _)| *f);
    for (family, names) in families {
        let _ = writeln!(out, "* {family}: {}", code_list(&names));
    }
    let recorded: Vec<&str> = of_class(Support::RacesNotChecked).collect();
    let _ = writeln!(
        out,
        "\nRecorded, local accesses checked under fence and PSCW ({} functions of one-sided \
         communication): `verify` checks their epochs (MBH0022: an operation or \
         flush outside an epoch on its target, an unlock without its lock, a second \
         lock of a held target, `MPI_Win_complete` without `MPI_Win_start`, \
         `MPI_Win_wait` without `MPI_Win_post`, an epoch left open at `MPI_Win_free` \
         or `MPI_Finalize`) and the remote races between operations (MBH0023: two \
         operations on the same bytes of a target's window, one writing, in one \
         fence or exposure epoch, under shared locks nothing orders, or of one \
         origin in one lock epoch without a flush between; contiguous target \
         datatypes) and, in a program built with the access checks, its loads and \
         stores of an operation's origin and result buffers before the call that \
         completes it at the origin (MBH0013), and its loads and stores of its own \
         window memory during a fence or PSCW exposure epoch against the \
         operations of that epoch on the same bytes (MBH0023); but not the loads \
         and stores of window memory during passive target epochs, nor those other \
         processes make of a shared memory window (nor, built with \
         `MBHYBRID_ACCESS_CHECKS=off`, window memory and origin buffers at all): a \
         run that locks a window, makes a shared one or was built without the \
         access checks is reported with those calls and their lines, \
         `complete: false`, exit status 3: {}.",
        recorded.len(),
        code_list(&recorded)
    );
    let stops: Vec<&str> = of_class(Support::Stops).collect();
    let _ = writeln!(
        out,
        "\nStopped when called (their message would reach a receive that expects \
         mbhybrid's header; `verify` exits 2 naming the call): {}.\n",
        code_list(&stops)
    );
    let _ = writeln!(
        out,
        "Every other function of `mpi.h` ({}) passes straight to MPI: queries, \
         datatype, info, attribute and error-handler management, timing.",
        of_class(Support::Harmless).count()
    );
    out
}

fn code_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_names_each_function_once() {
        let names: Vec<&str> = calls().map(|(n, _)| n).collect();
        assert!(names.windows(2).all(|w| w[0] < w[1]), "sorted, no repeats");
        assert!(names.iter().all(|n| n.starts_with("MPI_")));
        for (i, name) in names.iter().enumerate() {
            assert_eq!(index_of(name), Some(i));
            assert_eq!(name_at(i), Some(*name));
        }
    }

    #[test]
    fn calls_are_classified() {
        assert_eq!(support("MPI_Isendrecv"), Some(Support::Stops));
        assert_eq!(support("PMPI_Psend_init"), Some(Support::Stops));
        for call in [
            "MPI_Start",
            "PMPI_Recv_init",
            "MPI_Startall",
            "MPI_Cancel",
            "MPI_Mprobe",
        ] {
            assert_eq!(support(call), Some(Support::Modelled), "{call}");
        }
        for call in ["MPI_Put", "MPI_Win_fence", "PMPI_Rget_accumulate"] {
            assert_eq!(support(call), Some(Support::RacesNotChecked), "{call}");
        }
        for call in [
            "MPI_Put_c",
            "MPI_Win_attach",
            "MPI_Neighbor_alltoall",
            "MPI_T_init_thread",
        ] {
            assert_eq!(support(call), Some(Support::NotModelled), "{call}");
        }
        assert_eq!(support("MPI_Wtime"), Some(Support::Harmless));
        assert_eq!(support("MPI_Get_processor_name"), Some(Support::Harmless));
        assert_eq!(support("MPI_Not_a_function"), None);
        assert!(unsupported_reason("MPI_Send_c").unwrap().contains("stops"));
        assert!(unsupported_reason("MPI_Put_c")
            .unwrap()
            .contains("not modelled by this version of mbhybrid (one-sided communication (RMA))"));
        assert!(unsupported_reason("MPI_Put")
            .unwrap()
            .starts_with("recorded by this version of mbhybrid, which checks its epochs, remote races and (with the access checks) local accesses to window memory under fence and PSCW synchronization, but not local accesses to window memory under locks (one-sided communication (RMA))"));
        assert!(unsupported_reason("MPI_Send").is_none());
        assert!(unsupported_reason("MPI_Comm_from_the_future")
            .unwrap()
            .contains("not known to this version"));
        assert!(unsupported_reason("MPI_Comm_rank").is_none());
    }

    #[test]
    fn declared_functions_are_read_from_a_preprocessed_header() {
        let header = "typedef int (MPI_User_function)(void *, int *);\n\
                      typedef MPI_Aint (QMPI_Aint_add_t) (int c, MPI_Aint b);\n\
                      int MPI_Send(const void *buf, int count,\n    MPI_Datatype t) __attribute__((x));\n\
                      int PMPI_Send(const void *buf, int count, MPI_Datatype t);\n\
                      double MPI_Wtime(void);\n\
                      __attribute__((visibility(\"default\"))) int MPI_Barrier(MPI_Comm c);\n\
                      extern struct s *const MPI_T_PVAR_ALL_HANDLES;\n\
                      static inline int f(void) { return MPI_Foo(1); }\n";
        let found: Vec<String> = declared_functions(header).into_iter().collect();
        assert_eq!(found, ["MPI_Barrier", "MPI_Send", "MPI_Wtime"]);
    }
}
