// An ACP client on the official TypeScript SDK 2.4.0's remote transports (createHttpStream, createWebSocketStream
// with ws), run by tests/interop/test_remote.py against the Python ASGI app. It initializes, creates a session,
// prompts (answering the agent's permission request with "allow"), waits for the end of the turn, then prompts
// "count 100000" and cancels it after the first reply chunk; it prints one JSON report on stdout.
// Usage: node remote_client.mjs <sdk package alias> <v1|v2> <http|ws> <url>
import { createRequire } from "node:module";

const [sdk, version, transport, url] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const acp = await import(version === "v2" ? `${sdk}/experimental/v2` : sdk);
const report = { version, transport, updates: [], permissions: [] };
let onUpdate = () => {};

const app = acp
  .client({ name: `ts-remote-${version}-client` })
  .onNotification(acp.methods.client.session.update, async ({ params }) => {
    report.updates.push(params.update);
    onUpdate(params.update);
  })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
    report.permissions.push(params);
    return { outcome: { outcome: "selected", optionId: "allow" } };
  });

function waitFor(predicate) {
  return new Promise((resolve) => {
    onUpdate = (update) => {
      if (predicate(update)) resolve(update);
    };
  });
}

const idle = (update) => update.sessionUpdate === "state_update" && update.state === "idle";
const chunk = (update) => update.sessionUpdate === "agent_message_chunk";

let stream;
if (transport === "ws") {
  const { createWebSocketStream } = await import(`${sdk}/experimental/ws-client`);
  stream = createWebSocketStream(url, { WebSocket: require("ws").WebSocket });
} else {
  const { createHttpStream } = await import(`${sdk}/experimental/http-client`);
  stream = createHttpStream(url);
}

const initialize =
  version === "v2"
    ? { protocolVersion: acp.PROTOCOL_VERSION, info: { name: "ts-remote-client", version: "2.4.0" } }
    : { protocolVersion: acp.PROTOCOL_VERSION, clientInfo: { name: "ts-remote-client", version: "2.4.0" } };
const newSession = version === "v2" ? { cwd: "/" } : { cwd: "/", mcpServers: [] };

try {
  await app.connectWith(stream, async (agent) => {
    report.initialize = await agent.request(acp.methods.agent.initialize, initialize);
    const { sessionId } = await agent.request(acp.methods.agent.session.new, newSession);
    report.sessionId = sessionId;
    const prompt = (text) => agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
    if (version === "v2") {
      const ended = waitFor(idle);
      report.prompt = await prompt("hello from typescript");
      report.end = await ended;
      const first = waitFor(chunk);
      const cancelledTurn = prompt("count 100000");
      await first;
      const ended2 = waitFor(idle);
      await agent.notify(acp.methods.agent.session.cancel, { sessionId });
      await cancelledTurn;
      report.cancelled = await ended2;
    } else {
      report.prompt = await prompt("hello from typescript");
      const first = waitFor(chunk);
      const cancelledTurn = prompt("count 100000");
      await first;
      await agent.notify(acp.methods.agent.session.cancel, { sessionId });
      report.cancelled = await cancelledTurn;
    }
  });
} catch (error) {
  report.error = String(error?.stack ?? error);
}
process.stdout.write(JSON.stringify({ ...report, updates: report.updates.length, firstUpdates: report.updates.slice(0, 6) }) + "\n");
process.exit(0);
