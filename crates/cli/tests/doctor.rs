//! `rdmascope doctor` end to end: fixture hosts (text snapshots, JSON, exit codes) and the
//! machine the tests run on.

mod common;

use common::bin;

fn fixtures() -> std::path::PathBuf {
    std::path::PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../doctor/tests/fixtures"
    ))
}

fn run(args: &[&str]) -> (String, i32) {
    let o = bin()
        .current_dir(fixtures())
        .arg("doctor")
        .args(args)
        .output()
        .unwrap();
    (
        String::from_utf8(o.stdout).unwrap(),
        o.status.code().unwrap_or(-1),
    )
}

#[test]
fn fixture_hosts_text() {
    for (host, code) in [
        ("roce-good", 0),
        ("roce-bad", 2),
        ("ib-hdr", 0),
        ("soft-roce", 2),
    ] {
        let (out, c) = run(&["--root", host]);
        assert_eq!(c, code, "{host}");
        insta::assert_snapshot!(format!("doctor_{}", host.replace('-', "_")), out);
    }
}

#[test]
fn a_root_that_is_no_directory_is_refused() {
    for (root, why) in [
        ("no-such-host", "No such file or directory"),
        ("roce-good/sys/class/net/eno1/mtu", "not a directory"),
    ] {
        let o = bin()
            .current_dir(fixtures())
            .args(["doctor", "--root", root])
            .output()
            .unwrap();
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(o.status.code(), Some(1), "{root}: {err}");
        assert!(o.stdout.is_empty(), "{root}");
        assert!(err.contains(&format!("--root {root}: ")), "{err}");
        assert!(err.contains(why), "{err}");
    }
}

#[test]
fn json_output() {
    let (out, c) = run(&["--root", "roce-bad", "--json"]);
    assert_eq!(c, 2);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema"], "rdmascope.doctor.v1");
    assert_eq!(
        v["devices"][0]["ports"][1]["hw_counters"]["out_of_sequence"],
        1234
    );
    assert!(v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["code"] == "mtu.roce_capped"));
}

#[test]
fn interval_reads_twice() {
    let (out, c) = run(&["--root", "roce-good", "--interval", "10ms"]);
    assert_eq!(c, 0);
    assert!(
        !out.contains("Counter rates"),
        "fixture counters do not move"
    );
}

#[test]
fn this_machine() {
    let o = bin().arg("doctor").output().unwrap();
    let out = String::from_utf8(o.stdout).unwrap();
    let has_rdma = std::fs::read_dir("/sys/class/infiniband").is_ok_and(|mut d| d.next().is_some());
    if has_rdma {
        assert!(matches!(o.status.code(), Some(0) | Some(2)));
    } else {
        assert_eq!(o.status.code(), Some(0), "{out}");
        assert!(
            out.contains("No RDMA devices") && out.contains("doctor.no_rdma_devices"),
            "{out}"
        );
    }
}

#[test]
fn nccl_logs() {
    let cases: [(&str, i32, &[&str]); 4] = [
        ("nccl/ib-run.log", 0, &[]),
        ("nccl/env-mismatch.log", 0, &["nccl.env_mismatch"]),
        ("nccl/socket-fallback.log", 2, &["nccl.socket_fallback"]),
        (
            "nccl/retry-exceeded.log",
            2,
            &["nccl.error", "nccl.gid_index", "nccl.retry_exceeded"],
        ),
    ];
    for (log, code, want) in cases {
        let o = bin()
            .current_dir(fixtures())
            .args(["doctor", "nccl", "--json", log])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(code), "{log}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let mut codes: Vec<&str> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["code"].as_str().unwrap())
            .collect();
        codes.sort();
        assert_eq!(codes, want, "{log}");
    }
    let o = bin()
        .current_dir(fixtures())
        .args(["doctor", "nccl", "--json", "nccl/ib-run.log"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let r0 = &v["ranks"][0];
    assert_eq!(
        (
            r0["rank"].as_u64(),
            r0["network"].as_str(),
            r0["gid_index"].as_str()
        ),
        (Some(0), Some("IB"), Some("3"))
    );
    assert_eq!(r0["hcas"][1], "mlx5_1:1/RoCE");
    assert_eq!(r0["env"]["NCCL_IB_HCA"], "mlx5_0,mlx5_1");
    let o = bin()
        .current_dir(fixtures())
        .args(["doctor", "nccl", "nccl/socket-fallback.log"])
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("Socket") && text.contains("what to do"));
    // The GID index of rank 2 is the odd one; a rank that echoed no NCCL_IB_TC and the
    // per-process NCCL_DEBUG_FILE are no mismatch.
    let o = bin()
        .current_dir(fixtures())
        .args(["doctor", "nccl", "--json", "nccl/env-mismatch.log"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = &v["findings"][0];
    assert_eq!(f["summary"], "NCCL_IB_GID_INDEX differs between ranks");
    assert_eq!(
        f["evidence"][0],
        "NCCL_IB_GID_INDEX: \"3\" on 2 ranks (rank 0 (gpu-a:4101), rank 1 (gpu-b:5202)); \"0\" on 1 rank (rank 2 (gpu-c:6303))"
    );
}

#[test]
fn compare_names_the_odd_host() {
    let o = bin()
        .current_dir(fixtures())
        .args(["doctor", "--root", "roce-good", "--json"])
        .output()
        .unwrap();
    let base: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let d = common::tmp_dir("doctor-compare");
    let mut paths = Vec::new();
    for (name, mtu, ecn3) in [
        ("node1", 4200, true),
        ("node2", 4200, true),
        ("node3", 1500, false),
    ] {
        let mut h = base.clone();
        h["hostname"] = name.into();
        h["netdevs"][0]["mtu"] = mtu.into();
        h["netdevs"][0]["roce_mtu"] = if mtu == 1500 { 1024 } else { 4096 }.into();
        h["netdevs"][0]["ecn_np"][3] = ecn3.into();
        h["netdevs"][0]["pfc"]["enabled"][3] = ecn3.into();
        let p = d.join(format!("{name}.json"));
        std::fs::write(&p, serde_json::to_string(&h).unwrap()).unwrap();
        paths.push(p);
    }
    let o = bin()
        .arg("doctor")
        .arg("compare")
        .args(&paths)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let text = String::from_utf8(o.stdout).unwrap();
    for s in [
        "netdev MTU",
        "RoCE MTU",
        "ECN np priorities",
        "PFC priorities",
        "node3: 1500",
        "node3: 1024",
    ] {
        assert!(text.contains(s), "missing {s} in\n{text}");
    }
    assert!(
        !text.contains("node1:") && !text.contains("node2:"),
        "{text}"
    );
    let o = bin()
        .arg("doctor")
        .arg("compare")
        .arg(&paths[0])
        .arg(&paths[1])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8(o.stdout)
        .unwrap()
        .contains("configured the same"));
}
