//! `rdmascope gen`: write a scenario's capture and, optionally, its ground truth.

use std::fs::File;
use std::io::{BufWriter, Write};

use anyhow::{bail, Context, Result};
use rdmascope_capture::{PcapWriter, PcapngWriter};
use rdmascope_synth::{generate, GenOptions, Scenario, Sink};

#[derive(clap::Args)]
pub struct GenArgs {
    /// clean, lossy, rnr, incast, pfc-storm, misconfig, ib, mixed, reorder or errors.
    #[arg(long)]
    pub scenario: String,
    /// Stop after N frames (default 10000 unless --duration is given).
    #[arg(long, conflicts_with = "duration")]
    pub packets: Option<u64>,
    /// Stop after this much capture time: 10ms, 2s, 500us.
    #[arg(long)]
    pub duration: Option<String>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Link speed: 10G, 25G, 100G, 200G, 400G (paces timestamps and PFC quanta).
    #[arg(long, default_value = "100G")]
    pub link: String,
    /// Cut every frame to N bytes, as `tcpdump -s N` does.
    #[arg(long, default_value_t = 65535)]
    pub snaplen: usize,
    /// RoCEv2 over IPv6 instead of IPv4.
    #[arg(long)]
    pub ipv6: bool,
    /// Tag RoCE frames with this VLAN ID.
    #[arg(long)]
    pub vlan: Option<u16>,
    /// VLAN priority of RDMA data (with --vlan; default 3).
    #[arg(long, requires = "vlan")]
    pub pcp: Option<u8>,
    /// Flip a payload bit (a READ request's: one of its RETH's address) in this fraction of
    /// RDMA packets before the capture point (bad ICRCs on purpose); their receivers drop
    /// them, and the transport recovers.
    #[arg(long, default_value_t = 0.0)]
    pub corrupt_rate: f64,
    /// Output capture: .pcapng gets pcapng (with if_speed), anything else pcap.
    #[arg(short = 'o', long = "output")]
    pub output: String,
    /// Write the ground truth as JSON here.
    #[arg(long)]
    pub truth: Option<String>,
}

/// Parses `100G`, `25g`, `400000000000`.
pub fn parse_speed(s: &str) -> Result<u64> {
    let t = s.trim().to_ascii_lowercase();
    let (num, mul) = if let Some(n) = t.strip_suffix('g') {
        (n, 1_000_000_000u64)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 1_000_000)
    } else {
        (t.as_str(), 1)
    };
    let v: f64 = num
        .parse()
        .with_context(|| format!("bad link speed '{s}' (try 100G)"))?;
    let bps = v * mul as f64;
    anyhow::ensure!(bps >= 1e6, "link speed '{s}' is too low (1M at least)");
    anyhow::ensure!(
        bps <= 1e14,
        "link speed '{s}' is too high (100000G at most)"
    );
    Ok(bps as u64)
}

/// Parses `10ms`, `2s`, `500us`, `100ns`.
pub fn parse_duration(s: &str) -> Result<u64> {
    let t = s.trim();
    let units: [(&str, f64); 4] = [("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9)];
    for (u, m) in units {
        if let Some(n) = t.strip_suffix(u) {
            let v: f64 = n
                .parse()
                .with_context(|| format!("bad duration '{s}' (try 10ms)"))?;
            return Ok((v * m) as u64);
        }
    }
    bail!("bad duration '{s}': give a unit (ns, us, ms, s)")
}

enum Out {
    Pcap(PcapWriter<BufWriter<File>>, u32),
    Pcapng(PcapngWriter<BufWriter<File>>),
}

struct FileSink(Out);

impl Sink for FileSink {
    fn frame(&mut self, iface: u32, ts_ns: u64, orig_len: u32, data: &[u8]) -> std::io::Result<()> {
        match &mut self.0 {
            Out::Pcap(w, lt) => {
                // A pcap file has one link type; frames of the other are not part of it.
                if (*lt == 197) == (iface == 1) {
                    w.write(ts_ns, orig_len, data)?;
                }
                Ok(())
            }
            Out::Pcapng(w) => w.write(iface, ts_ns, orig_len, data),
        }
    }
}

pub fn run(a: &GenArgs) -> Result<()> {
    let Some(scenario) = Scenario::parse(&a.scenario) else {
        bail!(
            "unknown scenario '{}': choose one of {}",
            a.scenario,
            Scenario::ALL
                .iter()
                .map(|s| s.name())
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    anyhow::ensure!(
        (0.0..=1.0).contains(&a.corrupt_rate),
        "--corrupt-rate must be between 0 and 1"
    );
    anyhow::ensure!(a.snaplen >= 64, "--snaplen must be at least 64");
    anyhow::ensure!(a.pcp.is_none_or(|p| p < 8), "--pcp must be 0-7");
    // A VID is 12 bits, and 4095 is reserved (IEEE 802.1Q §9.6).
    anyhow::ensure!(a.vlan.is_none_or(|v| v < 4095), "--vlan must be 0-4094");
    let link_bps = parse_speed(&a.link)?;
    let pcapng = a.output.ends_with(".pcapng");
    let o = GenOptions {
        scenario,
        packets: a.packets,
        duration_ns: a.duration.as_deref().map(parse_duration).transpose()?,
        seed: a.seed,
        link_bps,
        snaplen: a.snaplen,
        ipv6: a.ipv6,
        vlan: a.vlan.map(|v| (v, a.pcp.unwrap_or(3))),
        corrupt_rate: a.corrupt_rate,
        mixed_ib: pcapng,
    };
    let file = File::create(&a.output).with_context(|| format!("cannot create {}", a.output))?;
    let w = BufWriter::with_capacity(1 << 20, file);
    let snap = a.snaplen as u32;
    let out = if pcapng {
        let comment = format!(
            "rdmascope gen --scenario {} --seed {} --link {}",
            scenario.name(),
            a.seed,
            a.link
        );
        let mut p = PcapngWriter::new(w, Some(&comment))?;
        p.add_interface(1, snap, Some("gen-eth"), Some(link_bps))?;
        p.add_interface(197, snap, Some("gen-ib"), Some(link_bps))?;
        Out::Pcapng(p)
    } else {
        let lt = if scenario == Scenario::Ib { 197 } else { 1 };
        Out::Pcap(PcapWriter::new(w, lt, snap)?, lt)
    };
    let mut sink = FileSink(out);
    let truth = generate(&o, &mut sink).with_context(|| format!("writing {}", a.output))?;
    match sink.0 {
        Out::Pcap(mut w, _) => w.flush()?,
        Out::Pcapng(mut w) => w.flush()?,
    }
    if let Some(t) = &a.truth {
        let f = File::create(t).with_context(|| format!("cannot create {t}"))?;
        let mut w = BufWriter::new(f);
        crate::jsonfmt::to_writer(&mut w, &truth)?;
        w.write_all(b"\n")?;
        w.flush()?;
    }
    eprintln!(
        "rdmascope gen: {} frames, {:.3} ms of traffic, scenario {} -> {}",
        truth.frames,
        truth.last_ts_ns.saturating_sub(truth.first_ts_ns) as f64 / 1e6,
        scenario.name(),
        a.output
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn units() {
        assert_eq!(parse_speed("100G").unwrap(), 100_000_000_000);
        assert_eq!(parse_speed("25g").unwrap(), 25_000_000_000);
        assert_eq!(parse_duration("10ms").unwrap(), 10_000_000);
        assert_eq!(parse_duration("1.5s").unwrap(), 1_500_000_000);
        assert!(parse_duration("10").is_err());
        assert!(parse_speed("fast").is_err());
        assert_eq!(parse_speed("100000G").unwrap(), 100_000_000_000_000);
        for absurd in ["1e30G", "inf", "NaN", "-5G", "0.5M", "100001G"] {
            assert!(parse_speed(absurd).is_err(), "{absurd}");
        }
    }
}
