// The TypeScript side's agent of `make bench-rpc` (the twin of bench_rpc_agent.py): over stdio, or the SDK's
// AcpServer on node http + ws at 127.0.0.1 on a free port (prints "listening PORT").
// session/new answers at once; session/prompt with the text N streams N agent message chunks, then answers; with
// "N stamp" each chunk's text is the time it was sent (ms since the epoch: bench_load.py's latency).
// Usage: node bench_rpc_agent.mjs <sdk package alias> <stdio|serve>
import { createRequire } from "node:module";
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const [sdk, mode] = process.argv.slice(2);
const require = createRequire(new URL("../tests/interop/package.json", import.meta.url));
const load = async (path) => import(pathToFileURL(require.resolve(`${sdk}/${path}`)).href);
const v2 = await load("experimental/v2");

const agent = () =>
  v2
    .agent({ name: "bench-agent" })
    .onRequest(v2.methods.agent.initialize, async () => ({
      protocolVersion: v2.PROTOCOL_VERSION,
      info: { name: "bench-agent", version: "1" },
      capabilities: { session: {} },
    }))
    .onRequest(v2.methods.agent.session.new, async () => ({ sessionId: "s-1" }))
    .onRequest(v2.methods.agent.session.prompt, async ({ client, params }) => {
      const update = { sessionUpdate: "agent_message_chunk", messageId: "m", content: { type: "text", text: "chunk" } };
      const [count, stamp] = String(params.prompt[0]?.text ?? "0").split(" ");
      const now = () => performance.timeOrigin + performance.now();
      for (let i = 0; i < Number(count); i++) {
        const sent = stamp === "stamp" ? { ...update, content: { type: "text", text: now().toFixed(3) } } : update;
        await client.notify(v2.methods.client.session.update, { sessionId: params.sessionId, update: sent });
      }
      return { messageId: "u-1" };
    });

if (mode === "stdio") {
  agent().connect(v2.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
} else {
  const { AcpServer } = await load("experimental/server");
  const { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } = await load("experimental/node");
  const { WebSocketServer } = require("ws");
  const server = new AcpServer({ createAgent: agent });
  const http = createServer(createNodeHttpHandler(server));
  http.on("upgrade", createNodeWebSocketUpgradeHandler(server, new WebSocketServer({ noServer: true })));
  http.listen(0, "127.0.0.1", () => process.stdout.write(`listening ${http.address().port}\n`));
  process.stdin.on("end", async () => {
    await server.close();
    process.exit(0);
  });
  process.stdin.resume();
}
