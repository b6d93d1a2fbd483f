use super::*;

/// Drops the newline right after the opening quote of an expected block.
fn expect(s: &str) -> &str {
    s.strip_prefix('\n').unwrap_or(s)
}

fn progress_block(width: usize) -> String {
    progress_cases()
        .iter()
        .map(|&(p, t, m)| progress_line(p, t, m, width) + "\n")
        .collect()
}

use mcp_proto::types::*;
use serde_json::json;

pub(super) fn tools_table() -> Table {
    let mut t = Table::new(vec![
        Column::new("NAME"),
        Column::new("TITLE"),
        Column::wrapping("DESCRIPTION"),
    ]);
    t.row(["echo", "", "Returns the text it is given."]);
    t.row([
        "add",
        "Add two numbers",
        "Adds a and b; the sum also comes back as structured content.",
    ]);
    t.row([
        "a_tool_with_a_really_long_name_that_goes_on",
        "Slow",
        "Works for steps × delay_ms, reporting progress after each step. Cancellable.",
    ]);
    t
}

pub(super) fn slow_schema() -> serde_json::Map<String, serde_json::Value> {
    json!({
        "type": "object",
        "properties": {
            "steps": { "type": "integer", "minimum": 1, "maximum": 100, "default": 5, "description": "How many steps" },
            "delay_ms": { "type": "integer", "default": 200, "description": "Milliseconds to wait between two consecutive steps of the work" },
            "mode": { "type": "string", "enum": ["fast", "careful"] },
            "target": { "type": "object", "description": "Where to send it", "properties": {
                "host": { "type": "string", "format": "hostname" },
                "port": { "type": ["integer", "null"] }
            }, "required": ["host"] },
            "tags": { "type": "array", "items": { "type": "string" } }
        },
        "required": ["mode"]
    }).as_object().unwrap().clone()
}

pub(super) fn blocks() -> Vec<ContentBlock> {
    serde_json::from_value(json!([
        { "type": "text", "text": "The quick brown fox jumps over the lazy dog, and then it keeps running far beyond the horizon." },
        { "type": "image", "data": "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAH0lEQVR42mMwSLgARBcMDIAImc2AUwJTCMLGLUEHOwAKqFIBk1gMCgAAAABJRU5ErkJggg==", "mimeType": "image/png" },
        { "type": "audio", "data": "A".repeat(1640), "mimeType": "audio/wav" },
        { "type": "resource_link", "uri": "demo://readme", "name": "readme", "mimeType": "text/plain", "size": 2048, "description": "What this server offers" },
        { "type": "resource", "resource": { "uri": "demo://notes/todo", "mimeType": "text/plain", "text": "buy milk\ncall the plumber about the leaking kitchen tap" } },
        { "type": "resource", "resource": { "uri": "demo://blob", "mimeType": "application/pdf", "blob": "AAAA" } },
        { "type": "hologram", "frames": 3 }
    ])).unwrap()
}

type ProgressCase = (f64, Option<f64>, Option<&'static str>);

fn progress_cases() -> [ProgressCase; 5] {
    [
        (5.0, Some(10.0), Some("step 5 of 10")),
        (0.0, Some(3.0), None),
        (
            10.0,
            Some(10.0),
            Some("a very long message that will not fit on the line at all, no way"),
        ),
        (7.0, None, Some("working")),
        (2.5, Some(0.0), None),
    ]
}

#[test]
fn table_at_80() {
    let rendered = tools_table().render(80);
    assert_eq!(
        rendered,
        expect(
            r#"
NAME                                         TITLE    DESCRIPTION
───────────────────────────────────────────  ───────  ──────────────────────────
echo                                                  Returns the text it is
                                                      given.
add                                          Add tw…  Adds a and b; the sum also
                                                      comes back as structured
                                                      content.
a_tool_with_a_really_long_name_that_goes_on  Slow     Works for steps ×
                                                      delay_ms, reporting
                                                      progress after each step.
                                                      Cancellable.
"#
        )
    );
    assert!(
        rendered
            .lines()
            .all(|l| display_width(l) <= 80 && l == l.trim_end())
    );
}

#[test]
fn table_at_40() {
    let rendered = tools_table().render(40);
    assert_eq!(
        rendered,
        expect(
            r#"
NAME                  TIT…  DESCRIPTION
────────────────────  ────  ────────────
echo                        Returns the
                            text it is
                            given.
add                   Add…  Adds a and
                            b; the sum
                            also comes
                            back as
                            structured
                            content.
a_tool_with_a_reall…  Slow  Works for
                            steps ×
                            delay_ms,
                            reporting
                            progress
                            after each
                            step.
                            Cancellable.
"#
        )
    );
    assert!(
        rendered
            .lines()
            .all(|l| display_width(l) <= 40 && l == l.trim_end())
    );
}

#[test]
fn schema_at_80() {
    let rendered = schema_lines(&slow_schema(), 80);
    assert_eq!(
        rendered,
        expect(
            r#"
mode: string (required) — [one of: fast, careful]
delay_ms: integer — Milliseconds to wait between two consecutive steps of the
    work [default: 200]
steps: integer — How many steps [default: 5; 1 to 100]
tags: array of string
target: object — Where to send it
  host: string (required) — [format: hostname]
  port: integer | null
"#
        )
    );
    assert!(
        rendered
            .lines()
            .all(|l| display_width(l) <= 80 && l == l.trim_end())
    );
}

#[test]
fn schema_at_40() {
    let rendered = schema_lines(&slow_schema(), 40);
    assert_eq!(
        rendered,
        expect(
            r#"
mode: string (required) — [one of: fast,
    careful]
delay_ms: integer — Milliseconds to wait
    between two consecutive steps of the
    work [default: 200]
steps: integer — How many steps
    [default: 5; 1 to 100]
tags: array of string
target: object — Where to send it
  host: string (required) — [format:
      hostname]
  port: integer | null
"#
        )
    );
    assert!(
        rendered
            .lines()
            .all(|l| display_width(l) <= 40 && l == l.trim_end())
    );
}

#[test]
fn content_at_80() {
    let rendered = content_blocks(&blocks(), 80);
    assert_eq!(
        rendered,
        expect(
            r#"
The quick brown fox jumps over the lazy dog, and then it keeps running far
beyond the horizon.
[image/png, 88 B]
[audio/wav, 1.2 KiB]
[link] readme <demo://readme> (text/plain, 2.0 KiB)
       What this server offers
[resource demo://notes/todo (text/plain)]
  buy milk
  call the plumber about the leaking kitchen tap
[resource demo://blob (application/pdf, 3 B)]
[hologram content]
"#
        )
    );
    assert!(
        rendered
            .lines()
            .all(|l| display_width(l) <= 80 && l == l.trim_end())
    );
}

#[test]
fn content_at_40() {
    let rendered = content_blocks(&blocks(), 40);
    assert_eq!(
        rendered,
        expect(
            r#"
The quick brown fox jumps over the lazy
dog, and then it keeps running far
beyond the horizon.
[image/png, 88 B]
[audio/wav, 1.2 KiB]
[link] readme <demo://readme>
       (text/plain, 2.0 KiB)
       What this server offers
[resource demo://notes/todo
  (text/plain)]
  buy milk
  call the plumber about the leaking
  kitchen tap
[resource demo://blob (application/pdf,
  3 B)]
[hologram content]
"#
        )
    );
    assert!(
        rendered
            .lines()
            .all(|l| display_width(l) <= 40 && l == l.trim_end())
    );
}

#[test]
fn progress_at_80() {
    let rendered = progress_block(80);
    assert_eq!(
        rendered,
        expect(
            r#"
[##########..........]  50% 5/10 step 5 of 10
[....................]   0% 0/3
[####################] 100% 10/10 a very long message that will not fit on the…
[.......#............] 7 working
[..#.................] 2.5
"#
        )
    );
    assert!(
        rendered
            .lines()
            .all(|l| display_width(l) <= 80 && l == l.trim_end())
    );
}

#[test]
fn progress_at_40() {
    let rendered = progress_block(40);
    assert_eq!(
        rendered,
        expect(
            r#"
[#####.....]  50% 5/10 step 5 of 10
[..........]   0% 0/3
[##########] 100% 10/10 a very long me…
[.......#..] 7 working
[..#.......] 2.5
"#
        )
    );
    assert!(
        rendered
            .lines()
            .all(|l| display_width(l) <= 40 && l == l.trim_end())
    );
}

#[test]
fn progress_never_reaches_the_last_column() {
    for width in [20, 33, 40, 80, 200] {
        for (p, t, m) in progress_cases() {
            let line = progress_line(p, t, m, width);
            assert!(display_width(&line) < width, "{width}: {line}");
        }
    }
    assert_eq!(
        progress_line(f64::NAN, Some(10.0), None, 40),
        "[..........]   0% 0/10"
    );
    assert_eq!(
        progress_line(15.0, Some(10.0), None, 40),
        "[##########] 100% 15/10"
    );
    assert_eq!(
        progress_line(1.0, Some(3.0), Some("line one\nline two"), 80),
        "[######..............]  33% 1/3 line one line two"
    );
}

#[test]
fn wrap_and_truncate() {
    assert_eq!(wrap("", 10), [""]);
    assert_eq!(wrap("a  b   c", 10), ["a b c"]);
    assert_eq!(wrap("one two three", 7), ["one two", "three"]);
    assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
    assert_eq!(
        wrap("para one\n\npara two", 20),
        ["para one", "", "para two"]
    );
    assert_eq!(truncate("hello", 5), "hello");
    assert_eq!(truncate("hello world", 5), "hell…");
    assert_eq!(truncate("hello", 0), "");
    // Wide characters count two columns.
    assert_eq!(display_width("日本語"), 6);
    assert_eq!(truncate("日本語テキスト", 7), "日本語…");
    assert_eq!(wrap("日本語 テキスト", 8), ["日本語", "テキスト"]);
    assert_eq!(
        wrap_hanging("aaa bbb ccc ddd", 8, 2),
        ["aaa bbb", "  ccc", "  ddd"]
    );
    assert_eq!(
        wrap_hanging("abcdefghijkl", 6, 2),
        ["abcdef", "  ghij", "  kl"]
    );
}

#[test]
fn table_edge_cases() {
    let mut t = Table::new(vec![Column::new("K"), Column::right("COUNT")]);
    t.row(["a", "7"])
        .row(["bbbb", "1234"])
        .row(["only one cell"]);
    assert_eq!(t.len(), 3);
    assert_eq!(
        t.render(40),
        expect(
            "
K              COUNT
─────────────  ─────
a                  7
bbbb            1234
only one cell
"
        )
    );
    let empty = Table::new(vec![Column::new("NAME"), Column::wrapping("DESCRIPTION")]);
    assert!(empty.is_empty());
    assert_eq!(empty.render(80), "NAME  DESCRIPTION\n────  ───────────\n");
    // Far too many columns for the width still renders, one line per row.
    let mut wide = Table::new((0..12).map(|i| Column::new(format!("COLUMN{i}"))).collect());
    wide.row((0..12).map(|i| format!("value{i}")));
    assert_eq!(wide.render(40).lines().count(), 3);
}

#[test]
fn schema_edge_cases() {
    let none = json!({ "type": "object" });
    assert_eq!(
        schema_lines(none.as_object().unwrap(), 80),
        "(no arguments)\n"
    );
    let string_root = json!({ "type": "string" });
    assert_eq!(
        schema_lines(string_root.as_object().unwrap(), 80),
        "(input is string, not an object)\n"
    );
    let odd = json!({
        "type": "object",
        "properties": {
            "r": { "$ref": "#/definitions/Thing" },
            "u": { "anyOf": [{ "type": "string" }, { "type": "number" }] },
            "e": { "enum": ["x y", 2] },
            "c": { "const": "fixed" },
            "l": { "type": "string", "minLength": 1, "maxLength": 8, "pattern": "^[a-z]+$" },
            "items": { "type": "array", "items": { "type": "object", "properties": { "id": { "type": "integer" } } } },
            "bad": 3
        }
    });
    assert_eq!(
        schema_lines(odd.as_object().unwrap(), 80),
        expect(
            r#"
bad: any
c: const "fixed"
e: enum — [one of: "x y", 2]
items: array of object
  id: integer
l: string — [length 1 to 8; pattern: ^[a-z]+$]
r: ref Thing
u: string | number
"#
        )
    );
}

#[test]
fn human_sizes() {
    assert_eq!(human_bytes(0), "0 B");
    assert_eq!(human_bytes(1023), "1023 B");
    assert_eq!(human_bytes(1024), "1.0 KiB");
    assert_eq!(human_bytes(1536), "1.5 KiB");
    assert_eq!(human_bytes(5 * 1024 * 1024), "5.0 MiB");
    assert_eq!(content::base64_len("AAAA"), 3);
    assert_eq!(content::base64_len("AAA="), 2);
    assert_eq!(content::base64_len("AA=="), 1);
}

#[test]
fn log_lines() {
    let params: LoggingMessageParams = serde_json::from_value(json!({
        "level": "warning", "logger": "db", "data": "connection slow"
    }))
    .unwrap();
    assert_eq!(log_line(&params), "[warning] db: connection slow");
    let params: LoggingMessageParams =
        serde_json::from_value(json!({ "level": "error", "data": { "code": 7 } })).unwrap();
    assert_eq!(log_line(&params), r#"[error] {"code":7}"#);
}

#[test]
fn resource_contents_are_verbatim() {
    let contents: Vec<ResourceContents> = serde_json::from_value(json!([
        { "uri": "demo://readme", "mimeType": "text/plain", "text": "line one\n  indented line" }
    ]))
    .unwrap();
    assert_eq!(
        resource_contents(&contents, 80),
        "line one\n  indented line\n"
    );
    // Wider than the terminal: broken at a space, the continuation indented like its line.
    assert_eq!(
        resource_contents(&contents, 12),
        "line one\n  indented\n  line\n"
    );
    let two: Vec<ResourceContents> = serde_json::from_value(json!([
        { "uri": "a://1", "text": "x\n" },
        { "uri": "a://2", "blob": "AAAA", "mimeType": "image/png" }
    ]))
    .unwrap();
    assert_eq!(
        resource_contents(&two, 80),
        "[resource a://1]\nx\n[resource a://2 (image/png, 3 B)]\n"
    );
}

#[test]
fn raw_output() {
    let result: CallToolResult = serde_json::from_value(json!({
        "content": [{ "type": "text", "text": "a" }, { "type": "text", "text": "b" }]
    }))
    .unwrap();
    assert_eq!(raw_tool_result(&result).unwrap().bytes, b"a\nb");
    let image: CallToolResult = serde_json::from_value(json!({
        "content": [
            { "type": "text", "text": "caption" },
            { "type": "image", "data": crate::demo_server::DEMO_PNG_BASE64, "mimeType": "image/png" }
        ]
    }))
    .unwrap();
    let raw = raw_tool_result(&image).unwrap();
    assert_eq!(raw.texts_left_out, 1);
    let png = raw.bytes;
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(png.len(), 88);
    let two: CallToolResult = serde_json::from_value(json!({
        "content": [
            { "type": "audio", "data": "AAAA", "mimeType": "audio/wav" },
            { "type": "resource", "resource": { "uri": "x://b", "blob": "AAAA" } }
        ]
    }))
    .unwrap();
    assert_eq!(raw_tool_result(&two), Err(RawError::Ambiguous(2)));
    let bad: CallToolResult = serde_json::from_value(json!({
        "content": [{ "type": "image", "data": "!!!", "mimeType": "image/png" }]
    }))
    .unwrap();
    assert!(matches!(raw_tool_result(&bad), Err(RawError::BadBase64(_))));
    let empty = CallToolResult::default();
    assert_eq!(raw_tool_result(&empty), Err(RawError::Empty));
    let contents: Vec<ResourceContents> =
        serde_json::from_value(json!([{ "uri": "x://t", "text": "plain" }])).unwrap();
    assert_eq!(raw_resource(&contents).unwrap().bytes, b"plain");
}

#[test]
fn terminal_text_keeps_its_layout() {
    let text = "{\n  \"name\": \"x\",\n  \"list\":   [1,  2]\n}\n\n    code();";
    assert_eq!(super::wrap_keeping_layout(text, 80).join("\n"), text);
    // Only a line wider than the width is broken, and its continuation keeps the indent.
    let long = "    alpha beta gamma delta epsilon zeta eta theta";
    assert_eq!(
        super::wrap_keeping_layout(long, 24),
        [
            "    alpha beta gamma",
            "    delta epsilon zeta",
            "    eta theta"
        ]
    );
    // A word longer than the room is split at the width.
    assert_eq!(
        super::wrap_keeping_layout("  abcdefghijklmnop", 10),
        ["  abcdefgh", "  ijklmnop"]
    );
    assert!(
        super::wrap_keeping_layout(&format!("\t{}", "x ".repeat(100)), 20)
            .iter()
            .all(|l| display_width(l) <= 20)
    );
}
