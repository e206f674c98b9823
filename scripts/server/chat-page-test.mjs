// Opens ggml-server's chat page in headless Chromium, types a prompt, and checks that the
// reply appears piece by piece. Usage: node chat-page-test.mjs BASE_URL API_KEY SCREENSHOT.png
import { chromium } from "playwright-core";

const [base, key, shot] = process.argv.slice(2);
const exe = process.env.CHROMIUM || "/usr/bin/chromium";
const browser = await chromium.launch({ executablePath: exe, args: ["--no-sandbox", "--disable-gpu"] });
try {
  const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
  // The tiny default model writes the whole reply in a fraction of a second, and on a loaded
  // 2-core machine Chromium then sometimes hands the page all of it in one read (CI: 1-2 steps
  // in both tries of one run). Throttling the page's downloads to 16 KB/s (DevTools' network
  // emulation) spreads the stream's ~25 KB of events over about 1.5 s, so that the page's
  // reader sees it arrive in pieces whatever the scheduling.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: 0, downloadThroughput: 16 * 1024, uploadThroughput: -1 });
  page.on("pageerror", e => { console.error("page error:", e.message); process.exitCode = 1; });
  await page.goto(base + "/");
  await page.fill("#key", key);
  await page.fill("#max", "200");
  await page.fill("#temp", "0");
  await page.fill("#prompt", "func main() {");
  // record every change of the reply's length as the page renders it (a MutationObserver sees
  // each piece, however fast the server generates; polling could miss them all)
  await page.evaluate(() => {
    window.__lens = [];
    new MutationObserver(() => {
      const el = document.querySelector(".assistant");
      if (!el) return;
      const n = el.textContent.length;
      if (n > 0 && window.__lens[window.__lens.length - 1] !== n) window.__lens.push(n);
    }).observe(document.body, { childList: true, subtree: true, characterData: true });
  });
  await page.press("#prompt", "Enter");
  await page.waitForFunction(() => {
    const el = document.querySelector(".assistant");
    return el && (el.classList.contains("done") || el.classList.contains("error"));
  }, null, { timeout: 60000 });
  const lengths = await page.evaluate(() => {
    const el = document.querySelector(".assistant");
    return { seen: window.__lens, done: el.classList.contains("done"), text: el.textContent };
  });
  await page.screenshot({ path: shot });
  console.log(`reply: ${JSON.stringify(lengths.text)}; lengths seen while streaming: ${lengths.seen.join(",")}`);
  if (!lengths.done) throw new Error("the reply did not finish");
  if (lengths.seen.length < 3) throw new Error("the reply did not stream: it appeared in " + lengths.seen.length + " step(s)");
  console.log("chat page: ok (streamed in " + lengths.seen.length + " steps; screenshot " + shot + ")");
} finally {
  await browser.close();
}
