//! The `.ncu-rep` container: `NVR\0`, a length-prefixed `FileHeader`, then blocks, each a
//! length-prefixed `BlockHeader` followed by `PayloadSize` bytes of payload. The payload
//! holds the block's items (sources, then kernel results, then range, cmdlist and graph
//! results), each a u32 little-endian length and a message. Lengths are checked against the
//! bytes present before anything is sliced, and every message is decoded knowing its absolute
//! offset, so an error names the byte where the broken length or message starts.

use super::messages::{self, BlockHeader, FileHeader};

pub const MAGIC: &[u8; 4] = b"NVR\0";

/// FileHeader versions this reader knows (written by Nsight Compute 2022.4 to 2025.3).
/// Another version is refused as unsupported, so the caller can fall back to `ncu`.
pub const KNOWN_VERSIONS: [u64; 1] = [7];

/// Corrupt or truncated data: what went wrong and the absolute byte offset it was found at.
#[derive(Debug, Clone, PartialEq)]
pub struct Corrupt {
    pub offset: usize,
    pub what: String,
}

pub type Result<T> = std::result::Result<T, Corrupt>;

pub fn err<T>(offset: usize, what: impl Into<String>) -> Result<T> {
    Err(Corrupt { offset, what: what.into() })
}

/// Why a report was not read.
#[derive(Debug, Clone, PartialEq)]
pub enum RepError {
    /// A well-formed report of a version this reader does not know.
    Unsupported(String),
    /// Corrupt or truncated data.
    Bad(Corrupt),
}

impl From<Corrupt> for RepError {
    fn from(e: Corrupt) -> RepError {
        RepError::Bad(e)
    }
}

impl std::fmt::Display for RepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RepError::Unsupported(s) => f.write_str(s),
            RepError::Bad(e) => write!(f, "at byte {}: {}", e.offset, e.what),
        }
    }
}

/// One block: its decoded header and its payload, with the payload's absolute offset.
pub struct Block<'a> {
    pub header: BlockHeader,
    pub payload: &'a [u8],
    pub payload_offset: usize,
}

/// A u32 LE length at `at` followed by that many bytes.
fn prefixed<'a>(bytes: &'a [u8], at: usize, what: &str) -> Result<&'a [u8]> {
    let Some(len) = bytes.get(at..at + 4) else {
        return err(at, format!("file ends inside the length of a {what}"));
    };
    let n = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
    let left = bytes.len() - at - 4;
    if n > left {
        return err(at, format!("{what} of {n} bytes runs past the end of the file ({left} bytes left)"));
    }
    Ok(&bytes[at + 4..at + 4 + n])
}

/// Checks the magic and the FileHeader version; returns the offset of the first block.
pub fn file_header(bytes: &[u8]) -> std::result::Result<usize, RepError> {
    if !bytes.starts_with(MAGIC) {
        return Err(RepError::Bad(Corrupt {
            offset: 0,
            what: "not an Nsight Compute report: it does not start with `NVR\\0`".into(),
        }));
    }
    let h = prefixed(bytes, 4, "file header")?;
    let header: FileHeader = messages::decode(h, 8, "file header")?;
    let Some(version) = header.version else {
        return err(8, "the file header has no version").map_err(RepError::Bad);
    };
    if !KNOWN_VERSIONS.contains(&version) {
        return Err(RepError::Unsupported(format!(
            "report file version {version} is not one this reader knows ({KNOWN_VERSIONS:?}, Nsight Compute 2022.4-2025.3)"
        )));
    }
    Ok(8 + h.len())
}

/// Walks the blocks from `start` to the end of the file.
pub struct Blocks<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Blocks<'a> {
    pub fn new(bytes: &'a [u8], start: usize) -> Blocks<'a> {
        Blocks { bytes, pos: start }
    }

    /// The next block, its header decoded.
    pub fn next_block(&mut self) -> Result<Option<Block<'a>>> {
        if self.pos >= self.bytes.len() {
            return Ok(None);
        }
        let at = self.pos;
        let h = prefixed(self.bytes, at, "block header")?;
        let header_offset = at + 4;
        let header: BlockHeader = messages::decode(h, header_offset, "block header")?;
        let size = header.payload_size;
        let payload_offset = header_offset + h.len();
        let left = (self.bytes.len() - payload_offset) as u64;
        if size > left {
            return err(at, format!("block payload of {size} bytes runs past the end of the file ({left} bytes left)"));
        }
        let payload = &self.bytes[payload_offset..payload_offset + size as usize];
        self.pos = payload_offset + size as usize;
        Ok(Some(Block { header, payload, payload_offset }))
    }
}

/// Splits a payload into its length-prefixed items.
pub struct Items<'a> {
    payload: &'a [u8],
    base: usize,
    pos: usize,
}

impl<'a> Items<'a> {
    pub fn new(payload: &'a [u8], base: usize) -> Items<'a> {
        Items { payload, base, pos: 0 }
    }
    /// The next item's message bytes and their absolute offset; `what` names it in errors.
    pub fn next_item(&mut self, what: &str) -> Result<(&'a [u8], usize)> {
        let at = self.base + self.pos;
        let Some(len) = self.payload.get(self.pos..self.pos + 4) else {
            return err(at, format!("block payload ends before the length of a {what}"));
        };
        let n = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
        let left = self.payload.len() - self.pos - 4;
        if n > left {
            return err(at, format!("{what} of {n} bytes runs past the end of its block ({left} bytes left)"));
        }
        let start = self.pos + 4;
        self.pos = start + n;
        Ok((&self.payload[start..start + n], self.base + start))
    }
}
