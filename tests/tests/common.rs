#![allow(dead_code)]
//! Helpers shared by the end-to-end tests.

use std::path::{Path, PathBuf};

pub fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("sample-traces").join(name)
}

pub fn expected(name: &str) -> serde_json::Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("expected").join(name);
    serde_json::from_slice(&std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

/// Loads a file into a store cached in `dir`.
pub fn load_in(path: &Path, dir: &Path) -> Result<strobe_store::Store, strobe_import::ImportError> {
    let opts = strobe_import::LoadOptions {
        cache_dir: Some(dir.to_path_buf()),
        no_cache: false,
        progress: None,
        defer_write: false,
    };
    strobe_import::load(path, &opts)
}

pub fn load(name: &str) -> strobe_store::Store {
    let dir = tempfile::tempdir().unwrap();
    load_in(&sample(name), dir.path()).unwrap_or_else(|e| panic!("{e}"))
}

/// Files left in a cache dir (a failed load must leave none).
pub fn cache_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|r| r.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default()
}
