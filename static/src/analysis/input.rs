//! Phase 1: reading the IR of every module, and how the report names the
//! files and lines of what it read.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use mbh_trace::static_report::Span;

use super::AnalysisInput;
use crate::ir::{self, Files, Function, FunctionRefs, InstId, Loc, Val, VarInfo};
use crate::{mpi_call_sites, MpiCallSite, SourceLocation};

/// The IR of the whole program: the functions of every module in input
/// order (a function's index is its number in every later phase), and
/// per module what [`ir::read_module`] found besides.
pub(super) struct Read<'ctx> {
    /// The file names the locations intern.
    pub files: Files,
    pub fns: Vec<Function>,
    /// The LLVM handles of each function, for the plans.
    pub refs: Vec<FunctionRefs<'ctx>>,
    pub const_globals: Vec<HashMap<String, Val>>,
    pub referenced: Vec<HashSet<String>>,
    /// Per module: its MPI call sites, as [`mpi_call_sites`] lists them.
    pub module_sites: Vec<Vec<MpiCallSite<'ctx>>>,
    pub globals: Vec<HashMap<String, VarInfo>>,
    pub strings: Vec<HashMap<String, String>>,
}

/// Reads every module of `inputs`, on this thread: LLVM values cannot
/// cross threads, so this copies what the later (parallel) phases need
/// into plain data.
pub(super) fn read<'ctx>(inputs: &[AnalysisInput<'_, 'ctx>]) -> Read<'ctx> {
    let mut files = Files::default();
    let mut fns: Vec<Function> = Vec::new();
    let mut refs: Vec<FunctionRefs<'ctx>> = Vec::new();
    let mut const_globals = Vec::new();
    let mut referenced: Vec<HashSet<String>> = Vec::new();
    let mut module_sites = Vec::new();
    let mut globals = Vec::new();
    let mut strings = Vec::new();
    for (m, input) in inputs.iter().enumerate() {
        let read = ir::read_module(input.module, m, &mut files);
        fns.extend(read.functions);
        refs.extend(read.refs);
        const_globals.push(read.const_globals);
        referenced.push(read.referenced);
        globals.push(read.globals);
        strings.push(read.strings);
        module_sites.push(mpi_call_sites(input.module));
    }
    Read {
        files,
        fns,
        refs,
        const_globals,
        referenced,
        module_sites,
        globals,
        strings,
    }
}

/// How the report names a place: every file relative to the user's
/// working directory when below it, and a location without a file (or no
/// location at all) in the source its module was made from.
pub(super) struct Spans {
    /// Per module: its source as shown.
    sources: Vec<PathBuf>,
    /// Per interned file ([`Files::paths`]): its name as shown, empty when
    /// the debug information gave none.
    file_names: Vec<String>,
}

impl Spans {
    /// The names of `inputs`' sources and of `files`, as shown from
    /// `base_dir`.
    pub(super) fn new(inputs: &[AnalysisInput<'_, '_>], files: &Files, base_dir: &Path) -> Self {
        let sources: Vec<PathBuf> = inputs
            .iter()
            .map(|i| SourceLocation::display_path(i.source, base_dir))
            .collect();
        let file_names: Vec<String> = files
            .paths
            .iter()
            .map(|p| {
                SourceLocation::display_path(p, base_dir)
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        Spans {
            sources,
            file_names,
        }
    }

    /// Where `loc`, a location in `f`, is; line 0 when there is none.
    pub(super) fn span(&self, f: &Function, loc: Option<Loc>) -> Span {
        let Spans {
            sources,
            file_names,
        } = self;
        match loc {
            Some(loc) if !file_names[loc.file as usize].is_empty() => Span {
                file: file_names[loc.file as usize].clone(),
                line: loc.line,
                column: loc.column,
            },
            Some(loc) => Span {
                file: sources[f.module].to_string_lossy().into_owned(),
                line: loc.line,
                column: loc.column,
            },
            None => Span {
                file: sources[f.module].to_string_lossy().into_owned(),
                line: 0,
                column: 0,
            },
        }
    }

    /// Instruction `i` of `f` for messages: `file:line:column`, or which
    /// function's line it is when debug information is missing.
    pub(super) fn at(&self, f: &Function, i: InstId) -> String {
        let s = self.span(f, f.insts[i as usize].loc);
        if s.line == 0 {
            format!("a line of `{}` without debug information", f.shown_name())
        } else {
            s.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn function(module: usize, insts: Vec<Option<Loc>>) -> Function {
        Function {
            name: "_Z6workerv".to_owned(),
            module,
            internal: false,
            blocks: Vec::new(),
            insts: insts
                .into_iter()
                .map(|loc| ir::Inst {
                    op: ir::Op::Other,
                    ops: Vec::new(),
                    loc,
                    block: 0,
                    is_ptr: false,
                })
                .collect(),
            vars: HashMap::new(),
        }
    }

    fn spans() -> Spans {
        Spans {
            sources: vec![PathBuf::from("a.c"), PathBuf::from("src/b.c")],
            file_names: vec!["inc/h.h".to_owned(), String::new()],
        }
    }

    #[test]
    fn a_location_names_its_file_else_the_modules_source() {
        let spans = spans();
        let f = function(1, Vec::new());
        let at = |file, line| {
            let s = spans.span(
                &f,
                Some(Loc {
                    file,
                    line,
                    column: 3,
                }),
            );
            (s.file, s.line, s.column)
        };
        assert_eq!(at(0, 7), ("inc/h.h".to_owned(), 7, 3));
        // A file debug information left without a name: the module's source.
        assert_eq!(at(1, 9), ("src/b.c".to_owned(), 9, 3));
        let none = spans.span(&f, None);
        assert_eq!(
            (none.file.as_str(), none.line, none.column),
            ("src/b.c", 0, 0)
        );
    }

    #[test]
    fn an_instruction_without_a_line_names_its_function() {
        let spans = spans();
        let loc = Loc {
            file: 0,
            line: 12,
            column: 5,
        };
        let f = function(0, vec![Some(loc), None]);
        assert_eq!(spans.at(&f, 0), "inc/h.h:12");
        assert_eq!(
            spans.at(&f, 1),
            "a line of `worker()` without debug information"
        );
    }
}
