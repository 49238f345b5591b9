//! Source files quoted by the human renderer, read on demand.

use codespan_reporting::files::SimpleFiles;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Reads the sources that findings point at, relative to a base directory.
pub(crate) struct SourceFiles {
    base: PathBuf,
    files: SimpleFiles<String, String>,
    ids: HashMap<String, Option<usize>>,
}

impl SourceFiles {
    /// Sources relative to `base` (the directory the user ran mbhybrid in).
    pub(crate) fn new(base: &Path) -> Self {
        SourceFiles {
            base: base.to_owned(),
            files: SimpleFiles::new(),
            ids: HashMap::new(),
        }
    }

    /// The file id of `name`, reading it the first time; `None` when it
    /// cannot be read (the report then names the line without quoting it).
    pub(crate) fn id(&mut self, name: &str) -> Option<usize> {
        if let Some(id) = self.ids.get(name) {
            return *id;
        }
        let path = self.base.join(name);
        let id = std::fs::read_to_string(path)
            .ok()
            .map(|text| self.files.add(name.to_string(), text));
        self.ids.insert(name.to_string(), id);
        id
    }

    /// The byte range to underline for `line`:`column` of file `id`: from
    /// the column (or the first non-blank) to the end of the line.
    pub(crate) fn span(&self, id: usize, line: u32, column: u32) -> Option<std::ops::Range<usize>> {
        let text = self.files.get(id).ok()?.source();
        let start_of_line = text
            .split_inclusive('\n')
            .take(line.checked_sub(1)? as usize)
            .map(str::len)
            .sum::<usize>();
        let rest = text.get(start_of_line..)?;
        let line_text = rest.split('\n').next()?;
        let indent = line_text.len() - line_text.trim_start().len();
        let from = if column > 0 {
            (column as usize - 1).min(line_text.len())
        } else {
            indent
        };
        // Underline the code, not a trailing comment.
        let code = &line_text[..comment_start(line_text, from)];
        let to = code.trim_end().len().max(from);
        Some(start_of_line + from..start_of_line + to)
    }

    pub(crate) fn files(&self) -> &SimpleFiles<String, String> {
        &self.files
    }
}

/// Where a `//` or `/*` comment starts at or after `from`, outside string
/// and character literals; the line's length when there is none.
fn comment_start(line: &str, from: usize) -> usize {
    let bytes = line.as_bytes();
    let mut quote = None;
    let mut i = 0;
    while i < bytes.len() {
        match (quote, bytes[i]) {
            (Some(_), b'\\') => i += 1,
            (Some(q), c) if c == q => quote = None,
            (None, b'"' | b'\'') => quote = Some(bytes[i]),
            (None, b'/') if i >= from && matches!(bytes.get(i + 1), Some(b'/' | b'*')) => return i,
            _ => {}
        }
        i += 1;
    }
    line.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_cover_the_statement_from_its_column() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.c"), "int main() {\n    foo(1);   \n}\n").unwrap();
        let mut files = SourceFiles::new(dir.path());
        let id = files.id("a.c").unwrap();
        let text = "int main() {\n    foo(1);   \n}\n";
        assert_eq!(&text[files.span(id, 2, 5).unwrap()], "foo(1);");
        assert_eq!(&text[files.span(id, 2, 0).unwrap()], "foo(1);");
        assert_eq!(files.span(id, 0, 0), None);
        assert_eq!(comment_start("x = 1; // note", 0), 7);
        assert_eq!(comment_start("s = \"a//b\"; /* c */", 0), 12);
        assert_eq!(comment_start("no comment", 0), 10);
        assert!(files.id("missing.c").is_none());
    }
}
