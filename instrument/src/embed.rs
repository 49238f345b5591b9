//! What `mbhybrid-cc -c` leaves in an object file for the link step: the
//! translation unit's front-end IR and how to generate code from it.
//!
//! The object is a real ELF object (a plain linker links it as it is); the
//! record lives in its section [`SECTION`], marked `SHF_EXCLUDE` so that a
//! plain link drops it from the executable. A section travels with the
//! object through `cp`, `ar` and `install`, which a file beside the object
//! would not. A relocatable link (`ld -r`, `cc -r`) concatenates the
//! sections of its inputs, so a section holds one or more records, each
//! self-delimiting:
//!
//! | bytes | what |
//! | --- | --- |
//! | 8 | the magic `MBHYBRID` |
//! | 1 | the format version, [`VERSION`] |
//! | 4 | `m`, the length of the metadata, little endian |
//! | 8 | `b`, the length of the bitcode, little endian |
//! | m | the metadata, a JSON object ([`UnitMeta`]) |
//! | b | the LLVM 16 bitcode of the unit as clang's front end left it (`-g`, no optimization pass run yet) |
//!
//! Zero bytes between records (alignment padding of a relocatable link)
//! are skipped.

use std::path::{Path, PathBuf};

use object::read::archive::ArchiveFile;
use object::{Object, ObjectSection};
use serde::{Deserialize, Serialize};

use crate::toolchain::{find_llvm_tool, Cmd};
use crate::BuildError;

/// The name of the ELF section that holds the records.
pub(crate) const SECTION: &str = ".mbhybrid";
/// The section clang's `-fembed-bitcode=all` writes the unit's IR to.
pub(crate) const CLANG_BITCODE_SECTION: &str = ".llvmbc";
/// The section clang's `-fembed-bitcode=all` writes its `-cc1` flags to
/// (unused by mbhybrid, removed with the other).
pub(crate) const CLANG_CMDLINE_SECTION: &str = ".llvmcmd";

const MAGIC: &[u8; 8] = b"MBHYBRID";
/// The version of the record format; a reader refuses other versions.
pub(crate) const VERSION: u8 = 1;
const HEADER_LEN: usize = 8 + 1 + 4 + 8;

/// The language of a unit: which clang driver and MPI flags it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Language {
    /// C (`clang-16`, `mpicc`'s flags).
    #[serde(rename = "c")]
    C,
    /// C++ (`clang++-16`, `mpicxx`'s flags).
    #[serde(rename = "c++")]
    Cxx,
}

/// How a unit was compiled: what the link step needs besides its IR.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UnitMeta {
    /// The source's language.
    pub language: Language,
    /// The source file, absolute: the file sites name when the IR records
    /// none, and where `mbhybrid.toml` is looked for.
    pub source: PathBuf,
    /// The directory the compiler ran in; code generation at link time
    /// runs there too, so relative paths in `flags` mean what they meant.
    pub directory: PathBuf,
    /// The compile command's flags that matter to code generation (the
    /// optimization level, target and code model flags, …): the whole
    /// command less its inputs, output, mode and dependency flags.
    pub flags: Vec<String>,
    /// The MPI whose `mpi.h` it was compiled with (absent in records made
    /// before mbhybrid knew more than one MPI: MPICH's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mpi: Option<crate::MpiFamily>,
}

/// One record: a unit's metadata and IR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    pub meta: UnitMeta,
    pub bitcode: Vec<u8>,
}

impl Record {
    /// The record's bytes, as [`decode`] reads them.
    pub fn encode(&self) -> Vec<u8> {
        let meta = serde_json::to_vec(&self.meta).expect("UnitMeta serializes");
        let meta_len = u32::try_from(meta.len()).expect("metadata under 4 GiB");
        let mut out = Vec::with_capacity(HEADER_LEN + meta.len() + self.bitcode.len());
        out.extend_from_slice(MAGIC);
        out.push(VERSION);
        out.extend_from_slice(&meta_len.to_le_bytes());
        out.extend_from_slice(&(self.bitcode.len() as u64).to_le_bytes());
        out.extend_from_slice(&meta);
        out.extend_from_slice(&self.bitcode);
        out
    }
}

/// Every record in `bytes` (the contents of a [`SECTION`]), in order.
pub(crate) fn decode(mut bytes: &[u8]) -> Result<Vec<Record>, String> {
    let mut records = Vec::new();
    loop {
        while let [0, rest @ ..] = bytes {
            bytes = rest;
        }
        if bytes.is_empty() {
            return Ok(records);
        }
        if bytes.len() < HEADER_LEN || &bytes[..8] != MAGIC {
            return Err(format!(
                "record {} does not start with the mbhybrid magic",
                records.len() + 1
            ));
        }
        if bytes[8] != VERSION {
            return Err(format!(
                "record {} has format version {}, this mbhybrid reads version {VERSION}; \
                 rebuild the object with this mbhybrid-cc",
                records.len() + 1,
                bytes[8]
            ));
        }
        let meta_len = u32::from_le_bytes(bytes[9..13].try_into().expect("4 bytes")) as usize;
        let bitcode_len = u64::from_le_bytes(bytes[13..21].try_into().expect("8 bytes"));
        let body = &bytes[HEADER_LEN..];
        let total = usize::try_from(bitcode_len)
            .ok()
            .and_then(|b| b.checked_add(meta_len))
            .filter(|&total| total <= body.len())
            .ok_or_else(|| format!("record {} is cut short", records.len() + 1))?;
        let meta: UnitMeta = serde_json::from_slice(&body[..meta_len])
            .map_err(|e| format!("record {} has unreadable metadata: {e}", records.len() + 1))?;
        records.push(Record {
            meta,
            bitcode: body[meta_len..total].to_vec(),
        });
        bytes = &body[total..];
    }
}

/// What an input of a link is, as far as mbhybrid is concerned.
#[derive(Debug)]
pub(crate) enum Inspected {
    /// An object with records (built by `mbhybrid-cc -c`).
    Object(Vec<Record>),
    /// A static archive some of whose members have records.
    Archive(Vec<Member>),
    /// Anything else (a plain object or archive, a shared library, a
    /// linker script): linked as it is.
    Other,
}

/// A member of a static archive.
#[derive(Debug)]
pub(crate) struct Member {
    /// Its name in the archive.
    pub name: String,
    /// Its bytes, as stored.
    pub data: Vec<u8>,
    /// Its records (none for a member not built by `mbhybrid-cc -c`).
    pub records: Vec<Record>,
}

/// Reads `path` and tells whether it holds records, directly or in archive
/// members. A file that is not ELF or an archive is [`Inspected::Other`];
/// so is a thin archive, whose members are files of their own that the
/// linker reads.
pub(crate) fn inspect(path: &Path) -> Result<Inspected, BuildError> {
    let data = std::fs::read(path).map_err(|source| BuildError::SourceUnreadable {
        path: path.to_owned(),
        source,
    })?;
    let bad = |detail: String| BuildError::BadObject {
        path: path.to_owned(),
        detail,
    };
    match object::FileKind::parse(&*data) {
        Ok(object::FileKind::Archive) => {
            let archive = ArchiveFile::parse(&*data).map_err(|e| bad(e.to_string()))?;
            if archive.is_thin() {
                return Ok(Inspected::Other);
            }
            let mut members = Vec::new();
            let mut any = false;
            for member in archive.members() {
                let member = member.map_err(|e| bad(e.to_string()))?;
                let name = String::from_utf8_lossy(member.name()).into_owned();
                let bytes = member.data(&*data).map_err(|e| bad(e.to_string()))?;
                let records = object_records(bytes)
                    .map_err(|detail| bad(format!("member {name}: {detail}")))?;
                any |= !records.is_empty();
                members.push(Member {
                    name,
                    data: bytes.to_vec(),
                    records,
                });
            }
            Ok(if any {
                Inspected::Archive(members)
            } else {
                Inspected::Other
            })
        }
        Ok(object::FileKind::Elf32 | object::FileKind::Elf64) => {
            let records = object_records(&data).map_err(bad)?;
            Ok(if records.is_empty() {
                Inspected::Other
            } else {
                Inspected::Object(records)
            })
        }
        _ => Ok(Inspected::Other),
    }
}

/// The records of an ELF object's [`SECTION`] (none when it has none, or
/// when `bytes` is not an ELF object).
fn object_records(bytes: &[u8]) -> Result<Vec<Record>, String> {
    let Ok(file) = object::File::parse(bytes) else {
        return Ok(Vec::new());
    };
    match file.section_by_name(SECTION) {
        Some(section) => decode(section.data().map_err(|e| e.to_string())?),
        None => Ok(Vec::new()),
    }
}

/// Turns the object clang wrote with `-Xclang -fembed-bitcode=all` into
/// one that carries a record: reads the IR clang embedded (its
/// [`CLANG_BITCODE_SECTION`]), and replaces clang's two sections with
/// [`SECTION`] holding `meta` and that IR, with `llvm-objcopy`, in place.
pub(crate) fn attach_record(object: &Path, meta: UnitMeta) -> Result<(), BuildError> {
    let data = std::fs::read(object).map_err(|source| BuildError::SourceUnreadable {
        path: object.to_owned(),
        source,
    })?;
    let bad = |detail: String| BuildError::BadObject {
        path: object.to_owned(),
        detail,
    };
    let file = object::File::parse(&*data).map_err(|e| {
        bad(format!(
            "clang did not write an ELF object ({e}); flags such as -flto or -emit-llvm make it \
             write something else"
        ))
    })?;
    let bitcode = file
        .section_by_name(CLANG_BITCODE_SECTION)
        .ok_or_else(|| {
            bad(format!(
                "clang embedded no IR (no {CLANG_BITCODE_SECTION} section) although it was asked to"
            ))
        })?
        .data()
        .map_err(|e| bad(e.to_string()))?
        .to_vec();
    let record = Record { meta, bitcode }.encode();
    let mut payload = tempfile::Builder::new()
        .prefix("mbhybrid-record-")
        .tempfile()
        .map_err(|source| BuildError::TempDir { source })?;
    std::io::Write::write_all(&mut payload, &record).map_err(|source| BuildError::Write {
        path: payload.path().to_owned(),
        source,
    })?;
    let payload = payload.into_temp_path();
    let objcopy = find_llvm_tool("llvm-objcopy")?;
    let mut cmd = Cmd::new(&objcopy);
    cmd.arg(format!("--remove-section={CLANG_BITCODE_SECTION}"))
        .arg(format!("--remove-section={CLANG_CMDLINE_SECTION}"))
        .arg(format!("--add-section={SECTION}={}", payload.display()))
        // `exclude`: a plain link leaves the record out of the executable.
        .arg(format!(
            "--set-section-flags={SECTION}=exclude,readonly,contents"
        ))
        .arg(object);
    let ran = cmd.run()?;
    if !ran.success {
        return Err(BuildError::Tool {
            command: cmd.display(),
            stderr: ran.messages,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(source: &str, bitcode: &[u8]) -> Record {
        Record {
            meta: UnitMeta {
                language: Language::C,
                source: PathBuf::from(source),
                directory: PathBuf::from("/p"),
                flags: vec!["-O2".into(), "-fPIC".into()],
                mpi: Some(crate::MpiFamily::OpenMpi),
            },
            bitcode: bitcode.to_vec(),
        }
    }

    #[test]
    fn records_round_trip() {
        let one = record("/p/a.c", b"BC\xc0\xde one");
        assert_eq!(decode(&one.encode()).unwrap(), vec![one]);
        assert_eq!(decode(&[]).unwrap(), vec![]);
    }

    /// A relocatable link concatenates sections, possibly with padding.
    #[test]
    fn concatenated_records_are_all_read() {
        let a = record("/p/a.c", b"BC\xc0\xde a");
        let b = record("/p/lib/b.c", b"");
        let mut bytes = a.encode();
        bytes.extend_from_slice(&[0, 0, 0]);
        bytes.extend(b.encode());
        assert_eq!(decode(&bytes).unwrap(), vec![a, b]);
    }

    #[test]
    fn damaged_records_are_errors_not_panics() {
        let good = record("/p/a.c", b"BC\xc0\xde 0123456789").encode();
        for cut in 1..good.len() {
            assert!(decode(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut other_version = good.clone();
        other_version[8] = VERSION + 1;
        let err = decode(&other_version).unwrap_err();
        assert!(err.contains("format version"), "{err}");
        let mut huge = good.clone();
        huge[13..21].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(decode(&huge).is_err());
        assert!(decode(b"not a record at all, longer than a header").is_err());
    }

    #[test]
    fn language_names_are_the_compilers() {
        assert_eq!(serde_json::to_string(&Language::Cxx).unwrap(), "\"c++\"");
        assert_eq!(serde_json::to_string(&Language::C).unwrap(), "\"c\"");
    }
}
