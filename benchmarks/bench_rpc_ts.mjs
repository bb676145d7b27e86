// The TypeScript SDK's own agent/client pair, in one process over in-memory byte streams (ndJsonStream on
// both ends, so messages are serialised, parsed and validated as over stdio). Run by benchmarks/bench_rpc.py.
// Usage: node bench_rpc_ts.mjs <sdk package alias> <round trips> <notifications>
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const [sdk, roundTrips, notifications] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const require = createRequire(new URL("../tests/interop/package.json", import.meta.url));
const entry = require.resolve(`${sdk}/experimental/v2`);
const v2 = await import(pathToFileURL(entry).href);

function bytePipe() {
  const pipe = new TransformStream();
  return { readable: pipe.readable, writable: pipe.writable };
}

const toAgent = bytePipe();
const toClient = bytePipe();
let received = 0;
let allReceived;
const done = new Promise((resolve) => (allReceived = resolve));

const agent = v2
  .agent({ name: "bench-agent" })
  .onRequest(v2.methods.agent.initialize, async () => ({
    protocolVersion: v2.PROTOCOL_VERSION,
    info: { name: "bench-agent", version: "1" },
    capabilities: { session: {} },
  }))
  .onRequest(v2.methods.agent.session.new, async () => ({ sessionId: "s-1" }))
  .onRequest(v2.methods.agent.session.prompt, async ({ client, params }) => {
    const update = { sessionUpdate: "agent_message_chunk", messageId: "m", content: { type: "text", text: "chunk" } };
    for (let i = 0; i < notifications; i++) {
      await client.notify(v2.methods.client.session.update, { sessionId: params.sessionId, update });
    }
    return { messageId: "u-1" };
  });
agent.connect(v2.ndJsonStream(toClient.writable, toAgent.readable));

const client = v2.client({ name: "bench-client" }).onNotification(v2.methods.client.session.update, async () => {
  received += 1;
  if (received === notifications) allReceived();
});

const result = await client.connectWith(v2.ndJsonStream(toAgent.writable, toClient.readable), async (ctx) => {
  await ctx.request(v2.methods.agent.initialize, {
    protocolVersion: v2.PROTOCOL_VERSION,
    info: { name: "bench-client", version: "1" },
  });
  for (let i = 0; i < 200; i++) await ctx.request(v2.methods.agent.session.new, { cwd: "/w" }); // warm-up
  let started = process.hrtime.bigint();
  for (let i = 0; i < roundTrips; i++) await ctx.request(v2.methods.agent.session.new, { cwd: "/w" });
  const roundTripSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  started = process.hrtime.bigint();
  await ctx.request(v2.methods.agent.session.prompt, { sessionId: "s-1", prompt: [{ type: "text", text: "go" }] });
  await done;
  const streamSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { roundTripSeconds, streamSeconds };
});
process.stdout.write(JSON.stringify(result) + "\n");
process.exit(0);
