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

/// The `mcp` command tree as users see it: the global options are listed once, under their
/// own heading in `mcp --help`, and hidden from each subcommand's help, which instead ends
/// with a pointer to `mcp help options`. Parsing is unchanged.
pub fn command() -> clap::Command {
    hide_globals_in_subcommands(
        Cli::command().mut_args(|a| {
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
        command = command.mut_subcommand(name, |sub| {
            let after = match sub.get_after_help() {
                Some(own) => format!("{own}\n\n{pointer}"),
                None => pointer.to_owned(),
            };
            sub.mut_args(|a| if a.is_global_set() { a.hide(true) } else { a })
                .after_help(after)
        });
    }
    command
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
