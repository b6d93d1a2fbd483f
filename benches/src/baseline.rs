//! What the core is measured against: the least work any client must do on the same bytes.

use serde::Deserialize;
use serde_json::value::RawValue;

/// A JSON-RPC envelope that borrows everything from the input: the cheapest correct parse
/// with `serde_json` (no allocation when strings have no escapes).
#[derive(Deserialize)]
pub struct BorrowedEnvelope<'a> {
    /// `"2.0"`.
    #[serde(borrow, default)]
    pub jsonrpc: Option<&'a str>,
    /// The id, raw.
    #[serde(borrow, default)]
    pub id: Option<&'a RawValue>,
    /// The method of a request or notification.
    #[serde(borrow, default)]
    pub method: Option<&'a str>,
    /// Raw params.
    #[serde(borrow, default)]
    pub params: Option<&'a RawValue>,
    /// Raw result.
    #[serde(borrow, default)]
    pub result: Option<&'a RawValue>,
    /// Raw error.
    #[serde(borrow, default)]
    pub error: Option<&'a RawValue>,
}

/// A line splitter with no limits and no checks: memchr over each chunk, a carry buffer for
/// a line cut by a chunk boundary (the minimum any reader of a chunked stream needs).
#[derive(Default)]
pub struct NaiveLines {
    carry: Vec<u8>,
}

impl NaiveLines {
    /// Feeds a chunk, calling `f` with every complete line (without its `\n`).
    pub fn feed(&mut self, chunk: &[u8], mut f: impl FnMut(&[u8])) {
        let mut rest = chunk;
        if !self.carry.is_empty() {
            match memchr::memchr(b'\n', rest) {
                None => {
                    self.carry.extend_from_slice(rest);
                    return;
                }
                Some(i) => {
                    self.carry.extend_from_slice(&rest[..i]);
                    f(&self.carry);
                    self.carry.clear();
                    rest = &rest[i + 1..];
                }
            }
        }
        let mut start = 0;
        for i in memchr::memchr_iter(b'\n', rest) {
            f(&rest[start..i]);
            start = i + 1;
        }
        self.carry.extend_from_slice(&rest[start..]);
    }
}

/// Baseline (b): parses a line into a [`BorrowedEnvelope`]; returns a number that depends on
/// the parse so the optimiser cannot drop it.
pub fn borrowed(line: &[u8]) -> usize {
    match serde_json::from_slice::<BorrowedEnvelope<'_>>(line) {
        Ok(env) => {
            env.result.map_or(0, |r| r.get().len())
                + env.params.map_or(0, |p| p.get().len())
                + env.method.map_or(0, str::len)
                + env.id.map_or(0, |i| i.get().len())
                + env.error.map_or(0, |e| e.get().len())
                + env.jsonrpc.map_or(0, str::len)
        }
        Err(_) => 1,
    }
}

/// Baseline (c): parses a line into a `serde_json::Value` tree.
pub fn value(line: &[u8]) -> usize {
    match serde_json::from_slice::<serde_json::Value>(line) {
        Ok(serde_json::Value::Object(map)) => map.len(),
        Ok(_) => 2,
        Err(_) => 1,
    }
}

/// A naive SSE splitter: events end at `\n\n`; the `data: ` line of each is the message. No
/// CR handling, no multi-line data, no limits (what a quick hand-written client does).
#[derive(Default)]
pub struct NaiveSse {
    carry: Vec<u8>,
}

impl NaiveSse {
    /// Feeds a chunk, calling `f` with the data of every complete event.
    pub fn feed(&mut self, chunk: &[u8], mut f: impl FnMut(&[u8])) {
        self.carry.extend_from_slice(chunk);
        let mut start = 0;
        let finder = memchr::memmem::Finder::new(b"\n\n");
        while let Some(i) = finder.find(&self.carry[start..]) {
            let event = &self.carry[start..start + i];
            for line in event.split(|&b| b == b'\n') {
                if let Some(data) = line.strip_prefix(b"data: ") {
                    f(data);
                }
            }
            start += i + 2;
        }
        self.carry.drain(..start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn naive_lines_join_lines_across_chunks() {
        let mut n = NaiveLines::default();
        let mut out = Vec::new();
        for c in [&b"ab"[..], b"c\nde", b"\n", b"f\ng"] {
            n.feed(c, |l| out.push(l.to_vec()));
        }
        assert_eq!(out, [b"abc".to_vec(), b"de".to_vec(), b"f".to_vec()]);
    }

    #[test]
    fn naive_sse_extracts_data_across_chunks() {
        let mut n = NaiveSse::default();
        let mut out = Vec::new();
        for c in [
            &b"event: message\nid: 1\ndata: {\"a\""[..],
            b":1}\n",
            b"\ndata: 2\n\n",
        ] {
            n.feed(c, |d| out.push(d.to_vec()));
        }
        assert_eq!(out, [b"{\"a\":1}".to_vec(), b"2".to_vec()]);
    }

    #[test]
    fn baselines_parse_a_response() {
        let line = br#"{"jsonrpc":"2.0","id":7,"result":{"x":1}}"#;
        assert_eq!(borrowed(line), 7 + 1 + 3);
        assert_eq!(value(line), 3);
        assert_eq!(borrowed(b"not json"), 1);
    }
}
