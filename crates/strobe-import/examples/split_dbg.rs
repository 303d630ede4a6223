fn main() {
    let a: Vec<String> = std::env::args().collect();
    let data = std::fs::read(&a[1]).unwrap();
    let at: f64 = a[2].parse().unwrap();
    let t = std::time::Instant::now();
    let want = strobe_import::memory_snapshot::from_bytes_split_at(&data, None).unwrap();
    eprintln!("seq {:?}", t.elapsed());
    let t = std::time::Instant::now();
    let got = strobe_import::memory_snapshot::from_bytes_split_at(&data, Some((data.len() as f64 * at) as usize)).unwrap();
    eprintln!("split {:?}", t.elapsed());
    let same = serde_json::to_string(&want).unwrap() == serde_json::to_string(&got).unwrap();
    eprintln!("same: {same}, spliced {}", strobe_import::pickle::chunks_spliced_on_this_thread());
}
