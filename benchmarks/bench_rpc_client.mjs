// The TypeScript side's client of `make bench-rpc`: round trips (session/new) and N streamed updates, over
// stdio (it spawns the agent command) or the SDK's createHttpStream / createWebSocketStream (ws).
// Prints {"roundTripSeconds", "streamSeconds", "roundTripP50", "roundTripP99"} (the last two in µs) as one JSON line.
// Usage: node bench_rpc_client.mjs <sdk alias> <stdio|http|ws> <round trips> <notifications> <url | command...>
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const [sdk, transport, roundTrips, notifications, ...target] = process.argv.slice(2);
const require = createRequire(new URL("../tests/interop/package.json", import.meta.url));
const load = async (path) => import(pathToFileURL(require.resolve(`${sdk}/${path}`)).href);
const v2 = await load("experimental/v2");

let stream;
let child;
if (transport === "stdio") {
  child = spawn(target[0], target.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  stream = v2.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
} else if (transport === "ws") {
  const { createWebSocketStream } = await load("experimental/ws-client");
  stream = createWebSocketStream(target[0], { WebSocket: require("ws").WebSocket });
} else {
  const { createHttpStream } = await load("experimental/http-client");
  stream = createHttpStream(target[0]);
}

let received = 0;
let allReceived;
const done = new Promise((resolve) => (allReceived = resolve));
const client = v2.client({ name: "bench-client" }).onNotification(v2.methods.client.session.update, async () => {
  received += 1;
  if (received === Number(notifications)) allReceived();
});

const result = await client.connectWith(stream, async (ctx) => {
  await ctx.request(v2.methods.agent.initialize, { protocolVersion: v2.PROTOCOL_VERSION, info: { name: "bench-client", version: "1" } });
  for (let i = 0; i < 200; i++) await ctx.request(v2.methods.agent.session.new, { cwd: "/w" }); // warm-up
  const calls = new Float64Array(Number(roundTrips));
  let started = process.hrtime.bigint();
  for (let i = 0; i < Number(roundTrips); i++) {
    const call = process.hrtime.bigint();
    await ctx.request(v2.methods.agent.session.new, { cwd: "/w" });
    calls[i] = Number(process.hrtime.bigint() - call) / 1e3;
  }
  const roundTripSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  calls.sort();
  const roundTripP50 = calls[Math.floor(calls.length * 0.5)];
  const roundTripP99 = calls[Math.min(calls.length - 1, Math.floor(calls.length * 0.99))];
  started = process.hrtime.bigint();
  if (Number(notifications) > 0) {
    await ctx.request(v2.methods.agent.session.prompt, { sessionId: "s-1", prompt: [{ type: "text", text: String(notifications) }] });
    await done;
  }
  const streamSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { roundTripSeconds, streamSeconds, roundTripP50, roundTripP99 };
});
process.stdout.write(JSON.stringify(result) + "\n");
child?.stdin.end();
process.exit(0);
