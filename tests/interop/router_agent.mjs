// An ACP agent on the official TypeScript SDK's AgentProtocolRouter (1.8.0), serving v1 and/or v2 on
// stdio; run by tests/runtime/test_router_interop.py. Each version's agent answers initialize with what
// it received (in _meta), and streams the prompt's words back as agent message chunks.
// Usage: node router_agent.mjs <sdk package alias> [versions, default "v1,v2"]
import { Readable, Writable } from "node:stream";

const sdk = process.argv[2];
const versions = (process.argv[3] ?? "v1,v2").split(",");
const v1 = await import(sdk);
const v2 = await import(`${sdk}/experimental/v2`);

function words(prompt) {
  const text = prompt.map((block) => block.text ?? "").join(" ");
  return text.split(/\s+/).filter(Boolean).map((word, index) => (index === 0 ? word : ` ${word}`));
}

const v1Agent = v1
  .agent({ name: "ts-router-v1" })
  .onRequest(v1.methods.agent.initialize, async ({ params }) => ({
    protocolVersion: v1.PROTOCOL_VERSION,
    agentInfo: { name: "ts-router-v1", version: "1.8.0" },
    agentCapabilities: { loadSession: false },
    _meta: { received: params },
  }))
  .onRequest(v1.methods.agent.session.new, async ({ params }) => ({ sessionId: `ts-v1-${params.cwd}` }))
  .onRequest(v1.methods.agent.session.prompt, async ({ params, client }) => {
    for (const word of words(params.prompt)) {
      await client.notify(v1.methods.client.session.update, {
        sessionId: params.sessionId,
        update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: word } },
      });
    }
    return { stopReason: "end_turn" };
  });

const v2Agent = v2
  .agent({ name: "ts-router-v2" })
  .onRequest(v2.methods.agent.initialize, async ({ params }) => ({
    protocolVersion: v2.PROTOCOL_VERSION,
    info: { name: "ts-router-v2", version: "1.8.0" },
    capabilities: { session: {} },
    _meta: { received: params },
  }))
  .onRequest(v2.methods.agent.session.new, async ({ params }) => ({ sessionId: `ts-v2-${params.cwd}` }))
  .onRequest(v2.methods.agent.session.prompt, async ({ params, client }) => {
    const messageId = "user-1";
    const sessionId = params.sessionId;
    for (const block of params.prompt) {
      await client.notify(v2.methods.client.session.update, {
        sessionId,
        update: { sessionUpdate: "user_message_chunk", messageId, content: block },
      });
    }
    for (const word of words(params.prompt)) {
      await client.notify(v2.methods.client.session.update, {
        sessionId,
        update: { sessionUpdate: "agent_message_chunk", messageId: "reply", content: { type: "text", text: word } },
      });
    }
    return { messageId };
  });

let router = v2.agentProtocolRouter();
if (versions.includes("v1")) router = router.withV1(v1Agent);
if (versions.includes("v2")) router = router.withV2(v2Agent);
router.connect(v1.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
