// The check runner of the client tests: each check is bounded in time (a client promise that
// never settles fails it) and counted.
export function checker(limitMs = 60_000) {
  let passed = 0;
  async function check(name, fn) {
    const t0 = Date.now();
    let timer;
    const limit = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer in ${limitMs / 1000} s`)), limitMs); });
    try {
      await Promise.race([fn(), limit]);
    } finally {
      clearTimeout(timer);
    }
    passed++;
    console.log(`ok   ${name} (${Date.now() - t0} ms)`);
  }
  return { check, passed: () => passed };
}
