//! The dependency graph of one step and its longest path.
//!
//! Every event of the step has two nodes, its start (`2 i`) and its end (`2 i + 1`); edges
//! carry a weight in ns (the time the edge stands for, 0 for a pure dependency) and the event
//! their time is charged to. The longest path is found over a topological order (Kahn's), so a
//! graph that is not acyclic (malformed nesting, clocks that disagree) is reported, never looped
//! over.

/// What an edge stands for: HTA's edge types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeKind {
    /// Time inside one CPU op or GPU op (start to end, or between nested children).
    Operator,
    /// Order between consecutive top-level CPU ops, or between CUDA runtime calls that share
    /// the runtime's lock: no weight.
    Dependency,
    /// From a launch call's start to its GPU op's start, when the stream was empty.
    LaunchDelay,
    /// From the previous GPU op's end on the same stream to the next one's start.
    KernelGap,
    /// A wait: GPU op end → the end of the CPU call that waited for it, or GPU op end → the
    /// start of a GPU op on another stream that waited for it. No weight.
    Sync,
}

/// No event: an edge whose time is charged to nobody.
pub const NO_EVENT: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    pub from: u32,
    pub to: u32,
    pub weight: i64,
    pub kind: EdgeKind,
    /// The event (index into the step's events) the edge's time is charged to.
    pub event: u32,
}

/// Nodes `0..nodes`, the edges between them.
#[derive(Debug, Default)]
pub struct Graph {
    pub nodes: usize,
    pub edges: Vec<Edge>,
}

impl Graph {
    pub fn new(nodes: usize) -> Graph {
        Graph { nodes, edges: Vec::new() }
    }

    /// An edge whose weight is the time from `from_ts` to `to_ts` (0 for the weightless kinds,
    /// and where clocks put the end before the start: HTA also lets a −1 pass as 0).
    pub fn add(&mut self, from: u32, to: u32, kind: EdgeKind, span_ns: i64, event: u32) {
        if from == to {
            return;
        }
        let weight = match kind {
            EdgeKind::Dependency | EdgeKind::Sync => 0,
            _ => span_ns.max(0),
        };
        self.edges.push(Edge { from, to, weight, kind, event });
    }

    /// The longest path (the edges in order), or None where the graph has a cycle.
    pub fn longest_path(&self) -> Option<Vec<Edge>> {
        let n = self.nodes;
        // edges grouped by source (counting sort), and in-degrees
        let mut first = vec![0u32; n + 1];
        let mut indeg = vec![0u32; n];
        for e in &self.edges {
            first[e.from as usize + 1] += 1;
            indeg[e.to as usize] += 1;
        }
        for i in 0..n {
            first[i + 1] += first[i];
        }
        let mut fill = first.clone();
        let mut by_src = vec![0u32; self.edges.len()];
        for (k, e) in self.edges.iter().enumerate() {
            by_src[fill[e.from as usize] as usize] = k as u32;
            fill[e.from as usize] += 1;
        }
        let mut dist = vec![0i64; n];
        let mut via = vec![u32::MAX; n];
        let mut ready: Vec<u32> = (0..n as u32).filter(|&v| indeg[v as usize] == 0).collect();
        let mut done = 0usize;
        while let Some(u) = ready.pop() {
            done += 1;
            for &k in &by_src[first[u as usize] as usize..first[u as usize + 1] as usize] {
                let e = &self.edges[k as usize];
                let (v, d) = (e.to as usize, dist[u as usize] + e.weight);
                // ties keep the first edge found: the path is one of the longest
                if via[v] == u32::MAX || d > dist[v] {
                    dist[v] = d;
                    via[v] = k;
                }
                indeg[v] -= 1;
                if indeg[v] == 0 {
                    ready.push(v as u32);
                }
            }
        }
        if done < n {
            return None;
        }
        let Some(mut v) = (0..n).max_by_key(|&v| (dist[v], std::cmp::Reverse(v))) else {
            return Some(Vec::new());
        };
        let mut path = Vec::new();
        while via[v] != u32::MAX {
            let e = self.edges[via[v] as usize];
            path.push(e);
            v = e.from as usize;
        }
        path.reverse();
        Some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_path_takes_the_heavier_branch() {
        // 0 → 1 (5) → 3 (1); 0 → 2 (2) → 3 (10): the lower branch is 12
        let mut g = Graph::new(4);
        g.add(0, 1, EdgeKind::Operator, 5, 0);
        g.add(1, 3, EdgeKind::Operator, 1, 0);
        g.add(0, 2, EdgeKind::KernelGap, 2, 1);
        g.add(2, 3, EdgeKind::Operator, 10, 1);
        let p = g.longest_path().unwrap();
        assert_eq!(p.iter().map(|e| (e.from, e.to)).collect::<Vec<_>>(), vec![(0, 2), (2, 3)]);
        assert_eq!(p.iter().map(|e| e.weight).sum::<i64>(), 12);
    }

    #[test]
    fn weightless_kinds_and_backward_clocks_weigh_nothing() {
        let mut g = Graph::new(3);
        g.add(0, 1, EdgeKind::Sync, 50, NO_EVENT);
        g.add(1, 2, EdgeKind::Operator, -7, 0);
        assert!(g.edges.iter().all(|e| e.weight == 0));
        // self-loops are dropped, not kept as a cycle
        g.add(2, 2, EdgeKind::Operator, 3, 0);
        assert_eq!(g.edges.len(), 2);
    }

    #[test]
    fn a_cycle_gives_no_path_and_ends() {
        let mut g = Graph::new(3);
        g.add(0, 1, EdgeKind::Operator, 1, 0);
        g.add(1, 2, EdgeKind::Operator, 1, 0);
        g.add(2, 1, EdgeKind::Sync, 0, NO_EVENT);
        assert!(g.longest_path().is_none());
    }

    #[test]
    fn an_empty_graph_has_an_empty_path() {
        assert_eq!(Graph::new(0).longest_path(), Some(Vec::new()));
        assert_eq!(Graph::new(2).longest_path(), Some(Vec::new()));
    }
}
