//! mbhybrid's own messages on standard error (its errors, its warnings,
//! what it did), as opposed to findings about the program: one small
//! model, a level and a message, then indented detail lines and helps,
//! and one function that prints them ([`emit`]).
//!
//! ```
//! use mbh_diagnostics::tool::ToolDiagnostic;
//!
//! let error = ToolDiagnostic::error("cannot run ./app")
//!     .from("mbhybrid-cc")
//!     .help("build it first");
//! assert_eq!(error.render(), "mbhybrid-cc: error: cannot run ./app\n  = help: build it first\n");
//! ```

/// How serious a tool message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// The command failed.
    Error,
    /// Something the user should know; the command goes on.
    Warning,
}

/// One message of mbhybrid about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct ToolDiagnostic {
    /// Who speaks (`mbhybrid`, `mbhybrid-cc`), before the level.
    origin: Option<String>,
    /// `None`: a line that says what mbhybrid did (`mbhybrid: built ...`).
    level: Option<Level>,
    message: String,
    /// Lines under the message, indented.
    details: Vec<String>,
    /// `= help:` lines, after the details.
    helps: Vec<String>,
    /// Text printed as it came (a compiler's own output), nothing added.
    verbatim: bool,
}

impl ToolDiagnostic {
    fn new(level: Option<Level>, message: impl Into<String>) -> ToolDiagnostic {
        ToolDiagnostic {
            origin: None,
            level,
            message: message.into(),
            details: Vec::new(),
            helps: Vec::new(),
            verbatim: false,
        }
    }

    /// An error.
    pub fn error(message: impl Into<String>) -> ToolDiagnostic {
        ToolDiagnostic::new(Some(Level::Error), message)
    }

    /// A warning.
    pub fn warning(message: impl Into<String>) -> ToolDiagnostic {
        ToolDiagnostic::new(Some(Level::Warning), message)
    }

    /// What mbhybrid did or is doing, without a level.
    pub fn info(message: impl Into<String>) -> ToolDiagnostic {
        ToolDiagnostic::new(None, message)
    }

    /// Another tool's text (clang's warnings, a compiler's errors, lines
    /// already in the compiler style), printed exactly as it is.
    pub fn verbatim(text: impl Into<String>) -> ToolDiagnostic {
        ToolDiagnostic {
            verbatim: true,
            ..ToolDiagnostic::new(None, text)
        }
    }

    /// Lines of another tool's (or already in the compiler style), each
    /// printed as it is, on a line of its own.
    pub fn verbatim_lines(lines: &[String]) -> ToolDiagnostic {
        ToolDiagnostic::verbatim(lines.iter().map(|l| format!("{l}\n")).collect::<String>())
    }

    /// Says who speaks: `mbhybrid: error: ...`.
    pub fn from(mut self, origin: impl Into<String>) -> ToolDiagnostic {
        self.origin = Some(origin.into());
        self
    }

    /// Adds an indented line under the message.
    pub fn detail(mut self, line: impl Into<String>) -> ToolDiagnostic {
        self.details.push(line.into());
        self
    }

    /// Adds a `= help:` line: what to do.
    pub fn help(mut self, help: impl Into<String>) -> ToolDiagnostic {
        self.helps.push(help.into());
        self
    }

    /// The message as printed, each line ended by a newline.
    pub fn render(&self) -> String {
        if self.verbatim {
            return self.message.clone();
        }
        let mut text = String::new();
        if let Some(origin) = &self.origin {
            text.push_str(origin);
            text.push_str(": ");
        }
        match self.level {
            Some(Level::Error) => text.push_str("error: "),
            Some(Level::Warning) => text.push_str("warning: "),
            None => {}
        }
        text.push_str(&self.message);
        text.push('\n');
        for line in &self.details {
            text.push_str("  ");
            text.push_str(line);
            text.push('\n');
        }
        for help in &self.helps {
            text.push_str("  = help: ");
            text.push_str(help);
            text.push('\n');
        }
        text
    }
}

/// Prints `diagnostic` on standard error: the one way mbhybrid's own
/// messages reach the user.
pub fn emit(diagnostic: &ToolDiagnostic) {
    eprint!("{}", diagnostic.render());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_origins_and_verbatim_text() {
        assert_eq!(
            ToolDiagnostic::warning("ignoring -fno-tree-vectorize")
                .from("mbhybrid-cc")
                .render(),
            "mbhybrid-cc: warning: ignoring -fno-tree-vectorize\n"
        );
        assert_eq!(
            ToolDiagnostic::info("built app").from("mbhybrid").render(),
            "mbhybrid: built app\n"
        );
        assert_eq!(
            ToolDiagnostic::error("2 forced match(es) did not happen")
                .detail("one")
                .detail("two")
                .render(),
            "error: 2 forced match(es) did not happen\n  one\n  two\n"
        );
        assert_eq!(
            ToolDiagnostic::verbatim("a.c:1: warning: x\n").render(),
            "a.c:1: warning: x\n"
        );
        assert_eq!(ToolDiagnostic::verbatim("").render(), "");
        let lines = ["a.c:1: warning: x".to_string(), "b.c:2: warning: y".into()];
        assert_eq!(
            ToolDiagnostic::verbatim_lines(&lines).render(),
            "a.c:1: warning: x\nb.c:2: warning: y\n"
        );
    }
}
