//! The tool cache's files: one small JSON file per server configuration in the cache directory.
//!
//! The files are small (one `tools/list` result), so they are read and written with plain
//! `std::fs` on the calling task: a few hundred microseconds at start-up and after each tool
//! list, which is cheaper than a blocking-task hop the [`Runtime`](crate::Runtime) does not
//! offer. Writes go to a temporary file that is renamed over the old one, so a reader never
//! sees half a file. Every failure is logged and otherwise ignored: the cache only speeds up
//! start-up, it is never needed for correctness.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use mcp_manager::tool_cache::{self, CacheEntry, CacheKey, MAX_FILE_BYTES};
use mcp_proto::types::Tool;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// Wall-clock milliseconds since the Unix epoch (0 if the clock is before 1970).
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn path_of(dir: &Path, key: &CacheKey) -> PathBuf {
    dir.join(key.file_name())
}

/// The entry stored for `key`, if its file exists and is valid for that key.
pub(crate) fn load(dir: &Path, key: &CacheKey) -> Option<CacheEntry> {
    let path = path_of(dir, key);
    let bytes = match read_bounded(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return None,
        Err(e) => {
            tracing::debug!(path = %path.display(), error = %e, "tool cache file not read");
            return None;
        }
    };
    match tool_cache::decode(&bytes, Some(key)) {
        Ok(entry) => Some(entry),
        Err(e) => {
            tracing::debug!(path = %path.display(), error = %e, "tool cache file ignored");
            None
        }
    }
}

/// Reads at most one byte more than the format allows, so a huge file is refused by `decode`
/// without being read whole.
fn read_bounded(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read as _;
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Writes `entry`'s file (creating the directory if needed).
pub(crate) fn store(dir: &Path, entry: &CacheEntry) {
    let path = path_of(dir, &entry.key);
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        entry.key.file_name(),
        std::process::id()
    ));
    let result = std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&tmp, tool_cache::encode(entry)))
        .and_then(|()| std::fs::rename(&tmp, &path));
    if let Err(e) = result {
        tracing::debug!(path = %path.display(), error = %e, "tool cache file not written");
        let _ = std::fs::remove_file(&tmp);
    }
}

/// Deletes `key`'s file, if any.
pub(crate) fn remove(dir: &Path, key: &CacheKey) {
    let _ = std::fs::remove_file(path_of(dir, key));
}

/// The payload of a tools entry: a `tools/list` result without the cursor.
#[derive(Serialize, Deserialize)]
struct ToolsPayload {
    tools: Vec<Tool>,
}

/// The payload stored for `tools`.
pub(crate) fn encode_tools(tools: &[Tool]) -> Option<Box<RawValue>> {
    let json = serde_json::to_string(&serde_json::json!({ "tools": tools })).ok()?;
    RawValue::from_string(json).ok()
}

/// The tools in a stored payload; `None` if it is not a tools list.
pub(crate) fn decode_tools(payload: &RawValue) -> Option<Vec<Tool>> {
    serde_json::from_str::<ToolsPayload>(payload.get())
        .ok()
        .map(|p| p.tools)
}
