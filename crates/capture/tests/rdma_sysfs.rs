//! RDMA device enumeration against the doctor's fixture sysfs trees (no RDMA hardware here).
#![cfg(target_os = "linux")]

use std::path::PathBuf;

use rdmascope_capture::live::rdma;

fn sys(host: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../doctor/tests/fixtures")
        .join(host)
        .join("sys")
}

#[test]
fn lists_devices_and_ports() {
    assert_eq!(rdma::devices(&sys("roce-good")), ["mlx5_0"]);
    let ports = rdma::ports(&sys("roce-good"), "mlx5_0");
    assert_eq!(ports.len(), 1);
    assert_eq!(ports[0].port, 1);
    assert_eq!(ports[0].link_layer, "Ethernet");
    assert_eq!(ports[0].state, "ACTIVE");
    assert_eq!(ports[0].netdev.as_deref(), Some("ens1f0"));
    let ib = rdma::ports(&sys("ib-hdr"), &rdma::devices(&sys("ib-hdr"))[0]);
    assert!(ib[0].is_infiniband());
}

#[test]
fn resolves_device_and_port_names() {
    let root = sys("roce-good");
    let p = rdma::resolve(&root, "mlx5_0")
        .expect("an RDMA device")
        .unwrap();
    assert_eq!((p.device.as_str(), p.port), ("mlx5_0", 1));
    let p = rdma::resolve(&root, "mlx5_0:1")
        .expect("an RDMA device")
        .unwrap();
    assert_eq!(p.port, 1);
    let e = rdma::resolve(&root, "mlx5_0:2")
        .expect("an RDMA device")
        .unwrap_err();
    assert!(e.contains("no port 2") && e.contains("has: 1"), "{e}");
    assert!(
        rdma::resolve(&root, "ens1f0").is_none(),
        "a netdev is not an RDMA device"
    );
    assert!(rdma::resolve(&root, "eth9").is_none());
}

#[test]
fn a_port_that_is_down_is_refused_with_its_state() {
    let root = sys("roce-bad");
    for dev in rdma::devices(&root) {
        for p in rdma::ports(&root, &dev) {
            let r = rdma::resolve(&root, &format!("{}:{}", p.device, p.port)).unwrap();
            if p.state == "ACTIVE" {
                assert!(r.is_ok());
            } else {
                let e = r.unwrap_err();
                assert!(e.contains("not ACTIVE"), "{e}");
            }
        }
    }
}

#[test]
fn finds_the_rdma_device_behind_a_netdev() {
    assert_eq!(
        rdma::devices_of_netdev(&sys("roce-good"), "ens1f0"),
        ["mlx5_0"]
    );
    assert!(rdma::devices_of_netdev(&sys("roce-good"), "eno1").is_empty());
    let soft = sys("soft-roce");
    let devs = rdma::devices_of_netdev(&soft, "eth0");
    assert_eq!(
        devs,
        rdma::devices(&soft),
        "rxe is found through gid_attrs/ndevs"
    );
}

#[test]
fn an_empty_root_has_no_devices() {
    let root = std::env::temp_dir().join("rdmascope-empty-sysfs");
    assert!(rdma::devices(&root).is_empty());
    assert!(rdma::resolve(&root, "mlx5_0").is_none());
}
