//! `strobe._strobe`: the compiled half of the Python package. Every figure comes from the
//! same analysis functions as `strobe report`; this crate only opens files as the command
//! line does and hands tables to Python as JSON text (small tables) or packed columns
//! (spans), which `python/strobe` turns into pandas DataFrames.

mod error;
mod memory;
mod ncu;
mod open;
mod ranks;
mod report_only;
mod spans;
mod trace;

use pyo3::prelude::*;

#[pymodule]
fn _strobe(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("StrobeError", m.py().get_type::<error::StrobeError>())?;
    m.add_function(wrap_pyfunction!(open::open, m)?)?;
    m.add_class::<trace::TraceHandle>()?;
    m.add_class::<ranks::RanksHandle>()?;
    m.add_class::<memory::MemoryHandle>()?;
    m.add_class::<ncu::NcuHandle>()?;
    m.add_class::<report_only::ReportHandle>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
