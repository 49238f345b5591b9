//! Program counters recorded by the runtime (at a crash, an abort, a nonzero
//! exit) turned into source locations through the executable's DWARF.

use std::path::{Path, PathBuf};

/// A source position found for a program counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourcePos {
    /// The file, relative to the working directory when below it.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, 0 when unknown.
    pub column: u32,
    /// The function, when known, demangled for C++ ([`mbh_trace::demangle`]).
    pub function: Option<String>,
}

/// Resolves addresses of one executable.
pub struct Symbolizer {
    loader: Option<addr2line::Loader>,
    base_dir: PathBuf,
}

impl Symbolizer {
    /// Loads the DWARF of `exe`. An executable without debug information
    /// gives a symbolizer that finds nothing (reports then fall back to call
    /// sites).
    pub fn new(exe: &Path, base_dir: &Path) -> Self {
        Symbolizer {
            loader: addr2line::Loader::new(exe).ok(),
            base_dir: base_dir.to_owned(),
        }
    }

    /// The source position of `pc` in a process whose executable was loaded
    /// with bias `exe_base`. `is_return_address` moves back one byte so a
    /// call's return address lands on the call's line.
    pub fn locate(&self, pc: u64, exe_base: u64, is_return_address: bool) -> Option<SourcePos> {
        let loader = self.loader.as_ref()?;
        let mut probe = pc.checked_sub(exe_base)?;
        if is_return_address {
            probe = probe.checked_sub(1)?;
        }
        let location = loader.find_location(probe).ok()??;
        let line = location.line?;
        let file = location.file?;
        let function = loader
            .find_frames(probe)
            .ok()
            .and_then(|mut frames| frames.next().ok().flatten())
            .and_then(|frame| frame.function)
            // The raw (linkage) name through the one demangler the static
            // report uses, so a finding names a C++ function exactly as
            // `mbhybrid analyze` does; addr2line's own `demangle` would
            // only demangle units whose DWARF language it knows.
            .and_then(|name| {
                name.raw_name()
                    .ok()
                    .map(|n| mbh_trace::demangle(&n).into_owned())
            });
        Some(SourcePos {
            file: relative_to(Path::new(file), &self.base_dir),
            line,
            column: location.column.unwrap_or(0),
            function,
        })
    }

    /// The first frame of `frames` that lies in the executable's own code
    /// with a source line: where the user's program was when it stopped.
    /// `frames[0]` is an instruction pointer when `first_is_ip`, the rest
    /// are return addresses.
    pub fn first_user_frame(
        &self,
        frames: &[u64],
        exe_base: u64,
        first_is_ip: bool,
    ) -> Option<SourcePos> {
        frames.iter().enumerate().find_map(|(i, &pc)| {
            let pos = self.locate(pc, exe_base, !(i == 0 && first_is_ip))?;
            // Frames of C library headers inlined into the program are not the
            // user's code.
            (!pos.file.starts_with("/usr/")).then_some(pos)
        })
    }
}

impl Symbolizer {
    /// The frames of `frames` in the program's own code (with a source
    /// line, outside system headers), innermost first, at most `limit`:
    /// the user's stack at a crash, for the report's notes.
    pub fn user_stack(
        &self,
        frames: &[u64],
        exe_base: u64,
        first_is_ip: bool,
        limit: usize,
    ) -> Vec<SourcePos> {
        frames
            .iter()
            .enumerate()
            .filter_map(|(i, &pc)| self.locate(pc, exe_base, !(i == 0 && first_is_ip)))
            .filter(|pos| !pos.file.starts_with("/usr/"))
            .take(limit)
            .collect()
    }
}

/// `path` relative to `base` when below it, else as it is.
pub fn relative_to(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_below_the_base_become_relative() {
        assert_eq!(
            relative_to(Path::new("/w/p/app.c"), Path::new("/w")),
            "p/app.c"
        );
        assert_eq!(
            relative_to(Path::new("/x/app.c"), Path::new("/w")),
            "/x/app.c"
        );
    }

    #[test]
    fn a_file_without_debug_info_finds_nothing() {
        let s = Symbolizer::new(Path::new("/nonexistent"), Path::new("/"));
        assert_eq!(s.locate(0x1000, 0, false), None);
    }
}
