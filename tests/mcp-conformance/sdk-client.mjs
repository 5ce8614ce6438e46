// MCP beyond tools, driven by the official TypeScript SDK
// (@modelcontextprotocol/sdk) over stdio and streamable HTTP: list and read
// resources, subscribe and get an update after a REST write, get each
// prompt, complete a prefix, set the log level and receive a log message,
// see progress on a long call (graph_doctor with fix) and cancel one.
//
// One `cairn serve` and one `cairn mcp` share a PostgreSQL schema, so a REST
// write reaches the stdio server through the change feed.
// Usage: node sdk-client.mjs PATH/TO/cairn POSTGRES_URL   (tests/run.sh does this)
import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

const [binary, pg] = process.argv.slice(2);
if (!binary || !pg) throw new Error('usage: node sdk-client.mjs PATH/TO/cairn POSTGRES_URL');

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

async function waitFor(what, label, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!what()) {
    if (Date.now() > deadline) throw new Error(`no ${label} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const schema = `mcp_ts_${process.pid}`;
const stamp = '2026-01-01T00:00:00.000000Z';
// Two broken links (a dangling one, a self loop) behind the tools' back.
const breakTheGraph = (taskId) => {
  const rows = [crypto.randomUUID(), crypto.randomUUID()].map((uuid, n) =>
    `('${uuid.replaceAll('-', '')}', '${taskId}', '${n ? taskId : '0'.repeat(32)}', 'blocks', '${stamp}')`);
  execFileSync('psql', [db, '-qc', `INSERT INTO links (id, source, target, kind, created_at) VALUES ${rows.join(', ')}`]);
};
execFileSync('psql', [pg, '-qc', `CREATE SCHEMA ${schema}`]);
const db = `${pg}${pg.includes('?') ? '&' : '?'}options=-csearch_path%3D${schema}`;
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const server = spawn(binary, ['--db', db, 'serve', '--bind', `127.0.0.1:${port}`], {
  env: { ...process.env, CAIRN_LOG: 'warn' },
  stdio: ['ignore', 'ignore', 'inherit'],
});

async function rest(method, path, body) {
  const response = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  assert.ok(response.ok, `${method} ${path}: ${response.status}`);
  return (await response.json()).data;
}

async function scenario(name, transport) {
  const client = new Client({ name: 'cairn-ts-test', version: '1.0.0' });
  const updated = [];
  const logs = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updated.push(n.params.uri));
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  await client.connect(transport);
  // Every message as it came off the wire, in order: the SDK hands
  // notifications to their handlers a microtask late, after a response read
  // from the same chunk, so ordering is checked here, not in the handlers.
  const wire = [];
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    wire.push(message);
    deliver?.call(transport, message, extra);
  };
  try {
    const task = await rest('POST', '/tasks', { title: `TS ${name}`, tags: [`ts-${name}`] });
    const note = await rest('POST', '/notes', { title: `TS note ${name}`, content: 'Hello.' });

    // List every page and read a note and a task.
    const uris = [];
    let cursor;
    do {
      const page = await client.listResources(cursor ? { cursor } : undefined);
      uris.push(...page.resources.map((r) => r.uri));
      cursor = page.nextCursor;
    } while (cursor);
    assert.equal(uris[0], 'cairn://board');
    assert.ok(uris.includes(`cairn://tasks/${task.id}`) && uris.includes(`cairn://notes/${note.slug}`), uris);
    const read = await client.readResource({ uri: `cairn://notes/${note.slug}` });
    assert.equal(read.contents[0].mimeType, 'text/markdown');
    assert.ok(read.contents[0].text.includes(`id: ${note.id}\n`), read.contents[0].text);
    const readTask = await client.readResource({ uri: `cairn://tasks/${task.id.slice(0, 6)}` });
    assert.equal(JSON.parse(readTask.contents[0].text).id, task.id);

    // Subscribe by prefix; a REST write notifies with the URI as subscribed.
    const uri = `cairn://tasks/${task.id.slice(0, 8)}`;
    await client.subscribeResource({ uri });
    await rest('POST', `/tasks/${task.id}/claim`, { agent: `ts-agent-${name}` });
    await waitFor(() => updated.includes(uri), `update for ${uri}`);

    // Each prompt.
    const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
    assert.deepEqual(prompts, ['claim_next_task', 'hand_over_task', 'summarise_board_changes']);
    const open = await rest('POST', '/tasks', { title: `TS open ${name}`, tags: [`ts-open-${name}`] });
    const claim = await client.getPrompt({ name: 'claim_next_task', arguments: { agent: 'ts', tag: `ts-open-${name}` } });
    assert.ok(claim.messages[0].content.text.includes(open.id), claim.messages[0].content.text);
    const hand = await client.getPrompt({
      name: 'hand_over_task',
      arguments: { task: task.id.slice(0, 6), agent: `ts-agent-${name}` },
    });
    assert.ok(hand.messages[0].content.text.includes(task.id));
    const summary = await client.getPrompt({ name: 'summarise_board_changes', arguments: {} });
    assert.ok(summary.messages[0].content.text.includes('task.claimed'));

    // Complete a prefix.
    const ids = await client.complete({
      ref: { type: 'ref/resource', uri: 'cairn://tasks/{id}' },
      argument: { name: 'id', value: task.id.slice(0, 4) },
    });
    assert.ok(ids.completion.values.includes(task.id), ids);
    const agents = await client.complete({
      ref: { type: 'ref/prompt', name: 'hand_over_task' },
      argument: { name: 'agent', value: 'ts-agent' },
    });
    assert.ok(agents.completion.values.includes(`ts-agent-${name}`), agents);

    // Log level, then a failure arrives as a log message.
    await client.setLoggingLevel('notice');
    await client.callTool({ name: 'task_get', arguments: { id: 'abcdef0123' } });
    await waitFor(() => logs.length > 0, 'log message');
    assert.equal(logs[0].level, 'notice');
    assert.equal(logs[0].data.code, 'task_not_found');
    // Progress on a long call, then a cancelled one; the session goes on.
    breakTheGraph(task.id);
    const reports = [];
    const sent = wire.length;
    const doctor = await client.callTool(
      { name: 'graph_doctor', arguments: { fix: true } },
      undefined,
      { onprogress: (p) => reports.push([p.progress, p.total]) },
    );
    assert.ok(JSON.parse(doctor.content[0].text).data.removed >= 2, doctor);
    const since = wire.slice(sent);
    const answer = since.findIndex((m) => m.result?.content?.[0]?.text?.includes('"graph_doctor"'));
    assert.ok(answer > 0, 'the answer came over the wire');
    const steps = since
      .slice(0, answer)
      .filter((m) => m.method === 'notifications/progress')
      .map((m) => [m.params.progress, m.params.total]);
    assert.deepEqual(steps, [[0, 3], [1, 3], [3, 3]], 'every step, in order, before the answer');
    for (const report of reports) assert.ok(steps.some((s) => s[0] === report[0] && s[1] === report[1]), report);
    breakTheGraph(task.id);
    const abort = new AbortController();
    const cancelled = client.callTool(
      { name: 'graph_doctor', arguments: { fix: true } },
      undefined,
      { signal: abort.signal, onprogress: () => abort.abort('enough') },
    );
    await assert.rejects(cancelled);
    const health = await client.callTool({ name: 'health', arguments: {} });
    assert.equal(JSON.parse(health.content[0].text).ok, true);
    console.log(`PASS ${name}`);
  } finally {
    await client.close();
  }
}

let failed = 0;
try {
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`${base}/api/v1/health/ready`)).ok) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  const transports = {
    stdio: () =>
      new StdioClientTransport({ command: binary, args: ['--db', db, 'mcp'], env: { ...process.env, CAIRN_LOG: 'warn' } }),
    http: () => new StreamableHTTPClientTransport(new URL(`${base}/mcp`)),
  };
  for (const [name, make] of Object.entries(transports)) {
    try {
      await scenario(name, make());
    } catch (error) {
      failed++;
      console.log(`FAIL ${name}`);
      console.error(error);
    }
  }
} finally {
  server.kill();
  execFileSync('psql', [pg, '-qc', `DROP SCHEMA ${schema} CASCADE`], { stdio: 'ignore' });
}
console.log(`mcp sdk-client: ${2 - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
