//! Zone bounds: from `mbhybrid.toml` beside the sources and from the
//! command line (`--zone-bound FILE:LINE=K`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mbh_trace::static_report::{Note, Span, StaticReport};

use crate::BuildError;

/// The configuration file `build` and `analyze` read beside each source.
///
/// ```toml
/// [zones]
/// "app.c:120" = 3    # bounded mixing with k = 3 in the zone opened at app.c:120
/// "lib/x.c:40" = -1  # unbounded
/// ```
pub const CONFIG_FILE: &str = "mbhybrid.toml";

/// A mixing bound for the zone opened by the call at `file:line`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZoneBound {
    /// The file, as written: it names every zone whose file ends with
    /// these path components (`app.c` names `src/app.c`).
    pub file: PathBuf,
    /// The line of the call that opens the zone.
    pub line: u32,
    /// The bound k; negative means unbounded.
    pub bound: i64,
    /// Where it was given (`mbhybrid.toml` path, or `--zone-bound`), for
    /// messages.
    pub origin: String,
}

impl ZoneBound {
    /// Parses `FILE:LINE=K`, the form of `--zone-bound`.
    pub fn parse(spec: &str) -> Result<ZoneBound, String> {
        let (place, k) = spec
            .rsplit_once('=')
            .ok_or_else(|| format!("`{spec}` is not FILE:LINE=K (no `=`)"))?;
        let mut bound = Self::place(place.trim())?;
        bound.bound = k
            .trim()
            .parse()
            .map_err(|_| format!("`{spec}`: the bound `{k}` is not an integer"))?;
        bound.origin = "--zone-bound".into();
        Ok(bound)
    }

    /// Parses `FILE:LINE` (a key of `[zones]`), with bound 0.
    fn place(place: &str) -> Result<ZoneBound, String> {
        let (file, line) = place
            .rsplit_once(':')
            .ok_or_else(|| format!("`{place}` is not FILE:LINE (no `:`)"))?;
        let line: u32 = line
            .parse()
            .map_err(|_| format!("`{place}`: the line `{line}` is not a number"))?;
        if file.is_empty() || line == 0 {
            return Err(format!(
                "`{place}` is not FILE:LINE with a file and a line from 1"
            ));
        }
        Ok(ZoneBound {
            file: PathBuf::from(file),
            line,
            bound: 0,
            origin: String::new(),
        })
    }

    fn matches(&self, span: &Span) -> bool {
        span.line == self.line && Path::new(&span.file).ends_with(&self.file)
    }
}

/// Reads the `[zones]` table of a `mbhybrid.toml`.
pub fn read_config(path: &Path) -> Result<Vec<ZoneBound>, BuildError> {
    let error = |message: String| BuildError::Config {
        path: path.to_owned(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| error(e.to_string()))?;
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| error(e.message().to_owned()))?;
    let Some(zones) = table.get("zones") else {
        return Ok(Vec::new());
    };
    let zones = zones
        .as_table()
        .ok_or_else(|| error("`zones` must be a table: `[zones]`".into()))?;
    zones
        .iter()
        .map(|(key, value)| {
            let mut bound = ZoneBound::place(key).map_err(&error)?;
            bound.bound = value.as_integer().ok_or_else(|| {
                error(format!(
                    "the bound of `{key}` must be an integer, not `{value}`"
                ))
            })?;
            bound.origin = path.display().to_string();
            Ok(bound)
        })
        .collect()
}

/// The bounds of the `mbhybrid.toml` files beside `sources` (each
/// directory read once, in source order).
pub(crate) fn config_bounds(sources: &[PathBuf]) -> Result<Vec<ZoneBound>, BuildError> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for source in sources {
        let dir = source.parent().unwrap_or(Path::new("")).to_owned();
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    let mut bounds = Vec::new();
    for dir in dirs {
        let path = if dir.as_os_str().is_empty() {
            PathBuf::from(CONFIG_FILE)
        } else {
            dir.join(CONFIG_FILE)
        };
        if path.is_file() {
            bounds.extend(read_config(&path)?);
        }
    }
    Ok(bounds)
}

/// Sets the bound of every zone some bound names (later bounds win), adds
/// a note for each bound that names no zone, and returns zone id to bound.
pub(crate) fn apply_bounds(report: &mut StaticReport, bounds: &[ZoneBound]) -> HashMap<u32, i64> {
    let mut out = HashMap::new();
    for bound in bounds {
        let mut matched = false;
        for zone in report.zones.iter_mut().filter(|z| bound.matches(&z.span)) {
            zone.bound = Some(bound.bound);
            out.insert(zone.id, bound.bound);
            matched = true;
        }
        if !matched {
            let same_file: Vec<String> = report
                .zones
                .iter()
                .filter(|z| Path::new(&z.span.file).ends_with(&bound.file))
                .map(|z| z.name.clone())
                .take(6)
                .collect();
            let hint = if same_file.is_empty() {
                "no zone starts in that file".to_owned()
            } else {
                format!("zones there start at {}", same_file.join(", "))
            };
            report.notes.push(Note {
                span: Span {
                    file: bound.file.to_string_lossy().into_owned(),
                    line: bound.line,
                    column: 0,
                },
                message: format!(
                    "the zone bound for {}:{} (from {}) names no zone: zones start right after \
                     a collective call (or a call to a function that always makes one), and {hint}",
                    bound.file.display(),
                    bound.line,
                    bound.origin
                ),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mbh_trace::static_report::ZoneInfo;

    #[test]
    fn parses_command_line_bounds() {
        let b = ZoneBound::parse("src/app.c:120=3").unwrap();
        assert_eq!(
            (b.file, b.line, b.bound),
            (PathBuf::from("src/app.c"), 120, 3)
        );
        assert_eq!(ZoneBound::parse("app.c:7=-1").unwrap().bound, -1);
        assert!(ZoneBound::parse("app.c:120").is_err());
        assert!(ZoneBound::parse("app.c=3").is_err());
        assert!(ZoneBound::parse("app.c:x=3").is_err());
        assert!(ZoneBound::parse("app.c:3=k").is_err());
        assert!(ZoneBound::parse(":3=1").is_err());
    }

    #[test]
    fn reads_the_zones_table() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(CONFIG_FILE);
        std::fs::write(
            &path,
            "[zones]\n\"app.c:120\" = 3\n\"lib/x.c:4\" = -1\n[other]\nx = 1\n",
        )
        .unwrap();
        let bounds = read_config(&path).unwrap();
        assert_eq!(bounds.len(), 2);
        assert_eq!(bounds[0].file, PathBuf::from("app.c"));
        assert_eq!(bounds[1].bound, -1);
        std::fs::write(&path, "[zones]\n\"app.c:120\" = \"three\"\n").unwrap();
        let err = read_config(&path).unwrap_err().to_string();
        assert!(err.contains("must be an integer"), "{err}");
        std::fs::write(&path, "[zones\n").unwrap();
        assert!(matches!(read_config(&path), Err(BuildError::Config { .. })));
        std::fs::write(&path, "zones = 3\n").unwrap();
        assert!(read_config(&path).is_err());
    }

    #[test]
    fn applies_bounds_by_file_suffix_and_notes_misses() {
        let zone = |id: u32, file: &str, line: u32| ZoneInfo {
            id,
            name: format!("{file}:{line}"),
            function: "main".into(),
            opened_by: "MPI_Barrier".into(),
            span: Span {
                file: file.into(),
                line,
                column: 3,
            },
            bound: None,
            wildcard_sites: vec![],
        };
        let mut report = StaticReport {
            zones: vec![zone(1, "src/app.c", 10), zone(2, "src/app.c", 20)],
            ..Default::default()
        };
        let mut first = ZoneBound::parse("app.c:10=2").unwrap();
        first.origin = "mbhybrid.toml".into();
        let bounds = [
            first,
            ZoneBound::parse("src/app.c:10=5").unwrap(),
            ZoneBound::parse("app.c:11=1").unwrap(),
            ZoneBound::parse("pp.c:20=1").unwrap(),
        ];
        let map = apply_bounds(&mut report, &bounds);
        assert_eq!(map, HashMap::from([(1, 5)]));
        assert_eq!(report.zones[0].bound, Some(5));
        assert_eq!(report.zones[1].bound, None);
        assert_eq!(report.notes.len(), 2);
        assert!(
            report.notes[0]
                .message
                .contains("zones there start at src/app.c:10, src/app.c:20"),
            "{}",
            report.notes[0].message
        );
    }
}
