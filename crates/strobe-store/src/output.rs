//! Where a store is written: a temporary file in the cache dir that is renamed into place
//! only when complete (so a crash or error never leaves a partial cache), or memory when the
//! cache dir is not writable.

use std::io::{Seek, SeekFrom, Write};
use std::path::PathBuf;

pub enum Output {
    File {
        tmp: tempfile::NamedTempFile,
        writer: std::io::BufWriter<std::fs::File>,
        pos: u64,
        dest: PathBuf,
        key: [u64; 4],
        /// Sections are written compressed (`compress_sections`).
        compress: bool,
        /// When the build's big arrays go to files (`arrays_in_files`).
        scratch: crate::scratch::FilePolicy,
        /// The build's freed scratch maps, for its next arrays (`spare_maps`).
        spares: std::sync::Arc<crate::spare_maps::SpareMaps>,
    },
    Memory {
        buf: Vec<u8>,
        key: [u64; 4],
    },
}

impl Output {
    pub fn memory() -> Output {
        Output::Memory { buf: Vec::new(), key: [0; 4] }
    }

    pub fn memory_with_key(key: [u64; 4]) -> Output {
        Output::Memory { buf: Vec::new(), key }
    }

    /// A temp file beside `dest`, renamed to `dest` by `finish`.
    pub fn file(dest: PathBuf, key: [u64; 4]) -> std::io::Result<Output> {
        let dir = dest.parent().map(|p| p.to_path_buf()).unwrap_or_else(|| PathBuf::from("."));
        std::fs::create_dir_all(&dir)?;
        let tmp = tempfile::Builder::new().prefix(crate::cache::BUILD_PREFIX).suffix(".tmp").tempfile_in(&dir)?;
        let writer = std::io::BufWriter::with_capacity(1 << 20, tmp.reopen()?);
        Ok(Output::File {
            tmp,
            writer,
            pos: 0,
            dest,
            key,
            compress: false,
            scratch: Default::default(),
            spares: crate::spare_maps::SpareMaps::new(),
        })
    }

    /// From now on, sections of `codec::MIN_COMPRESSED` bytes or more are written compressed
    /// (`codec`): for a source whose store would be larger than itself. A store in memory is
    /// never compressed (it is not kept).
    pub fn compress_sections(&mut self) {
        if let Output::File { compress, .. } = self {
            *compress = true;
        }
    }

    pub fn compresses(&self) -> bool {
        matches!(self, Output::File { compress: true, .. })
    }

    /// From now on, the build's big arrays go to files once big, not only when memory is
    /// short (`scratch::FilePolicy::WhenBig`). A store in memory keeps them on the heap.
    pub fn arrays_in_files(&mut self) {
        if let Output::File { scratch, .. } = self {
            *scratch = crate::scratch::FilePolicy::WhenBig;
        }
    }

    /// Where the build's big arrays may live (`scratch`): beside the store's temp file, or
    /// the heap for a store built in memory.
    pub fn scratch_dir(&self) -> crate::scratch::ScratchDir {
        match self {
            Output::File { dest, scratch, spares, .. } => match dest.parent() {
                Some(dir) => crate::scratch::ScratchDir::at(dir).with_policy(*scratch).sharing(spares),
                None => crate::scratch::ScratchDir::heap(),
            },
            Output::Memory { .. } => crate::scratch::ScratchDir::heap(),
        }
    }

    pub fn position(&self) -> u64 {
        match self {
            Output::File { pos, .. } => *pos,
            Output::Memory { buf, .. } => buf.len() as u64,
        }
    }

    pub fn source_key(&self) -> [u64; 4] {
        match self {
            Output::File { key, .. } | Output::Memory { key, .. } => *key,
        }
    }

    pub fn write_all(&mut self, b: &[u8]) -> std::io::Result<()> {
        match self {
            Output::File { writer, pos, .. } => {
                writer.write_all(b)?;
                *pos += b.len() as u64;
                Ok(())
            }
            Output::Memory { buf, .. } => {
                buf.extend_from_slice(b);
                Ok(())
            }
        }
    }

    pub fn write_at(&mut self, at: u64, b: &[u8]) -> std::io::Result<()> {
        match self {
            Output::File { writer, .. } => {
                writer.flush()?;
                let f = writer.get_mut();
                f.seek(SeekFrom::Start(at))?;
                f.write_all(b)?;
                f.seek(SeekFrom::End(0))?;
                Ok(())
            }
            Output::Memory { buf, .. } => {
                let at = at as usize;
                buf[at..at + b.len()].copy_from_slice(b);
                Ok(())
            }
        }
    }

    /// The file written so far, flushed and mapped read-only (None for memory): what a store
    /// queried before its file is complete reads its first sections from.
    pub fn map_written(&mut self) -> std::io::Result<Option<memmap2::Mmap>> {
        match self {
            Output::File { writer, .. } => {
                writer.flush()?;
                // SAFETY: the map covers what was written and is never written again (later
                // sections go past it; the header at 0 is outside every mapped section read).
                unsafe { memmap2::Mmap::map(writer.get_ref()) }.map(Some)
            }
            Output::Memory { .. } => Ok(None),
        }
    }

    pub fn finish(self) -> std::io::Result<Built> {
        match self {
            Output::File { tmp, mut writer, dest, .. } => {
                // No fsync: the rename makes the store appear whole or not at all, and a store
                // torn by a power cut fails its length/checksum checks on open and is rebuilt.
                writer.flush()?;
                drop(writer);
                tmp.persist(&dest).map_err(|e| e.error)?;
                Ok(Built::File(dest))
            }
            Output::Memory { buf, .. } => Ok(Built::Memory(buf)),
        }
    }
}

/// What `StoreBuilder::finish` produced: the bytes in memory, or the path of the written store file.
pub enum Built {
    File(std::path::PathBuf),
    Memory(Vec<u8>),
}

impl Built {
    /// The store opened from where it was built.
    pub fn into_store(self) -> Result<crate::reader::Store, crate::reader::StoreError> {
        match self {
            Built::File(p) => crate::reader::Store::open(&p),
            Built::Memory(v) => crate::reader::Store::from_bytes(v),
        }
    }
}
