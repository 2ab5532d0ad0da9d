//! Capture writers: nanosecond pcap and pcapng (one section, one or more interfaces,
//! `if_tsresol` = 9).

use std::io::{self, Write};

/// Writes a nanosecond-resolution pcap file.
pub struct PcapWriter<W: Write> {
    out: W,
    snaplen: u32,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the file header.
    pub fn new(mut out: W, linktype: u32, snaplen: u32) -> io::Result<Self> {
        let mut h = [0u8; 24];
        h[0..4].copy_from_slice(&0xa1b2_3c4du32.to_le_bytes());
        h[4..6].copy_from_slice(&2u16.to_le_bytes());
        h[6..8].copy_from_slice(&4u16.to_le_bytes());
        h[16..20].copy_from_slice(&snaplen.to_le_bytes());
        h[20..24].copy_from_slice(&linktype.to_le_bytes());
        out.write_all(&h)?;
        Ok(Self { out, snaplen })
    }

    /// Writes one record; `data` longer than the snaplen is cut.
    pub fn write(&mut self, ts_ns: u64, orig_len: u32, data: &[u8]) -> io::Result<()> {
        let cap = data.len().min(self.snaplen as usize);
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&((ts_ns / 1_000_000_000) as u32).to_le_bytes());
        h[4..8].copy_from_slice(&((ts_ns % 1_000_000_000) as u32).to_le_bytes());
        h[8..12].copy_from_slice(&(cap as u32).to_le_bytes());
        h[12..16].copy_from_slice(&orig_len.max(cap as u32).to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(&data[..cap])
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

fn pad4(n: usize) -> usize {
    (4 - n % 4) % 4
}

fn option(buf: &mut Vec<u8>, code: u16, value: &[u8]) {
    buf.extend_from_slice(&code.to_le_bytes());
    buf.extend_from_slice(&(value.len() as u16).to_le_bytes());
    buf.extend_from_slice(value);
    buf.extend(std::iter::repeat_n(0u8, pad4(value.len())));
}

fn block(out: &mut impl Write, ty: u32, body: &[u8]) -> io::Result<()> {
    let len = (12 + body.len()) as u32;
    out.write_all(&ty.to_le_bytes())?;
    out.write_all(&len.to_le_bytes())?;
    out.write_all(body)?;
    out.write_all(&len.to_le_bytes())
}

/// Writes a pcapng file: a section header, interface blocks, enhanced packet blocks.
pub struct PcapngWriter<W: Write> {
    out: W,
    snaplens: Vec<u32>,
}

impl<W: Write> PcapngWriter<W> {
    /// Writes the section header with an optional comment (`opt_comment`).
    pub fn new(mut out: W, comment: Option<&str>) -> io::Result<Self> {
        let mut body = Vec::new();
        body.extend_from_slice(&0x1a2b_3c4du32.to_le_bytes());
        body.extend_from_slice(&1u16.to_le_bytes());
        body.extend_from_slice(&0u16.to_le_bytes());
        body.extend_from_slice(&(-1i64).to_le_bytes());
        if let Some(c) = comment {
            option(&mut body, 1, c.as_bytes());
            option(&mut body, 0, &[]);
        }
        block(&mut out, 0x0a0d_0d0a, &body)?;
        Ok(Self {
            out,
            snaplens: Vec::new(),
        })
    }

    /// Adds an interface (nanosecond timestamps); returns its id.
    pub fn add_interface(
        &mut self,
        linktype: u16,
        snaplen: u32,
        name: Option<&str>,
        speed_bps: Option<u64>,
    ) -> io::Result<u32> {
        let mut body = Vec::new();
        body.extend_from_slice(&linktype.to_le_bytes());
        body.extend_from_slice(&0u16.to_le_bytes());
        body.extend_from_slice(&snaplen.to_le_bytes());
        if let Some(n) = name {
            option(&mut body, 2, n.as_bytes());
        }
        if let Some(s) = speed_bps {
            option(&mut body, 8, &s.to_le_bytes());
        }
        option(&mut body, 9, &[9]);
        option(&mut body, 0, &[]);
        block(&mut self.out, 1, &body)?;
        self.snaplens
            .push(if snaplen == 0 { u32::MAX } else { snaplen });
        Ok((self.snaplens.len() - 1) as u32)
    }

    /// Writes one enhanced packet block.
    pub fn write(
        &mut self,
        interface: u32,
        ts_ns: u64,
        orig_len: u32,
        data: &[u8],
    ) -> io::Result<()> {
        let snap = self
            .snaplens
            .get(interface as usize)
            .copied()
            .unwrap_or(u32::MAX);
        let cap = data.len().min(snap as usize);
        let pad = pad4(cap);
        let len = (32 + cap + pad) as u32;
        let mut h = [0u8; 28];
        h[0..4].copy_from_slice(&6u32.to_le_bytes());
        h[4..8].copy_from_slice(&len.to_le_bytes());
        h[8..12].copy_from_slice(&interface.to_le_bytes());
        h[12..16].copy_from_slice(&((ts_ns >> 32) as u32).to_le_bytes());
        h[16..20].copy_from_slice(&(ts_ns as u32).to_le_bytes());
        h[20..24].copy_from_slice(&(cap as u32).to_le_bytes());
        h[24..28].copy_from_slice(&orig_len.max(cap as u32).to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(&data[..cap])?;
        self.out.write_all(&[0u8; 3][..pad])?;
        self.out.write_all(&len.to_le_bytes())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}
