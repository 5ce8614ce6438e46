// A small end-to-end harness: starts `cairn serve` (with the SPA it carries) on
// a fresh temp database and a free port, drives Debian's Chromium through
// playwright-core, saves a screenshot per scenario under tests/artifacts/e2e/, and prints
// `N passed, N failed`. A scenario fails on an uncaught page error and on any
// Content-Security-Policy violation (console or `securitypolicyviolation`).
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const repoRoot = resolve(fileURLToPath(new URL("../..", import.meta.url)));
export const artifacts = join(repoRoot, "tests", "artifacts", "e2e");

export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  // The DNS-rebinding scenario's attacker name resolves to this machine.
  "--host-resolver-rules=MAP evil.test 127.0.0.1",
];

export function cairnBinary() {
  if (process.env.CAIRN_BIN) return process.env.CAIRN_BIN;
  const target = process.env.CARGO_TARGET_DIR ?? join(repoRoot, "target");
  return join(target, "debug", "cairn");
}

async function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.once("error", fail);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Servers still running if the runner itself is interrupted: stopped on the way out.
const running = new Set();
const tempDirs = new Set();
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    for (const child of running) child.kill("SIGKILL");
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
    process.exit(130);
  });
}

/**
 * A running `cairn serve` on a fresh database in its own temp directory,
 * which is also its working directory (the SPA comes from the binary).
 * `kill()` and `start()` stop it hard and start it again on the same port and
 * database; `cli(args)` runs a tool command on that database.
 */
export async function startServer(name, extraArgs = []) {
  // Dev aid: CAIRN_E2E_URL points the scenarios at a server you already run.
  if (process.env.CAIRN_E2E_URL) return attachedServer(process.env.CAIRN_E2E_URL);
  const dir = await mkdtemp(join(tmpdir(), `cairn-e2e-${name}-`));
  tempDirs.add(dir);
  const dbDir = join(dir, "store");
  await mkdir(dbDir);
  const db = join(dbDir, "cairn.db");
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const log = [];
  let child = null;
  let exited = null;

  const launch = async () => {
    exited = null;
    child = spawn(cairnBinary(), ["serve", "--db", db, "--bind", `127.0.0.1:${port}`, ...extraArgs], {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, RUST_LOG: process.env.RUST_LOG ?? "warn" },
    });
    const mine = child;
    mine.stdout.on("data", (d) => log.push(String(d)));
    mine.stderr.on("data", (d) => log.push(String(d)));
    running.add(mine);
    mine.once("exit", (code) => {
      if (child === mine) exited = code ?? "signal";
      running.delete(mine);
    });
    mine.once("error", (e) => {
      if (child === mine) exited = `an error (${e.message}); is CARGO_TARGET_DIR set?`;
      running.delete(mine);
    });
    const fail = async (message) => {
      if (exited === null) mine.kill("SIGKILL");
      await rm(dir, { recursive: true, force: true });
      throw new Error(`${message}:\n${log.join("")}`);
    };
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (exited !== null) await fail(`cairn serve exited with ${exited}`);
      try {
        // 200, or 401 from a server started with --token: either way it is serving.
        const r = await fetch(`${base}/api/v1/health`);
        if (r.status === 200 || r.status === 401) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) await fail("cairn serve did not answer /api/v1/health within 30 s");
      await sleep(100);
    }
  };

  const halt = async (signal) => {
    if (exited !== null) return;
    child.kill(signal);
    const t = Date.now();
    while (exited === null && Date.now() - t < 5000) await sleep(50);
    if (exited === null) child.kill("SIGKILL");
    while (exited === null) await sleep(50);
  };

  await launch();
  return {
    base,
    dir,
    dbDir,
    db,
    log,
    /** JSON API call from the test itself (a "second client"). */
    api: (method, path, body) => callApi(base, method, path, body),
    /** Kills the server (SIGKILL: no graceful shutdown, streams just drop). */
    kill: () => halt("SIGKILL"),
    /** Starts it again on the same port and database. */
    start: launch,
    /** Runs `cairn <args>` on this server's database; resolves to the envelope it printed. */
    cli: (args) => runCli(["--db", db, ...args], dir),
    async stop() {
      await halt("SIGTERM");
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function runCli(args, cwd) {
  return new Promise((ok, fail) => {
    const cli = spawn(cairnBinary(), args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    cli.stdout.on("data", (d) => (out += d));
    cli.stderr.on("data", (d) => (err += d));
    cli.once("error", fail);
    cli.once("exit", (code) => {
      try {
        const envelope = JSON.parse(out);
        if (code !== 0 || !envelope.ok) throw new Error(`exit ${code}`);
        ok(envelope);
      } catch (e) {
        fail(new Error(`cairn ${args.join(" ")} failed (${e.message}): ${out}${err}`));
      }
    });
  });
}

async function callApi(base, method, path, body) {
  const r = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = { raw: text };
  }
  return { status: r.status, headers: r.headers, ...json };
}

function attachedServer(base) {
  const unsupported = async () => {
    throw new Error("not possible against CAIRN_E2E_URL: the scenario needs a server of its own");
  };
  return {
    base,
    dir: null,
    dbDir: null,
    db: null,
    log: [],
    api: (m, p, b) => callApi(base, m, p, b),
    kill: unsupported,
    start: unsupported,
    cli: unsupported,
    stop: async () => {},
  };
}

/** The `securitypolicyviolation` events each page saw, as one line each. */
const cspEvents = new WeakMap();

export async function launchBrowser() {
  const profile = await mkdtemp(join(tmpdir(), "cairn-e2e-chromium-"));
  tempDirs.add(profile);
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 860 },
  });
  // Every document reports its CSP violations to the runner (init scripts and
  // bindings are installed over CDP, so the page's own CSP does not stop them).
  await context.exposeBinding("__cairnCspViolation", ({ page }, line) => cspEvents.get(page)?.push(line));
  await context.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) =>
      globalThis.__cairnCspViolation(`${e.effectiveDirective} blocked ${e.blockedURI || "inline"} at ${e.documentURI}`),
    );
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

export function assert(cond, message) {
  if (!cond) throw new Error(`assertion failed: ${message}`);
}

/**
 * A scenario that provokes CSP violations on purpose: waits until both the
 * console and the DOM event have reported them, checks that each one matches
 * `expected`, and clears them so that only unexpected ones fail the scenario.
 */
export async function expectCspViolations(csp, expected, what) {
  const deadline = Date.now() + 5000;
  const reported = () => csp.some((v) => v.startsWith("console:")) && csp.some((v) => !v.startsWith("console:"));
  while (!reported() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert(reported(), `${what} is reported by the console and by securitypolicyviolation (got: ${csp.join("; ")})`);
  const other = csp.filter((v) => !expected.test(v));
  assert(other.length === 0, `only ${what}: ${other.join("; ")}`);
  csp.length = 0;
}

/** Runs scenarios one after another; each gets a fresh page. */
export async function runScenarios(scenarios, only) {
  await mkdir(artifacts, { recursive: true });
  const browser = await launchBrowser();
  let passed = 0;
  let failed = 0;
  try {
    for (const [name, fn] of scenarios) {
      if (only && !name.includes(only)) continue;
      const consoleErrors = [];
      // A CSP violation fails the scenario, whether the console or the DOM reports it.
      const csp = [];
      const pages = [];
      /** A page whose errors and CSP violations count against the scenario. */
      const newPage = async () => {
        const p = await browser.context.newPage();
        pages.push(p);
        p.on("pageerror", (e) => consoleErrors.push(String(e)));
        cspEvents.set(p, csp);
        p.on("console", (m) => {
          if (/content security policy/i.test(m.text())) csp.push(`console: ${m.text()}`);
        });
        return p;
      };
      const page = await newPage();
      const started = Date.now();
      const shot = (suffix = "", of = page) =>
        of.screenshot({ path: join(artifacts, `${name.replace(/[^a-z0-9]+/gi, "-")}${suffix}.png`), fullPage: true });
      try {
        await fn({ page, shot, csp, newPage });
        assert(consoleErrors.length === 0, `uncaught page errors: ${consoleErrors.join("; ")}`);
        assert(csp.length === 0, `CSP violations: ${csp.join("; ")}`);
        await shot();
        passed++;
        console.log(`ok   ${name} (${Date.now() - started} ms)`);
      } catch (err) {
        failed++;
        console.log(`FAIL ${name}: ${err.stack ?? err}`);
        await shot("-failed").catch(() => {});
      } finally {
        for (const p of pages) await p.close().catch(() => {});
      }
    }
  } finally {
    await browser.close();
  }
  console.log(`screenshots: ${artifacts}`);
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 && passed > 0;
}
