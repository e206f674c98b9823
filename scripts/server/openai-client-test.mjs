// Drives a running ggml-server with the official openai npm package: chat, completions,
// the Responses API, embeddings, structured output, logprobs, logit_bias, tool calls and
// error cases.
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
await check("models.retrieve", async () => { assert.equal((await client.models.retrieve(model)).id, model); });
await expectError("models.retrieve of another model: 404", 404, () => client.models.retrieve("no-such-model"), "model_not_found");
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

// logprobs, logit_bias and tools
let lpWhole;
await check("chat logprobs (not streamed): OpenAI's content entries, greedy token first in top_logprobs", async () => {
  lpWhole = await client.chat.completions.create({ model, messages, max_tokens: 12, temperature: 0, logprobs: true, top_logprobs: 2 });
  const c = lpWhole.choices[0];
  assert.ok(c.logprobs && Array.isArray(c.logprobs.content), JSON.stringify(c.logprobs));
  assert.equal(c.logprobs.content.length, lpWhole.usage.completion_tokens);
  const bytes = [];
  for (const e of c.logprobs.content) {
    assert.equal(typeof e.token, "string");
    assert.ok(e.logprob <= 0);
    assert.ok(Array.isArray(e.bytes) && e.bytes.every(Number.isInteger));
    assert.equal(e.top_logprobs.length, 2);
    assert.equal(e.top_logprobs[0].token, e.token);
    assert.ok(e.top_logprobs[0].logprob >= e.top_logprobs[1].logprob);
    bytes.push(...e.bytes);
  }
  assert.ok(Buffer.from(bytes).toString("utf8").startsWith(c.message.content));
});
await check("chat logprobs (streamed): each delta has its tokens' logprobs, same as not streamed", async () => {
  const stream = await client.chat.completions.create({ model, messages, max_tokens: 12, temperature: 0, logprobs: true, top_logprobs: 2, stream: true });
  const entries = [];
  for await (const chunk of stream) {
    const ch = chunk.choices[0];
    if (ch && ch.logprobs && ch.logprobs.content) entries.push(...ch.logprobs.content);
  }
  assert.deepEqual(entries.map(e => e.token), lpWhole.choices[0].logprobs.content.map(e => e.token));
  entries.forEach((e, i) => assert.ok(Math.abs(e.logprob - lpWhole.choices[0].logprobs.content[i].logprob) < 1e-4));
});
await check("completions logprobs: legacy tokens / token_logprobs / top_logprobs / text_offset", async () => {
  const r = await client.completions.create({ model, prompt: "package main\n\nfunc", max_tokens: 8, temperature: 0, logprobs: 3 });
  const lp = r.choices[0].logprobs;
  assert.ok(lp, "no logprobs");
  assert.equal(lp.tokens.length, r.usage.completion_tokens);
  assert.equal(lp.token_logprobs.length, lp.tokens.length);
  assert.equal(lp.text_offset.length, lp.tokens.length);
  lp.top_logprobs.forEach((t, i) => { assert.ok(Object.keys(t).length <= 3 && Object.keys(t).length >= 1); assert.ok(lp.tokens[i] in t); });
  for (let i = 1; i < lp.text_offset.length; i++) assert.ok(lp.text_offset[i] >= lp.text_offset[i - 1]);
  const plain = await client.completions.create({ model, prompt: "package main\n\nfunc", max_tokens: 8, temperature: 0 });
  assert.equal(plain.choices[0].logprobs, null);
});
await check("logit_bias: +100 forces a token, -100 bans the one greedy decoding picks", async () => {
  const tk = await (await fetch(base + "/tokenize", { method: "POST", headers: { Authorization: "Bearer " + key },
    body: JSON.stringify({ content: "func main", with_pieces: true }) })).json();
  const pieces = tk.tokens.filter(t => typeof t.piece === "string");
  const [x, y] = [pieces[0], pieces.find(t => t.piece !== pieces[0].piece)];
  assert.ok(x && y, JSON.stringify(tk));
  const first = async (bias) => {
    const r = await client.chat.completions.create({ model, messages, max_tokens: 1, temperature: 0, logprobs: true, logit_bias: bias });
    return r.choices[0].logprobs.content[0].token;
  };
  const forced = await first({ [x.id]: 100, [y.id]: 100 });
  assert.ok([x.piece, y.piece].includes(forced), forced);
  const [won, other] = forced === x.piece ? [x, y] : [y, x];
  assert.equal(await first({ [won.id]: -100, [other.id]: 100 }), other.piece);
});
const weatherTool = {
  type: "function",
  function: {
    name: "get_weather", description: "Get the weather of a city",
    parameters: { type: "object", properties: { city: { type: "string", maxLength: 10 }, unit: { enum: ["celsius", "fahrenheit"] } }, required: ["city", "unit"], additionalProperties: false },
  },
};
const checkArgs = (call) => {
  assert.equal(call.type, "function");
  assert.equal(call.function.name, "get_weather");
  assert.ok(typeof call.id === "string" && call.id.length > 0);
  const a = JSON.parse(call.function.arguments);
  assert.deepEqual(Object.keys(a).sort(), ["city", "unit"]);
  assert.equal(typeof a.city, "string"); assert.ok(a.city.length <= 10);
  assert.ok(["celsius", "fahrenheit"].includes(a.unit));
};
let call;
await check("tools with tool_choice naming a function: a parseable call matching the schema", async () => {
  const r = await client.chat.completions.create({ model, messages: [{ role: "user", content: "Weather in Paris?" }], max_tokens: 100, temperature: 0.7, seed: 5,
    tools: [weatherTool], tool_choice: { type: "function", function: { name: "get_weather" } } });
  const c = r.choices[0];
  assert.equal(c.finish_reason, "tool_calls", JSON.stringify(c.message));
  assert.equal(c.message.tool_calls.length, 1);
  checkArgs(c.message.tool_calls[0]);
  call = c.message.tool_calls[0];
});
await check("tools, streamed: delta.tool_calls and finish_reason tool_calls", async () => {
  const stream = await client.chat.completions.create({ model, messages: [{ role: "user", content: "Weather in Paris?" }], max_tokens: 100, temperature: 0.7, seed: 5,
    tools: [weatherTool], tool_choice: "required", stream: true });
  const calls = []; let finish = null;
  for await (const chunk of stream) {
    const ch = chunk.choices[0];
    if (!ch) continue;
    for (const d of (ch.delta && ch.delta.tool_calls) || []) {
      if (!calls[d.index]) calls[d.index] = { id: d.id, type: d.type, function: { name: "", arguments: "" } };
      if (d.function && d.function.name) calls[d.index].function.name += d.function.name;
      if (d.function && d.function.arguments) calls[d.index].function.arguments += d.function.arguments;
    }
    if (ch.finish_reason) finish = ch.finish_reason;
  }
  assert.equal(finish, "tool_calls");
  assert.equal(calls.length, 1);
  checkArgs(calls[0]);
});
await check("tool call and tool result in the history render and generate", async () => {
  const r = await client.chat.completions.create({ model, max_tokens: 8, temperature: 0, tools: [weatherTool],
    messages: [{ role: "user", content: "Weather in Paris?" }, { role: "assistant", content: null, tool_calls: [call] },
      { role: "tool", tool_call_id: call.id, content: "18 celsius" }] });
  assert.ok(["stop", "length", "tool_calls"].includes(r.choices[0].finish_reason));
});

// The Responses API (POST /v1/responses): the same generation as chat, other shapes
let resp;
await check("responses.create, not streamed (same text as chat)", async () => {
  resp = await client.responses.create({ model, instructions: "You write Go.", input: "func main() {", max_output_tokens: 24, temperature: 0 });
  assert.equal(resp.object, "response");
  assert.ok(["completed", "incomplete"].includes(resp.status));
  assert.equal(resp.output[0].type, "message");
  assert.equal(resp.output_text, whole.choices[0].message.content);
  assert.equal(resp.status === "incomplete", whole.choices[0].finish_reason === "length");
  assert.equal(resp.usage.input_tokens, whole.usage.prompt_tokens);
  assert.equal(resp.usage.output_tokens, whole.usage.completion_tokens);
});
await check("responses.create, streamed (events in order, the same text)", async () => {
  const stream = await client.responses.create({ model, instructions: "You write Go.",
    input: [{ role: "user", content: [{ type: "input_text", text: "func main() {" }] }], max_output_tokens: 24, temperature: 0, stream: true });
  let text = "", last = null, seq = -1;
  const types = [];
  for await (const ev of stream) {
    assert.equal(ev.sequence_number, seq + 1);
    seq = ev.sequence_number;
    types.push(ev.type);
    if (ev.type === "response.output_text.delta") text += ev.delta;
    last = ev;
  }
  assert.equal(types[0], "response.created");
  assert.ok(types.includes("response.output_item.added") && types.includes("response.output_text.done"));
  assert.equal(text, resp.output_text);
  assert.equal(last.response.status, resp.status);
  assert.deepEqual(last.response.usage, resp.usage);
});
await check("responses.stream helper: final response", async () => {
  const stream = client.responses.stream({ model, input: "func main() {", max_output_tokens: 8, temperature: 0 });
  let deltas = "";
  stream.on("response.output_text.delta", (ev) => { deltas += ev.delta; });
  const final = await stream.finalResponse();
  assert.equal(final.output_text, deltas);
});
await check("responses json_schema: parses and validates", async () => {
  const r = await client.responses.create({ model, input: "Describe a color.", max_output_tokens: 120, temperature: 0,
    text: { format: { type: "json_schema", name: "color", strict: true, schema: { type: "object", properties: { name: { type: "string", enum: ["red", "green", "blue"] }, bright: { type: "boolean" } }, required: ["name", "bright"], additionalProperties: false } } } });
  const v = JSON.parse(r.output_text);
  assert.ok(["red", "green", "blue"].includes(v.name));
  assert.equal(typeof v.bright, "boolean");
});
await check("responses function call forced, then its output in the input", async () => {
  const tool = { type: "function", name: "get_weather", description: "Weather of a city", strict: true,
    parameters: { type: "object", properties: { city: { type: "string", enum: ["Paris", "Rome"] } }, required: ["city"], additionalProperties: false } };
  const r = await client.responses.create({ model, input: "Weather in Paris?", tools: [tool], tool_choice: "required", max_output_tokens: 64, temperature: 0 });
  const fc = r.output.find((o) => o.type === "function_call");
  assert.ok(fc, JSON.stringify(r.output));
  assert.equal(fc.name, "get_weather");
  assert.ok(["Paris", "Rome"].includes(JSON.parse(fc.arguments).city));
  const r2 = await client.responses.create({ model, tools: [tool], max_output_tokens: 8, temperature: 0,
    input: [{ role: "user", content: "Weather in Paris?" }, fc, { type: "function_call_output", call_id: fc.call_id, output: "18 celsius" }] });
  assert.equal(r2.object, "response");
});
await expectError("responses previous_response_id: 400", 400, () => client.responses.create({ model, input: "x", previous_response_id: "resp_1" }));
await expectError("responses max_output_tokens 0: 400", 400, () => client.responses.create({ model, input: "x", max_output_tokens: 0 }));
await expectError("responses image input: 400", 400, () => client.responses.create({ model, input: [{ role: "user", content: [{ type: "input_image", image_url: "http://127.0.0.1/x.png" }] }] }));

await expectError("empty messages: 400", 400, () => client.chat.completions.create({ model, messages: [] }));
await expectError("negative max_tokens: 400", 400, () => client.chat.completions.create({ model, messages, max_tokens: -1 }));
await expectError("absurd max_tokens: 400", 400, () => client.chat.completions.create({ model, messages, max_tokens: 10_000_000 }), "context_length_exceeded");
await expectError("n = 2: 400", 400, () => client.chat.completions.create({ model, messages, n: 2 }));
await expectError("prompt longer than the context: 400", 400, () => client.chat.completions.create({ model, messages: [{ role: "user", content: "func main() { ".repeat(2000) }] }), "context_length_exceeded");
await expectError("bad json_schema: 400", 400, () => client.chat.completions.create({ model, messages, response_format: { type: "json_schema", json_schema: { name: "x", schema: { $ref: "#/missing" } } } }));
await expectError("wrong content type: 400", 400, () => client.chat.completions.create({ model, messages: [{ role: "user", content: 42 }] }));
await expectError("logit_bias with a key that is no token id: 400", 400, () => client.chat.completions.create({ model, messages, logit_bias: { abc: 1 } }));
await expectError("logit_bias out of range: 400", 400, () => client.chat.completions.create({ model, messages, logit_bias: { "5": 101 } }));
await expectError("top_logprobs 21: 400", 400, () => client.chat.completions.create({ model, messages, logprobs: true, top_logprobs: 21 }));
await expectError("tool_choice naming an unknown function: 400", 400, () => client.chat.completions.create({ model, messages, tools: [weatherTool], tool_choice: { type: "function", function: { name: "nope" } } }));
await expectError("wrong API key: 401", 401, () => bad.models.list(), "invalid_api_key");
await check("the server still serves", async () => {
  const r = await client.chat.completions.create({ model, messages, max_tokens: 4, temperature: 0 });
  assert.ok(r.choices[0].message.content.length > 0);
});
console.log(`openai client: ${passed} checks passed`);
