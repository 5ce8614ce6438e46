//! The link graph over tasks and notes: typed edges added by hand, `links_to`
//! edges made from wiki-links, neighbourhoods, shortest paths, export and a
//! doctor that finds (and repairs) broken edges.
//!
//! Walks treat edges as undirected (a dependency is a neighbour either way);
//! edges keep their direction in the output.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::Ctx;
use super::bounds::KEY_MAX;
use super::common::{MIN_PREFIX, resolve_link, resolve_node, timestamp};
use crate::envelope::ToolError;
use crate::store::{Edge, LinkKind, Node, refusal};

/// Kinds an agent may add; `links_to` is reserved for wiki-links.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Deserialize,
    Serialize,
    schemars::JsonSchema,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum LinkAddKind {
    RelatesTo,
    DependsOn,
    DerivedFrom,
    Blocks,
}

impl From<LinkAddKind> for LinkKind {
    fn from(k: LinkAddKind) -> Self {
        match k {
            LinkAddKind::RelatesTo => LinkKind::RelatesTo,
            LinkAddKind::DependsOn => LinkKind::DependsOn,
            LinkAddKind::DerivedFrom => LinkKind::DerivedFrom,
            LinkAddKind::Blocks => LinkKind::Blocks,
        }
    }
}

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkAddInput {
    /// Task or note the edge starts at (id, unique prefix, or note slug).
    #[schemars(length(min = 1, max = KEY_MAX))]
    #[schema(min_length = 1, max_length = 400)]
    pub source: String,
    /// Task or note the edge points to (id, unique prefix, or note slug); another node than `source`.
    #[schemars(length(min = 1, max = KEY_MAX))]
    #[schema(min_length = 1, max_length = 400)]
    pub target: String,
    /// `relates_to`, `depends_on`, `derived_from` or `blocks`.
    pub kind: LinkAddKind,
}

/// The edge, with both ends named.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema)]
pub struct LinkAdded {
    pub id: String,
    pub source: String,
    pub target: String,
    pub kind: LinkKind,
    pub source_title: String,
    pub target_title: String,
    /// False when the same edge already existed (nothing was written).
    pub created: bool,
}

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkRemoveInput {
    /// Link id or a unique prefix of at least 6 characters.
    #[schemars(length(min = MIN_PREFIX, max = KEY_MAX))]
    #[schema(min_length = 6, max_length = 400)]
    pub id: String,
}

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NeighboursInput {
    /// Task or note at the centre (id, unique prefix, or note slug).
    #[schemars(length(min = 1, max = KEY_MAX))]
    #[schema(min_length = 1, max_length = 400)]
    pub id: String,
    /// How many hops, 1-3 (default 1).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_DEPTH))]
    #[schema(minimum = 1, maximum = 3)]
    pub depth: Option<i64>,
}

/// A subgraph: nodes `{id, kind, title, ...}` and edges `{id, source, target, kind}`.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema)]
pub struct Subgraph {
    /// The node asked about (null for a whole-graph export).
    pub center: Option<Node>,
    /// The centre first, then by distance.
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
}

#[derive(
    Debug, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema, utoipa::IntoParams,
)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PathInput {
    /// Start (id, unique prefix, or note slug).
    #[schemars(length(min = 1, max = KEY_MAX))]
    #[schema(min_length = 1, max_length = 400)]
    #[param(min_length = 1, max_length = 400)]
    pub from: String,
    /// End (id, unique prefix, or note slug).
    #[schemars(length(min = 1, max = KEY_MAX))]
    #[schema(min_length = 1, max_length = 400)]
    #[param(min_length = 1, max_length = 400)]
    pub to: String,
}

/// A shortest path, edges walked in either direction.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema)]
pub struct GraphPath {
    /// False when no path joins the two.
    pub found: bool,
    /// Edges on the path (0 when from = to).
    pub length: usize,
    /// From `from` to `to`, in order; `[]` when not found.
    pub nodes: Vec<Node>,
    /// The edges between consecutive nodes; `[]` when not found.
    pub edges: Vec<Edge>,
}

#[derive(
    Debug, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema, utoipa::IntoParams,
)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ExportInput {
    /// Export only the neighbourhood of this node; omit for the whole graph.
    #[serde(default)]
    #[schemars(length(min = 1, max = KEY_MAX))]
    #[schema(min_length = 1, max_length = 400)]
    #[param(min_length = 1, max_length = 400)]
    pub around: Option<String>,
    /// Hops around `around`, 1-3 (default 2); only together with `around`.
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_DEPTH))]
    #[schema(minimum = 1, maximum = 3)]
    #[param(minimum = 1, maximum = 3)]
    pub depth: Option<i64>,
}

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DoctorInput {
    /// Remove dangling edges, self loops and duplicate edges.
    #[serde(default)]
    pub fix: Option<bool>,
}

/// What graph_doctor found, and with `fix` what it removed. Each list shows
/// the first [`DOCTOR_SHOWN`] of what it found; its count says how many
/// there are, and its `_capped` flag whether some are not shown.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema)]
pub struct DoctorReport {
    /// True when nothing needs repair (orphans are reported, not repaired;
    /// cycles are for a person to break).
    pub healthy: bool,
    /// Edges with an end that names no task or note (the first 100).
    pub dangling: Vec<Edge>,
    pub dangling_count: u64,
    pub dangling_capped: bool,
    /// Edges from a node to itself (the first 100).
    pub self_loops: Vec<Edge>,
    pub self_loop_count: u64,
    pub self_loops_capped: bool,
    /// Second and later copies of the same (source, target, kind) (the first 100).
    pub duplicates: Vec<Edge>,
    pub duplicate_count: u64,
    pub duplicates_capped: bool,
    /// Cycles of `depends_on`/`blocks` waits an older store holds, each its
    /// ids in order (each waits for the next); made by hand, not repaired.
    pub cycles: Vec<Vec<String>>,
    pub cycle_count: u64,
    pub cycles_capped: bool,
    /// Nodes with no edge (the first 100).
    pub orphans: Vec<Node>,
    pub orphan_count: u64,
    pub orphans_capped: bool,
    /// Whether the edges found were removed (all of them, not only those shown).
    pub fixed: bool,
    /// Edges removed by this call.
    pub removed: usize,
}

/// How many items each of graph_doctor's lists shows at most.
pub const DOCTOR_SHOWN: usize = 100;

/// Most hops a neighbourhood walk takes (the least is 1).
pub const MAX_DEPTH: i64 = 3;

fn depth(field: &str, depth: Option<i64>, default: i64) -> Result<usize, ToolError> {
    match depth.unwrap_or(default) {
        d @ 1..=MAX_DEPTH => Ok(d as usize),
        _ => Err(ToolError::invalid_input(
            field,
            format!("must be between 1 and {MAX_DEPTH}"),
        )),
    }
}

fn now(ctx: &Ctx<'_>) -> crate::store::Timestamp {
    timestamp(ctx.config.clock.now())
}

pub fn link_add(ctx: &Ctx<'_>, input: LinkAddInput) -> Result<LinkAdded, ToolError> {
    let source = resolve_node(ctx.store, &input.source).map_err(|e| e.detail("field", "source"))?;
    let target = resolve_node(ctx.store, &input.target).map_err(|e| e.detail("field", "target"))?;
    if source.id == target.id {
        return Err(ToolError::invalid_input(
            "target",
            "an edge must join two different nodes",
        ));
    }
    let (edge, created) =
        ctx.store
            .link_add(&source.id, &target.id, input.kind.into(), &now(ctx))?;
    Ok(LinkAdded {
        id: edge.id,
        source: edge.source,
        target: edge.target,
        kind: edge.kind,
        source_title: source.title,
        target_title: target.title,
        created,
    })
}

pub fn link_remove(ctx: &Ctx<'_>, input: LinkRemoveInput) -> Result<Edge, ToolError> {
    let id = resolve_link(ctx.store, &input.id)?.id;
    ctx.store
        .link_remove(&id, &now(ctx))
        .map_err(ToolError::from)
}

/// Breadth-first walk from `start`, `depth` hops, edges in either direction.
fn neighbourhood(ctx: &Ctx<'_>, start: &str, depth: usize) -> Result<Subgraph, ToolError> {
    let mut order = vec![start.to_owned()];
    let mut seen: HashSet<String> = order.iter().cloned().collect();
    let mut edges: Vec<Edge> = Vec::new();
    let mut edge_ids = HashSet::new();
    let mut frontier = order.clone();
    for _ in 0..depth {
        if frontier.is_empty() {
            break;
        }
        let mut next = Vec::new();
        for edge in ctx.store.edges_touching(&frontier)? {
            for end in [&edge.source, &edge.target] {
                if seen.insert(end.clone()) {
                    next.push(end.clone());
                }
            }
            if edge_ids.insert(edge.id.clone()) {
                edges.push(edge);
            }
        }
        order.extend(next.iter().cloned());
        frontier = next;
    }
    // Edges among the outermost ring complete the induced subgraph.
    if !frontier.is_empty() {
        for edge in ctx.store.edges_touching(&frontier)? {
            if seen.contains(&edge.source)
                && seen.contains(&edge.target)
                && edge_ids.insert(edge.id.clone())
            {
                edges.push(edge);
            }
        }
    }
    let now = now(ctx);
    let mut by_id: HashMap<String, Node> = ctx
        .store
        .nodes(&order, &now)?
        .into_iter()
        .map(|n| (n.id.clone(), n))
        .collect();
    let nodes: Vec<Node> = order.iter().filter_map(|id| by_id.remove(id)).collect();
    // Edges to nodes that no longer exist (dangling) are left to graph_doctor.
    let present: HashSet<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
    edges.retain(|e| present.contains(e.source.as_str()) && present.contains(e.target.as_str()));
    Ok(Subgraph {
        center: nodes.first().cloned(),
        nodes,
        edges,
    })
}

pub fn graph_neighbours(ctx: &Ctx<'_>, input: NeighboursInput) -> Result<Subgraph, ToolError> {
    let depth = depth("depth", input.depth, 1)?;
    let start = resolve_node(ctx.store, &input.id)?;
    neighbourhood(ctx, &start.id, depth)
}

pub fn graph_path(ctx: &Ctx<'_>, input: PathInput) -> Result<GraphPath, ToolError> {
    let from = resolve_node(ctx.store, &input.from).map_err(|e| e.detail("field", "from"))?;
    let to = resolve_node(ctx.store, &input.to).map_err(|e| e.detail("field", "to"))?;
    // Breadth-first from `from`, remembering the edge that reached each node.
    let mut came_by: HashMap<String, Option<Edge>> = HashMap::from([(from.id.clone(), None)]);
    let mut frontier: Vec<String> = vec![from.id.clone()];
    let mut reached = from.id == to.id;
    while !reached && !frontier.is_empty() {
        let mut next = Vec::new();
        for edge in ctx.store.edges_touching(&frontier)? {
            let (a, b) = (&edge.source, &edge.target);
            for (near, far) in [(a, b), (b, a)] {
                if frontier.contains(near) && !came_by.contains_key(far) {
                    came_by.insert(far.clone(), Some(edge.clone()));
                    next.push(far.clone());
                }
            }
        }
        reached = came_by.contains_key(&to.id);
        frontier = next;
    }
    if !reached {
        return Ok(GraphPath {
            found: false,
            length: 0,
            nodes: Vec::new(),
            edges: Vec::new(),
        });
    }
    let mut ids = vec![to.id.clone()];
    let mut edges = Vec::new();
    let mut at = to.id.clone();
    while let Some(Some(edge)) = came_by.get(&at) {
        at = if edge.target == at {
            edge.source.clone()
        } else {
            edge.target.clone()
        };
        edges.push(edge.clone());
        ids.push(at.clone());
    }
    ids.reverse();
    edges.reverse();
    let mut by_id: HashMap<String, Node> = ctx
        .store
        .nodes(&ids, &now(ctx))?
        .into_iter()
        .map(|n| (n.id.clone(), n))
        .collect();
    let nodes: Vec<Node> = ids.iter().filter_map(|id| by_id.remove(id)).collect();
    Ok(GraphPath {
        found: true,
        length: edges.len(),
        nodes,
        edges,
    })
}

pub fn graph_export(ctx: &Ctx<'_>, input: ExportInput) -> Result<Subgraph, ToolError> {
    match input.around {
        Some(around) => {
            let depth = depth("depth", input.depth, 2)?;
            let start =
                resolve_node(ctx.store, &around).map_err(|e| e.detail("field", "around"))?;
            neighbourhood(ctx, &start.id, depth)
        }
        None => {
            if input.depth.is_some() {
                return Err(ToolError::invalid_input(
                    "depth",
                    "only applies together with `around`",
                ));
            }
            let (nodes, mut edges) = ctx.store.graph_all(&now(ctx))?;
            let present: HashSet<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
            edges.retain(|e| {
                present.contains(e.source.as_str()) && present.contains(e.target.as_str())
            });
            Ok(Subgraph {
                center: None,
                nodes,
                edges,
            })
        }
    }
}

/// With `fix`, a long call in three steps: scan, report what is broken,
/// then repair it in one transaction. A caller that gives up before the
/// repair gets the scan and nothing is changed.
pub fn graph_doctor(ctx: &Ctx<'_>, input: DoctorInput) -> Result<DoctorReport, ToolError> {
    let fix = input.fix.unwrap_or(false);
    let broken = |scan: &crate::store::DoctorScan| {
        scan.dangling.len() + scan.self_loops.len() + scan.duplicates.len()
    };
    let scan = if fix {
        const STEPS: Option<u64> = Some(3);
        ctx.signal.report(0, STEPS, "scanning the link graph");
        let scan = ctx.store.graph_doctor(false, DOCTOR_SHOWN, &now(ctx))?;
        ctx.signal
            .report(1, STEPS, format!("{} broken links found", broken(&scan)));
        if ctx.signal.is_cancelled() {
            return Ok(doctor_report(scan, false, 0));
        }
        // The repair scans again inside its transaction, so it fixes what is
        // broken when it commits, not what the first scan saw.
        let fixed = ctx.store.graph_doctor(true, DOCTOR_SHOWN, &now(ctx))?;
        ctx.signal
            .report(3, STEPS, format!("{} broken links removed", broken(&fixed)));
        fixed
    } else {
        ctx.store.graph_doctor(false, DOCTOR_SHOWN, &now(ctx))?
    };
    let removed = if fix { broken(&scan) } else { 0 };
    let (_, edges) = ctx.store.graph_all(&now(ctx))?;
    let mut report = doctor_report(scan, fix, removed);
    let mut cycles = wait_cycles(&edges);
    report.cycle_count = cycles.len() as u64;
    report.cycles_capped = cycles.len() > DOCTOR_SHOWN;
    report.healthy &= cycles.is_empty();
    cycles.truncate(DOCTOR_SHOWN);
    report.cycles = cycles;
    Ok(report)
}

/// The cycles of waits among `edges`, each once, in order. Nodes that wait
/// for nothing still waiting are peeled off first (they are on no cycle);
/// from each node left, a walk over what it waits for looks for the way
/// back to it ([`refusal::check_no_cycle`]).
fn wait_cycles(edges: &[Edge]) -> Vec<Vec<String>> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut waits: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for edge in edges {
        if let Some((waiter, prerequisite)) =
            refusal::waits_for(&edge.source, &edge.target, edge.kind)
            && waiter != prerequisite
        {
            waits.entry(waiter).or_default().insert(prerequisite);
        }
    }
    loop {
        let free: Vec<&str> = waits
            .iter()
            .filter(|(_, prerequisites)| prerequisites.iter().all(|p| !waits.contains_key(p)))
            .map(|(node, _)| *node)
            .collect();
        if free.is_empty() {
            break;
        }
        for node in free {
            waits.remove(node);
        }
    }
    let mut on_a_cycle: HashSet<String> = HashSet::new();
    let mut cycles = Vec::new();
    for (node, prerequisites) in &waits {
        if on_a_cycle.contains(*node) {
            continue;
        }
        let of = |at: &str| -> Result<Vec<String>, ()> {
            Ok(waits
                .get(at)
                .map(|ps| ps.iter().map(|p| (*p).to_owned()).collect())
                .unwrap_or_default())
        };
        let found = prerequisites.iter().find_map(|prerequisite| {
            match refusal::check_no_cycle(node, prerequisite, of) {
                Ok(Err(crate::store::StoreError::DependencyCycle { cycle })) => Some(cycle),
                _ => None,
            }
        });
        if let Some(cycle) = found
            && cycle.iter().all(|id| !on_a_cycle.contains(id))
        {
            on_a_cycle.extend(cycle.iter().cloned());
            cycles.push(cycle);
        }
    }
    cycles
}

fn doctor_report(scan: crate::store::DoctorScan, fixed: bool, removed: usize) -> DoctorReport {
    let crate::store::DoctorScan {
        dangling,
        self_loops,
        duplicates,
        orphans,
        orphan_count,
    } = scan;
    let healthy = dangling.is_empty() && self_loops.is_empty() && duplicates.is_empty();
    let (dangling, dangling_count, dangling_capped) = shown(dangling);
    let (self_loops, self_loop_count, self_loops_capped) = shown(self_loops);
    let (duplicates, duplicate_count, duplicates_capped) = shown(duplicates);
    DoctorReport {
        healthy,
        dangling,
        dangling_count,
        dangling_capped,
        self_loops,
        self_loop_count,
        self_loops_capped,
        duplicates,
        duplicate_count,
        duplicates_capped,
        cycles: Vec::new(),
        cycle_count: 0,
        cycles_capped: false,
        orphans_capped: orphan_count > orphans.len() as u64,
        orphans,
        orphan_count,
        fixed,
        removed,
    }
}

/// The first [`DOCTOR_SHOWN`] of `found`, how many were found, and whether
/// some are not shown.
fn shown(mut found: Vec<Edge>) -> (Vec<Edge>, u64, bool) {
    let count = found.len() as u64;
    let capped = found.len() > DOCTOR_SHOWN;
    found.truncate(DOCTOR_SHOWN);
    (found, count, capped)
}
