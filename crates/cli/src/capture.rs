//! `rdmascope capture`: live capture to pcapng (or to the terminal), with the kernel's own
//! drop counters, and `rdmascope replay`: send a capture's frames onto an interface.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use rdmascope_capture::live::{self, bpf, rdma, RingConfig, RxRing, TxSocket};
use rdmascope_capture::output::{Destination, OutputInterface, PcapngOutput, Ring};
use rdmascope_capture::CaptureReader;
use rdmascope_wire::fields::RecordMeta;
use rdmascope_wire::{DecodeOptions, Frame};

use crate::print;

const LINKTYPE_ETHERNET: u16 = 1;
/// What "the whole frame" means for `-s 0` (libpcap's MAXIMUM_SNAPLEN).
pub(crate) const MAX_SNAPLEN: u32 = 262_144;

#[derive(clap::Args)]
pub struct CaptureArgs {
    /// Network interface, or RDMA device (`mlx5_0`, `mlx5_0:1`) for offloaded traffic.
    #[arg(short = 'i', long = "interface", value_name = "IFACE")]
    pub iface: String,
    /// Write pcapng to FILE (`-` for standard output); without it, print one line per packet.
    #[arg(short = 'w', value_name = "FILE")]
    pub write: Option<String>,
    /// Bytes kept of each frame (0 = the whole frame; 128 keeps every RDMA header).
    #[arg(short = 's', long = "snaplen", default_value_t = 0)]
    pub snaplen: u32,
    /// Stop after N packets.
    #[arg(short = 'c', long = "count", value_name = "N")]
    pub count: Option<u64>,
    /// Stop after this long (e.g. 30s, 500ms, 5m).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// A tcpdump-style filter expression (compiled by libpcap, loaded at run time).
    #[arg(
        short = 'f',
        long = "filter",
        value_name = "BPF",
        conflicts_with = "all"
    )]
    pub filter: Option<String>,
    /// Capture everything (no filter). The default keeps RoCEv2 (UDP 4791), RoCEv1, PFC and
    /// PAUSE, LLDP and perftest's TCP 18515, with or without a VLAN tag.
    #[arg(long)]
    pub all: bool,
    /// Start a new file before this size (e.g. 1G, 100M, 64k; k/M/G are powers of 1000).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, requires = "write")]
    pub file_size: Option<u64>,
    /// With --file-size, keep only the newest N files.
    #[arg(long, value_name = "N", requires = "file_size")]
    pub files: Option<u32>,
    /// Kernel ring size (default 64M).
    #[arg(short = 'B', long = "buffer-size", value_name = "SIZE", value_parser = parse_size)]
    pub buffer: Option<u64>,
    /// Do not put the interface into promiscuous mode.
    #[arg(short = 'p', long = "no-promiscuous-mode")]
    pub no_promisc: bool,
    /// Print the live status line even when standard error is not a terminal.
    #[arg(long)]
    pub status: bool,
    /// Print the `analyze` summary of the written file(s) at the end.
    #[arg(long, requires = "write")]
    pub analyze: bool,
}

#[derive(clap::Args)]
pub struct ReplayArgs {
    /// The capture to send (pcap or pcapng; Ethernet frames are sent, others skipped).
    pub file: String,
    /// Interface to send on.
    #[arg(short = 'i', long = "interface", value_name = "IFACE")]
    pub iface: String,
    /// Send at N packets per second instead of the recorded pacing.
    #[arg(long, value_name = "N", conflicts_with_all = ["mbps", "topspeed"])]
    pub pps: Option<f64>,
    /// Send at N megabits per second (frame bytes) instead of the recorded pacing.
    #[arg(long, value_name = "N", conflicts_with = "topspeed")]
    pub mbps: Option<f64>,
    /// Send as fast as the interface takes frames.
    #[arg(long)]
    pub topspeed: bool,
    /// Send the whole capture N times.
    #[arg(long = "loop", value_name = "N", default_value_t = 1)]
    pub loops: u32,
}

/// Splits `2.5ms` into 2.5 and "ms"; `what` completes "… is not …" on error.
fn number_and_unit<'a>(s: &'a str, what: &str) -> Result<(f64, &'a str), String> {
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v = num.parse().map_err(|_| format!("{s:?} is not {what}"))?;
    Ok((v, unit))
}

/// `30s`, `500ms`, `5m`, `1h`, `2.5s`, or plain seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (v, unit) = number_and_unit(s, "a duration (try 30s, 500ms, 5m)")?;
    let secs = match unit {
        "" | "s" => v,
        "ms" => v / 1e3,
        "us" => v / 1e6,
        "m" | "min" => v * 60.0,
        "h" => v * 3600.0,
        _ => return Err(format!("{s:?}: unknown unit {unit:?} (use ms, s, m or h)")),
    };
    Ok(Duration::from_secs_f64(secs))
}

/// `1G`, `100M`, `64k`, `4KiB`, `1GiB`, or plain bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (v, unit) = number_and_unit(s, "a size (try 1G, 100M, 64k)")?;
    let mult = match unit.trim_end_matches(['B', 'b']) {
        "" => 1.0,
        "k" | "K" => 1e3,
        "M" | "m" => 1e6,
        "G" | "g" => 1e9,
        "Ki" => 1024.0,
        "Mi" => 1024.0 * 1024.0,
        "Gi" => 1024.0 * 1024.0 * 1024.0,
        _ => {
            return Err(format!(
                "{s:?}: unknown unit {unit:?} (use k, M, G, KiB, MiB, GiB)"
            ))
        }
    };
    let bytes = (v * mult).round();
    if bytes < 1.0 {
        return Err(format!("{s:?} is zero"));
    }
    Ok(bytes as u64)
}

/// The sysfs root (tests point `RDMASCOPE_SYSFS` at a fixture tree).
fn sys_root() -> PathBuf {
    std::env::var_os("RDMASCOPE_SYSFS").map_or_else(|| PathBuf::from("/sys"), PathBuf::from)
}

fn read_trim(p: &str) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

pub(crate) fn section_comment() -> String {
    let host = read_trim("/proc/sys/kernel/hostname").unwrap_or_else(|| "unknown host".into());
    let kernel = read_trim("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into());
    format!(
        "rdmascope {} capture on {host} (Linux {kernel})",
        env!("CARGO_PKG_VERSION")
    )
}

fn bypass_warning(iface: &str, devs: &[String]) -> String {
    format!(
        "{iface} is the netdev of RDMA device {0}: RoCE that the NIC offloads bypasses the \
         kernel, so this capture sees none of it; capture it with `rdmascope capture -i {0}`",
        devs.join(", ")
    )
}

pub fn run_capture(a: &CaptureArgs) -> Result<()> {
    let root = sys_root();
    if let Some(port) = rdma::resolve(&root, &a.iface) {
        let port = port.map_err(anyhow::Error::msg)?;
        return crate::sniff::run(a, &port);
    }
    let snaplen = if a.snaplen == 0 {
        MAX_SNAPLEN
    } else {
        a.snaplen
    };
    let rdma_devs = rdma::devices_of_netdev(&root, &a.iface);
    if !rdma_devs.is_empty() {
        eprintln!(
            "rdmascope: warning: {}",
            bypass_warning(&a.iface, &rdma_devs)
        );
    }
    let arphrd = std::fs::read_to_string(root.join("class/net").join(&a.iface).join("type"))
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok());
    if let Some(t) = arphrd.filter(|&t| t != 1 && t != 772) {
        bail!(
            "{}: only Ethernet interfaces can be captured here (ARPHRD type {t}); for an \
             InfiniBand port capture its RDMA device instead",
            a.iface
        );
    }
    let (program, filter_desc) = if a.all {
        (bpf::accept_all(snaplen), "none (--all)".to_string())
    } else if let Some(expr) = &a.filter {
        let p = bpf::compile(expr, snaplen).map_err(|e| anyhow::anyhow!("filter {expr:?}: {e}"))?;
        (p, format!("{expr:?}"))
    } else {
        (bpf::default_filter(snaplen), "RDMA default".to_string())
    };
    let buffer = a.buffer.unwrap_or(64 << 20) as usize;
    let mut ring = RxRing::open(
        &a.iface,
        &program,
        RingConfig::with_size(buffer),
        !a.no_promisc,
    )?;
    let if_drops_start = live::interface_drops(&root, &a.iface);

    let mut sink = Sink::create(
        a,
        OutputInterface {
            linktype: LINKTYPE_ETHERNET,
            snaplen,
            name: a.iface.clone(),
            speed_bps: live::interface_speed(&root, &a.iface),
        },
    )?;
    let stop = live::signals::stop_flag();
    eprintln!(
        "rdmascope: capturing on {} (filter: {filter_desc}, snaplen {snaplen}); Ctrl-C stops",
        a.iface
    );
    let show_status = a.status || std::io::stderr().is_terminal();
    let start = Instant::now();
    let mut st = State::default();
    let mut last_status = start;
    let mut scratch = Vec::with_capacity(MAX_SNAPLEN as usize + 4);
    let mut error: Option<anyhow::Error> = None;
    let limit = a.count.unwrap_or(u64::MAX);
    let detect = Detect::new();
    loop {
        let finished = stop.load(Ordering::Acquire)
            || st.packets >= limit
            || a.duration.is_some_and(|d| start.elapsed() >= d);
        // After the stop, one last zero-wait pass drains what the kernel already queued.
        let wait = if finished {
            Duration::ZERO
        } else {
            Duration::from_millis(100)
        };
        let r = ring.poll(wait, |p| {
            if error.is_some() || st.packets >= limit {
                return;
            }
            let (data, orig_len) = match p.vlan {
                Some((tpid, tci)) if p.data.len() >= 12 => {
                    scratch.clear();
                    scratch.extend_from_slice(&p.data[..12]);
                    scratch.extend_from_slice(&tpid.to_be_bytes());
                    scratch.extend_from_slice(&tci.to_be_bytes());
                    scratch.extend_from_slice(&p.data[12..]);
                    scratch.truncate(snaplen as usize);
                    (&scratch[..], p.orig_len + 4)
                }
                _ => (p.data, p.orig_len),
            };
            st.packets += 1;
            st.bytes += u64::from(orig_len);
            if !st.saw_rdma && detect.is_rdma(data) {
                st.saw_rdma = true;
            }
            if let Err(e) = sink.write(st.packets, p.ts_ns, orig_len, data) {
                error = Some(e);
            }
        });
        if let Err(e) = r {
            error.get_or_insert(e.into());
        }
        if error.is_some() || finished {
            break;
        }
        if last_status.elapsed() >= Duration::from_secs(1) {
            last_status = Instant::now();
            let s = ring.stats();
            st.kernel_seen += s.packets;
            st.kernel_drops += s.drops;
            if show_status {
                status_line(&st, start.elapsed());
            }
        }
    }
    let s = ring.stats();
    st.kernel_seen += s.packets;
    st.kernel_drops += s.drops;
    drop(ring);
    if show_status {
        eprintln!();
    }
    let if_drops = match (if_drops_start, live::interface_drops(&root, &a.iface)) {
        (Some(a0), Some(a1)) => Some(a1.saturating_sub(a0)),
        _ => None,
    };
    let finished = sink.finish();
    let elapsed = start.elapsed();
    if let Some(sig) = live::signals::received() {
        eprintln!("rdmascope: {sig} received; stopped after the last complete packet");
    }
    eprintln!(
        "rdmascope: {} packets captured ({} bytes) in {:.1} s; {} dropped by the kernel (ring full); {} dropped by the interface",
        st.packets,
        st.bytes,
        elapsed.as_secs_f64(),
        st.kernel_drops,
        if_drops.map_or_else(|| "unknown".to_string(), |d| d.to_string()),
    );
    if !st.saw_rdma {
        if rdma_devs.is_empty() {
            eprintln!("rdmascope: no RDMA packet was captured on {}", a.iface);
        } else {
            eprintln!(
                "rdmascope: no RDMA packet was captured: {}",
                bypass_warning(&a.iface, &rdma_devs)
            );
        }
    }
    let files = match finished {
        Ok(files) => files,
        Err(e) => return Err(error.unwrap_or(e)),
    };
    if let Some(e) = error {
        return Err(e);
    }
    analyze_after(a, &files)
}

/// `--analyze`: the `analyze` report of what was written.
pub(crate) fn analyze_after(a: &CaptureArgs, files: &[PathBuf]) -> Result<()> {
    if a.analyze && !files.is_empty() {
        let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
        crate::analyze::run(&crate::analyze::AnalyzeArgs {
            files: names,
            json: false,
            link_speed: None,
            html: None,
            top: 20,
            roce_ports: Vec::new(),
            no_crc: false,
            max_flows: None,
            interface: None,
        })?;
    }
    Ok(())
}

#[derive(Default)]
pub(crate) struct State {
    pub packets: u64,
    pub bytes: u64,
    pub kernel_seen: u64,
    pub kernel_drops: u64,
    pub saw_rdma: bool,
}

pub(crate) fn status_line(st: &State, elapsed: Duration) {
    let secs = elapsed.as_secs_f64().max(1e-9);
    eprint!(
        "\r{} packets, {} bytes, {:.0} pps, {:.1} Mb/s, {} kernel drops   ",
        st.packets,
        st.bytes,
        st.packets as f64 / secs,
        st.bytes as f64 * 8.0 / secs / 1e6,
        st.kernel_drops
    );
    let _ = std::io::stderr().flush();
}

/// Recognises RDMA frames (any BTH, or a PFC/PAUSE frame) for the end-of-capture hint.
struct Detect {
    opts: DecodeOptions,
}

impl Detect {
    fn new() -> Self {
        Self {
            opts: DecodeOptions {
                verify_crc: false,
                ..Default::default()
            },
        }
    }

    fn is_rdma(&self, data: &[u8]) -> bool {
        let f = Frame::decode(
            u32::from(LINKTYPE_ETHERNET),
            data,
            data.len() as u32,
            &self.opts,
        );
        f.bth.is_some()
    }
}

pub(crate) enum Sink {
    File(PcapngOutput),
    Lines {
        printer: print::Printer,
        out: std::io::BufWriter<std::io::Stdout>,
        opts: DecodeOptions,
        linktype: u16,
    },
}

impl Sink {
    /// The pcapng output `-w` asks for, or one printed line per packet.
    pub(crate) fn create(a: &CaptureArgs, iface: OutputInterface) -> Result<Self> {
        Ok(match a.write.as_deref() {
            Some(w) => {
                let dest = if w == "-" {
                    Destination::Stdout
                } else {
                    Destination::File {
                        path: PathBuf::from(w),
                        ring: a.file_size.map(|file_size| Ring {
                            file_size,
                            files: a.files,
                        }),
                    }
                };
                Sink::File(PcapngOutput::create(dest, &section_comment(), vec![iface])?)
            }
            None => Sink::Lines {
                printer: print::Printer::new(print::Style::Line),
                out: std::io::BufWriter::new(std::io::stdout()),
                opts: DecodeOptions {
                    verify_crc: false,
                    ..Default::default()
                },
                linktype: iface.linktype,
            },
        })
    }

    pub(crate) fn write(
        &mut self,
        number: u64,
        ts_ns: u64,
        orig_len: u32,
        data: &[u8],
    ) -> Result<()> {
        match self {
            Sink::File(o) => Ok(o.write(0, ts_ns, orig_len, data)?),
            Sink::Lines {
                printer,
                out,
                opts,
                linktype,
            } => {
                let frame = Frame::decode(u32::from(*linktype), data, orig_len, opts);
                let meta = RecordMeta {
                    number,
                    ts_ns,
                    interface: 0,
                };
                printer.print(out, &meta, &frame)?;
                Ok(())
            }
        }
    }

    pub(crate) fn finish(self) -> Result<Vec<PathBuf>> {
        match self {
            Sink::File(o) => Ok(o.finish()?.files),
            Sink::Lines { mut out, .. } => {
                out.flush()?;
                Ok(Vec::new())
            }
        }
    }
}

/// When to send the next frame.
enum Pace {
    Recorded,
    Pps(f64),
    Mbps(f64),
    Top,
}

/// Sleeps until `t` (`None`: later than the clock can say), spinning for the last stretch
/// (sleep alone overshoots by ~60 µs). Returns false as soon as `stop` is set: a long gap in
/// the capture must not hold up SIGINT, and `sleep` resumes after a signal by itself.
fn wait_until(t: Option<Instant>, stop: &AtomicBool) -> bool {
    /// The longest sleep between two looks at `stop`.
    const NAP: Duration = Duration::from_millis(50);
    loop {
        if stop.load(Ordering::Acquire) {
            return false;
        }
        let now = Instant::now();
        let left = match t {
            Some(t) if now >= t => return true,
            Some(t) => t - now,
            None => Duration::MAX,
        };
        if left > Duration::from_micros(300) {
            std::thread::sleep((left - Duration::from_micros(200)).min(NAP));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// `start` plus `secs` seconds, `None` beyond what `Instant` holds (a rate near zero).
fn after(start: Instant, secs: f64) -> Option<Instant> {
    start.checked_add(Duration::try_from_secs_f64(secs).ok()?)
}

pub fn run_replay(a: &ReplayArgs) -> Result<()> {
    let pace = match (a.pps, a.mbps, a.topspeed) {
        (Some(p), _, _) if p > 0.0 => Pace::Pps(p),
        (_, Some(m), _) if m > 0.0 => Pace::Mbps(m),
        (Some(_), _, _) | (_, Some(_), _) => bail!("--pps and --mbps need a positive rate"),
        (_, _, true) => Pace::Top,
        _ => Pace::Recorded,
    };
    let tx = TxSocket::open(&a.iface)?;
    let stop = live::signals::stop_flag();
    let start = Instant::now();
    let (mut sent, mut bytes, mut errors, mut skipped) = (0u64, 0u64, 0u64, 0u64);
    let mut first_error: Option<String> = None;
    let mut offset = Duration::ZERO;
    'outer: for _ in 0..a.loops.max(1) {
        let mut reader = CaptureReader::open(&a.file)?;
        let mut first_ts: Option<u64> = None;
        let mut last_rel = Duration::ZERO;
        let mut number = 0u64;
        loop {
            if stop.load(Ordering::Acquire) {
                break 'outer;
            }
            let rec = match reader.next() {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(e) => return Err(e).context(format!("replay stopped after {sent} frames")),
            };
            number += 1;
            if rec.linktype != u32::from(LINKTYPE_ETHERNET) {
                skipped += 1;
                continue;
            }
            let due = match pace {
                Pace::Recorded => {
                    let f = *first_ts.get_or_insert(rec.ts_ns);
                    last_rel = Duration::from_nanos(rec.ts_ns.saturating_sub(f));
                    Some(start.checked_add(offset + last_rel))
                }
                Pace::Pps(p) => Some(after(start, sent as f64 / p)),
                Pace::Mbps(m) => Some(after(start, bytes as f64 * 8.0 / (m * 1e6))),
                Pace::Top => None,
            };
            if let Some(due) = due {
                if !wait_until(due, stop) {
                    break 'outer;
                }
            }
            match tx.send(rec.data) {
                Ok(()) => {
                    sent += 1;
                    bytes += rec.data.len() as u64;
                }
                Err(e) => {
                    errors += 1;
                    first_error.get_or_insert_with(|| {
                        format!("frame {number} ({} bytes): {e}", rec.data.len())
                    });
                }
            }
        }
        offset += last_rel;
    }
    if let Some(sig) = live::signals::received() {
        eprintln!("rdmascope: {sig} received: replay stopped");
    }
    let secs = start.elapsed().as_secs_f64().max(1e-9);
    eprintln!(
        "rdmascope: sent {sent} frames ({bytes} bytes) on {} in {secs:.2} s ({:.0} pps, {:.1} Mb/s); {errors} send errors; {skipped} non-Ethernet records skipped",
        tx.iface(),
        sent as f64 / secs,
        bytes as f64 * 8.0 / secs / 1e6,
    );
    if let Some(e) = first_error {
        eprintln!("rdmascope: first send error: {e}");
    }
    if sent == 0 && skipped > 0 {
        bail!(
            "{}: no Ethernet frame to send ({skipped} records of other link types)",
            a.file
        );
    }
    if errors > 0 {
        bail!("{errors} frames could not be sent");
    }
    Ok(())
}
