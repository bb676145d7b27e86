// The official TypeScript SDK's AcpServer (2.4.0) on node http + ws, serving its AgentProtocolRouter (v1 and v2)
// on Streamable HTTP and WebSocket at /acp; run by tests/interop/test_remote.py and benchmarks/bench_rpc.py.
// Each prompt asks the client's permission, then streams the prompt's words back (`count N`: the numbers 1..N)
// and ends the turn (v2: an idle state update; v1: the prompt response); session/cancel ends it early.
// Prints "listening <port>" once it accepts connections.
// Usage: node remote_agent.mjs <sdk package alias> [port, default 0: any free one]
import { createServer } from "node:http";
import { createRequire } from "node:module";

const [sdk, port] = [process.argv[2], Number(process.argv[3] ?? 0)];
const require = createRequire(import.meta.url);
const v1 = await import(sdk);
const v2 = await import(`${sdk}/experimental/v2`);
const { AcpServer } = await import(`${sdk}/experimental/server`);
const { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } = await import(`${sdk}/experimental/node`);
const { WebSocketServer } = require("ws");

function replyWords(prompt) {
  const words = prompt.map((block) => block.text ?? "").join(" ").split(/\s+/).filter(Boolean);
  if (words.length === 2 && words[0] === "count" && /^\d+$/.test(words[1])) {
    return Array.from({ length: Number(words[1]) }, (_, index) => String(index + 1));
  }
  return words;
}

const OPTIONS = [
  { optionId: "allow", name: "Allow", kind: "allow_once" },
  { optionId: "reject", name: "Reject", kind: "reject_once" },
];

function makeV2() {
  const cancelled = new Set();
  let sessions = 0;
  return v2
    .agent({ name: "ts-remote-v2" })
    .onRequest(v2.methods.agent.initialize, async () => ({
      protocolVersion: v2.PROTOCOL_VERSION,
      info: { name: "ts-remote-v2", version: "2.4.0" },
      capabilities: { session: {} },
    }))
    .onRequest(v2.methods.agent.session.new, async () => ({ sessionId: `ts-v2-${++sessions}` }))
    .onNotification(v2.methods.agent.session.cancel, async ({ params }) => {
      cancelled.add(params.sessionId);
    })
    .onRequest(v2.methods.agent.session.prompt, async ({ params, client }) => {
      const { sessionId } = params;
      const messageId = `user-${Date.now()}`;
      const notify = (update) => client.notify(v2.methods.client.session.update, { sessionId, update });
      cancelled.delete(sessionId);
      for (const block of params.prompt) await notify({ sessionUpdate: "user_message_chunk", messageId, content: block });
      void (async () => {
        await notify({ sessionUpdate: "state_update", state: "running" });
        const decision = await client.request(v2.methods.client.session.requestPermission, {
          sessionId,
          title: "Echo the prompt back?",
          options: OPTIONS,
        });
        const allowed = decision.outcome.outcome === "selected" && decision.outcome.optionId === "allow";
        const words = allowed ? replyWords(params.prompt) : ["(not", "allowed)"];
        for (const [index, word] of words.entries()) {
          if (cancelled.has(sessionId)) break;
          await notify({
            sessionUpdate: "agent_message_chunk",
            messageId: `reply-${messageId}`,
            content: { type: "text", text: index === 0 ? word : ` ${word}` },
          });
          await new Promise((resolve) => setImmediate(resolve));
        }
        const stopReason = cancelled.has(sessionId) ? "cancelled" : "end_turn";
        await notify({ sessionUpdate: "state_update", state: "idle", stopReason });
      })().catch((error) => console.error("turn failed:", error));
      return { messageId };
    });
}

function makeV1() {
  const cancelled = new Set();
  let sessions = 0;
  return v1
    .agent({ name: "ts-remote-v1" })
    .onRequest(v1.methods.agent.initialize, async () => ({
      protocolVersion: v1.PROTOCOL_VERSION,
      agentInfo: { name: "ts-remote-v1", version: "2.4.0" },
      agentCapabilities: { loadSession: false },
    }))
    .onRequest(v1.methods.agent.session.new, async () => ({ sessionId: `ts-v1-${++sessions}` }))
    .onNotification(v1.methods.agent.session.cancel, async ({ params }) => {
      cancelled.add(params.sessionId);
    })
    .onRequest(v1.methods.agent.session.prompt, async ({ params, client }) => {
      const { sessionId } = params;
      cancelled.delete(sessionId);
      const decision = await client.request(v1.methods.client.session.requestPermission, {
        sessionId,
        toolCall: { toolCallId: "echo", title: "Echo the prompt back?" },
        options: OPTIONS,
      });
      const allowed = decision.outcome.outcome === "selected" && decision.outcome.optionId === "allow";
      for (const [index, word] of (allowed ? replyWords(params.prompt) : ["(not", "allowed)"]).entries()) {
        if (cancelled.has(sessionId)) return { stopReason: "cancelled" };
        await client.notify(v1.methods.client.session.update, {
          sessionId,
          update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: index === 0 ? word : ` ${word}` } },
        });
        await new Promise((resolve) => setImmediate(resolve));
      }
      return { stopReason: cancelled.has(sessionId) ? "cancelled" : "end_turn" };
    });
}

const server = new AcpServer({ createAgent: () => v2.agentProtocolRouter().withV1(makeV1()).withV2(makeV2()) });
const http = createServer(createNodeHttpHandler(server));
const sockets = new WebSocketServer({ noServer: true });
http.on("upgrade", createNodeWebSocketUpgradeHandler(server, sockets));
http.listen(port, "127.0.0.1", () => {
  process.stdout.write(`listening ${http.address().port}\n`);
});
const stop = async () => {
  await server.close();
  http.close();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.stdin.on("end", stop);
process.stdin.resume();
