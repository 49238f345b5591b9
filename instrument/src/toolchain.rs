//! Finding clang and running it.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::BuildError;

/// The major LLVM version whose IR `mbh-static` reads.
const LLVM_MAJOR: u32 = 16;

/// Finds the clang driver: `clang-16` (or `clang++-16` for C++), else an
/// unversioned `clang` (`clang++`) that reports version 16.
pub(crate) fn find_clang(cxx: bool) -> Result<PathBuf, BuildError> {
    let (versioned, plain) = if cxx {
        ("clang++-16", "clang++")
    } else {
        ("clang-16", "clang")
    };
    if let Ok(path) = which::which(versioned) {
        return Ok(path);
    }
    let path = which::which(plain).map_err(|_| BuildError::ClangNotFound {
        tried: format!("{versioned}, {plain}"),
    })?;
    let output = Command::new(&path)
        .arg("--version")
        .output()
        .map_err(|source| BuildError::Spawn {
            program: path.clone(),
            source,
        })?;
    let text = String::from_utf8_lossy(&output.stdout);
    match clang_major(&text) {
        Some(LLVM_MAJOR) => Ok(path),
        Some(other) => Err(BuildError::ClangVersion {
            path,
            found: other.to_string(),
        }),
        None => Err(BuildError::ClangVersion {
            path,
            found: format!(
                "of unknown version ({})",
                text.lines().next().unwrap_or("").trim()
            ),
        }),
    }
}

/// Finds LLVM tool `name` (`llvm-objcopy`, `llvm-ar`) of the same release
/// as the clang mbhybrid uses: `NAME-16`, else an unversioned `NAME`.
pub(crate) fn find_llvm_tool(name: &str) -> Result<PathBuf, BuildError> {
    let versioned = format!("{name}-{LLVM_MAJOR}");
    which::which(&versioned)
        .or_else(|_| which::which(name))
        .map_err(|_| BuildError::ToolNotFound {
            tried: format!("{versioned}, {name}"),
        })
}

/// The major version in `clang --version` output
/// (`Debian clang version 16.0.6 (15~deb12u1)`).
fn clang_major(version_output: &str) -> Option<u32> {
    let first = version_output.lines().next()?;
    let rest = &first[first.find("clang version ")? + "clang version ".len()..];
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// A command line, kept as words so it can be both run and shown.
#[derive(Debug, Clone)]
pub(crate) struct Cmd {
    program: PathBuf,
    args: Vec<OsString>,
    dir: Option<PathBuf>,
}

/// What a finished command printed.
pub(crate) struct Ran {
    /// Whether it exited with status 0.
    pub success: bool,
    /// Its exit status; 1 when a signal ended it, as a shell would not
    /// report 0 for it either.
    pub status: i32,
    /// Its standard output followed by its standard error, verbatim.
    pub messages: String,
}

impl Cmd {
    pub fn new(program: &Path) -> Self {
        Cmd {
            program: program.to_owned(),
            args: Vec::new(),
            dir: None,
        }
    }

    /// Runs it in `dir` instead of the current directory.
    pub fn current_dir(&mut self, dir: &Path) -> &mut Self {
        self.dir = Some(dir.to_owned());
        self
    }

    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(&mut self, args: I) -> &mut Self {
        for arg in args {
            self.arg(arg);
        }
        self
    }

    /// The command as a shell would need it typed.
    pub fn display(&self) -> String {
        let words = std::iter::once(self.program.as_os_str())
            .chain(self.args.iter().map(OsString::as_os_str))
            .map(|w| w.to_string_lossy());
        shell_words::join(words)
    }

    /// Runs it to completion, capturing its output.
    pub fn run(&self) -> Result<Ran, BuildError> {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        if let Some(dir) = &self.dir {
            command.current_dir(dir);
        }
        let output = command.output().map_err(|source| BuildError::Spawn {
            program: self.program.clone(),
            source,
        })?;
        let mut messages = String::from_utf8_lossy(&output.stdout).into_owned();
        messages.push_str(&String::from_utf8_lossy(&output.stderr));
        Ok(Ran {
            success: output.status.success(),
            status: output.status.code().unwrap_or(1),
            messages,
        })
    }

    /// Runs it to completion with the standard streams of this process, so
    /// that what it prints reaches the user as it printed it (colours
    /// included); returns its exit status (1 when a signal ended it).
    pub fn run_inherited(&self) -> Result<i32, BuildError> {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        if let Some(dir) = &self.dir {
            command.current_dir(dir);
        }
        let status = command.status().map_err(|source| BuildError::Spawn {
            program: self.program.clone(),
            source,
        })?;
        Ok(status.code().unwrap_or(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clang_versions() {
        assert_eq!(
            clang_major("Debian clang version 16.0.6 (15~deb12u1)\nTarget: x"),
            Some(16)
        );
        assert_eq!(clang_major("clang version 17.0.1"), Some(17));
        assert_eq!(
            clang_major("Apple clang version 15.0.0 (clang-1500.1.0.2.5)"),
            Some(15)
        );
        assert_eq!(clang_major("gcc (Debian 12.2.0-14) 12.2.0"), None);
    }

    #[test]
    fn commands_display_shell_quoted() {
        let mut cmd = Cmd::new(Path::new("/usr/bin/clang-16"));
        cmd.args(["-c", "my file.c", "-DX=\"a b\""]);
        assert_eq!(
            cmd.display(),
            r#"/usr/bin/clang-16 -c 'my file.c' '-DX="a b"'"#
        );
    }

    #[test]
    fn finds_clang_16() {
        let clang = find_clang(false).expect("clang-16 is installed (scripts/install-deps.sh)");
        let ran = Cmd::new(&clang).arg("--version").run().unwrap();
        assert!(ran.success);
        assert_eq!(clang_major(&ran.messages), Some(16));
    }
}
