// Drives a running ggml-server through Anthropic's Messages API (POST /v1/messages) with the
// official @anthropic-ai/sdk (the key sent as x-api-key) and the AI SDK's Anthropic provider:
// messages streamed and not, the stream helper, stop sequences, forced tool use and a tool result, token
// counting, and errors in Anthropic's shape.
// Usage: node anthropic-client-test.mjs BASE_URL API_KEY
import Anthropic from "@anthropic-ai/sdk";
import { createAnthropic } from "@ai-sdk/anthropic";
import { generateObject, generateText, streamText, tool } from "ai";
import { z } from "zod";
import assert from "node:assert/strict";
import { checker } from "./bounded-check.mjs";

const [base, key] = process.argv.slice(2);
const client = new Anthropic({ baseURL: base, apiKey: key, maxRetries: 0, timeout: 120_000 });
const { check, passed } = checker();
async function expectError(name, status, cls, fn) {
  await check(name, async () => {
    let err;
    try { await fn(); } catch (e) { err = e; }
    assert.ok(err instanceof cls, "not a " + cls.name + ": " + err);
    assert.equal(err.status, status, err.message);
    assert.equal(err.error.type, "error");
    assert.ok(err.error.error.message);
  });
}

const messages = [{ role: "user", content: "func main() {" }];
let whole;
await check("messages.create, not streamed", async () => {
  whole = await client.messages.create({ model: "default", max_tokens: 24, system: "You write Go.", messages, temperature: 0 });
  assert.equal(whole.type, "message");
  assert.equal(whole.role, "assistant");
  assert.equal(whole.content[0].type, "text");
  assert.ok(["end_turn", "max_tokens"].includes(whole.stop_reason));
  assert.ok(whole.usage.input_tokens > 0 && whole.usage.output_tokens > 0);
});
await check("messages.create, streamed (events in order, the same text)", async () => {
  const stream = await client.messages.create({ model: "default", max_tokens: 24, system: "You write Go.", messages, temperature: 0, stream: true });
  const types = [];
  let text = "", stop = null;
  for await (const ev of stream) {
    types.push(ev.type);
    if (ev.type === "content_block_delta") text += ev.delta.text;
    if (ev.type === "message_delta") stop = ev.delta.stop_reason;
  }
  assert.equal(types[0], "message_start");
  assert.equal(types.at(-1), "message_stop");
  assert.equal(text, whole.content[0].text);
  assert.equal(stop, whole.stop_reason);
});
await check("messages.stream helper: final message", async () => {
  const stream = client.messages.stream({ model: "default", max_tokens: 24, system: "You write Go.", messages, temperature: 0 });
  let text = "";
  stream.on("text", (t) => { text += t; });
  const m = await stream.finalMessage();
  assert.equal(text, whole.content[0].text);
  assert.deepEqual(m.usage, whole.usage);
});
await check("stop_sequences: the text ends before it, stop_reason and stop_sequence name it (streamed too)", async () => {
  const text = whole.content[0].text;
  let stop = "";
  for (let at = text.length >> 1; at + 2 <= text.length && !stop; at++) {
    if (text.indexOf(text.slice(at, at + 2)) > 0) stop = text.slice(at, at + 2);
  }
  assert.ok(stop, "no stop string to pick in the reply " + JSON.stringify(text));
  const m = await client.messages.create({ model: "default", max_tokens: 24, system: "You write Go.", messages, temperature: 0, stop_sequences: ["\u0000never", stop] });
  assert.equal(m.content[0].text, text.slice(0, text.indexOf(stop)));
  assert.equal(m.stop_reason, "stop_sequence");
  assert.equal(m.stop_sequence, stop);
  const final = await client.messages.stream({ model: "default", max_tokens: 24, system: "You write Go.", messages, temperature: 0, stop_sequences: [stop] }).finalMessage();
  assert.equal(final.stop_reason, "stop_sequence");
  assert.equal(final.stop_sequence, stop);
  assert.equal(final.content[0].text, m.content[0].text);
});
const tools = [{ name: "get_weather", description: "Weather of a city", input_schema: { type: "object", properties: { city: { type: "string", enum: ["Paris", "Rome"] } }, required: ["city"] } }];
await check("forced tool use, then its result", async () => {
  const r = await client.messages.create({ model: "default", max_tokens: 64, tools, tool_choice: { type: "tool", name: "get_weather" }, messages: [{ role: "user", content: "Weather in Paris?" }], temperature: 0 });
  assert.equal(r.stop_reason, "tool_use");
  const use = r.content.find((b) => b.type === "tool_use");
  assert.equal(use.name, "get_weather");
  assert.ok(["Paris", "Rome"].includes(use.input.city));
  const r2 = await client.messages.create({ model: "default", max_tokens: 8, tools, temperature: 0, messages: [
    { role: "user", content: "Weather in Paris?" }, { role: "assistant", content: r.content },
    { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "18 celsius" }] }] });
  assert.equal(r2.type, "message");
});
await check("streamed tool use (input_json_delta)", async () => {
  const stream = client.messages.stream({ model: "default", max_tokens: 64, tools, tool_choice: { type: "any" }, messages: [{ role: "user", content: "Weather?" }], temperature: 0 });
  const m = await stream.finalMessage();
  const use = m.content.find((b) => b.type === "tool_use");
  assert.ok(use && ["Paris", "Rome"].includes(use.input.city), JSON.stringify(m.content));
});
await check("messages.countTokens", async () => {
  const r = await client.messages.countTokens({ model: "default", system: "You write Go.", messages });
  assert.equal(r.input_tokens, whole.usage.input_tokens);
});
await expectError("no max_tokens: 400", 400, Anthropic.BadRequestError, () => client.messages.create({ model: "default", messages }));
await expectError("an image block: 400", 400, Anthropic.BadRequestError, () => client.messages.create({ model: "default", max_tokens: 4,
  messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "http://127.0.0.1/x.png" } }] }] }));
await expectError("a prompt longer than the context: 400", 400, Anthropic.BadRequestError, () => client.messages.create({ model: "default", max_tokens: 4,
  messages: [{ role: "user", content: "func main() { ".repeat(2000) }] }));
await expectError("a wrong key: 401", 401, Anthropic.AuthenticationError, () => new Anthropic({ baseURL: base, apiKey: "wrong", maxRetries: 0 }).messages.create({ model: "default", max_tokens: 4, messages }));

const model = createAnthropic({ baseURL: base + "/v1", apiKey: key })("default");
await check("AI SDK Anthropic provider: generateText and streamText", async () => {
  const r = await generateText({ model, system: "You write Go.", prompt: "func main() {", maxOutputTokens: 24, temperature: 0 });
  assert.equal(r.text, whole.content[0].text);
  const s = streamText({ model, system: "You write Go.", prompt: "func main() {", maxOutputTokens: 24, temperature: 0 });
  let t = "";
  for await (const p of s.fullStream) {
    if (p.type === "error") throw p.error;
    if (p.type === "text-delta") t += p.text;
  }
  assert.equal(t, r.text);
});
await check("AI SDK Anthropic provider: tool call and generateObject", async () => {
  const weather = tool({ description: "Weather of a city", inputSchema: z.object({ city: z.enum(["Paris", "Rome"]) }) });
  const r = await generateText({ model, prompt: "Weather?", tools: { weather }, toolChoice: "required", maxOutputTokens: 64, temperature: 0 });
  assert.equal(r.toolCalls.length, 1);
  const color = z.object({ name: z.enum(["red", "green", "blue"]), bright: z.boolean() });
  const o = await generateObject({ model, schema: color, prompt: "Describe a color.", maxOutputTokens: 120, temperature: 0 });
  assert.ok(color.safeParse(o.object).success);
});
console.log(`anthropic clients: ${passed()} checks passed`);
