//! Errors as Python exceptions carrying the command line's message (file, and where in it).

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::PyErr;

create_exception!(_strobe, StrobeError, PyException, "A file Strobe could not read, with the file and where in it.");

/// The message `strobe report` prints after `strobe: ` for the same failure.
pub fn to_py(e: impl Into<anyhow::Error>) -> PyErr {
    StrobeError::new_err(format!("{:#}", e.into()))
}

/// JSON of a value the analyses made (cannot fail for their types, but says so if it does).
pub fn json<T: serde::Serialize + ?Sized>(v: &T) -> pyo3::PyResult<String> {
    serde_json::to_string(v).map_err(to_py)
}
