//! One row per span, ordered by (pid, tid or stream, ts, depth). Lanes that share a
//! (pid, tid) — a CPU thread and its NVTX ranges, a stream's kernels and its GPU
//! annotations — are merged on the fly. The rows are cut into pieces of `PIECE` rows that
//! are formatted on all cores a few at a time and written in order, so memory stays bounded
//! (a few pieces) whatever the trace's size.

use super::lanes::LaneIds;
use super::sink::{args_json, opt_id, opt_str, Cell, Sink};
use super::Format;
use rayon::prelude::*;
use std::io::Write;
use strobe_model::flags;
use strobe_store::{LaneView, Store};

pub const COLUMNS: &[&str] = &[
    "pid",
    "tid",
    "process_name",
    "thread_name",
    "lane",
    "device",
    "stream",
    "depth",
    "ts_ns",
    "dur_ns",
    "name",
    "category",
    "args",
];

/// Rows per piece formatted apart.
pub const PIECE: usize = 8 * 1024;

/// Lanes in export order, grouped by (pid, tid or stream); copy-engine lanes left out.
pub fn lane_groups(store: &Store, ids: &[Option<LaneIds>]) -> Vec<Vec<u32>> {
    let mut lanes: Vec<u32> = (0..store.lanes.len() as u32).filter(|&l| ids[l as usize].is_some()).collect();
    let key = |l: u32| ids[l as usize].as_ref().map(|x| x.sort_key());
    lanes.sort_by(|&a, &b| {
        key(a)
            .cmp(&key(b))
            .then_with(|| store.lanes[a as usize].kind.cmp(&store.lanes[b as usize].kind))
            .then(a.cmp(&b))
    });
    let mut groups: Vec<Vec<u32>> = Vec::new();
    for l in lanes {
        match groups.last_mut() {
            Some(g) if key(g[0]) == key(l) => g.push(l),
            _ => groups.push(vec![l]),
        }
    }
    groups
}

/// A run of rows: member ranges `[b, e)` of each lane of one group, merged.
struct Piece {
    group: usize,
    ranges: Vec<(usize, usize)>,
    rows: usize,
}

/// Cuts each group into pieces of about `PIECE` rows at keys of its largest lane, so that
/// formatting the pieces one after another gives exactly the merge of the whole group:
/// rows order by (ts, depth, lane position in the group).
fn pieces(views: &[Vec<LaneView<'_>>], piece: usize) -> Vec<Piece> {
    let mut out = Vec::new();
    for (g, vs) in views.iter().enumerate() {
        let total: usize = vs.iter().map(|v| v.starts.len()).sum();
        let (big, _) = vs.iter().enumerate().max_by_key(|(_, v)| v.starts.len()).expect("groups are not empty");
        let bv = &vs[big];
        let mut cuts: Vec<Vec<usize>> = vec![vec![0; vs.len()]];
        let mut at = piece;
        while total > piece && at < bv.starts.len() {
            let key = (bv.starts[at], bv.depth[at]);
            let cut: Vec<usize> = vs
                .iter()
                .enumerate()
                .map(|(k, v)| {
                    let n = v.starts.len();
                    let before = |i: usize| {
                        let ki = (v.starts[i], v.depth[i]);
                        ki < key || (ki == key && k < big)
                    };
                    if k == big {
                        at
                    } else {
                        partition(n, before)
                    }
                })
                .collect();
            cuts.push(cut);
            at += piece;
        }
        cuts.push(vs.iter().map(|v| v.starts.len()).collect());
        for w in cuts.windows(2) {
            let ranges: Vec<(usize, usize)> = w[0].iter().zip(&w[1]).map(|(&b, &e)| (b, e.max(b))).collect();
            let rows = ranges.iter().map(|(b, e)| e - b).sum();
            if rows > 0 {
                out.push(Piece { group: g, ranges, rows });
            }
        }
    }
    out
}

/// First index in 0..n for which `before` is false (`before` is monotone).
fn partition(n: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

pub fn write<W: Write>(store: &Store, out: &mut W, format: Format, piece: usize) -> std::io::Result<u64> {
    let ids = LaneIds::of_store(store);
    let groups = lane_groups(store, &ids);
    let views: Vec<Vec<LaneView<'_>>> =
        groups.iter().map(|g| g.iter().map(|&l| store.lane_view(l)).collect()).collect();
    let gids: Vec<Vec<&LaneIds>> = groups
        .iter()
        .map(|g| g.iter().map(|&l| ids[l as usize].as_ref().expect("grouped lanes have ids")).collect())
        .collect();
    let pieces = pieces(&views, piece.max(1));
    let wave = rayon::current_num_threads().max(1) * 2;
    // A formatting thread fills pieces a wave at a time on the rayon pool while this thread
    // writes the previous ones: at most about two waves of pieces are held at once.
    let (tx, rx) = std::sync::mpsc::sync_channel::<(Vec<u8>, usize)>(wave);
    let (views, gids, pieces) = (&views, &gids, &pieces);
    std::thread::scope(|sc| {
        sc.spawn(move || {
            for batch in pieces.chunks(wave) {
                let bufs: Vec<Vec<u8>> = batch
                    .par_iter()
                    .map(|p| {
                        let mut s = Sink::piece(format, COLUMNS, p.rows * 400);
                        format_piece(store, &mut s, &views[p.group], &gids[p.group], &p.ranges)
                            .expect("formatting into memory cannot fail");
                        s.into_bytes()
                    })
                    .collect();
                for (b, p) in bufs.into_iter().zip(batch) {
                    if tx.send((b, p.rows)).is_err() {
                        return; // the writer stopped on an error
                    }
                }
            }
        });
        let mut rows = 0u64;
        for (b, n) in rx {
            out.write_all(&b)?;
            rows += n as u64;
        }
        Ok(rows)
    })
}

fn format_piece<W: Write>(
    store: &Store,
    sink: &mut Sink<W>,
    views: &[LaneView<'_>],
    ids: &[&LaneIds],
    ranges: &[(usize, usize)],
) -> std::io::Result<()> {
    let mut scratch = String::new();
    let prefixes: Vec<Vec<u8>> = ids.iter().map(|id| sink.prefix(&id_cells(id))).collect();
    if let [(b, e)] = ranges {
        for i in *b..*e {
            row(store, sink, &prefixes[0], &views[0], i, &mut scratch)?;
        }
        return Ok(());
    }
    // k-way merge by (ts, depth, lane order); k is 2 or 3 at most in practice
    let mut at: Vec<usize> = ranges.iter().map(|r| r.0).collect();
    loop {
        let mut best: Option<(i64, u32, usize)> = None;
        for (k, v) in views.iter().enumerate() {
            let i = at[k];
            if i < ranges[k].1 {
                let c = (v.starts[i], v.depth[i], k);
                if best.map(|b| c < b).unwrap_or(true) {
                    best = Some(c);
                }
            }
        }
        let Some((_, _, k)) = best else { return Ok(()) };
        row(store, sink, &prefixes[k], &views[k], at[k], &mut scratch)?;
        at[k] += 1;
    }
}

/// A lane's identity columns, the same for all its rows.
fn id_cells(id: &LaneIds) -> [Cell<'_>; ID_COLUMNS] {
    let opt_int = |x: Option<i64>| x.map(Cell::Int).unwrap_or(Cell::Null);
    [
        Cell::Id(&id.pid),
        opt_id(id.tid.as_ref()),
        opt_str(&id.process_name),
        opt_str(&id.thread_name),
        Cell::Str(&id.lane),
        opt_int(id.device),
        opt_int(id.stream),
    ]
}

/// pid, tid, process_name, thread_name, lane, device, stream.
const ID_COLUMNS: usize = 7;

#[inline]
fn row<W: Write>(
    store: &Store,
    sink: &mut Sink<W>,
    prefix: &[u8],
    v: &LaneView<'_>,
    i: usize,
    scratch: &mut String,
) -> std::io::Result<()> {
    let span = v.span[i];
    let m = store.span_meta(span);
    let (ts, end) = (v.starts[i], v.ends[i]);
    let dur = if m.flags & flags::UNCLOSED as u8 != 0 { -1 } else { end - ts };
    let raw = store.span_args(span);
    let args = args_json(&raw, scratch);
    sink.row_after(
        prefix,
        ID_COLUMNS,
        &[
            Cell::Int(v.depth[i] as i64),
            Cell::Int(ts),
            Cell::Int(dur),
            Cell::Str(store.string(m.name)),
            Cell::Str(store.string(m.cat)),
            Cell::Json(args),
        ],
    )
}
