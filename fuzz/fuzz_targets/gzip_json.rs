//! The chrome importer through its gzip path. Input that is already gzip (seeds cut from
//! real `.json.gz` traces) goes in as it is, so mutations hit the deflate stream; any other
//! input is compressed here and imported whole and cut short (a partial copy), the cut
//! placed by the input's first byte.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::io::Write;

fuzz_target!(|data: &[u8]| {
    if data.starts_with(&[0x1f, 0x8b]) {
        strobe_fuzz::chrome(data);
        return;
    }
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(data).unwrap();
    let gz = enc.finish().unwrap();
    strobe_fuzz::chrome(&gz);
    let cut = data.first().map(|&c| gz.len() * c as usize / 256).unwrap_or(0);
    strobe_fuzz::chrome(&gz[..cut]);
});
