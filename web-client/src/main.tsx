// Entry: the header (nav, agent name), the routed view, the status line.
import { render } from "preact";
import { useRoute } from "./lib/router";
import { AgentInput, BoardView } from "./views/Board";
import { GraphView } from "./views/Graph";
import { NoteEditor, NoteResolve, NotesList, NoteView } from "./views/Notes";
import { SearchView } from "./views/Search";
import { StatusLine } from "./views/StatusLine";
import { TaskDetail } from "./views/TaskDetail";
import "./styles.css";

function View() {
  const { parts, query } = useRoute();
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
      return <p class="empty">No page here. <a href="#/board">Go to the board</a>.</p>;
  }
}

function App() {
  const { parts } = useRoute();
  const here = parts[0] ?? "board";
  const link = (to: string, label: string, match: string[]) => (
    <a href={to} aria-current={match.includes(here) ? "page" : undefined}>
      {label}
    </a>
  );
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById("main")?.focus(); }}>
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="#/board">
          cairn
        </a>
        <nav aria-label="Main">
          {link("#/board", "Board", ["board", "tasks"])}
          {link("#/notes", "Notes", ["notes"])}
          {link("#/search", "Search", ["search"])}
        </nav>
        <AgentInput />
      </header>
      <main id="main" tabIndex={-1}>
        <View />
      </main>
      <StatusLine />
    </>
  );
}

const root = document.getElementById("app");
if (root) render(<App />, root);
