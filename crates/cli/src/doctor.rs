//! `rdmascope doctor`: host RDMA configuration and counters.

use std::io::Write;

use anyhow::Result;
use comfy_table::{presets, Table};
use rdmascope_doctor::{Finding, Host, Severity};

#[derive(clap::Subcommand)]
pub enum DoctorCmd {
    /// Compare `doctor --json` reports of several hosts and name the odd ones out.
    Compare {
        #[arg(required = true, num_args = 2..)]
        reports: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// Read NCCL logs (NCCL_DEBUG=INFO): the network each rank chose, NCCL_* settings, errors.
    Nccl {
        #[arg(required = true)]
        logs: Vec<String>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(clap::Args)]
pub struct DoctorArgs {
    #[command(subcommand)]
    pub cmd: Option<DoctorCmd>,
    /// Root of the sysfs and /proc trees to read (a fixture directory in tests).
    #[arg(long, default_value = "/")]
    pub root: String,
    /// Print the host model as JSON (schema rdmascope.doctor.v1).
    #[arg(long)]
    pub json: bool,
    /// Read the counters twice, this far apart (e.g. 5s), and report their rates.
    #[arg(long, value_name = "DURATION")]
    pub interval: Option<String>,
}

/// Exit codes: 0 no critical finding, 2 critical findings.
pub fn run(a: &DoctorArgs) -> Result<std::process::ExitCode> {
    match &a.cmd {
        Some(DoctorCmd::Nccl { logs, json }) => return nccl(logs, *json),
        Some(DoctorCmd::Compare { reports, json }) => return compare(reports, *json),
        None => {}
    }
    let iv = a
        .interval
        .as_deref()
        .map(crate::gen::parse_duration)
        .transpose()?
        .map(std::time::Duration::from_nanos);
    // A mistyped root would read as a host without RDMA devices or interfaces.
    match std::fs::metadata(&a.root) {
        Err(e) => anyhow::bail!("--root {}: {e}", a.root),
        Ok(m) if !m.is_dir() => anyhow::bail!("--root {}: not a directory", a.root),
        Ok(_) => {}
    }
    let host = rdmascope_doctor::inspect(std::path::Path::new(&a.root), iv);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if a.json {
        crate::jsonfmt::to_writer(&mut out, &host)?;
        writeln!(out)?;
    } else {
        write!(out, "{}", render(&host))?;
    }
    out.flush()?;
    Ok(exit_code(&host.findings))
}

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_BORDERS_ONLY);
    t.set_header(header.to_vec());
    t
}

fn opt(s: &Option<String>) -> String {
    s.clone().unwrap_or_else(|| "-".into())
}

/// The text report.
pub fn render(h: &Host) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "rdmascope doctor: {} (kernel {}), root {}\n\n",
        opt(&h.hostname),
        opt(&h.kernel),
        h.root
    ));
    if h.devices.is_empty() {
        s.push_str("No RDMA devices.\n\n");
    } else {
        let mut t = table(&["device", "node type", "HCA", "firmware", "node GUID"]);
        for d in &h.devices {
            t.add_row(vec![
                d.name.clone(),
                opt(&d.node_type),
                opt(&d.hca_type),
                opt(&d.fw_ver),
                opt(&d.node_guid),
            ]);
        }
        s.push_str(&format!("Devices:\n{t}\n\n"));
        let mut t = table(&[
            "device",
            "port",
            "state",
            "physical state",
            "rate",
            "link layer",
            "LID",
            "SM LID",
            "P_Keys",
        ]);
        for d in &h.devices {
            for p in &d.ports {
                let ib = p.link_layer.as_deref() == Some("InfiniBand");
                let lid = |v: Option<u64>| {
                    if ib {
                        v.map_or("-".into(), |x| x.to_string())
                    } else {
                        "-".into()
                    }
                };
                let pk: Vec<String> = p.pkeys.iter().map(|k| format!("0x{k:04x}")).collect();
                t.add_row(vec![
                    d.name.clone(),
                    p.port.to_string(),
                    opt(&p.state),
                    opt(&p.phys_state),
                    opt(&p.rate),
                    opt(&p.link_layer),
                    lid(p.lid),
                    lid(p.sm_lid),
                    pk.join(" "),
                ]);
            }
        }
        s.push_str(&format!("Ports:\n{t}\n\n"));
        s.push_str("RDMA device to netdev (as ibdev2netdev):\n");
        for d in &h.devices {
            for p in &d.ports {
                let n = p.netdev.clone().unwrap_or_else(|| "(none)".into());
                let up = h
                    .netdevs
                    .iter()
                    .find(|x| Some(&x.name) == p.netdev.as_ref())
                    .and_then(|x| x.operstate.clone())
                    .unwrap_or_else(|| "?".into());
                s.push_str(&format!(
                    "  {} port {} ==> {} ({})\n",
                    d.name, p.port, n, up
                ));
            }
        }
        s.push('\n');
        let mut t = table(&["DEV", "PORT", "INDEX", "GID", "IPv4", "VER", "DEV"]);
        for d in &h.devices {
            for p in &d.ports {
                for g in &p.gids {
                    let ver = match g.kind.as_deref() {
                        Some("RoCE v2") => "v2",
                        Some(_) if p.link_layer.as_deref() == Some("Ethernet") => "v1",
                        Some(_) => "IB",
                        None => "-",
                    };
                    t.add_row(vec![
                        d.name.clone(),
                        p.port.to_string(),
                        g.index.to_string(),
                        g.gid.clone(),
                        opt(&g.ipv4),
                        ver.into(),
                        opt(&g.netdev),
                    ]);
                }
            }
        }
        s.push_str(&format!("GIDs (as show_gids):\n{t}\n\n"));
    }
    let mut t = table(&[
        "netdev",
        "state",
        "MTU",
        "RDMA device",
        "RoCE MTU",
        "ECN np prios",
        "ECN rp prios",
        "PFC prios",
        "trust",
    ]);
    for n in &h.netdevs {
        let ecn = |v: Option<[bool; 8]>| match v {
            None => "not available".to_string(),
            Some(e) => {
                let p: Vec<String> = (0..8).filter(|i| e[*i]).map(|i| i.to_string()).collect();
                if p.is_empty() {
                    "none".into()
                } else {
                    p.join(",")
                }
            }
        };
        t.add_row(vec![
            n.name.clone(),
            opt(&n.operstate),
            n.mtu.map_or("-".into(), |m| m.to_string()),
            opt(&n.rdma_device),
            n.roce_mtu.map_or("-".into(), |m| m.to_string()),
            ecn(n.ecn_np),
            ecn(n.ecn_rp),
            ecn(n.pfc.as_ref().map(|p| p.enabled)),
            n.trust.clone().unwrap_or_else(|| "not available".into()),
        ]);
    }
    s.push_str(&format!("Network interfaces:\n{t}\n\n"));
    let pauses: Vec<String> = h
        .netdevs
        .iter()
        .flat_map(|n| {
            n.pause_counters
                .iter()
                .filter(|(_, v)| **v > 0)
                .map(move |(k, v)| format!("  {} {k} = {v}", n.name))
        })
        .collect();
    if !pauses.is_empty() {
        s.push_str(&format!(
            "Non-zero pause counters (ethtool -S):\n{}\n\n",
            pauses.join("\n")
        ));
    }
    let mut any = false;
    for d in &h.devices {
        for p in &d.ports {
            for (k, v) in &p.hw_counters {
                if *v > 0 {
                    if !any {
                        s.push_str("Non-zero hw counters:\n");
                        any = true;
                    }
                    let what = rdmascope_doctor::counter_meaning(k).unwrap_or("");
                    s.push_str(&format!("  {} port {} {k} = {v}  {what}\n", d.name, p.port));
                }
            }
        }
    }
    if any {
        s.push('\n');
    }
    if !h.rates.is_empty() {
        s.push_str("Counter rates:\n");
        for r in &h.rates {
            s.push_str(&format!(
                "  {} port {} {} {:.1}/s  {}\n",
                r.device, r.port, r.counter, r.per_second, r.meaning
            ));
        }
        s.push('\n');
    }
    s.push_str(&format!(
        "RDMA kernel modules: {}\n",
        if h.modules.is_empty() {
            "none".into()
        } else {
            h.modules.join(", ")
        }
    ));
    if !h.firewall_sources.is_empty() {
        s.push_str(&format!(
            "Firewall rules read from {}: {} drop or reject UDP 4791\n",
            h.firewall_sources.join(", "),
            h.firewall_blocks.len()
        ));
    }
    for n in &h.not_available {
        s.push_str(&format!("Not checked: {n}\n"));
    }
    s.push('\n');
    s.push_str(&findings_text(&h.findings));
    s
}

/// The findings block shared by every doctor report.
fn findings_text(findings: &[Finding]) -> String {
    if findings.is_empty() {
        return "Findings: none.\n".into();
    }
    let mut s = String::from("Findings:\n");
    for f in findings {
        let sev = match f.severity {
            Severity::Critical => "CRITICAL",
            Severity::Warning => "WARNING ",
            Severity::Info => "info    ",
        };
        s.push_str(&format!("  {sev} {:<24} {}\n", f.code, f.summary));
        for e in &f.evidence {
            s.push_str(&format!("           - {e}\n"));
        }
        s.push_str(&format!("           what to do: {}\n", f.advice));
    }
    s
}

/// Exit code 2 when any finding is critical, else 0.
fn exit_code(findings: &[Finding]) -> std::process::ExitCode {
    if findings.iter().any(|f| f.severity == Severity::Critical) {
        std::process::ExitCode::from(2)
    } else {
        std::process::ExitCode::SUCCESS
    }
}

fn nccl(logs: &[String], json: bool) -> Result<std::process::ExitCode> {
    use anyhow::Context;
    // Line by line: the logs of a large job run to gigabytes.
    let mut p = rdmascope_doctor::nccl::Parser::default();
    let mut buf = Vec::new();
    for l in logs {
        let f = std::fs::File::open(l).with_context(|| format!("cannot read {l}"))?;
        let mut r = std::io::BufReader::with_capacity(1 << 16, f);
        while read_line(&mut r, &mut buf).with_context(|| format!("cannot read {l}"))? {
            let line = buf.strip_suffix(b"\r").unwrap_or(&buf);
            p.line(&String::from_utf8_lossy(line));
        }
    }
    let rep = p.finish(logs.to_vec());
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if json {
        crate::jsonfmt::to_writer(&mut out, &rep)?;
        writeln!(out)?;
    } else {
        let mut t = table(&[
            "rank",
            "process",
            "network",
            "devices",
            "GID index",
            "NCCL_* settings",
            "errors",
        ]);
        for r in &rep.ranks {
            let dev = if r.network.as_deref() == Some("Socket") {
                r.socket_ifs.join(" ")
            } else {
                r.hcas.join(" ")
            };
            let env: Vec<String> = r.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
            t.add_row(vec![
                r.rank.map_or("-".into(), |n| {
                    format!("{n}/{}", r.nranks.map_or("?".into(), |x| x.to_string()))
                }),
                format!("{}:{}", r.host, r.pid),
                r.network.clone().unwrap_or_else(|| "-".into()),
                dev,
                r.gid_index.clone().unwrap_or_else(|| "-".into()),
                env.join(" "),
                r.error_lines.to_string(),
            ]);
        }
        writeln!(
            out,
            "rdmascope doctor nccl: {}\n{t}\n",
            rep.files.join(", ")
        )?;
        write!(out, "{}", findings_text(&rep.findings))?;
    }
    out.flush()?;
    Ok(exit_code(&rep.findings))
}

/// Bytes of a log line read; the rest of a longer one (a binary file read as a log) is skipped.
const MAX_LINE: usize = 1 << 16;

/// Reads the next line into `buf` without its `\n`, at most [`MAX_LINE`] bytes of it; false at
/// the end of the input.
fn read_line(r: &mut impl std::io::BufRead, buf: &mut Vec<u8>) -> std::io::Result<bool> {
    buf.clear();
    let mut any = false;
    loop {
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(any);
        }
        any = true;
        let (part, used, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], i + 1, true),
            None => (chunk, chunk.len(), false),
        };
        let room = MAX_LINE.saturating_sub(buf.len());
        buf.extend_from_slice(&part[..part.len().min(room)]);
        r.consume(used);
        if done {
            return Ok(true);
        }
    }
}

fn compare(reports: &[String], json: bool) -> Result<std::process::ExitCode> {
    use anyhow::Context;
    let mut hosts = Vec::new();
    for r in reports {
        let text = std::fs::read_to_string(r).with_context(|| format!("cannot read {r}"))?;
        let h: Host = serde_json::from_str(&text)
            .with_context(|| format!("{r} is not a `rdmascope doctor --json` report"))?;
        let name = h.hostname.clone().unwrap_or_else(|| r.clone());
        hosts.push((name, h));
    }
    let c = rdmascope_doctor::compare::compare(&hosts);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if json {
        crate::jsonfmt::to_writer(&mut out, &c)?;
        writeln!(out)?;
    } else if c.differences.is_empty() {
        writeln!(
            out,
            "rdmascope doctor compare: {} hosts, configured the same.",
            c.hosts.len()
        )?;
    } else {
        let mut t = table(&["setting", "most hosts", "odd hosts"]);
        for d in &c.differences {
            let odd: Vec<String> = d.odd.iter().map(|(h, v)| format!("{h}: {v}")).collect();
            t.add_row(vec![d.setting.clone(), d.common.clone(), odd.join("; ")]);
        }
        writeln!(out, "rdmascope doctor compare: {}\n{t}", c.hosts.join(", "))?;
    }
    out.flush()?;
    Ok(if c.differences.is_empty() {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::from(2)
    })
}

#[cfg(test)]
mod tests {
    use super::{read_line, MAX_LINE};

    /// Lines come without their line break, a long one cut to `MAX_LINE` bytes, and the last
    /// one also without a line break after it.
    #[test]
    fn log_lines() {
        let long = vec![b'x'; 3 * MAX_LINE + 5];
        let mut input = b"one\r\n\ntwo\n".to_vec();
        input.extend_from_slice(&long);
        input.extend_from_slice(b"\nlast");
        // A small buffer, so lines span its refills.
        let mut r = std::io::BufReader::with_capacity(7, &input[..]);
        let mut buf = Vec::new();
        let mut lines = Vec::new();
        while read_line(&mut r, &mut buf).unwrap() {
            lines.push(buf.clone());
        }
        let want: [&[u8]; 5] = [b"one\r", b"", b"two", &long[..MAX_LINE], b"last"];
        assert_eq!(lines, want);
    }
}
