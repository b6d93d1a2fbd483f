#!/usr/bin/env node
// An MCP client written with the npm TypeScript SDK (`@modelcontextprotocol/sdk`, pinned in
// tests/peers/npm/package-lock.json), run against npm server-everything (directly, or through a
// bridge in front of it). It plays a host nobody in this repository wrote: tools listed, a call
// with progress, a sampling request and an elicitation answered by its own handlers, a resource
// subscription, a cancelled call. See tests/clients/README.md.
//
//   node ts_sdk_client.mjs [--node-modules DIR] --stdio CMD [ARGS...]
//   node ts_sdk_client.mjs [--node-modules DIR] --url http://127.0.0.1:PORT/mcp
//   node ts_sdk_client.mjs [--node-modules DIR] --demo --url http://127.0.0.1:PORT/mcp
//
// With --demo the same steps run against `mcp demo-server` (its tools slow, model, ask, echo and
// the resource demo://clock) instead of server-everything.
//
// Prints one JSON object per step on stdout ({"step", "ok", "detail"}); exits 0 when every step
// passed, 1 when one failed, 2 on bad arguments. Every wait is bounded; a guard ends the process
// (exit 1) if the whole run takes longer than MCP_CLIENT_GUARD_SECS (default 45).

import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const USAGE =
  "usage: ts_sdk_client.mjs [--node-modules DIR] [--demo] (--stdio CMD [ARGS...] | --url URL)";

/// The command line: where the SDK is, and the target.
function parseArgs(argv) {
  let nodeModules;
  let target;
  let demo = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--node-modules" && i + 1 < argv.length) {
      nodeModules = argv[++i];
    } else if (arg === "--demo") {
      demo = true;
    } else if (arg === "--url" && i + 1 < argv.length && i + 2 === argv.length) {
      target = { url: argv[++i] };
    } else if (arg === "--stdio" && i + 1 < argv.length) {
      // Everything after --stdio is the server command.
      target = { command: argv[i + 1], args: argv.slice(i + 2) };
      break;
    } else {
      return undefined;
    }
  }
  if (!target) return undefined;
  // Default: the peers tree that scripts/install-peers makes at the repository root.
  const here = dirname(fileURLToPath(import.meta.url));
  nodeModules ??= process.env.MCP_CLIENT_NODE_MODULES ?? join(here, "../../.peers/npm/node_modules");
  return { nodeModules: resolve(nodeModules), target, demo };
}

const options = parseArgs(process.argv.slice(2));
if (!options) {
  console.error(USAGE);
  process.exit(2);
}
/// The same steps against `mcp demo-server` (--demo).
const DEMO = options.demo;
const sdkRoot = join(options.nodeModules, "@modelcontextprotocol/sdk");
if (!existsSync(join(sdkRoot, "package.json"))) {
  console.error(`ts_sdk_client: no @modelcontextprotocol/sdk in ${options.nodeModules} (run scripts/install-peers)`);
  process.exit(2);
}

/// Imports an SDK module by its export subpath. The package maps `./*` to `./dist/esm/*` for
/// `import`; the SDK lives in the peers tree, not next to this script, so bare specifiers
/// would not resolve from here.
const sdk = (subpath) => import(pathToFileURL(join(sdkRoot, "dist/esm", subpath)).href);

const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const types = await sdk("types.js");

// ---- output ------------------------------------------------------------------------------------

let failures = 0;
function report(step, ok, detail) {
  if (!ok) failures += 1;
  process.stdout.write(`${JSON.stringify({ step, ok, detail })}\n`);
}

const guardSecs = Number(process.env.MCP_CLIENT_GUARD_SECS ?? 45);
setTimeout(() => {
  report("guard", false, { error: `the whole run took longer than ${guardSecs} s` });
  process.exit(1);
}, guardSecs * 1000).unref();

/// Resolves with `promise`, or rejects after `ms` naming `what`.
function within(ms, promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no outcome within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/// Resolves when `cond()` holds (checked after every message the tap sees), or after `ms`
/// with false.
function waitFor(ms, cond) {
  if (cond()) return Promise.resolve(true);
  return new Promise((resolveWait) => {
    const waiter = () => {
      if (cond()) {
        done(true);
      }
    };
    const timer = setTimeout(() => done(false), ms);
    function done(value) {
      clearTimeout(timer);
      waiters.delete(waiter);
      resolveWait(value);
    }
    waiters.add(waiter);
  });
}

/// Runs one step: `body` returns the detail or throws; bounded by `ms`.
async function step(name, ms, body) {
  try {
    report(name, true, await within(ms, body(), name));
    return true;
  } catch (error) {
    report(name, false, { error: error instanceof Error ? error.message : String(error) });
    return false;
  }
}

function check(cond, message) {
  if (!cond) throw new Error(message);
}

// ---- the wire tap: every message in both directions, in order ---------------------------------

const wire = [];
const waiters = new Set();
function tap(dir, message) {
  wire.push({ dir, message });
  for (const waiter of [...waiters]) waiter();
}

/// A transport in front of the SDK's own that shows the tap every message both ways and
/// changes nothing. (Wrapping the SDK transport's `onmessage` in place would recurse: the
/// Client chains to the handler it finds there.)
class TappedTransport {
  constructor(inner) {
    this.inner = inner;
    inner.onmessage = (message, extra) => {
      tap("in", message);
      this.onmessage?.(message, extra);
    };
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
  }
  start() {
    return this.inner.start();
  }
  send(message, opts) {
    tap("out", message);
    return this.inner.send(message, opts);
  }
  close() {
    return this.inner.close();
  }
  get sessionId() {
    return this.inner.sessionId;
  }
  setProtocolVersion(version) {
    this.inner.setProtocolVersion?.(version);
  }
}

const outgoing = (pred) => wire.filter((w) => w.dir === "out" && pred(w.message)).map((w) => w.message);
const incoming = (pred) => wire.filter((w) => w.dir === "in" && pred(w.message)).map((w) => w.message);

// ---- the client ------------------------------------------------------------------------------

const { target } = options;
// Over HTTP, every exchange the SDK makes (method, headers that matter, status), to show how
// this client uses the transport (GET stream, protocol-version header, DELETE).
const httpExchanges = [];
async function recordingFetch(url, init = {}) {
  const headers = new Headers(init.headers);
  const response = await fetch(url, init);
  httpExchanges.push({
    method: init.method ?? "GET",
    status: response.status,
    content_type: response.headers.get("content-type") ?? undefined,
    protocol_version: headers.get("mcp-protocol-version") ?? undefined,
    last_event_id: headers.get("last-event-id") ?? undefined,
  });
  return response;
}

const sdkTransport = target.url
    ? new StreamableHTTPClientTransport(new URL(target.url), { fetch: recordingFetch })
    : // The whole environment: the server (or bridge) sees what the test gave this script.
      new StdioClientTransport({ command: target.command, args: target.args, env: { ...process.env } });
const transport = new TappedTransport(sdkTransport);

const client = new Client(
  { name: "mcp-rs-ts-sdk-client", version: "1.0.0" },
  { capabilities: { sampling: {}, elicitation: { form: {} } } },
);
const clientErrors = [];
client.onerror = (error) => clientErrors.push(error instanceof Error ? error.message : String(error));

const nonce = `n${process.pid}x${Date.now().toString(36)}`;

// Sampling: answer with a text that names the nonce, so the tool result proves the server got it.
const samplingRequests = [];
client.setRequestHandler(types.CreateMessageRequestSchema, async (request) => {
  samplingRequests.push(request.params);
  return {
    role: "assistant",
    content: { type: "text", text: `sampled answer ${nonce}` },
    model: "mcp-rs-test-model",
    stopReason: "endTurn",
  };
});

// Elicitation: accept with content that satisfies the server's schema (name is required).
const elicitations = [];
const elicitedName = `Ada ${nonce}`;
client.setRequestHandler(types.ElicitRequestSchema, async (request) => {
  elicitations.push(request.params);
  return {
    action: "accept",
    content: DEMO
      ? { answer: elicitedName }
      : { name: elicitedName, check: true, email: "ada@example.com", integer: 7 },
  };
});

const resourceUpdates = [];
client.setNotificationHandler(types.ResourceUpdatedNotificationSchema, (notification) => {
  resourceUpdates.push(notification.params.uri);
});

const textOf = (result) =>
  (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

const NEEDED_TOOLS = DEMO
  ? ["echo", "slow", "model", "ask"]
  : [
      "echo",
      "trigger-long-running-operation",
      "trigger-sampling-request",
      "trigger-elicitation-request",
      "toggle-subscriber-updates",
    ];

async function listAllTools() {
  const names = [];
  let cursor;
  for (let page = 0; page < 100; page++) {
    const result = await client.listTools(cursor ? { cursor } : undefined);
    names.push(...result.tools.map((t) => t.name));
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return names;
}

// ---- the scenario ------------------------------------------------------------------------------

const connected = await step("connect", 20000, async () => {
  await client.connect(transport);
  const init = outgoing((m) => m.method === "initialize")[0];
  const answer = incoming((m) => m.id === init?.id && m.result)[0];
  const caps = client.getServerCapabilities() ?? {};
  check(caps.resources?.subscribe === true, "the server does not offer resources.subscribe");
  return {
    sdk: "@modelcontextprotocol/sdk",
    transport: target.url ? "streamable-http" : "stdio",
    offered_version: init?.params?.protocolVersion,
    negotiated_version: answer?.result?.protocolVersion,
    server: client.getServerVersion(),
    session_id: transport.sessionId,
  };
});

if (connected) {
  await step("list_tools", 10000, async () => {
    let names = await listAllTools();
    // The server registers capability-dependent tools when it sees `initialized`; a bridge may
    // only learn them afterwards and announce them with list_changed: list again once then.
    if (!NEEDED_TOOLS.every((n) => names.includes(n))) {
      const seen = incoming((m) => m.method === "notifications/tools/list_changed").length;
      await waitFor(3000, () => incoming((m) => m.method === "notifications/tools/list_changed").length > seen);
      names = await listAllTools();
    }
    const missing = NEEDED_TOOLS.filter((n) => !names.includes(n));
    check(missing.length === 0, `tools missing: ${missing.join(", ")} (listed: ${names.join(", ")})`);
    return { count: names.length, tools: names };
  });

  await step("progress", 15000, async () => {
    const updates = [];
    const [tool, args] = DEMO
      ? ["slow", { steps: 4, delay_ms: 50 }]
      : ["trigger-long-running-operation", { duration: 1, steps: 4 }];
    const result = await client.callTool(
      { name: tool, arguments: args },
      undefined,
      { onprogress: (p) => updates.push(p), timeout: 12000 },
    );
    const call = outgoing((m) => m.method === "tools/call" && m.params?.name === tool).at(-1);
    const token = call?.params?._meta?.progressToken;
    check(token !== undefined, "the call carried no progressToken");
    // Counted on the wire: SDK 1.32.2 runs notification handlers a microtask later than it
    // settles responses, so when the last progress and the result arrive in one read, the
    // result wins and `onprogress` never sees that progress ("unknown token" on onerror).
    const onWire = incoming((m) => m.method === "notifications/progress" && m.params?.progressToken === token).map((m) => m.params);
    check(onWire.length === 4, `expected 4 progress notifications, got ${onWire.length}: ${JSON.stringify(onWire)}`);
    onWire.forEach((p, i) => {
      check(p.progress === i + 1 && p.total === 4, `progress ${i}: ${JSON.stringify(p)}`);
    });
    check(updates.length >= 1, "onprogress never ran");
    updates.forEach((p, i) => {
      check(p.progress === onWire[i].progress, `onprogress ${i}: ${JSON.stringify(p)} but the wire had ${JSON.stringify(onWire[i])}`);
    });
    const answerAt = wire.findIndex((w) => w.dir === "in" && w.message.id === call.id && "result" in w.message);
    const lastAt = wire.findLastIndex((w) => w.dir === "in" && w.message.method === "notifications/progress" && w.message.params?.progressToken === token);
    check(answerAt > lastAt, "a progress notification came after the result");
    const done = DEMO ? "finished 4 steps" : "Long running operation completed";
    check(textOf(result).includes(done), `result: ${textOf(result)}`);
    return { progress_token: token, notifications: onWire.length, values: onWire.map((p) => p.progress), seen_by_onprogress: updates.length };
  });

  await step("sampling", 15000, async () => {
    const prompt = `say hello ${nonce}`;
    const result = await client.callTool(
      DEMO
        ? { name: "model", arguments: { prompt, max_tokens: 64 } }
        : { name: "trigger-sampling-request", arguments: { prompt, maxTokens: 64 } },
      undefined,
      { timeout: 12000 },
    );
    check(samplingRequests.length === 1, `the sampling handler ran ${samplingRequests.length} times`);
    const asked = samplingRequests[0];
    check(asked.maxTokens === 64, `maxTokens ${asked.maxTokens}`);
    check(JSON.stringify(asked.messages).includes(prompt), `messages: ${JSON.stringify(asked.messages)}`);
    const text = textOf(result);
    check(!result.isError, `tool error: ${text}`);
    check(text.includes(`sampled answer ${nonce}`) && text.includes("mcp-rs-test-model"), `the server did not get the answer: ${text}`);
    return { request: { maxTokens: asked.maxTokens, systemPrompt: asked.systemPrompt }, result_excerpt: text.slice(0, 200) };
  });

  await step("elicitation", 15000, async () => {
    const request = DEMO
      ? { name: "ask", arguments: { question: `who are you? ${nonce}` } }
      : { name: "trigger-elicitation-request", arguments: {} };
    const result = await client.callTool(request, undefined, { timeout: 12000 });
    check(elicitations.length === 1, `the elicitation handler ran ${elicitations.length} times`);
    const asked = elicitations[0];
    const field = DEMO ? "answer" : "name";
    check(asked.requestedSchema?.properties?.[field] !== undefined, `schema: ${JSON.stringify(asked.requestedSchema)}`);
    const text = textOf(result);
    check(!result.isError, `tool error: ${text}`);
    if (DEMO) {
      check(text.includes(`The user said: ${elicitedName}`), `the server did not get the answer: ${text}`);
    } else {
      check(text.includes(`- Name: ${elicitedName}`) && text.includes("- Favorite Integer: 7"), `the server did not get the answer: ${text}`);
    }
    return { message: asked.message, fields: Object.keys(asked.requestedSchema.properties).length, accepted_name: elicitedName };
  });

  await step("subscribe", 20000, async () => {
    const { resources } = await client.listResources();
    const uri = DEMO
      ? resources.find((r) => r.uri === "demo://clock")?.uri
      : resources.find((r) => r.uri.startsWith("demo://resource/static/"))?.uri ?? resources[0]?.uri;
    check(uri, `the server lists no resource to subscribe to: ${JSON.stringify(resources.map((r) => r.uri))}`);
    await client.subscribeResource({ uri });
    // The demo's clock changes every second while subscribed: nothing to switch on.
    const toggled = DEMO ? "Started" : textOf(await client.callTool({ name: "toggle-subscriber-updates", arguments: {} }));
    check(toggled.startsWith("Started"), `toggle-subscriber-updates: ${toggled}`);
    const started = Date.now();
    // The server sends one update at once and then every 5 s.
    const got = await waitFor(12000, () => resourceUpdates.includes(uri));
    const waitedMs = Date.now() - started;
    // Leave the server as we found it: updates off, subscription gone.
    const stopped = DEMO ? "Stopped" : textOf(await client.callTool({ name: "toggle-subscriber-updates", arguments: {} }));
    await client.unsubscribeResource({ uri });
    check(got, `no notifications/resources/updated for ${uri} within 12 s (updates: ${JSON.stringify(resourceUpdates)})`);
    check(stopped.startsWith("Stopped"), `second toggle-subscriber-updates: ${stopped}`);
    return { uri, updates: resourceUpdates.filter((u) => u === uri).length, waited_ms: waitedMs };
  });

  await step("cancel", 20000, async () => {
    const duration = 3;
    const steps = 6;
    const controller = new AbortController();
    const reason = `mcp-rs client test: cancelled after the first progress (${nonce})`;
    let firstProgress = false;
    const started = Date.now();
    const delayMs = (duration * 1000) / steps;
    const call = client.callTool(
      DEMO
        ? { name: "slow", arguments: { steps, delay_ms: delayMs } }
        : { name: "trigger-long-running-operation", arguments: { duration, steps } },
      undefined,
      {
        signal: controller.signal,
        timeout: 15000,
        onprogress: () => {
          if (!firstProgress) {
            firstProgress = true;
            controller.abort(reason);
          }
        },
      },
    );
    let outcome;
    try {
      const result = await within(10000, call, "the cancelled call");
      outcome = { resolved: textOf(result) };
    } catch (error) {
      outcome = { rejected: error instanceof Error ? error.message : String(error) };
    }
    check(firstProgress, "no progress arrived before the call ended");
    check(outcome.rejected !== undefined, `the call was not cancelled: ${JSON.stringify(outcome)}`);
    check(outcome.rejected.includes(reason), `the call ended otherwise: ${outcome.rejected}`);
    const request = outgoing(
      (m) => m.method === "tools/call" && (DEMO ? m.params?.arguments?.delay_ms === delayMs : m.params?.arguments?.duration === duration),
    ).at(-1);
    const cancelled = outgoing((m) => m.method === "notifications/cancelled" && m.params?.requestId === request?.id);
    check(cancelled.length === 1, `notifications/cancelled for request ${request?.id} sent ${cancelled.length} times`);
    const token = request.params?._meta?.progressToken;
    // The server keeps running the handler and drops its answer: wait until its last progress
    // (or, should something on the way drop progress for a cancelled call, until the handler
    // must have ended), then a round trip behind it.
    const lastProgress = () =>
      incoming((m) => m.method === "notifications/progress" && m.params?.progressToken === token && m.params?.progress === steps).length > 0;
    const sawLast = await waitFor(Math.max(0, started + (duration + 2) * 1000 - Date.now()), lastProgress);
    const echoArgs = DEMO ? { text: nonce } : { message: nonce };
    const echo = textOf(await client.callTool({ name: "echo", arguments: echoArgs }, undefined, { timeout: 5000 }));
    check(echo.includes(nonce), `echo after cancel: ${echo}`);
    const late = incoming((m) => m.id === request.id && ("result" in m || "error" in m));
    check(late.length === 0, `the server answered the cancelled request: ${JSON.stringify(late)}`);
    return {
      request_id: request.id,
      cancelled_notification: cancelled[0].params,
      call_outcome: outcome.rejected,
      server_finished_handler: sawLast,
      progress_after_cancel: incoming((m) => m.method === "notifications/progress" && m.params?.progressToken === token).length - 1,
      late_answer: false,
    };
  });
}

await step("close", 10000, async () => {
  const detail = {};
  if (target.url && transport.sessionId) {
    // End the HTTP session (DELETE), as a host that is done with a server should.
    await sdkTransport.terminateSession();
    detail.session_terminated = true;
  }
  await client.close();
  if (target.url) {
    const count = (method) => httpExchanges.filter((e) => e.method === method).length;
    detail.http = {
      posts: count("POST"),
      gets: httpExchanges.filter((e) => e.method === "GET").map(({ status, content_type, last_event_id }) => ({ status, content_type, last_event_id })),
      deletes: count("DELETE"),
      protocol_version_headers: [...new Set(httpExchanges.map((e) => e.protocol_version ?? null))],
    };
  }
  detail.client_errors = clientErrors;
  return detail;
});

process.exit(failures === 0 ? 0 : 1);
