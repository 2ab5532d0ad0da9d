//! The doctor against fixture sysfs trees.

use std::collections::BTreeSet;
use std::path::PathBuf;

use rdmascope_doctor::{check, inspect, rates, read, Severity};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn codes(h: &rdmascope_doctor::Host) -> BTreeSet<String> {
    h.findings
        .iter()
        .filter(|f| f.severity != Severity::Info)
        .map(|f| f.code.clone())
        .collect()
}

#[test]
fn a_well_configured_roce_host_has_no_warning() {
    let h = inspect(&fixture("roce-good"), None);
    assert!(codes(&h).is_empty(), "{:?}", h.findings);
    // The link leading out of the root is not a device.
    assert_eq!(
        h.devices
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>(),
        ["mlx5_0"]
    );
    let p = &h.devices[0].ports[0];
    assert_eq!(p.netdev.as_deref(), Some("ens1f0"));
    assert_eq!(p.gids.len(), 4);
    assert_eq!(p.gids[3].kind.as_deref(), Some("RoCE v2"));
    assert_eq!(p.gids[3].ipv4.as_deref(), Some("10.0.0.1"));
    assert_eq!(p.gids[1].gid, "fe80::e42:a1ff:fe12:3456");
    let n = h.netdevs.iter().find(|n| n.name == "ens1f0").unwrap();
    assert_eq!((n.mtu, n.roce_mtu), (Some(4200), Some(4096)));
    assert!(n.ecn_np.unwrap()[3]);
    let pfc = n.pfc.as_ref().expect("PFC from the saved dcb output");
    assert_eq!(
        pfc.enabled,
        [false, false, false, true, false, false, false, false]
    );
    assert_eq!(n.trust.as_deref(), Some("dscp"));
    assert_eq!(n.roce_dscp_priority, Some(3));
    assert_eq!(n.pause_counters.get("rx_prio3_pause"), Some(&0));
    assert!(h.modules.contains(&"mlx5_ib".to_string()));
    assert_eq!(h.hostname.as_deref(), Some("roce-good"));
}

#[test]
fn the_classic_mistakes_are_each_found() {
    let h = inspect(&fixture("roce-bad"), None);
    let want: BTreeSet<String> = [
        "port.down",
        "port.not_linkup",
        "counters.loss",
        "counters.qp_errors",
        "ecn.disabled",
        "gid.no_rocev2",
        "mtu.mismatch",
        "mtu.roce_capped",
        "pfc.disabled",
        "pfc.priority_mismatch",
        "trust.mismatch",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(codes(&h), want);
}

#[test]
fn an_infiniband_hdr_host() {
    let h = inspect(&fixture("ib-hdr"), None);
    assert!(codes(&h).is_empty(), "{:?}", h.findings);
    let p = &h.devices[0].ports[0];
    assert_eq!((p.lid, p.sm_lid), (Some(7), Some(1)));
    assert_eq!(p.pkeys, vec![0xffff, 0x8001]);
    assert_eq!(p.rate.as_deref(), Some("200 Gb/sec (4X HDR)"));
    // IPoIB's MTU is not a RoCE MTU.
    assert!(h.netdevs.iter().all(|n| n.roce_mtu.is_none()));
}

#[test]
fn a_soft_roce_host() {
    let h = inspect(&fixture("soft-roce"), None);
    assert_eq!(h.devices[0].name, "rxe0");
    assert_eq!(h.devices[0].ports[0].netdev.as_deref(), Some("eth0"));
    assert!(h.modules.contains(&"rdma_rxe".to_string()));
    // Its saved nftables rules drop UDP 4791: Soft-RoCE goes through the host's firewall.
    assert_eq!(
        codes(&h),
        BTreeSet::from(["firewall.blocks_rocev2".to_string()])
    );
    assert_eq!(h.firewall_sources, ["/etc/nftables.conf"]);
}

#[test]
fn limited_partition_membership_is_flagged() {
    let mut h = read(&fixture("ib-hdr"));
    h.devices[0].ports[0].pkeys.push(0x7fff);
    check(&mut h);
    assert!(codes(&h).contains("pkey.limited_member"));
}

/// Work requests that failed for good (a remote access error here) are a warning since the
/// driver loaded and critical while they grow; a zero counter says nothing.
#[test]
fn qp_error_counters_are_found() {
    let a = read(&fixture("roce-bad"));
    let mut h = a.clone();
    check(&mut h);
    let f = h.findings.iter().find(|f| f.code == "counters.qp_errors");
    assert_eq!(
        f.map(|f| (f.severity, f.evidence.clone())),
        Some((
            Severity::Warning,
            vec!["req_remote_access_errors = 7".to_string()]
        ))
    );
    let mut b = a.clone();
    *b.devices[0].ports[1]
        .hw_counters
        .get_mut("req_remote_access_errors")
        .unwrap() += 10;
    b.rates = rates(&a, &b, 5.0);
    check(&mut b);
    assert!(b.findings.iter().any(|f| f.code == "counters.qp_errors"
        && f.severity == Severity::Critical
        && f.summary
            .contains("req_remote_access_errors grows at 2.0/s")));
}

#[test]
fn growing_loss_counters_are_critical() {
    let a = read(&fixture("roce-bad"));
    let mut b = a.clone();
    *b.devices[0].ports[1]
        .hw_counters
        .get_mut("out_of_sequence")
        .unwrap() += 500;
    let r = rates(&a, &b, 5.0);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].counter, "out_of_sequence");
    assert_eq!(r[0].per_second, 100.0);
    b.rates = r;
    check(&mut b);
    assert!(b
        .findings
        .iter()
        .any(|f| f.code == "counters.loss" && f.severity == Severity::Critical));
}

#[test]
fn firewall_rule_lines() {
    use rdmascope_doctor::blocks_rocev2;
    assert!(blocks_rocev2("udp dport 4791 drop"));
    assert!(blocks_rocev2(
        "ip saddr 10.0.0.0/8 udp dport { 4791, 53 } reject"
    ));
    assert!(blocks_rocev2("-A INPUT -p udp -m udp --dport 4791 -j DROP"));
    assert!(blocks_rocev2(
        "-A INPUT -p udp --dport 4791 -j REJECT --reject-with icmp-port-unreachable"
    ));
    assert!(!blocks_rocev2("udp dport 4791 accept"));
    assert!(!blocks_rocev2("-A INPUT -p tcp --dport 4791 -j DROP"));
    assert!(!blocks_rocev2("udp dport 53 drop"));
}

#[test]
fn pfc_and_trust_mistakes_name_the_interface_and_priorities() {
    let h = inspect(&fixture("roce-bad"), None);
    let find = |code: &str| {
        h.findings
            .iter()
            .find(|f| f.code == code)
            .unwrap_or_else(|| panic!("{code}"))
    };
    let m = find("pfc.priority_mismatch");
    assert!(
        m.summary.contains("ens1f0")
            && m.summary.contains("priority 4")
            && m.summary.contains("uses priority 3"),
        "{}",
        m.summary
    );
    assert!(find("pfc.disabled").summary.contains("ens1f1"));
    let t = find("trust.mismatch");
    assert!(
        t.evidence.contains(&"ens1f0: trust dscp".to_string())
            && t.evidence.contains(&"ens1f1: trust pcp".to_string())
    );
    assert!(find("counters.pause")
        .evidence
        .iter()
        .any(|e| e == "rx_prio3_pause = 48213"));
}

#[test]
fn hosts_without_saved_dcb_output_say_not_available() {
    let h = inspect(&fixture("soft-roce"), None);
    assert!(h.netdevs[0].pfc.is_none());
    assert!(
        h.not_available
            .iter()
            .any(|s| s.contains("eth0: PFC and trust mode: not available on this host")),
        "{:?}",
        h.not_available
    );
    assert!(h
        .not_available
        .iter()
        .any(|s| s.contains("eth0: per-priority pause counters: not available on this host")));
}

#[test]
fn growing_pause_counters_are_a_warning() {
    let before = rdmascope_doctor::read(&fixture("roce-bad"));
    let mut after = before.clone();
    let n = after
        .netdevs
        .iter_mut()
        .find(|n| n.name == "ens1f1")
        .unwrap();
    *n.pause_counters.get_mut("rx_prio3_pause").unwrap() += 5000;
    after.rates = rdmascope_doctor::rates(&before, &after, 5.0);
    rdmascope_doctor::check(&mut after);
    let f = after
        .findings
        .iter()
        .find(|f| f.code == "counters.pause" && f.severity == rdmascope_doctor::Severity::Warning)
        .expect("a warning");
    assert!(
        f.summary.contains("rx_prio3_pause grows at 1000.0/s"),
        "{}",
        f.summary
    );
}

/// The live kernel paths, on a veth pair made for the test (root only): ethtool statistics come
/// back, and DCB netlink answers "not supported" for a driver without DCB.
#[cfg(target_os = "linux")]
#[test]
fn live_kernel_interfaces_on_a_veth() {
    use std::process::Command;
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if !root || Command::new("ip").arg("-V").output().is_err() {
        eprintln!("NOTICE: needs root and iproute2; skipping the live DCB/ethtool test");
        return;
    }
    let a = format!("rsdoc{}", std::process::id() % 100_000);
    let b = format!("{a}p");
    struct Del(String);
    impl Drop for Del {
        fn drop(&mut self) {
            let _ = Command::new("ip").args(["link", "del", &self.0]).output();
        }
    }
    let ok = Command::new("ip")
        .args(["link", "add", &a, "type", "veth", "peer", "name", &b])
        .status()
        .unwrap();
    assert!(ok.success());
    let _guard = Del(a.clone());
    let stats = rdmascope_doctor::kernel::ethtool_stats(&a).expect("veth has ethtool statistics");
    assert!(stats.contains_key("peer_ifindex"), "{stats:?}");
    let e = rdmascope_doctor::kernel::dcb(&a).expect_err("veth has no DCB");
    assert!(e.contains("not supported"), "{e}");
    let e = rdmascope_doctor::kernel::ethtool_stats("rdmascope-none0").expect_err("no such device");
    assert!(e.contains("No such device"), "{e}");
}
