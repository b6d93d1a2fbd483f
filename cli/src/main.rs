fn main() {
    if let Err(e) = mcp_cli::demo_server::run_stdio() {
        eprintln!("mcp: {e}");
        std::process::exit(1);
    }
}
