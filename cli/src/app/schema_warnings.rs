//! The stderr warnings of `mcp tools` and `mcp call` about a tool whose input schema is not
//! valid JSON Schema (an unknown `type` name such as `"nonsense"`, a keyword of the wrong
//! kind): what `mcp lint` reports as `invalid-schema`, said where the schema is used, so
//! that `x: nonsense` in a listing or an argument typed from its value is never silent.

use mcp_proto::types::Tool;

use crate::lint;

/// The warning lines (with their `warning: ` label) about `tool`'s input schema: one per
/// place it is not valid JSON Schema, naming the tool and the property. None when valid.
pub fn for_tool(tool: &Tool) -> Vec<String> {
    lint::invalid_schema(tool)
        .into_iter()
        .map(|f| {
            format!(
                "warning: tools/list: `{}` has an input schema that is not valid JSON Schema \
                 at {}: {} (`mcp lint` checks every tool)",
                tool.name,
                place(&f.path),
                f.issue
            )
        })
        .collect()
}

/// The warning lines of every tool of `tools`, in order.
pub fn for_tools(tools: &[Tool]) -> Vec<String> {
    tools.iter().flat_map(for_tool).collect()
}

/// `path` (a JSON Pointer into the input schema, the keyword last) in words: `property
/// \`a.b\`` when it is under properties only, else the pointer itself.
fn place(path: &str) -> String {
    let tokens: Vec<String> = path
        .split('/')
        .skip(1)
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect();
    // [properties, NAME]* then one keyword.
    let (keyword_free, _keyword) = tokens.split_at(tokens.len().saturating_sub(1));
    let mut names = Vec::new();
    let mut pairs = keyword_free.chunks(2);
    let only_properties = pairs.all(|pair| match pair {
        [kind, name] if kind == "properties" => {
            names.push(name.as_str());
            true
        }
        _ => false,
    });
    match (only_properties, names.is_empty()) {
        (true, false) => format!("property `{}`", names.join(".")),
        (true, true) => format!("its root (`{path}`)"),
        (false, _) => format!("`{path}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(schema: serde_json::Value) -> Tool {
        serde_json::from_value(json!({"name": "weird", "inputSchema": schema})).expect("a tool")
    }

    #[test]
    fn an_unknown_type_names_the_tool_and_the_property() {
        let t = tool(json!({"type": "object", "properties": {
            "x": {"type": "nonsense"}, "ok": {"type": "string"}}}));
        let lines = for_tool(&t);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].starts_with("warning: tools/list: `weird` has an input schema"),
            "{}",
            lines[0]
        );
        assert!(lines[0].contains("at property `x`"), "{}", lines[0]);
        assert!(lines[0].contains("\"nonsense\""), "{}", lines[0]);
    }

    #[test]
    fn a_valid_schema_says_nothing() {
        let t = tool(json!({"type": "object", "properties": {"n": {"type": "integer"}}}));
        assert_eq!(for_tool(&t), Vec::<String>::new());
    }

    #[test]
    fn places_are_properties_when_they_can_be() {
        assert_eq!(place("/properties/x/type"), "property `x`");
        assert_eq!(
            place("/properties/a/properties/b~1c/minimum"),
            "property `a.b/c`"
        );
        assert_eq!(
            place("/properties/a/items/type"),
            "`/properties/a/items/type`"
        );
        assert_eq!(place("/type"), "its root (`/type`)");
    }
}
