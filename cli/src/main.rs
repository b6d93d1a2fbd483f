//! `mcp`: parses the command line and runs the subcommand.

use std::process::ExitCode;
use std::time::Duration;

use mcp_cli::args::{Cli, Command, help};
use mcp_cli::exit::{CliError, Exit};
use mcp_cli::{app, demo_server};

fn main() -> ExitCode {
    let cli = match help::parse() {
        Ok(cli) => cli,
        // clap prints help and version with status 0 and usage errors with status 2.
        Err(e) => e.exit(),
    };
    match run(&cli) {
        Ok(exit) => exit.into(),
        Err(e) => {
            eprint!("{}", e.report());
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
