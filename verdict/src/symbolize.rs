//! Program counters recorded by the runtime (at a crash, an abort, a nonzero
//! exit) turned into source locations through the executable's DWARF, and
//! the sites the runtime made from return addresses (calls the program did
//! not label: a program built by plain `mpicc`) turned into the site
//! table's entries.

use mbh_trace::site::offset_of_site;
use mbh_trace::Site;
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
    /// The executable, relative to `base_dir` when below it.
    exe: String,
}

impl Symbolizer {
    /// Loads the DWARF of `exe`. An executable without debug information
    /// gives a symbolizer that finds no line (reports then fall back to call
    /// sites), only the functions of its symbol table.
    pub fn new(exe: &Path, base_dir: &Path) -> Self {
        Symbolizer {
            loader: addr2line::Loader::new(exe).ok(),
            base_dir: base_dir.to_owned(),
            exe: relative_to(exe, base_dir),
        }
    }

    /// Whether the executable has line information (was built with `-g`).
    pub fn has_debug_info(&self) -> bool {
        self.loader
            .as_ref()
            .is_some_and(|l| l.get_section_range(b".debug_line").is_some())
    }

    /// The executable, as sites without debug information name it.
    pub fn exe(&self) -> &str {
        &self.exe
    }

    /// The site-table entry of site `id`, one the runtime made from a call's
    /// return address (`None` for other ids), for a call of `call`: its
    /// source position when the executable's debug information has it;
    /// else `file` = the executable, `line` 0 and the function from the
    /// symbol table (empty when stripped).
    pub fn return_site(&self, id: u32, call: &str) -> Option<Site> {
        let offset = offset_of_site(id)?;
        let site = match self.locate(offset, 0, true) {
            Some(pos) => Site {
                id,
                function: pos.function.unwrap_or_default(),
                call: call.to_string(),
                file: pos.file,
                line: pos.line,
                column: pos.column,
            },
            None => Site {
                id,
                function: offset
                    .checked_sub(1)
                    .and_then(|probe| self.symbol(probe))
                    .unwrap_or_default(),
                call: call.to_string(),
                file: self.exe.clone(),
                line: 0,
                column: 0,
            },
        };
        Some(site)
    }

    /// The function of the symbol table that holds address `probe` (an
    /// offset in the executable's image), when it is in the executable's
    /// code (the table gives the symbol below any address, even one past
    /// its end).
    fn symbol(&self, probe: u64) -> Option<String> {
        let loader = self.loader.as_ref()?;
        let text = loader.get_section_range(b".text")?;
        if !(text.begin..text.end).contains(&probe) {
            return None;
        }
        Some(loader.find_symbol(probe)?.to_string())
    }

    /// For code without line information: the first of `frames` in the
    /// executable's code, as its function (from the symbol table) and its
    /// offset in the executable. `frames` as for [`Self::first_user_frame`].
    pub fn first_exe_function(
        &self,
        frames: &[u64],
        exe_base: u64,
        first_is_ip: bool,
    ) -> Option<(String, u64)> {
        frames.iter().enumerate().find_map(|(i, &pc)| {
            let offset = pc.checked_sub(exe_base)?;
            let probe = if i == 0 && first_is_ip {
                offset
            } else {
                offset.checked_sub(1)?
            };
            Some((self.symbol(probe)?, offset))
        })
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
        // The innermost frame: at -O2 the function a call was inlined
        // from, whose line `find_location` gives. Without a DWARF name,
        // the symbol table's.
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
            })
            .or_else(|| self.symbol(probe));
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

    /// Builds `SOURCE` with `cc FLAGS` in `dir`, runs it, and returns the
    /// executable and the offset it printed: the return address of
    /// `main`'s call of `callee`, less the image's start (a PIE's bias).
    fn build_and_run(dir: &Path, flags: &[&str]) -> (PathBuf, u64) {
        const SOURCE: &str = r#"#include <stdio.h>
extern const char __executable_start[];
__attribute__((noinline)) int callee(int x) {
    printf("%lx\n", (unsigned long)((const char *)__builtin_return_address(0) - __executable_start));
    return x + 1;
}
int main(void) {
    int r = callee(1); /* line 8 */
    return r - 2;
}
"#;
        let source = dir.join("ret.c");
        std::fs::write(&source, SOURCE).unwrap();
        let exe = dir.join(format!("ret{}", flags.join("")));
        let built = std::process::Command::new("cc")
            .args(flags)
            .args(["-fPIE", "-pie", "-o"])
            .arg(&exe)
            .arg(&source)
            .status()
            .unwrap();
        assert!(built.success());
        let out = std::process::Command::new(&exe).output().unwrap();
        let printed = String::from_utf8(out.stdout).unwrap();
        (exe, u64::from_str_radix(printed.trim(), 16).unwrap())
    }

    #[test]
    fn return_addresses_resolve_to_the_calls_line_and_function() {
        let dir = tempfile::tempdir().unwrap();
        for opt in ["-O0", "-O2"] {
            let (exe, offset) = build_and_run(dir.path(), &["-g", opt]);
            let s = Symbolizer::new(&exe, dir.path());
            assert!(s.has_debug_info());
            let id = mbh_trace::site::site_from_offset(offset).unwrap();
            let site = s.return_site(id, "MPI_Recv").unwrap();
            assert_eq!(
                (site.file.as_str(), site.line, site.function.as_str()),
                ("ret.c", 8, "main"),
                "{opt}"
            );
            assert_eq!((site.id, site.call.as_str()), (id, "MPI_Recv"));
            // Ids of the site table are not return addresses.
            assert_eq!(s.return_site(3, "MPI_Recv"), None);
        }
    }

    #[test]
    fn without_debug_info_a_return_address_names_the_function() {
        let dir = tempfile::tempdir().unwrap();
        let (exe, offset) = build_and_run(dir.path(), &["-O0"]);
        let s = Symbolizer::new(&exe, dir.path());
        assert!(!s.has_debug_info());
        let id = mbh_trace::site::site_from_offset(offset).unwrap();
        let site = s.return_site(id, "MPI_Recv").unwrap();
        assert_eq!(
            (site.file.as_str(), site.line, site.function.as_str()),
            ("ret-O0", 0, "main")
        );
        // A crash's frames: the return address is `main`'s; an address
        // outside the executable's code has no function.
        assert_eq!(
            s.first_exe_function(&[u64::MAX / 2, 0x1000_0000 + offset], 0x1000_0000, true),
            Some(("main".to_string(), offset))
        );
        assert_eq!(s.first_exe_function(&[u64::MAX / 2], 0, false), None);
    }

    #[test]
    fn a_file_without_debug_info_finds_nothing() {
        let s = Symbolizer::new(Path::new("/nonexistent"), Path::new("/"));
        assert_eq!(s.locate(0x1000, 0, false), None);
    }
}
