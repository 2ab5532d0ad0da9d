//! Streaming reader of pcap (µs and ns magics, both byte orders, the "modified" variant) and
//! pcapng (several sections and interfaces, `if_tsresol`, `if_tsoffset`, `if_speed`, EPB and
//! SPB), transparently gunzipping `.gz` input. Memory stays bounded by the largest record.

use std::io::Read;

use pcap_parser::pcapng::Block;
use pcap_parser::{PcapError, PcapHeader};

use crate::CaptureError;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
const PCAPNG_SHB: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];
/// Records larger than this are treated as corruption rather than allocated.
const MAX_RECORD: usize = 64 << 20;
/// The buffer's starting size, and so the first read's: the size of an `analyze` chunk, so the
/// first chunk is no larger than the rest (a 1 MB first read made one batch of events four times
/// the others' and kept it for the whole pass).
const INITIAL_BUF: usize = 256 << 10;

/// The container format of a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Pcap {
        big_endian: bool,
        nanosecond: bool,
        modified: bool,
    },
    Pcapng,
}

/// One capture interface (a pcap file has exactly one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    pub linktype: u32,
    pub snaplen: u32,
    /// Timestamp units per second.
    pub ts_per_sec: u64,
    /// Seconds added to every timestamp (`if_tsoffset`).
    pub ts_offset_s: i64,
    /// Link speed in bits per second (`if_speed`).
    pub speed_bps: Option<u64>,
    pub name: Option<String>,
    /// The interface's ID within its pcapng section (0 in other formats): the capture point
    /// a merged file's packets came from, the same for every section of a concatenation.
    pub if_id: u32,
}

/// One captured packet, borrowed from the reader until the next call.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    /// Nanoseconds since the epoch.
    pub ts_ns: u64,
    pub linktype: u32,
    /// Length on the wire.
    pub orig_len: u32,
    pub data: &'a [u8],
    /// Index into [`CaptureReader::interfaces`].
    pub interface: u32,
    /// [`Interface::if_id`] of that interface.
    pub if_id: u32,
    /// The interface's link speed (`if_speed`), when the file records it.
    pub if_speed: Option<u64>,
}

/// Where one record of a [`Chunk`] lies in the chunk's buffer, and what the file says of it.
#[derive(Debug, Clone, Copy)]
struct ChunkRecord {
    at: usize,
    len: usize,
    ts_ns: u64,
    orig_len: u32,
    linktype: u32,
    interface: u32,
    if_id: u32,
    if_speed: Option<u64>,
}

impl ChunkRecord {
    fn record(self, buf: &[u8]) -> Record<'_> {
        Record {
            ts_ns: self.ts_ns,
            linktype: self.linktype,
            orig_len: self.orig_len,
            data: &buf[self.at..self.at + self.len],
            interface: self.interface,
            if_id: self.if_id,
            if_speed: self.if_speed,
        }
    }
}

/// Consecutive whole records taken from a reader at once, owning their bytes, so they can be
/// decoded on another thread while the reader goes on. Reuse one with
/// [`CaptureReader::next_chunk`]: its buffer is recycled.
#[derive(Debug, Default)]
pub struct Chunk {
    buf: Vec<u8>,
    recs: Vec<ChunkRecord>,
}

impl Chunk {
    /// Records held.
    pub fn len(&self) -> usize {
        self.recs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    /// The records, in file order.
    pub fn records(&self) -> impl ExactSizeIterator<Item = Record<'_>> + '_ {
        self.recs.iter().map(|r| r.record(&self.buf))
    }
}

/// What one step of parsing the buffer found (positions only, so the buffer borrow ends).
enum Step {
    Packet {
        at: usize,
        len: usize,
        ts_ns: u64,
        orig_len: u32,
        interface: u32,
        used: usize,
    },
    Skip(usize),
    Incomplete,
    Corrupt(String),
    Unsupported(u32, u32),
}

/// A streaming capture-file reader.
pub struct CaptureReader {
    src: Box<dyn Read + Send>,
    path: String,
    gz: bool,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    /// Offset in the (uncompressed) stream of `buf[start]`.
    offset: u64,
    format: Format,
    interfaces: Vec<Interface>,
    section_base: usize,
    section_be: bool,
    records: u64,
    /// An error met while filling a chunk, reported by the next call after the chunk's records.
    deferred: Option<CaptureError>,
    /// A read that failed while whole records were still buffered: reported (see
    /// [`CaptureReader::read_failed`]) once they are delivered.
    read_error: Option<std::io::Error>,
    /// See [`CaptureReader::frame_generally`].
    general_only: bool,
}

fn ns_from_ticks(ticks: u64, per_sec: u64, offset_s: i64) -> u64 {
    let ns = if per_sec == 1_000_000_000 {
        ticks
    } else {
        (u128::from(ticks) * 1_000_000_000 / u128::from(per_sec.max(1))) as u64
    };
    ns.saturating_add_signed(offset_s.saturating_mul(1_000_000_000))
}

impl CaptureReader {
    /// Opens a file; `-` reads standard input.
    pub fn open(path: &str) -> Result<Self, CaptureError> {
        let src: Box<dyn Read + Send> = if path == "-" {
            Box::new(std::io::stdin())
        } else {
            Box::new(
                std::fs::File::open(path).map_err(|source| CaptureError::Io {
                    path: path.into(),
                    source,
                })?,
            )
        };
        Self::from_reader(path, src)
    }

    /// Reads a capture from any byte stream; `name` is used in error messages.
    pub fn from_reader(name: &str, mut src: Box<dyn Read + Send>) -> Result<Self, CaptureError> {
        let io = |source| CaptureError::Io {
            path: name.into(),
            source,
        };
        let mut head = [0u8; 2];
        let n = read_full(&mut src, &mut head).map_err(io)?;
        let gz = n == 2 && head == GZIP_MAGIC;
        let chained: Box<dyn Read + Send> =
            Box::new(std::io::Cursor::new(head[..n].to_vec()).chain(src));
        let src: Box<dyn Read + Send> = if gz {
            Box::new(flate2::read::MultiGzDecoder::new(chained))
        } else {
            chained
        };
        let mut r = Self {
            src,
            path: name.into(),
            gz,
            buf: vec![0; INITIAL_BUF],
            start: 0,
            end: 0,
            eof: false,
            offset: 0,
            format: Format::Pcapng,
            interfaces: Vec::new(),
            section_base: 0,
            section_be: false,
            records: 0,
            deferred: None,
            read_error: None,
            general_only: false,
        };
        r.read_header()?;
        Ok(r)
    }

    /// The container format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Interfaces seen so far (pcapng defines them as it goes).
    pub fn interfaces(&self) -> &[Interface] {
        &self.interfaces
    }

    /// The coarsest timestamp unit of the interfaces read so far, in nanoseconds (1 for
    /// nanosecond timestamps, 1,000 for classic pcap's microseconds).
    pub fn ts_unit_ns(&self) -> u64 {
        self.interfaces
            .iter()
            .map(|i| 1_000_000_000 / i.ts_per_sec.clamp(1, 1_000_000_000))
            .max()
            .unwrap_or(1)
    }

    /// The name given when opening.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Packet records returned so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    fn gz_note(&self) -> &'static str {
        if self.gz {
            " after decompression"
        } else {
            ""
        }
    }

    /// Makes at least `want` bytes available from `start`; false at end of input.
    fn fill(&mut self, want: usize) -> Result<bool, CaptureError> {
        while self.end - self.start < want {
            if self.eof {
                return Ok(false);
            }
            if self.start > 0
                && (self.start > self.buf.len() / 2 || self.buf.len() - self.end < want)
            {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.buf.len() - self.start < want {
                let n = (want + self.start).next_power_of_two().max(self.buf.len());
                self.buf.resize(n, 0);
            }
            let n = match self.src.read(&mut self.buf[self.end..]) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.read_failed(e)),
            };
            if n == 0 {
                self.eof = true;
            }
            self.end += n;
        }
        Ok(true)
    }

    fn not_capture(&self, detail: String) -> CaptureError {
        CaptureError::NotCapture {
            path: self.path.clone(),
            detail,
        }
    }

    fn read_header(&mut self) -> Result<(), CaptureError> {
        if !self.fill(24)? {
            let got = self.end - self.start;
            if got >= 4 && self.buf[..4] == PCAPNG_SHB {
                // A pcapng section header is at least 28 bytes; fall through to report it.
            } else {
                return Err(
                    self.not_capture(format!("only {got} bytes, shorter than any capture header"))
                );
            }
        }
        let head = &self.buf[self.start..self.end];
        if head[..4] == PCAPNG_SHB {
            self.format = Format::Pcapng;
            return Ok(());
        }
        let magic = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
        let known = [0xa1b2_c3d4u32, 0xa1b2_3c4d, 0xa1b2_cd34];
        if !known.contains(&magic) && !known.contains(&magic.swap_bytes()) {
            return Err(self.not_capture(format!("unknown magic number 0x{magic:08x}")));
        }
        let hdr: PcapHeader = match pcap_parser::parse_pcap_header(head) {
            Ok((_, h)) => h,
            Err(e) => return Err(self.not_capture(format!("bad pcap header: {e:?}"))),
        };
        let linktype = (hdr.network.0 as u32) & 0xffff;
        self.format = Format::Pcap {
            big_endian: hdr.is_bigendian(),
            nanosecond: hdr.is_nanosecond_precision(),
            modified: hdr.is_modified_format(),
        };
        self.interfaces.push(Interface {
            linktype,
            snaplen: hdr.snaplen,
            ts_per_sec: if hdr.is_nanosecond_precision() {
                1_000_000_000
            } else {
                1_000_000
            },
            ts_offset_s: 0,
            speed_bps: None,
            name: None,
            if_id: 0,
        });
        self.start += 24;
        self.offset += 24;
        if !rdmascope_wire::link::is_supported(linktype) {
            return Err(CaptureError::UnsupportedLinktype {
                path: self.path.clone(),
                interface: 0,
                linktype,
                name: rdmascope_wire::link::linktype_name(linktype),
            });
        }
        Ok(())
    }

    /// The next packet record, or `None` at the end of the file.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Record<'_>>, CaptureError> {
        if let Some(e) = self.deferred.take() {
            return Err(e);
        }
        let min = self.header_len();
        loop {
            if let Err(e) = self.whole_record(min) {
                return e.map(|()| None);
            }
            if let Some(r) = self.record_step()? {
                // `record_step` moved past the record; its bytes stay in place until the next
                // call reads more.
                return Ok(Some(r.record(&self.buf)));
            }
        }
    }

    /// Replaces `chunk`'s records with up to `max` following ones, reading about `bytes` at a time
    /// (more when one record is larger). Returns false at the end of the input. An error after
    /// some records is returned by the next call, so every good record before it is delivered.
    pub fn next_chunk(
        &mut self,
        chunk: &mut Chunk,
        max: usize,
        bytes: usize,
    ) -> Result<bool, CaptureError> {
        chunk.recs.clear();
        if let Some(e) = self.deferred.take() {
            return Err(e);
        }
        // Read into the chunk's own buffer, after the unread tail the reader kept: the buffer is
        // warm in the cache of the worker that decodes the chunk.
        self.move_tail(chunk, bytes);
        if let Err(e) = self.top_up(bytes) {
            if self.end == self.start {
                return Err(self.read_failed(e));
            }
            // Deliver the whole records read before the failure first, as `next` does; the
            // failure is reported at the first record it left incomplete.
            self.read_error = Some(e);
            self.eof = true;
        }
        let min = self.header_len();
        while chunk.recs.len() < max {
            if let (
                Format::Pcap {
                    big_endian,
                    nanosecond,
                    modified: false,
                },
                false,
            ) = (self.format, self.general_only)
            {
                self.pcap_run(chunk, max, big_endian, nanosecond);
                if chunk.recs.len() == max {
                    break;
                }
            }
            if let Format::Pcapng = self.format {
                if self.section_be {
                    self.epb_run::<true>(chunk, max);
                } else {
                    self.epb_run::<false>(chunk, max);
                }
                if chunk.recs.len() == max {
                    break;
                }
            }
            let have = self.end - self.start;
            if have < min || have < self.declared_len() {
                // A record continues past the buffer: leave it for the next chunk, unless it is
                // the first, in which case the buffer grows to hold it.
                if !chunk.recs.is_empty() {
                    break;
                }
                if let Err(e) = self.whole_record(min) {
                    // A record left incomplete by the read that failed: that failure is why.
                    if matches!(e, Ok(()) | Err(CaptureError::Truncated { .. })) {
                        if let Some(io) = self.read_error.take() {
                            return Err(self.read_failed(io));
                        }
                    }
                    return e.map(|()| false);
                }
            }
            match self.record_step() {
                Ok(Some(r)) => chunk.recs.push(r),
                Ok(None) => {}
                Err(e) if chunk.recs.is_empty() => return Err(e),
                Err(e) => {
                    self.deferred = Some(e);
                    break;
                }
            }
        }
        // The chunk takes back the buffer holding its records; the reader keeps the unread tail.
        self.move_tail(chunk, 0);
        Ok(!chunk.recs.is_empty())
    }

    /// Swaps the reader's buffer with `chunk`'s and copies the unread bytes over to the front
    /// of the reader's new buffer, which holds at least `bytes`.
    fn move_tail(&mut self, chunk: &mut Chunk, bytes: usize) {
        std::mem::swap(&mut self.buf, &mut chunk.buf);
        let tail = self.end - self.start;
        if self.buf.len() < tail.max(bytes) {
            self.buf.resize(tail.max(bytes), 0);
        }
        self.buf[..tail].copy_from_slice(&chunk.buf[self.start..self.end]);
        self.start = 0;
        self.end = tail;
    }

    /// Takes every whole classic pcap record in the buffer, in a tight loop; stops before one
    /// that is incomplete or implausible, which the general path then handles.
    fn pcap_run(&mut self, chunk: &mut Chunk, max: usize, big_endian: bool, nanosecond: bool) {
        // One loop per header variant, so the per-record code has no branch on it.
        match (big_endian, nanosecond) {
            (false, false) => self.pcap_run_as::<false, false>(chunk, max),
            (false, true) => self.pcap_run_as::<false, true>(chunk, max),
            (true, false) => self.pcap_run_as::<true, false>(chunk, max),
            (true, true) => self.pcap_run_as::<true, true>(chunk, max),
        }
    }

    fn pcap_run_as<const BIG_ENDIAN: bool, const NANOSECOND: bool>(
        &mut self,
        chunk: &mut Chunk,
        max: usize,
    ) {
        let Some(ifc) = self.interfaces.first() else {
            return;
        };
        let (linktype, if_speed) = (ifc.linktype, ifc.speed_bps);
        let buf = &self.buf[..self.end];
        let mut at = self.start;
        while chunk.recs.len() < max {
            let Some(h) = buf.get(at..at + 16).and_then(|h| h.try_into().ok()) else {
                break;
            };
            let (ts_ns, caplen, orig_len) = pcap_record(h, BIG_ENDIAN, NANOSECOND);
            let len = caplen as usize;
            if len > MAX_RECORD || buf.len() - (at + 16) < len {
                break;
            }
            chunk.recs.push(ChunkRecord {
                at: at + 16,
                len,
                ts_ns,
                orig_len,
                linktype,
                interface: 0,
                if_id: 0,
                if_speed,
            });
            at += 16 + len;
            self.records += 1;
        }
        self.offset += (at - self.start) as u64;
        self.start = at;
    }

    /// Takes every whole, well-formed pcapng Enhanced Packet Block in the buffer, in a tight loop;
    /// stops at any other block or at one [`CaptureReader::epb_at`] leaves to the general path.
    fn epb_run<const BIG_ENDIAN: bool>(&mut self, chunk: &mut Chunk, max: usize) {
        let mut at = self.start;
        while chunk.recs.len() < max {
            let Some((r, len)) = self.epb_at::<BIG_ENDIAN>(at) else {
                break;
            };
            chunk.recs.push(r);
            at += len;
            self.records += 1;
        }
        self.offset += (at - self.start) as u64;
        self.start = at;
    }

    /// The whole, well-formed pcapng Enhanced Packet Block at `at` and its length, read
    /// directly (pcapng §4.3: type 6, length, interface, timestamp high and low, captured and
    /// original length, data padded to 32 bits, options, length again). `None` for any other
    /// block and for one pcap-parser would not accept as it is, which the general path then
    /// handles. Options are skipped, as the general path does with what it parses of them.
    #[inline]
    fn epb_at<const BIG_ENDIAN: bool>(&self, at: usize) -> Option<(ChunkRecord, usize)> {
        const EPB: u32 = 6;
        if self.general_only {
            return None;
        }
        let rd = |b: &[u8], o: usize| {
            let w = [b[o], b[o + 1], b[o + 2], b[o + 3]];
            if BIG_ENDIAN {
                u32::from_be_bytes(w)
            } else {
                u32::from_le_bytes(w)
            }
        };
        let buf = &self.buf[..self.end];
        let h = buf.get(at..at + 28)?;
        let len = rd(h, 4) as usize;
        let caplen = rd(h, 20);
        let padded = (caplen as usize + 3) & !3;
        if rd(h, 0) != EPB
            || !(32..=MAX_RECORD).contains(&len)
            || caplen >= u32::MAX - 4
            || 32 + padded > len
            || buf.len() - at < len
            || rd(buf, at + len - 4) as usize != len
        {
            return None;
        }
        let interface = self.section_base + rd(h, 8) as usize;
        let ifc = self.interfaces.get(interface)?;
        let ticks = u64::from(rd(h, 12)) << 32 | u64::from(rd(h, 16));
        let r = ChunkRecord {
            at: at + 28,
            len: caplen as usize,
            ts_ns: ns_from_ticks(ticks, ifc.ts_per_sec, ifc.ts_offset_s),
            orig_len: rd(h, 24).max(caplen),
            linktype: ifc.linktype,
            interface: interface as u32,
            if_id: ifc.if_id,
            if_speed: ifc.speed_bps,
        };
        Some((r, len))
    }

    /// Frames every record through pcap-parser (or the classic pcap header alone), never
    /// through the tight loops: the reference the tests hold the fast framing to.
    #[doc(hidden)]
    pub fn frame_generally(&mut self) {
        self.general_only = true;
    }

    /// Reads until `bytes` are buffered or the input ends; `move_tail` has put the unread bytes
    /// at the front of a buffer that holds `bytes`. Only up to `bytes`, even when the buffer is
    /// larger (it grew for a big record): what is read past the chunk's records is copied on.
    fn top_up(&mut self, bytes: usize) -> Result<(), std::io::Error> {
        while self.end < bytes && !self.eof {
            let n = match self.src.read(&mut self.buf[self.end..bytes]) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if n == 0 {
                self.eof = true;
            }
            self.end += n;
        }
        Ok(())
    }

    /// Bytes of a record header.
    fn header_len(&self) -> usize {
        match self.format {
            Format::Pcap { modified: true, .. } => 24,
            Format::Pcap { .. } => 16,
            Format::Pcapng => 12,
        }
    }

    /// Makes the whole record at `start` available. `Err(Ok(()))` is the clean end of the input.
    fn whole_record(&mut self, min: usize) -> Result<(), Result<(), CaptureError>> {
        if !self.fill(min).map_err(Err)? {
            if self.start == self.end {
                return Err(Ok(()));
            }
            let got = self.end - self.start;
            return Err(Err(self.truncated(format!(
                "{got} bytes left, a record header needs {min}"
            ))));
        }
        // Bound the record size before asking the parser, so a corrupt length cannot make us
        // allocate gigabytes.
        let declared = self.declared_len();
        if declared > MAX_RECORD {
            return Err(Err(
                self.corrupt(format!("record length {declared} is not plausible"))
            ));
        }
        if !self.fill(declared).map_err(Err)? {
            let got = self.end - self.start;
            return Err(Err(
                self.truncated(format!("record needs {declared} bytes, {got} left"))
            ));
        }
        Ok(())
    }

    /// Parses the whole record at `start` and moves past it: a packet's place and facts, or
    /// `None` for a block that is not a packet.
    fn record_step(&mut self) -> Result<Option<ChunkRecord>, CaptureError> {
        if let Format::Pcapng = self.format {
            let epb = if self.section_be {
                self.epb_at::<true>(self.start)
            } else {
                self.epb_at::<false>(self.start)
            };
            if let Some((r, len)) = epb {
                self.start += len;
                self.offset += len as u64;
                self.records += 1;
                return Ok(Some(r));
            }
        }
        match self.step() {
            Step::Packet {
                at,
                len,
                ts_ns,
                orig_len,
                interface,
                used,
            } => {
                self.start += used;
                self.offset += used as u64;
                self.records += 1;
                let ifc = &self.interfaces[interface as usize];
                Ok(Some(ChunkRecord {
                    at,
                    len,
                    ts_ns,
                    orig_len,
                    linktype: ifc.linktype,
                    interface,
                    if_id: ifc.if_id,
                    if_speed: ifc.speed_bps,
                }))
            }
            Step::Skip(used) => {
                self.start += used;
                self.offset += used as u64;
                Ok(None)
            }
            // The declared length was satisfied, so the parser wants more than the record says
            // it holds: the record is inconsistent.
            Step::Incomplete => Err(self.corrupt("record is shorter than its own fields".into())),
            Step::Corrupt(d) => Err(self.corrupt(d)),
            Step::Unsupported(interface, linktype) => Err(CaptureError::UnsupportedLinktype {
                path: self.path.clone(),
                interface,
                linktype,
                name: rdmascope_wire::link::linktype_name(linktype),
            }),
        }
    }

    /// Total length of the record or block at `start` per its header.
    fn declared_len(&self) -> usize {
        let h = &self.buf[self.start..self.end];
        match self.format {
            Format::Pcap {
                big_endian,
                modified,
                ..
            } => {
                let caplen = if big_endian {
                    u32::from_be_bytes([h[8], h[9], h[10], h[11]])
                } else {
                    u32::from_le_bytes([h[8], h[9], h[10], h[11]])
                };
                caplen as usize + if modified { 24 } else { 16 }
            }
            Format::Pcapng => {
                let be = if h[..4] == PCAPNG_SHB {
                    h[8..12] == [0x1a, 0x2b, 0x3c, 0x4d]
                } else {
                    self.section_be
                };
                let len = if be {
                    u32::from_be_bytes([h[4], h[5], h[6], h[7]])
                } else {
                    u32::from_le_bytes([h[4], h[5], h[6], h[7]])
                };
                len as usize
            }
        }
    }

    fn step(&mut self) -> Step {
        let base = self.buf.as_ptr() as usize;
        let avail = &self.buf[self.start..self.end];
        match self.format {
            Format::Pcap {
                big_endian,
                nanosecond,
                modified,
            } => {
                if !modified {
                    // The caller has already made sure the whole record is in the buffer.
                    let Some(h) = avail.get(..16).and_then(|h| h.try_into().ok()) else {
                        return Step::Incomplete;
                    };
                    let (ts_ns, caplen, orig_len) = pcap_record(h, big_endian, nanosecond);
                    return Step::Packet {
                        at: self.start + 16,
                        len: caplen as usize,
                        ts_ns,
                        orig_len,
                        interface: 0,
                        used: 16 + caplen as usize,
                    };
                }
                let r = if modified {
                    pcap_parser::parse_pcap_frame_modified(avail)
                } else if big_endian {
                    pcap_parser::parse_pcap_frame_be(avail)
                } else {
                    pcap_parser::parse_pcap_frame(avail)
                };
                match r {
                    Ok((rest, b)) => {
                        let frac = if nanosecond {
                            u64::from(b.ts_usec)
                        } else {
                            u64::from(b.ts_usec) * 1000
                        };
                        Step::Packet {
                            at: b.data.as_ptr() as usize - base,
                            len: b.data.len(),
                            ts_ns: u64::from(b.ts_sec) * 1_000_000_000 + frac,
                            orig_len: b.origlen.max(b.caplen),
                            interface: 0,
                            used: avail.len() - rest.len(),
                        }
                    }
                    Err(nom_err) => parse_failure(nom_err),
                }
            }
            Format::Pcapng => {
                // Every block holds its type and two lengths (pcapng §3.1); pcap-parser 0.17
                // subtracts 12 from a shorter length of some block types unchecked.
                let declared = self.declared_len();
                if declared < 12 {
                    return Step::Corrupt(format!(
                        "block length {declared} is below the 12 bytes of its type and lengths"
                    ));
                }
                let r = if avail[..4] == PCAPNG_SHB {
                    pcap_parser::pcapng::parse_sectionheaderblock(avail)
                        .map(|(r, s)| (r, Block::SectionHeader(s)))
                } else if self.section_be {
                    pcap_parser::pcapng::parse_block_be(avail)
                } else {
                    pcap_parser::pcapng::parse_block_le(avail)
                };
                let (rest, block) = match r {
                    Ok(x) => x,
                    Err(e) => return parse_failure(e),
                };
                let used = avail.len() - rest.len();
                match block {
                    Block::SectionHeader(s) => {
                        self.section_be = s.big_endian();
                        self.section_base = self.interfaces.len();
                        Step::Skip(used)
                    }
                    Block::InterfaceDescription(idb) => {
                        let linktype = (idb.linktype.0 as u32) & 0xffff;
                        let id = self.interfaces.len() as u32;
                        self.interfaces.push(Interface {
                            linktype,
                            snaplen: idb.snaplen,
                            ts_per_sec: idb.ts_resolution().unwrap_or(1_000_000),
                            ts_offset_s: idb.ts_offset(),
                            speed_bps: idb.if_speed().and_then(|r| r.ok()),
                            name: idb.if_name().and_then(|r| r.ok()).map(str::to_string),
                            if_id: id - self.section_base as u32,
                        });
                        if !rdmascope_wire::link::is_supported(linktype) {
                            return Step::Unsupported(id, linktype);
                        }
                        Step::Skip(used)
                    }
                    Block::EnhancedPacket(epb) => {
                        let interface = self.section_base + epb.if_id as usize;
                        let Some(ifc) = self.interfaces.get(interface) else {
                            return Step::Corrupt(format!(
                                "packet on interface {} that no block defined",
                                epb.if_id
                            ));
                        };
                        let ticks = (u64::from(epb.ts_high) << 32) | u64::from(epb.ts_low);
                        let len = (epb.caplen as usize).min(epb.data.len());
                        Step::Packet {
                            at: epb.data.as_ptr() as usize - base,
                            len,
                            ts_ns: ns_from_ticks(ticks, ifc.ts_per_sec, ifc.ts_offset_s),
                            orig_len: epb.origlen.max(len as u32),
                            interface: interface as u32,
                            used,
                        }
                    }
                    Block::SimplePacket(spb) => {
                        let interface = self.section_base;
                        let Some(ifc) = self.interfaces.get(interface) else {
                            return Step::Corrupt(
                                "simple packet block before any interface block".into(),
                            );
                        };
                        let mut len = (spb.origlen as usize).min(spb.data.len());
                        if ifc.snaplen > 0 {
                            len = len.min(ifc.snaplen as usize);
                        }
                        Step::Packet {
                            at: spb.data.as_ptr() as usize - base,
                            len,
                            ts_ns: 0,
                            orig_len: spb.origlen,
                            interface: interface as u32,
                            used,
                        }
                    }
                    _ => Step::Skip(used),
                }
            }
        }
    }

    /// A failed read at the first record not yet delivered. In a gzip file the decompressor's
    /// complaint is about the data (cut or damaged), so it names the record and the offset
    /// like any other fault in the file; elsewhere it is an I/O error.
    fn read_failed(&self, e: std::io::Error) -> CaptureError {
        if !self.gz {
            return CaptureError::Io {
                path: self.path.clone(),
                source: e,
            };
        }
        let detail = format!("the gzip data stops: {e}");
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            self.truncated(detail)
        } else {
            self.corrupt(detail)
        }
    }

    fn truncated(&self, detail: String) -> CaptureError {
        CaptureError::Truncated {
            path: self.path.clone(),
            record: self.records + 1,
            offset: self.offset,
            gz: self.gz_note(),
            detail,
        }
    }

    fn corrupt(&self, detail: String) -> CaptureError {
        CaptureError::Corrupt {
            path: self.path.clone(),
            record: self.records + 1,
            offset: self.offset,
            gz: self.gz_note(),
            detail,
        }
    }
}

/// The classic pcap record header (four fixed fields): timestamp in ns, captured length and
/// wire length (never below the captured one).
#[inline]
fn pcap_record(h: &[u8; 16], big_endian: bool, nanosecond: bool) -> (u64, u32, u32) {
    let rd = |o: usize| {
        let b = [h[o], h[o + 1], h[o + 2], h[o + 3]];
        if big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    };
    let (sec, frac, caplen, origlen) = (rd(0), rd(4), rd(8), rd(12));
    let frac = if nanosecond {
        u64::from(frac)
    } else {
        u64::from(frac) * 1000
    };
    (
        u64::from(sec) * 1_000_000_000 + frac,
        caplen,
        origlen.max(caplen),
    )
}

fn parse_failure(e: pcap_parser::nom::Err<PcapError<&[u8]>>) -> Step {
    use pcap_parser::nom;
    match e {
        nom::Err::Incomplete(_) => Step::Incomplete,
        nom::Err::Error(e) | nom::Err::Failure(e) => match e {
            PcapError::Incomplete(_) => Step::Incomplete,
            other => Step::Corrupt(format!("{other:?}").chars().take(120).collect()),
        },
    }
}

fn read_full(r: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks() {
        assert_eq!(ns_from_ticks(1_500_000, 1_000_000, 0), 1_500_000_000);
        assert_eq!(ns_from_ticks(3, 1_000_000_000, 1), 1_000_000_003);
        assert_eq!(ns_from_ticks(1 << 20, 1 << 20, 0), 1_000_000_000);
    }

    /// A pcapng interface of microseconds (`if_tsresol` 6, as `dumpcap` writes by default)
    /// reads its ticks as microseconds and tells that unit.
    #[test]
    fn pcapng_microseconds_tell_their_unit() {
        let mut f = Vec::new();
        let block = |f: &mut Vec<u8>, kind: u32, body: &[u8]| {
            let len = (12 + body.len()) as u32;
            f.extend(kind.to_le_bytes());
            f.extend(len.to_le_bytes());
            f.extend(body);
            f.extend(len.to_le_bytes());
        };
        let shb = [
            0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        ];
        block(&mut f, 0x0a0d_0d0a, &shb);
        // Ethernet, snaplen 65535, if_tsresol = 6, end of options.
        let idb = [
            1, 0, 0, 0, 0xff, 0xff, 0, 0, 9, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0, 0,
        ];
        block(&mut f, 1, &idb);
        let ticks: u64 = 1_767_225_600_000_123;
        let mut epb = vec![0; 4];
        epb.extend(((ticks >> 32) as u32).to_le_bytes());
        epb.extend((ticks as u32).to_le_bytes());
        epb.extend(4u32.to_le_bytes());
        epb.extend(60u32.to_le_bytes());
        epb.extend([1, 2, 3, 4]);
        block(&mut f, 6, &epb);
        let mut r =
            CaptureReader::from_reader("t.pcapng", Box::new(std::io::Cursor::new(f))).unwrap();
        let mut chunk = Chunk::default();
        assert!(r.next_chunk(&mut chunk, 100, 1 << 16).unwrap());
        let got: Vec<u64> = chunk.records().map(|x| x.ts_ns).collect();
        assert_eq!(got, [ticks * 1000]);
        assert_eq!(r.ts_unit_ns(), 1000);
    }

    /// Every classic pcap variant (both byte orders, µs and ns magics) reads the same records,
    /// in chunks as one by one, and tells its timestamp unit.
    #[test]
    fn pcap_variants_read_in_chunks() {
        for (big, nano) in [(false, false), (false, true), (true, false), (true, true)] {
            let w32 = |v: u32| {
                if big {
                    v.to_be_bytes()
                } else {
                    v.to_le_bytes()
                }
            };
            let w16 = |v: u16| {
                if big {
                    v.to_be_bytes()
                } else {
                    v.to_le_bytes()
                }
            };
            let mut f = Vec::new();
            f.extend(w32(if nano { 0xa1b2_3c4d } else { 0xa1b2_c3d4 }));
            f.extend(w16(2));
            f.extend(w16(4));
            f.extend([0; 8]);
            f.extend(w32(65535));
            f.extend(w32(1));
            for i in 0..5u32 {
                f.extend(w32(100 + i));
                f.extend(w32(7 * i));
                f.extend(w32(3 + i));
                f.extend(w32(60 + i));
                f.extend((0..3 + i).map(|b| b as u8));
            }
            let mut r =
                CaptureReader::from_reader("t.pcap", Box::new(std::io::Cursor::new(f))).unwrap();
            let mut chunk = Chunk::default();
            assert!(r.next_chunk(&mut chunk, 100, 1 << 16).unwrap());
            let got: Vec<(u64, u32, usize)> = chunk
                .records()
                .map(|x| (x.ts_ns, x.orig_len, x.data.len()))
                .collect();
            let unit = if nano { 1 } else { 1000 };
            let want: Vec<(u64, u32, usize)> = (0..5u32)
                .map(|i| {
                    let ts = u64::from(100 + i) * 1_000_000_000 + u64::from(7 * i) * unit;
                    (ts, 60 + i, 3 + i as usize)
                })
                .collect();
            assert_eq!(got, want, "big endian {big}, nanoseconds {nano}");
            assert_eq!(r.ts_unit_ns(), unit);
            assert!(!r.next_chunk(&mut chunk, 100, 1 << 16).unwrap());
        }
    }
}
