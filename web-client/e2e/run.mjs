// End-to-end scenarios in headless Chromium against a real `cairn serve`.
// Usage: node e2e/run.mjs [name-filter]   (the SPA must be built: npm run build)
import { spawn } from "node:child_process";
import { rm } from "node:fs/promises";
import { assert, expectCspViolations, runScenarios, startServer } from "./harness.mjs";
import { PLANTED_TITLE, startRebinder } from "./rebinding.mjs";

const AGENT = "e2e-agent";
let shared;

const column = (page, status, title) => page.locator(`section.column[data-status="${status}"] li.card`, { hasText: title });

async function createTask(server, title, extra = {}) {
  const r = await server.api("POST", "/tasks", { title, ...extra });
  assert(r.status === 201, `create task answered ${r.status}: ${JSON.stringify(r)}`);
  return r.data;
}

async function errorPanel(page) {
  const panel = page.locator('[data-testid="error-panel"]').first();
  await panel.waitFor();
  return {
    panel,
    category: await panel.getAttribute("data-category"),
    code: await panel.getAttribute("data-code"),
    requestId: (await panel.locator('[data-testid="request-id"]').textContent())?.trim(),
    hasRetry: (await panel.locator('[data-testid="retry"]').count()) > 0,
  };
}

/** Holds SQLite's write lock on the store until released: every write meets a busy store. */
function lockStoreWrites(db) {
  const py = spawn(
    "python3",
    [
      "-c",
      [
        "import sqlite3, sys",
        "c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)",
        "c.execute('BEGIN IMMEDIATE')",
        "print('locked', flush=True)",
        "sys.stdin.read()",
        "c.execute('ROLLBACK')",
      ].join("\n"),
      db,
    ],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  return new Promise((ok, fail) => {
    py.once("error", fail);
    const early = (code) => fail(new Error(`store lock helper exited early (${code})`));
    py.once("exit", early);
    py.stdout.once("data", () => {
      py.off("exit", early);
      ok({
        release: () =>
          new Promise((done) => {
            py.once("exit", done);
            py.stdin.end();
          }),
      });
    });
  });
}

/** Starts a server with `args`, opens the attacker's page in front of it, and returns what its script got. */
async function playRebinding(page, name, args = []) {
  const server = await startServer(name, args);
  try {
    await createTask(server, "Secret plan");
    const attacker = await startRebinder(Number(new URL(server.base).port));
    try {
      await page.goto(`${attacker.origin}/`);
      await page.waitForFunction(() => window.__attack !== undefined, null, { timeout: 15_000 });
      const attack = await page.evaluate(() => window.__attack);
      const after = await server.api("GET", "/tasks");
      const planted = after.data.items.filter((t) => t.title === PLANTED_TITLE).length;
      return { ...attack, planted };
    } finally {
      await attacker.close();
    }
  } finally {
    await server.stop();
  }
}

/** Waits until the page's live feed is connected. */
const liveOn = (page, timeout = 10_000) =>
  page.locator('[data-testid="live-status"][data-state="live"]').waitFor({ timeout });

/** Opens the board and marks the document, so that a reload would show (the mark would be gone). */
async function openBoard(page, base) {
  await page.goto(`${base}/#/board`);
  await page.locator('[data-testid="board"]').waitFor();
  await liveOn(page);
  await page.evaluate(() => (window.__sameDocument = true));
}

async function assertNotReloaded(page, what) {
  assert((await page.evaluate(() => window.__sameDocument)) === true, `${what} was not reloaded`);
}

/** The card is in `status` on every page within `ms` (and, if asked, highlighted as moved by someone else). */
async function seenOnAll(pages, status, title, { ms = 1000, moved = false } = {}) {
  const selector = `section.column[data-status="${status}"] li.card${moved ? '[data-moved="true"]' : ""}`;
  await Promise.all(pages.map((p) => p.locator(selector, { hasText: title }).waitFor({ timeout: ms })));
}

const scenarios = [
  [
    "security: a DNS-rebinding page can neither read nor write",
    async ({ page, shot }) => {
      const attack = await playRebinding(page, "rebinding");
      assert(attack.read === 403, `the read is refused (got ${attack.read})`);
      assert(!attack.readBody.includes("Secret plan"), "no task reaches the attacker");
      assert(attack.readBody.includes("host_not_allowed"), `refused as host_not_allowed: ${attack.readBody}`);
      assert(attack.write === 403, `the write is refused (got ${attack.write})`);
      assert(attack.planted === 0, `no task was planted (${attack.planted})`);
      await shot();
    },
  ],
  [
    "security: the same page against --allowed-hosts evil.test reads and writes",
    async ({ page, shot }) => {
      const attack = await playRebinding(page, "rebinding-allowed", ["--allowed-hosts", "evil.test"]);
      assert(attack.read === 200, `the read is served (got ${attack.read})`);
      assert(attack.readBody.includes("Secret plan"), "the task list is readable");
      assert(attack.write === 201, `the write is served (got ${attack.write})`);
      assert(attack.planted === 1, `the task was planted (${attack.planted})`);
      await shot();
    },
  ],
  [
    "security: the SPA's policy blocks inline script and style, and the check sees it",
    async ({ page, csp }) => {
      await page.goto(`${shared.base}/#/board`);
      await page.locator('[data-testid="board"]').waitFor();
      assert(csp.length === 0, `the SPA runs under its policy: ${csp.join("; ")}`);
      await page.evaluate(() => {
        const s = document.createElement("script");
        s.textContent = "window.__inline = 1";
        document.head.append(s);
      });
      const ran = await page.evaluate(() => window.__inline);
      assert(ran === undefined, "the inline script did not run");
      await expectCspViolations(csp, /inline script|script-src-elem/, "the blocked inline script");
      await page.evaluate(() => document.body.setAttribute("style", "background: red"));
      await expectCspViolations(csp, /inline style|style-src-attr/, "the blocked inline style");
    },
  ],
  [
    "docs: Swagger UI loads under its policy and makes a call",
    async ({ page, shot }) => {
      await page.goto(`${shared.base}/docs/`);
      const op = page.locator("#operations-system-health");
      await op.waitFor();
      await op.locator(".opblock-summary").click();
      await op.getByRole("button", { name: "Try it out" }).click();
      await op.getByRole("button", { name: "Execute" }).click();
      const status = op.locator(".live-responses-table tr.response .response-col_status").first();
      await status.waitFor();
      const code = (await status.textContent())?.trim();
      assert(code === "200", `the call answered 200 (got ${code})`);
      await shot();
    },
  ],
  [
    "board: create, claim, complete moves the card across columns",
    async ({ page, shot }) => {
      const title = `Write the e2e suite ${Date.now()}`;
      await page.goto(`${shared.base}/#/board`);
      await page.locator('[data-testid="board"]').waitFor();
      await page.fill('[data-testid="agent-name"]', AGENT);
      await page.fill('[data-testid="new-task-title"]', title);
      await page.click('[data-testid="create-task"]');
      await column(page, "open", title).waitFor();

      await column(page, "open", title).locator('button[data-action="claim"]').click();
      const claimed = column(page, "claimed", title);
      await claimed.waitFor();
      await page.waitForTimeout(300); // the live feed's echo of this claim has arrived by now
      assert((await claimed.getAttribute("data-moved")) === null, "this page's own move is not highlighted");
      const claimText = await claimed.locator('[data-testid="claim"]').textContent();
      assert(claimText?.includes(AGENT), `claim line names the agent: ${claimText}`);
      assert(/expires/.test(claimText ?? ""), `claim line shows the expiry: ${claimText}`);
      await shot("-claimed");

      await claimed.locator('button[data-action="complete"]').click();
      await column(page, "done", title).waitFor();
      await page.waitForFunction(
        (t) => document.activeElement?.matches("li.card") && document.activeElement.textContent.includes(t),
        title,
      );
      assert((await column(page, "open", title).count()) === 0, "no longer open");
      assert((await column(page, "claimed", title).count()) === 0, "no longer claimed");

      // The agent name is remembered.
      await page.reload();
      await page.locator('[data-testid="board"]').waitFor();
      assert((await page.inputValue('[data-testid="agent-name"]')) === AGENT, "agent name survives a reload");
    },
  ],
  [
    "live: two boards follow a task created, claimed and completed over HTTP within a second",
    async ({ page, newPage, shot }) => {
      const other = await newPage();
      await Promise.all([openBoard(page, shared.base), openBoard(other, shared.base)]);
      const both = [page, other];
      const title = `Live task ${Date.now()}`;

      const task = await createTask(shared, title);
      await seenOnAll(both, "open", title);

      const claimed = await shared.api("POST", `/tasks/${task.id}/claim`, { agent: "remote-agent" });
      assert(claimed.status === 200, `claim answered ${claimed.status}`);
      await seenOnAll(both, "claimed", title, { moved: true });
      assert((await column(page, "open", title).count()) === 0, "no longer open");
      const claimLine = await column(other, "claimed", title).locator('[data-testid="claim"]').textContent();
      assert(claimLine?.includes("remote-agent"), `the claim shows its holder: ${claimLine}`);
      await shot("-claimed-page-1");
      await shot("-claimed-page-2", other);

      const done = await shared.api("POST", `/tasks/${task.id}/complete`, { agent: "remote-agent" });
      assert(done.status === 200, `complete answered ${done.status}`);
      await seenOnAll(both, "done", title, { moved: true });
      assert((await column(other, "claimed", title).count()) === 0, "no longer claimed");
      for (const p of both) await assertNotReloaded(p, "the board");
      await shot("-done-page-2", other);
    },
  ],
  [
    "live: a restarted server shows reconnecting, then the board catches up",
    async ({ page, shot }) => {
      const server = await startServer("live-restart");
      try {
        const before = await createTask(server, "Done while the server was down");
        await openBoard(page, server.base);
        await column(page, "open", before.title).waitFor();

        await server.kill();
        await page.locator('[data-testid="live-status"][data-state="reconnecting"]').waitFor({ timeout: 5000 });
        await shot("-reconnecting");

        // Meanwhile an agent works on the same database through the CLI.
        await server.cli(["task_create", "--title", "Created while the server was down"]);
        await server.cli(["task_complete", before.id, "--agent", "cli-agent"]);

        await server.start();
        await liveOn(page, 15_000);
        await column(page, "open", "Created while the server was down").waitFor({ timeout: 5000 });
        await column(page, "done", before.title).waitFor({ timeout: 5000 });
        assert((await column(page, "open", before.title).count()) === 0, "the completed task left the open column");

        // And it is live again: a change over HTTP arrives as before.
        const after = await createTask(server, "Created after the restart");
        await seenOnAll([page], "open", after.title);
        await assertNotReloaded(page, "the board");
        await shot("-caught-up");
      } finally {
        await server.stop();
      }
    },
  ],
  [
    "live: an edited task that changes elsewhere says so before saving; an untouched one updates",
    async ({ page, shot }) => {
      const task = await createTask(shared, "Edited in two places", { description: "first" });
      await page.goto(`${shared.base}/#/tasks/${task.id}`);
      await page.locator('[data-testid="task-detail"]').waitFor();
      await liveOn(page);

      // Untouched form: a change elsewhere is taken in place.
      let theirs = await shared.api("PATCH", `/tasks/${task.id}`, { description: "second" });
      assert(theirs.status === 200, `their edit answered ${theirs.status}`);
      await page.waitForFunction(
        () => document.querySelector('[data-testid="edit-description"]')?.value === "second",
        null,
        { timeout: 2000 },
      );
      assert((await page.textContent('[data-testid="task-version"]')) === String(task.version + 1), "version follows");

      // Edited form: the user is told before saving, and their edit is kept.
      await page.fill('[data-testid="edit-title"]', "My title");
      theirs = await shared.api("PATCH", `/tasks/${task.id}`, { description: "third" });
      await page.locator('[data-testid="stale-task"]').waitFor({ timeout: 2000 });
      const stale = await page.textContent('[data-testid="stale-version"]');
      assert(stale === String(task.version + 2), `the new version is shown (${stale})`);
      assert((await page.inputValue('[data-testid="edit-title"]')) === "My title", "the edit is kept");
      await shot("-stale");
      await page.click('[data-testid="stale-reapply"]');
      await page.locator('[data-testid="notice"]', { hasText: "reapplied" }).waitFor();
      assert((await page.inputValue('[data-testid="edit-description"]')) === "third", "their edit is loaded");
      await page.click('[data-testid="save-task"]');
      await page.locator('[data-testid="notice"]', { hasText: "Saved" }).waitFor();
      const saved = await shared.api("GET", `/tasks/${task.id}`);
      assert(saved.data.title === "My title" && saved.data.description === "third", "both edits saved");
    },
  ],
  [
    "live: the notes list shows a note written elsewhere",
    async ({ page }) => {
      await page.goto(`${shared.base}/#/notes`);
      await page.locator('[data-testid="new-note"]').waitFor();
      await liveOn(page);
      const title = `Live note ${Date.now()}`;
      const note = await shared.api("POST", "/notes", { title, content: "written by an agent" });
      assert(note.status === 201, `note created (${note.status})`);
      await page.locator("ul.list li", { hasText: title }).waitFor({ timeout: 2000 });
    },
  ],
  [
    "projects: a task made in a project is on its board only, and the project's URL reopens it",
    async ({ page, shot }) => {
      const key = `web-${Date.now().toString(36)}`;
      await openBoard(page, shared.base);

      // Created from the switcher, the new project is where the page goes.
      await page.click('[data-testid="new-project"]');
      await page.fill('[data-testid="new-project-key"]', key);
      await page.fill('[data-testid="new-project-name"]', "Web app");
      await page.click('[data-testid="create-project"]');
      await page.waitForURL(`**/#/p/${key}/board`);
      await page.locator('[data-testid="board"]').waitFor();
      await page.waitForFunction(
        (k) => document.querySelector('[data-testid="project-select"]')?.value === k,
        key,
      );
      const label = await page.locator(`[data-testid="project-select"] option[value="${key}"]`).textContent();
      assert(label === `Web app (${key})`, `the switcher names the project (${label})`);
      await liveOn(page);
      await assertNotReloaded(page, "switching to the new project");

      // A task made on this board is this project's, and not the default project's.
      const title = `Project task ${Date.now()}`;
      await page.fill('[data-testid="new-task-title"]', title);
      await page.click('[data-testid="create-task"]');
      const card = column(page, "open", title);
      await card.waitFor();
      const mine = await shared.api("GET", `/projects/${key}/tasks`);
      const task = mine.data.items.find((t) => t.title === title);
      assert(task, `the task is in project ${key}: ${JSON.stringify(mine.data.items.map((t) => t.title))}`);
      const theirs = await shared.api("GET", "/tasks?limit=200");
      assert(!theirs.data.items.some((t) => t.title === title), "the task is not in the default project");
      const cardHref = await card.locator("a.card-title").getAttribute("href");
      assert(cardHref === `#/p/${key}/tasks/${task.id}`, `the card links into the project (${cardHref})`);

      // The project's live stream: a task made over HTTP in it shows up without a reload.
      const remoteTitle = `Made by an agent ${Date.now()}`;
      const remote = await shared.api("POST", `/projects/${key}/tasks`, { title: remoteTitle });
      assert(remote.status === 201, `project task create answered ${remote.status}`);
      await seenOnAll([page], "open", remoteTitle);
      await shot("-project-board");

      // The default project's board does not have it.
      await page.selectOption('[data-testid="project-select"]', "default");
      await page.waitForURL(/#\/board$/);
      await page.locator('[data-testid="board"]').waitFor();
      await liveOn(page);
      assert((await page.locator("li.card", { hasText: title }).count()) === 0, "not on the default board");
      await shot("-default-board");

      // The project's URL, loaded afresh, opens the same board, and a task's URL the task.
      await page.goto(`${shared.base}/#/p/${key}/board`);
      await page.reload();
      await column(page, "open", title).waitFor();
      assert((await page.inputValue('[data-testid="project-select"]')) === key, "the switcher shows the project");
      // Its stream resumes from the project's own head (which is past 0 now).
      await liveOn(page);
      await page.goto(`${shared.base}/#/p/${key}/tasks/${task.id}`);
      await page.reload();
      await page.locator('[data-testid="task-detail"] h1', { hasText: title }).waitFor();

      // The same key again: the server's project_exists, in the form.
      await page.click('[data-testid="new-project"]');
      await page.fill('[data-testid="new-project-key"]', key);
      await page.click('[data-testid="create-project"]');
      const taken = await errorPanel(page);
      assert(taken.code === "project_exists", `project_exists shown (got ${taken.code})`);
      await page.click('[data-testid="cancel-new-project"]');

      // Archived: said so, and a write shows project_archived.
      const archived = await shared.api("PATCH", `/projects/${key}`, { archived: true });
      assert(archived.status === 200 && archived.data.archived, `archive answered ${archived.status}`);
      await page.goto(`${shared.base}/#/p/${key}/board`);
      await page.reload();
      await page.locator('[data-testid="project-archived"]').waitFor();
      await column(page, "open", title).waitFor();
      await page.fill('[data-testid="new-task-title"]', "Refused in an archived project");
      await page.click('[data-testid="create-task"]');
      const refused = await errorPanel(page);
      assert(refused.code === "project_archived", `project_archived shown (got ${refused.code})`);
      assert(!refused.hasRetry, "no retry for an archived project");
      await shot("-archived");

      // A project that is not there says so, and leads back to the default one.
      await page.goto(`${shared.base}/#/p/no-such-project/board`);
      const missing = await errorPanel(page);
      assert(missing.code === "project_not_found", `project_not_found shown (got ${missing.code})`);
      await page.locator('[data-testid="error-panel"] a', { hasText: "Back to the default project" }).click();
      await page.waitForURL(/#\/board$/);
      await page.locator('[data-testid="board"]').waitFor();
    },
  ],
  [
    "board: keyboard navigation and a 360 px layout",
    async ({ page, shot }) => {
      await createTask(shared, "Keyboard A");
      const b = await createTask(shared, "Keyboard B");
      await shared.api("POST", `/tasks/${b.id}/claim`, { agent: "someone" });
      await page.goto(`${shared.base}/#/board`);
      await page.locator('section.column[data-status="open"] li.card').first().waitFor();
      await page.locator('section.column[data-status="open"] li.card').first().focus();
      await page.keyboard.press("ArrowRight");
      const col = await page.evaluate(() => document.activeElement?.getAttribute("data-col"));
      assert(col === "1", `ArrowRight moves focus to the claimed column (got ${col})`);
      await page.keyboard.press("ArrowLeft");
      await page.keyboard.press("Enter");
      await page.locator('[data-testid="task-detail"]').waitFor();

      await page.setViewportSize({ width: 360, height: 740 });
      await page.goto(`${shared.base}/#/board`);
      await page.locator('[data-testid="board"]').waitFor();
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert(width <= 360, `no horizontal overflow at 360 px (scrollWidth ${width})`);
      const unlabeled = await page.evaluate(
        () =>
          [...document.querySelectorAll("input, textarea, select")].filter(
            (el) => !el.closest("label") && !el.getAttribute("aria-label") && !el.id,
          ).length,
      );
      assert(unlabeled === 0, `every input has a label (${unlabeled} without)`);
      await shot("-360px");
    },
  ],
  [
    "board: a long column pages on with its own cursor",
    async ({ page, shot }) => {
      for (let i = 0; i < 60; i++) await createTask(shared, `Paged task ${i}`);
      await page.goto(`${shared.base}/#/board`);
      const open = page.locator('section.column[data-status="open"]');
      await open.locator("li.card").first().waitFor();
      const before = await open.locator("li.card").count();
      const total = Number(await open.locator("h2 .count").textContent());
      assert(before === 50 && total > 50, `first page holds 50 of ${total} (got ${before})`);
      const asked = page.waitForRequest((r) => r.url().includes("/api/v1/board?"));
      await open.getByRole("button", { name: "Load more" }).click();
      const query = new URL((await asked).url()).searchParams;
      assert(
        query.getAll("columns").join(",") === "open" && query.has("open_cursor"),
        `Load more asks for the open column only (${query})`,
      );
      await page.waitForFunction(
        (n) => document.querySelectorAll('section.column[data-status="open"] li.card').length > n,
        before,
      );
      const after = await open.locator("li.card").count();
      assert(after === Math.min(total, 100), `the second page is appended (${after} of ${total})`);
      const ids = await open.locator("li.card").evaluateAll((els) => els.map((e) => e.getAttribute("data-task-id")));
      assert(new Set(ids).size === ids.length, "no card appears twice");
      await shot();
    },
  ],
  [
    "layout: every view fits a 360 px screen",
    async ({ page, shot }) => {
      const long = "A-very-long-unbroken-title-" + "x".repeat(80);
      // A tag may be 50 characters: the longest one, unbroken.
      const task = await createTask(shared, long, { description: long, tags: [long.slice(0, 50)] });
      const note = await shared.api("POST", "/notes", { title: `Narrow ${Date.now()}`, content: `# ${long}\n\n\`\`\`\n${long} ${long}\n\`\`\`\n\n| a | b |\n|---|---|\n| ${long} | ${long} |` });
      assert(note.status === 201, `note created (${note.status})`);
      await page.setViewportSize({ width: 360, height: 740 });
      const views = [
        ["board", "#/board", '[data-testid="board"]'],
        ["task", `#/tasks/${task.id}`, '[data-testid="task-detail"]'],
        ["notes", "#/notes", "ul.list li"],
        ["note", `#/notes/${note.data.id}`, '[data-testid="note-body"]'],
        ["new-note", "#/notes/new", '[data-testid="note-content-input"]'],
        ["search", "#/search?q=unbroken", '[data-testid="search-hit"]'],
        ["graph", `#/graph/${note.data.id}`, '[data-testid="graph-svg"]'],
      ];
      const wide = [];
      for (const [name, hash, ready] of views) {
        await page.goto(`${shared.base}/${hash}`);
        await page.locator(ready).first().waitFor();
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        if (width > 360) wide.push(`${name}: ${width}px`);
        await shot(`-${name}`);
      }
      assert(wide.length === 0, `views wider than 360 px: ${wide.join(", ")}`);
    },
  ],
  [
    "task: a version conflict from a second client shows the conflict and reapplies",
    async ({ page, shot }) => {
      const task = await createTask(shared, "Conflicted task", { description: "original" });
      await page.goto(`${shared.base}/#/tasks/${task.id}`);
      await page.locator('[data-testid="task-detail"]').waitFor();
      await page.fill('[data-testid="edit-title"]', "My better title");

      const theirs = await shared.api("PATCH", `/tasks/${task.id}`, {
        expected_version: task.version,
        description: "changed by another client",
      });
      assert(theirs.status === 200, `second client's edit answered ${theirs.status}`);

      await page.click('[data-testid="save-task"]');
      const conflict = page.locator('[data-testid="version-conflict"]');
      await conflict.waitFor();
      const { code, hasRetry } = await errorPanel(page);
      // The editor writes with If-Match: the lost race is a 412.
      assert(code === "precondition_failed", `code shown: ${code}`);
      assert(!hasRetry, "a conflict offers no blind retry");
      const current = await page.textContent('[data-testid="conflict-current"]');
      assert(current === String(task.version + 1), `conflict shows the current version (${current})`);
      await shot("-conflict");

      await page.click('[data-testid="reload-reapply"]');
      await page.locator('[data-testid="notice"]', { hasText: "reapplied" }).waitFor();
      assert((await page.inputValue('[data-testid="edit-title"]')) === "My better title", "my edit is kept");
      assert(
        (await page.inputValue('[data-testid="edit-description"]')) === "changed by another client",
        "their edit is loaded",
      );
      await page.click('[data-testid="save-task"]');
      await page.locator('[data-testid="notice"]', { hasText: "Saved" }).waitFor();
      const after = await shared.api("GET", `/tasks/${task.id}`);
      assert(after.data.title === "My better title", "title saved");
      assert(after.data.description === "changed by another client", "their description kept");
    },
  ],
  [
    "notes: write a note with a [[link]], follow it; a second write links to the existing note",
    async ({ page, shot, csp }) => {
      await page.goto(`${shared.base}/#/notes/new`);
      await page.fill('[data-testid="note-title-input"]', "Deploy Guide");
      await page.fill('[data-testid="note-content-input"]', "How to **deploy** cairn.");
      await page.fill('input[name="source_url"]', "https://example.org/deploy");
      await page.click('[data-testid="save-note"]');
      await page.locator('[data-testid="note-title"]', { hasText: "Deploy Guide" }).waitFor();

      await page.goto(`${shared.base}/#/notes/new`);
      await page.fill('[data-testid="note-title-input"]', "Runbook");
      await page.fill(
        '[data-testid="note-content-input"]',
        [
          "Read [[Deploy Guide]] first.",
          "",
          '<img src="x" onerror="window.__xss = 1">',
          "",
          "<script>window.__xss = 2</script>",
          "",
          "[a bad link](javascript:window.__xss=3)",
        ].join("\n"),
      );
      await page.click('[data-testid="save-note"]');
      await page.locator('[data-testid="note-title"]', { hasText: "Runbook" }).waitFor();
      // The hostile note's `onerror` handler: DOMPurify removes it, and Chromium
      // reports (and blocks) it already when the sanitizer parses the HTML.
      await expectCspViolations(csp, /inline event handler|script-src-attr/, "the note's blocked event handler");
      const body = page.locator('[data-testid="note-body"]');
      assert((await body.locator("script").count()) === 0, "no script element rendered");
      assert(!(await body.innerHTML()).includes("onerror"), "no event handler attributes");
      const hrefs = await body.locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("href") ?? ""));
      assert(!hrefs.some((h) => /^\s*javascript:/i.test(h)), `no javascript: links: ${hrefs}`);
      await shot("-runbook");

      const wiki = body.locator("a.wikilink", { hasText: "Deploy Guide" });
      const wikiHref = (await wiki.getAttribute("href")) ?? "";
      assert(/^#\/notes\/[0-9a-f]{32}$/.test(wikiHref), `the resolved [[link]] goes straight to the note (${wikiHref})`);
      await wiki.click();
      await page.locator('[data-testid="note-title"]', { hasText: "Deploy Guide" }).waitFor();
      const xss = await page.evaluate(() => window.__xss);
      assert(xss === undefined, `no injected script ran (window.__xss = ${xss})`);

      // Writing the same title again collides with the existing note, and links to it.
      await page.goto(`${shared.base}/#/notes/new`);
      await page.fill('[data-testid="note-title-input"]', "Deploy Guide");
      await page.fill('[data-testid="note-content-input"]', "How to **deploy** cairn.");
      await page.click('[data-testid="save-note"]');
      const e = await errorPanel(page);
      assert(e.code === "slug_collision", `slug collision shown (got ${e.code})`);
      await page.locator('[data-testid="existing-note"] a', { hasText: "Deploy Guide" }).waitFor();
      await shot("-slug-collision");

      // Another title from the same source is a duplicate of the existing note.
      await page.fill('[data-testid="note-title-input"]', "Deploying, again");
      await page.fill('input[name="source_url"]', "https://example.org/deploy");
      await page.click('[data-testid="save-note"]');
      await page.locator('[data-testid="error-panel"][data-code="duplicate"]').waitFor();
      await shot("-duplicate");
      await page.locator('[data-testid="existing-note"] a', { hasText: "Deploy Guide" }).click();
      await page.locator('[data-testid="note-title"]', { hasText: "Deploy Guide" }).waitFor();

      // The wiki-link is an edge: the graph of Deploy Guide shows Runbook.
      await page.click("text=Graph");
      await page.locator('[data-testid="graph-svg"]').waitFor();
      const labels = await page.locator('[data-testid="graph-svg"] text').allTextContents();
      assert(labels.includes("Runbook") && labels.includes("Deploy Guide"), `graph shows both notes: ${labels}`);
      await shot("-graph");
    },
  ],
  [
    "search: a query shows hits with highlighted snippets",
    async ({ page, shot }) => {
      await createTask(shared, "Calibrate the zephyr sensor", { description: "the zephyr drifts <b>badly</b>" });
      await page.goto(`${shared.base}/#/search`);
      await page.fill('[data-testid="search-input"]', "zephyr");
      await page.click('[data-testid="search-submit"]');
      const hit = page.locator('[data-testid="search-hit"]').first();
      await hit.waitFor();
      const marks = await hit.locator('[data-testid="snippet"] mark').allTextContents();
      assert(marks.some((m) => m.toLowerCase() === "zephyr"), `snippet highlights the match: ${JSON.stringify(marks)}`);
      const tags = await hit
        .locator('[data-testid="snippet"]')
        .evaluate((el) => [...el.querySelectorAll("*")].map((e) => e.tagName));
      assert(tags.every((t) => t === "MARK"), `snippet contains only <mark> elements: ${tags}`);
      await shot();
    },
  ],
  [
    "errors: a locked store is retryable and retry recovers; a removed store is retryable too",
    async ({ page, shot }) => {
      const server = await startServer("store");
      try {
        await createTask(server, "Survives the outage");
        await page.goto(`${server.base}/#/board`);
        await page.fill('[data-testid="agent-name"]', AGENT);
        const card = column(page, "open", "Survives the outage");
        await card.waitFor();

        // Another process holds the write lock: the claim waits out the busy timeout, then 503 store_busy.
        const lock = await lockStoreWrites(server.db);
        let released = false;
        try {
          await card.locator('button[data-action="claim"]').click();
          const e = await errorPanel(page);
          assert(e.category === "transient" && e.code === "store_busy", `store_busy shown (got ${e.category}/${e.code})`);
          assert(e.hasRetry, "a retry button is offered");
          assert(e.requestId && !e.requestId.startsWith("client-"), `the server's request id is shown (${e.requestId})`);
          await shot("-busy");
          await lock.release();
          released = true;
        } finally {
          if (!released) await lock.release();
        }
        await page.waitForFunction(() => {
          const b = document.querySelector('[data-testid="retry"]');
          return b && !b.hasAttribute("disabled");
        });
        await page.click('[data-testid="retry"]');
        await column(page, "claimed", "Survives the outage").waitFor();
        assert((await page.locator('[data-testid="error-panel"]').count()) === 0, "the error is gone after a successful retry");

        // The database directory disappears under the running server: writes answer store_unavailable.
        await rm(server.dbDir, { recursive: true, force: true });
        await page.fill('[data-testid="new-task-title"]', "Written after the store vanished");
        await page.click('[data-testid="create-task"]');
        const gone = await errorPanel(page);
        assert(gone.category === "unavailable" || gone.category === "transient", `retryable store failure (got ${gone.category}/${gone.code})`);
        assert(gone.hasRetry, "retry offered for an unavailable store");
        await shot("-store-removed");
      } finally {
        await server.stop();
      }
    },
  ],
  [
    "auth: a server started with a token asks for it, then works",
    async ({ page, shot }) => {
      const server = await startServer("token", ["--token", "e2e-token-123"]);
      try {
        await page.goto(`${server.base}/#/board`);
        const e = await errorPanel(page);
        assert(e.code === "unauthorized", `unauthorized shown (got ${e.code})`);
        assert(!e.hasRetry, "no retry without a token");
        await shot("-asked");
        await page.fill('[data-testid="token-input"]', "e2e-token-123");
        await page.getByRole("button", { name: "Use token" }).click();
        await page.locator('[data-testid="board"]').waitFor();
        await page.waitForFunction(() => document.querySelector('[data-testid="server-status"]')?.textContent === "ok");
      } finally {
        await page.evaluate(() => localStorage.removeItem("cairn.token"));
        await server.stop();
      }
    },
  ],
  [
    "docs: Swagger UI has Authorize, and Try it out sends the bearer token",
    async ({ page, shot }) => {
      const token = "e2e-docs-token";
      const server = await startServer("docs-token", ["--token", token]);
      try {
        await page.goto(`${server.base}/docs/`);
        await page.locator("button.authorize").first().click();
        await page.locator(".auth-container input").first().fill(token);
        await page.locator(".auth-btn-wrapper button.authorize").click();
        await page.locator(".auth-btn-wrapper button.btn-done").click();
        await shot("-authorized");
        await page.locator("#operations-tasks-task_list .opblock-summary").click();
        await page.locator("#operations-tasks-task_list button.try-out__btn").click();
        const sent = page.waitForRequest((r) => r.url().includes("/api/v1/tasks"));
        await page.locator("#operations-tasks-task_list button.execute").click();
        const request = await sent;
        assert(request.headers()["authorization"] === `Bearer ${token}`, `the token was sent (${request.headers()["authorization"]})`);
        const response = await request.response();
        assert(response.status() === 200, `the call with it passed (${response.status()})`);
        await shot("-executed");
      } finally {
        await server.stop();
      }
    },
  ],
  [
    "errors: not found and a foreign error body are shown without retry",
    async ({ page, shot }) => {
      await page.goto(`${shared.base}/#/tasks/zzzzzzzzzzzz`);
      let e = await errorPanel(page);
      assert(e.category === "not_found", `not_found shown (got ${e.category}/${e.code})`);
      assert(!e.hasRetry, "no retry for not_found");
      await shot("-not-found");

      // A proxy in front of cairn answering with HTML: still a typed internal error.
      await page.route("**/api/v1/board*", (route) =>
        route.fulfill({ status: 500, contentType: "text/html", body: "<html><body>Internal proxy error</body></html>" }),
      );
      await page.goto(`${shared.base}/#/board`);
      e = await errorPanel(page);
      assert(e.code === "internal_error" && e.category === "internal", `internal error shown (got ${e.category}/${e.code})`);
      assert(!e.hasRetry, "no retry for a non-retryable internal error");
      await page.click('[data-testid="copy-request-id"]');
      await shot("-foreign-body");
      await page.unroute("**/api/v1/board*");
    },
  ],
];

const only = process.argv[2];
let ok = false;
try {
  shared = await startServer("shared");
  ok = await runScenarios(scenarios, only);
} catch (err) {
  console.log(`e2e setup failed: ${err.stack ?? err}`);
  console.log("0 passed, 1 failed");
} finally {
  await shared?.stop();
}
process.exit(ok ? 0 : 1);
