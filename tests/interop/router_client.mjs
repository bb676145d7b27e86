// An ACP client built on the official TypeScript SDK (1.8.0: v1 in its main export, v2 in
// experimental/v2). It starts the Python agent given on the command line (an AgentProtocolRouter),
// runs one session in the protocol version asked for, and prints one JSON report on stdout for
// tests/runtime/test_router_interop.py to check.
// Usage: node router_client.mjs <sdk package alias> <v1|v2> <python> <agent script> [agent args...]
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

const [sdk, version, python, script, ...agentArgs] = process.argv.slice(2);
const acp = await import(version === "v2" ? `${sdk}/experimental/v2` : sdk);

const child = spawn(python, [script, ...agentArgs], { stdio: ["pipe", "pipe", "inherit"] });
const report = { version, updates: [] };

const app = acp
  .client({ name: `interop-${version}-client` })
  .onNotification(acp.methods.client.session.update, async ({ params }) => {
    report.updates.push(params.update);
  });

const initialize =
  version === "v2"
    ? {
        protocolVersion: acp.PROTOCOL_VERSION,
        info: { name: "ts-v2-client", version: "1.8.0" },
        capabilities: {},
      }
    : {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientInfo: { name: "ts-v1-client", version: "1.8.0" },
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      };

const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
try {
  await app.connectWith(stream, async (agent) => {
    report.sdkProtocolVersion = acp.PROTOCOL_VERSION;
    report.initialize = await agent.request(acp.methods.agent.initialize, initialize);
    const session = await agent.request(
      acp.methods.agent.session.new,
      version === "v2" ? { cwd: "/workspace" } : { cwd: "/workspace", mcpServers: [] },
    );
    report.sessionId = session.sessionId;
    report.prompt = await agent.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "hello from typescript" }],
    });
    // updates are independent traffic: give the last ones a moment to arrive
    await new Promise((resolve) => setTimeout(resolve, 200));
  });
} catch (error) {
  report.error = String(error?.stack ?? error);
}
child.stdin.end();
process.stdout.write(JSON.stringify(report) + "\n");
