//! CUDA graph nodes in an export recorded with `--cuda-graph-trace=node`: the node (and graph,
//! where the schema has the column) that ran each kernel, copy and set, as the args Kineto
//! writes (`graph node id`, `graph id`); and each node's creation (`CUDA_GRAPH_NODE_EVENTS`)
//! as a `graph node created` span on the thread that made it, with the node it was cloned
//! from (`original graph node id`), so that an executed node leads back to the launch that
//! captured it (`strobe_analysis::cuda_graphs`).

use super::rows::GraphIds;
use super::{put_int, schema, Ctx};
use crate::ImportError;
use strobe_model::SpanKind;

enum NodeError {
    Sql(rusqlite::Error),
    Io(std::io::Error),
}

impl From<rusqlite::Error> for NodeError {
    fn from(e: rusqlite::Error) -> Self {
        NodeError::Sql(e)
    }
}

impl From<std::io::Error> for NodeError {
    fn from(e: std::io::Error) -> Self {
        NodeError::Io(e)
    }
}

/// The table of node creations.
const NODE_EVENTS: &str = "CUDA_GRAPH_NODE_EVENTS";
/// The span name the analysis looks for (`strobe_analysis::cuda_graphs::NODE_CREATED`).
const NODE_CREATED: &str = "graph node created";

/// Appends `,"graph node id":N,"graph id":G` for what the row has (CUPTI's 0 is no node).
pub(super) fn put_graph_ids(a: &mut String, g: &GraphIds) {
    if let Some(n) = g.node.filter(|&n| n != 0) {
        put_int(a, ",\"graph node id\":", n);
    }
    if let Some(id) = g.graph.filter(|&id| id != 0) {
        put_int(a, ",\"graph id\":", id);
    }
}

impl Ctx<'_> {
    /// Each row of `CUDA_GRAPH_NODE_EVENTS` of this converter's process, where the export has
    /// the table: a zero-length span at its time on its thread.
    pub(super) fn graph_node_events(&mut self, conn: &rusqlite::Connection) -> Result<(), ImportError> {
        // an unreadable table costs the capture attribution, not the export: a note
        match self.read_node_events(conn) {
            Ok(()) => Ok(()),
            Err(NodeError::Sql(e)) => {
                self.load.notes.push(format!(
                    "{NODE_EVENTS} could not be read ({e}): graph nodes are not traced back to their capture"
                ));
                Ok(())
            }
            Err(NodeError::Io(e)) => Err(ImportError::io(self.path, e)),
        }
    }

    fn read_node_events(&mut self, conn: &rusqlite::Connection) -> Result<(), NodeError> {
        let cols: Vec<String> = match conn.prepare(&format!("PRAGMA table_info(\"{NODE_EVENTS}\")")) {
            Ok(mut st) => st.query_map([], |r| r.get::<_, String>(1))?.collect::<Result<_, _>>()?,
            Err(_) => return Ok(()),
        };
        if cols.is_empty() {
            return Ok(());
        }
        let lacking: Vec<&str> =
            ["start", "globalTid", "graphNodeId"].into_iter().filter(|c| !cols.iter().any(|x| x == c)).collect();
        if !lacking.is_empty() {
            self.load.notes.push(format!(
                "{NODE_EVENTS} has no column {}: graph nodes are not traced back to their capture",
                lacking.join(", ")
            ));
            return Ok(());
        }
        let original = if cols.iter().any(|c| c == "originalGraphNodeId") { "originalGraphNodeId" } else { "NULL" };
        let mut st = conn.prepare(&format!(
            "SELECT start, globalTid, graphNodeId, {original} FROM \"{NODE_EVENTS}\" ORDER BY start"
        ))?;
        let mut rows = st.query([])?;
        let (name, cat) = (self.b.intern(NODE_CREATED), self.b.intern("cuda_graph"));
        let (mut n, mut skipped) = (0u64, 0u64);
        while let Some(r) = rows.next()? {
            n += 1;
            let (Some(ts), Some(g), Some(node)) = (schema::int(r, 0), schema::int(r, 1), schema::int(r, 2)) else {
                skipped += 1;
                continue;
            };
            let (pid, tid) = schema::split_global(g);
            if self.only_pid.is_some_and(|p| p != pid) {
                continue;
            }
            let lane = self.thread_lane(pid, tid);
            self.args.clear();
            put_int(&mut self.args, "{\"graph node id\":", node);
            if let Some(o) = schema::int(r, 3) {
                put_int(&mut self.args, ",\"original graph node id\":", o);
            }
            self.args.push('}');
            self.push(lane, ts, ts, name, cat, SpanKind::Other, 0, 0, None)?;
        }
        *self.load.by_category.entry(NODE_EVENTS.to_string()).or_default() += n;
        if skipped > 0 {
            self.load.notes.push(format!("{skipped} {NODE_EVENTS} rows without a time, thread or node id skipped"));
        }
        Ok(())
    }
}
