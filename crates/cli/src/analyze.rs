//! `rdmascope analyze`: one streaming pass over capture files, then a report.

use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

use anyhow::{Context, Result};
use comfy_table::{presets, Cell, CellAlignment, Table};
use rdmascope_analyze::report::{Finding, Report, Severity};
use rdmascope_analyze::{
    Analyzer, Batch, Config, Event, FileCut, LagCopies, Lags, Node, PacketMeta,
};
use rdmascope_capture::{CaptureError, CaptureReader, Chunk};

use crate::gen::parse_speed;

#[derive(clap::Args)]
pub struct AnalyzeArgs {
    /// Capture files (pcap, pcapng, gzip-compressed or not), read as one capture: give the
    /// parts of one capture in time order (`-` is standard input).
    #[arg(required = true)]
    pub files: Vec<String>,
    /// Print the report as one JSON object (schema rdmascope.analyze.v1, see docs/json.md).
    #[arg(long)]
    pub json: bool,
    /// Link speed for PFC pause time, for every interface (default: the if_speed of the
    /// interface each PAUSE was captured on, else 100G).
    #[arg(long, value_name = "SPEED")]
    pub link_speed: Option<String>,
    /// Also write a self-contained HTML report with charts to this file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<String>,
    /// Rows in the connection and flow tables.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Also decode UDP destination port N as RoCEv2; repeatable.
    #[arg(long = "roce-port", value_name = "N")]
    pub roce_ports: Vec<u16>,
    /// Skip ICRC verification (faster; ICRC counts are then all zero).
    #[arg(long)]
    pub no_crc: bool,
    /// Analyse at most N flows one by one (default 262144, about 3 KB of memory each);
    /// packets of later flows are only counted in the totals.
    #[arg(long, value_name = "N")]
    pub max_flows: Option<usize>,
    /// Analyse only the packets captured on interface ID (a pcapng interface's number within
    /// its section; 0 is a pcap file's only one): one capture point of a file that holds
    /// several (see the finding capture.multiple_points). Frame numbers stay the file's.
    #[arg(long, value_name = "ID")]
    pub interface: Option<u32>,
}

/// Bytes read for a chunk: small enough that a chunk's bytes stay in the decoding core's cache
/// (512 KB of L2 a core here), large enough that the per-chunk hand-offs are rare (64, 128 and
/// 512 KB were no faster on the `mixed` benchmark, nor 64 or 128 KB with a pool of 4 batches).
/// The byte budget, not the record cap, should end a chunk: the unread rest of the buffer is
/// copied to the next one.
const CHUNK_BYTES: usize = 256 << 10;
/// At most this many records per chunk (above what `CHUNK_BYTES` holds of the smallest frames).
const CHUNK_RECORDS: usize = 8192;

/// The files being read, shared by the two threads: one takes a chunk at a time.
struct Source<'a> {
    files: &'a [String],
    next_file: usize,
    reader: Option<CaptureReader>,
    /// The index of the file `reader` reads.
    file: u32,
    /// Chunks handed out so far (the next chunk's turn) and packets in them.
    chunks: u64,
    packets: u64,
    /// Set by a failure, so the other thread stops taking chunks.
    stop: bool,
    /// Files whose reading stopped at a fault; the next file is read all the same.
    cuts: Vec<FileCut>,
}

impl Source<'_> {
    /// Fills `chunk` with the next records: its turn, the number of its first packet, the
    /// index of its file and the file's timestamp unit in nanoseconds.
    fn take(&mut self, chunk: &mut Chunk) -> Result<Option<(u64, u64, u32, u64)>> {
        while !self.stop {
            let r = match &mut self.reader {
                Some(r) => r,
                None => {
                    let Some(path) = self.files.get(self.next_file) else {
                        return Ok(None);
                    };
                    self.file = u32::try_from(self.next_file).unwrap_or(u32::MAX);
                    self.next_file += 1;
                    self.reader.insert(CaptureReader::open(path)?)
                }
            };
            match r.next_chunk(chunk, CHUNK_RECORDS, CHUNK_BYTES) {
                Ok(true) => {
                    let turn = (self.chunks, self.packets + 1, self.file, r.ts_unit_ns());
                    self.chunks += 1;
                    self.packets += chunk.len() as u64;
                    return Ok(Some(turn));
                }
                Ok(false) => self.reader = None,
                // A file cut short or damaged past some record: what came before it counts, as
                // tshark's statistics count it, and a finding says where it stopped.
                Err(
                    e @ (CaptureError::Truncated { .. }
                    | CaptureError::Corrupt { .. }
                    | CaptureError::Io { .. }),
                ) => {
                    let what = e.to_string();
                    let what = what
                        .strip_prefix(&format!("{}: ", r.path()))
                        .unwrap_or(&what);
                    self.cuts.push(FileCut {
                        file: self.file as usize,
                        packets: r.records(),
                        what: what.to_string(),
                    });
                    self.reader = None;
                }
                Err(e) => {
                    return Err(e)
                        .context(format!("analysis stopped after {} packets", self.packets))
                }
            }
        }
        Ok(None)
    }
}

/// Decoded batches between the decoder and the analyser.
struct Batches {
    /// Decoded, not yet analysed, by turn (the analyser may decode a turn ahead of the next).
    ready: BTreeMap<u64, Batch>,
    /// Analysed batches to decode into, the longest unused first.
    spare: VecDeque<Batch>,
    /// The decoder runs, held to its CPU (or could not be).
    decoder_started: bool,
    /// The decoder has left (done, failed or panicked).
    decoder_done: bool,
    /// A failure or a panic on either side: the other stops.
    abort: bool,
    /// Threads asleep on the condition variable (only they need a wake-up call, a system call).
    sleeping: u32,
}

impl Batches {
    /// Waits on `changed` for the other thread.
    fn wait<'a>(
        mut b: std::sync::MutexGuard<'a, Self>,
        changed: &Condvar,
    ) -> std::sync::MutexGuard<'a, Self> {
        b.sleeping += 1;
        let mut b = changed.wait(b).unwrap_or_else(|e| e.into_inner());
        b.sleeping -= 1;
        b
    }
}

/// Batches in rotation. The decoder takes the one analysed longest ago, whose events have left
/// the analyser's cache: writing into lines the other core still holds cost up to 290 µs a
/// chunk when batches were reused at once.
const POOL: usize = 12;

/// Bytes of events the decoder writes into new batches, before it reuses analysed ones, when
/// the two threads' CPUs share no cache (a cache line's round trip between them above
/// [`FAR_NS`]). In a rotation of [`POOL`] batches, a batch the analyser read is still in its
/// CPUs' L3 when the decoder writes into it again, and each line written is then taken from
/// that far cache: the decoder took twice as long. With the rotation past the L3 of one CCD
/// (32 MB on the EPYC this was measured on), the lines come from memory instead, which adds
/// as much to the peak RSS. Where the CPUs share an L3, taking lines from it is cheaper than
/// from memory, and the small rotation is faster (DESIGN §8, session 58).
const FAR_BYTES: usize = 32 << 20;

/// A cache line's round trip above which the two CPUs share no cache: 60–200 ns between two
/// vCPUs of this VM sharing an L3, 320–440 ns when not.
const FAR_NS: u64 = 250;

/// Round trips measured, and the spins after which a thread gives up waiting for the other
/// (descheduled), the round trip then unknown.
const ROUND_TRIPS: u64 = 64;
const PATIENCE: u32 = 1 << 20;

/// The round trip of a cache line between the decoder (`lead`) and the analyser, in ns (the
/// median of [`ROUND_TRIPS`]), as the leader measures it (the other returns `None`, as both
/// do when one gives up). The follower first says it is there, so the leader times only the
/// round trips.
fn round_trip(ball: &AtomicU64, lead: bool) -> Option<u64> {
    const GAVE_UP: u64 = u64::MAX;
    let wait_for = |v: u64| {
        for _ in 0..PATIENCE {
            match ball.load(Ordering::Acquire) {
                x if x == v => return true,
                GAVE_UP => return false,
                _ => std::hint::spin_loop(),
            }
        }
        ball.store(GAVE_UP, Ordering::Release);
        false
    };
    if !lead {
        ball.store(1, Ordering::Release);
    } else if !wait_for(1) {
        return None;
    }
    let mut trips = [0u64; ROUND_TRIPS as usize];
    let mut last = Instant::now();
    for i in 0..ROUND_TRIPS {
        let (ping, pong) = (2 * i + 2, 2 * i + 3);
        if lead {
            ball.store(ping, Ordering::Release);
            if !wait_for(pong) {
                return None;
            }
            let now = Instant::now();
            let ns = now.duration_since(last).as_nanos();
            trips[i as usize] = u64::try_from(ns).unwrap_or(u64::MAX);
            last = now;
        } else {
            if !wait_for(ping) {
                return None;
            }
            ball.store(pong, Ordering::Release);
        }
    }
    // The median: a thread held back by the host or by another process for a while (a
    // whole time slice, milliseconds) lengthens a few round trips, not half of them.
    trips.sort_unstable();
    lead.then_some(trips[trips.len() / 2])
}

/// How long the analyser spins for the next batch before it sleeps: one usually comes within
/// microseconds, and a sleep and a wake-up cost more than that.
const SPIN: u32 = 20_000;

/// Runs the analysis over `files` on two threads: a decoder reads chunks under a lock and
/// decodes them into batches; the analyser feeds the batches to the one `Analyzer` in file
/// order, so the flow state never leaves its core, and decodes a chunk itself whenever no
/// decoded batch is waiting (so neither side idles while the other is behind).
pub fn analyze_files(
    files: &[String],
    link: Option<u64>,
    roce_ports: &[u16],
    no_crc: bool,
    max_flows: Option<usize>,
    interface: Option<u32>,
) -> Result<Report> {
    let args = (link, roce_ports, no_crc, max_flows, interface);
    pass(files, args, None)
}

/// [`analyze_files`], `far` as [`two_threads`] takes it. Files that can be read twice (not
/// standard input, a pipe or a device) are analysed while the sample for copies at a lag is
/// taken ([`LagCopies::Speculate`]); if it finds some, they are read again, the lags known.
fn pass(files: &[String], args: PassArgs<'_>, far: Option<usize>) -> Result<Report> {
    let twice = |f: &String| f != "-" && std::fs::metadata(f).is_ok_and(|m| m.is_file());
    let lag = if files.iter().all(twice) {
        LagCopies::Speculate
    } else {
        LagCopies::Hold
    };
    match two_threads(files, args, far, lag)? {
        Ok(report) => Ok(report),
        Err(lags) => two_threads(files, args, far, LagCopies::Known(lags))?
            .map_err(|_| anyhow::anyhow!("the second pass over the capture asked for a third")),
    }
}

/// The options of [`analyze_files`] after its files.
type PassArgs<'a> = (Option<u64>, &'a [u16], bool, Option<usize>, Option<u32>);

/// One pass of [`analyze_files`], copies at a lag looked for as `lag` says: the report, or
/// the lags of such copies when speculating found them (the pass then stopped early). `far`:
/// the events the decoder decodes into new batches before it reuses analysed ones, as when
/// the two CPUs share no cache (`FAR_BYTES`), or `None` to measure how far apart they are.
fn two_threads(
    files: &[String],
    (link, roce_ports, no_crc, max_flows, interface): PassArgs<'_>,
    far: Option<usize>,
    lag: LagCopies,
) -> Result<Result<Report, Lags>> {
    let opts = crate::show::decode_options(roce_ports, no_crc)?;
    let source = Mutex::new(Source {
        files,
        next_file: 0,
        reader: None,
        file: 0,
        chunks: 0,
        packets: 0,
        stop: false,
        cuts: Vec::new(),
    });
    let batches = Mutex::new(Batches {
        ready: BTreeMap::new(),
        spare: (0..POOL)
            .map(|_| Batch::with_capacity(CHUNK_RECORDS))
            .collect(),
        decoder_started: false,
        decoder_done: false,
        abort: false,
        sleeping: 0,
    });
    let changed = Condvar::new();
    // Batches published so far (bumped under the `batches` lock), for spinning without it.
    let published = AtomicU64::new(0);
    let take = |chunk: &mut Chunk| -> Result<Option<(u64, u64, u32, u64)>> {
        let mut s = lock(&source);
        let r = s.take(chunk);
        s.stop |= r.is_err();
        r
    };
    let decode = |chunk: &Chunk, (first, file, unit): (u64, u32, u64), batch: &mut Batch| {
        batch.clear();
        batch.set_file(file, unit);
        for (i, rec) in chunk.records().enumerate() {
            if interface.is_some_and(|id| rec.if_id != id) {
                continue;
            }
            let meta = PacketMeta {
                number: first + i as u64,
                ts_ns: rec.ts_ns,
                orig_len: rec.orig_len,
                if_id: rec.if_id,
                if_speed: rec.if_speed,
            };
            batch.decode(meta, rec.linktype, rec.data, rec.orig_len, &opts);
        }
    };
    /// Marks its side gone when dropped, also by a panic: `abort` unless it left cleanly.
    struct Leave<'a> {
        batches: &'a Mutex<Batches>,
        changed: &'a Condvar,
        published: &'a AtomicU64,
        decoder: bool,
        clean: bool,
    }
    impl Drop for Leave<'_> {
        fn drop(&mut self) {
            let mut b = lock(self.batches);
            b.abort |= !self.clean;
            b.decoder_done |= self.decoder;
            self.published.fetch_add(1, Ordering::Release);
            drop(b);
            self.changed.notify_all();
        }
    }
    let leave = |decoder| Leave {
        batches: &batches,
        changed: &changed,
        published: &published,
        decoder,
        clean: false,
    };

    // Each thread on a CPU of its own (`pin`), the analyser on the one the pass began on.
    let first = crate::pin::here();
    let ball = AtomicU64::new(0);
    let decoder = || -> Result<()> {
        let mut leave = leave(true);
        let _pinned = first.and_then(crate::pin::pin_apart);
        lock(&batches).decoder_started = true;
        changed.notify_all();
        // Far from the analyser's CPU, `FAR_BYTES` of events into new batches first.
        let apart = first.and_then(|_| round_trip(&ball, true));
        let mut fresh = far.unwrap_or(match apart {
            Some(ns) if ns > FAR_NS => FAR_BYTES / size_of::<Event>(),
            _ => 0,
        });
        let mut chunk = Chunk::default();
        while let Some((turn, first, file, unit)) = take(&mut chunk)? {
            let mut batch = if fresh > 0 {
                Batch::with_capacity(CHUNK_RECORDS)
            } else {
                let mut b = lock(&batches);
                loop {
                    if b.abort {
                        return Ok(());
                    }
                    if let Some(batch) = b.spare.pop_front() {
                        break batch;
                    }
                    b = Batches::wait(b, &changed);
                }
            };
            decode(&chunk, (first, file, unit), &mut batch);
            fresh = fresh.saturating_sub(batch.events().len());
            // Published under the lock, where a waiting analyser checks.
            let mut b = lock(&batches);
            b.ready.insert(turn, batch);
            published.fetch_add(1, Ordering::Release);
            let wake = b.sleeping > 0;
            drop(b);
            if wake {
                changed.notify_all();
            }
        }
        // Every chunk is taken: the batches in rotation are let go here, beside the analyser's
        // last ones (dropping a batch reads each event's boxed fields: 0.6 ms for `POOL`
        // batches after the pass, 8 ms for a far rotation's).
        let idle = std::mem::take(&mut lock(&batches).spare);
        drop(idle);
        leave.clean = true;
        Ok(())
    };

    // An analysed batch back to the pool, waking the decoder if it waits for one.
    let spare = |batch: Batch| {
        let mut b = lock(&batches);
        b.spare.push_back(batch);
        let wake = b.sleeping > 0;
        drop(b);
        if wake {
            changed.notify_all();
        }
    };
    let analyser = || -> Result<Analyzer> {
        let _pinned = first.and_then(|h| crate::pin::pin(h.cpu));
        // Held to its CPU, it waits for the decoder to hold itself to its own: the kernel
        // queues a new thread on its parent's CPU, where, behind the busy analyser, it waited
        // 2–4 ms for another CPU to take it. Waiting, the analyser lets it run at once, and
        // wakes on its own CPU. Then the two measure how far apart they are.
        if first.is_some() {
            let mut b = lock(&batches);
            while !(b.decoder_started || b.decoder_done || b.abort) {
                b = Batches::wait(b, &changed);
            }
            let started = b.decoder_started;
            drop(b);
            if started {
                round_trip(&ball, false);
            }
        }
        let mut leave = leave(false);
        let mut an = Analyzer::new(Config {
            link_bps: link,
            files: files.to_vec(),
            max_flows,
            lag_copies: lag,
        });
        let mut next = 0u64;
        let mut chunk = Chunk::default();
        let mut read_all = false;
        loop {
            let seen = published.load(Ordering::Acquire);
            let (batch, waiting, decoder_done) = {
                let mut b = lock(&batches);
                if b.abort {
                    anyhow::bail!("the analysis stopped early");
                }
                (b.ready.remove(&next), !b.ready.is_empty(), b.decoder_done)
            };
            if let Some(mut batch) = batch {
                an.feed(&mut batch);
                next += 1;
                spare(batch);
                if an.run_again().is_some() {
                    break;
                }
                continue;
            }
            // Nothing decoded is waiting: decode the next chunk here rather than idle.
            if !waiting && !read_all {
                match take(&mut chunk)? {
                    Some((turn, first, file, unit)) => {
                        // The batch analysed last, whose lines this CPU's cache holds.
                        let pooled = lock(&batches).spare.pop_back();
                        let mut batch =
                            pooled.unwrap_or_else(|| Batch::with_capacity(CHUNK_RECORDS));
                        decode(&chunk, (first, file, unit), &mut batch);
                        if turn == next {
                            an.feed(&mut batch);
                            next += 1;
                            spare(batch);
                            if an.run_again().is_some() {
                                break;
                            }
                        } else {
                            lock(&batches).ready.insert(turn, batch);
                        }
                        continue;
                    }
                    None => read_all = true,
                }
            }
            if read_all && decoder_done {
                // Everything taken was decoded: the next batch is there, or the pass is over.
                let b = lock(&batches);
                if b.ready.is_empty() {
                    break;
                }
                anyhow::ensure!(b.ready.contains_key(&next), "chunk {next} went missing");
                continue;
            }
            // Wait for the decoder to publish.
            for _ in 0..SPIN {
                if published.load(Ordering::Acquire) != seen {
                    break;
                }
                std::hint::spin_loop();
            }
            let b = lock(&batches);
            if published.load(Ordering::Acquire) == seen {
                drop(Batches::wait(b, &changed));
            }
        }
        // Copies at a lag found while speculating: this pass is over, the decoder stops too.
        leave.clean = an.run_again().is_none();
        Ok(an)
    };

    let (analysed, decoded) = std::thread::scope(|s| {
        let d = std::thread::Builder::new()
            .name("decode".into())
            .spawn_scoped(s, decoder);
        if d.is_err() {
            lock(&batches).decoder_done = true;
        }
        let analysed = analyser();
        let decoded = match d {
            Ok(h) => h
                .join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("the decoding thread panicked"))),
            // No second thread: the analyser decoded every chunk itself.
            Err(_) => Ok(()),
        };
        (analysed, decoded)
    });
    // The decoder's error says where the capture went wrong; the analyser's only that it stopped.
    let mut an = match analysed {
        // The decoder was stopped: this pass is over.
        Ok(an) if an.run_again().is_some() => an,
        analysed => {
            decoded?;
            analysed?
        }
    };
    if lag == LagCopies::Speculate {
        an.end_of_input();
    }
    if let Some(lags) = an.run_again() {
        return Ok(Err(lags));
    }
    for cut in source.into_inner().unwrap_or_else(|e| e.into_inner()).cuts {
        eprintln!(
            "rdmascope: warning: {}: {}; the {} packets before it are analysed",
            files.get(cut.file).map_or("?", String::as_str),
            cut.what,
            cut.packets
        );
        an.file_cut(cut);
    }
    Ok(Ok(an.finish()))
}

/// Locks `m`, also after a panic elsewhere (the state stays consistent: every update is whole).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn run(a: &AnalyzeArgs) -> Result<()> {
    let link = a.link_speed.as_deref().map(parse_speed).transpose()?;
    let report = analyze_files(
        &a.files,
        link,
        &a.roce_ports,
        a.no_crc,
        a.max_flows,
        a.interface,
    )?;
    if let Some(id) = a.interface.filter(|_| report.capture.packets == 0) {
        anyhow::bail!(
            "no packet of {} was captured on interface {id} (a pcap file has only interface 0; \
             `rdmascope show -V` gives each frame's frame.interface_id)",
            a.files.join(", ")
        );
    }
    if let Some(path) = &a.html {
        std::fs::write(path, crate::html::render(&report))
            .with_context(|| format!("cannot write {path}"))?;
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    if a.json {
        crate::jsonfmt::report_to_writer(&mut out, &report)?;
        writeln!(out)?;
    } else {
        write!(out, "{}", render_text(&report, a.top))?;
    }
    out.flush()?;
    // The process ends next and its memory goes back whole: freeing the flows' states one by
    // one took 0.25–0.3 ms for the 2M-packet benchmark capture.
    std::mem::forget(report);
    Ok(())
}

fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.2} GiB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.2} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

fn rate(bps: u64) -> String {
    if bps >= 1_000_000_000 {
        format!("{:.2} Gb/s", bps as f64 / 1e9)
    } else {
        format!("{:.1} Mb/s", bps as f64 / 1e6)
    }
}

fn dur(ns: u64) -> String {
    if ns >= 1_000_000_000 {
        format!("{:.3} s", ns as f64 / 1e9)
    } else if ns >= 1_000_000 {
        format!("{:.3} ms", ns as f64 / 1e6)
    } else {
        format!("{:.1} µs", ns as f64 / 1e3)
    }
}

fn finding(s: &mut String, f: &Finding) {
    let sev = match f.severity {
        Severity::Critical => "CRITICAL",
        Severity::Warning => "WARNING ",
        Severity::Info => "info    ",
    };
    s.push_str(&format!("  {sev} {:<28} {}\n", f.code, f.summary));
    for e in &f.evidence {
        s.push_str(&format!("           - {e}\n"));
    }
    if !f.flows.is_empty() {
        s.push_str(&format!("           flows: {}\n", f.flows.join("; ")));
    }
    if !f.frames.is_empty() {
        let fr: Vec<String> = f.frames.iter().map(u64::to_string).collect();
        s.push_str(&format!("           frames: {}\n", fr.join(", ")));
    }
    s.push_str(&format!("           what to do: {}\n\n", f.advice));
}

/// The text report: summary, findings (most severe first), connections and flows.
pub fn render_text(r: &Report, top: usize) -> String {
    let c = &r.capture;
    let t = &r.totals.counters;
    let span = c.last_ts_ns.saturating_sub(c.first_ts_ns);
    let mut s = String::new();
    s.push_str(&format!("rdmascope analyze: {}\n", c.files.join(", ")));
    s.push_str(&format!(
        "  {} packet{} ({} RDMA), {}, {} of traffic; link {}{}\n",
        c.packets,
        if c.packets == 1 { "" } else { "s" },
        c.rdma_packets,
        bytes(c.bytes),
        dur(span),
        rate(c.link_bps),
        if c.link_bps_from == "default" {
            " (assumed: the capture gives no if_speed; --link-speed sets it)"
        } else {
            ""
        }
    ));
    let mut ops: Vec<(&str, u64)> = t.opcodes.iter().collect();
    ops.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let ops: Vec<String> = ops
        .iter()
        .take(6)
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let ops = if ops.is_empty() {
        "none".to_string()
    } else {
        ops.join(", ")
    };
    s.push_str(&format!("  opcodes: {ops}\n"));
    let reordered = if t.reordered_packets > 0 {
        format!(" ({} reordered)", t.reordered_packets)
    } else {
        String::new()
    };
    let rereads = match r.totals.retransmission_triggers.read_response_gap {
        0 => String::new(),
        n => format!(", READs re-read for missing responses {n}"),
    };
    s.push_str(&format!(
        "  retransmitted {}, gap-filled {}{reordered}, missing {}, duplicate ACKs {}, NAKs {}, RNR NAKs {}, timeouts {}{rereads}\n",
        t.retransmitted_packets,
        t.gap_filled_packets,
        t.missing_packets,
        t.duplicate_acks,
        t.naks.total(),
        t.rnr_naks,
        t.timeouts
    ));
    if r.capture.cut_before_aeth > 0 {
        s.push_str(&format!(
            "  ({} ACKs or NAKs cut inside their AETH: NAKs, RNR NAKs, duplicate ACKs and timeouts on their connections are not known)\n",
            r.capture.cut_before_aeth
        ));
    }
    s.push_str(&format!(
        "  ECN: Not-ECT {}, ECT(0) {}, ECT(1) {}, CE {}; CNPs {}; PFC frames {} (pause episodes {}, {} paused)\n",
        t.ecn.not_ect,
        t.ecn.ect0,
        t.ecn.ect1,
        t.ecn.ce,
        t.cnp,
        r.pfc.frames,
        r.pfc.pause_episodes,
        dur(r.pfc.pause_ns_total)
    ));
    s.push_str(&format!(
        "  ICRC: ok {}, bad {}, truncated {}, unverifiable {}",
        t.icrc.ok, t.icrc.bad, t.icrc.truncated, t.icrc.unverifiable
    ));
    // Native IB only: Ethernet has no VCRC.
    let v = &r.totals.vcrc;
    if v.ok + v.bad + v.truncated > 0 {
        s.push_str(&format!(
            "; VCRC: ok {}, bad {}, truncated {}",
            v.ok, v.bad, v.truncated
        ));
    }
    s.push('\n');
    // What LLDP senders advertise of DCB (PFC, RoCE's application priority), the first few.
    for d in r.dcbx.senders.iter().take(8) {
        let prios = |v: &[u8]| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.iter().map(u8::to_string).collect::<Vec<_>>().join(",")
            }
        };
        let port = if d.port.is_empty() || d.port == d.name {
            String::new()
        } else {
            format!(" port {}", d.port)
        };
        s.push_str(&format!("  DCBX {}{port}:", d.name));
        match &d.pfc {
            Some(p) => s.push_str(&format!(
                " PFC on {}{}",
                prios(&p.enabled),
                if p.willing { " (willing)" } else { "" }
            )),
            None => s.push_str(" no PFC TLV"),
        }
        if !d.roce_priorities.is_empty() {
            s.push_str(&format!("; RoCE on {}", prios(&d.roce_priorities)));
        }
        if let Some(e) = &d.ets {
            s.push_str(&format!(
                "; ETS class of priority 0-7 {}",
                prios(&e.prio_tc)
            ));
        }
        if let Some(c) = &d.cnpv {
            s.push_str(&format!("; CNPV {}", prios(c)));
        }
        s.push('\n');
    }
    if r.dcbx.senders.len() > 8 {
        s.push_str(&format!(
            "  DCBX: {} more senders\n",
            r.dcbx.senders.len() - 8
        ));
    }
    s.push('\n');
    let serious = r
        .findings
        .iter()
        .filter(|f| f.severity != Severity::Info)
        .count();
    if r.findings.is_empty() {
        s.push_str("Findings: none. The transport looks healthy.\n\n");
    } else {
        s.push_str(&format!(
            "Findings ({} warning or critical, {} in all):\n",
            serious,
            r.findings.len()
        ));
        for f in &r.findings {
            finding(&mut s, f);
        }
    }
    if !r.connections.is_empty() {
        let mut tb = Table::new();
        tb.load_preset(presets::UTF8_BORDERS_ONLY);
        tb.set_header(vec![
            "A", "QPN", "B", "QPN", "type", "learned", "app", "MTU", "state", "pkts", "bytes",
            "retx", "NAK", "RNR", "CNP", "CE", "ACK p50", "ACK p99",
        ]);
        // Each flow's report is built when asked for: find the two of a connection by key.
        let flow = |src: &str, dst: &str, qp: u32| {
            let (src, dst) = (src.parse::<Node>().ok()?, dst.parse::<Node>().ok()?);
            r.flows.find(src, dst, qp)
        };
        let ends = |cn: &rdmascope_analyze::report::Connection| {
            (
                flow(&cn.a.node, &cn.b.node, cn.b.qpn),
                flow(&cn.b.node, &cn.a.node, cn.a.qpn),
            )
        };
        // Rank the connections by bytes first; only the rows shown are built.
        let mut ranked: Vec<(u64, usize)> = r
            .connections
            .iter()
            .enumerate()
            .map(|(i, cn)| {
                let (ab, ba) = ends(cn);
                let b =
                    |f: Option<rdmascope_analyze::report::Flow>| f.map_or(0, |f| f.counters.bytes);
                (b(ab) + b(ba), i)
            })
            .collect();
        ranked.sort_by_key(|r| std::cmp::Reverse(r.0));
        let n = ranked.len();
        for &(_, i) in ranked.iter().take(top) {
            let cn = &r.connections[i];
            let (ab, ba) = ends(cn);
            let (ab, ba) = (ab.as_ref(), ba.as_ref());
            let sum = |g: &dyn Fn(&rdmascope_analyze::report::Flow) -> u64| {
                ab.map_or(0, g) + ba.map_or(0, g)
            };
            let pk = sum(&|f| f.counters.packets);
            let lat = ab.map(|f| f.ack_latency_ns).unwrap_or_default();
            let mtu = cn
                .path_mtu
                .or(cn.observed_mtu_a_to_b)
                .or(cn.observed_mtu_b_to_a)
                .map_or("-".into(), |m| m.to_string());
            tb.add_row(vec![
                Cell::new(&cn.a.node),
                Cell::new(format!("0x{:06x}", cn.a.qpn)),
                Cell::new(&cn.b.node),
                Cell::new(format!("0x{:06x}", cn.b.qpn)),
                Cell::new(&cn.transport),
                Cell::new(&cn.learned),
                Cell::new(cn.application.as_deref().unwrap_or("-")),
                Cell::new(mtu),
                Cell::new(&cn.state),
                Cell::new(pk).set_alignment(CellAlignment::Right),
                Cell::new(bytes(sum(&|f| f.counters.bytes))).set_alignment(CellAlignment::Right),
                Cell::new(sum(&|f| f.counters.retransmitted_packets))
                    .set_alignment(CellAlignment::Right),
                Cell::new(sum(&|f| f.counters.naks.total())).set_alignment(CellAlignment::Right),
                Cell::new(sum(&|f| f.counters.rnr_naks)).set_alignment(CellAlignment::Right),
                Cell::new(sum(&|f| f.counters.cnp)).set_alignment(CellAlignment::Right),
                Cell::new(sum(&|f| f.counters.ecn.ce)).set_alignment(CellAlignment::Right),
                Cell::new(if lat.count > 0 {
                    dur(lat.p50)
                } else {
                    "-".into()
                }),
                Cell::new(if lat.count > 0 {
                    dur(lat.p99)
                } else {
                    "-".into()
                }),
            ]);
        }
        s.push_str(&format!(
            "Connections ({n}, top {} by bytes):\n{tb}\n\n",
            top.min(n)
        ));
    }
    let mut tb = Table::new();
    tb.load_preset(presets::UTF8_BORDERS_ONLY);
    tb.set_header(vec![
        "src",
        "dst",
        "dest QP",
        "type",
        "pkts",
        "bytes",
        "goodput",
        "msgs",
        "retx",
        "gap-filled",
        "missing",
        "dup ACK",
        "NAK",
        "CNP",
        "CE",
        "ICRC bad",
    ]);
    for f in r.flows.top_by_bytes(top) {
        let k = &f.counters;
        tb.add_row(vec![
            Cell::new(&f.src),
            Cell::new(&f.dst),
            Cell::new(format!("0x{:06x}", f.dest_qp)),
            Cell::new(&f.transport),
            Cell::new(k.packets).set_alignment(CellAlignment::Right),
            Cell::new(bytes(k.bytes)).set_alignment(CellAlignment::Right),
            Cell::new(rate(f.goodput_bps)).set_alignment(CellAlignment::Right),
            Cell::new(f.messages.count).set_alignment(CellAlignment::Right),
            Cell::new(k.retransmitted_packets).set_alignment(CellAlignment::Right),
            Cell::new(k.gap_filled_packets).set_alignment(CellAlignment::Right),
            Cell::new(k.missing_packets).set_alignment(CellAlignment::Right),
            Cell::new(k.duplicate_acks).set_alignment(CellAlignment::Right),
            Cell::new(k.naks.total()).set_alignment(CellAlignment::Right),
            Cell::new(k.cnp).set_alignment(CellAlignment::Right),
            Cell::new(k.ecn.ce).set_alignment(CellAlignment::Right),
            Cell::new(k.icrc.bad).set_alignment(CellAlignment::Right),
        ]);
    }
    s.push_str(&format!(
        "Flows ({}, top {} by bytes):\n{tb}\n",
        r.flows.len(),
        top.min(r.flows.len())
    ));
    s
}

/// The sample captures shipped in the repository, in name order.
#[cfg(test)]
pub(crate) fn samples() -> Vec<String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../samples");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path().to_string_lossy().into_owned())
        .filter(|p| p.ends_with(".pcap") || p.ends_with(".pcapng"))
        .collect();
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The round trip between two threads is measured by the leader, and nobody waits for a
    /// thread that never comes.
    #[test]
    fn round_trip_is_measured_and_nobody_waits_forever() {
        let ball = AtomicU64::new(0);
        let (lead, follow) = std::thread::scope(|s| {
            let f = s.spawn(|| round_trip(&ball, false));
            (round_trip(&ball, true), f.join().unwrap())
        });
        assert!(lead.is_some_and(|ns| ns > 0), "{lead:?}");
        assert_eq!(follow, None);
        assert_eq!(round_trip(&AtomicU64::new(0), true), None, "alone");
        assert_eq!(round_trip(&AtomicU64::new(0), false), None, "alone");
    }

    /// Batches rotated as between CPUs far apart (new ones first, then the oldest reused)
    /// analyse every capture as the rotation of `POOL` does.
    #[test]
    fn a_far_rotation_reads_the_same() {
        let files = samples();
        assert!(files.len() >= 10, "{files:?}");
        let args = (None, &[][..], false, None, None);
        let report = |far| pass(&files, args, far).unwrap();
        let near = report(Some(0));
        assert!(
            near.capture.rdma_packets > 40_000,
            "{}",
            near.capture.rdma_packets
        );
        let near = serde_json::to_string(&near).unwrap();
        for events in [1, 3000, 1 << 20] {
            let far = serde_json::to_string(&report(Some(events))).unwrap();
            assert!(far == near, "{events} events in new batches");
        }
    }

    /// The summary names READs re-read for missing responses only when there were some.
    #[test]
    fn summary_names_re_reads_when_there_are_some() {
        let mut r = Analyzer::new(Config::default()).finish();
        assert!(!render_text(&r, 20).contains("re-read"));
        r.totals.retransmission_triggers.read_response_gap = 2;
        let text = render_text(&r, 20);
        assert!(
            text.contains("timeouts 0, READs re-read for missing responses 2\n"),
            "{text}"
        );
    }
}
