//! Capturing a child's stderr: a bounded tail for error messages, drained continuously.

use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use futures_io::AsyncRead;
use futures_util::AsyncReadExt as _;

/// Limits for a [`StderrTail`].
///
/// Memory use is bounded by about `max_bytes + max_line_len` whatever the child writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StderrTailConfig {
    /// Keep at most this many complete lines (at least 1 is kept). Default 200.
    pub max_lines: usize,
    /// Keep at most this many bytes of complete lines; the newest line is kept even if it
    /// alone is larger. Default 64 KiB.
    pub max_bytes: usize,
    /// Cut a line after this many bytes; the rest, up to the next newline, is counted and
    /// dropped. Default 4 KiB.
    pub max_line_len: usize,
}

impl Default for StderrTailConfig {
    fn default() -> Self {
        Self {
            max_lines: 200,
            max_bytes: 64 * 1024,
            max_line_len: 4 * 1024,
        }
    }
}

/// The last lines a child wrote to stderr, within fixed limits.
///
/// Feed it with [`StderrTail::push`] (usually through [`drain_stderr`]) and read it with
/// [`StderrTail::last_lines`] when building an error message ("server exited with status 1;
/// last stderr lines: ..."). Older lines are dropped as new ones arrive. Lines are split on
/// `\n`, a trailing `\r` is removed, invalid UTF-8 is replaced, and an over-long line is cut
/// and marked with the number of bytes removed.
#[derive(Debug, Clone)]
pub struct StderrTail {
    config: StderrTailConfig,
    lines: VecDeque<String>,
    /// Sum of `lines[i].len()`.
    bytes: usize,
    /// The line being received, at most `max_line_len` bytes.
    partial: Vec<u8>,
    /// Bytes of the current line dropped because it was over-long.
    partial_cut: u64,
    total_bytes: u64,
    total_lines: u64,
}

impl Default for StderrTail {
    fn default() -> Self {
        Self::new(StderrTailConfig::default())
    }
}

impl StderrTail {
    /// An empty tail with the given limits.
    pub fn new(config: StderrTailConfig) -> Self {
        Self {
            config,
            lines: VecDeque::new(),
            bytes: 0,
            partial: Vec::new(),
            partial_cut: 0,
            total_bytes: 0,
            total_lines: 0,
        }
    }

    /// The limits this tail was made with.
    pub fn config(&self) -> StderrTailConfig {
        self.config
    }

    /// Appends a chunk of stderr output. Chunks may split lines anywhere.
    pub fn push(&mut self, bytes: &[u8]) {
        self.push_with(bytes, |_| {});
    }

    /// Appends a chunk like [`StderrTail::push`] and calls `on_line` with each line it
    /// completes, in order (as stored: cut and marked if over-long). Use it to log lines as
    /// they arrive.
    pub fn push_with(&mut self, bytes: &[u8], mut on_line: impl FnMut(&str)) {
        self.total_bytes = self.total_bytes.saturating_add(bytes.len() as u64);
        let mut rest = bytes;
        while let Some(nl) = memchr::memchr(b'\n', rest) {
            self.append_partial(&rest[..nl]);
            self.finish_line(&mut on_line);
            rest = &rest[nl + 1..];
        }
        self.append_partial(rest);
    }

    /// Completes a final line that had no newline (call at end of stream), passing it to
    /// `on_line`. Does nothing if no partial line is pending.
    pub fn finish_with(&mut self, mut on_line: impl FnMut(&str)) {
        if !self.partial.is_empty() || self.partial_cut > 0 {
            self.finish_line(&mut on_line);
        }
    }

    /// Up to `n` of the most recent complete lines, oldest first.
    ///
    /// A partial line (no newline yet) is not included until [`StderrTail::finish_with`] is
    /// called, which [`drain_stderr`] does at end of stream.
    pub fn last_lines(&self, n: usize) -> Vec<String> {
        let skip = self.lines.len().saturating_sub(n);
        self.lines.iter().skip(skip).cloned().collect()
    }

    /// Number of complete lines held.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether no complete line is held.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Bytes of complete lines held (after cutting).
    pub fn held_bytes(&self) -> usize {
        self.bytes
    }

    /// Bytes pushed over the tail's whole life, including dropped ones.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// Lines completed over the tail's whole life, including dropped ones.
    pub fn total_lines(&self) -> u64 {
        self.total_lines
    }

    fn append_partial(&mut self, bytes: &[u8]) {
        let room = self.config.max_line_len.saturating_sub(self.partial.len());
        let take = room.min(bytes.len());
        self.partial.extend_from_slice(&bytes[..take]);
        self.partial_cut = self.partial_cut.saturating_add((bytes.len() - take) as u64);
    }

    fn finish_line(&mut self, on_line: &mut impl FnMut(&str)) {
        if self.partial_cut == 0 && self.partial.last() == Some(&b'\r') {
            self.partial.pop();
        }
        let mut line = String::from_utf8_lossy(&self.partial).into_owned();
        if self.partial_cut > 0 {
            line.push_str(&format!(" [... {} bytes cut]", self.partial_cut));
        }
        self.partial.clear();
        self.partial_cut = 0;
        self.total_lines = self.total_lines.saturating_add(1);
        on_line(&line);

        self.bytes += line.len();
        self.lines.push_back(line);
        while self.lines.len() > 1
            && (self.lines.len() > self.config.max_lines || self.bytes > self.config.max_bytes)
        {
            if let Some(old) = self.lines.pop_front() {
                self.bytes -= old.len();
            }
        }
    }
}

/// The `tracing` target of the events [`drain_stderr`] makes of a server's stderr lines: a
/// subscriber that wants to pass a server's log through (as `mcp bridge` does) enables this
/// target and prints the event's message, prefixed with its `server` field if it likes.
pub const SERVER_STDERR_TARGET: &str = "mcp_driver::server_stderr";

/// Reads `reader` (a child's stderr) to its end into `tail`, logging each line.
///
/// Spawn this as its own task for every child, right after spawning: it reads continuously,
/// so a chatty server never blocks on a full stderr pipe, and it holds only what `tail`
/// allows. Each line becomes a `tracing` event at debug level, target
/// [`SERVER_STDERR_TARGET`], with a `server` field set to `name`, as it arrives. The lock on `tail` is held only while a chunk is pushed.
///
/// Returns when the stream ends (the child and every process sharing its stderr closed it).
///
/// # Errors
///
/// A read error other than `Interrupted` ends the loop and is returned; the partial line is
/// still completed first.
pub async fn drain_stderr<R>(
    mut reader: R,
    tail: Arc<Mutex<StderrTail>>,
    name: Arc<str>,
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
{
    let log = |line: &str| tracing::debug!(target: SERVER_STDERR_TARGET, server = &*name, "{line}");
    let mut buf = vec![0u8; 8 * 1024];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) => {
                lock(&tail).finish_with(log);
                return Ok(());
            }
            Ok(n) => lock(&tail).push_with(&buf[..n], log),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                lock(&tail).finish_with(log);
                tracing::debug!(server = &*name, error = %e, "reading stderr failed");
                return Err(e);
            }
        }
    }
}

/// The tail is plain data with no invariant a panicking reader could break halfway, so a
/// poisoned lock is still usable.
fn lock(tail: &Mutex<StderrTail>) -> std::sync::MutexGuard<'_, StderrTail> {
    tail.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tail(max_lines: usize, max_bytes: usize, max_line_len: usize) -> StderrTail {
        StderrTail::new(StderrTailConfig {
            max_lines,
            max_bytes,
            max_line_len,
        })
    }

    #[test]
    fn defaults_match_the_documented_limits() {
        let c = StderrTailConfig::default();
        assert_eq!(
            (c.max_lines, c.max_bytes, c.max_line_len),
            (200, 65536, 4096)
        );
    }

    #[test]
    fn splits_lines_across_chunks_and_strips_cr() {
        let mut t = StderrTail::default();
        t.push(b"hel");
        t.push(b"lo\r\nwor");
        assert_eq!(t.last_lines(10), ["hello"]);
        t.push(b"ld\n\n");
        assert_eq!(t.last_lines(10), ["hello", "world", ""]);
        assert_eq!(t.total_lines(), 3);
        assert_eq!(t.total_bytes(), 14);
    }

    #[test]
    fn byte_by_byte_equals_one_chunk() {
        let input = b"a\r\nbb\n\nccc\r\ndddddddddd\ne";
        let mut one = tail(3, 1000, 4);
        one.push(input);
        let mut each = tail(3, 1000, 4);
        for b in input {
            each.push(std::slice::from_ref(b));
        }
        assert_eq!(one.last_lines(10), each.last_lines(10));
        assert_eq!(one.last_lines(10), ["", "ccc", "dddd [... 6 bytes cut]"]);
    }

    #[test]
    fn keeps_only_the_last_max_lines() {
        let mut t = tail(3, 1 << 20, 100);
        for i in 0..10 {
            t.push(format!("line {i}\n").as_bytes());
        }
        assert_eq!(t.last_lines(100), ["line 7", "line 8", "line 9"]);
        assert_eq!(t.last_lines(2), ["line 8", "line 9"]);
        assert_eq!(t.len(), 3);
        assert_eq!(t.total_lines(), 10);
    }

    #[test]
    fn keeps_only_max_bytes() {
        let mut t = tail(1000, 10, 100);
        t.push(b"aaaa\nbbbb\ncccc\n");
        // 4 + 4 + 4 > 10: the oldest line goes.
        assert_eq!(t.last_lines(10), ["bbbb", "cccc"]);
        assert_eq!(t.held_bytes(), 8);
    }

    #[test]
    fn newest_line_is_kept_even_if_larger_than_max_bytes() {
        let mut t = tail(10, 4, 100);
        t.push(b"ab\n0123456789\n");
        assert_eq!(t.last_lines(10), ["0123456789"]);
    }

    #[test]
    fn over_long_line_is_cut_and_memory_stays_bounded() {
        let mut t = StderrTail::default();
        let chunk = vec![b'x'; 64 * 1024];
        for _ in 0..16 {
            t.push(&chunk);
        }
        // Nothing complete yet; the pending line never grows past max_line_len.
        assert!(t.is_empty());
        assert!(t.partial.len() <= 4096);
        t.push(b"\nafter\n");
        let lines = t.last_lines(2);
        assert_eq!(lines[0].len(), 4096 + " [... 1044480 bytes cut]".len());
        assert!(lines[0].ends_with(" [... 1044480 bytes cut]"));
        assert_eq!(lines[1], "after");
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        let mut t = StderrTail::default();
        t.push(b"caf\xc3\xa9 \xff!\n");
        assert_eq!(t.last_lines(1), ["café \u{fffd}!"]);
    }

    #[test]
    fn finish_completes_a_partial_line_once() {
        let mut t = StderrTail::default();
        t.push(b"done\nno newline");
        let mut seen = Vec::new();
        t.finish_with(|l| seen.push(l.to_owned()));
        t.finish_with(|l| seen.push(l.to_owned()));
        assert_eq!(seen, ["no newline"]);
        assert_eq!(t.last_lines(5), ["done", "no newline"]);
    }

    #[test]
    fn push_with_reports_each_completed_line() {
        let mut t = tail(1, 1 << 20, 100);
        let mut seen = Vec::new();
        t.push_with(b"a\nb\nc", |l| seen.push(l.to_owned()));
        // Every line is reported even though only one is kept.
        assert_eq!(seen, ["a", "b"]);
        assert_eq!(t.last_lines(5), ["b"]);
    }

    #[test]
    fn drain_reads_to_end_and_fills_the_tail() {
        let data: Vec<u8> = (0..1000)
            .flat_map(|i| format!("l{i}\n").into_bytes())
            .collect();
        let shared = Arc::new(Mutex::new(tail(5, 1 << 20, 100)));
        let reader = futures_util::io::Cursor::new(data);
        futures_util::FutureExt::now_or_never(drain_stderr(reader, shared.clone(), "srv".into()))
            .expect("a cursor never blocks")
            .unwrap();
        let t = shared.lock().unwrap();
        assert_eq!(t.last_lines(2), ["l998", "l999"]);
        assert_eq!(t.total_lines(), 1000);
    }
}
