//! Live capture and replay on Linux: AF_PACKET with a TPACKET_V3 ring for network interfaces,
//! a verbs sniffer flow for RDMA devices (libibverbs loaded at run time), and a raw-socket
//! sender for replay. Nothing here needs a `-dev` package at build time.

pub mod bpf;
pub mod rdma;
mod ring;
pub mod signals;
pub mod verbs;

use std::io;

pub use ring::{if_index, interfaces, RingConfig, RingPacket, RxRing, SocketStats, TxSocket};

/// What went wrong opening or running a live capture or replay, and on which interface.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    #[error(
        "{what} on {iface} needs CAP_NET_RAW{admin}: run as root, or grant the binary the \
         capability (`sudo setcap cap_net_raw,cap_net_admin+ep $(which rdmascope)`)",
        admin = if *.needs_admin { " and CAP_NET_ADMIN" } else { "" }
    )]
    Permission {
        what: &'static str,
        iface: String,
        needs_admin: bool,
    },
    #[error("no interface named {iface:?} (this host has: {})", available.join(", "))]
    NoSuchInterface {
        iface: String,
        available: Vec<String>,
    },
    #[error("{what} on {iface}: {source}")]
    Os {
        what: &'static str,
        iface: String,
        #[source]
        source: io::Error,
    },
    #[error("{0}")]
    Rdma(String),
}

impl LiveError {
    pub(crate) fn from_os(what: &'static str, iface: &str, e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::PermissionDenied {
            Self::Permission {
                what,
                iface: iface.to_string(),
                needs_admin: what == "enabling promiscuous mode",
            }
        } else {
            Self::Os {
                what,
                iface: iface.to_string(),
                source: e,
            }
        }
    }
}

/// Drop counters of a network interface since boot (`/proc/net/dev`'s "drop" column:
/// `rx_dropped + rx_missed_errors`), read from sysfs under `sys_root`.
pub fn interface_drops(sys_root: &std::path::Path, iface: &str) -> Option<u64> {
    let dir = sys_root.join("class/net").join(iface).join("statistics");
    let read = |f: &str| -> Option<u64> {
        std::fs::read_to_string(dir.join(f))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    Some(read("rx_dropped")? + read("rx_missed_errors").unwrap_or(0))
}

/// The interface's link speed in bits per second from sysfs (`speed` is in Mb/s; -1 or an
/// error when unknown, as on veth and loopback).
pub fn interface_speed(sys_root: &std::path::Path, iface: &str) -> Option<u64> {
    let s = std::fs::read_to_string(sys_root.join("class/net").join(iface).join("speed")).ok()?;
    let mbps: i64 = s.trim().parse().ok()?;
    (mbps > 0).then(|| mbps as u64 * 1_000_000)
}
