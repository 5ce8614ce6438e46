// Entry: the header (nav, project, agent name), the routed view, the status line.
import { render } from "preact";
import { useState } from "preact/hooks";
import { hrefsIn, navigate, useRoute } from "./lib/router";
import { AgentInput, BoardView } from "./views/Board";
import { GraphView } from "./views/Graph";
import { NoteEditor, NoteResolve, NotesList, NoteView } from "./views/Notes";
import { ArchivedNotice, NewProjectForm, ProjectSwitcher, useProjects } from "./views/Projects";
import { SearchView } from "./views/Search";
import { StatusLine } from "./views/StatusLine";
import { TaskDetail } from "./views/TaskDetail";
import "./styles.css";

function View() {
  const { project, parts, query } = useRoute();
  const [head = "board", a, b] = parts;
  switch (head) {
    case "board":
      return <BoardView />;
    case "tasks":
      return a ? <TaskDetail id={a} key={a} /> : <BoardView />;
    case "notes":
      if (!a) return <NotesList q={query.get("q") ?? ""} />;
      if (a === "new") return <NoteEditor title={query.get("title") ?? ""} key="new" />;
      if (a === "resolve" && b) return <NoteResolve target={b} key={b} />;
      if (b === "edit") return <NoteEditor id={a} key={`edit-${a}`} />;
      return <NoteView id={a} key={a} />;
    case "search":
      return <SearchView q={query.get("q") ?? ""} />;
    case "graph":
      return a ? <GraphView id={a} depth={Number(query.get("depth") ?? 1) || 1} /> : <BoardView />;
    default:
      return <p class="empty">No page here. <a href={hrefsIn(project).board()}>Go to the board</a>.</p>;
  }
}

function App() {
  const { project, parts } = useRoute();
  const projects = useProjects(project);
  const [creating, setCreating] = useState(false);
  const here = parts[0] ?? "board";
  const to = hrefsIn(project);
  const link = (href: string, label: string, match: string[]) => (
    <a href={href} aria-current={match.includes(here) ? "page" : undefined}>
      {label}
    </a>
  );
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById("main")?.focus(); }}>
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={to.board()}>
          cairn
        </a>
        <nav aria-label="Main">
          {link(to.board(), "Board", ["board", "tasks"])}
          {link(to.notes(), "Notes", ["notes"])}
          {link(to.search(), "Search", ["search"])}
        </nav>
        <ProjectSwitcher
          project={project}
          list={projects.data?.projects}
          creating={creating}
          onCreate={() => setCreating(!creating)}
        />
        <AgentInput />
      </header>
      {creating ? (
        <NewProjectForm
          onCancel={() => setCreating(false)}
          onCreated={(p) => {
            setCreating(false);
            // The list is re-read on the way: the page's project changes.
            navigate(hrefsIn(p.key).board());
          }}
        />
      ) : null}
      <ArchivedNotice project={projects.data?.projects.find((p) => p.key === project)} />
      {/* Keyed by project: a switch starts every view (and the live feed) over in the new one. */}
      <main id="main" tabIndex={-1} key={project}>
        <View />
      </main>
      <StatusLine key={project} />
    </>
  );
}

const root = document.getElementById("app");
if (root) render(<App />, root);
