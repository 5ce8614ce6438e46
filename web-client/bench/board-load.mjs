// Bundle size and first load of the board on a store of N tasks (default 2,000),
// seeded through the REST API. Prints a Markdown table for BENCHMARKS.md.
// Usage (from web-client/, after `npm run build` and `cargo build`):
//   node bench/board-load.mjs [tasks=2000] [runs=5]
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { launchBrowser, repoRoot, startServer } from "../e2e/harness.mjs";

const N = Number(process.argv[2] ?? 2000);
const RUNS = Number(process.argv[3] ?? 5);

async function bundle() {
  const dir = join(repoRoot, "web-client", "dist", "assets");
  const rows = [];
  for (const f of await readdir(dir)) {
    const buf = await readFile(join(dir, f));
    rows.push({ file: f, raw: (await stat(join(dir, f))).size, gzip: gzipSync(buf, { level: 9 }).length });
  }
  return rows;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const server = await startServer("bench");
const browser = await launchBrowser();
try {
  const t0 = Date.now();
  const tags = ["api", "web", "store", "docs"];
  let next = 0;
  const worker = async () => {
    while (next < N) {
      const i = next++;
      const r = await server.api("POST", "/tasks", { title: `Task ${i}: seeded for the board benchmark`, tags: [tags[i % 4]], priority: ["low", "normal", "high", "urgent"][i % 4] });
      if (r.status !== 201) throw new Error(`seed ${i}: ${r.status} ${JSON.stringify(r)}`);
      if (i % 4 === 1) await server.api("POST", `/tasks/${r.data.id}/claim`, { agent: `agent-${i % 7}` });
      else if (i % 4 === 2) await server.api("POST", `/tasks/${r.data.id}/complete`, {});
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  const seedMs = Date.now() - t0;

  const apiTimes = [];
  let boardBytes = 0;
  for (let i = 0; i < RUNS; i++) {
    const s = performance.now();
    const r = await fetch(`${server.base}/api/v1/board`);
    boardBytes = (await r.arrayBuffer()).byteLength;
    apiTimes.push(performance.now() - s);
  }

  const loads = [];
  for (let i = 0; i < RUNS; i++) {
    // A fresh page each time; the HTTP cache is cleared so every run is a first load.
    const page = await browser.context.newPage();
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send("Network.clearBrowserCache");
    const s = Date.now();
    await page.goto(`${server.base}/#/board`);
    await page.locator('section.column li.card').first().waitFor({ timeout: 60_000 });
    const wall = Date.now() - s;
    const nav = await page.evaluate(() => {
      const n = performance.getEntriesByType("navigation")[0];
      const fcp = performance.getEntriesByName("first-contentful-paint")[0];
      return { dcl: n.domContentLoadedEventEnd, fcp: fcp?.startTime ?? null, cards: document.querySelectorAll("li.card").length };
    });
    loads.push({ wall, ...nav });
    await page.close();
  }

  const files = await bundle();
  const html = await readFile(join(repoRoot, "web-client", "dist", "index.html"), "utf8");
  const entry = files.filter((f) => html.includes(f.file));
  const lazy = files.filter((f) => !html.includes(f.file));
  const sum = (rows, k) => rows.reduce((a, r) => a + r[k], 0);
  const kib = (rows) => `${(sum(rows, "raw") / 1024).toFixed(1)} KiB / ${(sum(rows, "gzip") / 1024).toFixed(1)} KiB`;
  console.log(`| measure | value |`);
  console.log(`|---|---|`);
  console.log(`| first load: JS + CSS that index.html loads (raw / gzip -9) | ${kib(entry)} (${entry.map((f) => f.file).join(", ")}) |`);
  console.log(`| loaded on the first note shown (marked + DOMPurify) | ${kib(lazy)} |`);
  console.log(`| tasks seeded through the API | ${N} in ${(seedMs / 1000).toFixed(1)} s |`);
  console.log(`| GET /api/v1/board, median of ${RUNS} | ${median(apiTimes).toFixed(1)} ms, ${(boardBytes / 1024).toFixed(1)} KiB |`);
  console.log(`| cards rendered on first load | ${loads[0].cards} |`);
  console.log(`| first contentful paint, median of ${RUNS} | ${median(loads.map((l) => l.fcp ?? NaN)).toFixed(0)} ms |`);
  console.log(`| DOMContentLoaded, median of ${RUNS} | ${median(loads.map((l) => l.dcl)).toFixed(0)} ms |`);
  console.log(`| navigation start to first card visible, median of ${RUNS} | ${median(loads.map((l) => l.wall))} ms |`);
} finally {
  await browser.close();
  await server.stop();
}
