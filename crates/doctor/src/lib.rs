//! `rdmascope doctor`: the host's RDMA configuration and counters, read from sysfs and /proc
//! under a root directory (tests point it at fixture trees), and findings in the same shape as
//! `analyze`'s.
//!
//! Read: RDMA devices and ports (state, physical state, rate, link layer, LID/SM LID, P_Keys),
//! GID tables with types and netdevs, the RDMA device ↔ netdev mapping, netdev MTU and the RoCE
//! MTU it allows, mlx5 ECN enables, PFC per priority and the trust mode (DCB netlink), the
//! netdev's pause counters (ethtool statistics), port and hw counters (rates with `--interval`),
//! firewall rules for UDP 4791, loaded RDMA modules. What cannot be read on a host is listed in
//! `not_available` instead of guessed.

#![deny(unsafe_code)]

pub mod compare;
pub mod dcb;
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub mod kernel;
pub mod nccl;
mod sysfs;

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
pub use sysfs::Root;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Critical,
    Warning,
    Info,
}

/// A diagnosis: the same shape as `analyze`'s findings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Finding {
    pub severity: Severity,
    pub code: String,
    pub summary: String,
    pub evidence: Vec<String>,
    pub advice: String,
}

/// One GID table entry (as show_gids prints it).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Gid {
    pub index: u32,
    pub gid: String,
    /// The IPv4 address of an IPv4-mapped GID.
    pub ipv4: Option<String>,
    /// "RoCE v2", "IB/RoCE v1".
    pub kind: Option<String>,
    pub netdev: Option<String>,
}

/// One port of an RDMA device.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Port {
    pub port: u32,
    pub state: Option<String>,
    pub phys_state: Option<String>,
    pub rate: Option<String>,
    pub link_layer: Option<String>,
    pub lid: Option<u64>,
    pub sm_lid: Option<u64>,
    pub pkeys: Vec<u16>,
    pub gids: Vec<Gid>,
    pub netdev: Option<String>,
    pub counters: BTreeMap<String, u64>,
    pub hw_counters: BTreeMap<String, u64>,
}

/// An RDMA device (`/sys/class/infiniband/<name>`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Device {
    pub name: String,
    pub node_type: Option<String>,
    pub fw_ver: Option<String>,
    pub hca_type: Option<String>,
    pub node_guid: Option<String>,
    pub ports: Vec<Port>,
}

/// A network interface that carries RoCE (or any, when no RDMA device exists).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Netdev {
    pub name: String,
    pub mtu: Option<u64>,
    pub operstate: Option<String>,
    pub rdma_device: Option<String>,
    /// The largest IB MTU that fits in the netdev MTU minus 96 bytes of headers.
    pub roce_mtu: Option<u32>,
    /// mlx5 `ecn/roce_np/enable/<prio>` and `ecn/roce_rp/enable/<prio>`, per priority.
    pub ecn_np: Option<[bool; 8]>,
    pub ecn_rp: Option<[bool; 8]>,
    /// PFC per priority (DCB), when the driver offers it.
    #[serde(default)]
    pub pfc: Option<dcb::Pfc>,
    /// "dscp" or "pcp": how the NIC classifies received traffic into priorities (DCB APP table).
    #[serde(default)]
    pub trust: Option<String>,
    /// The priority RoCE's DSCP 26 lands in under DSCP trust.
    #[serde(default)]
    pub roce_dscp_priority: Option<u8>,
    /// Pause counters from the ethtool statistics (`rx_prio3_pause`, ...).
    #[serde(default)]
    pub pause_counters: BTreeMap<String, u64>,
}

/// A counter's growth between two reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Rate {
    pub device: String,
    pub port: u32,
    pub counter: String,
    pub per_second: f64,
    pub meaning: String,
}

/// What `doctor` found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Host {
    pub schema: String,
    pub root: String,
    pub hostname: Option<String>,
    pub kernel: Option<String>,
    pub devices: Vec<Device>,
    pub netdevs: Vec<Netdev>,
    pub modules: Vec<String>,
    /// Firewall rules that drop or reject UDP port 4791 (RoCEv2), with where they came from.
    pub firewall_blocks: Vec<String>,
    /// Where firewall rules were read from (empty: none could be read).
    pub firewall_sources: Vec<String>,
    /// Checks this version cannot make on this host, said plainly.
    pub not_available: Vec<String>,
    pub rates: Vec<Rate>,
    pub findings: Vec<Finding>,
}

/// Kernel modules that matter for RDMA.
const RDMA_MODULES: &[&str] = &[
    "ib_core",
    "ib_uverbs",
    "rdma_cm",
    "rdma_ucm",
    "ib_cm",
    "iw_cm",
    "mlx5_ib",
    "mlx5_core",
    "mlx4_ib",
    "rdma_rxe",
    "siw",
    "irdma",
    "bnxt_re",
    "efa",
    "hns_roce_hw_v2",
    "qedr",
    "ib_ipoib",
    "rpcrdma",
    "nvme_rdma",
    "nvmet_rdma",
    "ib_srp",
    "ib_iser",
    "ib_isert",
    "smc",
];

/// The RoCE MTU a netdev MTU allows: the largest IB MTU ≤ MTU − 96 (IBTA A16/A17 headers).
pub fn roce_mtu(netdev_mtu: u64) -> Option<u32> {
    [4096u32, 2048, 1024, 512, 256]
        .into_iter()
        .find(|m| u64::from(*m) + 96 <= netdev_mtu)
}

fn ipv4_of(gid: &str) -> Option<String> {
    let a: std::net::Ipv6Addr = gid.parse().ok()?;
    let o = a.octets();
    (o[..10].iter().all(|b| *b == 0) && o[10] == 0xff && o[11] == 0xff)
        .then(|| std::net::Ipv4Addr::new(o[12], o[13], o[14], o[15]).to_string())
}

fn compress(gid: &str) -> String {
    gid.parse::<std::net::Ipv6Addr>()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| gid.to_string())
}

fn counters(r: &Root, dir: &str) -> BTreeMap<String, u64> {
    r.list(dir)
        .into_iter()
        .filter_map(|n| r.read_u64(&format!("{dir}/{n}")).map(|v| (n, v)))
        .collect()
}

fn read_port(r: &Root, dev: &str, p: u32) -> Port {
    let base = format!("sys/class/infiniband/{dev}/ports/{p}");
    let mut gids = Vec::new();
    for i in r.list(&format!("{base}/gids")) {
        let Some(g) = r.read(&format!("{base}/gids/{i}")) else {
            continue;
        };
        if g.chars().all(|c| c == '0' || c == ':') {
            continue;
        }
        let Ok(index) = i.parse() else { continue };
        gids.push(Gid {
            index,
            ipv4: ipv4_of(&g),
            gid: compress(&g),
            kind: r.read(&format!("{base}/gid_attrs/types/{i}")),
            netdev: r.read(&format!("{base}/gid_attrs/ndevs/{i}")),
        });
    }
    let pkeys = r
        .list(&format!("{base}/pkeys"))
        .iter()
        .filter_map(|i| r.read_u64(&format!("{base}/pkeys/{i}")))
        .filter(|k| *k & 0x7fff != 0)
        .map(|k| k as u16)
        .collect();
    let netdev = gids
        .iter()
        .find_map(|g| g.netdev.clone())
        .or_else(|| {
            r.list(&format!("sys/class/infiniband/{dev}/device/net"))
                .into_iter()
                .next()
        })
        .or_else(|| r.read(&format!("sys/class/infiniband/{dev}/parent")));
    Port {
        port: p,
        state: r.read(&format!("{base}/state")),
        phys_state: r.read(&format!("{base}/phys_state")),
        rate: r.read(&format!("{base}/rate")),
        link_layer: r.read(&format!("{base}/link_layer")),
        lid: r.read_u64(&format!("{base}/lid")),
        sm_lid: r.read_u64(&format!("{base}/sm_lid")),
        pkeys,
        gids,
        netdev,
        counters: counters(r, &format!("{base}/counters")),
        hw_counters: counters(r, &format!("{base}/hw_counters")),
    }
}

fn read_ecn(r: &Root, netdev: &str, kind: &str) -> Option<[bool; 8]> {
    let dir = format!("sys/class/net/{netdev}/ecn/{kind}/enable");
    r.path(&dir)?;
    let mut v = [false; 8];
    for (p, e) in v.iter_mut().enumerate() {
        *e = r.read_u64(&format!("{dir}/{p}")) == Some(1);
    }
    Some(v)
}

/// Reads the host under `root` (no findings yet).
pub fn read(root: &Path) -> Host {
    let r = Root::new(root);
    let devices: Vec<Device> = r
        .list("sys/class/infiniband")
        .into_iter()
        .map(|name| {
            let d = format!("sys/class/infiniband/{name}");
            let ports = r
                .list(&format!("{d}/ports"))
                .iter()
                .filter_map(|p| p.parse().ok())
                .map(|p| read_port(&r, &name, p))
                .collect();
            Device {
                node_type: r.read(&format!("{d}/node_type")),
                fw_ver: r.read(&format!("{d}/fw_ver")),
                hca_type: r.read(&format!("{d}/hca_type")),
                node_guid: r.read(&format!("{d}/node_guid")),
                ports,
                name,
            }
        })
        .collect();
    let rdma_netdevs: BTreeMap<String, String> = devices
        .iter()
        .flat_map(|d| {
            d.ports
                .iter()
                .filter_map(|p| p.netdev.clone().map(|n| (n, d.name.clone())))
        })
        .collect();
    let roce_netdevs: std::collections::BTreeSet<String> = devices
        .iter()
        .flat_map(|d| {
            d.ports
                .iter()
                .filter(|p| p.link_layer.as_deref() == Some("Ethernet"))
                .filter_map(|p| p.netdev.clone())
        })
        .collect();
    let all = r.list("sys/class/net");
    let names: Vec<String> = if rdma_netdevs.is_empty() {
        all.into_iter().filter(|n| n != "lo").collect()
    } else {
        rdma_netdevs.keys().cloned().collect()
    };
    let netdevs = names
        .into_iter()
        .map(|n| {
            let mtu = r.read_u64(&format!("sys/class/net/{n}/mtu"));
            Netdev {
                mtu,
                operstate: r.read(&format!("sys/class/net/{n}/operstate")),
                rdma_device: rdma_netdevs.get(&n).cloned().or_else(|| {
                    r.list(&format!("sys/class/net/{n}/device/infiniband"))
                        .into_iter()
                        .next()
                }),
                roce_mtu: if roce_netdevs.contains(&n) {
                    mtu.and_then(roce_mtu)
                } else {
                    None
                },
                ecn_np: read_ecn(&r, &n, "roce_np"),
                ecn_rp: read_ecn(&r, &n, "roce_rp"),
                pfc: None,
                trust: None,
                roce_dscp_priority: None,
                pause_counters: BTreeMap::new(),
                name: n,
            }
        })
        .collect::<Vec<_>>();
    let mut not_available = Vec::new();
    let mut netdevs = netdevs;
    for n in netdevs.iter_mut() {
        if rdma_netdevs.is_empty() || roce_netdevs.contains(&n.name) {
            read_dcb(root, &r, n, &mut not_available);
        }
    }
    let modules = r
        .read("proc/modules")
        .map(|s| {
            s.lines()
                .filter_map(|l| l.split_whitespace().next())
                .filter(|m| RDMA_MODULES.contains(m))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let (firewall_sources, firewall_blocks) = firewall(root, &r);
    Host {
        schema: "rdmascope.doctor.v1".into(),
        root: root.display().to_string(),
        hostname: r
            .read("proc/sys/kernel/hostname")
            .or_else(|| r.read("etc/hostname")),
        kernel: r.read("proc/sys/kernel/osrelease"),
        devices,
        netdevs,
        modules,
        firewall_blocks,
        firewall_sources,
        not_available,
        rates: Vec::new(),
        findings: Vec::new(),
    }
}

/// PFC, trust mode and pause counters of netdev `n`: from the kernel (DCB netlink, ethtool
/// ioctl) on the live root, else from saved `dcb`/`ethtool -S` output under
/// `ROOT/commands/` (`dcb_pfc_show_dev_IF`, `dcb_app_show_dev_IF`, `ethtool_-S_IF`).
fn read_dcb(root: &Path, r: &Root, n: &mut Netdev, not_available: &mut Vec<String>) {
    let live = root == Path::new("/");
    let name = n.name.clone();
    let state: Result<dcb::Dcb, String> = if live {
        live_dcb(&name)
    } else {
        match r.read(&format!("commands/dcb_pfc_show_dev_{name}")) {
            Some(t) => Ok(dcb::Dcb {
                pfc: dcb::parse_dcb_pfc(&t),
                apps: r
                    .read(&format!("commands/dcb_app_show_dev_{name}"))
                    .map(|t| dcb::parse_dcb_app(&t))
                    .unwrap_or_default(),
            }),
            None => Err(
                "no saved `dcb pfc show` output under this root (commands/dcb_pfc_show_dev_IF)"
                    .into(),
            ),
        }
    };
    match state {
        Ok(d) if d.pfc.is_some() => {
            n.trust = Some(d.trust().to_string());
            n.roce_dscp_priority = (d.trust() == "dscp")
                .then(|| d.dscp_priority(dcb::ROCE_DSCP).unwrap_or(dcb::ROCE_DSCP >> 3));
            n.pfc = d.pfc;
        }
        Ok(_) => not_available.push(format!(
            "{name}: PFC and trust mode: not available on this host (the driver reports no PFC configuration)"
        )),
        Err(e) => not_available.push(format!(
            "{name}: PFC and trust mode: not available on this host (DCB netlink: {e})"
        )),
    }
    let stats: Result<BTreeMap<String, u64>, String> = if live {
        live_ethtool(&name)
    } else {
        r.read(&format!("commands/ethtool_-S_{name}"))
            .map(|t| dcb::parse_ethtool_stats(&t))
            .ok_or_else(|| "no saved `ethtool -S` output under this root".into())
    };
    match stats {
        Ok(s) => {
            n.pause_counters = dcb::pause_counters(&s);
            if n.pause_counters.is_empty() {
                not_available.push(format!(
                    "{name}: per-priority pause counters: not available on this host (no pause counter among its {} ethtool statistics)",
                    s.len()
                ));
            }
        }
        Err(e) => not_available.push(format!(
            "{name}: per-priority pause counters: not available on this host (ethtool statistics: {e})"
        )),
    }
}

#[cfg(target_os = "linux")]
fn live_dcb(name: &str) -> Result<dcb::Dcb, String> {
    kernel::dcb(name)
}

#[cfg(not(target_os = "linux"))]
fn live_dcb(_: &str) -> Result<dcb::Dcb, String> {
    Err("only Linux has DCB netlink".into())
}

#[cfg(target_os = "linux")]
fn live_ethtool(name: &str) -> Result<BTreeMap<String, u64>, String> {
    kernel::ethtool_stats(name)
}

#[cfg(not(target_os = "linux"))]
fn live_ethtool(_: &str) -> Result<BTreeMap<String, u64>, String> {
    Err("only Linux has the ethtool ioctl".into())
}

/// True when a firewall rule line drops or rejects UDP destination port 4791.
pub fn blocks_rocev2(line: &str) -> bool {
    let l = line.to_ascii_lowercase();
    let verdict = l.contains(" drop")
        || l.contains(" reject")
        || l.contains("-j drop")
        || l.contains("-j reject");
    let udp = l.contains("udp") || l.contains("-p 17");
    let port = l.contains("4791")
        && (l.contains("dport") || l.contains("--dport") || l.contains("dports"));
    verdict && udp && port
}

/// Firewall rules: live (`nft list ruleset`, `iptables-save`, `ip6tables-save`) when reading the
/// real root, else the saved rule files under the root (/etc/nftables.conf, /etc/iptables/rules.v4
/// and rules.v6, /etc/sysconfig/iptables).
fn firewall(root: &Path, r: &Root) -> (Vec<String>, Vec<String>) {
    let mut sources = Vec::new();
    let mut blocks = Vec::new();
    fn scan(sources: &mut Vec<String>, blocks: &mut Vec<String>, name: String, text: &str) {
        for l in text.lines().filter(|l| blocks_rocev2(l)) {
            blocks.push(format!("{name}: {}", l.trim()));
        }
        sources.push(name);
    }
    if root == Path::new("/") {
        for (cmd, args) in [
            ("nft", &["list", "ruleset"][..]),
            ("iptables-save", &[][..]),
            ("ip6tables-save", &[][..]),
        ] {
            if let Ok(o) = std::process::Command::new(cmd).args(args).output() {
                if o.status.success() {
                    let name = format!("{cmd} {}", args.join(" ")).trim().to_string();
                    scan(
                        &mut sources,
                        &mut blocks,
                        name,
                        &String::from_utf8_lossy(&o.stdout),
                    );
                }
            }
        }
    }
    if sources.is_empty() {
        for f in [
            "etc/nftables.conf",
            "etc/iptables/rules.v4",
            "etc/iptables/rules.v6",
            "etc/sysconfig/iptables",
        ] {
            if let Some(t) = r.read(f) {
                scan(&mut sources, &mut blocks, format!("/{f}"), &t);
            }
        }
    }
    (sources, blocks)
}

/// What a counter's growth means.
pub fn counter_meaning(name: &str) -> Option<&'static str> {
    Some(match name {
        "out_of_sequence" => {
            "packets received out of sequence: the network drops or reorders RoCE packets"
        }
        "packet_seq_err" => {
            "NAKs for PSN sequence errors received: this host's packets are being lost"
        }
        "implied_nak_seq_err" => {
            "losses detected from READ responses or ACKs: packets are being lost"
        }
        "duplicate_request" => {
            "duplicate requests received: the peer retransmits (loss or timeouts)"
        }
        "local_ack_timeout_err" => {
            "ACK timeouts on this host's QPs: lost packets or ACKs, or a dead peer"
        }
        "rnr_nak_retry_err" | "req_rnr_retries_exceeded" => {
            "RNR retries exhausted: the receiver's application does not post receives in time"
        }
        "req_transport_retries_exceeded" => {
            "transport retries exhausted (IBV_WC_RETRY_EXC_ERR): lost packets or a dead peer"
        }
        "req_remote_access_errors" => {
            "remote access errors this host's requests got back: the peer refused an R_Key, address or access right"
        }
        "resp_remote_access_errors" => {
            "remote access errors this host sent: peers use R_Keys, addresses or rights its registrations do not allow"
        }
        "req_remote_invalid_request" | "resp_remote_invalid_request" => {
            "invalid request NAKs: operations a QP is not enabled for, too many READs/atomics in flight, or over-long SENDs"
        }
        "resp_local_length_error" => {
            "inbound messages longer than the receive buffer posted for them"
        }
        "rnr_nak_retries" | "rx_rnr_nak" => "RNR NAKs: receivers without posted receive buffers",
        "np_cnp_sent" => {
            "CNPs this host sent as a notification point: it receives CE-marked traffic"
        }
        "rp_cnp_handled" => "CNPs this host reacted to: its traffic meets congestion",
        "np_ecn_marked_roce_packets" => {
            "CE-marked RoCE packets received: switches signal congestion"
        }
        "port_rcv_errors" | "symbol_error" | "link_error_recovery" => {
            "link-level errors: check cables, optics and FEC"
        }
        "port_rcv_discards" | "port_xmit_discards" => {
            "packets discarded at the port: congestion or misconfiguration"
        }
        _ => return None,
    })
}

/// What to add to the loss advice when `out_of_sequence` is among the counters: reordering
/// raises it too.
fn reorder_hint(out_of_sequence: bool) -> &'static str {
    if out_of_sequence {
        " out_of_sequence also counts packets a fabric only reordered (adaptive routing, packet spraying, a path change): capture on this host and run rdmascope analyze, whose transport.reorder tells reordering from loss (transport.loss)."
    } else {
        ""
    }
}

/// Counters whose growth means loss.
const LOSS: &[&str] = &[
    "out_of_sequence",
    "packet_seq_err",
    "implied_nak_seq_err",
    "local_ack_timeout_err",
    "duplicate_request",
];

/// Counters of work requests that failed with an error that may not be retried: each one put a
/// QP in the error state (mlx5's extended error counters, and the RNR/transport retry limits).
const QP_ERRORS: &[&str] = &[
    "req_remote_access_errors",
    "resp_remote_access_errors",
    "req_remote_invalid_request",
    "resp_remote_invalid_request",
    "resp_local_length_error",
    "req_transport_retries_exceeded",
    "req_rnr_retries_exceeded",
    "rnr_nak_retry_err",
];

/// What to do about [`QP_ERRORS`].
const QP_ERRORS_ADVICE: &str = "Each of these ended a queue pair: the application saw a work completion in error (IBV_WC_REM_ACCESS_ERR, IBV_WC_REM_INV_REQ_ERR, IBV_WC_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR) and had to reconnect. Access errors are R_Keys or addresses the peer no longer accepts (memory deregistered while still in use, keys mixed up between connections); invalid requests are QP access flags, max_rd_atomic above the peer's max_dest_rd_atomic, or receive buffers shorter than the SENDs. Capture the traffic and run rdmascope analyze: its transport.* findings name the connections and frames.";

/// Computes per-second rates between two reads of the same host.
pub fn rates(before: &Host, after: &Host, secs: f64) -> Vec<Rate> {
    let mut out = Vec::new();
    for (d0, d1) in before.devices.iter().zip(&after.devices) {
        for (p0, p1) in d0.ports.iter().zip(&d1.ports) {
            for (set0, set1) in [
                (&p0.hw_counters, &p1.hw_counters),
                (&p0.counters, &p1.counters),
            ] {
                for (k, v1) in set1 {
                    let Some(meaning) = counter_meaning(k) else {
                        continue;
                    };
                    let v0 = set0.get(k).copied().unwrap_or(0);
                    if *v1 > v0 {
                        out.push(Rate {
                            device: d1.name.clone(),
                            port: p1.port,
                            counter: k.clone(),
                            per_second: (v1 - v0) as f64 / secs.max(1e-9),
                            meaning: meaning.to_string(),
                        });
                    }
                }
            }
        }
    }
    for n1 in &after.netdevs {
        let Some(n0) = before.netdevs.iter().find(|n| n.name == n1.name) else {
            continue;
        };
        for (k, v1) in &n1.pause_counters {
            let v0 = n0.pause_counters.get(k).copied().unwrap_or(0);
            if *v1 > v0 {
                out.push(Rate {
                    device: n1.name.clone(),
                    port: 0,
                    counter: k.clone(),
                    per_second: (v1 - v0) as f64 / secs.max(1e-9),
                    meaning: "PFC/PAUSE frames: a receiver's buffer filled and the link was stopped; steady growth is congestion spreading backwards (a pause storm at worst)".into(),
                });
            }
        }
    }
    out
}

/// Applies the checks, filling `host.findings` (most severe first).
pub fn check(host: &mut Host) {
    let mut f: Vec<Finding> = Vec::new();
    let mut push = |severity, code: &str, summary: String, evidence: Vec<String>, advice: &str| {
        f.push(Finding {
            severity,
            code: code.into(),
            summary,
            evidence,
            advice: advice.into(),
        });
    };
    if host.devices.is_empty() {
        push(
            Severity::Info,
            "doctor.no_rdma_devices",
            "No RDMA device on this host".into(),
            vec![format!("no entries under {}/sys/class/infiniband", host.root.trim_end_matches('/')), format!("RDMA modules loaded: {}", if host.modules.is_empty() { "none".into() } else { host.modules.join(", ") })],
            "Nothing here can do RDMA. Load the driver of the NIC (mlx5_ib, irdma, bnxt_re, …) and check `rdma link`; for a software test bed, `modprobe rdma_rxe; rdma link add rxe0 type rxe netdev <if>`.",
        );
    }
    for d in &host.devices {
        for p in &d.ports {
            let id = format!("{} port {}", d.name, p.port);
            let active = p.state.as_deref().is_some_and(|s| s.contains("ACTIVE"));
            if !active {
                push(Severity::Critical, "port.down", format!("{id} is not active ({})", p.state.as_deref().unwrap_or("state unknown")), vec![format!("state: {}", p.state.as_deref().unwrap_or("?"))], "An RDMA port that is not ACTIVE carries no traffic: check the cable and the switch port, and on InfiniBand that a subnet manager runs (opensm).");
            }
            if p.phys_state
                .as_deref()
                .is_some_and(|s| !s.contains("LinkUp"))
            {
                push(Severity::Critical, "port.not_linkup", format!("{id}: the physical link is not up ({})", p.phys_state.as_deref().unwrap_or("?")), vec![format!("phys_state: {}", p.phys_state.as_deref().unwrap_or("?"))], "Polling or Disabled means no link partner: reseat or replace the cable/optic, check the switch port is enabled and the speeds match.");
            }
            let roce = p.link_layer.as_deref() == Some("Ethernet");
            if roce && !p.gids.iter().any(|g| g.kind.as_deref() == Some("RoCE v2")) {
                push(Severity::Warning, "gid.no_rocev2", format!("{id} has no RoCE v2 GID"), p.gids.iter().map(|g| format!("GID {} {} {}", g.index, g.gid, g.kind.as_deref().unwrap_or("?"))).collect(), "RoCE v2 GIDs appear for each IP address of the netdev: give the interface an IP address (and bring it up); applications must then use the RoCE v2 GID index (NCCL_IB_GID_INDEX, rdma_cm picks it from the address).");
            }
            if p.link_layer.as_deref() == Some("InfiniBand")
                && p.pkeys.iter().any(|k| k & 0x8000 == 0)
            {
                push(Severity::Warning, "pkey.limited_member", format!("{id} is a limited member of a partition"), p.pkeys.iter().map(|k| format!("P_Key 0x{k:04x}")).collect(), "Limited members (P_Key without bit 15, e.g. 0x7fff) cannot talk to other limited members: ask the SM administrator for full membership of the partition the application uses.");
            }
            // The counters of `names` that are not zero, as "name = value".
            let nonzero = |names: &[&str]| -> Vec<String> {
                names
                    .iter()
                    .filter_map(|c| {
                        p.hw_counters
                            .get(*c)
                            .filter(|v| **v > 0)
                            .map(|v| format!("{c} = {v}"))
                    })
                    .collect()
            };
            let loss = nonzero(LOSS);
            let qp_errors = nonzero(QP_ERRORS);
            if !qp_errors.is_empty() {
                push(
                    Severity::Warning,
                    "counters.qp_errors",
                    format!("{id}: queue pairs failed with errors that end them since the driver loaded"),
                    qp_errors,
                    QP_ERRORS_ADVICE,
                );
            }
            if !loss.is_empty() {
                let advice = format!("Sequence errors and ACK timeouts mean RoCE packets are dropped: check PFC on the RDMA priority end to end and the switch buffers. Run with --interval 5s to see whether they still grow.{}", reorder_hint(loss.iter().any(|l| l.starts_with("out_of_sequence "))));
                push(
                    Severity::Warning,
                    "counters.loss",
                    format!("{id}: loss counters are non-zero since the driver loaded"),
                    loss,
                    &advice,
                );
            }
        }
    }
    for n in &host.netdevs {
        if n.rdma_device.is_none() {
            continue;
        }
        if let (Some(m), Some(r)) = (n.mtu, n.roce_mtu) {
            if r < 4096 {
                push(Severity::Warning, "mtu.roce_capped", format!("{}: netdev MTU {m} caps the RoCE MTU at {r}", n.name), vec![format!("netdev MTU {m} − 96 → RoCE MTU {r}")], "RoCE packetises at the largest IB MTU that fits in the netdev MTU; 1500 gives 1024-byte packets and costs throughput. Set the netdev MTU to 4200 (or 9000) on every host and switch port: `ip link set <if> mtu 4200`.");
            }
        }
        for (kind, v) in [("roce_np", n.ecn_np), ("roce_rp", n.ecn_rp)] {
            if v.is_some_and(|e| !e.iter().any(|x| *x)) {
                push(Severity::Warning, "ecn.disabled", format!("{}: ECN {kind} is disabled on every priority", n.name), vec![format!("ecn/{kind}/enable/0..7 = 0")], "Without ECN the NIC neither sends CNPs (np) nor slows down on them (rp), so DCQCN is off and congestion turns into PFC pauses or drops. Enable it on the RDMA priority: echo 1 > /sys/class/net/<if>/ecn/roce_np/enable/<prio> (and roce_rp).");
            }
        }
    }
    for n in host.netdevs.iter().filter(|n| n.roce_mtu.is_some()) {
        let Some(pfc) = &n.pfc else { continue };
        let on: Vec<String> = (0..8)
            .filter(|p| pfc.enabled[*p])
            .map(|p| p.to_string())
            .collect();
        let (prio, why) = match n.roce_dscp_priority {
            Some(p) => (
                p,
                format!(
                    "trust dscp: DSCP {} (RoCE's default) maps to priority {p}",
                    dcb::ROCE_DSCP
                ),
            ),
            None => (
                3,
                "trust pcp: RDMA traffic is assumed to use priority 3, the common default"
                    .to_string(),
            ),
        };
        if on.is_empty() {
            push(Severity::Warning, "pfc.disabled", format!("{}: PFC is disabled on every priority", n.name), vec![format!("PFC enabled priorities: none (capability {} TCs)", pfc.cap), why], "Without PFC (and without ECN/DCQCN tuned for a lossy fabric) RoCE loses packets under congestion and every loss costs a retransmission of the whole window. Enable PFC on the RDMA priority on the host and every switch port: `dcb pfc set dev <if> prio-pfc 3:on` (or mlnx_qos -i <if> --pfc 0,0,0,1,0,0,0,0).");
        } else if !pfc.enabled[usize::from(prio & 7)] {
            push(Severity::Warning, "pfc.priority_mismatch", format!("{}: PFC is on for priority {} but RDMA traffic uses priority {prio}", n.name, on.join(",")), vec![format!("PFC enabled priorities: {}", on.join(",")), why], "PFC protects only the priorities it is enabled on: RDMA traffic on another priority is dropped under congestion. Enable PFC on the priority RDMA uses (or map RoCE's DSCP/PCP to the PFC priority: `dcb app add dev <if> dscp-prio 26:3`), the same on every host and switch.");
        }
        let pauses: u64 = n.pause_counters.values().sum::<u64>()
            + pfc.requests.iter().sum::<u64>()
            + pfc.indications.iter().sum::<u64>();
        if pauses > 0 {
            push(Severity::Info, "counters.pause", format!("{}: PFC pause frames were sent or received since the driver loaded", n.name), n.pause_counters.iter().filter(|(_, v)| **v > 0).map(|(k, v)| format!("{k} = {v}")).collect(), "Some pausing is normal on a lossless fabric; run with --interval 5s to see whether the counters grow steadily (congestion spreading backwards, or a pause storm from a stuck receiver).");
        }
    }
    let trusts: std::collections::BTreeSet<&str> = host
        .netdevs
        .iter()
        .filter(|n| n.roce_mtu.is_some())
        .filter_map(|n| n.trust.as_deref())
        .collect();
    if trusts.len() > 1 {
        push(Severity::Warning, "trust.mismatch", "RDMA interfaces of this host classify traffic differently (trust dscp on some, pcp on others)".into(), host.netdevs.iter().filter_map(|n| n.trust.as_ref().map(|t| format!("{}: trust {t}", n.name))).collect(), "The trust mode decides which priority (and so which PFC class) a received packet gets: use the same one everywhere — trust dscp for routed RoCEv2 (`mlnx_qos -i <if> --trust dscp`, or a DSCP APP table via `dcb app`), matching the switches.");
    }
    let rmtus: std::collections::BTreeSet<u32> = host
        .netdevs
        .iter()
        .filter(|n| n.rdma_device.is_some())
        .filter_map(|n| n.roce_mtu)
        .collect();
    if rmtus.len() > 1 {
        push(Severity::Warning, "mtu.mismatch", "RDMA interfaces of this host allow different RoCE MTUs".into(), host.netdevs.iter().filter(|n| n.rdma_device.is_some()).map(|n| format!("{}: MTU {:?} → RoCE MTU {:?}", n.name, n.mtu, n.roce_mtu)).collect(), "Use one MTU on every RDMA interface (and across the cluster): connections between ports with different MTUs run at the smaller one or fail to connect.");
    }
    if !host.firewall_blocks.is_empty() {
        push(Severity::Critical, "firewall.blocks_rocev2", "The firewall drops or rejects RoCEv2 (UDP port 4791)".into(), host.firewall_blocks.clone(), "Hardware RoCE bypasses the kernel's firewall, but Soft-RoCE (rdma_rxe) and anything that goes through the host stack do not: allow UDP destination port 4791 on the RDMA interfaces (nft add rule inet filter input udp dport 4791 accept).");
    }
    if host.firewall_sources.is_empty() {
        host.not_available
            .push("firewall rules: neither nft/iptables nor saved rule files could be read".into());
    }
    for r in &host.rates {
        if r.port == 0 && r.counter.contains("pause") {
            push(Severity::Warning, "counters.pause", format!("{}: {} grows at {:.1}/s", r.device, r.counter, r.per_second), vec![r.meaning.to_string()], "Links are being paused right now: find the congested receiver (incast, a slow host, a stuck NIC), check ECN/DCQCN is on so senders slow down before PFC triggers, and watch for the pause spreading to other ports.");
            continue;
        }
        let (code, advice) = if QP_ERRORS.contains(&r.counter.as_str()) {
            ("counters.qp_errors", QP_ERRORS_ADVICE.to_string())
        } else if LOSS.contains(&r.counter.as_str()) {
            ("counters.loss", format!("Packets are being lost right now: check PFC on the RDMA priority end to end, the switch buffers, and link errors.{}", reorder_hint(r.counter == "out_of_sequence")))
        } else {
            continue;
        };
        push(
            Severity::Critical,
            code,
            format!(
                "{} port {}: {} grows at {:.1}/s",
                r.device, r.port, r.counter, r.per_second
            ),
            vec![r.meaning.to_string()],
            &advice,
        );
    }
    f.sort_by(|a, b| a.severity.cmp(&b.severity).then(a.code.cmp(&b.code)));
    host.findings = f;
}

/// Reads and checks the host under `root`; with `interval`, reads the counters twice.
pub fn inspect(root: &Path, interval: Option<std::time::Duration>) -> Host {
    let mut h = read(root);
    if let Some(iv) = interval {
        std::thread::sleep(iv);
        let h2 = read(root);
        let rates = rates(&h, &h2, iv.as_secs_f64());
        h = h2;
        h.rates = rates;
    }
    check(&mut h);
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roce_mtus() {
        assert_eq!(roce_mtu(1500), Some(1024));
        assert_eq!(roce_mtu(4200), Some(4096));
        assert_eq!(roce_mtu(9000), Some(4096));
        assert_eq!(roce_mtu(2200), Some(2048));
        assert_eq!(roce_mtu(200), None);
        assert_eq!(
            ipv4_of("0000:0000:0000:0000:0000:ffff:0a00:0001").as_deref(),
            Some("10.0.0.1")
        );
        assert_eq!(
            compress("fe80:0000:0000:0000:0a00:27ff:fe23:4567"),
            "fe80::a00:27ff:fe23:4567"
        );
    }
}
