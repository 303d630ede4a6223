//! Flat Parquet tables of nullable INT64, DOUBLE and UTF-8 columns: all a summary needs, written
//! column by column with the `parquet` crate's low-level writer (no Arrow) and read back row by
//! row. Every column is OPTIONAL, so any reader (DuckDB, pandas, Spark) sees plain nullable
//! columns.

use anyhow::{anyhow, bail, Context, Result};
use parquet::basic::{Compression, Encoding};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::ColumnPath;
use std::path::Path;
use std::sync::Arc;

pub enum Values {
    I64(Vec<Option<i64>>),
    F64(Vec<Option<f64>>),
    Str(Vec<Option<String>>),
}

impl Values {
    fn len(&self) -> usize {
        match self {
            Values::I64(v) => v.len(),
            Values::F64(v) => v.len(),
            Values::Str(v) => v.len(),
        }
    }
}

/// A table to write: named columns of equal length.
#[derive(Default)]
pub struct Table {
    pub columns: Vec<(&'static str, Values)>,
}

impl Table {
    pub fn i64(mut self, name: &'static str, v: impl IntoIterator<Item = Option<i64>>) -> Self {
        self.columns.push((name, Values::I64(v.into_iter().collect())));
        self
    }
    pub fn f64(mut self, name: &'static str, v: impl IntoIterator<Item = Option<f64>>) -> Self {
        self.columns.push((name, Values::F64(v.into_iter().collect())));
        self
    }
    pub fn str(mut self, name: &'static str, v: impl IntoIterator<Item = Option<String>>) -> Self {
        self.columns.push((name, Values::Str(v.into_iter().collect())));
        self
    }

    /// Writes the table to `path` (one row group, snappy), replacing what is there.
    pub fn write(&self, path: &Path) -> Result<()> {
        let rows = self.columns.first().map(|c| c.1.len()).unwrap_or(0);
        if let Some((n, _)) = self.columns.iter().find(|c| c.1.len() != rows) {
            bail!("{}: column {n} has a different length", path.display());
        }
        let fields: Vec<String> = self
            .columns
            .iter()
            .map(|(n, v)| match v {
                Values::I64(_) => format!("OPTIONAL INT64 {n};"),
                Values::F64(_) => format!("OPTIONAL DOUBLE {n};"),
                Values::Str(_) => format!("OPTIONAL BYTE_ARRAY {n} (UTF8);"),
            })
            .collect();
        let schema = Arc::new(parquet::schema::parser::parse_message_type(&format!(
            "message summary {{ {} }}",
            fields.join(" ")
        ))?);
        // integers (sorted times, mostly) delta-encoded: a few bytes a value instead of eight
        let mut props = WriterProperties::builder().set_compression(Compression::SNAPPY);
        for (n, v) in &self.columns {
            if let Values::I64(_) = v {
                let c = ColumnPath::from(*n);
                props = props
                    .set_column_dictionary_enabled(c.clone(), false)
                    .set_column_encoding(c, Encoding::DELTA_BINARY_PACKED);
            }
        }
        let props = Arc::new(props.build());
        // written beside and renamed: a reader never sees half a table
        let tmp = path.with_extension("parquet.tmp");
        let file = std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        let mut w = SerializedFileWriter::new(file, schema, props)?;
        let mut rg = w.next_row_group()?;
        for (_, v) in &self.columns {
            let mut col = rg.next_column()?.ok_or_else(|| anyhow!("parquet schema has fewer columns"))?;
            match v {
                Values::I64(v) => {
                    let (def, vals) = levels(v, |x| *x);
                    col.typed::<Int64Type>().write_batch(&vals, Some(&def), None)?;
                }
                Values::F64(v) => {
                    let (def, vals) = levels(v, |x| *x);
                    col.typed::<DoubleType>().write_batch(&vals, Some(&def), None)?;
                }
                Values::Str(v) => {
                    let (def, vals) = levels(v, |x| ByteArray::from(x.as_str()));
                    col.typed::<ByteArrayType>().write_batch(&vals, Some(&def), None)?;
                }
            }
            col.close()?;
        }
        rg.close()?;
        w.close()?;
        std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
        Ok(())
    }
}

fn levels<T, U>(v: &[Option<T>], f: impl Fn(&T) -> U) -> (Vec<i16>, Vec<U>) {
    let def = v.iter().map(|x| x.is_some() as i16).collect();
    let vals = v.iter().flatten().map(f).collect();
    (def, vals)
}

/// A column read back: values by row, null as None.
enum Column {
    I64(Vec<Option<i64>>),
    F64(Vec<Option<f64>>),
    Str(Vec<Option<String>>),
}

/// Records decoded per call: reads grow with the data actually decoded, never with a row count
/// a (corrupt) footer claims.
const BATCH: usize = 64 * 1024;

/// Reads the whole column `reader` (every row group's part appended to `out`), spreading the
/// non-null values over the rows by their definition levels.
fn read_column<T: parquet::data_type::DataType, U>(
    mut reader: parquet::column::reader::ColumnReaderImpl<T>,
    out: &mut Vec<Option<U>>,
    f: impl Fn(T::T) -> Result<U>,
) -> Result<()> {
    let (mut def, mut vals) = (Vec::new(), Vec::new());
    loop {
        def.clear();
        vals.clear();
        let (records, _, levels) = reader.read_records(BATCH, Some(&mut def), None, &mut vals)?;
        if records == 0 && levels == 0 {
            return Ok(());
        }
        // a REQUIRED column (another writer's) has no levels: every row has a value
        let present: Vec<bool> =
            if def.is_empty() { vec![true; vals.len()] } else { def.iter().map(|&d| d > 0).collect() };
        let mut it = vals.drain(..);
        for p in present {
            out.push(match p {
                true => Some(f(it.next().ok_or_else(|| anyhow!("fewer values than levels"))?)?),
                false => None,
            });
        }
    }
}

/// A table read back: its columns by name, read column by column (a summary's `compute`
/// table holds millions of values across a thousand ranks: no per-row objects).
pub struct Rows {
    pub path: String,
    pub names: Vec<String>,
    pub len: usize,
    columns: Vec<Column>,
}

impl Rows {
    pub fn read(path: &Path) -> Result<Rows> {
        use parquet::column::reader::ColumnReader;
        let name = path.display().to_string();
        let file = std::fs::File::open(path).with_context(|| format!("opening {name}"))?;
        let r = SerializedFileReader::new(file).with_context(|| format!("{name}: not a Parquet file"))?;
        let descr = r.metadata().file_metadata().schema_descr_ptr();
        let names: Vec<String> = descr.columns().iter().map(|c| c.name().to_string()).collect();
        let mut columns: Vec<Column> = Vec::with_capacity(names.len());
        for c in descr.columns() {
            columns.push(match c.physical_type() {
                parquet::basic::Type::INT64 => Column::I64(Vec::new()),
                parquet::basic::Type::DOUBLE => Column::F64(Vec::new()),
                parquet::basic::Type::BYTE_ARRAY => Column::Str(Vec::new()),
                t => bail!("{name}: column {} is {t}, a summary has INT64, DOUBLE and UTF-8 columns", c.name()),
            });
        }
        for g in 0..r.num_row_groups() {
            let rg = r.get_row_group(g).with_context(|| format!("{name}: row group {g}"))?;
            for (i, col) in columns.iter_mut().enumerate() {
                let at = || format!("{name}: row group {g}, column {}", names[i]);
                let reader = rg.get_column_reader(i).with_context(at)?;
                match (reader, col) {
                    (ColumnReader::Int64ColumnReader(rd), Column::I64(v)) => read_column(rd, v, Ok),
                    (ColumnReader::DoubleColumnReader(rd), Column::F64(v)) => read_column(rd, v, Ok),
                    (ColumnReader::ByteArrayColumnReader(rd), Column::Str(v)) => {
                        read_column(rd, v, |b| b.as_utf8().map(str::to_string).map_err(|e| anyhow!("not UTF-8: {e}")))
                    }
                    _ => bail!("{}: unexpected column reader", at()),
                }
                .with_context(at)?;
            }
        }
        let len = columns.first().map(Column::len).unwrap_or(0);
        if let Some(i) = columns.iter().position(|c| c.len() != len) {
            bail!("{name}: column {} has {} rows, column {} has {len}", names[i], columns[i].len(), names[0]);
        }
        Ok(Rows { path: name, names, len, columns })
    }

    fn col(&self, name: &str) -> Result<&Column> {
        let i = self.names.iter().position(|n| n == name).ok_or_else(|| anyhow!("{}: no column {name}", self.path))?;
        Ok(&self.columns[i])
    }

    /// Column `name` as integers (null → None); an error names the file and column.
    pub fn i64s(&self, name: &str) -> Result<Vec<Option<i64>>> {
        match self.col(name)? {
            Column::I64(v) => Ok(v.clone()),
            _ => bail!("{}: column {name} is not an integer column", self.path),
        }
    }

    /// Column `name` as integers, none of them null.
    pub fn req_i64s(&self, name: &str) -> Result<Vec<i64>> {
        self.no_nulls(name, self.i64s(name)?)
    }

    /// `values` of column `name` when none is null; else an error naming the file, row and column.
    fn no_nulls<T>(&self, name: &str, values: Vec<Option<T>>) -> Result<Vec<T>> {
        values
            .into_iter()
            .enumerate()
            .map(|(i, v)| v.ok_or_else(|| anyhow!("{}: row {i}, column {name}: null", self.path)))
            .collect()
    }

    pub fn f64s(&self, name: &str) -> Result<Vec<Option<f64>>> {
        match self.col(name)? {
            Column::F64(v) => Ok(v.clone()),
            _ => bail!("{}: column {name} is not a number column", self.path),
        }
    }

    pub fn strs(&self, name: &str) -> Result<Vec<Option<String>>> {
        match self.col(name)? {
            Column::Str(v) => Ok(v.clone()),
            _ => bail!("{}: column {name} is not a string column", self.path),
        }
    }

    pub fn req_strs(&self, name: &str) -> Result<Vec<String>> {
        self.no_nulls(name, self.strs(name)?)
    }
}

impl Column {
    fn len(&self) -> usize {
        match self {
            Column::I64(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }
}
