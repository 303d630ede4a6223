//! `DIAGNOSTIC_EVENT`: what Nsight Systems itself reported while it profiled ("No CUDA events
//! collected", "not all events were collected", buffer overflows, …). Its warnings and errors
//! go to the load notes, one note per distinct text with how many times it was reported,
//! since they say which figures to distrust; its informational rows ("Number of CUDA events
//! collected") are left out. Exports older than the table (before schema 2.x had it) have
//! none, and that is no error; nor is a table that cannot be read (a note says so).
//!
//! Severity numbers come from `ENUM_DIAGNOSTIC_SEVERITY_LEVEL` where the export has it (by the
//! names `Warning` and `Error`), else nsys's documented numbering (2 warning, 3 error). The
//! text is inline in the exports seen so far; a `StringIds` id where the column holds integers.

use super::schema::{int, name_ref, NameRef, Schema};
use super::target::enum_table;
use rusqlite::Connection;
use rustc_hash::FxHashMap;

pub(super) const TABLE: &str = "DIAGNOSTIC_EVENT";
pub(super) const SEVERITY: &str = "ENUM_DIAGNOSTIC_SEVERITY_LEVEL";

/// The export's warnings and errors as notes, in order of first appearance.
pub fn notes(conn: &Connection, schema: &Schema, strings: &FxHashMap<i64, Box<str>>, notes: &mut Vec<String>) {
    if !schema.has(TABLE) {
        return;
    }
    match read(conn, schema, strings) {
        Ok(found) => notes.extend(found.into_iter().map(|((sev, text), n)| {
            let times = if n > 1 { format!(" (reported {n} times)") } else { String::new() };
            format!("nsys {sev}: {text}{times}")
        })),
        Err(e) => notes.push(format!("{TABLE} could not be read ({e}): the profiler's own warnings are not shown")),
    }
}

fn read(
    conn: &Connection,
    schema: &Schema,
    strings: &FxHashMap<i64, Box<str>>,
) -> rusqlite::Result<Vec<((&'static str, String), u64)>> {
    let mut levels: FxHashMap<i64, &'static str> = [(2, "warning"), (3, "error")].into_iter().collect();
    let named = enum_table(conn, schema, SEVERITY)?;
    if !named.is_empty() {
        levels = named
            .iter()
            .filter_map(|(&id, (name, _))| match name.as_str() {
                "Warning" => Some((id, "warning")),
                "Error" => Some((id, "error")),
                _ => None,
            })
            .collect();
    }
    if schema.col(TABLE, "severity").is_none() || schema.col(TABLE, "text").is_none() {
        return Ok(Vec::new());
    }
    let order = if schema.has_col(TABLE, "timestamp") { "ORDER BY timestamp" } else { "" };
    let mut st = conn.prepare(&schema.select(TABLE, &["severity", "text"], order))?;
    let mut rows = st.query([])?;
    let mut out: Vec<((&'static str, String), u64)> = Vec::new();
    while let Some(r) = rows.next()? {
        let Some(sev) = int(r, 0).and_then(|s| levels.get(&s).copied()) else { continue };
        let text = match name_ref(r, 1) {
            NameRef::Text(t) => t.trim().to_string(),
            NameRef::Id(id) => strings.get(&id).map_or_else(|| format!("<string {id}>"), |s| s.trim().to_string()),
            NameRef::None => continue,
        };
        match out.iter_mut().find(|(k, _)| k.0 == sev && k.1 == text) {
            Some(e) => e.1 += 1,
            None => out.push(((sev, text), 1)),
        }
    }
    Ok(out)
}
