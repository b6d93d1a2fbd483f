//! `mcp`: parses the command line and runs the subcommand.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use mcp_cli::args::{Cli, Command};
use mcp_cli::exit::{CliError, Exit};
use mcp_cli::{app, demo_server};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // A usage error quotes the argument, which may be a secret (`-H 'Authorization
        // Bearer …'` without its colon): printed masked, in clap's colours where they apply.
        Err(e) if e.use_stderr() => {
            let rendered = e.render().ansi().to_string();
            anstream::eprint!("{}", mcp_cli::redact::text(&rendered));
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
        // clap prints help and version with status 0.
        Err(e) => e.exit(),
    };
    mcp_cli::render::style::init(cli.output.color.to_style(), cli.output.output.is_some());
    match run(&cli) {
        Ok(exit) => exit.into(),
        Err(e) => {
            // The one place errors are printed: secrets masked (mcp_cli::redact).
            let report = mcp_cli::redact::text(&e.report()).into_owned();
            eprint!("{}", mcp_cli::render::style::labels(&report));
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
