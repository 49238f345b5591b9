//! A unified diff that deletes irrelevant `MPI_Barrier` statements, and
//! the directory it applies in ([`patch_root`], [`patch_path`]).

use serde::Serialize;
use similar::TextDiff;
use std::path::{Path, PathBuf};

/// Why a call was left in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkipReason {
    /// No `MPI_Barrier` call at that line (or several, none at the column).
    NoCallThere,
    /// The call is not a statement of its own (its result is used, or it
    /// is the body of an `if`, `else`, loop or label): deleting it would
    /// change other code, so it is left for a person to edit.
    NotAStatement,
    /// The call's parentheses do not close before the end of the file.
    Unbalanced,
}

/// A call that was not deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// Why.
    pub reason: SkipReason,
}

/// The patch for one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeletionPatch {
    /// A unified diff (`--- a/PATH`, `+++ b/PATH`), empty when nothing is
    /// deleted; applies with `patch -p1` from the directory `PATH` is
    /// relative to.
    pub diff: String,
    /// The calls deleted, as (line, column).
    pub deleted: Vec<(u32, u32)>,
    /// The calls left in place.
    pub skipped: Vec<Skipped>,
}

/// Which bytes of C source are code (not comments, string or character
/// literals, or preprocessor lines).
fn code_mask(src: &[u8]) -> Vec<bool> {
    let mut code = vec![true; src.len()];
    let mut i = 0;
    let mut line_start = true;
    while i < src.len() {
        let c = src[i];
        if line_start && c == b'#' {
            // A preprocessor line, with its continuations.
            while i < src.len() && !(src[i] == b'\n' && src[i - 1] != b'\\') {
                code[i] = false;
                i += 1;
            }
            continue;
        }
        if c == b'\n' {
            line_start = true;
            i += 1;
            continue;
        }
        if !c.is_ascii_whitespace() {
            line_start = false;
        }
        let end = match (c, src.get(i + 1)) {
            (b'/', Some(b'/')) => {
                let mut j = i;
                while j < src.len() && src[j] != b'\n' {
                    j += 1;
                }
                j
            }
            (b'/', Some(b'*')) => {
                let mut j = i + 2;
                while j + 1 < src.len() && !(src[j] == b'*' && src[j + 1] == b'/') {
                    j += 1;
                }
                (j + 2).min(src.len())
            }
            (b'"' | b'\'', _) => {
                let mut j = i + 1;
                while j < src.len() && src[j] != c && src[j] != b'\n' {
                    j += if src[j] == b'\\' { 2 } else { 1 };
                }
                (j + 1).min(src.len())
            }
            _ => {
                i += 1;
                continue;
            }
        };
        for m in &mut code[i..end] {
            *m = false;
        }
        i = end;
    }
    code
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

const CALL: &[u8] = b"MPI_Barrier";

/// The byte range of the statement `MPI_Barrier(...);` whose call starts
/// at `at`, with the `(void)` cast before it if any.
fn statement(src: &[u8], code: &[bool], at: usize) -> Result<(usize, usize), SkipReason> {
    let skip_space = |mut i: usize| {
        while i < src.len() && (src[i].is_ascii_whitespace() || !code[i]) {
            i += 1;
        }
        i
    };
    let mut i = skip_space(at + CALL.len());
    if src.get(i) != Some(&b'(') {
        return Err(SkipReason::NotAStatement);
    }
    let mut depth = 0usize;
    loop {
        match src.get(i) {
            None => return Err(SkipReason::Unbalanced),
            Some(b'(') if code[i] => depth += 1,
            Some(b')') if code[i] => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
        i += 1;
    }
    let semi = skip_space(i + 1);
    if src.get(semi) != Some(&b';') {
        return Err(SkipReason::NotAStatement);
    }
    // Backwards: an optional `(void)`, then a statement boundary.
    let back = |mut j: usize| {
        while j > 0 && (src[j - 1].is_ascii_whitespace() || !code[j - 1]) {
            j -= 1;
        }
        j
    };
    let mut start = at;
    let j = back(start);
    if j >= 1 && src[j - 1] == b')' {
        let k = back(j - 1);
        let w = back(k.saturating_sub(4));
        if k >= 4 && &src[k - 4..k] == b"void" && w >= 1 && src[w - 1] == b'(' {
            start = w - 1;
        }
    }
    let j = back(start);
    let boundary = j == 0 || matches!(src[j - 1], b';' | b'{' | b'}');
    // `else MPI_Barrier(c);` and `do MPI_Barrier(c); while (x);` are bodies.
    let keyword = |kw: &[u8]| {
        j >= kw.len()
            && &src[j - kw.len()..j] == kw
            && (j == kw.len() || !is_ident(src[j - kw.len() - 1]))
    };
    if !boundary || keyword(b"else") || keyword(b"do") {
        return Err(SkipReason::NotAStatement);
    }
    Ok((start, semi + 1))
}

/// Finds the `MPI_Barrier` call at (line, column), or the only one on the
/// line.
fn find_call(src: &[u8], code: &[bool], line_start: usize, column: u32) -> Option<usize> {
    let line_end = src[line_start..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(src.len(), |p| line_start + p);
    let is_call = |i: usize| {
        src[i..].starts_with(CALL)
            && code[i]
            && (i == 0 || !is_ident(src[i - 1]))
            && src.get(i + CALL.len()).is_none_or(|&c| !is_ident(c))
    };
    let at = line_start + (column.max(1) as usize - 1);
    if at < line_end && is_call(at) {
        return Some(at);
    }
    let mut calls = (line_start..line_end).filter(|&i| is_call(i));
    let first = calls.next()?;
    calls.next().is_none().then_some(first)
}

/// Builds a unified diff that deletes the `MPI_Barrier(...);` statements
/// at `calls` from `source`.
///
/// # Arguments
///
/// * `path`: the file's path as the diff should name it, relative to the
///   directory `patch -p1` runs in (the headers are `a/PATH` and `b/PATH`).
/// * `source`: the file's text.
/// * `calls`: 1-based (line, column) of each call, as debug information
///   gives them; a column that does not point at the call is accepted when
///   the line has exactly one.
///
/// # Returns
///
/// The diff, the calls deleted and the calls left with the reason. A
/// statement is deleted whole, with a `(void)` cast before it, and so is
/// its line when nothing else is left on it. Calls whose result is used,
/// or that are the body of an `if`, `else` or loop, are left in place.
pub fn deletion_patch(path: &str, source: &str, calls: &[(u32, u32)]) -> DeletionPatch {
    let src = source.as_bytes();
    let code = code_mask(src);
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(
            src.iter()
                .enumerate()
                .filter(|(_, &c)| c == b'\n')
                .map(|(i, _)| i + 1),
        )
        .collect();
    let mut deleted_mask = vec![false; src.len()];
    let mut deleted = Vec::new();
    let mut skipped = Vec::new();
    let mut sorted = calls.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    for (line, column) in sorted {
        let found = line
            .checked_sub(1)
            .and_then(|l| line_starts.get(l as usize))
            .filter(|&&s| s < src.len())
            .and_then(|&s| find_call(src, &code, s, column))
            .ok_or(SkipReason::NoCallThere)
            .and_then(|at| statement(src, &code, at));
        match found {
            Ok((start, mut end)) => {
                // Also the blanks after it on its line, when blanks precede
                // it: `a(); MPI_Barrier(c); b();` leaves `a(); b();`.
                if start > 0 && matches!(src[start - 1], b' ' | b'\t') {
                    while end < src.len() && matches!(src[end], b' ' | b'\t') {
                        end += 1;
                    }
                }
                deleted_mask[start..end].iter_mut().for_each(|d| *d = true);
                deleted.push((line, column));
            }
            Err(reason) => skipped.push(Skipped {
                line,
                column,
                reason,
            }),
        }
    }
    // Rebuild line by line; a touched line left blank goes.
    let mut out = Vec::with_capacity(src.len());
    for (k, &s) in line_starts.iter().enumerate() {
        let e = line_starts.get(k + 1).copied().unwrap_or(src.len());
        if s >= e {
            continue;
        }
        let body_end = if src[e - 1] == b'\n' { e - 1 } else { e };
        if !deleted_mask[s..body_end].contains(&true) {
            out.extend_from_slice(&src[s..e]);
            continue;
        }
        let kept: Vec<u8> = (s..body_end)
            .filter(|&i| !deleted_mask[i])
            .map(|i| src[i])
            .collect();
        if kept.iter().all(|c| c.is_ascii_whitespace()) {
            continue;
        }
        let trimmed = kept.len()
            - kept
                .iter()
                .rev()
                .take_while(|c| c.is_ascii_whitespace())
                .count();
        out.extend_from_slice(&kept[..trimmed]);
        out.extend_from_slice(&src[body_end..e]);
    }
    // Only whole ASCII bytes of C code were removed, so this is UTF-8.
    let new = String::from_utf8_lossy(&out).into_owned();
    let diff = if deleted.is_empty() {
        String::new()
    } else {
        TextDiff::from_lines(source, new.as_str())
            .unified_diff()
            .context_radius(3)
            .header(&format!("a/{path}"), &format!("b/{path}"))
            .to_string()
    };
    DeletionPatch {
        diff,
        deleted,
        skipped,
    }
}

/// `file` relative to `root` (both made absolute and canonical), as
/// `patch -p1` and `git apply` want it (an absolute path after
/// `a/` is refused by both). `None` when `file` is not under `root`.
pub fn patch_path(file: &Path, root: &Path) -> Option<String> {
    let file = file.canonicalize().ok()?;
    let root = root.canonicalize().ok()?;
    let relative = file.strip_prefix(&root).ok()?;
    Some(relative.to_string_lossy().into_owned())
}

/// Where a patch of `sources` is applied when the user names no
/// directory: the deepest directory that holds them, the directory the
/// program was built in (`build_dir`) and the current one (`cwd`), so that
/// `mbhybrid audit-barriers` run from a project's `bin/` makes a patch for the
/// project's root. A working directory elsewhere on the machine (whose
/// only common ancestor with the sources is `/`) is left out.
pub fn patch_root(cwd: &Path, build_dir: &Path, sources: &[PathBuf]) -> PathBuf {
    let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_owned());
    let project = sources
        .iter()
        .map(|s| real(s.parent().unwrap_or(s)))
        .fold(real(build_dir), |root, dir| common_ancestor(&root, &dir));
    let with_cwd = common_ancestor(&project, &real(cwd));
    if with_cwd.parent().is_none() {
        project
    } else {
        with_cwd
    }
}

/// The longest path both `a` and `b` start with.
fn common_ancestor(a: &Path, b: &Path) -> PathBuf {
    a.components()
        .zip(b.components())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "\
#include <mpi.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Barrier(MPI_COMM_WORLD);
  work(); MPI_Barrier(comm); more();
  (void) MPI_Barrier(
      MPI_COMM_WORLD /* ) */);
  if (x) MPI_Barrier(MPI_COMM_WORLD);
  rc = MPI_Barrier(MPI_COMM_WORLD);
  /* MPI_Barrier(MPI_COMM_WORLD); */
  MPI_Barrier(MPI_COMM_WORLD); // sync
  MPI_Finalize();
}
";

    #[test]
    fn deletes_statements_and_leaves_the_rest() {
        let p = deletion_patch(
            "src/app.c",
            SRC,
            &[
                (4, 3),
                (5, 11),
                (6, 10),
                (8, 10),
                (9, 8),
                (10, 6),
                (11, 3),
                (99, 1),
            ],
        );
        assert_eq!(p.deleted, vec![(4, 3), (5, 11), (6, 10), (11, 3)]);
        let reasons: Vec<_> = p.skipped.iter().map(|s| (s.line, s.reason)).collect();
        assert_eq!(
            reasons,
            vec![
                (8, SkipReason::NotAStatement),
                (9, SkipReason::NotAStatement),
                (10, SkipReason::NoCallThere),
                (99, SkipReason::NoCallThere),
            ]
        );
        assert!(
            p.diff.starts_with("--- a/src/app.c\n+++ b/src/app.c\n"),
            "{}",
            p.diff
        );
        assert!(p.diff.contains("-  MPI_Barrier(MPI_COMM_WORLD);\n"));
        assert!(p.diff.contains("+  work(); more();\n"));
        assert!(p.diff.contains("-      MPI_COMM_WORLD /* ) */);\n"));
        assert!(p.diff.contains("+  // sync\n"), "{}", p.diff);
    }

    #[test]
    fn nothing_to_delete_gives_an_empty_diff() {
        let p = deletion_patch("a.c", SRC, &[(8, 10)]);
        assert!(p.diff.is_empty());
        assert!(p.deleted.is_empty());
    }

    #[test]
    fn applies_with_patch_p1() {
        let Ok(dir) = tempfile::tempdir() else { return };
        let file = dir.path().join("src/app.c");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, SRC).unwrap();
        let p = deletion_patch("src/app.c", SRC, &[(4, 3), (5, 11), (6, 10), (11, 3)]);
        let patch_file = dir.path().join("barriers.patch");
        std::fs::write(&patch_file, &p.diff).unwrap();
        let status = std::process::Command::new("patch")
            .args(["-p1", "-s", "-i"])
            .arg(&patch_file)
            .current_dir(dir.path())
            .status();
        // A missing tool fails the test with its reason, never passes it.
        let status = status.expect(
            "`patch` runs (scripts/install-deps.sh installs build-essential, which brings it)",
        );
        assert!(status.success(), "patch failed on:\n{}", p.diff);
        let patched = std::fs::read_to_string(&file).unwrap();
        assert!(!patched.contains("  MPI_Barrier(MPI_COMM_WORLD);\n"));
        assert!(patched.contains("  work(); more();\n"));
        assert!(patched.contains("if (x) MPI_Barrier"));
        assert!(patched.contains("/* MPI_Barrier(MPI_COMM_WORLD); */"));
        assert_eq!(patched.lines().count(), SRC.lines().count() - 3);
    }
}

#[cfg(test)]
mod root_tests {
    use super::*;
    use std::path::{Path, PathBuf};

    #[test]
    fn the_patch_root_holds_the_sources_the_build_and_the_working_directory() {
        let p = PathBuf::from;
        let sources = [p("/w/CoMD/src-mpi/parallel.c")];
        assert_eq!(
            patch_root(
                Path::new("/w/CoMD/bin"),
                Path::new("/w/CoMD/src-mpi"),
                &sources
            ),
            p("/w/CoMD")
        );
        assert_eq!(
            patch_root(
                Path::new("/w/CoMD/src-mpi"),
                Path::new("/w/CoMD/src-mpi"),
                &sources
            ),
            p("/w/CoMD/src-mpi")
        );
        // A CMake build directory: the sources' project.
        assert_eq!(
            patch_root(
                Path::new("/w/app/build"),
                Path::new("/w/app/build"),
                &[p("/w/app/src/a.c"), p("/w/app/lib/b.c")]
            ),
            p("/w/app")
        );
        // Run from elsewhere on the machine: the project's root still.
        assert_eq!(
            patch_root(
                Path::new("/tmp/run"),
                Path::new("/w/app"),
                &[p("/w/app/a.c")]
            ),
            p("/w/app")
        );
    }
}
