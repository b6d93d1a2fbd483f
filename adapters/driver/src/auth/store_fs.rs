//! The file-system steps of [`FileTokenStore`](super::FileTokenStore): a private directory, a
//! temporary file created exclusively under a random name, and advisory locks (`flock`) on
//! lock files beside the store, shared by every process that uses the same store.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// Creates `dir` (and its parents) with mode 0700 when it does not exist.
#[cfg(unix)]
pub(super) fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    if dir.as_os_str().is_empty() || dir.exists() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
pub(super) fn create_private_dir(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// Options that create a file only if nothing (not even a dangling symlink) is at its path,
/// never follow a symlink, and give it mode 0600.
fn exclusive_private() -> OpenOptions {
    let mut o = OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        o.mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    }
    o
}

/// A new temporary file in `dir` for replacing `target` by a rename: created exclusively
/// (`O_EXCL`, `O_NOFOLLOW`, mode 0600) under a random name, so that a file or link planted
/// at a predictable name can neither be overwritten nor followed.
pub(super) fn create_temp(dir: &Path, target: &Path) -> io::Result<(PathBuf, File)> {
    let base = target
        .file_name()
        .map_or("tokens".into(), |n| n.to_string_lossy());
    let mut last = None;
    // A collision of 64 random bits means something else is going on; a few tries suffice.
    for _ in 0..4 {
        let mut bytes = [0u8; 8];
        getrandom::getrandom(&mut bytes)
            .map_err(|e| io::Error::other(format!("no randomness from the OS: {e}")))?;
        let suffix: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let path = dir.join(format!(".{base}.{suffix}.tmp"));
        match exclusive_private().open(&path) {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no temporary file name was free")))
}

/// The lock file `<store>.<suffix>` (created with mode 0600 if missing, never through a
/// symlink), opened for locking.
#[cfg(unix)]
fn open_lock_file(store: &Path, suffix: &str) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut name = store.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    let path = store.with_file_name(name);
    create_private_dir(path.parent().unwrap_or(Path::new(".")))?;
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
}

/// Takes the exclusive lock `<store>.<suffix>`, waiting for it: held while the returned file
/// is open. For the short read-modify-write of the store file itself.
#[cfg(unix)]
pub(super) fn lock(store: &Path, suffix: &str) -> io::Result<File> {
    let f = open_lock_file(store, suffix)?;
    loop {
        match rustix::fs::flock(&f, rustix::fs::FlockOperation::LockExclusive) {
            Ok(()) => return Ok(f),
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// Tries to take the exclusive lock `<store>.<suffix>` without waiting: `Ok(None)` when
/// another open file (another process, or another store object) holds it.
#[cfg(unix)]
pub(super) fn try_lock(store: &Path, suffix: &str) -> io::Result<Option<File>> {
    let f = open_lock_file(store, suffix)?;
    match rustix::fs::flock(&f, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Some(f)),
        Err(rustix::io::Errno::WOULDBLOCK | rustix::io::Errno::INTR) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Without `flock`, the in-process mutex is the only lock.
#[cfg(not(unix))]
pub(super) fn lock(_store: &Path, _suffix: &str) -> io::Result<()> {
    Ok(())
}

#[cfg(not(unix))]
pub(super) fn try_lock(_store: &Path, _suffix: &str) -> io::Result<Option<()>> {
    Ok(Some(()))
}
