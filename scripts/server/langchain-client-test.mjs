// Drives a running ggml-server with LangChain JS (@langchain/openai over @langchain/core):
// chat invoke, stream and batch, structured output through json_schema and through a forced
// function call, bound tools, the Responses API (useResponsesApi), embeddings and the
// completions model.
// Usage: node langchain-client-test.mjs BASE_URL API_KEY
import { ChatOpenAI, OpenAI, OpenAIEmbeddings } from "@langchain/openai";
import { z } from "zod";
import assert from "node:assert/strict";
import { checker } from "./bounded-check.mjs";

const [base, key] = process.argv.slice(2);
const cfg = { configuration: { baseURL: base + "/v1" }, apiKey: key, model: "default", temperature: 0, maxTokens: 24, maxRetries: 0 };
const { check, passed } = checker();

const chat = new ChatOpenAI(cfg);
let text;
await check("invoke", async () => {
  const r = await chat.invoke([["system", "You write Go."], ["human", "func main() {"]]);
  assert.ok(typeof r.content === "string" && r.content.length > 0);
  assert.ok(r.usage_metadata.input_tokens > 0 && r.usage_metadata.output_tokens > 0);
  text = r.content;
});
await check("stream (the same text)", async () => {
  let t = "";
  for await (const c of await chat.stream([["system", "You write Go."], ["human", "func main() {"]])) t += c.content;
  assert.equal(t, text);
});
await check("batch", async () => {
  const rs = await chat.batch(["func a() {", "func b() {"]);
  assert.equal(rs.length, 2);
});
const color = z.object({ name: z.enum(["red", "green", "blue"]), bright: z.boolean() });
for (const method of ["jsonSchema", "functionCalling"]) {
  await check(`withStructuredOutput (${method})`, async () => {
    const v = await new ChatOpenAI({ ...cfg, maxTokens: 120 }).withStructuredOutput(color, { method, name: "color" }).invoke("Describe a color.");
    assert.ok(color.safeParse(v).success, JSON.stringify(v));
  });
}
await check("bindTools with a required call", async () => {
  const weather = { type: "function", function: { name: "weather", description: "Weather of a city",
    parameters: { type: "object", properties: { city: { type: "string", enum: ["Paris", "Rome"] } }, required: ["city"] } } };
  const r = await new ChatOpenAI({ ...cfg, maxTokens: 64 }).bindTools([weather], { tool_choice: "required" }).invoke("Weather in Paris?");
  assert.equal(r.tool_calls.length, 1);
  assert.equal(r.tool_calls[0].name, "weather");
  assert.ok(["Paris", "Rome"].includes(r.tool_calls[0].args.city));
});
await check("the Responses API (useResponsesApi), invoke and stream", async () => {
  const m = new ChatOpenAI({ ...cfg, useResponsesApi: true });
  const r = await m.invoke([["system", "You write Go."], ["human", "func main() {"]]);
  const t = typeof r.content === "string" ? r.content : r.content.map((p) => p.text ?? "").join("");
  assert.equal(t, text);
  let chunks = 0;
  for await (const _ of await m.stream("func main() {")) chunks++;
  assert.ok(chunks > 1);
});
await check("embeddings", async () => {
  const e = new OpenAIEmbeddings({ configuration: { baseURL: base + "/v1" }, apiKey: key, model: "default", maxRetries: 0 });
  const docs = await e.embedDocuments(["a", "b"]);
  const q = await e.embedQuery("c");
  assert.equal(docs.length, 2);
  assert.equal(docs[0].length, q.length);
});
await check("completions model", async () => {
  const r = await new OpenAI(cfg).invoke("func main() {");
  assert.ok(typeof r === "string" && r.length > 0);
});
console.log(`langchain client: ${passed()} checks passed`);
