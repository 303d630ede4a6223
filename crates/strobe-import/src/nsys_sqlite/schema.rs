//! Opening an export read-only and finding out what it holds: which tables exist and which
//! of the columns we read each has (column sets differ across schema 2.9 → 3.2x), and the
//! small helpers that turn loosely typed SQLite values into numbers and text.

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, Row};
use rustc_hash::FxHashMap;
use std::path::Path;

/// Opens `path` read-only as an immutable database: SQLite takes no locks, never looks for
/// or creates a journal or WAL file, and so never writes beside the user's file.
pub fn open(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Connection::open_with_flags(uri(path), flags)
}

/// `file:` URI of a path with `immutable=1`, percent-encoding everything but unreserved
/// characters and `/` (so `?`, `#`, `%` and non-UTF-8 bytes in names survive).
pub fn uri(path: &Path) -> String {
    #[cfg(unix)]
    let bytes: Vec<u8> = {
        use std::os::unix::ffi::OsStrExt;
        path.as_os_str().as_bytes().to_vec()
    };
    #[cfg(not(unix))]
    let bytes: Vec<u8> = path.to_string_lossy().replace('\\', "/").into_bytes();
    let mut s = String::from("file:");
    #[cfg(not(unix))]
    if bytes.get(1) == Some(&b':') {
        s.push('/');
    }
    for &c in &bytes {
        if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~' | b'/') {
            s.push(c as char);
        } else {
            s.push_str(&format!("%{c:02X}"));
        }
    }
    s.push_str("?mode=ro&immutable=1");
    s
}

/// A table the importer reads: its canonical name and the other names it has had.
pub struct Wanted {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
}

/// One table of the export as found: the name it has in this file and its columns.
struct Found {
    name: String,
    cols: Vec<String>,
    /// Declared REAL-affinity columns (SQLite may store their integral values as integers).
    real_cols: Vec<bool>,
    /// Root page of a plain table whose records hold exactly `cols`, in order (no hidden or
    /// generated columns, no defaults, no rowid alias): it can be read page by page
    /// (`sqlite_file`). None: read it through SQLite.
    direct_root: Option<u32>,
}

/// Where a selected column's value comes from when a table is read page by page.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Src {
    /// The table has no such column: NULL, as `Schema::select` writes it.
    Null,
    /// Record column `i`.
    Col(u16),
    /// Record column `i`, of REAL affinity: an integer stored there reads as a real.
    Real(u16),
}

/// A table read page by page: its root page and, per selected column, where it is.
pub struct Direct {
    pub root: u32,
    pub src: Vec<Src>,
    /// Record columns to decode (one past the last one used).
    pub upto: usize,
}

/// Tables of the export, for the tables we read, keyed by canonical name.
pub struct Schema {
    tables: FxHashMap<&'static str, Found>,
    /// Every table name, including ones we do not read (for the "not an nsys export" check).
    pub all_tables: Vec<String>,
}

impl Schema {
    /// Finds each wanted table under its canonical name, an alias, or a versioned variant of
    /// either (`NAME_V2`, `NAME_V3`, … the highest wins), and reads its columns.
    pub fn probe(conn: &Connection, wanted: &[Wanted]) -> rusqlite::Result<Schema> {
        let mut all_tables = Vec::new();
        let mut roots: FxHashMap<String, u32> = FxHashMap::default();
        {
            let mut st =
                conn.prepare("SELECT name, type, rootpage FROM sqlite_master WHERE type IN ('table','view')")?;
            let mut rows = st.query([])?;
            while let Some(r) = rows.next()? {
                let name = text(r, 0).unwrap_or_default();
                if text(r, 1).as_deref() == Some("table") {
                    if let Some(root) = int(r, 2).and_then(|p| u32::try_from(p).ok()).filter(|&p| p > 0) {
                        roots.insert(name.clone(), root);
                    }
                }
                all_tables.push(name);
            }
        }
        let mut tables = FxHashMap::default();
        for w in wanted {
            let Some(name) =
                std::iter::once(w.name).chain(w.aliases.iter().copied()).find_map(|n| resolve(&all_tables, n))
            else {
                continue;
            };
            // table_xinfo: table_info's columns plus `hidden` (generated and virtual-table
            // columns, which records do not hold in declaration order).
            let mut st = conn.prepare(&format!("PRAGMA table_xinfo({})", quote(&name)))?;
            let mut rows = st.query([])?;
            let (mut cols, mut real_cols) = (Vec::new(), Vec::new());
            let mut plain = true;
            while let Some(r) = rows.next()? {
                let ty = text(r, 2).unwrap_or_default().to_ascii_uppercase();
                let (default, pk, hidden) = (r.get_ref(4)?, int(r, 5).unwrap_or(0), int(r, 6).unwrap_or(0));
                plain &= hidden == 0 && pk == 0 && default == ValueRef::Null;
                if hidden == 0 {
                    cols.push(text(r, 1).unwrap_or_default());
                    // SQLite's affinity rules, "Determination Of Column Affinity".
                    let real = !ty.contains("INT")
                        && !ty.contains("CHAR")
                        && !ty.contains("CLOB")
                        && !ty.contains("TEXT")
                        && !ty.contains("BLOB")
                        && (ty.contains("REAL") || ty.contains("FLOA") || ty.contains("DOUB"));
                    real_cols.push(real);
                }
            }
            let direct_root =
                if plain && cols.len() <= crate::sqlite_file::MAX_COLS { roots.get(&name).copied() } else { None };
            tables.insert(w.name, Found { name, cols, real_cols, direct_root });
        }
        Ok(Schema { tables, all_tables })
    }

    /// Rows in `table`, estimated in O(log n) as its largest rowid (exact for nsys exports,
    /// which never delete); 0 when absent or unreadable.
    pub fn row_estimate(&self, conn: &Connection, table: &str) -> u64 {
        if !self.has(table) {
            return 0;
        }
        conn.query_row(&format!("SELECT max(rowid) FROM {}", self.quoted(table)), [], |r| r.get::<_, Option<i64>>(0))
            .ok()
            .flatten()
            .unwrap_or(0)
            .max(0) as u64
    }

    pub fn has(&self, table: &str) -> bool {
        self.tables.contains_key(table)
    }

    /// The name `table` (canonical) has in this export.
    pub fn name<'a>(&'a self, table: &'a str) -> &'a str {
        self.tables.get(table).map(|f| f.name.as_str()).unwrap_or(table)
    }

    /// [`Schema::name`], quoted for SQL.
    pub fn quoted(&self, table: &str) -> String {
        quote(self.name(table))
    }

    /// Tables found under another name than their canonical one: (canonical, found).
    pub fn renamed(&self) -> Vec<(&'static str, &str)> {
        let mut v: Vec<(&'static str, &str)> =
            self.tables.iter().filter(|(k, f)| **k != f.name).map(|(k, f)| (*k, f.name.as_str())).collect();
        v.sort_unstable();
        v
    }

    pub fn has_col(&self, table: &str, col: &str) -> bool {
        self.tables.get(table).is_some_and(|f| f.cols.iter().any(|x| x.eq_ignore_ascii_case(col)))
    }

    /// The first column of `spec` (`"a|b"`: `a`, else `b`; a leading `?` marks it optional)
    /// that `table` has.
    pub fn col<'s>(&self, table: &str, spec: &'s str) -> Option<&'s str> {
        spec.trim_start_matches('?').split('|').find(|c| self.has_col(table, c))
    }

    /// The specs of `cols` not marked optional (`?`) of which `table` has no column.
    pub fn missing<'s>(&self, table: &str, cols: &[&'s str]) -> Vec<&'s str> {
        cols.iter().copied().filter(|c| !c.starts_with('?') && self.col(table, c).is_none()).collect()
    }

    /// How to read `cols` (specs as for [`Schema::col`]) of `table` page by page, in the
    /// order and with the NULLs of [`Schema::select`]; None when it must go through SQLite.
    pub fn direct(&self, table: &str, cols: &[&str]) -> Option<Direct> {
        let f = self.tables.get(table)?;
        let root = f.direct_root?;
        let src: Vec<Src> = cols
            .iter()
            .map(|spec| {
                let name = self.col(table, spec)?;
                let i = f.cols.iter().position(|x| x.eq_ignore_ascii_case(name))?;
                Some(if f.real_cols[i] { Src::Real(i as u16) } else { Src::Col(i as u16) })
            })
            .map(|s| s.unwrap_or(Src::Null))
            .collect();
        let upto = src
            .iter()
            .filter_map(|s| match s {
                Src::Col(i) | Src::Real(i) => Some(*i as usize + 1),
                Src::Null => None,
            })
            .max()
            .unwrap_or(0);
        Some(Direct { root, src, upto })
    }

    /// `SELECT` of `cols` (specs as for [`Schema::col`]) from `table`, each that the table
    /// lacks replaced by `NULL`, so row positions are those of `cols` whatever the schema.
    pub fn select(&self, table: &str, cols: &[&str], tail: &str) -> String {
        let list: Vec<String> =
            cols.iter().map(|c| self.col(table, c).map(quote).unwrap_or_else(|| "NULL".to_string())).collect();
        format!("SELECT {} FROM {} {tail}", list.join(", "), self.quoted(table))
    }
}

/// `name` itself if the export has it (SQLite names are case-insensitive), else its
/// highest `name_V<n>` variant. Anchored: `CUPTI_ACTIVITY_KIND_MEMCPY2` (a CUPTI kind of
/// its own) is not a variant of `CUPTI_ACTIVITY_KIND_MEMCPY`.
fn resolve(all: &[String], name: &str) -> Option<String> {
    if let Some(t) = all.iter().find(|t| t.eq_ignore_ascii_case(name)) {
        return Some(t.clone());
    }
    all.iter()
        .filter_map(|t| {
            let head = t.get(..name.len())?;
            let v: u32 =
                t[name.len()..].strip_prefix("_V").or_else(|| t[name.len()..].strip_prefix("_v"))?.parse().ok()?;
            head.eq_ignore_ascii_case(name).then_some((v, t))
        })
        .max()
        .map(|(_, t)| t.clone())
}

/// An SQL identifier in double quotes (embedded quotes doubled: names come from the file).
pub fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A row's values by position, whether SQLite returned it or the row was read from the
/// file's pages (`sqlite_file`): the converters below read either.
pub trait Cells {
    fn cell(&self, i: usize) -> ValueRef<'_>;
}

impl Cells for Row<'_> {
    #[inline]
    fn cell(&self, i: usize) -> ValueRef<'_> {
        self.get_ref(i).unwrap_or(ValueRef::Null)
    }
}

/// A record read page by page, seen through a [`Direct`]'s column map.
pub struct DirectRow<'r, 'a> {
    pub rec: &'r crate::sqlite_file::Record<'a>,
    pub src: &'r [Src],
}

impl Cells for DirectRow<'_, '_> {
    #[inline]
    fn cell(&self, i: usize) -> ValueRef<'_> {
        match self.src.get(i) {
            Some(Src::Col(c)) => self.rec.value(*c as usize),
            Some(Src::Real(c)) => match self.rec.value(*c as usize) {
                ValueRef::Integer(v) => ValueRef::Real(v as f64),
                v => v,
            },
            _ => ValueRef::Null,
        }
    }
}

/// An integer column, leniently: reals are truncated, numeric text is parsed, NULL and
/// anything else is None.
#[inline]
pub fn int(r: &impl Cells, i: usize) -> Option<i64> {
    match r.cell(i) {
        ValueRef::Integer(v) => Some(v),
        ValueRef::Real(f) if f.is_finite() => Some(f as i64),
        ValueRef::Text(t) => std::str::from_utf8(t).ok()?.trim().parse().ok(),
        _ => None,
    }
}

/// A text column as UTF-8, replacing invalid bytes (old exports hold Windows-1252 text).
pub fn text(r: &impl Cells, i: usize) -> Option<String> {
    match r.cell(i) {
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Integer(v) => Some(v.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
        ValueRef::Null => None,
    }
}

/// A name given either as a `StringIds` id or inline as text (old or odd schemas).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum NameRef {
    Id(i64),
    Text(Box<str>),
    #[default]
    None,
}

impl NameRef {
    /// The name's text: inline, or looked up in the export's `StringIds` (None when it is not
    /// there, or there is no name).
    pub fn text<'a>(&'a self, strings: &'a FxHashMap<i64, Box<str>>) -> Option<&'a str> {
        match self {
            NameRef::Id(id) => strings.get(id).map(|t| &**t),
            NameRef::Text(t) => Some(t),
            NameRef::None => None,
        }
    }
}

pub fn name_ref(r: &impl Cells, i: usize) -> NameRef {
    match r.cell(i) {
        ValueRef::Integer(v) => NameRef::Id(v),
        ValueRef::Text(t) if !t.is_empty() => NameRef::Text(String::from_utf8_lossy(t).into()),
        _ => NameRef::None,
    }
}

/// The first of several name columns that is set.
pub fn first_name(r: &impl Cells, idx: &[usize]) -> NameRef {
    for &i in idx {
        let n = name_ref(r, i);
        if !matches!(n, NameRef::None) {
            return n;
        }
    }
    NameRef::None
}

/// `globalTid`/`globalPid` → (pid, tid): the pid sits in bits 24..48, the tid in bits 0..24.
#[inline]
pub fn split_global(g: i64) -> (u32, u32) {
    (((g >> 24) & 0xFF_FFFF) as u32, (g & 0xFF_FFFF) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versioned_names_resolve_to_the_highest_and_are_anchored() {
        let all: Vec<String> =
            ["CUPTI_ACTIVITY_KIND_MEMCPY2", "NVTX_EVENTS_V2", "NVTX_EVENTS_V10", "NVTX_EVENTS_VX", "stringids"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        assert_eq!(resolve(&all, "NVTX_EVENTS").as_deref(), Some("NVTX_EVENTS_V10"));
        assert_eq!(resolve(&all, "CUPTI_ACTIVITY_KIND_MEMCPY"), None);
        assert_eq!(resolve(&all, "StringIds").as_deref(), Some("stringids"));
        assert_eq!(quote("a\"b"), "\"a\"\"b\"");
    }

    #[test]
    fn column_specs_pick_the_first_present_and_optional_ones_are_not_missing() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE K_V3(start, \"end\", globalTid, name);").unwrap();
        let s = Schema::probe(&conn, &[Wanted { name: "K", aliases: &[] }]).unwrap();
        assert_eq!(s.col("K", "globalPid|globalTid"), Some("globalTid"));
        assert_eq!(s.missing("K", &["start", "gridX", "?shortName", "globalPid|globalTid"]), vec!["gridX"]);
        assert_eq!(s.select("K", &["start", "?gridX"], ""), "SELECT \"start\", NULL FROM \"K_V3\" ");
        assert_eq!(s.renamed(), vec![("K", "K_V3")]);
    }
}
