// A 2026-07-28 MCP server on npm `@modelcontextprotocol/server` 2.x, for the era interop tests.
//
// usage: node ts2_server.cjs stdio
//        node ts2_server.cjs http PORT      (createMcpHandler on 127.0.0.1:PORT/mcp)
//
// The SDK is loaded from MCP_PEER_TS2_NODE_MODULES (set by scripts/install-peers).
// Tools: `add {a, b}` (the sum as text), `echo {message}`, and `confirm {}`, which answers
// `input_required` with an elicitation until the retry carries the answer, then returns
// `confirmed: <name>`. For `subscriptions/listen`: `touch {uri}` publishes
// `notifications/resources/updated` for `uri` and `change_tools {}` publishes
// `notifications/tools/list_changed` (over stdio through the pinned instance, which the SDK's
// listen router stamps onto the open listens; over HTTP through the handler's `notify`).
'use strict';

const path = require('node:path');
const { createRequire } = require('node:module');

const modules = process.env.MCP_PEER_TS2_NODE_MODULES;
if (!modules) {
    console.error('ts2_server: MCP_PEER_TS2_NODE_MODULES is not set');
    process.exit(2);
}
const peerRequire = createRequire(path.join(modules, 'noop.js'));
const sdk = peerRequire('@modelcontextprotocol/server');
const { z } = peerRequire('zod');

// The HTTP handler's publish facade, once created (stdio publishes through the instance).
let httpNotify = null;

function build() {
    const server = new sdk.McpServer(
        { name: 'ts2-peer', version: '1.0.0' },
        { capabilities: { tools: { listChanged: true }, resources: { subscribe: true } } }
    );
    server.registerTool(
        'touch',
        { description: 'Publishes an update of a resource', inputSchema: z.object({ uri: z.string() }) },
        async ({ uri }) => {
            if (httpNotify) httpNotify.resourceUpdated(uri);
            else await server.server.sendResourceUpdated({ uri });
            return { content: [{ type: 'text', text: 'touched' }] };
        }
    );
    server.registerTool(
        'change_tools',
        { description: 'Publishes a tools list change', inputSchema: z.object({}) },
        async () => {
            if (httpNotify) httpNotify.toolsChanged();
            else server.sendToolListChanged();
            return { content: [{ type: 'text', text: 'changed' }] };
        }
    );
    server.registerTool(
        'add',
        { description: 'Adds two numbers', inputSchema: z.object({ a: z.number(), b: z.number() }) },
        async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] })
    );
    server.registerTool(
        'echo',
        { description: 'Returns the message', inputSchema: z.object({ message: z.string() }) },
        async ({ message }) => ({ content: [{ type: 'text', text: message }] })
    );
    const nameSchema = z.object({ name: z.string() });
    server.registerTool(
        'confirm',
        { description: 'Asks the client for a name (multi-round)', inputSchema: z.object({}) },
        async (_args, ctx) => {
            const answer = sdk.acceptedContent(ctx.mcpReq.inputResponses, 'who', nameSchema);
            if (!answer) {
                return sdk.inputRequired({
                    inputRequests: {
                        who: sdk.inputRequired.elicit({ message: 'Who are you?', requestedSchema: nameSchema })
                    }
                });
            }
            return { content: [{ type: 'text', text: `confirmed: ${answer.name}` }] };
        }
    );
    return server;
}

const mode = process.argv[2] || 'stdio';
if (mode === 'stdio') {
    peerRequire('@modelcontextprotocol/server/stdio').serveStdio(build);
} else if (mode === 'http') {
    const port = Number(process.argv[3]);
    const http = require('node:http');
    const { toNodeHandler } = peerRequire('@modelcontextprotocol/node');
    const handler = sdk.createMcpHandler(build);
    httpNotify = handler.notify;
    const handle = toNodeHandler(handler);
    http.createServer((req, res) => {
        if (!req.url || !req.url.startsWith('/mcp')) {
            res.writeHead(404).end();
            return;
        }
        handle(req, res);
    }).listen(port, '127.0.0.1');
} else {
    console.error(`ts2_server: unknown mode ${mode}`);
    process.exit(2);
}
