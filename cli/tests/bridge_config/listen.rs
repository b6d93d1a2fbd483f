//! `mcp bridge --config FILE --listen ADDR`.

use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use mcp_tokio::{Client, ClientBuilder};
use serde_json::{Value, json};

use crate::common::everything;
use crate::common::port_in_use::{assert_port_in_use, taken_address};
use crate::host::{GUARD, MCP, names, test_dir, write_config};
use crate::listening::{
    ScratchDir, listen_on_config, listen_on_everything, on_runtime, tool_text, within,
};

/// A host session over HTTP whose model (sampling) answers as `name`; without a name, one
/// that does not declare sampling. With `person`, it answers elicitations: it says it was
/// asked, waits to be let go, then answers "yes".
async fn host_session(url: &str, name: Option<&'static str>, person: Option<Person>) -> Client {
    let mut builder = ClientBuilder::new();
    if let Some(name) = name {
        builder = builder.sampling_handler(move |_params: Value| async move {
            Ok(json!({
                "role": "assistant",
                "content": {"type": "text", "text": format!("hello from {name}")},
                "model": name,
            }))
        });
    }
    if let Some(person) = person {
        let person = std::sync::Arc::new(person);
        builder = builder.elicitation_handler(move |_params: Value| {
            let person = person.clone();
            async move {
                let _ = person.asked.send(());
                let _ = person.let_go.lock().await.recv().await;
                Ok(json!({"action": "accept", "content": {"answer": "yes"}}))
            }
        });
    }
    builder.http(url).await.expect("a host session")
}

/// The person behind a host session's elicitations.
struct Person {
    asked: tokio::sync::mpsc::UnboundedSender<()>,
    let_go: tokio::sync::Mutex<tokio::sync::mpsc::UnboundedReceiver<()>>,
}

/// `--listen` with several HTTP host sessions: a server's sampling request goes to the one
/// session with a call in flight to that server (each session's own model answers its own
/// call), and is refused with the reason when two sessions have calls in flight to it, or
/// when the one session did not declare sampling; a call to another server meanwhile is
/// still attributed. The refused call's tool error says why. An elicitation goes the same
/// way (the call it belongs to is what keeps the first session in flight).
#[test]
fn a_servers_sampling_goes_to_the_one_session_calling_it() {
    let bridge = listen_on_config("listen-sampling", &[]);
    let url = &bridge.url;
    on_runtime(async {
        let (asked_tx, mut asked) = tokio::sync::mpsc::unbounded_channel();
        let (let_go, let_go_rx) = tokio::sync::mpsc::unbounded_channel();
        let person = Person {
            asked: asked_tx,
            let_go: tokio::sync::Mutex::new(let_go_rx),
        };
        let a = host_session(url, Some("model-a"), Some(person)).await;
        let b = host_session(url, Some("model-b"), None).await;
        let c = host_session(url, None, None).await;
        let prompt = json!({"prompt": "hi"});
        for (session, name) in [(&a, "model-a"), (&b, "model-b")] {
            let r = within(session.call_tool("alpha__model", prompt.clone()))
                .await
                .expect("a tool result");
            assert_eq!(r.is_error, None, "{}", tool_text(&r));
            assert_eq!(tool_text(&r), format!("{name} replied: hello from {name}"));
        }
        // The one session calling did not declare sampling.
        let r = within(c.call_tool("alpha__model", prompt.clone()))
            .await
            .expect("a tool result");
        assert_eq!(r.is_error, Some(true));
        let said = tool_text(&r);
        assert!(
            said.contains("did not declare the sampling capability"),
            "{said}"
        );
        assert!(
            said.contains("passes a server's sampling and elicitation requests"),
            "{said}"
        );

        // `a` keeps a call running on alpha: its question waits for the person...
        let ask = {
            let a = a.clone();
            tokio::spawn(async move { a.call_tool("alpha__ask", json!({"question": "ok?"})).await })
        };
        within(asked.recv())
            .await
            .expect("alpha's question reached a");
        // ... so alpha's request during `b`'s call cannot be told apart.
        let r = within(b.call_tool("alpha__model", prompt.clone()))
            .await
            .expect("a tool result");
        assert_eq!(r.is_error, Some(true));
        let said = tool_text(&r);
        assert!(
            said.contains(r#"2 host sessions have requests in flight to server "alpha""#),
            "{said}"
        );
        // beta is called by `b` alone: its request is attributed.
        let r = within(b.call_tool("beta__model", prompt.clone()))
            .await
            .expect("a tool result");
        assert_eq!(tool_text(&r), "model-b replied: hello from model-b");
        // The person answers; once `a`'s call is over, alpha's requests are `b`'s again.
        let_go.send(()).expect("a's handler waits");
        let answered = within(ask)
            .await
            .expect("the call's task")
            .expect("a tool result");
        assert_eq!(tool_text(&answered), "The user said: yes");
        let r = within(b.call_tool("alpha__model", prompt.clone()))
            .await
            .expect("a tool result");
        assert_eq!(tool_text(&r), "model-b replied: hello from model-b");
        for session in [a, b, c] {
            session.close().await;
        }
    });
}

/// `--listen`: the same servers over Streamable HTTP on 127.0.0.1, for `mcp` itself as the
/// client: namespaced tools, a routed call, a filtered tool refused, a resource read; SIGTERM
/// stops the bridge and its servers.
#[test]
fn listen_serves_the_servers_over_http() {
    let mut bridge = listen_on_config("listen", &["--deny", "beta__*"]);
    let url = bridge.url.clone();
    // The URL alone on the first line, then what the start found.
    assert_eq!(bridge.before_url, Vec::<String>::new());
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    let failed = bridge
        .stderr
        .recv_timeout(GUARD)
        .expect("the broken server reported");
    assert!(failed.contains(r#"server "broken" failed"#), "{failed}");

    let mcp = |args: &[&str]| {
        Command::new(MCP)
            .args(args)
            .args(["--url", &url])
            .output()
            .expect("run mcp")
    };
    let tools = mcp(&["tools", "--json"]);
    let tools: Value = serde_json::from_slice(&tools.stdout).expect("tools --json");
    let tools = names(&tools["tools"]);
    assert!(tools.contains(&"alpha__echo".to_owned()), "{tools:?}");
    assert!(!tools.iter().any(|t| t.starts_with("beta__")), "{tools:?}");
    let echoed = mcp(&["call", "alpha__echo", "text=over http"]);
    assert_eq!(String::from_utf8_lossy(&echoed.stdout).trim(), "over http");
    // A tool that needs elicitation: the question reaches the one session calling it (`mcp`
    // with no terminal declines it).
    let asked = mcp(&["call", "alpha__ask", "question=name?"]);
    let said = String::from_utf8_lossy(&asked.stdout);
    assert!(said.contains("The user declined to answer."), "{asked:?}");
    let refused = mcp(&["call", "beta__echo", "text=no"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("unknown tool: beta__echo"));
    let read = mcp(&["read", "mcp-bridge://beta/demo://readme"]);
    assert!(
        String::from_utf8_lossy(&read.stdout).contains("demo server"),
        "{read:?}"
    );

    // Asked to stop, it ends cleanly.
    assert_eq!(bridge.stop("-TERM").0.code(), Some(0));
    // The servers go with it (their process is reaped by init once the bridge is gone).
    let pid = std::fs::read_to_string(bridge.dir().join("alpha.pid")).expect("alpha's pid");
    let alive = || {
        let state = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
        // A zombie (state Z) is gone too: only its exit status is left.
        state.is_ok_and(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    };
    let started = Instant::now();
    while alive() {
        assert!(
            started.elapsed() < GUARD,
            "alpha's process outlived the bridge"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `--config --listen` on a port another program holds: the same one error and hint as the
/// single bridge, no server started.
#[test]
fn a_port_in_use_says_so_once_and_hints_another_port() {
    let dir = ScratchDir(test_dir("listen-taken"));
    let config = write_config(&dir.0);
    let (_taken, addr) = taken_address();
    let out = Command::new(MCP)
        .args(["bridge", "--listen", &addr, "--config"])
        .arg(&config)
        .env("XDG_CACHE_HOME", dir.0.join("cache"))
        .stdin(Stdio::null())
        .output()
        .expect("run mcp bridge --listen");
    let stderr = assert_port_in_use(&out, &addr);
    assert!(
        !dir.0.join("alpha.pid").exists(),
        "no server was started: {stderr}"
    );
}

/// `--listen` in front of two server-everything servers, for an HTTP host session of our own
/// client: the tasks capability is offered, a call of the task-required tool runs as a task
/// (the client follows it through `tasks/get` and `tasks/result`), the task's question
/// reaches this session (the one with `tasks/result` in flight to that server) under the
/// task's host-visible id, and `tasks/list` shows the task under that id; another session
/// neither lists the task nor may ask about it.
#[test]
fn tasks_and_their_questions_reach_an_http_session() {
    let Some(everything) = everything() else {
        return;
    };
    let bridge = listen_on_everything("listen-tasks", &everything);
    let url = &bridge.url;
    on_runtime(async {
        let (related, mut asked) = tokio::sync::mpsc::unbounded_channel();
        let client = ClientBuilder::new()
            .elicitation_handler(move |params: Value| {
                let related = related.clone();
                async move {
                    let task = &params["_meta"]["io.modelcontextprotocol/related-task"]["taskId"];
                    let _ = related.send(task.as_str().unwrap_or_default().to_owned());
                    let choice = params["requestedSchema"]["properties"]["interpretation"]["oneOf"]
                        [0]["const"]
                        .clone();
                    Ok(json!({"action": "accept", "content": {"interpretation": choice}}))
                }
            })
            .http(url)
            .await
            .expect("a host session");
        let tasks = client.capabilities().tasks.clone().expect("tasks offered");
        assert!(tasks.list.is_some() && tasks.cancel.is_some());
        // The tools' task support is known once listed.
        within(client.list_tools()).await.expect("tools");
        let report = within(client.call_tool(
            "one__simulate-research-query",
            json!({"topic": "python", "ambiguous": true}),
        ))
        .await
        .expect("the task's report");
        let text = tool_text(&report);
        assert!(text.contains("# Research Report: python"), "{text}");
        let task = asked.try_recv().expect("the task asked this session");
        assert!(task.starts_with("one/"), "{task}");
        let listed = within(client.list_tasks()).await.expect("tasks/list");
        assert!(
            listed.iter().any(|t| t.task_id == task),
            "{task}: {listed:?}"
        );
        // Another session neither lists nor finds that task: it is the first session's.
        let other = ClientBuilder::new()
            .http(url)
            .await
            .expect("a second session");
        let listed = within(other.list_tasks()).await.expect("tasks/list");
        assert!(
            listed.iter().all(|t| t.task_id != task),
            "{task}: {listed:?}"
        );
        let refused = within(other.get_task(task.clone()))
            .await
            .expect_err("another session's task");
        assert!(refused.to_string().contains("unknown task"), "{refused}");
        let got = within(client.get_task(task.clone()))
            .await
            .expect("its own task");
        assert_eq!(got.task_id, task);
        other.close().await;
        client.close().await;
    });
}

/// `--listen --stateless`: each POST is served on its own, so a server's sampling request has
/// no session to go to; the server is told so, and the tool's error says it.
#[test]
fn stateless_has_no_session_for_a_servers_request() {
    let bridge = listen_on_config("listen-stateless", &["--stateless"]);
    let out = Command::new(MCP)
        .args([
            "--json",
            "call",
            "alpha__model",
            "prompt=hi",
            "--url",
            &bridge.url,
        ])
        .stdin(Stdio::null())
        .output()
        .expect("run mcp");
    let result: Value = serde_json::from_slice(&out.stdout).expect("the tool result");
    assert_eq!(result["isError"], true, "{result}");
    let said = result.to_string();
    assert!(
        said.contains(r#"with --stateless every POST is served on its own"#),
        "{said}"
    );
    assert!(said.contains("passes a server's sampling"), "{said}");
}

/// Every HTTP session shares the servers, so a URI's one upstream subscription is shared: a
/// session that unsubscribes, or ends, does not end the updates of another session
/// subscribed to the same URI; the upstream subscription ends with the last subscriber.
#[test]
fn a_subscription_shared_by_sessions_ends_upstream_with_the_last() {
    const CLOCK: &str = "mcp-bridge://alpha/demo://clock";
    // -v: each server's messages on stderr, to see the upstream unsubscribe.
    let bridge = listen_on_config("listen-shared-subscription", &["-v"]);
    let (url, stderr) = (&bridge.url, &bridge.stderr);
    let unsubscribed_upstream = |stderr: &mpsc::Receiver<String>| {
        stderr
            .try_iter()
            .filter(|l| l.contains("[alpha]") && l.contains("resources/unsubscribe"))
            .count()
    };
    on_runtime(async {
        let a = host_session(url, None, None).await;
        let mut a_clock = within(a.subscribe(CLOCK)).await.expect("A subscribes");
        let tick = within(a_clock.next()).await.expect("an update for A");
        assert!(tick.is_ok(), "{tick:?}");

        // B subscribes to the same URI, gets its updates, then unsubscribes.
        let b = host_session(url, None, None).await;
        let mut b_clock = within(b.subscribe(CLOCK)).await.expect("B subscribes");
        within(b_clock.next())
            .await
            .expect("an update for B")
            .expect("an update");
        within(b_clock.close()).await.expect("B unsubscribes");
        // C subscribes, then its session ends without unsubscribing.
        let c = host_session(url, None, None).await;
        let c_clock = within(c.subscribe(CLOCK)).await.expect("C subscribes");
        within(c.close()).await;
        drop(c_clock);

        // A's updates go on, several ticks later.
        for _ in 0..3 {
            let tick = within(a_clock.next()).await.expect("A still gets updates");
            let tick = tick.expect("an update, not a gap");
            assert!(
                tick.params
                    .as_deref()
                    .is_some_and(|p| p.get().contains(CLOCK)),
                "{tick:?}"
            );
        }
        assert_eq!(
            unsubscribed_upstream(stderr),
            0,
            "unsubscribed upstream while A was subscribed"
        );

        // The last subscriber leaves: now the bridge unsubscribes upstream.
        within(a_clock.close()).await.expect("A unsubscribes");
        let started = Instant::now();
        loop {
            let line = stderr
                .recv_timeout(GUARD.saturating_sub(started.elapsed()))
                .expect("the upstream unsubscribe on stderr");
            if line.contains("[alpha]") && line.contains("resources/unsubscribe") {
                break;
            }
        }
        a.close().await;
        b.close().await;
    });
}

/// Each HTTP host session's opened and closed lines name the host (its `clientInfo`), as
/// with one upstream.
#[test]
fn host_session_lines_name_the_host() {
    use crate::common::raw_http::{exchange, initialize_body};
    let mut bridge = listen_on_config("listen-session-lines", &[]);
    let init = exchange(
        &bridge.url,
        "POST",
        &[],
        Some(&initialize_body("lines-host")),
    );
    assert_eq!(init.status, 200, "{:?}", init.messages);
    let session = init
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let deleted = exchange(
        &bridge.url,
        "DELETE",
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        None,
    );
    assert_eq!(deleted.status, 200);
    let (status, stderr) = bridge.stop("-TERM");
    assert_eq!(status.code(), Some(0));
    let said = |text: &str| stderr.iter().filter(|l| l.contains(text)).count();
    assert_eq!(said("opened by lines-host 1.0"), 1, "{stderr:?}");
    assert_eq!(said("by lines-host 1.0 closed: "), 1, "{stderr:?}");
}

/// With `-v`, each host session's own messages are marked `[session N]` (`<-` what the host
/// sent, `->` what it was sent, its `initialize` included), and each server's with the
/// server's name: every session shares the servers.
#[test]
fn verbose_wire_lines_name_the_host_session_or_the_server() {
    let mut bridge = listen_on_config("listen-wire-lines", &["-v"]);
    for text in ["first", "second"] {
        let echoed = Command::new(MCP)
            .args(["--url", &bridge.url, "call", "alpha__echo"])
            .arg(format!("text={text}"))
            .output()
            .expect("run mcp call");
        assert!(echoed.status.success(), "{echoed:?}");
    }
    let (status, stderr) = bridge.stop("-TERM");
    assert_eq!(status.code(), Some(0));
    let wire: Vec<&String> = stderr
        .iter()
        .filter(|l| l.contains("-> {") || l.contains("<- {"))
        .collect();
    for line in &wire {
        assert!(
            ["[session 1] ", "[session 2] ", "[alpha] ", "[beta] "]
                .iter()
                .any(|p| line.starts_with(p)),
            "a wire line marked with neither a session nor a server: {line}"
        );
    }
    let has = |prefix: &str, parts: &[&str]| {
        wire.iter()
            .any(|l| l.starts_with(prefix) && parts.iter().all(|p| l.contains(p)))
    };
    for (session, text) in [("[session 1] ", "first"), ("[session 2] ", "second")] {
        assert!(
            has(session, &["<- {", r#""method":"initialize""#]),
            "{session}: {wire:#?}"
        );
        assert!(
            has(session, &["<- {", r#""name":"alpha__echo""#, text]),
            "{session}: {wire:#?}"
        );
        assert!(
            has(session, &["-> {", "result", text]),
            "{session}: {wire:#?}"
        );
        // The server got the call under its own name, marked with the server's.
        assert!(
            has("[alpha] ", &["-> {", r#""name":"echo""#, text]),
            "{wire:#?}"
        );
    }
}
