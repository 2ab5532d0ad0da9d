//! Capture sources and sinks: pcap and pcapng files (plain or gzip-compressed) in, pcap and
//! pcapng out, and on Linux live capture and replay. Formats are recognised by their magic
//! numbers, never by file names.
//!
//! `unsafe` is denied everywhere except in [`live`], which talks to the kernel and to
//! libraries loaded at run time.

#![deny(unsafe_code)]

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub mod live;
pub mod output;
mod reader;
mod writer;

pub use reader::{CaptureReader, Chunk, Format, Interface, Record};
pub use writer::{PcapWriter, PcapngWriter};

/// What went wrong while reading a capture, and where.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a capture file ({detail})")]
    NotCapture { path: String, detail: String },
    #[error("{path}: interface {interface} has link type {linktype} ({name}), which rdmascope cannot decode")]
    UnsupportedLinktype {
        path: String,
        interface: u32,
        linktype: u32,
        name: &'static str,
    },
    #[error("{path}: file ends inside record {record} (byte offset {offset}{gz}): {detail}")]
    Truncated {
        path: String,
        record: u64,
        offset: u64,
        gz: &'static str,
        detail: String,
    },
    #[error("{path}: corrupt record {record} at byte offset {offset}{gz}: {detail}")]
    Corrupt {
        path: String,
        record: u64,
        offset: u64,
        gz: &'static str,
        detail: String,
    },
}
