// The load generator of benchmarks/bench_load.py: N clients of the official TypeScript SDK 2.4.0 at once
// (createHttpStream or createWebSocketStream with ws), each doing initialize, session/new and one prompt whose
// agent streams M updates stamped with the time they were sent (the agent's wall clock, in ms); it prints one
// JSON line: updates received, the seconds from the first prompt to the last update, the latency p50 and p99
// of an update (sent -> handled here), and the clients that failed.
// Usage: node bench_load_client.mjs <sdk alias> <http|ws> <url> <clients> <updates per client>
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

const [sdk, transport, url, clients, updates] = process.argv.slice(2);
const require = createRequire(new URL("../tests/interop/package.json", import.meta.url));
const load = async (path) => import(pathToFileURL(require.resolve(`${sdk}/${path}`)).href);
const v2 = await load("experimental/v2");
const { createWebSocketStream } = await load("experimental/ws-client");
const { createHttpStream } = await load("experimental/http-client");
const WebSocket = require("ws").WebSocket;

const now = () => performance.timeOrigin + performance.now();
const latencies = new Float64Array(Number(clients) * Number(updates));
let received = 0;
let firstPrompt = Infinity;
let lastUpdate = 0;
const failures = [];

async function one(index) {
  let arrived = false;
  const arriveOnce = () => {
    if (!arrived) (arrived = true), arrive();
  };
  let seen = 0;
  let allSeen;
  const done = new Promise((resolve) => (allSeen = resolve));
  const client = v2.client({ name: `load-${index}` }).onNotification(v2.methods.client.session.update, async ({ params }) => {
    const at = now();
    const text = params.update?.content?.text;
    latencies[received++] = at - Number(text);
    lastUpdate = Math.max(lastUpdate, at);
    if (++seen === Number(updates)) allSeen();
  });
  const stream = transport === "ws" ? createWebSocketStream(url, { WebSocket }) : createHttpStream(url);
  try {
    await client.connectWith(stream, async (agent) => {
      await agent.request(v2.methods.agent.initialize, { protocolVersion: v2.PROTOCOL_VERSION, info: { name: "load", version: "1" } });
      const { sessionId } = await agent.request(v2.methods.agent.session.new, { cwd: "/" });
      arriveOnce();
      await ready;
      firstPrompt = Math.min(firstPrompt, now());
      await agent.request(v2.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: `${updates} stamp` }] });
      await done;
    });
  } catch (error) {
    failures.push(String(error?.message ?? error));
    arriveOnce();
  }
}

// every client connects and opens its session first; the prompts start together
let go;
const ready = new Promise((resolve) => (go = resolve));
let waiting = Number(clients);
const arrive = () => {
  if (--waiting === 0) go();
};
const running = [];
for (let i = 0; i < Number(clients); i++) running.push(one(i));
await Promise.all(running);
const sorted = latencies.subarray(0, received).sort();
const pick = (q) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN);
process.stdout.write(
  JSON.stringify({ updates: received, seconds: (lastUpdate - firstPrompt) / 1000, p50: pick(0.5), p99: pick(0.99), failures: failures.length, failure: failures[0] ?? null }) + "\n",
);
process.exit(0);
