//! The CPU side of the graph, by HTA's rules: each thread's call stack walked depth first
//! (edges from the last node seen to the next start or end), and the CUDA runtime's lock
//! across threads (calls that hold it run one at a time, in the order they finish).

use super::events::{name, Event};
use super::graph::{EdgeKind, Graph, NO_EVENT};
use strobe_model::SpanKind;

fn ts(ev: &[Event], node: u32) -> i64 {
    let e = &ev[(node / 2) as usize];
    if is_start(node) {
        e.start
    } else {
        e.end
    }
}

fn is_start(node: u32) -> bool {
    node & 1 == 0
}

fn event(node: u32) -> u32 {
    node / 2
}

/// Both nodes are of lock-holding calls and not the end of one and the start of the next:
/// the lock pass links them, not the call stack.
fn shares_lock(ev: &[Event], a: u32, b: u32) -> bool {
    let lock = |n: u32| ev[event(n) as usize].names & name::LOCK != 0;
    lock(a) && lock(b) && (is_start(a) || !is_start(b))
}

/// HTA's attribution of a time edge inside the call stack: start→… is the source's time,
/// …→end is the destination's, end→start (between two children) is the parent's.
fn charged_to(src: u32, dst: u32, src_parent: u32) -> u32 {
    if is_start(src) {
        event(src)
    } else if !is_start(dst) {
        event(dst)
    } else {
        src_parent
    }
}

/// Walks each thread's events (the backward thread's as the forward thread's, where
/// `merged`), setting each event's `op` and `in_data` and adding the call-stack edges.
pub fn call_stack_edges(ev: &mut [Event], cpu: usize, merged: Option<(u32, u32)>, g: &mut Graph) {
    let thread = |lane: u32| match merged {
        Some((fwd, bwd)) if lane == bwd => fwd,
        _ => lane,
    };
    let mut order: Vec<u32> = (0..cpu as u32).collect();
    order.sort_by_key(|&i| {
        let e = &ev[i as usize];
        (thread(e.lane), e.start, std::cmp::Reverse(e.end), e.span)
    });
    let keys: Vec<u32> = order.iter().map(|&i| thread(ev[i as usize].lane)).collect();
    let mut at = 0;
    for group in keys.chunk_by(|a, b| a == b) {
        let group = &order[at..at + group.len()];
        at += group.len();
        Walk { last: None, last_parent: NO_EVENT, stack: Vec::new() }.run(ev, group, g);
    }
}

struct Walk {
    last: Option<u32>,
    last_parent: u32,
    stack: Vec<u32>,
}

impl Walk {
    fn run(mut self, ev: &mut [Event], group: &[u32], g: &mut Graph) {
        for &i in group {
            // close what ended before `i` starts, and (malformed nesting) what `i` outlasts
            while let Some(&top) = self.stack.last() {
                let (t, e) = (&ev[top as usize], &ev[i as usize]);
                if t.end <= e.start || e.end > t.end {
                    self.exit(ev, g);
                } else {
                    break;
                }
            }
            self.enter(ev, i, g);
        }
        while !self.stack.is_empty() {
            self.exit(ev, g);
        }
    }

    fn enter(&mut self, ev: &mut [Event], i: u32, g: &mut Graph) {
        let parent = self.stack.last().copied().unwrap_or(NO_EVENT);
        let (op, in_data) = match parent {
            NO_EVENT => (ev[i as usize].span, false),
            p => (ev[p as usize].op, ev[p as usize].in_data),
        };
        let e = &mut ev[i as usize];
        if e.kind != SpanKind::CpuOp {
            e.op = op;
        }
        e.in_data = in_data || e.names & name::DATA != 0;
        let start = 2 * i;
        if let Some(last) = self.last {
            if !shares_lock(ev, last, start) {
                // consecutive top-level ops are ordered, not timed (HTA's dependency edge)
                let kind = if self.stack.is_empty() { EdgeKind::Dependency } else { EdgeKind::Operator };
                let at = charged_to(last, start, self.last_parent);
                g.add(last, start, kind, ts(ev, start) - ts(ev, last), at);
            }
        }
        self.last = Some(start);
        self.last_parent = parent;
        self.stack.push(i);
    }

    fn exit(&mut self, ev: &[Event], g: &mut Graph) {
        let Some(i) = self.stack.pop() else { return };
        let parent = self.stack.last().copied().unwrap_or(NO_EVENT);
        let end = 2 * i + 1;
        if let Some(last) = self.last {
            if !shares_lock(ev, last, end) {
                // a call that waits for the GPU is no CPU work: its wait reaches the path
                // through the sync edge from the GPU op it waited for
                let blocking = ev[i as usize].names & name::BLOCKING != 0;
                let w = if blocking { 0 } else { ts(ev, end) - ts(ev, last) };
                g.add(last, end, EdgeKind::Operator, w, charged_to(last, end, self.last_parent));
            }
        }
        self.last = Some(end);
        self.last_parent = parent;
    }
}

/// The runtime lock across threads: the lock-holding calls' nodes in time order; at each end,
/// every start seen since leads to it (its own start by the call's time, the others as
/// dependencies), and the previous end leads to it.
pub fn runtime_lock_edges(ev: &[Event], cpu: usize, g: &mut Graph) {
    let mut nodes: Vec<u32> =
        (0..cpu as u32).filter(|&i| ev[i as usize].names & name::LOCK != 0).flat_map(|i| [2 * i, 2 * i + 1]).collect();
    // ends before starts at one time: a call that ends as another begins does not wait for it
    nodes.sort_by_key(|&n| (ts(ev, n), is_start(n), n));
    let mut starts: Vec<u32> = Vec::new();
    let mut last: Option<u32> = None;
    for n in nodes {
        if is_start(n) {
            starts.push(n);
        } else {
            while let Some(s) = starts.pop() {
                if event(s) == event(n) {
                    g.add(s, n, EdgeKind::Operator, ts(ev, n) - ts(ev, s), event(n));
                } else {
                    g.add(s, n, EdgeKind::Dependency, 0, NO_EVENT);
                }
            }
            if let Some(l) = last.filter(|&l| !is_start(l)) {
                g.add(l, n, EdgeKind::Dependency, 0, NO_EVENT);
            }
        }
        last = Some(n);
    }
}
