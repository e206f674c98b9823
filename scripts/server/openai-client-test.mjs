// Drives a running ggml-server with the official openai npm package.
// Usage: node openai-client-test.mjs BASE_URL API_KEY
import OpenAI from "openai";
import assert from "node:assert/strict";

const [base, key] = process.argv.slice(2);
const client = new OpenAI({ baseURL: base + "/v1", apiKey: key, maxRetries: 0, timeout: 120_000 });
const bad = new OpenAI({ baseURL: base + "/v1", apiKey: "wrong-key", maxRetries: 0 });
let passed = 0;
async function check(name, fn) {
  const t0 = Date.now();
  await fn();
  passed++;
  console.log(`ok   ${name} (${Date.now() - t0} ms)`);
}
async function expectError(name, status, fn, code) {
  await check(name, async () => {
    let err;
    try { await fn(); } catch (e) { err = e; }
    assert.ok(err, "no error");
    assert.ok(err instanceof OpenAI.APIError, "not an APIError: " + err);
    assert.equal(err.status, status, err.message);
    assert.ok(err.error && err.error.message, "no error message");
    if (code) assert.equal(err.code, code);
  });
}

const models = await client.models.list();
const model = models.data[0].id;
const messages = [{ role: "system", content: "You write Go." }, { role: "user", content: "func main() {" }];

let whole;
await check("models.list", async () => { assert.ok(model); });
await check("chat, not streamed", async () => {
  whole = await client.chat.completions.create({ model, messages, max_tokens: 24, temperature: 0 });
  assert.equal(whole.object, "chat.completion");
  const c = whole.choices[0];
  assert.equal(c.message.role, "assistant");
  assert.equal(typeof c.message.content, "string");
  assert.ok(c.message.content.length > 0);
  assert.ok(["stop", "length"].includes(c.finish_reason));
  assert.equal(whole.usage.total_tokens, whole.usage.prompt_tokens + whole.usage.completion_tokens);
});
await check("chat, streamed (same text as not streamed, usage chunk)", async () => {
  const stream = await client.chat.completions.create({ model, messages, max_tokens: 24, temperature: 0, stream: true, stream_options: { include_usage: true } });
  let text = "", finish = null, usage = null, chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    assert.equal(chunk.object, "chat.completion.chunk");
    if (chunk.usage) usage = chunk.usage;
    const ch = chunk.choices[0];
    if (!ch) continue;
    if (ch.delta && ch.delta.content) text += ch.delta.content;
    if (ch.finish_reason) finish = ch.finish_reason;
  }
  assert.ok(chunks > 2);
  assert.equal(text, whole.choices[0].message.content);
  assert.equal(finish, whole.choices[0].finish_reason);
  assert.deepEqual(usage, whole.usage);
});
await check("chat with a stop string", async () => {
  const r = await client.chat.completions.create({ model, messages, max_tokens: 24, temperature: 0, stop: ["\n"] });
  assert.ok(!r.choices[0].message.content.includes("\n"));
});
await check("completions, streamed and not", async () => {
  const r = await client.completions.create({ model, prompt: "package main\n\nfunc", max_tokens: 16, temperature: 0 });
  assert.equal(r.object, "text_completion");
  let text = "";
  for await (const c of await client.completions.create({ model, prompt: "package main\n\nfunc", max_tokens: 16, temperature: 0, stream: true })) {
    if (c.choices[0]) text += c.choices[0].text;
  }
  assert.equal(text, r.choices[0].text);
});
await check("embeddings (mean pooling, unit vectors; base64 through the client)", async () => {
  const r = await client.embeddings.create({ model, input: ["func main() {}", "package http"] });
  assert.equal(r.data.length, 2);
  for (const d of r.data) {
    assert.ok(d.embedding.length > 0);
    const norm = Math.sqrt(d.embedding.reduce((s, x) => s + x * x, 0));
    assert.ok(Math.abs(norm - 1) < 1e-3, "norm " + norm);
  }
  const f = await client.embeddings.create({ model, input: "func main() {}", encoding_format: "float" });
  r.data[0].embedding.forEach((x, i) => assert.ok(Math.abs(x - f.data[0].embedding[i]) < 1e-6));
});
const schema = {
  type: "object",
  properties: {
    name: { type: "string", maxLength: 12 },
    count: { type: "integer" },
    ok: { type: "boolean" },
    kind: { enum: ["func", "type", "var"] },
  },
  required: ["name", "count", "ok", "kind"],
  additionalProperties: false,
};
await check("response_format json_schema: output parses and validates", async () => {
  for (const temperature of [0, 0.8]) {
    const r = await client.chat.completions.create({
      model, messages: [{ role: "user", content: "Describe a Go symbol as JSON." }], max_tokens: 200, temperature, seed: 7,
      response_format: { type: "json_schema", json_schema: { name: "symbol", schema, strict: true } },
    });
    const c = r.choices[0];
    assert.equal(c.finish_reason, "stop", "did not finish: " + JSON.stringify(c.message.content));
    const v = JSON.parse(c.message.content);
    assert.deepEqual(Object.keys(v).sort(), ["count", "kind", "name", "ok"]);
    assert.equal(typeof v.name, "string"); assert.ok(v.name.length <= 12);
    assert.ok(Number.isInteger(v.count));
    assert.equal(typeof v.ok, "boolean");
    assert.ok(["func", "type", "var"].includes(v.kind));
  }
});
await check("response_format json_object", async () => {
  const r = await client.chat.completions.create({ model, messages, max_tokens: 200, temperature: 0, response_format: { type: "json_object" } });
  if (r.choices[0].finish_reason === "stop") {
    const v = JSON.parse(r.choices[0].message.content);
    assert.equal(typeof v, "object");
  }
});
await check("abort mid-stream frees the slot", async () => {
  const ac = new AbortController();
  const stream = await client.chat.completions.create({ model, messages, max_tokens: 100, temperature: 0, stream: true }, { signal: ac.signal });
  let n = 0;
  try { for await (const _ of stream) { if (++n === 3) ac.abort(); } } catch (e) { /* aborted */ }
  for (let i = 0; i < 100; i++) {
    const h = await (await fetch(base + "/health")).json();
    if (h.slots_processing === 0) return;
    await new Promise(r => setTimeout(r, 50));
  }
  assert.fail("the slot stayed busy after the client aborted");
});

await expectError("empty messages: 400", 400, () => client.chat.completions.create({ model, messages: [] }));
await expectError("negative max_tokens: 400", 400, () => client.chat.completions.create({ model, messages, max_tokens: -1 }));
await expectError("absurd max_tokens: 400", 400, () => client.chat.completions.create({ model, messages, max_tokens: 10_000_000 }), "context_length_exceeded");
await expectError("n = 2: 400", 400, () => client.chat.completions.create({ model, messages, n: 2 }));
await expectError("prompt longer than the context: 400", 400, () => client.chat.completions.create({ model, messages: [{ role: "user", content: "func main() { ".repeat(2000) }] }), "context_length_exceeded");
await expectError("bad json_schema: 400", 400, () => client.chat.completions.create({ model, messages, response_format: { type: "json_schema", json_schema: { name: "x", schema: { $ref: "#/missing" } } } }));
await expectError("wrong content type: 400", 400, () => client.chat.completions.create({ model, messages: [{ role: "user", content: 42 }] }));
await expectError("wrong API key: 401", 401, () => bad.models.list(), "invalid_api_key");
await check("the server still serves", async () => {
  const r = await client.chat.completions.create({ model, messages, max_tokens: 4, temperature: 0 });
  assert.ok(r.choices[0].message.content.length > 0);
});
console.log(`openai client: ${passed} checks passed`);
