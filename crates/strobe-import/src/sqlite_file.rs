//! Reads the rows of an SQLite table straight from the database file's pages
//! (<https://www.sqlite.org/fileformat.html>, "Database File Format"), without SQLite's
//! virtual machine.
//!
//! Why: an Nsight Systems export is millions of short rows of integers, and SQLite's
//! `SELECT` costs about 300 ns a row on this project's 2-core reference machine (its VDBE
//! loop, `sqlite3_column_*` calls), most of an nsys import. Decoding a leaf page's records
//! here costs a small fraction of that (`strobe bench` figures in docs/benchmarks.md).
//!
//! Only what a plain full scan of an ordinary rowid table needs is read: the 100-byte
//! header, table b-tree interior and leaf pages, overflow chains and records. Anything else
//! (UTF-16 text, `WITHOUT ROWID` tables, generated columns, column defaults, rowid aliases)
//! is refused up front by the caller's checks or here, and the caller reads that table
//! through SQLite instead. Like SQLite opened with `immutable=1`, the main file is read as
//! it is: no journal or WAL is looked at. Every offset is bounds-checked; a corrupt file
//! is an error naming the page, never a panic or a loop.

use memmap2::Mmap;
use rusqlite::types::ValueRef;
use std::path::Path;

/// SQLite's own limit on a b-tree's depth is 20; a deeper "tree" is a corrupt file.
const MAX_DEPTH: usize = 40;
/// Most columns of one record this reader decodes (nsys tables have ≤ 30).
pub const MAX_COLS: usize = 64;

pub struct SqliteFile {
    map: Mmap,
    page_size: usize,
    /// Page size less the reserved bytes at each page's end.
    usable: usize,
    pages: u32,
}

/// One record's column types and offsets, decoded up to the columns asked for. Kept and
/// refilled from row to row (it is 768 bytes: built afresh per row, its zeroing and copy
/// cost as much as the decoding).
pub struct Columns {
    n: usize,
    types: [u64; MAX_COLS],
    offs: [u32; MAX_COLS],
}

/// What one table's scan keeps from leaf to leaf: the buffer that gathers payloads spilled
/// onto overflow pages, and which overflow pages have been read. Each overflow page belongs
/// to one chain, so a page met twice is a damaged file (a loop, or chains sharing pages):
/// refusing it bounds the scan's overflow reading by the file's size.
#[derive(Default)]
pub struct Scratch {
    buf: Vec<u8>,
    overflow_seen: Vec<u64>,
}

/// A record: its payload and decoded columns.
#[derive(Clone, Copy)]
pub struct Record<'a> {
    payload: &'a [u8],
    cols: &'a Columns,
}

impl SqliteFile {
    /// Maps `path` and checks its header. Err says why it cannot be read directly.
    pub fn open(path: &Path) -> Result<SqliteFile, String> {
        let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
        // SAFETY: the file is only read; an export is not modified while it is imported
        // (the same assumption the JSON importer makes of its mapped trace).
        let map = unsafe { Mmap::map(&f) }.map_err(|e| e.to_string())?;
        if map.len() < 100 || &map[..16] != b"SQLite format 3\0" {
            return Err("no SQLite header".into());
        }
        let page_size = match u16::from_be_bytes([map[16], map[17]]) {
            1 => 65536,
            n if n >= 512 && n.is_power_of_two() => n as usize,
            n => return Err(format!("page size {n} in the header")),
        };
        let usable = page_size - map[20] as usize;
        if usable < 480 {
            return Err(format!("{} reserved bytes per page", map[20]));
        }
        match u32::from_be_bytes([map[56], map[57], map[58], map[59]]) {
            0 | 1 => {}
            e => return Err(format!("text encoding {e} (UTF-16): read through SQLite")),
        }
        let pages = (map.len() / page_size).min(u32::MAX as usize) as u32;
        Ok(SqliteFile { map, page_size, usable, pages })
    }

    /// Pages in the file.
    pub fn page_count(&self) -> u32 {
        self.pages
    }

    fn page(&self, n: u32) -> Result<&[u8], String> {
        if n == 0 || n > self.pages {
            return Err(format!("page {n} is outside the file ({} pages)", self.pages));
        }
        let at = (n as usize - 1) * self.page_size;
        Ok(&self.map[at..at + self.page_size])
    }

    /// The leaf pages of the table b-tree rooted at `root`, in rowid order. The interior
    /// pages are walked first, so a malformed tree is refused before any row is read.
    pub fn table_leaves(&self, root: u32) -> Result<Vec<u32>, String> {
        let mut seen = vec![0u64; self.pages as usize / 64 + 1];
        let mut leaves = Vec::new();
        // (page, depth); children are pushed in reverse so they pop in order.
        let mut stack = vec![(root, 0usize)];
        while let Some((n, depth)) = stack.pop() {
            let page = self.page(n)?;
            let bit = (n as usize - 1) / 64;
            if seen[bit] & (1 << ((n - 1) % 64)) != 0 {
                return Err(format!("page {n} appears twice in the table's b-tree"));
            }
            seen[bit] |= 1 << ((n - 1) % 64);
            let h = if n == 1 { 100 } else { 0 };
            match page[h] {
                13 => leaves.push(n),
                5 if depth < MAX_DEPTH => {
                    let area = &page[..self.usable];
                    let cells = self.cell_offsets(page, h, 12, n)?;
                    let right = be_u32(area, h + 8).ok_or_else(|| format!("page {n}: truncated header"))?;
                    stack.push((right, depth + 1));
                    for at in cells.rev() {
                        let child = be_u32(area, at).ok_or_else(|| format!("page {n}: cell beyond the page"))?;
                        stack.push((child, depth + 1));
                    }
                }
                5 => return Err(format!("page {n}: table b-tree deeper than {MAX_DEPTH}")),
                t => return Err(format!("page {n}: not a table b-tree page (type {t})")),
            }
        }
        Ok(leaves)
    }

    /// Cell offsets of a b-tree page whose header (at `h`) is `hdr_len` bytes long.
    fn cell_offsets<'p>(
        &self,
        page: &'p [u8],
        h: usize,
        hdr_len: usize,
        n: u32,
    ) -> Result<impl DoubleEndedIterator<Item = usize> + 'p, String> {
        let count = be_u16(page, h + 3).ok_or_else(|| format!("page {n}: truncated header"))? as usize;
        let ptrs = h + hdr_len;
        if ptrs + 2 * count > self.usable {
            return Err(format!("page {n}: {count} cells do not fit"));
        }
        let usable = self.usable;
        Ok((0..count).map(move |i| {
            let at = u16::from_be_bytes([page[ptrs + 2 * i], page[ptrs + 2 * i + 1]]) as usize;
            // An offset outside the usable area is read as one past it: the cell's reads
            // then fail their bounds checks with this page's number.
            if at < usable {
                at
            } else {
                usable
            }
        }))
    }

    /// Calls `f(rowid, record)` for each row of leaf page `n`, decoding each record's
    /// first `upto` columns; stops early when `f` returns false. Pass the same `scratch` to
    /// every leaf of one table.
    pub fn scan_leaf(
        &self,
        n: u32,
        upto: usize,
        scratch: &mut Scratch,
        mut f: impl FnMut(i64, &Record<'_>) -> bool,
    ) -> Result<bool, String> {
        let page = self.page(n)?;
        let h = if n == 1 { 100 } else { 0 };
        if page[h] != 13 {
            return Err(format!("page {n}: not a table leaf page (type {})", page[h]));
        }
        let area = &page[..self.usable];
        let x = self.usable - 35;
        let mut cols = Columns { n: 0, types: [0; MAX_COLS], offs: [0; MAX_COLS] };
        for at in self.cell_offsets(page, h, 8, n)? {
            let bad = || format!("page {n}: cell at offset {at} runs past the page");
            let (size, k) = varint(area, at).ok_or_else(bad)?;
            let (rowid, k2) = varint(area, at + k).ok_or_else(bad)?;
            let body = at + k + k2;
            let size = usize::try_from(size).map_err(|_| bad())?;
            let payload: &[u8] = if size <= x {
                area.get(body..body + size).ok_or_else(bad)?
            } else {
                self.spilled(area, body, size, n, scratch)?;
                &scratch.buf
            };
            cols.parse(payload, upto).map_err(|e| format!("page {n}, row {rowid}: {e}"))?;
            if !f(rowid as i64, &Record { payload, cols: &cols }) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Gathers a payload of `size` bytes that starts at `body` and continues on overflow
    /// pages into `scratch` (fileformat.html, "Cell Payload Overflow Pages").
    fn spilled(&self, area: &[u8], body: usize, size: usize, n: u32, scratch: &mut Scratch) -> Result<(), String> {
        let u = self.usable;
        let m = (u - 12) * 32 / 255 - 23;
        let k = m + (size - m) % (u - 4);
        let local = if k <= u - 35 { k } else { m };
        let bad = || format!("page {n}: overflowing cell runs past the page");
        if size > self.map.len() {
            return Err(format!("page {n}: a {size}-byte payload in a smaller file"));
        }
        if scratch.overflow_seen.is_empty() {
            scratch.overflow_seen = vec![0u64; self.pages as usize / 64 + 1];
        }
        let out = &mut scratch.buf;
        out.clear();
        out.extend_from_slice(area.get(body..body + local).ok_or_else(bad)?);
        let mut next = be_u32(area, body + local).ok_or_else(bad)?;
        while out.len() < size {
            if next == 0 {
                return Err(format!("page {n}: overflow chain ends before its {size}-byte payload"));
            }
            let p = self.page(next)?;
            let (w, bit) = ((next as usize - 1) / 64, 1u64 << ((next - 1) % 64));
            if scratch.overflow_seen[w] & bit != 0 {
                return Err(format!("page {n}: overflow page {next} is read twice"));
            }
            scratch.overflow_seen[w] |= bit;
            let take = (size - out.len()).min(u - 4);
            out.extend_from_slice(&p[4..4 + take]);
            next = u32::from_be_bytes([p[0], p[1], p[2], p[3]]);
        }
        Ok(())
    }
}

impl Columns {
    /// Decodes the header of `payload` (fileformat.html, "Record Format") up to `upto`
    /// columns (at most [`MAX_COLS`]).
    fn parse(&mut self, payload: &[u8], upto: usize) -> Result<(), String> {
        let r = self;
        r.n = 0;
        let (hlen, mut at) = varint(payload, 0).ok_or("record header runs past its payload")?;
        let hlen = usize::try_from(hlen)
            .ok()
            .filter(|&h| h <= payload.len())
            .ok_or("record header longer than its payload")?;
        let mut off = hlen;
        let want = upto.min(MAX_COLS);
        while at < hlen && r.n < want {
            // a serial type is nearly always one byte (every type but a text or blob longer
            // than 57 bytes): read it inline, without the varint loop
            let t = match payload[at] {
                b if b < 0x80 => {
                    at += 1;
                    b as u64
                }
                _ => {
                    let (t, k) = varint(&payload[..hlen], at).ok_or("record header runs past its payload")?;
                    at += k;
                    t
                }
            };
            let len = match t {
                // 10 and 11 are reserved: SQLite reads them as NULL, of no length
                0 | 8..=11 => 0,
                1..=4 => t as usize,
                5 => 6,
                6 | 7 => 8,
                _ => ((t - 12) / 2) as usize,
            };
            if off + len > payload.len() {
                return Err("record value runs past its payload".into());
            }
            r.types[r.n] = t;
            r.offs[r.n] = off as u32;
            r.n += 1;
            off += len;
        }
        Ok(())
    }
}

impl<'a> Record<'a> {
    /// Column `i`; a column the record does not hold (added to the table after the row
    /// was written) is NULL, its default when the table has none.
    #[inline]
    pub fn value(&self, i: usize) -> ValueRef<'a> {
        let c = self.cols;
        if i >= c.n {
            return ValueRef::Null;
        }
        let at = c.offs[i] as usize;
        let p = self.payload;
        let int = |len: usize| -> i64 {
            // Big-endian two's complement of `len` bytes, sign-extended.
            let mut v: i64 = (p[at] as i8) as i64;
            for &b in &p[at + 1..at + len] {
                v = (v << 8) | b as i64;
            }
            v
        };
        match c.types[i] {
            0 => ValueRef::Null,
            1 => ValueRef::Integer(int(1)),
            2 => ValueRef::Integer(int(2)),
            3 => ValueRef::Integer(int(3)),
            4 => ValueRef::Integer(int(4)),
            5 => ValueRef::Integer(int(6)),
            6 => ValueRef::Integer(int(8)),
            // a stored NaN reads as NULL, as in SQLite
            7 => match f64::from_bits(int(8) as u64) {
                f if f.is_nan() => ValueRef::Null,
                f => ValueRef::Real(f),
            },
            8 => ValueRef::Integer(0),
            9 => ValueRef::Integer(1),
            10 | 11 => ValueRef::Null,
            t => {
                let len = ((t - 12) / 2) as usize;
                let s = &p[at..at + len];
                if t % 2 == 0 {
                    ValueRef::Blob(s)
                } else {
                    ValueRef::Text(s)
                }
            }
        }
    }
}

/// SQLite's varint at `at`: (value, bytes read), None past the end of `b`.
#[inline]
fn varint(b: &[u8], at: usize) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for i in 0..8 {
        let c = *b.get(at + i)?;
        v = (v << 7) | (c & 0x7f) as u64;
        if c < 0x80 {
            return Some((v, i + 1));
        }
    }
    Some(((v << 8) | *b.get(at + 8)? as u64, 9))
}

fn be_u16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn be_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rusqlite::types::Value;

    fn owned(v: ValueRef<'_>) -> Value {
        v.into()
    }

    /// Every row of table `t` as SQLite reads it and as this reader does.
    fn both(path: &Path, t: &str, ncols: usize) -> (Vec<Vec<Value>>, Vec<Vec<Value>>) {
        let conn = rusqlite::Connection::open(path).unwrap();
        let root: u32 =
            conn.query_row("SELECT rootpage FROM sqlite_master WHERE name = ?1", [t], |r| r.get(0)).unwrap();
        let mut st = conn.prepare(&format!("SELECT rowid, * FROM {t} ORDER BY rowid")).unwrap();
        let sql: Vec<Vec<Value>> = st
            .query_map([], |r| (0..=ncols).map(|i| r.get::<_, Value>(i)).collect())
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        let f = SqliteFile::open(path).unwrap();
        let mut direct = Vec::new();
        let mut scratch = Scratch::default();
        for leaf in f.table_leaves(root).unwrap() {
            f.scan_leaf(leaf, ncols, &mut scratch, |rowid, rec| {
                let mut row = vec![Value::Integer(rowid)];
                row.extend((0..ncols).map(|i| match (i, owned(rec.value(i))) {
                    // column b has REAL affinity
                    (1, Value::Integer(v)) => Value::Real(v as f64),
                    (_, v) => v,
                }));
                direct.push(row);
                true
            })
            .unwrap();
        }
        (sql, direct)
    }

    #[derive(Debug, Clone)]
    enum V {
        Null,
        Int(i64),
        Real(f64),
        Text(String),
        Blob(Vec<u8>),
    }

    fn value() -> impl Strategy<Value = V> {
        prop_oneof![
            Just(V::Null),
            any::<i64>().prop_map(V::Int),
            (-70_000i64..70_000).prop_map(V::Int),
            any::<f64>().prop_filter("NaN is stored as NULL", |f| !f.is_nan()).prop_map(V::Real),
            "[a-zé✓]{0,40}".prop_map(V::Text),
            // Long enough to spill onto one or more overflow pages.
            (0usize..9000).prop_map(|n| V::Text("x".repeat(n))),
            proptest::collection::vec(any::<u8>(), 0..600).prop_map(V::Blob),
        ]
    }

    fn to_sql(v: &V) -> Value {
        match v {
            V::Null => Value::Null,
            V::Int(i) => Value::Integer(*i),
            V::Real(f) => Value::Real(*f),
            V::Text(s) => Value::Text(s.clone()),
            V::Blob(b) => Value::Blob(b.clone()),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// The reader returns exactly what SQLite does, row for row, whatever the values
        /// (every serial type, overflow chains), the page size and the tree's depth.
        #[test]
        fn reads_what_sqlite_reads(
            rows in proptest::collection::vec(proptest::collection::vec(value(), 4), 0..1500),
            page_size in prop_oneof![Just(512u32), Just(1024), Just(4096), Just(65536)],
            added in any::<bool>(),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.sqlite");
            {
                let conn = rusqlite::Connection::open(&path).unwrap();
                // `b REAL`: SQLite stores its integral values as integers, and reads them back as
                // reals (the page reader's caller converts them: `Src::Real`; here the raw
                // integer is compared after the same conversion).
                conn.execute_batch(&format!("PRAGMA page_size = {page_size}; CREATE TABLE t (a, b REAL, c, d);")).unwrap();
                let tx = conn.unchecked_transaction().unwrap();
                for (i, r) in rows.iter().enumerate() {
                    let mut vals: Vec<Value> = r.iter().map(to_sql).collect();
                    // rowids of every varint width, negative ones included (9-byte varints)
                    let rowid = match i % 4 { 0 => i as i64, 1 => -(i as i64) - 1, 2 => (i as i64) << 50, _ => i64::MAX - i as i64 };
                    vals.insert(0, Value::Integer(rowid));
                    tx.execute("INSERT INTO t (rowid, a, b, c, d) VALUES (?1, ?2, ?3, ?4, ?5)", rusqlite::params_from_iter(vals)).unwrap();
                }
                tx.commit().unwrap();
                if added {
                    // Rows written before hold 4 columns; the fifth reads as NULL.
                    conn.execute_batch("ALTER TABLE t ADD COLUMN e; INSERT INTO t VALUES (1, 2, 3, 4, 5);").unwrap();
                }
            }
            let ncols = if added { 5 } else { 4 };
            let (sql, direct) = both(&path, "t", ncols);
            prop_assert_eq!(sql, direct);
        }
    }

    #[test]
    fn corrupt_pages_are_errors_naming_the_page() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.sqlite");
        {
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.execute_batch("PRAGMA page_size = 512; CREATE TABLE t (a, b);").unwrap();
            for i in 0..2000 {
                conn.execute("INSERT INTO t VALUES (?1, 'some text')", [i]).unwrap();
            }
        }
        let mut bytes = std::fs::read(&path).unwrap();
        let f = SqliteFile::open(&path).unwrap();
        let root: u32 = 2;
        let leaves = f.table_leaves(root).unwrap();
        assert!(leaves.len() > 10, "a tree with interior pages");
        // A cell count far beyond the page, on the first leaf.
        let at = (leaves[0] as usize - 1) * 512;
        bytes[at + 3] = 0xff;
        // The root's right-most child pointing back at the root: a cycle.
        let mut cyclic = std::fs::read(&path).unwrap();
        let r = (root as usize - 1) * 512;
        cyclic[r + 8..r + 12].copy_from_slice(&root.to_be_bytes());
        let (p1, p2) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&p1, &bytes).unwrap();
        std::fs::write(&p2, &cyclic).unwrap();
        let f1 = SqliteFile::open(&p1).unwrap();
        let err = f1.scan_leaf(leaves[0], 2, &mut Scratch::default(), |_, _| true).unwrap_err();
        assert!(err.contains(&format!("page {}", leaves[0])), "{err}");
        let err = SqliteFile::open(&p2).unwrap().table_leaves(root).unwrap_err();
        assert!(err.contains("twice"), "{err}");
        // Every truncation of the clean file reads whole pages or fails with an error that
        // names the page (a cut inside the 100-byte header: the header).
        let clean = std::fs::read(&path).unwrap();
        let mut failed = 0;
        for cut in (0..clean.len()).step_by(97) {
            std::fs::write(&p1, &clean[..cut]).unwrap();
            let Ok(f) = SqliteFile::open(&p1) else {
                assert!(cut < 100, "a cut at {cut} fails only in the header");
                continue;
            };
            let r = f.table_leaves(root).and_then(|l| {
                let mut scratch = Scratch::default();
                l.into_iter().try_for_each(|n| f.scan_leaf(n, 2, &mut scratch, |_, _| true).map(|_| ()))
            });
            if let Err(e) = r {
                assert!(e.starts_with("page "), "{e}");
                failed += 1;
            }
        }
        assert!(failed > 0, "cutting the file short is noticed");
    }
}
