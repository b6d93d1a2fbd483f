//! Tab completion in `mcp shell`, as a pure function of the typed line, the command tree and
//! the server's [`Catalog`]: commands, options, tool and prompt names, argument names
//! (`name=`, from a tool's inputSchema or a prompt's arguments), resource URIs and
//! `complete` references.

use super::catalog::{Catalog, NamedArgs};

/// One completion: what the list shows and what replaces the word being typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Shown in the list of choices.
    pub display: String,
    /// Replaces the word under the cursor (a finished word ends with a space).
    pub replacement: String,
}

/// What completion needs of one shell command: its options and fixed values.
#[derive(Debug, Clone, Default)]
struct CommandShape {
    name: String,
    /// `--json`, `--args`, … (long forms, for completing).
    options: Vec<String>,
    /// Options whose next word is their value (`-a`, `--args`, `-o`, …).
    take_value: Vec<String>,
    /// The possible values of the first positional argument (`log-level`'s levels).
    first_values: Vec<String>,
}

/// The shell's commands and their options, taken from its clap command tree.
#[derive(Debug, Clone, Default)]
pub struct Grammar {
    commands: Vec<CommandShape>,
}

/// Words the shell knows besides the subcommands.
const SHELL_WORDS: &[&str] = &["help", "exit", "quit"];

impl Grammar {
    /// The grammar of the visible subcommands of `tree` (the shell's command tree, built).
    pub fn from_tree(tree: &clap::Command) -> Self {
        let commands = tree
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name() != "help")
            .map(|sub| {
                let mut shape = CommandShape {
                    name: sub.get_name().to_owned(),
                    ..CommandShape::default()
                };
                for arg in sub.get_arguments() {
                    if arg.get_id() == "argv" {
                        continue;
                    }
                    let takes_value = arg.get_action().takes_values();
                    if let Some(long) = arg.get_long() {
                        shape.options.push(format!("--{long}"));
                        if takes_value {
                            shape.take_value.push(format!("--{long}"));
                        }
                    }
                    if let Some(short) = arg.get_short()
                        && takes_value
                    {
                        shape.take_value.push(format!("-{short}"));
                    }
                }
                if let Some(first) = sub.get_positionals().next() {
                    shape.first_values = first
                        .get_possible_values()
                        .iter()
                        .filter(|v| !v.is_hide_set())
                        .map(|v| v.get_name().to_owned())
                        .collect();
                }
                shape.options.sort();
                shape
            })
            .collect();
        Grammar { commands }
    }

    fn command(&self, name: &str) -> Option<&CommandShape> {
        self.commands.iter().find(|c| c.name == name)
    }
}

/// The word under the cursor, and the finished words before it.
#[derive(Debug, Default, PartialEq, Eq)]
struct Lexed {
    words: Vec<String>,
    /// Byte offset where the current word starts (its opening quote, if any).
    start: usize,
    /// The current word without quotes and escapes.
    current: String,
}

/// Splits `text` (the line up to the cursor) shell-style, tolerating an open quote.
fn lex(text: &str) -> Lexed {
    let mut lexed = Lexed::default();
    let mut word: Option<(usize, String)> = None;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if escaped {
            word.get_or_insert_with(|| (i, String::new())).1.push(c);
            escaped = false;
            continue;
        }
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => escaped = true,
            (Some(_), c) => word.get_or_insert_with(|| (i, String::new())).1.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(|| (i, String::new()));
            }
            (None, '\\') => {
                escaped = true;
                word.get_or_insert_with(|| (i, String::new()));
            }
            (None, c) if c.is_whitespace() => {
                if let Some((_, w)) = word.take() {
                    lexed.words.push(w);
                }
            }
            (None, c) => word.get_or_insert_with(|| (i, String::new())).1.push(c),
        }
    }
    match word {
        Some((start, current)) => {
            lexed.start = start;
            lexed.current = current;
        }
        None => lexed.start = text.len(),
    }
    lexed
}

/// The completions for `line` with the cursor at byte `pos`: the offset of the word they
/// replace, and the candidates (sorted, only those that start with what is typed).
pub fn complete(
    grammar: &Grammar,
    catalog: &Catalog,
    line: &str,
    pos: usize,
) -> (usize, Vec<Candidate>) {
    let Some(before) = line.get(..pos) else {
        return (pos, Vec::new());
    };
    let lexed = lex(before);
    let typed = lexed.current.as_str();
    let words: Vec<&str> = lexed.words.iter().map(String::as_str).collect();
    let mut found = match words.split_first() {
        None => command_names(grammar)
            .into_iter()
            .map(|n| word(&n))
            .collect(),
        Some((&command, rest)) => after_command(grammar, catalog, command, rest, typed),
    };
    found.retain(|c| c.display.starts_with(typed));
    found.sort_by(|a, b| a.display.cmp(&b.display));
    found.dedup();
    (lexed.start, found)
}

fn command_names(grammar: &Grammar) -> Vec<String> {
    grammar
        .commands
        .iter()
        .map(|c| c.name.clone())
        .chain(SHELL_WORDS.iter().map(|w| (*w).to_owned()))
        .collect()
}

/// A finished word: quoted when needed, followed by a space.
fn word(text: &str) -> Candidate {
    let quoted = shlex::try_quote(text).map_or_else(|_| text.to_owned(), |q| q.into_owned());
    Candidate {
        display: text.to_owned(),
        replacement: format!("{quoted} "),
    }
}

/// `name=`: the start of a `key=value` pair, the value still to type.
fn pair_key(name: &str) -> Candidate {
    let quoted = shlex::try_quote(name).map_or_else(|_| name.to_owned(), |q| q.into_owned());
    Candidate {
        display: format!("{name}="),
        replacement: format!("{quoted}="),
    }
}

fn after_command(
    grammar: &Grammar,
    catalog: &Catalog,
    command: &str,
    rest: &[&str],
    typed: &str,
) -> Vec<Candidate> {
    if matches!(command, "help" | "?") {
        return if rest.is_empty() {
            let mut names = command_names(grammar);
            names.retain(|n| !SHELL_WORDS.contains(&n.as_str()));
            names.push("options".into());
            names.iter().map(|n| word(n)).collect()
        } else {
            Vec::new()
        };
    }
    let Some(shape) = grammar.command(command) else {
        return Vec::new();
    };
    // The value of an option (`-a '{…}'`, `-o FILE`) is free text.
    if rest
        .last()
        .is_some_and(|w| shape.take_value.iter().any(|o| o == w))
    {
        return Vec::new();
    }
    if typed.starts_with('-') {
        return shape.options.iter().map(|o| word(o)).collect();
    }
    let positionals = positionals(shape, rest);
    let index = positionals.len();
    match command {
        "call" | "load" if index == 0 => names(&catalog.tools),
        "call" | "load" => argument_keys(&catalog.tools, &positionals, typed),
        "prompt" if index == 0 => names(&catalog.prompts),
        "prompt" => argument_keys(&catalog.prompts, &positionals, typed),
        "read" if index == 0 => catalog
            .resources
            .iter()
            .map(|u| word(u))
            .chain(catalog.templates.iter().filter_map(|t| template_prefix(t)))
            .collect(),
        "complete" if index == 0 => catalog
            .prompts
            .iter()
            .map(|p| word(&format!("prompt:{}", p.name)))
            .chain(
                catalog
                    .templates
                    .iter()
                    .map(|t| word(&format!("resource:{t}"))),
            )
            .collect(),
        "complete" if index == 1 => completable_arguments(catalog, positionals[0]),
        _ if index == 0 => shape.first_values.iter().map(|v| word(v)).collect(),
        _ => Vec::new(),
    }
}

/// The positional words of `rest`: options and their values left out.
fn positionals<'a>(shape: &CommandShape, rest: &[&'a str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut skip_value = false;
    for w in rest {
        if skip_value {
            skip_value = false;
        } else if w.starts_with('-') && *w != "-" {
            skip_value = shape.take_value.iter().any(|o| o == w);
        } else {
            out.push(*w);
        }
    }
    out
}

fn names(list: &[NamedArgs]) -> Vec<Candidate> {
    list.iter().map(|n| word(&n.name)).collect()
}

/// `key=` for the arguments of the tool or prompt named first that are not given yet.
fn argument_keys(list: &[NamedArgs], positionals: &[&str], typed: &str) -> Vec<Candidate> {
    if typed.contains('=') {
        return Vec::new();
    }
    let Some(entry) = positionals
        .first()
        .and_then(|n| list.iter().find(|e| e.name == *n))
    else {
        return Vec::new();
    };
    let given: Vec<&str> = positionals[1..]
        .iter()
        .filter_map(|p| p.split_once('=').map(|(k, _)| k))
        .collect();
    entry
        .args
        .iter()
        .filter(|a| !given.contains(&a.as_str()))
        .map(|a| pair_key(a))
        .collect()
}

/// The argument names `complete REF` can complete: a prompt's arguments or a template's
/// `{variables}`.
fn completable_arguments(catalog: &Catalog, reference: &str) -> Vec<Candidate> {
    if let Some(name) = reference.strip_prefix("prompt:") {
        return catalog
            .prompts
            .iter()
            .filter(|p| p.name == name)
            .flat_map(|p| p.args.iter().map(|a| word(a)))
            .collect();
    }
    let template = reference.strip_prefix("resource:").unwrap_or(reference);
    template_variables(template)
        .iter()
        .map(|v| word(v))
        .collect()
}

/// The fixed start of a URI template (`demo://notes/{name}` → `demo://notes/`), to be typed
/// on; `None` when the template starts with a variable.
fn template_prefix(template: &str) -> Option<Candidate> {
    let prefix = &template[..template.find('{')?];
    (!prefix.is_empty()).then(|| Candidate {
        display: prefix.to_owned(),
        replacement: prefix.to_owned(),
    })
}

/// The variable names of an RFC 6570 template: `x://{a}/{+b}{?c,d}` → a, b, c, d.
fn template_variables(template: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let expression = &rest[open + 1..open + close];
        let expression = expression.trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        for name in expression.split(',') {
            let name = name.trim_end_matches('*');
            let name = name.split(':').next().unwrap_or(name);
            if !name.is_empty() {
                names.push(name.to_owned());
            }
        }
        rest = &rest[open + close + 1..];
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        Catalog {
            tools: vec![
                NamedArgs {
                    name: "echo".into(),
                    args: vec!["text".into()],
                },
                NamedArgs {
                    name: "add".into(),
                    args: vec!["a".into(), "b".into()],
                },
                NamedArgs {
                    name: "slow".into(),
                    args: vec!["steps".into(), "delay_ms".into()],
                },
            ],
            prompts: vec![NamedArgs {
                name: "summarize".into(),
                args: vec!["text".into(), "style".into()],
            }],
            resources: vec!["demo://readme".into(), "demo://notes".into()],
            templates: vec!["demo://greeting/{name}{?lang}".into()],
        }
    }

    fn shown(line: &str) -> Vec<String> {
        let grammar = Grammar::from_tree(&super::super::line::command_tree());
        let (_, found) = complete(&grammar, &catalog(), line, line.len());
        found.into_iter().map(|c| c.display).collect()
    }

    fn replaced(line: &str) -> (usize, Vec<String>) {
        let grammar = Grammar::from_tree(&super::super::line::command_tree());
        let (start, found) = complete(&grammar, &catalog(), line, line.len());
        (start, found.into_iter().map(|c| c.replacement).collect())
    }

    #[test]
    fn commands_at_the_start() {
        assert_eq!(shown("pro"), ["prompt", "prompts"]);
        assert_eq!(shown("ex"), ["exit"]);
        let all = shown("");
        for name in ["call", "tools", "read", "ping", "log-level", "help", "quit"] {
            assert!(all.contains(&name.to_owned()), "{name}: {all:?}");
        }
        assert!(!all.contains(&"login".to_owned()), "{all:?}");
        assert!(!all.contains(&"watch".to_owned()), "{all:?}");
    }

    #[test]
    fn tool_names_then_argument_names_from_the_schema() {
        assert_eq!(shown("call "), ["add", "echo", "slow"]);
        assert_eq!(replaced("call sl"), (5, vec!["slow ".to_owned()]));
        assert_eq!(shown("call slow "), ["delay_ms=", "steps="]);
        assert_eq!(replaced("call slow st"), (10, vec!["steps=".to_owned()]));
        // Given keys are not offered again; a value is not completed.
        assert_eq!(shown("call add a=1 "), ["b="]);
        assert!(shown("call add a=").is_empty());
        assert!(shown("call nosuch ").is_empty());
        assert_eq!(shown("load --concurrency 4 ec"), ["echo"]);
    }

    #[test]
    fn prompts_resources_references_and_levels() {
        assert_eq!(shown("prompt s"), ["summarize"]);
        assert_eq!(shown("prompt summarize text=hi "), ["style="]);
        assert_eq!(shown("read demo://r"), ["demo://readme"]);
        // A template offers its fixed start, without a space, to type the rest.
        assert_eq!(
            replaced("read demo://g"),
            (5, vec!["demo://greeting/".to_owned()])
        );
        assert_eq!(
            shown("complete "),
            ["prompt:summarize", "resource:demo://greeting/{name}{?lang}"]
        );
        assert_eq!(shown("complete prompt:summarize s"), ["style"]);
        assert_eq!(
            shown("complete resource:demo://greeting/{name}{?lang} "),
            ["lang", "name"]
        );
        assert_eq!(shown("log-level w"), ["warning"]);
        assert_eq!(shown("help lo"), ["load", "log-level"]);
        assert!(shown("help o").contains(&"options".to_owned()));
    }

    #[test]
    fn options_and_their_values() {
        let options = shown("call echo --");
        assert!(options.contains(&"--args".to_owned()), "{options:?}");
        assert!(options.contains(&"--json".to_owned()), "{options:?}");
        assert!(!options.iter().any(|o| o.contains("url")), "{options:?}");
        // After an option that takes a value, the value is free text.
        assert!(shown("call echo -o ").is_empty());
        // `-a '{…}'` is skipped when counting positionals.
        assert_eq!(shown("call -a '{}' ec"), ["echo"]);
    }

    #[test]
    fn quoting_in_the_line_and_in_candidates() {
        let l = lex(r#"call "ec"#);
        assert_eq!(l.words, ["call"]);
        assert_eq!((l.start, l.current.as_str()), (5, "ec"));
        assert_eq!(lex(r"a\ b c").words, ["a b"]);
        assert_eq!(word("a b").replacement, "'a b' ");
        assert_eq!(
            template_variables("x://{a}/{+b}{?c,d*}{/e:3}"),
            ["a", "b", "c", "d", "e"]
        );
    }
}
