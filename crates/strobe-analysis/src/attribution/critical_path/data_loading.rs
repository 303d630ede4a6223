//! Which CPU ranges are data loading: PyTorch's DataLoader iteration range
//! (`enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__` and the like) and a
//! `record_function` range the training loop names for it (`data`, `data_loading`,
//! `dataloader`, `## data ##`, case and `#`/space padding ignored). CPU time on the critical
//! path inside such a range counts as data loading, not as CPU.

pub fn is_data_range(name: &str) -> bool {
    if name.starts_with("enumerate(DataLoader)") {
        return true;
    }
    let core = name.trim_matches(|c: char| c == '#' || c.is_whitespace()).to_ascii_lowercase();
    matches!(core.as_str(), "data" | "data_loading" | "data loading" | "dataloader" | "data_load" | "load_data")
}

#[cfg(test)]
mod tests {
    use super::is_data_range;

    #[test]
    fn loader_ranges_and_named_data_ranges_count_and_others_do_not() {
        assert!(is_data_range("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"));
        assert!(is_data_range("data"));
        assert!(is_data_range("## data ##"));
        assert!(is_data_range("Data_Loading"));
        assert!(!is_data_range("aten::data_ptr"));
        assert!(!is_data_range("h2d_prefetch_next_batch"));
        assert!(!is_data_range("metadata"));
    }
}
