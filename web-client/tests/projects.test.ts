// Projects in the URL and in the API: `default` keeps the routes it has always
// had (`#/board`, `/api/v1/board`), any other project adds its key
// (`#/p/web/board`, `/api/v1/projects/web/board`).
import { afterEach, describe, expect, it } from "vitest";
import { callsIn, eventsUrl, updateTask } from "../src/api/calls";
import { createApi } from "../src/api/client";
import { currentProject, href, hrefsIn, parseHash, projectHash } from "../src/lib/router";
import { projectLabel } from "../src/views/Projects";

afterEach(() => {
  location.hash = "";
});

describe("routes", () => {
  it("reads today's URLs as the default project's", () => {
    expect(parseHash("#/board")).toMatchObject({ project: "default", parts: ["board"] });
    expect(parseHash("#/tasks/abc123")).toMatchObject({ project: "default", parts: ["tasks", "abc123"] });
    expect(parseHash("")).toMatchObject({ project: "default", parts: [] });
    expect(parseHash("#/search?q=p").query.get("q")).toBe("p");
  });

  it("reads a /p/KEY/ prefix as the project, and the rest as the page", () => {
    const r = parseHash("#/p/web/tasks/abc123");
    expect(r.project).toBe("web");
    expect(r.parts).toEqual(["tasks", "abc123"]);
    expect(parseHash("#/p/web/search?q=zephyr").query.get("q")).toBe("zephyr");
    expect(parseHash("#/p/web")).toMatchObject({ project: "web", parts: [] });
    expect(parseHash("#/p/default/board")).toMatchObject({ project: "default", parts: ["board"] });
  });

  it("writes the default project's links as before, and others' with the prefix", () => {
    expect(hrefsIn("default").task("abc123")).toBe("#/tasks/abc123");
    expect(hrefsIn("default").search("a b")).toBe("#/search?q=a%20b");
    expect(hrefsIn("web").task("abc123")).toBe("#/p/web/tasks/abc123");
    expect(hrefsIn("web").newNote("Deploy Guide")).toBe("#/p/web/notes/new?title=Deploy%20Guide");
    expect(hrefsIn("web").node("note", "n1")).toBe("#/p/web/notes/n1");
    expect(projectHash("web-2", "board")).toBe("#/p/web-2/board");
  });

  it("reads back every link it writes", () => {
    for (const project of ["default", "web"]) {
      const to = hrefsIn(project);
      expect(parseHash(to.noteEdit("n1"))).toMatchObject({ project, parts: ["notes", "n1", "edit"] });
      expect(parseHash(to.noteResolve("A/B"))).toMatchObject({ project, parts: ["notes", "resolve", "A/B"] });
      expect(parseHash(to.graph("t1"))).toMatchObject({ project, parts: ["graph", "t1"] });
    }
  });

  it("links of the current page name the project its URL names", () => {
    expect(currentProject()).toBe("default");
    expect(href.board()).toBe("#/board");
    location.hash = "#/p/web/tasks/abc123";
    expect(currentProject()).toBe("web");
    expect(href.board()).toBe("#/p/web/board");
    expect(href.note("n1")).toBe("#/p/web/notes/n1");
  });
});

/** Calls as the views make them, against a fake server that records each request's method and path. */
function recorded(project: string) {
  const seen: string[] = [];
  const client = createApi({
    baseUrl: "http://cairn.test",
    fetch: async (input) => {
      const req = input as Request;
      const url = new URL(req.url);
      seen.push(`${req.method} ${url.pathname}${url.search}`);
      return Response.json({ data: {}, meta: {} });
    },
  });
  return { seen, client, calls: callsIn(client, () => project) };
}

describe("API routes", () => {
  it("the default project uses the routes without a project", async () => {
    const { seen, calls, client } = recorded("default");
    await calls.tasks.board();
    await calls.tasks.get("abc123");
    await calls.tasks.claim("abc123", "alice");
    await calls.notes.remove("n1", 2);
    await calls.search("zephyr");
    await calls.health();
    await calls.changes.head();
    await updateTask(client, "abc123", { title: "t" });
    expect(seen).toEqual([
      "GET /api/v1/board",
      "GET /api/v1/tasks/abc123",
      "POST /api/v1/tasks/abc123/claim",
      "DELETE /api/v1/notes/n1?expected_version=2",
      "GET /api/v1/search?q=zephyr&limit=20",
      "GET /api/v1/health",
      "GET /api/v1/changes?entity_id=-&limit=1",
      "PATCH /api/v1/tasks/abc123",
    ]);
  });

  it("another project uses its own copies of the same routes", async () => {
    const { seen, calls } = recorded("web");
    await calls.tasks.board({ limit: 5 });
    await calls.tasks.create({ title: "t" });
    await calls.tasks.update("abc123", { title: "t" });
    await calls.tasks.reopen("abc123");
    await calls.notes.list({ q: "x" });
    await calls.notes.update("n1", { title: "T", content: "c", expected_version: 1 });
    await calls.graph.neighbours("n1", 2);
    await calls.health();
    await calls.changes.after("42");
    expect(seen).toEqual([
      "GET /api/v1/projects/web/board?limit=5",
      "POST /api/v1/projects/web/tasks",
      "PATCH /api/v1/projects/web/tasks/abc123",
      "POST /api/v1/projects/web/tasks/abc123/reopen",
      "GET /api/v1/projects/web/notes?q=x",
      "PUT /api/v1/projects/web/notes/n1",
      "GET /api/v1/projects/web/graph/neighbours/n1?depth=2",
      "GET /api/v1/projects/web/health",
      "GET /api/v1/projects/web/changes?cursor=42&entity_id=-&limit=1",
    ]);
  });

  it("the project is read when each call is made, not when the calls are built", async () => {
    let project = "default";
    const seen: string[] = [];
    const client = createApi({
      baseUrl: "http://cairn.test",
      fetch: async (input) => {
        seen.push(new URL((input as Request).url).pathname);
        return Response.json({ data: {}, meta: {} });
      },
    });
    const calls = callsIn(client, () => project);
    await calls.tasks.board();
    project = "web";
    await calls.tasks.board();
    expect(seen).toEqual(["/api/v1/board", "/api/v1/projects/web/board"]);
  });

  it("the live stream follows the same rule", () => {
    expect(eventsUrl("default", "7")).toBe("/api/v1/events?after=7");
    expect(eventsUrl("web", "7")).toBe("/api/v1/projects/web/events?after=7");
  });
});

describe("projectLabel", () => {
  it("shows the name, the key when it says more, and archived", () => {
    expect(projectLabel({ key: "default", name: "Default", archived: false })).toBe("Default");
    expect(projectLabel({ key: "web", name: "Web app", archived: false })).toBe("Web app (web)");
    expect(projectLabel({ key: "old", name: "old", archived: true })).toBe("old — archived");
    expect(projectLabel({ key: "x", name: "", archived: false })).toBe("x");
  });
});
