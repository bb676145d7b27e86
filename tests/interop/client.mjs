// A small ACP v2 client built on the official TypeScript SDK. It starts the Python agent given on the
// command line, drives it, and prints one JSON report on stdout for tests/runtime/test_interop.py to check.
// Usage: node client.mjs <sdk> <python> <agent script> <generated package> [flag...]
//   <sdk>: as for agent.mjs (a package alias, or an entry point such as acp-sdk-2-4/experimental/v2/unstable)
//   states: also send a prompt "states", on which the agent streams nested idle states (alpha.8)
//   --updates=FILE: also open a session with `mcpServers: null`, and send a prompt "updates", on which the
//          agent streams every update of FILE and an idle error with string data (the flag goes to the agent)
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

const [sdk, python, script, pkg, ...flags] = process.argv.slice(2);
const v2 = await import(sdk.includes("/") ? sdk : `${sdk}/experimental/v2`);
const states = flags.includes("states") ? "states" : undefined;
const updates = flags.some((f) => f.startsWith("--updates="));

const child = spawn(python, [script, pkg, ...flags], { stdio: ["pipe", "pipe", "inherit"] });
const report = { updates: [], elicitations: [], permissions: [] };

const app = v2
  .client({ name: "interop-client" })
  .onRequest(v2.methods.client.session.requestPermission, async ({ params }) => {
    report.permissions.push(params);
    return { outcome: { outcome: "selected", optionId: params.options[0].optionId } };
  })
  .onRequest(v2.methods.client.elicitation.create, async ({ params }) => {
    report.elicitations.push(params);
    return params.mode === "form" ? { action: "accept", content: { name: "Ada" } } : { action: "accept" };
  })
  .onNotification(v2.methods.client.session.update, async ({ params }) => {
    report.updates.push(params.update);
  });

const stream = v2.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
try {
  await app.connectWith(stream, async (agent) => {
    report.initialize = await agent.request(v2.methods.agent.initialize, {
      protocolVersion: v2.PROTOCOL_VERSION,
      info: { name: "ts-interop-client", version: "1.0.0" },
      capabilities: { elicitation: { form: {}, url: {} } },
    });
    const session = await agent.request(v2.methods.agent.session.new, { cwd: "/workspace" });
    report.sessionId = session.sessionId;
    if (updates) {
      // what the TypeScript SDK writes for a null list: the agent must read it as the empty list
      report.nullServers = await agent.request(v2.methods.agent.session.new, { cwd: "/null", mcpServers: null });
    }
    report.prompt = await agent.request(v2.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "hello" }],
    });
    if (updates) {
      report.updatesPrompt = await agent.request(v2.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: "updates" }],
      });
    }
    if (states === "states") {
      report.states = await agent.request(v2.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: "states" }],
      });
    }
    // $/cancel_request: abort a prompt the agent is still working on
    const controller = new AbortController();
    const waiting = agent.request(
      v2.methods.agent.session.prompt,
      { sessionId: session.sessionId, prompt: [{ type: "text", text: "wait" }] },
      { cancellationSignal: controller.signal },
    );
    setTimeout(() => controller.abort(), 300);
    try {
      report.cancelled = { result: await waiting };
    } catch (error) {
      report.cancelled = { code: error.code, message: error.message };
    }
    // the connection is still usable after the cancellation
    report.afterCancel = await agent.request(v2.methods.agent.session.new, { cwd: "/again" });
  });
} catch (error) {
  report.error = String(error?.stack ?? error);
}
child.stdin.end();
process.stdout.write(JSON.stringify(report) + "\n");
