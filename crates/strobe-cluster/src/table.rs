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
use parquet::record::Field;
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

/// A table read back: its column names and rows.
pub struct Rows {
    pub path: String,
    pub names: Vec<String>,
    pub rows: Vec<Vec<Field>>,
}

impl Rows {
    pub fn read(path: &Path) -> Result<Rows> {
        let name = path.display().to_string();
        let file = std::fs::File::open(path).with_context(|| format!("opening {name}"))?;
        let r = SerializedFileReader::new(file).with_context(|| format!("{name}: not a Parquet file"))?;
        let names =
            r.metadata().file_metadata().schema_descr().columns().iter().map(|c| c.name().to_string()).collect();
        let mut rows = Vec::new();
        for row in r.get_row_iter(None).with_context(|| format!("reading {name}"))? {
            let row = row.with_context(|| format!("{name}: row {}", rows.len()))?;
            rows.push(row.get_column_iter().map(|(_, f)| f.clone()).collect());
        }
        Ok(Rows { path: name, names, rows })
    }

    fn col(&self, name: &str) -> Result<usize> {
        self.names.iter().position(|n| n == name).ok_or_else(|| anyhow!("{}: no column {name}", self.path))
    }

    /// Column `name` as integers (null → None); an error names the file, row and column.
    pub fn i64s(&self, name: &str) -> Result<Vec<Option<i64>>> {
        let c = self.col(name)?;
        self.rows
            .iter()
            .enumerate()
            .map(|(i, r)| match &r[c] {
                Field::Null => Ok(None),
                Field::Long(v) => Ok(Some(*v)),
                f => bail!("{}: row {i}, column {name}: {f} is not an integer", self.path),
            })
            .collect()
    }

    /// Column `name` as integers, none of them null.
    pub fn req_i64s(&self, name: &str) -> Result<Vec<i64>> {
        self.i64s(name)?
            .into_iter()
            .enumerate()
            .map(|(i, v)| v.ok_or_else(|| anyhow!("{}: row {i}, column {name}: null", self.path)))
            .collect()
    }

    pub fn f64s(&self, name: &str) -> Result<Vec<Option<f64>>> {
        let c = self.col(name)?;
        self.rows
            .iter()
            .enumerate()
            .map(|(i, r)| match &r[c] {
                Field::Null => Ok(None),
                Field::Double(v) => Ok(Some(*v)),
                f => bail!("{}: row {i}, column {name}: {f} is not a number", self.path),
            })
            .collect()
    }

    pub fn strs(&self, name: &str) -> Result<Vec<Option<String>>> {
        let c = self.col(name)?;
        self.rows
            .iter()
            .enumerate()
            .map(|(i, r)| match &r[c] {
                Field::Null => Ok(None),
                Field::Str(v) => Ok(Some(v.clone())),
                f => bail!("{}: row {i}, column {name}: {f} is not a string", self.path),
            })
            .collect()
    }

    pub fn req_strs(&self, name: &str) -> Result<Vec<String>> {
        self.strs(name)?
            .into_iter()
            .enumerate()
            .map(|(i, v)| v.ok_or_else(|| anyhow!("{}: row {i}, column {name}: null", self.path)))
            .collect()
    }
}
