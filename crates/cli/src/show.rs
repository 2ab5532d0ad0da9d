//! `rdmascope show`: read capture files, decode, filter, print.

use std::io::Write;

use anyhow::{Context, Result};
use rdmascope_capture::CaptureReader;
use rdmascope_wire::fields::RecordMeta;
use rdmascope_wire::filter::Filter;
use rdmascope_wire::{DecodeOptions, Frame};

use crate::print;

#[derive(clap::Args)]
pub struct ShowArgs {
    /// Capture files (pcap, pcapng, optionally gzip-compressed); `-` reads standard input.
    #[arg(required = true)]
    pub files: Vec<String>,
    /// Print the full field tree of every layer.
    #[arg(short = 'V', long)]
    pub verbose: bool,
    /// Print NDJSON: one object per packet, keys named after Wireshark's display-filter fields.
    #[arg(long, conflicts_with = "verbose")]
    pub json: bool,
    /// Stop after N packets (counted after the filter).
    #[arg(short = 'c', long = "count", value_name = "N")]
    pub count: Option<u64>,
    /// Display filter, e.g. 'bth.destqp == 0x12 && bth.opcode == RC_ACKNOWLEDGE'.
    #[arg(short = 'Y', long = "filter", value_name = "EXPR")]
    pub filter: Option<String>,
    /// Also decode UDP destination port N as RoCEv2 (4791 always is); repeatable.
    #[arg(long = "roce-port", value_name = "N")]
    pub roce_ports: Vec<u16>,
    /// Skip ICRC/VCRC verification (faster; icrc.status is then absent).
    #[arg(long)]
    pub no_crc: bool,
}

/// Decode options from the common flags.
pub fn decode_options(roce_ports: &[u16], no_crc: bool) -> Result<DecodeOptions> {
    let mut o = DecodeOptions {
        verify_crc: !no_crc,
        ..Default::default()
    };
    for &p in roce_ports {
        anyhow::ensure!(
            o.add_roce_port(p),
            "too many --roce-port values (at most 7 besides 4791)"
        );
    }
    Ok(o)
}

pub fn run(a: &ShowArgs) -> Result<()> {
    let opts = decode_options(&a.roce_ports, a.no_crc)?;
    let filter = a.filter.as_deref().map(Filter::new).transpose()?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut printer = print::Printer::new(if a.json {
        print::Style::Json
    } else if a.verbose {
        print::Style::Tree
    } else {
        print::Style::Line
    });
    let mut number = 0u64;
    let mut shown = 0u64;
    'files: for path in &a.files {
        let mut reader = CaptureReader::open(path)?;
        loop {
            if a.count.is_some_and(|c| shown >= c) {
                break 'files;
            }
            let rec = match reader.next() {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(e) => {
                    out.flush()?;
                    return Err(e).context(format!("reading stopped after {number} packets"));
                }
            };
            number += 1;
            let frame = Frame::decode(rec.linktype, rec.data, rec.orig_len, &opts);
            let meta = RecordMeta {
                number,
                ts_ns: rec.ts_ns,
                interface: rec.interface,
            };
            if let Some(f) = &filter {
                if !f.matches(&meta, &frame) {
                    continue;
                }
            }
            shown += 1;
            printer.print(&mut out, &meta, &frame)?;
        }
    }
    out.flush()?;
    Ok(())
}
