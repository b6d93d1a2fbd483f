//! `mcp`: parses the command line and runs the subcommand.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use mcp_cli::args::{Cli, Command};
use mcp_cli::exit::{CliError, Exit};
use mcp_cli::{demo_server, lint, terminal_width};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
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
        } => lint_file(cli, path),
        command => {
            if command.needs_server() {
                cli.target().map_err(|e| CliError::Usage(e.0))?;
            }
            // The only unfinished part: these subcommands are wired to mcp_tokio::Client next.
            eprintln!(
                "mcp: this subcommand is parsed but not yet wired to the MCP client; \
                 `mcp demo-server` and `mcp lint --file` work today"
            );
            Err(CliError::Usage("subcommand not wired yet".into()))
        }
    }
}

fn lint_file(cli: &Cli, path: &std::path::Path) -> Result<Exit, CliError> {
    let file_error = |reason: String| CliError::File {
        path: path.to_owned(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| file_error(e.to_string()))?;
    let tools = lint::parse_tools_file(&text).map_err(file_error)?;
    let findings = lint::lint_tools(&tools);
    let out = if cli.output.json {
        let mut s = serde_json::to_string_pretty(&lint::findings_json(&findings))
            .unwrap_or_else(|_| "[]".into());
        s.push('\n');
        s
    } else {
        lint::render_findings(&findings, terminal_width())
    };
    write_output(cli, out.as_bytes())?;
    let errors = findings
        .iter()
        .filter(|f| f.severity == lint::Severity::Error)
        .count();
    if errors > 0 {
        return Err(CliError::LintErrors(errors));
    }
    Ok(Exit::Ok)
}

/// Writes a result to `--output FILE` or stdout.
fn write_output(cli: &Cli, bytes: &[u8]) -> Result<(), CliError> {
    match &cli.output.output {
        Some(path) => std::fs::write(path, bytes).map_err(|e| CliError::File {
            path: path.clone(),
            reason: e.to_string(),
        }),
        None => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`mcp … | head`) is not an error worth reporting.
            let _ = stdout.write_all(bytes).and_then(|()| stdout.flush());
            Ok(())
        }
    }
}
