//! One typed line of `mcp shell`: split shell-style and parsed by the same clap definitions as
//! the one-shot CLI, minus what a session that is already connected cannot take.

use clap::{CommandFactory, FromArgMatches, Parser};

use crate::args::help::hide_globals_in_subcommands;
use crate::args::{Command, OutputArgs};

/// The subcommands the shell does not offer, with the reason a user reads when typing one.
const NOT_IN_SHELL: &[(&str, &str)] = &[
    ("shell", "you are in the shell already"),
    (
        "watch",
        "the shell prints notifications as they arrive; no need for `watch`",
    ),
    ("login", "run `mcp login --url …` from your terminal"),
    ("logout", "run `mcp logout` from your terminal"),
    ("demo", "run `mcp demo` from your terminal"),
    (
        "bridge",
        "run `mcp bridge` from your terminal (a host app starts it, with its own server)",
    ),
    ("demo-server", "run `mcp demo-server` from your terminal"),
    (
        "completions",
        "run `mcp completions <shell>` from your terminal",
    ),
];

/// What the pointer at the end of each command's help says inside the shell.
const OUTPUT_POINTER: &str =
    "Output options (--json, --raw, -o FILE, -q) work after every command: see `help options`.";

/// The words of a line, parsed like the arguments of `mcp` after its connection options.
#[derive(Debug, Parser)]
#[command(
    name = "mcp-shell",
    no_binary_name = true,
    disable_help_subcommand = true,
    disable_version_flag = true
)]
struct ShellLine {
    #[command(flatten)]
    output: OutputArgs,
    #[command(subcommand)]
    command: Command,
}

/// A command to run on the session, with the output options given on its line.
#[derive(Debug, Clone)]
pub struct LineCommand {
    /// `--json`, `--raw`, `-o FILE`, `-q`, `-v` as typed on the line.
    pub output: OutputArgs,
    /// The subcommand and its arguments.
    pub command: Command,
}

/// What a typed line asks for.
#[derive(Debug)]
pub enum Parsed {
    /// Nothing (blank, or a `#` comment).
    Empty,
    /// `exit` or `quit`.
    Exit,
    /// Text to print on stdout as it is (`help`, `help call`, `call --help`).
    Text(String),
    /// A command to run.
    Run(Box<LineCommand>),
    /// A mistake, with what to print on stderr (no connection needed to find it).
    Invalid(String),
}

/// The clap command tree of the shell: the subcommands of `mcp` without the connection
/// options, the `-- server…` argument and the subcommands a connected session cannot run (hidden;
/// typing one gets its reason).
pub fn command_tree() -> clap::Command {
    let command = ShellLine::command()
        .bin_name("")
        .override_usage("<COMMAND> [ARGS]... (`help` lists the commands)")
        .mut_subcommands(|sub| {
            // `help` is listed by the overview itself, with the shell's meaning.
            let hidden = sub.get_name() == "help"
                || NOT_IN_SHELL.iter().any(|(name, _)| *name == sub.get_name());
            let is_tools = sub.get_name() == "tools";
            let about = sub.get_about().map(|a| for_the_shell(&a.to_string()));
            let long_about = sub.get_long_about().map(|a| for_the_shell(&a.to_string()));
            let mut sub = sub.hide(hidden);
            if let Some(about) = about {
                sub = sub.about(about);
            }
            if let Some(long_about) = long_about {
                sub = sub.long_about(long_about);
            }
            sub.mut_args(|a| {
                // The session is connected already: `-- server…` does not apply, nor
                // does `tools --all` (every server of a --config file).
                if a.get_id() == "argv" || (is_tools && a.get_id() == "all") {
                    a.hide(true)
                } else {
                    a
                }
            })
        });
    hide_globals_in_subcommands(command, OUTPUT_POINTER)
}

/// A subcommand's description as it reads in the shell: its examples in the shell's form
/// (`call echo text=hi`, not `mcp call echo text=hi -- server…`), without what only the
/// one-shot command can do (`tools --all`) or what is about starting a session.
fn for_the_shell(text: &str) -> String {
    text.split_inclusive(". ")
        // Advice on which session to follow a task in: the shell is that session.
        .filter(|sentence| !sentence.contains("`mcp shell`"))
        .collect::<String>()
        .replace(" (`--all`: every server of --config)", "")
        .replace(" -- server…", "")
        .replace("`mcp ", "`")
        .trim_end()
        .to_owned()
}

/// Parses one typed line.
pub fn parse(line: &str) -> Parsed {
    let trimmed = line.trim();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return Parsed::Empty;
    }
    let Some(words) = shlex::split(trimmed) else {
        return Parsed::Invalid("error: unterminated quote or trailing backslash\n".into());
    };
    match words.first().map(String::as_str) {
        None => return Parsed::Empty,
        Some("exit" | "quit") if words.len() == 1 => return Parsed::Exit,
        Some("?") => return help(words.get(1).map(String::as_str)),
        Some(first) => {
            if let Some((name, why)) = NOT_IN_SHELL.iter().find(|(name, _)| *name == first) {
                return Parsed::Invalid(format!("error: `{name}` is not a shell command: {why}\n"));
            }
        }
    }
    let mut tree = command_tree();
    let matches = match tree.try_get_matches_from_mut(&words) {
        Ok(m) => m,
        Err(e) => return clap_error(&e),
    };
    let parsed = match ShellLine::from_arg_matches(&matches) {
        Ok(p) => p,
        Err(e) => return clap_error(&e.format(&mut tree)),
    };
    if let Command::Help { topic } = &parsed.command {
        return help(topic.as_deref());
    }
    if parsed
        .command
        .server_command()
        .is_some_and(|s| !s.argv.is_empty())
    {
        return Parsed::Invalid(
            "error: the shell is connected already; leave out `-- server…` \
             (start another `mcp shell` for another server)\n"
                .into(),
        );
    }
    if let Command::Tools(t) = &parsed.command
        && t.all
    {
        return Parsed::Invalid(
            "error: `tools --all` starts every server of a --config file; the shell talks to \
             one server (use `mcp --config FILE tools --all` from your terminal)\n"
                .into(),
        );
    }
    Parsed::Run(Box::new(LineCommand {
        output: parsed.output,
        command: parsed.command,
    }))
}

/// `--help` and `--version`-like outcomes are text for stdout; real mistakes go to stderr.
fn clap_error(e: &clap::Error) -> Parsed {
    // clap words its advice for a command line; say what applies at the prompt.
    let text = e
        .render()
        .to_string()
        .replace("Usage:  ", "Usage: ")
        .replace(
            "For more information, try '--help'.",
            "Type `help` for the commands, `help COMMAND` for one.",
        )
        .lines()
        .filter(|l| !l.contains("use '-- "))
        .fold(String::new(), |mut text, l| {
            // Dropping the `--` tip leaves two blank lines in a row; keep one.
            if !(l.is_empty() && text.ends_with("\n\n")) {
                text.push_str(l);
                text.push('\n');
            }
            text
        });
    match e.kind() {
        clap::error::ErrorKind::DisplayHelp
        | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => Parsed::Text(text),
        _ => Parsed::Invalid(text),
    }
}

/// `help`, `help options` and `help COMMAND` inside the shell.
pub fn help(topic: Option<&str>) -> Parsed {
    let mut tree = command_tree();
    match topic {
        None => Parsed::Text(overview(&tree)),
        Some("options") => Parsed::Text(output_options(&tree)),
        Some(name) => match tree.find_subcommand_mut(name) {
            Some(sub) if !sub.is_hide_set() => Parsed::Text(with_newline(
                sub.render_long_help()
                    .to_string()
                    .replace("Usage:  ", "Usage: "),
            )),
            _ => Parsed::Invalid(format!(
                "error: no shell command {name:?}; type `help` for the list\n"
            )),
        },
    }
}

/// The list of commands that `help` prints.
fn overview(tree: &clap::Command) -> String {
    let mut rows: Vec<(String, String)> = tree
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| {
            let about = s.get_about().map(|a| a.to_string()).unwrap_or_default();
            (s.get_name().to_owned(), about)
        })
        .collect();
    rows.push((
        "help".into(),
        "This list; `help COMMAND` for one command, `help options` for the output options".into(),
    ));
    rows.push((
        "exit".into(),
        "Leave the shell (also `quit` or Ctrl-D)".into(),
    ));
    let width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let mut text = String::from("Commands (the subcommands of `mcp`, on this session):\n\n");
    for (name, about) in rows {
        text.push_str(&format!("  {name:width$}  {about}\n"));
    }
    text.push_str(
        "\nTab completes commands, tool, prompt and argument names and resource URIs.\n\
         Ctrl-C cancels the running command; Ctrl-D or `exit` leaves.\n",
    );
    text
}

/// The text of `help options`: the output options a line may carry.
fn output_options(tree: &clap::Command) -> String {
    let globals: Vec<clap::Arg> = tree
        .get_arguments()
        .filter(|a| a.is_global_set())
        .cloned()
        .collect();
    let text = clap::Command::new("shell")
        .disable_help_flag(true)
        .help_template("Output options, after any command (`tools --json`):\n\n{options}")
        .args(globals)
        .render_long_help()
        .to_string();
    with_newline(text)
}

fn with_newline(mut text: String) -> String {
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(line: &str) -> LineCommand {
        match parse(line) {
            Parsed::Run(c) => *c,
            other => panic!("{line:?} parsed as {other:?}"),
        }
    }

    fn invalid(line: &str) -> String {
        match parse(line) {
            Parsed::Invalid(text) => text,
            other => panic!("{line:?} parsed as {other:?}"),
        }
    }

    fn text(line: &str) -> String {
        match parse(line) {
            Parsed::Text(text) => text,
            other => panic!("{line:?} parsed as {other:?}"),
        }
    }

    #[test]
    fn a_call_with_quoted_arguments_and_output_options() {
        let c = run(r#"call echo text="hello world" --json"#);
        assert!(c.output.json);
        match c.command {
            Command::Call {
                tool, args, server, ..
            } => {
                assert_eq!(tool, "echo");
                assert_eq!(args.pairs, vec!["text=hello world".to_owned()]);
                assert!(server.argv.is_empty());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn blank_comment_and_exit() {
        assert!(matches!(parse("   "), Parsed::Empty));
        assert!(matches!(parse("# a note"), Parsed::Empty));
        assert!(matches!(parse("exit"), Parsed::Exit));
        assert!(matches!(parse(" quit "), Parsed::Exit));
    }

    #[test]
    fn mistakes_say_what_is_wrong() {
        assert!(invalid("call 'echo").contains("unterminated quote"));
        assert!(invalid("frobnicate").contains("unrecognized subcommand"));
        assert!(invalid("call").contains("<TOOL>"));
        assert!(invalid("watch").contains("notifications as they arrive"));
        assert!(invalid("login").contains("from your terminal"));
        assert!(invalid("ping -- other-server").contains("connected already"));
        assert!(invalid("tools --all").contains("one server"));
        assert!(invalid("ping --url http://127.0.0.1:1/mcp").contains("--url"));
        assert!(invalid("log-level loud").contains("debug"));
    }

    #[test]
    fn help_lists_the_shell_commands_only() {
        let overview = text("help");
        for name in [
            "tools",
            "call",
            "read",
            "prompt",
            "ping",
            "log-level",
            "exit",
        ] {
            assert!(
                overview.contains(&format!("  {name} ")),
                "{name}: {overview}"
            );
        }
        for name in ["login", "demo-server", "watch", "completions"] {
            assert!(
                !overview.contains(&format!("  {name} ")),
                "{name}: {overview}"
            );
        }
        assert_eq!(text("?"), overview);
    }

    #[test]
    fn command_help_shows_its_own_options_and_points_at_help_options() {
        for line in ["help call", "call --help", "call -h"] {
            let help = text(line);
            assert!(help.contains("<TOOL>"), "{line}: {help}");
            assert!(help.contains("--args"), "{line}: {help}");
            assert!(help.contains("`help options`"), "{line}: {help}");
            // Mentioned in the pointer, not listed as an option.
            assert!(
                !help.lines().any(|l| l.trim_start().starts_with("--json")),
                "{line}: {help}"
            );
            assert!(!help.contains("SERVER_CMD"), "{line}: {help}");
        }
        // The shell's own forms: no `mcp` in front, no `-- server…`, no `--all`.
        for line in [
            "help",
            "help tools",
            "help call",
            "help tasks",
            "help prompt",
        ] {
            let help = text(line);
            for one_shot in ["mcp ", "-- server", "--all", "--config"] {
                assert!(!help.contains(one_shot), "{line}: {one_shot:?} in {help}");
            }
        }
        assert!(text("help").contains("Call a tool: `call echo text=hi`"));
        assert!(text("help tasks").contains("`tasks get ID`"));
        let options = text("help options");
        assert!(
            options.contains("--json") && options.contains("--raw"),
            "{options}"
        );
        assert!(!options.contains("--url"), "{options}");
        assert!(invalid("help login").contains("no shell command"));
    }
}
