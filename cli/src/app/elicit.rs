//! Answering `elicitation/create`: asking at the terminal (through [`prompt`], one
//! question at a time), or answering automatically when no terminal is attached (so
//! `mcp demo` never blocks), or declining.

use std::io::{BufRead, Write};

use mcp_proto::jsonrpc::ErrorObject;
use mcp_tokio::HandlerFuture;
use serde_json::{Map, Value, json};

use super::prompt::{self, read_line, say};
use super::ui::Ui;

/// What an automatic answer puts in a required text field that has no default.
pub const AUTO_TEXT: &str = "(answered automatically: no terminal attached)";

/// How elicitations are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElicitMode {
    /// Ask each field at the terminal (stdin and stderr).
    Ask,
    /// Accept with every field's default (or a placeholder), without asking.
    Auto,
    /// Decline every request.
    Decline,
}

impl ElicitMode {
    /// Ask when stdin is a terminal; otherwise `fallback`.
    pub fn for_terminal(ui: &Ui, fallback: ElicitMode) -> Self {
        if ui.stdin_tty && !ui.json {
            ElicitMode::Ask
        } else {
            fallback
        }
    }
}

/// The handler registered on the client.
pub struct Elicitor {
    ui: Ui,
    mode: ElicitMode,
}

impl Elicitor {
    /// A handler answering in `mode`.
    pub fn new(ui: Ui, mode: ElicitMode) -> Self {
        Elicitor { ui, mode }
    }
}

impl mcp_tokio::ElicitationHandler for Elicitor {
    fn elicit(&self, params: Value) -> HandlerFuture<'_, Result<Value, ErrorObject>> {
        Box::pin(async move {
            let message = params
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            if params.get("mode").and_then(Value::as_str) == Some("url") {
                let url = params.get("url").and_then(Value::as_str).unwrap_or("");
                self.ui
                    .note(&format!("the server asks you to open {url}: {message}"));
                return Ok(json!({ "action": "decline" }));
            }
            let schema = params
                .get("requestedSchema")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            match self.mode {
                ElicitMode::Decline => {
                    self.ui.info(&format!(
                        "declined the server's question (no terminal): {message}"
                    ));
                    Ok(json!({ "action": "decline" }))
                }
                ElicitMode::Auto => {
                    let content = auto_answer(&schema);
                    self.ui.info(&format!(
                        "the server asks: {message}\nanswered automatically (no terminal): {}",
                        Value::Object(content.clone())
                    ));
                    Ok(json!({ "action": "accept", "content": content }))
                }
                ElicitMode::Ask => {
                    let answer = prompt::at_terminal(&self.ui, move |input, output| {
                        ask(input, output, &message, &schema)
                    })
                    .await
                    .flatten();
                    Ok(match answer {
                        Some(content) => json!({ "action": "accept", "content": content }),
                        None => json!({ "action": "decline" }),
                    })
                }
            }
        })
    }
}

/// A schema's fields in order, each with its own schema.
type Fields = Vec<(String, Map<String, Value>)>;

fn properties(schema: &Map<String, Value>) -> (Fields, Vec<String>) {
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .map(|(k, v)| (k.clone(), v.as_object().cloned().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    (props, required)
}

fn kind(prop: &Map<String, Value>) -> &str {
    prop.get("type").and_then(Value::as_str).unwrap_or("string")
}

fn choices(prop: &Map<String, Value>) -> Vec<Value> {
    if let Some(e) = prop.get("enum").and_then(Value::as_array) {
        return e.clone();
    }
    // `oneOf: [{const, title}]` (titled enums) and multi-select `items.enum`.
    if let Some(one) = prop.get("oneOf").and_then(Value::as_array) {
        return one.iter().filter_map(|o| o.get("const").cloned()).collect();
    }
    Vec::new()
}

/// The answer given without a terminal: each field's default, else the first choice, else
/// a neutral value of its type; optional fields without a default are left out.
pub fn auto_answer(schema: &Map<String, Value>) -> Map<String, Value> {
    let (props, required) = properties(schema);
    let mut content = Map::new();
    for (name, prop) in props {
        let value = if let Some(d) = prop.get("default") {
            d.clone()
        } else if !required.contains(&name) {
            continue;
        } else if let Some(first) = choices(&prop).into_iter().next() {
            first
        } else {
            match kind(&prop) {
                "boolean" => Value::Bool(false),
                "integer" | "number" => prop.get("minimum").cloned().unwrap_or(json!(0)),
                "array" => json!([]),
                _ => Value::String(AUTO_TEXT.into()),
            }
        };
        content.insert(name, value);
    }
    content
}

/// Parses what the user typed for a field; `Err` says why it does not fit.
pub fn parse_answer(prop: &Map<String, Value>, text: &str) -> Result<Value, String> {
    let text = text.trim();
    let options = choices(prop);
    let value = match kind(prop) {
        "boolean" => match text.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" | "1" => Value::Bool(true),
            "n" | "no" | "false" | "0" => Value::Bool(false),
            _ => return Err("answer yes or no".into()),
        },
        "integer" => text
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| "expected a whole number".to_owned())?,
        "number" => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or("expected a number")?,
        "array" => Value::Array(
            text.split(',')
                .map(|s| Value::String(s.trim().to_owned()))
                .filter(|v| v.as_str() != Some(""))
                .collect(),
        ),
        _ => Value::String(text.to_owned()),
    };
    if !options.is_empty() {
        let items: Vec<&Value> = match &value {
            Value::Array(a) => a.iter().collect(),
            v => vec![v],
        };
        if let Some(bad) = items.iter().find(|v| !options.contains(v)) {
            return Err(format!(
                "{bad} is not one of: {}",
                options
                    .iter()
                    .map(|o| o.as_str().map_or_else(|| o.to_string(), str::to_owned))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    Ok(value)
}

/// Asks each field at the terminal; `None` when the user ends input (Ctrl-D) to decline.
fn ask(
    input: &mut dyn BufRead,
    output: &mut dyn Write,
    message: &str,
    schema: &Map<String, Value>,
) -> Option<Map<String, Value>> {
    let (props, required) = properties(schema);
    say(output, &format!("the server asks: {message}\n"));
    let any_default = props.iter().any(|(_, prop)| prop.get("default").is_some());
    say(
        output,
        if any_default {
            "(press Enter to take the [default]; Ctrl-D declines)\n"
        } else {
            "(Ctrl-D declines)\n"
        },
    );
    let mut content = Map::new();
    for (name, prop) in props {
        let label = prop.get("title").and_then(Value::as_str).unwrap_or(&name);
        let default = prop.get("default");
        let mut hint = String::new();
        let options = choices(&prop);
        if !options.is_empty() {
            hint.push_str(&format!(
                " ({})",
                options
                    .iter()
                    .map(|o| o.as_str().map_or_else(|| o.to_string(), str::to_owned))
                    .collect::<Vec<_>>()
                    .join("/")
            ));
        }
        if let Some(d) = default {
            hint.push_str(&format!(
                " [{}]",
                d.as_str().map_or_else(|| d.to_string(), str::to_owned)
            ));
        }
        let needed = required.contains(&name);
        loop {
            say(
                output,
                &format!(
                    "  {label}{hint}{}: ",
                    if needed { "" } else { " (optional)" }
                ),
            );
            let Some(line) = read_line(input) else {
                say(output, "\n");
                return None;
            };
            if line.trim().is_empty() {
                match default {
                    Some(d) => {
                        content.insert(name.clone(), d.clone());
                        break;
                    }
                    None if !needed => break,
                    None => {
                        say(output, "  this field is required\n");
                        continue;
                    }
                }
            }
            match parse_answer(&prop, &line) {
                Ok(v) => {
                    content.insert(name.clone(), v);
                    break;
                }
                Err(why) => say(output, &format!("  {why}\n")),
            }
        }
    }
    Some(content)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Map<String, Value> {
        json!({
            "type": "object",
            "properties": {
                "answer": { "type": "string" },
                "color": { "type": "string", "enum": ["red", "green"] },
                "count": { "type": "integer", "default": 3 },
                "ok": { "type": "boolean" },
                "note": { "type": "string" }
            },
            "required": ["answer", "color", "ok"]
        })
        .as_object()
        .cloned()
        .unwrap()
    }

    #[test]
    fn automatic_answers_fill_defaults_and_required_fields() {
        assert_eq!(
            Value::Object(auto_answer(&schema())),
            json!({ "answer": AUTO_TEXT, "color": "red", "count": 3, "ok": false })
        );
    }

    #[test]
    fn typed_answers() {
        let (props, _) = properties(&schema());
        let prop = |n: &str| props.iter().find(|(k, _)| k == n).unwrap().1.clone();
        assert_eq!(parse_answer(&prop("count"), " 7 "), Ok(json!(7)));
        assert!(parse_answer(&prop("count"), "x").is_err());
        assert_eq!(parse_answer(&prop("ok"), "Yes"), Ok(json!(true)));
        assert_eq!(parse_answer(&prop("color"), "green"), Ok(json!("green")));
        assert_eq!(
            parse_answer(&prop("color"), "blue"),
            Err("\"blue\" is not one of: red, green".into())
        );
    }

    #[test]
    fn asking_reads_each_field_with_defaults_retries_and_ctrl_d() {
        // Keys in alphabetical order, so the fields are asked in this order with or without
        // serde_json's `preserve_order`.
        let schema = json!({
            "type": "object",
            "properties": {
                "a_text": { "type": "string" },
                "b_color": { "type": "string", "enum": ["red", "green"] },
                "c_count": { "type": "integer", "default": 3 },
                "d_note": { "type": "string" },
                "e_ok": { "type": "boolean" }
            },
            "required": ["a_text", "b_color", "e_ok"]
        });
        let schema = schema.as_object().unwrap();
        let mut output = Vec::new();
        let typed = "hello\nblue\ngreen\n\n\n\nmaybe\nyes\n";
        let answer = ask(&mut typed.as_bytes(), &mut output, "Tell me", schema);
        assert_eq!(
            answer.map(Value::Object),
            Some(json!({ "a_text": "hello", "b_color": "green", "c_count": 3, "e_ok": true }))
        );
        let shown = String::from_utf8(output).unwrap();
        assert!(shown.starts_with("the server asks: Tell me\n"), "{shown}");
        assert!(
            shown.contains("\"blue\" is not one of: red, green"),
            "{shown}"
        );
        assert!(shown.contains("answer yes or no"), "{shown}");
        // Ctrl-D part-way declines.
        assert!(shown.contains("this field is required"), "{shown}");
        assert_eq!(
            ask(&mut "hello\n".as_bytes(), &mut Vec::new(), "m", schema),
            None
        );
    }
}
