//! One pass over `data`: serializes it into a buffer and records, bottom-up, the
//! sizes the planner needs (regions, arrays, long strings, graphs).
//!
//! Only the first item of an array (or the top-ranked node of a graph) becomes a
//! region of its own, because only a lone kept item is ever cut inside; every other
//! item is weighed as a whole. So each element is serialized and counted once.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::{BuildHasherDefault, Hasher};

use serde_json::{Map, Number, Value};

use super::{LONG_STRING_CHARS, STRING_MARKER, units};

/// A value seen down to, not into, its arrays.
#[derive(Debug, Default)]
pub(super) struct Region {
    /// Units of the whole value.
    pub full: u64,
    /// Units of everything but array contents and long strings (brackets included).
    pub fixed: u64,
    /// Units of the long strings, all whole.
    pub strings_full: u64,
    /// Units when every array is reduced to its skeleton (strings whole).
    pub skeleton: u64,
    /// Ids into [`Measured::strings`], in document order.
    pub strings: Vec<usize>,
    /// Ids into [`Measured::lists`], in document order.
    pub lists: Vec<usize>,
}

/// An array (or a graph's nodes and edges) that may keep fewer items.
#[derive(Debug)]
pub(super) struct List {
    /// JSON Pointer of the array (of `nodes` for a graph).
    pub path: String,
    pub n: usize,
    /// `cost[k]`: units of the content (between the brackets) keeping `k` items.
    pub cost: Vec<u64>,
    /// Units of the trim entries this array writes when cut, commas included.
    pub marker: u64,
    /// The region of the item kept when only one is (item 0, or the top node).
    pub first: Option<Region>,
    /// `cost[1]` minus the first item's own units (a graph's self-loops).
    pub first_extra: u64,
    pub graph: Option<Graph>,
}

#[derive(Debug)]
pub(super) struct Graph {
    pub edges_path: String,
    pub node_rank: Vec<usize>,
    /// Highest rank of an edge's two ends; `usize::MAX` when an end is unknown.
    pub edge_rank: Vec<usize>,
    /// `edges_kept[k]`: edges kept with the top `k` nodes (`k < n`).
    pub edges_kept: Vec<usize>,
}

impl List {
    pub fn whole(&self) -> u64 {
        self.cost[self.n]
    }

    /// Units of this array in the skeleton: its first item at its own skeleton.
    pub fn skeleton(&self) -> u64 {
        match &self.first {
            None => 0,
            Some(first) => {
                let marker = if self.n > 1 { self.marker } else { 0 };
                self.whole().min(first.skeleton + self.first_extra + marker)
            }
        }
    }

    /// Edges kept when the graph keeps `k` nodes.
    pub fn edges_kept(&self, k: usize) -> usize {
        match &self.graph {
            None => 0,
            Some(g) if k >= self.n => g.edge_rank.len(),
            Some(g) => g.edges_kept[k],
        }
    }
}

/// A string of at least [`LONG_STRING_CHARS`] chars.
#[derive(Debug)]
pub(super) struct LongString {
    pub path: String,
    pub units: u64,
    /// Units of its trim entry, comma included.
    pub marker: u64,
}

/// Units of a shortened string holding only the marker: quotes + `…[truncated]`.
pub(super) const MIN_STRING_UNITS: u64 = 2 + 4 + 11;

#[derive(Debug)]
pub(super) struct Measured {
    pub root: Region,
    pub lists: Vec<List>,
    pub strings: Vec<LongString>,
}

pub(super) fn measure(data: &Value) -> Measured {
    let mut m = Measurer {
        buf: Vec::new(),
        path: String::new(),
        lists: Vec::new(),
        strings: Vec::new(),
    };
    let root = m.region(data);
    debug_assert_eq!(root.full, units(&m.buf));
    Measured {
        root,
        lists: m.lists,
        strings: m.strings,
    }
}

struct Measurer {
    buf: Vec<u8>,
    path: String,
    lists: Vec<List>,
    strings: Vec<LongString>,
}

impl Measurer {
    fn raw(&mut self, bytes: &[u8]) -> u64 {
        self.buf.extend_from_slice(bytes);
        units(bytes)
    }

    /// Serializes a value as a whole; returns its units.
    fn whole<T: serde::Serialize + ?Sized>(&mut self, value: &T) -> u64 {
        let start = self.buf.len();
        serde_json::to_writer(&mut self.buf, value).expect("a JSON value always serializes");
        units(&self.buf[start..])
    }

    fn region(&mut self, value: &Value) -> Region {
        let mut region = Region::default();
        self.walk(value, &mut region);
        region.full = region.fixed
            + region.strings_full
            + region
                .lists
                .iter()
                .map(|&l| self.lists[l].whole())
                .sum::<u64>();
        region.skeleton = region.fixed
            + region.strings_full
            + region
                .lists
                .iter()
                .map(|&l| self.lists[l].skeleton())
                .sum::<u64>();
        region
    }

    /// Adds `value` to `region`: objects are transparent, arrays and long strings
    /// become participants, everything else is fixed.
    fn walk(&mut self, value: &Value, region: &mut Region) {
        match value {
            Value::String(s) if s.len() >= LONG_STRING_CHARS => {
                let chars = s.chars().count();
                let u = self.whole(s);
                if chars >= LONG_STRING_CHARS {
                    region.strings.push(self.strings.len());
                    region.strings_full += u;
                    let marker = entry_units(&self.path, "string", chars + STRING_MARKER.len());
                    self.strings.push(LongString {
                        path: self.path.clone(),
                        units: u,
                        marker,
                    });
                } else {
                    region.fixed += u;
                }
            }
            Value::Array(items) => {
                region.fixed += self.raw(b"[");
                region.lists.push(self.list(items));
                region.fixed += self.raw(b"]");
            }
            Value::Object(map) => {
                if let (Some(Value::Array(nodes)), Some(Value::Array(edges))) =
                    (map.get("nodes"), map.get("edges"))
                    && !nodes.is_empty()
                    && let Some(ends) = edge_ends(nodes, edges)
                {
                    self.graph(map, nodes, edges, ends, region);
                    return;
                }
                region.fixed += self.raw(b"{");
                for (i, (key, child)) in map.iter().enumerate() {
                    if i > 0 {
                        region.fixed += self.raw(b",");
                    }
                    region.fixed += self.whole(key.as_str()) + self.raw(b":");
                    let len = self.push_key(key);
                    self.walk(child, region);
                    self.path.truncate(len);
                }
                region.fixed += self.raw(b"}");
            }
            scalar => region.fixed += self.whole(scalar),
        }
    }

    fn push_key(&mut self, key: &str) -> usize {
        let len = self.path.len();
        self.path.push('/');
        for c in key.chars() {
            match c {
                '~' => self.path.push_str("~0"),
                '/' => self.path.push_str("~1"),
                c => self.path.push(c),
            }
        }
        len
    }

    fn push_index(&mut self, index: usize) -> usize {
        let len = self.path.len();
        let _ = write!(self.path, "/{index}");
        len
    }

    /// Measures an array's items (the first as a region); returns the list id.
    fn list(&mut self, items: &[Value]) -> usize {
        let path = self.path.clone();
        let mut cost = Vec::with_capacity(items.len() + 1);
        cost.push(0u64);
        let mut first = None;
        let mut total = 0u64;
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                total += self.raw(b",");
            }
            if i == 0 {
                let len = self.push_index(0);
                let r = self.region(item);
                self.path.truncate(len);
                total += r.full;
                first = Some(r);
            } else {
                total += self.whole(item);
            }
            cost.push(total);
        }
        let n = items.len();
        let marker = entry_units(&path, "list", n);
        self.lists.push(List {
            path,
            n,
            cost,
            marker,
            first,
            first_extra: 0,
            graph: None,
        });
        self.lists.len() - 1
    }

    /// An object with `nodes` and `edges` arrays: both become one participant.
    fn graph(
        &mut self,
        map: &Map<String, Value>,
        nodes: &[Value],
        edges: &[Value],
        ends: Vec<Option<(usize, usize)>>,
        region: &mut Region,
    ) {
        let n = nodes.len();
        let mut degree = vec![0usize; n];
        for &(s, t) in ends.iter().flatten() {
            degree[s] += 1;
            degree[t] += 1;
        }
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(degree[i])); // stable: ties keep order
        let mut node_rank = vec![0usize; n];
        for (rank, &i) in order.iter().enumerate() {
            node_rank[i] = rank;
        }
        let top = order.first().copied();

        let nodes_path;
        let edges_path;
        let mut node_units = vec![0u64; n];
        let mut edge_units = vec![0u64; edges.len()];
        let mut first = None;
        region.fixed += self.raw(b"{");
        let base = self.path.len();
        {
            let len = self.push_key("nodes");
            nodes_path = self.path.clone();
            self.path.truncate(len);
            let len = self.push_key("edges");
            edges_path = self.path.clone();
            self.path.truncate(len);
        }
        debug_assert_eq!(self.path.len(), base);
        for (i, (key, child)) in map.iter().enumerate() {
            if i > 0 {
                region.fixed += self.raw(b",");
            }
            region.fixed += self.whole(key.as_str()) + self.raw(b":");
            match key.as_str() {
                "nodes" => {
                    region.fixed += self.raw(b"[");
                    for (j, node) in nodes.iter().enumerate() {
                        if j > 0 {
                            self.raw(b",");
                        }
                        if Some(j) == top {
                            // Cut inside only when it is the one node kept, so it is
                            // emitted at index 0: paths point into the emitted data.
                            let len = self.push_key("nodes");
                            self.push_index(0);
                            let r = self.region(node);
                            self.path.truncate(len);
                            node_units[j] = r.full;
                            first = Some(r);
                        } else {
                            node_units[j] = self.whole(node);
                        }
                    }
                    region.fixed += self.raw(b"]");
                }
                "edges" => {
                    region.fixed += self.raw(b"[");
                    for (j, edge) in edges.iter().enumerate() {
                        if j > 0 {
                            self.raw(b",");
                        }
                        edge_units[j] = self.whole(edge);
                    }
                    region.fixed += self.raw(b"]");
                }
                _ => {
                    let len = self.push_key(key);
                    self.walk(child, region);
                    self.path.truncate(len);
                }
            }
        }
        region.fixed += self.raw(b"}");

        // cost[k]: the top k nodes plus the edges between them, with their commas.
        let edge_rank: Vec<usize> = ends
            .iter()
            .map(|e| e.map_or(usize::MAX, |(s, t)| node_rank[s].max(node_rank[t])))
            .collect();
        let mut bucket_units = vec![0u64; n];
        let mut bucket_count = vec![0usize; n];
        for (j, &r) in edge_rank.iter().enumerate() {
            if r < n {
                bucket_units[r] += edge_units[j];
                bucket_count[r] += 1;
            }
        }
        let commas = |count: usize| count.saturating_sub(1) as u64;
        let mut cost = Vec::with_capacity(n + 1);
        let mut edges_kept = Vec::with_capacity(n + 1);
        cost.push(0);
        edges_kept.push(0);
        let (mut node_sum, mut edge_sum, mut edge_count) = (0u64, 0u64, 0usize);
        for (k, &i) in order.iter().enumerate() {
            node_sum += node_units[i];
            edge_sum += bucket_units[k];
            edge_count += bucket_count[k];
            cost.push(node_sum + commas(k + 1) + edge_sum + commas(edge_count));
            edges_kept.push(edge_count);
        }
        {
            let all_edges: u64 = edge_units.iter().sum::<u64>() + commas(edges.len());
            cost[n] = node_sum + commas(n) + all_edges;
        }
        let first_extra = top.map_or(0, |t| cost[1] - node_units[t]);
        let marker = entry_units(&nodes_path, "subgraph", n)
            + entry_units(&edges_path, "subgraph", edges.len());
        region.lists.push(self.lists.len());
        self.lists.push(List {
            path: nodes_path,
            n,
            cost,
            marker,
            first,
            first_extra,
            graph: Some(Graph {
                edges_path,
                node_rank,
                edge_rank,
                edges_kept,
            }),
        });
    }
}

/// Each edge's two node indices, `None` for an edge with an end that names
/// no node.
type Ends = Vec<Option<(usize, usize)>>;

/// The keys a node is named by, in the shapes graphs are commonly written in
/// (cairn's own first).
pub const NODE_KEYS: [&str; 3] = ["id", "uid", "key"];

/// The pairs of keys an edge names its two ends by, cairn's own first.
pub const END_KEYS: [(&str, &str); 4] = [
    ("source", "target"),
    ("source_uid", "target_uid"),
    ("from", "to"),
    ("src", "dst"),
];

/// Each edge's two node indices, or `None` when the edges cannot be resolved
/// at all: there are edges and not one has both ends among the nodes. Nodes
/// are named by one of [`NODE_KEYS`] and edges by one of [`END_KEYS`]; of
/// the naming keys the first node and the first edge hold, the pair that
/// resolves the most edges is the graph's (ties go to the earlier keys). An
/// object no pair resolves is no graph to the trimmer: its arrays are cut by
/// the fair list rules, so edges are not all dropped as dangling.
fn edge_ends(nodes: &[Value], edges: &[Value]) -> Option<Ends> {
    let Some(first_edge) = edges.first() else {
        return Some(Vec::new());
    };
    let node_keys = NODE_KEYS
        .iter()
        .filter(|key| nodes.first().and_then(|n| field(n, key)).is_some());
    let end_keys: Vec<(&str, &str)> = END_KEYS
        .into_iter()
        .filter(|(from, to)| field(first_edge, from).is_some() && field(first_edge, to).is_some())
        .collect();
    let mut best: Option<(usize, Ends)> = None;
    for node_key in node_keys {
        let index = node_index(nodes, node_key);
        for (from, to) in &end_keys {
            let end = |edge: &Value, key: &str| {
                field(edge, key)
                    .and_then(NodeId::of)
                    .and_then(|id| index.get(&id).copied())
            };
            let ends: Ends = edges
                .iter()
                .map(|e| Some((end(e, from)?, end(e, to)?)))
                .collect();
            let resolved = ends.iter().filter(|e| e.is_some()).count();
            if resolved > best.as_ref().map_or(0, |(most, _)| *most) {
                best = Some((resolved, ends));
            }
        }
    }
    best.map(|(_, ends)| ends)
}

/// Each node's index by the id `key` names (the first node of an id wins).
fn node_index<'a>(
    nodes: &'a [Value],
    key: &str,
) -> HashMap<NodeId<'a>, usize, BuildHasherDefault<IdHasher>> {
    let mut index = HashMap::with_capacity_and_hasher(nodes.len(), BuildHasherDefault::default());
    for (i, node) in nodes.iter().enumerate() {
        if let Some(id) = field(node, key).and_then(NodeId::of) {
            index.entry(id).or_insert(i);
        }
    }
    index
}

/// A member of a small object, found without hashing the key (nodes and edges
/// have a handful of keys; hashing each lookup cost more than the scan).
fn field<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    value
        .as_object()?
        .iter()
        .find_map(|(k, v)| (k == key).then_some(v))
}

/// A fast hasher for node ids (FxHash's mixing step). Ids come from the store or
/// the tool, and a graph's lookups are a noticeable share of its trimming time.
#[derive(Default)]
struct IdHasher(u64);

impl IdHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let mut tail = [0u8; 8];
        tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        self.add(u64::from_le_bytes(tail));
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A node id as edges refer to it.
#[derive(Debug, PartialEq, Eq, Hash)]
enum NodeId<'a> {
    Str(&'a str),
    Num(&'a Number),
}

impl<'a> NodeId<'a> {
    fn of(value: &'a Value) -> Option<Self> {
        match value {
            Value::String(s) => Some(Self::Str(s)),
            Value::Number(n) => Some(Self::Num(n)),
            _ => None,
        }
    }
}

/// Units of one trim entry with lengths up to `max_len`, plus its comma.
fn entry_units(path: &str, kind: &str, max_len: usize) -> u64 {
    let entry = super::super::Trim {
        path: path.to_owned(),
        kind: match kind {
            "list" => super::super::TrimKind::List,
            "string" => super::super::TrimKind::String,
            _ => super::super::TrimKind::Subgraph,
        },
        from: max_len,
        to: max_len,
    };
    let json = serde_json::to_vec(&entry).expect("a trim entry always serializes");
    units(&json) + 1
}
