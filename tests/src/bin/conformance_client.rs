//! The client side of the official MCP conformance suite (`@modelcontextprotocol/conformance`).
//!
//! The suite starts a mock server per scenario and runs this binary with the server URL as its
//! last argument and the scenario in `MCP_CONFORMANCE_SCENARIO` (plus
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` and, for some scenarios, `MCP_CONFORMANCE_CONTEXT`).
//! Every scenario is a short script over the public `mcp_tokio::Client` API: no scenario gets a
//! protocol behaviour of its own; what a scenario needs, the library does for every user.
//!
//! `MCP_CONFORMANCE_WIRE=1` writes a wire trace to stderr (kept by the harness per scenario).
//!
//! Exit status: 0 when the script ran to its end, 1 with a message on stderr otherwise.

use std::process::ExitCode;
use std::time::Duration;

use mcp_manager::config::{HttpConfig, ServerConfig, TransportConfig};
use mcp_proto::session::EraPolicy;
use mcp_proto::types::ElicitParams;
use serde_json::{Value, json};

type Client = mcp_tokio::Client;

fn usage() -> ExitCode {
    eprintln!(
        "usage: conformance_client <server-url>\n\
         (run by the conformance suite: MCP_CONFORMANCE_SCENARIO names the scenario)"
    );
    ExitCode::from(2)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    // The suite appends the server URL as the last argument.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(url) = args.last().filter(|a| !a.starts_with('-')).cloned() else {
        return usage();
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match tokio::time::timeout(Duration::from_secs(25), run(&scenario, &url)).await {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("conformance_client: scenario {scenario:?}: {e}");
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!("conformance_client: scenario {scenario:?}: gave up after 25 s");
            ExitCode::FAILURE
        }
    }
}

fn config(url: &str) -> ServerConfig {
    ServerConfig {
        name: "conformance".into(),
        transport: TransportConfig::Http(HttpConfig::new(url)),
        timeouts: Default::default(),
    }
}

/// Accepts every form elicitation with the schema's defaults filled in, as an unattended
/// host would.
async fn accept_with_defaults(params: Value) -> Result<Value, mcp_proto::jsonrpc::ErrorObject> {
    let params: ElicitParams = serde_json::from_value(params).map_err(|e| {
        mcp_proto::jsonrpc::ErrorObject::new(
            mcp_proto::jsonrpc::ErrorObject::INVALID_PARAMS,
            e.to_string(),
        )
    })?;
    Ok(json!({"action": "accept", "content": params.default_content()}))
}

/// The `toolCalls` of `MCP_CONFORMANCE_CONTEXT` (`[{name, arguments}]`), in order.
fn context_tool_calls() -> Vec<(String, Value)> {
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    context["toolCalls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .filter_map(|c| {
                    let name = c["name"].as_str()?.to_owned();
                    Some((name, c.get("arguments").cloned().unwrap_or(json!({}))))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Placeholder arguments for a tool's required properties, as a test host fills a form.
fn arguments_for(schema: &serde_json::Map<String, Value>) -> Value {
    let mut args = serde_json::Map::new();
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let kind = schema
            .get("properties")
            .and_then(|p| p.get(name))
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str);
        let value = match kind {
            Some("integer" | "number") => json!(1),
            Some("boolean") => json!(true),
            Some("object") => json!({}),
            Some("array") => json!([]),
            Some("null") => Value::Null,
            _ => json!("x"),
        };
        args.insert(name.to_owned(), value);
    }
    Value::Object(args)
}

/// The era policy of a host that knows which revision the suite tests: Auto (probe with
/// `server/discover`, fall back to `initialize`) for 2026-07-28 and later, `initialize` only
/// for the earlier revisions, whose scenarios count every request they see.
fn era_policy() -> EraPolicy {
    match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION") {
        Ok(v) if v.as_str() >= "2026-07-28" => EraPolicy::Auto {
            probe_timeout: Duration::from_secs(5),
        },
        _ => EraPolicy::Initialize,
    }
}

/// The metadata document URL the suite's authorization servers accept as a `client_id`.
const CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The OAuth setup of an `auth/*` scenario, as a host would configure it: a Client ID
/// Metadata Document and Dynamic Client Registration, plus the pre-registered credentials of
/// `MCP_CONFORMANCE_CONTEXT` when it has them; the client credentials grant for the
/// `client-credentials-*` scenarios; the identity assertion grant when the context names an
/// identity provider (`cross-app-access-*`). Authorization is headless.
fn auth_provider(scenario: &str) -> Result<mcp_driver::auth::AuthProvider, String> {
    use mcp_proto::auth::{
        ClientCredentials, ClientMetadata, ClientRegistration, IdentityAssertion, JwtAlgorithm,
        PrivateKey,
    };
    let context: Value = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
        Ok(s) => serde_json::from_str(&s).map_err(|e| format!("MCP_CONFORMANCE_CONTEXT: {e}"))?,
        Err(_) => Value::Null,
    };
    let text = |k: &str| context.get(k).and_then(Value::as_str).map(str::to_owned);
    let cimd = url::Url::parse(CIMD_URL).map_err(|e| e.to_string())?;
    let mut registration = ClientRegistration::metadata_document(cimd)
        .with_dynamic(ClientMetadata::new("mcp-rs conformance client"));
    if let Some(id) = text("client_id") {
        let credentials = if let Some(pem) = text("private_key_pem") {
            let alg = text("signing_algorithm").unwrap_or_else(|| "ES256".into());
            let algorithm = JwtAlgorithm::parse(&alg).ok_or(format!("unknown algorithm {alg}"))?;
            ClientCredentials::with_private_key(
                id,
                PrivateKey {
                    pem: pem.into(),
                    algorithm,
                },
            )
        } else if let Some(secret) = text("client_secret") {
            ClientCredentials::with_secret(id, secret)
        } else {
            ClientCredentials::public(id)
        };
        registration.pre_registered = Some(credentials);
    }
    let provider = mcp_driver::auth::AuthProvider::new(registration);
    Ok(if scenario.starts_with("auth/client-credentials") {
        provider.client_credentials()
    } else if let (Some(endpoint), Some(id_token)) =
        (text("idp_token_endpoint"), text("idp_id_token"))
    {
        // Enterprise-managed authorization (cross-app-access): the context carries the ID
        // token the user got at the identity provider and that provider's token endpoint.
        let endpoint =
            url::Url::parse(&endpoint).map_err(|e| format!("idp_token_endpoint: {e}"))?;
        let idp_client = ClientCredentials::public(text("idp_client_id").unwrap_or_default());
        provider.identity_assertion(IdentityAssertion::new(endpoint, id_token, idp_client))
    } else {
        provider
    })
}

async fn run(scenario: &str, url: &str) -> Result<(), Box<dyn std::error::Error>> {
    // The listener is open before the scenario's first request, so a server that answers on
    // it (sse-retry does, for a request pending when the GET arrives) never races that
    // request: without this, a GET delayed on a loaded machine took the tool's answer and no
    // reconnection with `retry` happened.
    let mut builder = Client::builder()
        .name("conformance")
        .era_policy(era_policy())
        .await_listener(Duration::from_secs(2));
    if std::env::var_os("MCP_CONFORMANCE_WIRE").is_some() {
        // The harness keeps the client's stderr per scenario: a wire trace for diagnosis.
        builder = builder.on_wire(|dir, bytes| {
            eprintln!(
                "wire {dir:?}: {}",
                String::from_utf8_lossy(bytes).trim_end()
            );
        });
    }
    builder = builder.elicitation_handler(accept_with_defaults);
    if scenario.starts_with("auth/") {
        builder = builder.auth(auth_provider(scenario)?);
    }
    let client = builder.connect(config(url)).await?;
    match scenario {
        "initialize" => {}
        "tools_call" | "tools-call" => {
            let tools = client.list_tools().await?;
            let tool = tools
                .iter()
                .find(|t| t.name == "add_numbers")
                .map_or("add_numbers", |t| t.name.as_str());
            client.call_tool(tool, json!({"a": 5, "b": 3})).await?;
        }
        "elicitation-sep1034-client-defaults" | "elicitation-defaults" => {
            client
                .call_tool("test_client_elicitation_defaults", json!({}))
                .await?;
        }
        "sse-retry" => {
            client.call_tool("test_reconnection", json!({})).await?;
        }
        "http-custom-headers" => {
            // The calls to make come in the context; the headers are the library's business.
            client.list_tools().await?;
            for call in context_tool_calls() {
                client.call_tool(call.0, call.1).await?;
            }
        }
        "http-invalid-tool-headers" => {
            // Call everything the list offers: tools with invalid `x-mcp-header` annotations
            // must already be gone from it.
            for tool in client.list_tools().await? {
                let args = arguments_for(&tool.input_schema);
                client.call_tool(&tool.name, args).await?;
            }
        }
        "json-schema-2020-12-preservation" => {
            let tools = client.list_tools().await?;
            let focal = tools
                .iter()
                .find(|t| t.name == "json_schema_2020_12_tool")
                .ok_or("no json_schema_2020_12_tool in the list")?;
            client
                .call_tool("json_schema_echo", json!({"schema": focal.input_schema}))
                .await?;
        }
        "sep-2322-client-request-state" => {
            client.list_tools().await?;
            // An unrelated call runs while the first multi-round call waits for its input.
            let (echo, unrelated) = tokio::join!(
                client.call_tool("test_mrtr_echo_state", json!({})),
                client.call_tool("test_mrtr_unrelated", json!({})),
            );
            echo?;
            unrelated?;
            client.call_tool("test_mrtr_no_state", json!({})).await?;
            client
                .call_tool("test_mrtr_no_result_type", json!({}))
                .await?;
        }
        s if s.starts_with("auth/") => {
            // What a host does once authorized: list the tools and call one (an operation may
            // need more scopes than listing: the step-up scenarios answer it with 403).
            let tools = client.list_tools().await?;
            if let Some(tool) = tools.first() {
                client.call_tool(tool.name.as_str(), json!({})).await?;
            }
        }
        _ => {
            // Any other scenario: the generic script of a host, list what the server offers
            // and call nothing.
            client.list_tools().await?;
        }
    }
    client.close().await;
    Ok(())
}
