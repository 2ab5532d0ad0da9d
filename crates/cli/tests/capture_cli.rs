//! `capture` and `replay` error paths that need no traffic: RDMA devices resolved against
//! fixture sysfs trees (there is no RDMA hardware here), missing privileges, bad arguments.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::bin;

fn sys(host: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../doctor/tests/fixtures")
        .join(host)
        .join("sys")
}

fn run(host: &str, args: &[&str]) -> (bool, String) {
    let out = bin()
        .env("RDMASCOPE_SYSFS", sys(host))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn have_libibverbs() -> bool {
    [
        "/usr/lib/x86_64-linux-gnu/libibverbs.so.1",
        "/usr/lib64/libibverbs.so.1",
        "/usr/lib/libibverbs.so.1",
    ]
    .iter()
    .any(|p| std::path::Path::new(p).exists())
}

#[test]
fn an_rdma_device_without_libibverbs_says_what_to_install() {
    if have_libibverbs() {
        eprintln!(
            "NOTICE: libibverbs is installed here; the missing-library message is not tested"
        );
        return;
    }
    let (ok, err) = run("roce-good", &["capture", "-i", "mlx5_0", "-c", "1"]);
    assert!(!ok);
    assert!(
        err.contains("libibverbs.so.1") && err.contains("apt-get install"),
        "{err}"
    );
}

#[test]
fn an_rdma_port_that_does_not_exist_or_is_down_is_named() {
    let (ok, err) = run("roce-good", &["capture", "-i", "mlx5_0:2", "-c", "1"]);
    assert!(!ok);
    assert!(err.contains("mlx5_0 has no port 2 (it has: 1)"), "{err}");
    let (ok, err) = run("roce-bad", &["capture", "-i", "mlx5_0:1", "-c", "1"]);
    assert!(!ok);
    assert!(err.contains("mlx5_0:1 is DOWN (not ACTIVE)"), "{err}");
}

#[test]
fn capturing_on_the_netdev_of_an_rdma_device_warns_about_offload() {
    // ens1f0 exists only in the fixture, so the capture itself then fails: the warning
    // must come first, naming the RDMA device to capture from instead.
    let (ok, err) = run("roce-good", &["capture", "-i", "ens1f0", "-c", "1"]);
    assert!(!ok);
    let warn = err.find("bypasses the kernel").expect(&err);
    assert!(err.contains("rdmascope capture -i mlx5_0"), "{err}");
    let fail = err.find("no interface named \"ens1f0\"").expect(&err);
    assert!(warn < fail);
}

#[test]
fn without_cap_net_raw_capture_says_so_plainly() {
    let setpriv = Command::new("setpriv")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if !setpriv || !root {
        eprintln!("NOTICE: needs root and setpriv (util-linux) to drop privileges; skipped");
        return;
    }
    let out = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(env!("CARGO_BIN_EXE_rdmascope"))
        .args(["capture", "-i", "lo", "-c", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("Permission denied") && err.contains("setpriv") {
        eprintln!("NOTICE: the unprivileged user cannot run the test binary here; skipped");
        return;
    }
    assert!(!out.status.success());
    assert!(
        err.contains("needs CAP_NET_RAW") && err.contains("setcap"),
        "{err}"
    );
}

#[test]
fn bad_sizes_durations_and_filters_are_refused_before_capturing() {
    let (ok, err) = run(
        "roce-good",
        &["capture", "-i", "lo", "--duration", "5 parsecs"],
    );
    assert!(!ok && err.contains("unknown unit"), "{err}");
    let (ok, err) = run(
        "roce-good",
        &["capture", "-i", "lo", "-w", "x.pcapng", "--file-size", "0"],
    );
    assert!(!ok && err.contains("is zero"), "{err}");
    let (ok, err) = run("roce-good", &["capture", "-i", "lo", "--files", "3"]);
    assert!(!ok && err.contains("--file-size"), "{err}");
    let (ok, err) = run(
        "roce-good",
        &["capture", "-i", "lo", "-f", "udp port nonsense-port-name"],
    );
    assert!(
        !ok && err.contains("filter \"udp port nonsense-port-name\""),
        "{err}"
    );
    let (ok, err) = run(
        "roce-good",
        &["replay", "nonexistent.pcap", "-i", "lo", "--pps", "0"],
    );
    assert!(!ok && err.contains("positive rate"), "{err}");
}
