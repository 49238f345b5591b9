//! A place in the source, in words, the one way every report names it:
//! `file:line:column` as compilers print it, and, for a place without a
//! line (code without debug information, or an instruction clang gave no
//! line, which it numbers 0), the function instead of a line 0 that
//! points nowhere: ``main.c (in `main`)``.

/// `file:line:column` (without a column of 0); without a line, `file (in
/// `function`)`, or `file` alone when the function is unknown too.
pub fn place(file: &str, line: u32, column: u32, function: Option<&str>) -> String {
    match (line, column, function.filter(|f| !f.is_empty())) {
        (0, _, Some(function)) if file.is_empty() => format!("`{function}`"),
        (0, _, Some(function)) => format!("{file} (in `{function}`)"),
        (0, _, None) => file.to_string(),
        (line, 0, _) => format!("{file}:{line}"),
        (line, column, _) => format!("{file}:{line}:{column}"),
    }
}

/// Where call site `site` is, in words: `app.c:12`; for a site without a
/// line (code without debug information) ``app (in `main`)``.
pub fn site_place(site: &crate::Site) -> String {
    match (site.line, site.function.as_str()) {
        (0, "") => site.file.clone(),
        (0, function) => format!("{} (in `{function}`)", site.file),
        (line, _) => format!("{}:{line}", site.file),
    }
}

impl crate::Location {
    /// Where this location is, in words ([`place`]).
    pub fn place(&self) -> String {
        place(&self.file, self.line, self.column, self.function.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_without_a_line_names_its_function() {
        assert_eq!(place("main.c", 0, 0, Some("main")), "main.c (in `main`)");
        assert_eq!(place("main.c", 0, 7, Some("main")), "main.c (in `main`)");
        assert_eq!(place("main.c", 0, 0, None), "main.c");
        assert_eq!(place("main.c", 0, 0, Some("")), "main.c");
        assert_eq!(place("", 0, 0, Some("f")), "`f`");
        assert_eq!(place("main.c", 12, 0, Some("main")), "main.c:12");
        assert_eq!(place("main.c", 12, 5, None), "main.c:12:5");
    }
}
