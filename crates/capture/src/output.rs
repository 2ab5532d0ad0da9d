//! Capture output: pcapng to a file, to standard output, or to a ring of files rotated by
//! size. A write error (a full disk, a closed pipe) never leaves half a record behind: the
//! file is cut back to the end of the last complete block, so it stays readable.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::PcapngWriter;

/// Buffered bytes are written out once this much is pending.
const FLUSH_AT: usize = 1 << 20;

/// Where the output goes.
#[derive(Debug, Clone)]
pub enum Destination {
    Stdout,
    /// One file, or with `ring` a series `STEM-NNNNN.EXT` rotated by size.
    File {
        path: PathBuf,
        ring: Option<Ring>,
    },
}

/// Size-based rotation: start a new file before one would grow past `file_size` bytes, and
/// keep only the newest `files` (all when `None`).
#[derive(Debug, Clone, Copy)]
pub struct Ring {
    pub file_size: u64,
    pub files: Option<u32>,
}

/// One interface block.
#[derive(Debug, Clone)]
pub struct OutputInterface {
    pub linktype: u16,
    pub snaplen: u32,
    pub name: String,
    pub speed_bps: Option<u64>,
}

/// What failed while writing, where, and how much is safely on disk.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("{path}: {source}")]
    Open {
        path: String,
        #[source]
        source: io::Error,
    },
    #[error("writing {path} failed after {records} complete packets ({source}); the file was cut back to the last complete packet and is readable")]
    Write {
        path: String,
        records: u64,
        #[source]
        source: io::Error,
    },
}

impl OutputError {
    /// The OS error behind this failure.
    pub fn io(&self) -> &io::Error {
        match self {
            Self::Open { source, .. } | Self::Write { source, .. } => source,
        }
    }
}

enum Sink {
    Stdout(io::Stdout),
    File(File),
}

/// A pcapng writer with bounded buffering, safe truncation and rotation.
pub struct PcapngOutput {
    dest: Destination,
    comment: String,
    interfaces: Vec<OutputInterface>,
    sink: Sink,
    /// Name of the current file ("-" for standard output).
    current: String,
    index: u32,
    opened: Vec<PathBuf>,
    writer: PcapngWriter<Vec<u8>>,
    /// End offsets of the complete blocks in the writer's buffer.
    ends: Vec<usize>,
    /// Bytes of the current file already written out.
    committed: u64,
    records_in_file: u64,
    records: u64,
    bytes: u64,
}

fn ring_name(path: &Path, index: u32) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}-{index:05}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{index:05}"),
    };
    path.with_file_name(name)
}

fn header(comment: &str, interfaces: &[OutputInterface]) -> io::Result<PcapngWriter<Vec<u8>>> {
    let mut w = PcapngWriter::new(Vec::with_capacity(FLUSH_AT * 2), Some(comment))?;
    for i in interfaces {
        w.add_interface(i.linktype, i.snaplen, Some(&i.name), i.speed_bps)?;
    }
    Ok(w)
}

impl PcapngOutput {
    /// Creates the first file (mode 0600) or starts writing to standard output; the section
    /// header carries `comment`, and one interface block per entry of `interfaces`.
    pub fn create(
        dest: Destination,
        comment: &str,
        interfaces: Vec<OutputInterface>,
    ) -> Result<Self, OutputError> {
        let writer = header(comment, &interfaces).map_err(|e| OutputError::Open {
            path: "(memory)".into(),
            source: e,
        })?;
        let mut out = Self {
            sink: Sink::Stdout(io::stdout()),
            current: "-".into(),
            dest,
            comment: comment.to_string(),
            interfaces,
            index: 0,
            opened: Vec::new(),
            ends: Vec::new(),
            writer,
            committed: 0,
            records_in_file: 0,
            records: 0,
            bytes: 0,
        };
        let len = out.writer.get_mut().len();
        out.ends.push(len);
        out.open_current()?;
        Ok(out)
    }

    fn open_current(&mut self) -> Result<(), OutputError> {
        let Destination::File { path, ring } = &self.dest else {
            return Ok(());
        };
        let path = match ring {
            Some(_) => ring_name(path, self.index),
            None => path.clone(),
        };
        let open = |p: &Path| -> io::Result<File> {
            let f = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(p)?;
            // An existing file keeps its mode on open; captures may hold secrets.
            f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
            Ok(f)
        };
        let file = open(&path).map_err(|e| OutputError::Open {
            path: path.display().to_string(),
            source: e,
        })?;
        self.sink = Sink::File(file);
        self.current = path.display().to_string();
        self.opened.push(path);
        if let (Some(Ring { files: Some(n), .. }), true) = (ring, self.opened.len() > 1) {
            while self.opened.len() > *n as usize {
                let old = self.opened.remove(0);
                let _ = std::fs::remove_file(old);
            }
        }
        Ok(())
    }

    /// Appends one enhanced packet block on interface `interface`.
    pub fn write(
        &mut self,
        interface: u32,
        ts_ns: u64,
        orig_len: u32,
        data: &[u8],
    ) -> Result<(), OutputError> {
        if let Destination::File {
            ring: Some(ring), ..
        } = &self.dest
        {
            let block = 32 + data.len().div_ceil(4) * 4;
            let size = self.committed + self.writer.get_mut().len() as u64 + block as u64;
            if self.records_in_file > 0 && size > ring.file_size {
                self.rotate()?;
            }
        }
        self.writer
            .write(interface, ts_ns, orig_len, data)
            .expect("writing to memory cannot fail");
        let len = self.writer.get_mut().len();
        self.ends.push(len);
        self.records_in_file += 1;
        if len >= FLUSH_AT {
            self.flush()?;
        }
        Ok(())
    }

    fn rotate(&mut self) -> Result<(), OutputError> {
        self.flush()?;
        self.index += 1;
        self.writer = header(&self.comment, &self.interfaces).map_err(|e| OutputError::Open {
            path: "(memory)".into(),
            source: e,
        })?;
        self.ends.clear();
        let len = self.writer.get_mut().len();
        self.ends.push(len);
        self.committed = 0;
        self.records_in_file = 0;
        self.open_current()
    }

    /// Writes out everything buffered. On failure the current file is cut back to the end of
    /// the last complete block that reached it.
    pub fn flush(&mut self) -> Result<(), OutputError> {
        let buf = std::mem::take(self.writer.get_mut());
        let mut done = 0usize;
        let result = loop {
            if done == buf.len() {
                break Ok(());
            }
            let r = match &mut self.sink {
                Sink::Stdout(s) => s.write(&buf[done..]),
                Sink::File(f) => f.write(&buf[done..]),
            };
            match r {
                Ok(0) => break Err(io::Error::from(io::ErrorKind::WriteZero)),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        let complete = self.ends.iter().rposition(|&e| e <= done);
        let kept_blocks = complete.map_or(0, |i| i + 1);
        let kept_bytes = complete.map_or(0, |i| self.ends[i]);
        let result = result.and_then(|()| match &mut self.sink {
            Sink::Stdout(s) => s.flush(),
            Sink::File(_) => Ok(()),
        });
        match result {
            Ok(()) => {
                self.count_written(kept_blocks, buf.len());
                self.committed += buf.len() as u64;
                self.ends.clear();
                let mut buf = buf;
                buf.clear();
                *self.writer.get_mut() = buf;
                Ok(())
            }
            Err(source) => {
                if let Sink::File(f) = &mut self.sink {
                    let _ = f.set_len(self.committed + kept_bytes as u64);
                }
                self.count_written(kept_blocks, kept_bytes);
                self.ends.clear();
                Err(OutputError::Write {
                    path: self.current.clone(),
                    records: self.records,
                    source,
                })
            }
        }
    }

    /// Counts the packet blocks among the first `blocks` buffered blocks (the header of a
    /// fresh file is one block but no packet).
    fn count_written(&mut self, blocks: usize, bytes: usize) {
        let header_pending = self.committed == 0 && !self.ends.is_empty();
        let packets = blocks.saturating_sub(usize::from(header_pending));
        self.records += packets as u64;
        self.bytes += bytes as u64;
    }

    /// Flushes and closes; returns the files written (newest last) and the packet count.
    pub fn finish(mut self) -> Result<Finished, OutputError> {
        self.flush()?;
        if let Sink::File(f) = &mut self.sink {
            f.sync_data().ok();
        }
        Ok(Finished {
            files: self.opened.clone(),
            records: self.records,
            bytes: self.bytes,
        })
    }

    /// Packets written out so far (buffered ones not included).
    pub fn records(&self) -> u64 {
        self.records
    }
}

/// What [`PcapngOutput::finish`] reports.
#[derive(Debug, Clone)]
pub struct Finished {
    pub files: Vec<PathBuf>,
    pub records: u64,
    pub bytes: u64,
}
