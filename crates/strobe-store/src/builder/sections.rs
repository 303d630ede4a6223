//! Writing one section of the store: 8-aligned, compressed when the output asks for it, and
//! recorded in the section table.

use crate::format::{delta_for, SectionEntry};
use crate::output::Output;

/// Appends one 8-aligned section made of `parts`, one after another, and records it:
/// compressed when the output asks for it (`Output::compress_sections`) and it is not tiny.
pub(crate) fn put_section_parts(
    out: &mut Output,
    table: &mut Vec<SectionEntry>,
    id: u32,
    parts: &[&[u8]],
) -> std::io::Result<()> {
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let packed = if out.compresses() && total >= crate::codec::MIN_COMPRESSED {
        Some(crate::codec::encode(parts, delta_for(id))?)
    } else {
        None
    };
    let pos = out.position();
    let pad = (8 - (pos % 8)) % 8;
    out.write_all(&[0u8; 8][..pad as usize])?;
    let (codec, len) = match &packed {
        Some(p) => {
            out.write_all(p)?;
            (crate::codec::ZSTD_CHUNKS, p.len())
        }
        None => {
            for p in parts {
                out.write_all(p)?;
            }
            (crate::codec::RAW, total)
        }
    };
    table.push(SectionEntry { id, codec, offset: pos + pad, len: len as u64 });
    Ok(())
}

/// Appends one 8-aligned section to the output and records it in the table.
pub(crate) fn put_section(
    out: &mut Output,
    table: &mut Vec<SectionEntry>,
    id: u32,
    bytes: &[u8],
) -> std::io::Result<()> {
    put_section_parts(out, table, id, &[bytes])
}
