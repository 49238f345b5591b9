//! The site table: every MPI call site of an instrumented program.
//!
//! `mbhybrid build -o OUT` writes it as `OUT.mbh.json`:
//!
//! ```json
//! {"format": "mbhybrid-sites", "version": 1, "program": "OUT",
//!  "sources": ["app.c"],
//!  "sites": [{"id": 1, "function": "main", "call": "MPI_Send",
//!             "file": "app.c", "line": 12, "column": 5}]}
//! ```
//!
//! Ids start at 1; id 0 means "unknown site" in a trace record (a call
//! from code that `build` did not instrument, such as a library).
//!
//! Ids with the top bit set ([`FROM_RETURN_ADDRESS`]) are never in the
//! file: the runtime makes them for a call the program did not label (a
//! program built by plain `mpicc`, a call through a function pointer) from
//! the call's return address, as its offset in the executable
//! ([`site_from_offset`]). The offset, unlike the address, is the same on
//! every rank and in every run of one executable, so these ids compare
//! across ranks and interleavings as `build`'s do; `verify` turns them into
//! sites through the executable's debug information and adds them to its
//! copy of the table ([`SiteTable::add`]).

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The `format` tag of a site table file.
pub const SITE_TABLE_FORMAT: &str = "mbhybrid-sites";
/// The version of the site table format this crate reads and writes.
pub const SITE_TABLE_VERSION: u32 = 1;

/// The top bit of a site id made from a return address (see the module
/// docs); no id `build` writes has it.
pub const FROM_RETURN_ADDRESS: u32 = 1 << 31;

/// The site id of the call whose return address lies `offset` bytes into
/// the executable's image (the address minus the executable's load bias),
/// `None` when the offset does not fit in the 31 bits an id has for it (an
/// executable of more than 2 GiB).
pub fn site_from_offset(offset: u64) -> Option<u32> {
    let offset = u32::try_from(offset).ok()?;
    (offset & FROM_RETURN_ADDRESS == 0).then_some(FROM_RETURN_ADDRESS | offset)
}

/// The return address offset a site id was made from ([`site_from_offset`]),
/// `None` for ids of the site table.
pub fn offset_of_site(id: u32) -> Option<u64> {
    (id & FROM_RETURN_ADDRESS != 0).then_some(u64::from(id & !FROM_RETURN_ADDRESS))
}

/// One MPI call in the program's source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Site {
    /// Stable id, stored by the instrumented code before the call (1-based).
    pub id: u32,
    /// The function containing the call, as the source spells it
    /// (demangled for C++, [`demangle`](crate::demangle)).
    pub function: String,
    /// The MPI function called, as written (`MPI_Send`, `PMPI_Recv`).
    pub call: String,
    /// Source file, relative to the directory `build` ran in when below it
    /// ([`SiteTable::directory`]).
    pub file: String,
    /// 1-based line, 0 when the IR carried no debug location. For a site
    /// made from a return address in code without debug information, 0,
    /// with `file` naming the executable.
    pub line: u32,
    /// 1-based column, 0 when unknown.
    pub column: u32,
}

/// All call sites of one program, as `build` wrote them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteTable {
    /// Always [`SITE_TABLE_FORMAT`].
    pub format: String,
    /// Always [`SITE_TABLE_VERSION`] when written by this crate.
    pub version: u32,
    /// The executable the table describes.
    pub program: String,
    /// The sources it was built from.
    pub sources: Vec<String>,
    /// The sites, ordered by id.
    pub sites: Vec<Site>,
    /// The static analysis of the program (loops, zones, wildcard sites),
    /// when `build` made one; absent in tables written before it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub analysis: Option<crate::static_report::StaticReport>,
    /// Whether `build` put the access checks for `buffer-reuse` into the program
    /// (loads and stores checked against pending nonblocking buffers);
    /// false when it was built with `--no-access-checks` or
    /// `MBHYBRID_ACCESS_CHECKS=off`, and in tables written before it could.
    #[serde(default)]
    pub access_checks: bool,
    /// The directory `build` (or a compiler driver's link) ran in,
    /// absolute: the relative file names of the sites and sources are
    /// relative to it, wherever a later command runs. Empty in tables
    /// written before it was recorded.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub directory: String,
}

/// Why a site table could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SiteTableError {
    /// The file could not be read.
    #[error("cannot read site table {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a site table of a version this crate reads.
    #[error("{path} is not a readable mbhybrid site table: {reason}; {help}", help = .reason.help())]
    Format {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        reason: SiteFormatError,
    },
}

/// What is wrong with the text of a site table ([`SiteTable::parse`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SiteFormatError {
    /// The text is not the JSON of a site table: not UTF-8, a syntax
    /// error, a missing or unknown value, a number out of range (the
    /// message gives the line and column).
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// The table is of another format or version.
    #[error("found format {format:?} version {version}, expected {SITE_TABLE_FORMAT:?} version {SITE_TABLE_VERSION}")]
    Version {
        /// The `format` the file gives.
        format: String,
        /// The `version` the file gives.
        version: u32,
    },
}

impl SiteFormatError {
    /// What to do about it, in one line.
    pub fn help(&self) -> &'static str {
        match self {
            SiteFormatError::Json(_) => {
                "`mbhybrid build` writes this file beside the executable: build the program \
                 again to write it anew"
            }
            SiteFormatError::Version { .. } => {
                "another version of mbhybrid built the program: build it again with this one"
            }
        }
    }
}

impl SiteTable {
    /// An empty table for `program`.
    pub fn new(program: impl Into<String>, sources: Vec<String>) -> Self {
        SiteTable {
            format: SITE_TABLE_FORMAT.to_string(),
            version: SITE_TABLE_VERSION,
            program: program.into(),
            sources,
            sites: Vec::new(),
            analysis: None,
            access_checks: false,
            directory: String::new(),
        }
    }

    /// Where source file `file` (a site's or a source's name) is: under
    /// [`directory`](SiteTable::directory) when relative, or under
    /// `fallback` (the directory of the command at hand) in a table
    /// without one.
    pub fn source_path(&self, file: &str, fallback: &Path) -> PathBuf {
        let base = match self.directory.as_str() {
            "" => fallback,
            directory => Path::new(directory),
        };
        base.join(file)
    }

    /// The path of the table that belongs to executable `exe`.
    pub fn path_for(exe: &Path) -> PathBuf {
        let mut name = exe.as_os_str().to_owned();
        name.push(".mbh.json");
        PathBuf::from(name)
    }

    /// The site with id `id`, if any (id 0 is never a site).
    pub fn get(&self, id: u32) -> Option<&Site> {
        if id == 0 {
            return None;
        }
        // Ids are dense and ordered when written by `build`, and the sites
        // `add` puts after them keep the order; fall back to a search for
        // hand-edited tables.
        match self.sites.get(id as usize - 1) {
            Some(site) if site.id == id => Some(site),
            _ => match self.sites.binary_search_by_key(&id, |s| s.id) {
                Ok(at) => Some(&self.sites[at]),
                Err(_) => self.sites.iter().find(|s| s.id == id),
            },
        }
    }

    /// Adds `site` (one made from a return address, whose id is above every
    /// id `build` writes) in id order, replacing a site of the same id.
    pub fn add(&mut self, site: Site) {
        match self.sites.binary_search_by_key(&site.id, |s| s.id) {
            Ok(at) => self.sites[at] = site,
            Err(at) => self.sites.insert(at, site),
        }
    }

    /// Reads and checks a table.
    pub fn read(path: &Path) -> Result<Self, SiteTableError> {
        let bytes = std::fs::read(path).map_err(|source| SiteTableError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&bytes).map_err(|reason| SiteTableError::Format {
            path: path.to_owned(),
            reason,
        })
    }

    /// Decodes and checks a table from the bytes of its file. Never panics.
    ///
    /// The format and version are checked first, so a table of another
    /// version says so rather than naming the first field it lacks.
    pub fn parse(bytes: &[u8]) -> Result<Self, SiteFormatError> {
        /// The fields every version has.
        #[derive(Deserialize)]
        struct Tag {
            format: String,
            version: u32,
        }
        let tag: Tag = serde_json::from_slice(bytes)?;
        if tag.format != SITE_TABLE_FORMAT || tag.version != SITE_TABLE_VERSION {
            return Err(SiteFormatError::Version {
                format: tag.format,
                version: tag.version,
            });
        }
        Ok(serde_json::from_slice(bytes)?)
    }

    /// Writes the table as pretty JSON.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(path, text + "\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_finds_by_id() {
        let dir = tempfile::tempdir().unwrap();
        let mut table = SiteTable::new("app", vec!["app.c".into()]);
        for (id, call) in [(1, "MPI_Init"), (2, "MPI_Send")] {
            table.sites.push(Site {
                id,
                function: "main".into(),
                call: call.into(),
                file: "app.c".into(),
                line: 10 + id,
                column: 5,
            });
        }
        let path = SiteTable::path_for(&dir.path().join("app"));
        assert!(path.to_string_lossy().ends_with("app.mbh.json"));
        table.write(&path).unwrap();
        let back = SiteTable::read(&path).unwrap();
        assert_eq!(back, table);
        assert_eq!(back.get(2).unwrap().call, "MPI_Send");
        assert!(back.get(0).is_none());
        assert!(back.get(3).is_none());
        // No analysis: no `analysis` key, and tables without one still read.
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("analysis"), "{text}");

        table.analysis = Some(crate::static_report::StaticReport::default());
        table.write(&path).unwrap();
        let back = SiteTable::read(&path).unwrap();
        assert_eq!(back, table);
        assert!(back.analysis.is_some());
    }

    #[test]
    fn ids_from_return_addresses_keep_their_offset_and_sort_after_builds() {
        assert_eq!(site_from_offset(0x1189), Some(FROM_RETURN_ADDRESS | 0x1189));
        assert_eq!(offset_of_site(FROM_RETURN_ADDRESS | 0x1189), Some(0x1189));
        // A non-PIE executable's addresses are its offsets (bias 0).
        assert_eq!(
            site_from_offset(0x40_1136).and_then(offset_of_site),
            Some(0x40_1136)
        );
        assert_eq!(site_from_offset(1 << 31), None);
        assert_eq!(site_from_offset(u64::MAX), None);
        assert_eq!(offset_of_site(7), None);

        let mut table = SiteTable::new("app", vec![]);
        let site = |id, line| Site {
            id,
            function: "main".into(),
            call: "MPI_Recv".into(),
            file: "app.c".into(),
            line,
            column: 0,
        };
        table.sites.push(site(1, 3));
        let (far, near) = (
            site_from_offset(0x2000).unwrap(),
            site_from_offset(0x1000).unwrap(),
        );
        table.add(site(far, 20));
        table.add(site(near, 10));
        table.add(site(far, 21));
        let ids: Vec<u32> = table.sites.iter().map(|s| s.id).collect();
        assert_eq!(ids, [1, near, far]);
        assert_eq!(table.get(far).map(|s| s.line), Some(21));
        assert_eq!(table.get(near).map(|s| s.line), Some(10));
        assert_eq!(table.get(1).map(|s| s.line), Some(3));
        assert!(table.get(site_from_offset(0x3000).unwrap()).is_none());
    }

    #[test]
    fn sources_are_found_from_the_build_directory() {
        let mut table = SiteTable::new("../bin/app", vec!["app.c".into()]);
        let here = Path::new("/work/app/bin");
        // A table of before the directory was recorded: the command's own.
        assert_eq!(
            table.source_path("app.c", here),
            Path::new("/work/app/bin/app.c")
        );
        table.directory = "/work/app/src".into();
        assert_eq!(
            table.source_path("app.c", here),
            Path::new("/work/app/src/app.c")
        );
        assert_eq!(
            table.source_path("/usr/include/x.h", here),
            Path::new("/usr/include/x.h")
        );
        let text = serde_json::to_string(&table).unwrap();
        assert!(text.contains(r#""directory":"/work/app/src""#), "{text}");
    }

    #[test]
    fn rejects_other_formats() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.json");
        std::fs::write(
            &path,
            r#"{"format":"other","version":1,"program":"","sources":[],"sites":[]}"#,
        )
        .unwrap();
        assert!(matches!(
            SiteTable::read(&path),
            Err(SiteTableError::Format { .. })
        ));
    }
}
