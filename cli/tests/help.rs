//! The built `mcp` binary's help and completion scripts: each subcommand's help shows its own
//! options and points at `mcp help options`, which lists the global ones; `mcp completions`
//! prints scripts that name every subcommand.

use std::io::Write;
use std::process::{Command, Output, Stdio};

mod common;
use common::run::stdout;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

fn mcp(args: &[&str]) -> Output {
    Command::new(MCP)
        .args(args)
        .env("COLUMNS", "100")
        .stdin(Stdio::null())
        .output()
        .expect("run mcp")
}

/// Whether `help` lists `option` as an option line (not merely mentions it).
fn lists_option(help: &str, option: &str) -> bool {
    help.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with('-') && l.starts_with(option)
            || l.starts_with('-')
                && l.split_once(", ")
                    .is_some_and(|(_, long)| long.starts_with(option))
    })
}

/// The subcommands `mcp help` names, in its order.
fn subcommands() -> Vec<String> {
    let help = stdout(&mcp(&["help"]));
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        // A command's line is indented by two; a wrapped description's go on further in.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

#[test]
fn subcommand_help_shows_its_own_options_and_points_at_help_options() {
    let names = subcommands();
    for expected in ["tools", "call", "shell", "completions", "help", "login"] {
        assert!(names.iter().any(|n| n == expected), "{expected}: {names:?}");
    }
    for name in &names {
        let o = mcp(&[name, "--help"]);
        assert_eq!(o.status.code(), Some(0), "{name}");
        let help = stdout(&o);
        assert!(help.contains("see `mcp help options`"), "{name}: {help}");
        for global in ["--url", "--config", "--timeout", "--json", "--verbose"] {
            assert!(
                !lists_option(&help, global),
                "{name} lists {global}: {help}"
            );
        }
        // `mcp help NAME` is the same text.
        assert_eq!(stdout(&mcp(&["help", name])), help, "{name}");
    }
    let call = stdout(&mcp(&["call", "--help"]));
    assert!(lists_option(&call, "-a, --args"), "{call}");
    let load = stdout(&mcp(&["load", "--help"]));
    assert!(lists_option(&load, "-c, --concurrency"), "{load}");
    // The note about how `--all` is checked is for developers, not users.
    let tools = stdout(&mcp(&["tools", "--help"]));
    assert!(!tools.contains("clap"), "{tools}");
    assert!(lists_option(&tools, "--all"), "{tools}");
}

#[test]
fn help_options_lists_the_global_options_and_top_level_help_too() {
    let o = mcp(&["help", "options"]);
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    for global in [
        "--url",
        "--config",
        "--server",
        "-H, --header",
        "-e, --env",
        "--timeout",
        "--connect-timeout",
        "--era",
        "--token-store",
        "-v, --verbose",
        "-q, --quiet",
        "--json",
        "-o, --output",
        "--raw",
    ] {
        assert!(lists_option(&text, global), "{global}: {text}");
    }
    assert!(!lists_option(&text, "--args"), "{text}");
    let top = stdout(&mcp(&["--help"]));
    assert!(top.contains("Options for every command:"), "{top}");
    assert!(lists_option(&top, "--url"), "{top}");
    // Global options are still accepted after the subcommand.
    let tools = std::env::temp_dir().join(format!("mcp-cli-help-{}.json", std::process::id()));
    std::fs::write(&tools, "[]").unwrap();
    let o = mcp(&["lint", "--file", tools.to_str().unwrap(), "--json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice::<serde_json::Value>(&o.stdout).expect("--json after the subcommand");
}

#[test]
fn help_of_an_unknown_topic_is_a_usage_error() {
    let o = mcp(&["help", "nosuch"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no command \"nosuch\""), "{err}");
    assert!(err.contains("options"), "{err}");
}

#[test]
fn completion_scripts_name_every_subcommand() {
    let names = subcommands();
    for shell in ["bash", "zsh", "fish"] {
        let o = mcp(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}");
        let script = stdout(&o);
        assert!(script.len() > 500, "{shell}: {script}");
        for name in &names {
            assert!(script.contains(name.as_str()), "{shell} lacks {name}");
        }
        assert!(script.contains("--url"), "{shell}");
    }
    let o = mcp(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn the_bash_script_parses_and_completes() {
    let script = mcp(&["completions", "bash"]).stdout;
    let bash = Command::new("bash")
        .arg("-n")
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut bash) = bash else {
        eprintln!("SKIPPED: bash is not installed");
        return;
    };
    bash.stdin.take().unwrap().write_all(&script).unwrap();
    let o = bash.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // And it registers a completion for `mcp` that completes subcommands and options.
    assert!(String::from_utf8_lossy(&script).contains("complete -F _mcp"));
    let probe = format!(
        "source <('{MCP}' completions bash)
         COMP_WORDS=(mcp sh); COMP_CWORD=1; _mcp mcp sh mcp; echo \"1:${{COMPREPLY[*]}}\"
         COMP_WORDS=(mcp call --ur); COMP_CWORD=2; _mcp mcp --ur call; echo \"2:${{COMPREPLY[*]}}\""
    );
    let o = Command::new("bash").args(["-c", &probe]).output().unwrap();
    let replies = String::from_utf8_lossy(&o.stdout);
    assert!(replies.contains("1:shell\n"), "{replies}");
    assert!(replies.contains("2:--url\n"), "{replies}");
}

/// `mcp ARGS` run with the terminal `columns` wide (`$COLUMNS`).
fn help_at(args: &[&str], columns: usize) -> String {
    let out = Command::new(MCP)
        .args(args)
        .env("COLUMNS", columns.to_string())
        .stdin(Stdio::null())
        .output()
        .expect("run mcp");
    assert!(out.status.success(), "{args:?}: {out:?}");
    stdout(&out)
}

/// The help's lines wider than `columns` (in characters, as a terminal counts them).
fn too_wide(help: &str, columns: usize) -> Vec<String> {
    help.lines()
        .filter(|l| l.chars().count() > columns)
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_help_fits_a_100_column_terminal() {
    let mut helps = vec![vec!["--help".to_owned()], vec!["-h".to_owned()]];
    for sub in subcommands() {
        helps.push(vec![sub.clone(), "--help".to_owned()]);
        helps.push(vec![sub, "-h".to_owned()]);
    }
    assert!(helps.iter().any(|h| h[0] == "bridge") && helps.iter().any(|h| h[0] == "demo-server"));
    for args in &helps {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let help = help_at(&args, 100);
        assert!(
            too_wide(&help, 100).is_empty(),
            "{args:?}: {:#?}",
            too_wide(&help, 100)
        );
    }
}

#[test]
fn help_wraps_to_a_narrower_terminal_at_word_boundaries_and_to_100_in_a_wider_one() {
    for sub in ["bridge", "demo-server"] {
        let at_100 = help_at(&[sub, "--help"], 100);
        let at_72 = help_at(&[sub, "--help"], 72);
        let at_200 = help_at(&[sub, "--help"], 200);
        // The usage lines are written out whole (a command line cut in two is not one).
        let prose: String = at_72
            .lines()
            .filter(|l| !l.starts_with("Usage: ") && !l.starts_with("       mcp "))
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(
            too_wide(&prose, 72).is_empty(),
            "{sub}: {:#?}",
            too_wide(&prose, 72)
        );
        // A wide terminal still gets lines of at most 100 columns: long prose is hard to read.
        assert_eq!(at_200, at_100, "{sub}");
        // Wrapping only moves line breaks: the same words, none cut in two.
        let words = |h: &str| h.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(words(&at_72), words(&at_100), "{sub}");
        assert!(at_72.lines().count() > at_100.lines().count(), "{sub}");
    }
}

#[test]
fn bridge_help_says_what_closing_stdin_and_a_stop_signal_do() {
    let help = help_at(&["bridge", "--help"], 100);
    let prose = help.split_whitespace().collect::<Vec<_>>().join(" ");
    // Closing stdin is not a cancel: a host that pipes a script in still reads the answers.
    assert!(
        prose.contains(
            "When the host closes stdin, the requests it already sent get up to 2 s to be \
             answered; then what still runs upstream is cancelled"
        ),
        "{help}"
    );
    assert!(
        !prose.contains("the bridge cancels what is still running upstream"),
        "{help}"
    );
    assert!(
        prose.contains("SIGTERM, SIGINT or SIGHUP cancels what runs upstream")
            && prose.contains("exits 143, 130 or 129"),
        "{help}"
    );
    assert!(
        prose.contains("the URL is the first line on stderr, printed as soon as the port is bound"),
        "{help}"
    );
}

/// `mcp bridge --help` shows every mode with its options in its Usage lines (the HTTP
/// options of --listen too) and says what happens when the upstream goes away in each mode;
/// a bridge's usage error points at that help, not at `mcp --help`.
#[test]
fn bridge_help_shows_every_mode_and_what_a_lost_upstream_does() {
    let help = help_at(&["bridge", "--help"], 100);
    let usage: String = help
        .split("\n\n")
        .take_while(|block| !block.starts_with("Options"))
        .filter(|block| block.contains("mcp bridge") || block.contains("--listen <ADDR>"))
        .collect();
    for option in [
        "--url <URL>",
        "-- <SERVER_CMD>",
        "--config <FILE>",
        "--listen <ADDR>",
        "--stateless",
        "--bearer-token-env <VAR>",
        "--allow-origin <ORIGIN>",
    ] {
        assert!(usage.contains(option), "{option}: {usage}");
    }
    let prose = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        prose.contains("a `-- cmd` child that exits ends the host session, and the bridge exits 3"),
        "{help}"
    );
    assert!(
        prose.contains("a --url server that cannot be reached is retried"),
        "{help}"
    );
    assert!(
        !prose.contains("the connection ends), the bridge ends"),
        "{help}"
    );

    let o = mcp(&["bridge"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("hint: `mcp bridge --help` shows each mode"),
        "{err}"
    );
    assert!(!err.contains("see `mcp --help`"), "{err}");
}
