//! `mcp`: parses the command line and runs the subcommand.

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use mcp_term::args::{Cli, Command, help};
use mcp_term::exit::{CliError, Exit, print_bridge_error, print_error};
use mcp_term::{app, demo_server};

fn main() -> ExitCode {
    let mut cli = match help::parse() {
        Ok(cli) => cli,
        // A usage error quotes the argument, which may be a secret (`-H 'Authorization
        // Bearer …'` without its colon): printed masked, in clap's colours where they apply.
        // With --json anywhere on the line it also gets its JSON object (clap could not parse
        // the line, so the flag is looked for by hand; after `--` it belongs to the server
        // command), except for `bridge`: its stdout is the host's protocol channel.
        Err(e) if e.use_stderr() => {
            let rendered = e.render().ansi().to_string();
            anstream::eprint!("{}", mcp_term::redact::text(&rendered));
            let json = std::env::args()
                .skip(1)
                .take_while(|a| a != "--")
                .any(|a| a == "--json")
                && help::subcommand_of(std::env::args_os()).as_deref() != Some("bridge");
            if json {
                let plain = e.to_string();
                let first = plain.lines().next().unwrap_or_default();
                let first = mcp_term::redact::text(first.trim_start_matches("error: ").trim());
                let usage = CliError::Usage(first.into_owned());
                if let Some(object) = usage.json_object() {
                    let text = serde_json::to_string_pretty(&object).unwrap_or_default();
                    // A closed pipe leaves nobody to tell.
                    let _ = writeln!(std::io::stdout(), "{text}");
                }
            }
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
        // clap prints help and version with status 0.
        Err(e) => e.exit(),
    };
    mcp_term::render::style::init(cli.output.color.to_style(), cli.output.output.is_some());
    // Before anything reads the headers, or masks their values (`Ui::new`).
    let checked = cli.connection.expand_header_vars().map_err(CliError::Usage);
    match checked.and_then(|()| run(&cli)) {
        Ok(exit) => exit.into(),
        // The one place errors are printed: secrets masked (mcp_term::redact).
        // A bridge's stdout carries the protocol alone (a host reads it as JSON-RPC):
        // its error is told on stderr and by the exit code only, --json or not.
        Err(e) if matches!(cli.command, Command::Bridge(_)) => {
            print_bridge_error(&e);
            e.exit().into()
        }
        Err(e) => {
            print_error(&e, cli.output.json);
            e.exit().into()
        }
    }
}

fn run(cli: &Cli) -> Result<Exit, CliError> {
    cli.refuse_ignored_options()
        .map_err(|e| CliError::Usage(e.0))?;
    match &cli.command {
        Command::DemoServer(args) if args.http.listen.is_some() => {
            demo_server::run_http(args).map(|()| Exit::Ok)
        }
        Command::DemoServer(args) => demo_server::run_stdio(args.conformance, args.modern)
            .map(|()| Exit::Ok)
            .map_err(CliError::closed),
        Command::Lint {
            file: Some(path), ..
        } => app::lint_file(cli, path),
        Command::Help { topic } => {
            let text = help::topic(topic.as_deref()).map_err(|e| CliError::Usage(e.0))?;
            print!("{text}");
            Ok(Exit::Ok)
        }
        Command::Completions { shell } => {
            use std::io::Write as _;
            let script = help::completion_script(*shell);
            // A closed pipe (`mcp completions bash | head`) is not worth reporting.
            let _ = std::io::stdout().write_all(&script);
            Ok(Exit::Ok)
        }
        _ => {
            let mut builder = match cli.command {
                // A bridge sits in the middle of every call: on one thread its tasks hand
                // work to each other without waking another thread (a futex and a context
                // switch each), which on a small machine shared with the host and the
                // server costs more than a second core gains (BENCHMARKS.md, "Bridges").
                Command::Bridge(_) => tokio::runtime::Builder::new_current_thread(),
                _ => {
                    let mut builder = tokio::runtime::Builder::new_multi_thread();
                    builder.worker_threads(2);
                    builder
                }
            };
            let runtime = builder
                .enable_all()
                .build()
                .map_err(|e| CliError::Usage(format!("cannot start the async runtime: {e}")))?;
            let result = runtime.block_on(app::run(cli));
            // A terminal prompt may still be blocked reading stdin: do not wait for it.
            runtime.shutdown_timeout(Duration::from_millis(200));
            result
        }
    }
}

/// mimalloc rather than the system allocator: see its entry in `cli/Cargo.toml` (a bridge
/// call's many small allocations cost a quarter of what glibc's malloc spends on them).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
