//! A working folder of its own for each run, so that the files a program
//! writes in its working directory (output files, logs, checkpoints) do not
//! pile up or overwrite each other across interleavings (miniFE
//! wrote 616 yaml files into the user's folder).
//!
//! The folder mirrors the user's working directory with a symbolic link
//! per entry, so the program's relative paths still resolve: `input.dat`,
//! `data/mesh.txt`, and one level up (`../pots/Cu_u6.eam`, CoMD's way),
//! since the folder's parent mirrors the working directory's parent the
//! same way. A new file the program creates lands in the run's folder; a
//! file it rewrites through a link, or writes into a linked subfolder, is
//! written where it is, as without mbhybrid.
//!
//! ```text
//! i3/work/             the parent's entries, as links (not the cwd itself)
//! i3/work/CWD_NAME/    the run's working directory: the cwd's entries, as links
//! ```

use std::io;
use std::path::{Path, PathBuf};

/// A parent with more entries than this is not mirrored (a crowded `/tmp`):
/// linking them for every run would cost more than `../` paths are worth.
pub const MAX_PARENT_ENTRIES: usize = 4096;

/// Makes the working folder of one run under `root` (created) mirroring
/// `cwd`, and returns it. Entries whose path holds `skip` (the run
/// directory, when it lies inside `cwd`) are not linked: the program must
/// not find mbhybrid's own files, nor a link cycle through them.
pub fn mirror(cwd: &Path, root: &Path, skip: &Path) -> io::Result<PathBuf> {
    let name = cwd
        .file_name()
        .map_or_else(|| "root".into(), |n| n.to_owned());
    std::fs::create_dir_all(root)?;
    if let Some(parent) = cwd.parent() {
        let entries: Vec<_> = std::fs::read_dir(parent)?.flatten().collect();
        if entries.len() <= MAX_PARENT_ENTRIES {
            for entry in entries.iter().filter(|e| e.file_name() != name) {
                link(&entry.path(), &root.join(entry.file_name()), skip)?;
            }
        }
    }
    let here = root.join(&name);
    std::fs::create_dir(&here)?;
    for entry in std::fs::read_dir(cwd)?.flatten() {
        link(&entry.path(), &here.join(entry.file_name()), skip)?;
    }
    Ok(here)
}

/// Links `to` at `at`, unless `to` holds `skip`.
fn link(to: &Path, at: &Path, skip: &Path) -> io::Result<()> {
    if skip.starts_with(to) {
        return Ok(());
    }
    std::os::unix::fs::symlink(to, at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_resolve_and_new_files_stay_in_the_run() {
        let top = tempfile::tempdir().unwrap();
        let project = top.path().join("project");
        let bin = project.join("bin");
        std::fs::create_dir_all(bin.join("data")).unwrap();
        std::fs::create_dir_all(project.join("pots")).unwrap();
        std::fs::write(bin.join("input.dat"), "in").unwrap();
        std::fs::write(bin.join("data/mesh.txt"), "mesh").unwrap();
        std::fs::write(project.join("pots/cu.eam"), "eam").unwrap();
        let runs = bin.join(".mbhybrid/runs/r1");
        std::fs::create_dir_all(&runs).unwrap();

        let here = mirror(&bin, &runs.join("i1/work"), &runs).unwrap();
        assert_eq!(here, runs.join("i1/work/bin"));
        let read = |p: &str| std::fs::read_to_string(here.join(p)).unwrap();
        assert_eq!(read("input.dat"), "in");
        assert_eq!(read("data/mesh.txt"), "mesh");
        assert_eq!(read("../pots/cu.eam"), "eam");
        assert!(
            !here.join(".mbhybrid").exists(),
            "the run directory is not linked"
        );
        std::fs::write(here.join("out.yaml"), "result").unwrap();
        assert!(!bin.join("out.yaml").exists());
    }
}
