use std::path::Path;
use std::time::Duration;

use clap::Parser;
use clap::error::ErrorKind;
use serde_json::json;

use super::*;

fn parse(args: &[&str]) -> Cli {
    Cli::try_parse_from(std::iter::once("mcp").chain(args.iter().copied()))
        .unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

fn parse_err(args: &[&str]) -> ErrorKind {
    match Cli::try_parse_from(std::iter::once("mcp").chain(args.iter().copied())) {
        Ok(cli) => panic!("{args:?} parsed as {cli:?}"),
        Err(e) => e.kind(),
    }
}

#[test]
fn stdio_command_after_double_dash() {
    let cli = parse(&["tools", "--", "npx", "-y", "server-everything", "--flag"]);
    assert!(matches!(cli.command, Command::Tools(_)));
    assert_eq!(
        cli.target().unwrap(),
        Target::Stdio {
            program: "npx".into(),
            args: vec!["-y".into(), "server-everything".into(), "--flag".into()],
        }
    );
}

#[test]
fn global_options_before_or_after_the_subcommand() {
    let before = parse(&["--url", "http://127.0.0.1:3000/mcp", "--json", "-v", "ping"]);
    let after = parse(&["ping", "--url", "http://127.0.0.1:3000/mcp", "--json", "-v"]);
    for cli in [before, after] {
        assert!(cli.output.json);
        assert_eq!(cli.output.verbose, 1);
        assert_eq!(
            cli.target().unwrap(),
            Target::Http {
                url: "http://127.0.0.1:3000/mcp".into()
            }
        );
    }
}

#[test]
fn config_and_server_go_together() {
    let cli = parse(&["--config", "mcp.json", "--server", "fs", "info"]);
    assert_eq!(
        cli.target().unwrap(),
        Target::Config {
            file: "mcp.json".into(),
            server: Some("fs".into())
        }
    );
    // Without --server the file's only server is meant (checked when the file is read).
    let no_server = parse(&["--config", "mcp.json", "info"]);
    assert_eq!(
        no_server.target().unwrap(),
        Target::Config {
            file: "mcp.json".into(),
            server: None
        }
    );
    assert!(!no_server.command.uses_manager(&no_server.connection));
    assert_eq!(
        parse_err(&["--server", "fs", "info"]),
        ErrorKind::MissingRequiredArgument
    );
    assert_eq!(
        parse_err(&[
            "--url", "http://x", "--config", "a", "--server", "b", "info"
        ]),
        ErrorKind::ArgumentConflict
    );
}

#[test]
fn config_without_server_uses_the_manager_for_tools_all_and_call() {
    let all = parse(&["--config", "mcp.json", "tools", "--all"]);
    assert!(all.command.uses_manager(&all.connection));
    let call = parse(&["--config", "mcp.json", "call", "fs__read", "path=x"]);
    assert!(call.command.uses_manager(&call.connection));
    let one = parse(&["--config", "mcp.json", "--server", "fs", "call", "read"]);
    assert!(!one.command.uses_manager(&one.connection));
    let plain = parse(&["--config", "mcp.json", "--server", "fs", "tools"]);
    assert!(!plain.command.uses_manager(&plain.connection));
}

#[test]
fn target_needs_exactly_one_server() {
    let none = parse(&["tools"]);
    assert!(none.target().unwrap_err().0.contains("no server given"));
    let two = parse(&["--url", "http://x", "tools", "--", "srv"]);
    assert!(two.target().unwrap_err().0.contains("only one"));
    assert!(!parse(&["demo"]).command.needs_server());
    assert!(!parse(&["demo-server"]).command.needs_server());
    assert!(!parse(&["lint", "--file", "t.json"]).command.needs_server());
    assert!(parse(&["lint"]).command.needs_server());
}

#[test]
fn connection_options() {
    let cli = parse(&[
        "-H",
        "Authorization: Bearer abc",
        "--header",
        "X-Trace:1",
        "--env",
        "TOKEN=a=b",
        "--timeout",
        "30s",
        "--connect-timeout",
        "500ms",
        "--era",
        "legacy",
        "info",
        "--",
        "srv",
    ]);
    let c = &cli.connection;
    assert_eq!(
        c.headers,
        [
            ("Authorization".into(), "Bearer abc".into()),
            ("X-Trace".into(), "1".into())
        ]
    );
    assert_eq!(c.env, [("TOKEN".into(), "a=b".into())]);
    assert_eq!(c.timeout, Some(Duration::from_secs(30)));
    assert_eq!(c.connect_timeout, Some(Duration::from_millis(500)));
    assert_eq!(c.era, Era::Legacy);
    assert_eq!(parse(&["info"]).connection.era, Era::Auto);
    assert_eq!(
        parse_err(&["--era", "future", "info"]),
        ErrorKind::InvalidValue
    );
    assert_eq!(
        parse_err(&["-H", "no colon", "info"]),
        ErrorKind::ValueValidation
    );
    assert_eq!(
        parse_err(&["--env", "NOEQ", "info"]),
        ErrorKind::ValueValidation
    );
    assert_eq!(
        parse_err(&["--timeout", "soon", "info"]),
        ErrorKind::ValueValidation
    );
}

#[test]
fn output_options() {
    let cli = parse(&["call", "image", "--raw", "-o", "out.png", "-q", "--", "srv"]);
    assert!(cli.output.raw && cli.output.quiet);
    assert_eq!(
        cli.output.output.as_deref(),
        Some(std::path::Path::new("out.png"))
    );
    assert_eq!(
        parse_err(&["--json", "--raw", "tools"]),
        ErrorKind::ArgumentConflict
    );
    assert_eq!(
        parse_err(&["-q", "-v", "tools"]),
        ErrorKind::ArgumentConflict
    );
    assert_eq!(parse(&["-vv", "tools"]).output.verbose, 2);
}

#[test]
fn call_with_pairs_and_json() {
    let cli = parse(&[
        "call",
        "add",
        "--args",
        r#"{"a": 1, "b": 2}"#,
        "b=5",
        "note=hi",
        "--",
        "srv",
    ]);
    let Command::Call {
        tool, args, server, ..
    } = &cli.command
    else {
        panic!("{cli:?}")
    };
    assert_eq!(tool, "add");
    assert_eq!(server.argv, ["srv"]);
    assert_eq!(
        serde_json::Value::Object(args.to_map().unwrap()),
        json!({ "a": 1, "b": 5, "note": "hi" })
    );
    assert_eq!(parse_err(&["call"]), ErrorKind::MissingRequiredArgument);
}

#[test]
fn pair_values_are_json_when_they_parse() {
    let pairs: Vec<String> = [
        "n=3",
        "f=2.5",
        "ok=true",
        "nothing=null",
        "s=hello world",
        "quoted=\"3\"",
        "list=[1,\"a\"]",
        "obj={\"k\":1}",
        "empty=",
        "eq=a=b",
    ]
    .map(String::from)
    .to_vec();
    let map = build_arguments(None, &pairs).unwrap();
    assert_eq!(
        serde_json::Value::Object(map),
        json!({
            "n": 3, "f": 2.5, "ok": true, "nothing": null, "s": "hello world",
            "quoted": "3", "list": [1, "a"], "obj": { "k": 1 }, "empty": "", "eq": "a=b"
        })
    );
}

#[test]
fn dotted_keys_nest() {
    let pairs: Vec<String> = ["a.b=1", "a.c.d=x", "top=2"].map(String::from).to_vec();
    let map = build_arguments(Some(r#"{"a": {"z": 0}}"#), &pairs).unwrap();
    assert_eq!(
        serde_json::Value::Object(map),
        json!({ "a": { "z": 0, "b": 1, "c": { "d": "x" } }, "top": 2 })
    );
    let conflict = build_arguments(None, &["a=1".into(), "a.b=2".into()]).unwrap_err();
    assert!(conflict.0.contains("already a number"), "{conflict}");
    assert!(build_arguments(None, &["a..b=1".into()]).is_err());
}

#[test]
fn bad_arguments_say_what_is_wrong() {
    assert!(
        build_arguments(None, &["novalue".into()])
            .unwrap_err()
            .0
            .contains("key=value")
    );
    assert!(build_arguments(None, &["=1".into()]).is_err());
    assert!(
        build_arguments(Some("[1]"), &[])
            .unwrap_err()
            .0
            .contains("an array")
    );
    assert!(
        build_arguments(Some("{"), &[])
            .unwrap_err()
            .0
            .contains("not valid JSON")
    );
}

#[test]
fn prompt_pairs_stay_strings() {
    let cli = parse(&["prompt", "summarize", "text=3", "style=brief", "--", "srv"]);
    let Command::Prompt { name, pairs, .. } = &cli.command else {
        panic!("{cli:?}")
    };
    assert_eq!(name, "summarize");
    let map = string_pairs(pairs).unwrap();
    assert_eq!(map["text"], "3");
    assert_eq!(map["style"], "brief");
}

#[test]
fn read_complete_log_level() {
    let cli = parse(&["read", "demo://readme", "--", "srv"]);
    assert!(matches!(&cli.command, Command::Read { uri, .. } if uri == "demo://readme"));

    let cli = parse(&["complete", "prompt:summarize", "style", "b", "--", "srv"]);
    let Command::Complete {
        reference,
        argument,
        value,
        ..
    } = &cli.command
    else {
        panic!("{cli:?}")
    };
    assert_eq!(reference, &CompletionRef::Prompt("summarize".into()));
    assert_eq!((argument.as_str(), value.as_str()), ("style", "b"));
    assert_eq!(
        parse_reference("demo://notes/{name}").unwrap(),
        CompletionRef::Resource("demo://notes/{name}".into())
    );
    assert_eq!(
        parse_reference("resource:file:///{path}").unwrap(),
        CompletionRef::Resource("file:///{path}".into())
    );
    assert_eq!(
        parse_reference("plain").unwrap(),
        CompletionRef::Prompt("plain".into())
    );
    assert!(parse_reference("prompt:").is_err());

    let cli = parse(&["log-level", "warning", "--", "srv"]);
    assert!(matches!(
        cli.command,
        Command::LogLevel {
            level: LogLevel::Warning,
            ..
        }
    ));
    assert_eq!(parse_err(&["log-level", "loud"]), ErrorKind::InvalidValue);
}

#[test]
fn load_options() {
    let cli = parse(&[
        "load", "echo", "text=x", "-c", "8", "--count", "500", "--", "srv",
    ]);
    let Command::Load {
        tool,
        args,
        concurrency,
        count,
        duration,
        ..
    } = &cli.command
    else {
        panic!("{cli:?}")
    };
    assert_eq!(
        (tool.as_str(), *concurrency, *count, *duration),
        ("echo", 8, Some(500), None)
    );
    assert_eq!(args.pairs, ["text=x"]);
    let cli = parse(&["load", "echo", "--duration", "10s"]);
    assert!(
        matches!(cli.command, Command::Load { duration: Some(d), concurrency: 1, .. } if d == Duration::from_secs(10))
    );
    assert_eq!(
        parse_err(&["load", "echo", "--count", "5", "--duration", "1s"]),
        ErrorKind::ArgumentConflict
    );
    assert_eq!(
        parse_err(&["load", "echo", "-c", "0"]),
        ErrorKind::ValueValidation
    );
}

#[test]
fn every_subcommand_parses() {
    for args in [
        &["info"][..],
        &["tools"],
        &["resources"],
        &["prompts"],
        &["tasks"],
        &["tasks", "get", "t1"],
        &["tasks", "result", "t1"],
        &["tasks", "cancel", "t1"],
        &["ping"],
        &["watch"],
        &["lint"],
        &["demo"],
        &["demo-server"],
    ] {
        parse(args);
    }
    assert_eq!(
        parse_err(&[]),
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    );
    assert_eq!(parse_err(&["frobnicate"]), ErrorKind::InvalidSubcommand);
}

#[test]
fn durations() {
    assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
    assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
    assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
    assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
    assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
    assert!(parse_duration("10 parsecs").is_err());
    assert!(parse_duration("").is_err());
    assert!(parse_duration("1e999").is_err());
}

#[test]
fn clap_definition_is_consistent() {
    use clap::CommandFactory;
    Cli::command().debug_assert();
}

#[test]
fn login_and_logout() {
    let cli = parse(&[
        "login",
        "--url",
        "https://h/mcp",
        "--scope",
        "a",
        "--scope",
        "b",
    ]);
    match &cli.command {
        Command::Login {
            no_browser,
            scopes,
            wait,
        } => {
            assert!(!no_browser);
            assert_eq!(scopes, &["a", "b"]);
            assert_eq!(*wait, Duration::from_secs(300));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        cli.target().unwrap(),
        Target::Http {
            url: "https://h/mcp".into()
        }
    );
    assert!(cli.command.needs_server());
    let cli = parse(&[
        "--token-store",
        "/t.json",
        "login",
        "--no-browser",
        "--wait",
        "10s",
    ]);
    assert_eq!(
        cli.connection.token_store.as_deref(),
        Some(Path::new("/t.json"))
    );
    assert!(matches!(
        cli.command,
        Command::Login { no_browser: true, wait, .. } if wait == Duration::from_secs(10)
    ));
    let cli = parse(&["logout", "--all"]);
    assert!(matches!(cli.command, Command::Logout { all: true }));
    assert!(!cli.command.needs_server());
    assert!(cli.command.server_command().is_none());
    assert_eq!(
        parse_err(&["login", "--", "srv"]),
        ErrorKind::UnknownArgument
    );
}

#[test]
fn roots_and_watch_subscriptions() {
    let cli = parse(&[
        "watch",
        "--subscribe",
        "demo://x",
        "--root",
        "/a",
        "--root",
        "b",
        "--subscribe",
        "demo://y",
        "--",
        "srv",
    ]);
    assert_eq!(
        cli.connection.roots,
        [PathBuf::from("/a"), PathBuf::from("b")]
    );
    let Command::Watch(w) = &cli.command else {
        panic!("{:?}", cli.command)
    };
    assert_eq!(w.subscribe, ["demo://x", "demo://y"]);
    assert_eq!(w.server.argv, ["srv"]);
    assert!(parse(&["info", "--", "srv"]).connection.roots.is_empty());
    let before = parse(&["--root", "/a", "--root", "b", "info", "--", "srv"]);
    assert_eq!(before.connection.roots.len(), 2);
}

#[test]
fn tasks_takes_the_server_after_itself_or_after_its_subcommand() {
    let cli = parse(&["tasks", "--", "srv", "a"]);
    let Command::Tasks(t) = &cli.command else {
        panic!("tasks");
    };
    assert!(t.action.is_none());
    assert_eq!(t.server().argv, ["srv", "a"]);
    let cli = parse(&["tasks", "cancel", "t-9", "--", "srv"]);
    let Command::Tasks(t) = &cli.command else {
        panic!("tasks");
    };
    assert!(matches!(&t.action, Some(TaskAction::Cancel { id, .. }) if id == "t-9"));
    assert_eq!(
        cli.command.server_command().map(|s| s.argv.clone()),
        Some(vec!["srv".to_owned()])
    );
    assert_eq!(
        parse_err(&["tasks", "get"]),
        ErrorKind::MissingRequiredArgument
    );
}

#[test]
fn listen_takes_ip_and_port_or_localhost_and_says_what_to_write_otherwise() {
    use std::net::SocketAddr;
    let addr = |s: &str| s.parse::<SocketAddr>().expect("test address");
    assert_eq!(parse_listen_addr("127.0.0.1:0"), Ok(addr("127.0.0.1:0")));
    assert_eq!(parse_listen_addr("[::1]:8080"), Ok(addr("[::1]:8080")));
    assert_eq!(parse_listen_addr("localhost:0"), Ok(addr("127.0.0.1:0")));
    assert_eq!(
        parse_listen_addr("LOCALHOST:8080"),
        Ok(addr("127.0.0.1:8080"))
    );
    let bare = parse_listen_addr("8080").expect_err("a bare port");
    assert!(bare.contains("use 127.0.0.1:8080"), "{bare}");
    let name = parse_listen_addr("example.com:80").expect_err("a host name");
    assert!(name.contains("use 127.0.0.1:80"), "{name}");
    let junk = parse_listen_addr("nonsense").expect_err("no port");
    assert!(junk.contains("use 127.0.0.1:PORT"), "{junk}");
    let cli = parse(&[
        "bridge",
        "--listen",
        "localhost:0",
        "--url",
        "http://127.0.0.1:1/mcp",
    ]);
    let Command::Bridge(args) = cli.command else {
        panic!("bridge")
    };
    assert_eq!(args.http.listen, Some(addr("127.0.0.1:0")));
    assert_eq!(
        parse_err(&["demo-server", "--listen", "8080"]),
        ErrorKind::ValueValidation
    );
}

#[test]
fn allow_origin_takes_an_origin_as_browsers_send_it() {
    for (given, kept) in [
        ("https://app.example.com", "https://app.example.com"),
        ("http://localhost:3000", "http://localhost:3000"),
        ("http://[::1]:8080", "http://[::1]:8080"),
        // Browsers lower-case the host and drop a default port.
        ("https://App.Example.COM:443", "https://app.example.com"),
        ("http://example.com:80", "http://example.com"),
        ("vscode-webview://abc123", "vscode-webview://abc123"),
    ] {
        assert_eq!(parse_origin(given).as_deref(), Ok(kept), "{given}");
    }
    for (given, says) in [
        (
            "example.com",
            "has no scheme, so no browser's Origin would match it: use https://example.com",
        ),
        ("localhost:3000", "use http://localhost:3000"),
        ("example.com/app", "use https://example.com ("),
        (
            "https://example.com/",
            "ends with a slash, which a browser's Origin never has: use https://example.com",
        ),
        (
            "https://example.com/app",
            "has a path: an origin has none, use https://example.com",
        ),
        ("https://example.com?x=1", "has a path"),
        ("https://user:pw@example.com", "has credentials"),
        ("https://example.com:99999", "is not an origin"),
        ("null", "cannot be allowed"),
    ] {
        let error = parse_origin(given).expect_err(given);
        assert!(error.contains(says), "{given}: {error}");
    }
    // At parse time, for both commands that take it.
    let cli = parse(&[
        "bridge",
        "--listen",
        "127.0.0.1:0",
        "--allow-origin",
        "https://Example.com:443",
        "--url",
        "http://127.0.0.1:1/mcp",
    ]);
    let Command::Bridge(args) = cli.command else {
        panic!("bridge")
    };
    assert_eq!(args.http.allow_origins, ["https://example.com"]);
    for command in ["bridge", "demo-server"] {
        assert_eq!(
            parse_err(&[
                command,
                "--listen",
                "127.0.0.1:0",
                "--allow-origin",
                "example.com"
            ]),
            ErrorKind::ValueValidation,
            "{command}"
        );
    }
}

#[test]
fn bridge_and_demo_server_share_the_listen_options_and_the_bridge_adds_its_own_words() {
    for command in ["bridge", "demo-server"] {
        for option in [
            &["--stateless"][..],
            &["--bearer-token-env", "TOKEN"],
            &["--allow-origin", "https://example.com"],
        ] {
            let mut args = vec![command];
            args.extend_from_slice(option);
            assert_eq!(
                parse_err(&args),
                ErrorKind::MissingRequiredArgument,
                "{args:?} without --listen"
            );
        }
    }
    let Command::DemoServer(demo) = parse(&[
        "demo-server",
        "--listen",
        "127.0.0.1:0",
        "--stateless",
        "--bearer-token-env",
        "TOKEN",
    ])
    .command
    else {
        panic!("demo-server")
    };
    assert!(demo.http.stateless);
    assert_eq!(demo.http.bearer_token_env.as_deref(), Some("TOKEN"));

    use clap::CommandFactory;
    let mut root = Cli::command();
    let help_of = |root: &mut clap::Command, command: &str, option: &str| {
        let sub = root.find_subcommand_mut(command).expect("a subcommand");
        let arg = sub
            .get_arguments()
            .find(|a| a.get_id() == option)
            .expect("the option");
        arg.get_help().expect("help text").to_string()
    };
    let demo_listen = help_of(&mut root, "demo-server", "listen");
    let bridge_listen = help_of(&mut root, "bridge", "listen");
    assert!(
        demo_listen.ends_with("Each client gets a session of its own"),
        "{demo_listen}"
    );
    assert_eq!(
        bridge_listen,
        format!(
            "{demo_listen}, and each session its own upstream (the servers of a --config file are shared by all sessions)"
        )
    );
    let bridge_stateless = help_of(&mut root, "bridge", "stateless");
    assert!(
        bridge_stateless.starts_with(&help_of(&mut root, "demo-server", "stateless"))
            && bridge_stateless.ends_with(", over one upstream connection shared by all clients"),
        "{bridge_stateless}"
    );
}
