// A node's neighbourhood as SVG: the node in the middle, each further hop on a
// wider ring. Nodes are links (focusable), and the same nodes are listed below
// for screen readers and narrow screens.
import { graph } from "../api/calls";
import type { Graph, GraphNode } from "../api/types";
import { useLoad } from "../lib/load";
import { href, navigate } from "../lib/router";
import { Empty, Loading, shortId } from "../ui/common";
import { ErrorPanel } from "../ui/ErrorPanel";

interface Placed extends GraphNode {
  x: number;
  y: number;
  hop: number;
}

/** Places nodes on rings by hop distance from `center` (breadth-first over the edges). */
export function layout(g: Graph, center: string, size = 600): Placed[] {
  const ids = new Set(g.nodes.map((n) => n.id));
  const root = ids.has(center) ? center : (g.nodes.find((n) => n.id.startsWith(center))?.id ?? g.nodes[0]?.id);
  const hop = new Map<string, number>();
  if (root) hop.set(root, 0);
  const adj = new Map<string, string[]>();
  for (const e of g.edges) {
    adj.set(e.source, [...(adj.get(e.source) ?? []), e.target]);
    adj.set(e.target, [...(adj.get(e.target) ?? []), e.source]);
  }
  const queue = root ? [root] : [];
  while (queue.length) {
    const id = queue.shift() as string;
    for (const n of adj.get(id) ?? []) {
      if (!hop.has(n)) {
        hop.set(n, (hop.get(id) ?? 0) + 1);
        queue.push(n);
      }
    }
  }
  const maxHop = Math.max(1, ...hop.values());
  const rings = new Map<number, GraphNode[]>();
  for (const n of g.nodes) {
    const h = hop.get(n.id) ?? maxHop + 1;
    rings.set(h, [...(rings.get(h) ?? []), n]);
  }
  const c = size / 2;
  const step = (size / 2 - 50) / Math.max(1, Math.max(...rings.keys()));
  const out: Placed[] = [];
  for (const [h, nodes] of rings) {
    nodes.forEach((n, i) => {
      const angle = (2 * Math.PI * i) / nodes.length - Math.PI / 2 + h * 0.4;
      const r = h * step;
      out.push({ ...n, hop: h, x: c + r * Math.cos(angle), y: c + r * Math.sin(angle) });
    });
  }
  return out;
}

export function GraphView(props: { id: string; depth: number }) {
  const loaded = useLoad(() => graph.neighbours(props.id, props.depth), [props.id, props.depth]);
  const g = loaded.data;
  const size = 600;
  const placed = g ? layout(g, g.center?.id ?? props.id, size) : [];
  const at = new Map(placed.map((p) => [p.id, p]));

  return (
    <div class="view graph-view">
      <div class="row">
        <h1>Neighbourhood of {g?.center?.title ?? shortId(props.id)}</h1>
        <label class="narrow">
          <span>Depth</span>
          <select
            value={String(props.depth)}
            onChange={(e) => navigate(`${href.graph(props.id)}?depth=${(e.currentTarget as HTMLSelectElement).value}`)}
          >
            {[1, 2, 3].map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        </label>
      </div>
      {loaded.error ? <ErrorPanel error={loaded.error} onRetry={loaded.reload} /> : null}
      {!g && loaded.loading ? <Loading what="the graph" /> : null}
      {g && g.nodes.length <= 1 && g.edges.length === 0 ? <Empty>This node has no links yet.</Empty> : null}
      {g ? (
        <>
          <svg class="graph" viewBox={`0 0 ${size} ${size}`} role="img" aria-label="Link graph" data-testid="graph-svg">
            {g.edges.map((e) => {
              const a = at.get(e.source);
              const b = at.get(e.target);
              return a && b ? (
                <line key={e.id} x1={a.x} y1={a.y} x2={b.x} y2={b.y} class={`edge edge-${e.kind}`}>
                  <title>{e.kind}</title>
                </line>
              ) : null;
            })}
            {placed.map((n) => (
              <a key={n.id} href={href.graph(n.id)} class={`node node-${n.kind}${n.hop === 0 ? " center" : ""}`}>
                <circle cx={n.x} cy={n.y} r={n.hop === 0 ? 14 : 9} />
                <text x={n.x} y={n.y + (n.hop === 0 ? 30 : 22)} text-anchor="middle">
                  {n.title.length > 24 ? `${n.title.slice(0, 23)}…` : n.title}
                </text>
                <title>
                  {n.kind}: {n.title}
                </title>
              </a>
            ))}
          </svg>
          <ul class="list">
            {placed
              .slice()
              .sort((a, b) => a.hop - b.hop)
              .map((n) => (
                <li key={n.id}>
                  <span class="badge">{n.kind}</span> <a href={href.node(n.kind, n.id)}>{n.title}</a>{" "}
                  <span class="muted">{n.hop === 0 ? "(this node)" : `${n.hop} hop${n.hop > 1 ? "s" : ""}`}</span>{" "}
                  <a href={href.graph(n.id)} class="muted">
                    graph
                  </a>
                </li>
              ))}
          </ul>
        </>
      ) : null}
    </div>
  );
}
