// A small ACP v2 agent built on the official TypeScript SDK, run over stdio by tests/runtime/test_interop.py.
// Usage: node agent.mjs <sdk> [--updates=FILE]
//   <sdk>: a package alias of package.json (acp-sdk-alpha5, acp-sdk-alpha7, acp-sdk-1-8: its experimental/v2
//          entry point), or an entry point itself (acp-sdk-2-4/experimental/v2, .../experimental/v2/unstable)
//   --updates=FILE: a JSON list of session updates; the prompt "updates" streams each of them, then an idle
//          state whose error.data is a string. It also advertises a terminal auth method with `args: null`.
import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";

const [sdk, ...flags] = process.argv.slice(2);
const v2 = await import(sdk.includes("/") ? sdk : `${sdk}/experimental/v2`);
const updatesFile = flags.find((f) => f.startsWith("--updates="))?.slice("--updates=".length);
const everyUpdate = updatesFile ? JSON.parse(readFileSync(updatesFile, "utf8")) : null;

let cancelledPrompts = 0;

function respondAfter(ms, signal) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
}

const app = v2
  .agent({ name: "interop-agent" })
  .onRequest(v2.methods.agent.initialize, async () => ({
    protocolVersion: v2.PROTOCOL_VERSION,
    info: { name: "ts-interop-agent", version: "1.0.0" },
    capabilities: { session: {} },
    // the TypeScript SDK writes `args: null` as it is (x-deserialize-default-on-null reads it as [])
    ...(everyUpdate ? { authMethods: [{ type: "terminal", methodId: "login", name: "Log in", args: null }] } : {}),
  }))
  .onRequest(v2.methods.agent.session.new, async ({ params }) => ({
    sessionId: `session-for-${params.cwd}`,
    _meta: { received: params },
  }))
  .onRequest(v2.methods.agent.session.prompt, async ({ params, client, signal }) => {
    const text = params.prompt.map((block) => block.text ?? "").join("");
    if (text === "wait") {
      // a long turn: the client cancels it with $/cancel_request
      try {
        await respondAfter(30000, signal);
      } catch (reason) {
        cancelledPrompts += 1;
        throw reason;
      }
    }
    const messageId = `user-${text}`;
    const sessionId = params.sessionId;
    const update = (u) => client.notify(v2.methods.client.session.update, { sessionId, update: u });
    if (text === "updates" && everyUpdate) {
      for (const u of everyUpdate) await update(u);
      await update({
        sessionUpdate: "state_update",
        state: "idle",
        stopReason: "error",
        error: { code: -32603, message: "model unavailable", data: "quota exceeded" },
      });
      return { messageId };
    }
    if (text === "states") {
      // 2.0.0-alpha.8 and later: idle states told apart by their stop reason, three levels down
      const idle = (extra) => update({ sessionUpdate: "state_update", state: "idle", ...extra });
      const running = () => update({ sessionUpdate: "state_update", state: "running" });
      await running();
      await idle({ stopReason: "error", error: { code: -32603, message: "model unavailable" } });
      await running();
      await idle({ stopReason: "_vendor/paused", reason: "quota" });
      await running();
      await idle({});
      return { messageId };
    }
    for (const block of params.prompt) {
      await update({ sessionUpdate: "user_message_chunk", messageId, content: block });
    }
    for (const word of ["Hello", " from", " TypeScript"]) {
      await update({ sessionUpdate: "agent_message_chunk", messageId: "agent-1", content: { type: "text", text: word } });
    }
    await update({ sessionUpdate: "tool_call_update", toolCallId: "tool-1", title: "Read file", kind: "read", status: "in_progress" });
    await update({ sessionUpdate: "tool_call_update", toolCallId: "tool-1", status: "completed", title: null });
    return { messageId };
  })
  .onRequest(v2.methods.agent.session.setConfigOption, async ({ params }) => {
    return { configOptions: [], _meta: { received: params } };
  })
  .onRequest("_interop/echo", (params) => params, async ({ params }) => ({
    echoed: params,
    sdk,
    cancelledPrompts,
  }));

app.connect(v2.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
