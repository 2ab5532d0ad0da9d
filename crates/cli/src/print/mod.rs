//! Printers for `show`: one line per packet, a field tree, or NDJSON.

mod fast;
mod json;
mod line;
mod tree;

use std::io::{self, Write};

use rdmascope_wire::fields::RecordMeta;
use rdmascope_wire::Frame;

/// The output style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Line,
    Tree,
    Json,
}

/// Renders decoded frames; keeps a scratch buffer between calls.
pub struct Printer {
    style: Style,
    buf: Vec<u8>,
}

impl Printer {
    pub fn new(style: Style) -> Self {
        Self {
            style,
            buf: Vec::with_capacity(512),
        }
    }

    pub fn print(
        &mut self,
        out: &mut impl Write,
        meta: &RecordMeta,
        frame: &Frame<'_>,
    ) -> io::Result<()> {
        self.buf.clear();
        // Writing into a Vec cannot fail.
        let _ = match self.style {
            Style::Line => line::write(&mut self.buf, meta, frame),
            Style::Tree => tree::write(&mut self.buf, meta, frame),
            Style::Json => json::write(&mut self.buf, meta, frame),
        };
        out.write_all(&self.buf)
    }
}
