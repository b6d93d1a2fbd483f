//! How `mcp` presents its command tree: each subcommand's help lists its own options and
//! points at `mcp help options` for the ones every command takes, `mcp help [TOPIC]`, and the
//! completion scripts of `mcp completions`.
//!
//! Call [`parse`] (not `Cli::parse`) so that the help a user sees is the arranged one; the
//! accepted command lines are exactly those of [`Cli`].

use std::ffi::OsString;

use clap::{ArgMatches, CommandFactory, FromArgMatches};

use super::{ArgError, Cli};

/// The heading of the options every command takes, in `mcp --help`.
const GLOBAL_HEADING: &str = "Options for every command";

/// The line each subcommand's help ends with.
const GLOBAL_POINTER: &str = "Connection and output options (--url, --config, --server, -H, -e, --timeout, \
--json, --raw, -o, -q, -v, …) work with every command: see `mcp help options`.";

/// The widest help (in columns) `mcp` prints: wider prose is hard to read, even in a wide terminal.
pub const MAX_HELP_WIDTH: usize = 100;

/// The `mcp` command tree as users see it: the global options are listed once, under their
/// own heading in `mcp --help`, and hidden from each subcommand's help, which instead ends
/// with a pointer to `mcp help options`. Every help wraps at word boundaries to the terminal
/// (`$COLUMNS`, else the terminal's width, else 100 columns), at most [`MAX_HELP_WIDTH`].
/// Parsing is unchanged.
pub fn command() -> clap::Command {
    hide_globals_in_subcommands(
        Cli::command().max_term_width(MAX_HELP_WIDTH).mut_args(|a| {
            if a.is_global_set() {
                a.help_heading(GLOBAL_HEADING)
            } else {
                a
            }
        }),
        GLOBAL_POINTER,
    )
}

/// Builds `command` (so that global options are copied into its subcommands), then hides
/// those copies in every subcommand's help and appends `pointer` to it instead.
///
/// The shell uses this for its own command tree, with its own pointer.
pub fn hide_globals_in_subcommands(mut command: clap::Command, pointer: &str) -> clap::Command {
    command.build();
    let names: Vec<String> = command
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    for name in names {
        command = command.mut_subcommand(name, |sub| hide_globals(sub, pointer));
    }
    command
}

/// Hides the (built) global options in `sub` and in its own subcommands (`tasks get`), and
/// appends `pointer` to each one's help.
fn hide_globals(sub: clap::Command, pointer: &str) -> clap::Command {
    let after = match sub.get_after_help() {
        Some(own) => format!("{own}\n\n{pointer}"),
        None => pointer.to_owned(),
    };
    let mut sub = sub
        .mut_args(|a| if a.is_global_set() { a.hide(true) } else { a })
        .after_help(after);
    let names: Vec<String> = sub
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    for name in names {
        sub = sub.mut_subcommand(name, |nested| hide_globals(nested, pointer));
    }
    sub
}

/// Parses the process's command line; on error (and for `--help` / `--version`) the clap
/// error prints itself and picks the exit status (0 for help, 2 for usage).
pub fn parse() -> Result<Cli, clap::Error> {
    parse_from(std::env::args_os())
}

/// Parses `args` (the first is the binary name) like [`parse`].
pub fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let mut command = command();
    let matches: ArgMatches = command.try_get_matches_from_mut(args)?;
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut command))
}

/// The subcommand of a command line clap refused, as far as it can be told (`None` when
/// there is none); `args` starts with the binary's name. A usage error's `--json` object is
/// written on stdout for every command but `bridge`, whose stdout is its host's protocol
/// channel.
pub fn subcommand_of<I, T>(args: I) -> Option<String>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let matches = Cli::command()
        .ignore_errors(true)
        .try_get_matches_from(args)
        .ok()?;
    matches.subcommand_name().map(str::to_owned)
}

/// The text of `mcp help options`: every global option with its long description.
pub fn global_options() -> String {
    let globals: Vec<clap::Arg> = Cli::command()
        .get_arguments()
        .filter(|a| a.is_global_set())
        .cloned()
        .collect();
    let mut command = clap::Command::new("mcp")
        .disable_help_flag(true)
        .disable_version_flag(true)
        .help_template(
            "Options every command takes, before or after the subcommand \
             (`mcp --json tools -- server…` = `mcp tools --json -- server…`):\n\n{options}",
        )
        .args(globals);
    command.render_long_help().to_string()
}

/// The text of `mcp help [TOPIC]`: the overview, `options` (see [`global_options`]) or one
/// subcommand's full help.
pub fn topic(topic: Option<&str>) -> Result<String, ArgError> {
    let mut root = command();
    let text = match topic {
        None => Ok(root.render_long_help().to_string()),
        Some("options") => Ok(global_options()),
        Some(name) => match root.find_subcommand_mut(name) {
            Some(sub) => Ok(sub.render_long_help().to_string()),
            None => Err(ArgError(format!(
                "no command {name:?}; the commands are: {}, and the topic `options`",
                subcommand_names(&root).join(", ")
            ))),
        },
    }?;
    Ok(if text.ends_with('\n') {
        text
    } else {
        text + "\n"
    })
}

/// The names of the visible subcommands, in help order.
pub fn subcommand_names(command: &clap::Command) -> Vec<String> {
    command
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_owned())
        .collect()
}

/// The completion script of `mcp` for `shell` (from the full command tree, so global options
/// complete after any subcommand).
pub fn completion_script(shell: clap_complete::Shell) -> Vec<u8> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "mcp", &mut script);
    script
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::args::Command;

    fn parse(args: &[&str]) -> Cli {
        parse_from(std::iter::once("mcp").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
    }

    #[test]
    fn the_arranged_tree_accepts_what_the_derived_one_does() {
        for args in [
            &["--json", "--url", "http://127.0.0.1:1/mcp", "ping"][..],
            &["ping", "--json", "--url", "http://127.0.0.1:1/mcp"],
            &["call", "echo", "text=hi", "-q", "--", "server", "--flag"],
            &["shell", "--timeout", "5s", "--", "server"],
        ] {
            let arranged = parse(args);
            let derived = Cli::try_parse_from(std::iter::once("mcp").chain(args.iter().copied()))
                .expect("derived parse");
            assert_eq!(format!("{arranged:?}"), format!("{derived:?}"), "{args:?}");
        }
        assert!(
            matches!(parse(&["help", "options"]).command, Command::Help { topic: Some(t) } if t == "options")
        );
        assert!(matches!(
            parse(&["completions", "fish"]).command,
            Command::Completions {
                shell: clap_complete::Shell::Fish
            }
        ));
    }

    /// Whether `help` has an option line for `long` (`-v, --verbose...`, `--url <URL>`).
    /// Option lines are indented by two to six spaces; the about text (not indented) and
    /// option descriptions (indented ten) are wrapped to the terminal's width and may start a
    /// line with an option's name at some widths.
    fn lists(help: &str, long: &str) -> bool {
        help.lines().any(|l| {
            let indent = l.len() - l.trim_start().len();
            if !(2..=6).contains(&indent) {
                return false;
            }
            let l = l.trim_start();
            l.starts_with('-') && l.split([' ', ',', '.', '=']).any(|w| w == long)
        })
    }

    #[test]
    fn every_global_option_is_in_help_options_and_in_no_subcommand_help() {
        let options = global_options();
        let mut root = command();
        let globals: Vec<String> = Cli::command()
            .get_arguments()
            .filter(|a| a.is_global_set())
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .collect();
        assert!(globals.len() >= 10, "{globals:?}");
        assert!(lists("  -v, --verbose...", "--verbose"));
        for long in &globals {
            assert!(lists(&options, long), "{long}: {options}");
        }
        for name in subcommand_names(&root) {
            let sub = root.find_subcommand_mut(&name).expect("listed subcommand");
            let help = sub.render_long_help().to_string();
            for long in &globals {
                assert!(!lists(&help, long), "{name} lists {long}:\n{help}");
            }
            assert!(help.contains("`mcp help options`"), "{name}");
            // Nested subcommands (`tasks get`) too.
            for nested in subcommand_names(sub) {
                let help = sub
                    .find_subcommand_mut(&nested)
                    .expect("listed subcommand")
                    .render_long_help()
                    .to_string();
                for long in &globals {
                    assert!(!lists(&help, long), "{name} {nested} lists {long}:\n{help}");
                }
            }
        }
        assert!(topic(Some("nosuch")).is_err());
        assert_eq!(topic(Some("options")).unwrap(), options);
    }
}
