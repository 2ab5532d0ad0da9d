//! RDMA devices as sysfs shows them (`/sys/class/infiniband/DEV/ports/N/...`, and
//! `/sys/class/net/IFACE/device/infiniband/DEV` for the netdev side), read under a root
//! directory so tests can point it at a fixture tree.

use std::path::Path;

/// One port of an RDMA device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RdmaPort {
    pub device: String,
    pub port: u32,
    /// `InfiniBand` or `Ethernet`.
    pub link_layer: String,
    /// The `state` file without its number, e.g. `ACTIVE`.
    pub state: String,
    /// The Ethernet netdev of a RoCE port (`gid_attrs/ndevs/0`).
    pub netdev: Option<String>,
}

impl RdmaPort {
    pub fn is_infiniband(&self) -> bool {
        self.link_layer.eq_ignore_ascii_case("infiniband")
    }
}

fn read(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

/// The entries of `dir`, sorted (none when it cannot be read).
pub(super) fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// RDMA device names under `sys_root/class/infiniband`.
pub fn devices(sys_root: &Path) -> Vec<String> {
    names(&sys_root.join("class/infiniband"))
        .into_iter()
        .filter(|d| {
            sys_root
                .join("class/infiniband")
                .join(d)
                .join("ports")
                .is_dir()
        })
        .collect()
}

/// The ports of device `dev`, in port order.
pub fn ports(sys_root: &Path, dev: &str) -> Vec<RdmaPort> {
    let dir = sys_root.join("class/infiniband").join(dev).join("ports");
    let mut nums: Vec<u32> = names(&dir).iter().filter_map(|n| n.parse().ok()).collect();
    nums.sort_unstable();
    nums.into_iter()
        .map(|n| {
            let p = dir.join(n.to_string());
            let state = read(&p.join("state")).unwrap_or_default();
            let state = state
                .split_once(':')
                .map_or(state.as_str(), |(_, s)| s)
                .trim()
                .to_string();
            RdmaPort {
                device: dev.to_string(),
                port: n,
                link_layer: read(&p.join("link_layer")).unwrap_or_default(),
                state,
                netdev: read(&p.join("gid_attrs/ndevs/0")).filter(|s| !s.is_empty()),
            }
        })
        .collect()
}

/// Is `spec` (`DEV` or `DEV:PORT`) an RDMA device rather than a netdev? Returns the port it
/// names, or an error saying which devices or ports exist; `None` when `spec` names no RDMA
/// device (it is then a network interface).
pub fn resolve(sys_root: &Path, spec: &str) -> Option<Result<RdmaPort, String>> {
    let (dev, port) = match spec.rsplit_once(':') {
        Some((d, p)) if p.chars().all(|c| c.is_ascii_digit()) && !p.is_empty() => {
            (d, p.parse::<u32>().ok())
        }
        _ => (spec, None),
    };
    if !devices(sys_root).iter().any(|d| d == dev) {
        return None;
    }
    let all = ports(sys_root, dev);
    let found = match port {
        Some(n) => all.iter().find(|p| p.port == n),
        None => all.first(),
    };
    Some(match found {
        Some(p) if p.state == "ACTIVE" => Ok(p.clone()),
        Some(p) => Err(format!(
            "{}:{} is {} (not ACTIVE): nothing to capture until the link is up",
            p.device,
            p.port,
            if p.state.is_empty() {
                "in an unknown state"
            } else {
                &p.state
            }
        )),
        None => Err(format!(
            "{dev} has no port {} (it has: {})",
            port.unwrap_or(1),
            all.iter()
                .map(|p| p.port.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    })
}

/// RDMA devices whose port uses netdev `iface` (hardware RoCE on that netdev bypasses the
/// kernel, so an AF_PACKET capture there sees none of it).
pub fn devices_of_netdev(sys_root: &Path, iface: &str) -> Vec<String> {
    let mut v = names(
        &sys_root
            .join("class/net")
            .join(iface)
            .join("device/infiniband"),
    );
    for dev in devices(sys_root) {
        if !v.contains(&dev)
            && ports(sys_root, &dev)
                .iter()
                .any(|p| p.netdev.as_deref() == Some(iface))
        {
            v.push(dev);
        }
    }
    v
}
