//! `mcp`: parses the command line and runs the subcommand.

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use mcp_cli::args::{Cli, Command, help};
use mcp_cli::exit::{CliError, Exit, print_error};
use mcp_cli::{app, demo_server};

fn main() -> ExitCode {
    let cli = match help::parse() {
        Ok(cli) => cli,
        // A usage error with --json anywhere on the line still gets its JSON object (clap
        // could not parse the line, so the flag is looked for by hand; after `--` it belongs
        // to the server command).
        Err(e)
            if e.use_stderr()
                && std::env::args()
                    .skip(1)
                    .take_while(|a| a != "--")
                    .any(|a| a == "--json") =>
        {
            let _ = e.print();
            let rendered = e.to_string();
            let first = rendered.lines().next().unwrap_or_default();
            let usage = CliError::Usage(first.trim_start_matches("error: ").trim().to_owned());
            if let Some(object) = usage.json_object() {
                let text = serde_json::to_string_pretty(&object).unwrap_or_default();
                // A closed pipe leaves nobody to tell.
                let _ = writeln!(std::io::stdout(), "{text}");
            }
            return Exit::Usage.into();
        }
        // clap prints help and version with status 0 and usage errors with status 2.
        Err(e) => e.exit(),
    };
    match run(&cli) {
        Ok(exit) => exit.into(),
        Err(e) => {
            print_error(&e, cli.output.json);
            e.exit().into()
        }
    }
}

fn run(cli: &Cli) -> Result<Exit, CliError> {
    match &cli.command {
        Command::DemoServer => demo_server::run_stdio()
            .map(|()| Exit::Ok)
            .map_err(|e| CliError::Closed(e.to_string())),
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
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
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
