//! The inflated text of a gzip file: its members one after another (`gzip -c a b > ab.gz`
//! writes two), read the way `gzip -d` reads them. A member whose trailer (CRC-32 and
//! length mod 4 GiB) does not match what it inflated, and bytes after the last member that
//! are not another member, are notes rather than errors: the inflated text stands and the
//! next member is still read. Corrupt deflate data, a bad first header and a stream that
//! ends inside a member are errors, classified by [`End::of_error`].

use std::io::{BufRead, Read};

/// How an inflate stopped.
#[derive(Clone, Debug)]
pub enum End {
    Complete,
    /// The stream ends early (a partial copy): what inflated stands.
    Cut(String),
    Corrupt(String),
    Cancelled,
}

impl End {
    /// The end of a read that failed with `e` after `n` inflated bytes.
    pub fn of_error(e: &std::io::Error, n: u64) -> End {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            return End::Cut(format!("the gzip stream ends early: it inflates to {n} bytes"));
        }
        End::Corrupt(format!("corrupt gzip after {n} decompressed bytes: {e}"))
    }
}

/// A `Read` of the inflated bytes of every member of a gzip stream.
pub struct Members<R: BufRead> {
    /// The member being read; None once the stream is over.
    member: Option<flate2::bufread::GzDecoder<R>>,
    /// The number of the member being read, from 1.
    index: u64,
    /// Whether the bytes after the last member that ended begin with the gzip magic: a
    /// header that fails there is a damaged or cut member (an error); other bytes are
    /// trailing data.
    next_looks_like_gzip: bool,
    notes: Vec<String>,
}

impl<R: BufRead> Members<R> {
    pub fn new(compressed: R) -> Members<R> {
        Members {
            member: Some(flate2::bufread::GzDecoder::new(compressed)),
            index: 1,
            next_looks_like_gzip: true,
            notes: Vec::new(),
        }
    }

    /// What the reader noted (trailers that do not match, data after the last member).
    pub fn into_notes(self) -> Vec<String> {
        self.notes
    }

    /// Moves on after a member's trailer: to the next member, or to the end where the
    /// stream has no more bytes.
    fn next_member(&mut self) -> std::io::Result<()> {
        let Some(member) = self.member.take() else { return Ok(()) };
        let mut rest = member.into_inner();
        let next = rest.fill_buf()?;
        if !next.is_empty() {
            self.next_looks_like_gzip = next[0] == 0x1f && next.get(1).is_none_or(|&b| b == 0x8b);
            self.member = Some(flate2::bufread::GzDecoder::new(rest));
            self.index += 1;
        }
        Ok(())
    }
}

impl<R: BufRead> Read for Members<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            let Some(member) = self.member.as_mut() else { return Ok(0) };
            match member.read(buf) {
                Ok(0) => self.next_member()?,
                Ok(k) => return Ok(k),
                // flate2 reports a trailer that does not match only by this message, after
                // the member's deflate data ended cleanly and its trailer was consumed
                Err(e) if e.to_string().contains("matching checksum") => {
                    self.notes.push(format!(
                        "the gzip trailer of member {} (CRC-32 and length) does not match what it inflated; the text is kept as read",
                        self.index
                    ));
                    self.next_member()?;
                }
                // what follows a complete member is not one (no header parsed): gzip -d
                // ignores such trailing bytes (zero padding, appended junk) with a warning
                Err(_) if self.index > 1 && member.header().is_none() && !self.next_looks_like_gzip => {
                    self.notes.push(format!(
                        "the bytes after gzip member {} are not gzip; they are ignored (as gzip -d does)",
                        self.index - 1
                    ));
                    self.member = None;
                }
                Err(e) => return Err(e),
            }
        }
    }
}
