//! The `--log` file: every line received, verbatim, and server events as `# ` lines, written
//! as they happen so a test can read them while the server runs.

use std::fs::File;
use std::io::Write as _;
use std::sync::{Arc, Mutex, MutexGuard};

/// The log file, shared by every thread of the server; a no-op without `--log`.
#[derive(Clone, Default)]
pub(crate) struct Log(Option<Arc<Mutex<File>>>);

impl Log {
    /// Opens `path` for appending (no log without one). A test that asks for a log and
    /// cannot get one must fail loudly, hence the panic.
    pub(crate) fn open(path: Option<&str>) -> Log {
        Log(path.map(|path| {
            let file = File::options().create(true).append(true).open(path);
            let file = file.unwrap_or_else(|e| panic!("FAULT_LOG {path}: {e}"));
            Arc::new(Mutex::new(file))
        }))
    }

    /// Appends `bytes` and a newline, flushed at once.
    pub(crate) fn line(&self, bytes: &[u8]) {
        if let Some(f) = &self.0 {
            let mut f = lock(f);
            // A log that cannot be written is not a reason to misbehave otherwise.
            let _ = f.write_all(bytes);
            let _ = f.write_all(b"\n");
            let _ = f.flush();
        }
    }

    /// Appends the event line `# <what>`.
    pub(crate) fn event(&self, what: &str) {
        self.line(format!("# {what}").as_bytes());
    }
}

/// Locks `m` even when a thread panicked while holding it: the data stays usable, and a
/// panicking thread fails the test anyway.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
