// Drives a running ggml-server with the Vercel AI SDK (packages ai, @ai-sdk/openai,
// @ai-sdk/openai-compatible, zod), which validates every response and stream chunk against
// its own schemas: text and objects (zod schemas as json_schema output), streamed and not,
// tool calls, embeddings, through three providers: @ai-sdk/openai's default (the Responses
// API, POST /v1/responses), its chat provider (POST /v1/chat/completions) and
// openai-compatible.
// Usage: node ai-sdk-client-test.mjs BASE_URL API_KEY
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { embed, embedMany, generateObject, generateText, streamObject, streamText, tool } from "ai";
import { z } from "zod";
import assert from "node:assert/strict";
import { checker } from "./bounded-check.mjs";

const [base, key] = process.argv.slice(2);
const openai = createOpenAI({ baseURL: base + "/v1", apiKey: key });
const compat = createOpenAICompatible({ name: "ggml", baseURL: base + "/v1", apiKey: key, supportsStructuredOutputs: true, includeUsage: true });
const { check, passed } = checker();

const color = z.object({ name: z.enum(["red", "green", "blue"]), bright: z.boolean() });
const weather = tool({ description: "Weather of a city", inputSchema: z.object({ city: z.enum(["Paris", "Rome"]) }) });
const prompt = "func main() {";
for (const [name, model] of [["responses", openai("default")], ["chat", openai.chat("default")], ["openai-compatible", compat("default")]]) {
  let text;
  await check(`${name}: generateText`, async () => {
    const r = await generateText({ model, system: "You write Go.", prompt, maxOutputTokens: 16, temperature: 0 });
    assert.ok(r.text.length > 0);
    assert.ok(["stop", "length"].includes(r.finishReason), r.finishReason);
    assert.ok(r.usage.inputTokens > 0 && r.usage.outputTokens > 0, JSON.stringify(r.usage));
    text = r.text;
  });
  await check(`${name}: streamText (the same text)`, async () => {
    const r = streamText({ model, system: "You write Go.", prompt, maxOutputTokens: 16, temperature: 0 });
    let t = "";
    for await (const part of r.fullStream) {
      if (part.type === "error") throw part.error;
      if (part.type === "text-delta") t += part.text;
    }
    assert.equal(t, text);
    assert.ok((await r.usage).outputTokens > 0);
  });
  await check(`${name}: generateObject (zod schema)`, async () => {
    const r = await generateObject({ model, schema: color, prompt: "Describe a color.", maxOutputTokens: 120, temperature: 0 });
    assert.ok(color.safeParse(r.object).success, JSON.stringify(r.object));
  });
  await check(`${name}: streamObject`, async () => {
    const r = streamObject({ model, schema: color, prompt: "Describe a color.", maxOutputTokens: 120, temperature: 0 });
    let partials = 0;
    for await (const _ of r.partialObjectStream) partials++;
    assert.ok(partials > 0);
    assert.ok(color.safeParse(await r.object).success);
  });
  await check(`${name}: a forced tool call, then its result`, async () => {
    const r = await generateText({ model, prompt: "Weather in Paris?", tools: { weather }, toolChoice: { type: "tool", toolName: "weather" }, maxOutputTokens: 64, temperature: 0 });
    assert.equal(r.toolCalls.length, 1, JSON.stringify(r.content));
    const call = r.toolCalls[0];
    assert.equal(call.toolName, "weather");
    assert.ok(["Paris", "Rome"].includes(call.input.city));
    const r2 = await generateText({ model, tools: { weather }, maxOutputTokens: 8, temperature: 0, messages: [
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: [{ type: "tool-call", toolCallId: call.toolCallId, toolName: "weather", input: call.input }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: call.toolCallId, toolName: "weather", output: { type: "text", value: "18 celsius" } }] }] });
    assert.ok(["stop", "length", "tool-calls"].includes(r2.finishReason), r2.finishReason);
  });
}
await check("embed and embedMany", async () => {
  const one = await embed({ model: openai.embedding("default"), value: "hello" });
  assert.ok(one.embedding.length > 0);
  const many = await embedMany({ model: compat.textEmbeddingModel("default"), values: ["a", "b", "c"] });
  assert.equal(many.embeddings.length, 3);
  assert.equal(many.embeddings[0].length, one.embedding.length);
});
console.log(`ai sdk client: ${passed()} checks passed`);
