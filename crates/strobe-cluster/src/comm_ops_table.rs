//! A rank's collective records (`CommRecords::ops`) as the summary's `comm_ops` table: one row
//! per record, with its group, sizes and times, so a report merged from summaries matches
//! collectives within their groups and gives the same bandwidth tables as the traces.

use crate::table::{Rows, Table};
use anyhow::{anyhow, Result};
use strobe_analysis::ranks::comm_ops::{CommOp, TimedBy};

fn list(v: &[i64]) -> Option<String> {
    serde_json::to_string(v).ok()
}

fn timed(t: TimedBy) -> &'static str {
    match t {
        TimedBy::Kernel => "kernel",
        TimedBy::Work => "work",
        TimedBy::Call => "call",
    }
}

fn u(v: Option<u64>) -> Option<i64> {
    v.and_then(|x| i64::try_from(x).ok())
}

pub fn write_table(rank: Option<i64>, ops: &[CommOp]) -> Table {
    Table::default()
        .i64("rank", ops.iter().map(|_| rank))
        .str("name", ops.iter().map(|o| Some(o.name.clone())))
        .str("group", ops.iter().map(|o| o.group.clone()))
        .str("group_desc", ops.iter().map(|o| o.group_desc.clone()))
        .str("group_ranks", ops.iter().map(|o| list(&o.group_ranks)))
        .i64("group_size", ops.iter().map(|o| o.group_size))
        .i64("in_nelems", ops.iter().map(|o| u(o.in_nelems)))
        .i64("out_nelems", ops.iter().map(|o| u(o.out_nelems)))
        .str("dtype", ops.iter().map(|o| o.dtype.clone()))
        .str("in_split", ops.iter().map(|o| list(&o.in_split)))
        .str("out_split", ops.iter().map(|o| list(&o.out_split)))
        .i64("issued_ns", ops.iter().map(|o| Some(o.issued_ns)))
        .i64("start_ns", ops.iter().map(|o| Some(o.start_ns)))
        .i64("end_ns", ops.iter().map(|o| Some(o.end_ns)))
        .str("timed_by", ops.iter().map(|o| Some(timed(o.timed_by).to_string())))
        .i64("span", ops.iter().map(|o| Some(o.span as i64)))
        .i64("lane", ops.iter().map(|o| Some(o.lane as i64)))
}

pub fn read_table(t: &Rows) -> Result<Vec<CommOp>> {
    let p = &t.path;
    let ints = |c: &str, v: Option<String>, i: usize| -> Result<Vec<i64>> {
        match v {
            None => Ok(Vec::new()),
            Some(s) => serde_json::from_str(&s).map_err(|e| anyhow!("{p}: row {i}, column {c}: {e}")),
        }
    };
    let (names, groups, descs, granks, gsize) =
        (t.req_strs("name")?, t.strs("group")?, t.strs("group_desc")?, t.strs("group_ranks")?, t.i64s("group_size")?);
    let (inn, outn, dtype, ins, outs) =
        (t.i64s("in_nelems")?, t.i64s("out_nelems")?, t.strs("dtype")?, t.strs("in_split")?, t.strs("out_split")?);
    let (issued, starts, ends, timed_by, spans) = (
        t.req_i64s("issued_ns")?,
        t.req_i64s("start_ns")?,
        t.req_i64s("end_ns")?,
        t.req_strs("timed_by")?,
        t.req_i64s("span")?,
    );
    let lanes = t.req_i64s("lane")?;
    let mut out = Vec::with_capacity(names.len());
    for (i, name) in names.into_iter().enumerate() {
        out.push(CommOp {
            name,
            group: groups[i].clone(),
            group_desc: descs[i].clone(),
            group_ranks: ints("group_ranks", granks[i].clone(), i)?,
            group_size: gsize[i],
            in_nelems: inn[i].and_then(|x| u64::try_from(x).ok()),
            out_nelems: outn[i].and_then(|x| u64::try_from(x).ok()),
            dtype: dtype[i].clone(),
            in_split: ints("in_split", ins[i].clone(), i)?,
            out_split: ints("out_split", outs[i].clone(), i)?,
            issued_ns: issued[i],
            start_ns: starts[i],
            end_ns: ends[i],
            timed_by: match timed_by[i].as_str() {
                "kernel" => TimedBy::Kernel,
                "work" => TimedBy::Work,
                "call" => TimedBy::Call,
                other => return Err(anyhow!("{p}: row {i}: timed_by {other:?} is none of kernel, work, call")),
            },
            span: u32::try_from(spans[i]).map_err(|_| anyhow!("{p}: row {i}: span {} out of range", spans[i]))?,
            lane: u32::try_from(lanes[i]).map_err(|_| anyhow!("{p}: row {i}: lane {} out of range", lanes[i]))?,
        });
    }
    Ok(out)
}
