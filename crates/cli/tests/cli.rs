//! End-to-end tests of `rdmascope show`: output styles (insta snapshots), filters, every
//! container and link type, and bad input.

mod common;

use std::io::Write;

use rdmascope_capture::{PcapWriter, PcapngWriter};

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// Frames from shared/reference/icrc-vectors.md (V2 CNP, V3 SEND, V6 WRITE, V7 ACK, V8 NAK,
/// V13 VLAN, V11 IPv6, S1 RoCEv1, P1 PFC, P2 PAUSE).
const FRAMES: &[&str] = &[
    "e41d2dab2bc27cfe90643b32080045c2003c718c4000401191610a0011010a001201000012b7002800008100ffff40000118000000000000000000000000000000000000000082fd002a",
    "0200000000020200000000010800456a003c12344000401114110a0000010a000002c00012b7002800000400ffff0000001180000100000102030405060708090a0b0c0d0e0f2cd26b04",
    "020000000002020000000001080045680044000140004011263e0a0000010a000002d00112b7003000000a00ffff000000c58000abcd00007f001234500000abcdef000000084142434445464748c5d2e1bd",
    "02000000000202000000000108004568003000024000401126510a0000020a000001d00112b7001c00001100ffff000000c60000abcd1f000005bd76e4cc",
    "02000000000202000000000108004568003000034000401126500a0000020a000001d00112b7001c00001100ffff000000c60000abce600000050eb791f6",
    "020000000002020000000001810060640800456a003c12344000401114110a0000010a000002c00012b7002800000400ffff0000001180000100000102030405060708090a0b0c0d0e0f2cd26b04",
    "02000000000202000000000186dd66a1234500281140fd000000000000000000000000000001fd000000000000000000000000000002c00012b7002800000400ffff0000001180000100000102030405060708090a0b0c0d0e0fc9325872",
    "02000000000202000000000189156000000000201b01fe800000000000000200000000000001fe8000000000000002000000000000020400ffff0000001180000100000102030405060708090a0b0c0d0e0f02e80e16",
    "0180c2000001020000000001880801010018000000000000ffff00000000000000000000000000000000000000000000000000000000000000000000",
    "0180c2000001020000000001880800011000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
];

use common::bin;

fn tmp(name: &str) -> std::path::PathBuf {
    common::tmp_dir("cli-test").join(name)
}

/// Writes the vector frames as a pcap; the last one is written again cut to 40 bytes.
fn vectors_pcap() -> std::path::PathBuf {
    // Tests run in parallel: each call writes its own file.
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let p = tmp(&format!("vectors-{n}.pcap"));
    let mut w = PcapWriter::new(std::fs::File::create(&p).unwrap(), 1, 65535).unwrap();
    for (i, h) in FRAMES.iter().enumerate() {
        let d = unhex(h);
        w.write(
            1_700_000_000_000_000_000 + i as u64 * 1500,
            d.len() as u32,
            &d,
        )
        .unwrap();
    }
    let d = unhex(FRAMES[2]);
    w.write(1_700_000_000_000_100_000, d.len() as u32, &d[..60])
        .unwrap();
    w.flush().unwrap();
    p
}

fn run(args: &[&str]) -> (String, String, bool) {
    let o = bin().args(args).output().unwrap();
    (
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
        o.status.success(),
    )
}

#[test]
fn one_line_output() {
    let p = vectors_pcap();
    let (out, err, ok) = run(&["show", p.to_str().unwrap()]);
    assert!(ok, "{err}");
    insta::assert_snapshot!("vectors_line", out);
}

#[test]
fn verbose_output() {
    let p = vectors_pcap();
    let (out, err, ok) = run(&[
        "show",
        "-V",
        "-Y",
        "frame.number == 3 || frame.number == 5",
        p.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    insta::assert_snapshot!("vectors_tree", out);
}

#[test]
fn json_output_is_ndjson_with_documented_keys() {
    let p = vectors_pcap();
    let (out, err, ok) = run(&["show", "--json", p.to_str().unwrap()]);
    assert!(ok, "{err}");
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/json.md"))
        .unwrap();
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), FRAMES.len() + 1);
    for obj in &lines {
        for k in obj.as_object().unwrap().keys() {
            assert!(
                docs.contains(&format!("`{k}`")),
                "key {k} is not documented in docs/json.md"
            );
        }
    }
    assert_eq!(lines[0]["bth.opcode"], 129);
    assert_eq!(lines[0]["bth.opname"], "CNP");
    assert_eq!(lines[0]["bth.becn"], 1);
    assert_eq!(lines[0]["bth.destqp"], 0x118);
    assert_eq!(lines[2]["reth.va"], 0x00007f0012345000u64);
    assert_eq!(lines[4]["aeth.syndrome"], 0x60);
    assert_eq!(lines[4]["aeth.nak"], "psn_sequence_error");
    assert_eq!(lines[5]["vlan.priority"], 3);
    assert_eq!(lines[5]["vlan.id"], 100);
    assert_eq!(lines[6]["ipv6.flow"], 0x12345);
    assert_eq!(lines[7]["rdma.encap"], "RoCEv1");
    assert_eq!(lines[8]["macc.cbfc.enbv"], 0x18);
    assert_eq!(lines[8]["macc.cbfc.pause_time.c3"], 65535);
    assert_eq!(lines[9]["macc.pause_time"], 4096);
    let last = &lines[FRAMES.len()];
    assert_eq!(last["frame.truncated"], 1);
    assert_eq!(last["icrc.status"], "truncated");
    assert!(last.get("frame.error").is_none());
    for l in &lines[..8] {
        assert_eq!(l["icrc.status"], "ok", "{l}");
    }
}

#[test]
fn filter_and_count() {
    let p = vectors_pcap();
    let p = p.to_str().unwrap();
    let (out, _, ok) = run(&[
        "show",
        "-Y",
        "bth.destqp == 0xc6 && bth.opcode == RC_ACKNOWLEDGE",
        p,
    ]);
    assert!(ok);
    assert_eq!(out.lines().count(), 2);
    let (out, _, _) = run(&["show", "-Y", "aeth.nak == psn_sequence_error", p]);
    assert_eq!(out.lines().count(), 1);
    let (out, _, _) = run(&["show", "-c", "3", p]);
    assert_eq!(out.lines().count(), 3);
    let (out, _, _) = run(&[
        "show",
        "-Y",
        "macc.opcode == 0x0101 || vlan.priority == 3",
        p,
    ]);
    assert_eq!(out.lines().count(), 2);
    let (_, err, ok) = run(&["show", "-Y", "bth.psn ==", p]);
    assert!(!ok);
    assert!(err.contains("display filter error at column"), "{err}");
    // A protocol name, as in Wireshark, matches the frames that have that layer.
    let (json, _, _) = run(&["show", "--json", p]);
    let with = |layer: &str| {
        json.lines()
            .filter(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v.as_object()
                    .unwrap()
                    .keys()
                    .any(|k| k.starts_with(&format!("{layer}.")))
            })
            .count()
    };
    let total = json.lines().count();
    for (filter, layer) in [
        ("bth", "bth"),
        ("infiniband", "bth"),
        ("aeth", "aeth"),
        ("reth", "reth"),
        ("macc", "macc"),
        ("vlan", "vlan"),
        ("ip", "ip"),
        ("ipv6", "ipv6"),
    ] {
        let n = with(layer);
        assert!(n > 0 && n < total, "{layer}: {n} of {total}");
        let (out, _, _) = run(&["show", "-Y", filter, p]);
        assert_eq!(out.lines().count(), n, "-Y {filter}");
        let (out, _, _) = run(&["show", "-Y", &format!("!{filter}"), p]);
        assert_eq!(out.lines().count(), total - n, "-Y !{filter}");
    }
    // A protocol and one of its fields in one filter each get their value.
    let (out, _, _) = run(&["show", "-Y", "bth && bth.destqp == 0xc6", p]);
    assert_eq!(out.lines().count(), 2);
}

#[test]
fn gzip_is_read_transparently() {
    let p = vectors_pcap();
    let raw = std::fs::read(&p).unwrap();
    let gz = tmp("vectors.pcap.gz");
    let mut e = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::fast(),
    );
    e.write_all(&raw).unwrap();
    e.finish().unwrap();
    // A name without .gz: detection is by magic.
    let renamed = tmp("vectors-compressed.bin");
    std::fs::rename(&gz, &renamed).unwrap();
    assert_eq!(
        run(&["show", p.to_str().unwrap()]).0,
        run(&["show", renamed.to_str().unwrap()]).0
    );
}

#[test]
fn pcapng_sections_interfaces_and_link_types() {
    let p = tmp("multi.pcapng");
    let mut buf = Vec::new();
    {
        let mut w = PcapngWriter::new(&mut buf, Some("section one")).unwrap();
        let eth = w
            .add_interface(1, 0, Some("eth0"), Some(100_000_000_000))
            .unwrap();
        let raw = w.add_interface(101, 0, Some("raw"), None).unwrap();
        let v3 = unhex(FRAMES[1]);
        w.write(eth, 1_000_000_001, v3.len() as u32, &v3).unwrap();
        w.write(raw, 1_000_000_002, (v3.len() - 14) as u32, &v3[14..])
            .unwrap();
    }
    {
        // A second section with Linux cooked v1 and v2 interfaces.
        let mut w = PcapngWriter::new(&mut buf, None).unwrap();
        let sll = w.add_interface(113, 0, None, None).unwrap();
        let sll2 = w.add_interface(276, 0, None, None).unwrap();
        let v3 = unhex(FRAMES[1]);
        let mut a = vec![0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x00];
        a.extend_from_slice(&v3[14..]);
        w.write(sll, 2_000_000_000, a.len() as u32, &a).unwrap();
        let mut b = vec![
            0x08, 0x00, 0, 0, 0, 0, 0, 3, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0,
        ];
        b.extend_from_slice(&v3[14..]);
        w.write(sll2, 2_000_000_001, b.len() as u32, &b).unwrap();
    }
    std::fs::write(&p, &buf).unwrap();
    let (out, err, ok) = run(&["show", "--json", p.to_str().unwrap()]);
    assert!(ok, "{err}");
    let v: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(v.len(), 4);
    let ifaces: Vec<u64> = v
        .iter()
        .map(|x| x["frame.interface_id"].as_u64().unwrap())
        .collect();
    assert_eq!(ifaces, [0, 1, 2, 3]);
    for x in &v {
        assert_eq!(x["bth.opcode"], 4);
        assert_eq!(x["icrc.status"], "ok");
    }
    assert_eq!(v[0]["frame.time_epoch"].to_string(), "1.000000001");
    assert_eq!(v[2]["sll.etype"], 0x0800);
    assert_eq!(v[3]["sll.ifindex"], 3);
}

#[test]
fn nanosecond_and_big_endian_pcap() {
    // Big-endian microsecond pcap with one raw-IPv4 (228) record.
    let v3 = unhex(FRAMES[1]);
    let ip = &v3[14..];
    let mut f = Vec::new();
    f.extend_from_slice(&0xa1b2c3d4u32.to_be_bytes());
    f.extend_from_slice(&2u16.to_be_bytes());
    f.extend_from_slice(&4u16.to_be_bytes());
    f.extend_from_slice(&[0; 8]);
    f.extend_from_slice(&65535u32.to_be_bytes());
    f.extend_from_slice(&228u32.to_be_bytes());
    f.extend_from_slice(&5u32.to_be_bytes());
    f.extend_from_slice(&7u32.to_be_bytes());
    f.extend_from_slice(&(ip.len() as u32).to_be_bytes());
    f.extend_from_slice(&(ip.len() as u32).to_be_bytes());
    f.extend_from_slice(ip);
    let p = tmp("be.pcap");
    std::fs::write(&p, &f).unwrap();
    let (out, err, ok) = run(&["show", "--json", p.to_str().unwrap()]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(v["frame.time_epoch"].to_string(), "5.000007");
    assert_eq!(v["icrc.status"], "ok");
}

#[test]
fn truncated_file_prints_what_it_can_then_fails() {
    let p = vectors_pcap();
    let raw = std::fs::read(&p).unwrap();
    let cut = tmp("cut.pcap");
    std::fs::write(&cut, &raw[..raw.len() - 30]).unwrap();
    let (out, err, ok) = run(&["show", cut.to_str().unwrap()]);
    assert!(!ok);
    assert_eq!(out.lines().count(), FRAMES.len());
    assert!(err.contains("cut.pcap"), "{err}");
    assert!(
        err.contains(&format!("record {}", FRAMES.len() + 1)),
        "{err}"
    );
    assert!(err.contains("byte offset"), "{err}");
}

#[test]
fn corrupt_record_length_is_refused() {
    let p = vectors_pcap();
    let mut raw = std::fs::read(&p).unwrap();
    raw[24 + 8..24 + 12].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
    let bad = tmp("corrupt.pcap");
    std::fs::write(&bad, &raw).unwrap();
    let (_, err, ok) = run(&["show", bad.to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("corrupt record 1 at byte offset 24"), "{err}");
}

#[test]
fn non_capture_and_unknown_link_type_are_refused() {
    let t = tmp("notes.txt");
    std::fs::write(&t, "hello, this is not a capture file\n").unwrap();
    let (_, err, ok) = run(&["show", t.to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("not a capture file"), "{err}");
    let u = tmp("wifi.pcap");
    let f = PcapWriter::new(Vec::new(), 105, 65535)
        .unwrap()
        .into_inner();
    std::fs::write(&u, f).unwrap();
    let (_, err, ok) = run(&["show", u.to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("link type 105"), "{err}");
    let (_, err, ok) = run(&["show", "/nonexistent/x.pcap"]);
    assert!(!ok);
    assert!(err.contains("/nonexistent/x.pcap"), "{err}");
    // The I/O error is in the capture error's message and is its source: said once.
    let (_, err, ok) = run(&["analyze", "/nonexistent/x.pcap"]);
    assert!(!ok);
    assert!(
        err.starts_with("rdmascope: error: /nonexistent/x.pcap: "),
        "{err}"
    );
    assert_eq!(err.matches("(os error 2)").count(), 1, "{err}");
}

#[test]
fn ib_linktype_247() {
    // I1 from icrc-vectors.md with its VCRC (little-endian).
    let mut d =
        unhex("00020002000a00010400ffff0000001180000100000102030405060708090a0b0c0d0e0f88db96b9");
    d.extend_from_slice(&0xc794u16.to_le_bytes());
    let p = tmp("ib.pcap");
    let mut w = PcapWriter::new(std::fs::File::create(&p).unwrap(), 247, 65535).unwrap();
    w.write(0, d.len() as u32, &d).unwrap();
    w.flush().unwrap();
    let (out, err, ok) = run(&["show", "--json", p.to_str().unwrap()]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["lrh.dlid"], 2);
    assert_eq!(v["icrc.status"], "ok");
    assert_eq!(v["vcrc.status"], "ok");
}

#[test]
fn corpus_snapshots() {
    let Some(dir) = common::corpus() else { return };
    let cases: &[(&str, &[&str])] = &[
        ("rocev2_softroce_rdmacm_write-read.pcap", &[]),
        ("ib_erf_sm-sa-cm-ipoib_rc-send-ack.pcap", &["-c", "12"]),
        ("rocev1_ethertype8915_rc-send_nfs-rdma.pcap", &["-c", "6"]),
        (
            "rocev2_nvme-rdma_discover_cm.pcap",
            &["-Y", "cm.message || bth.opcode == RC_RDMA_WRITE_FIRST"],
        ),
        ("ipoib_linktype-ipoib_icmp-tcp-arp.pcap", &["-c", "5"]),
        ("lldp_dcbx_pfc-config.pcap", &[]),
    ];
    let mut all = String::new();
    for (file, extra) in cases {
        let path = dir.join(file);
        let mut args = vec!["show"];
        args.extend_from_slice(extra);
        args.push(path.to_str().unwrap());
        let (out, err, ok) = run(&args);
        assert!(ok, "{file}: {err}");
        all.push_str(&format!("### {file} {}\n{out}", extra.join(" ")));
    }
    insta::assert_snapshot!("corpus_line", all);
    let f = dir.join("rocev2_softroce_rdmacm_write-read.pcap");
    let (out, _, ok) = run(&[
        "show",
        "-V",
        "-Y",
        "frame.number == 1 || frame.number == 9",
        f.to_str().unwrap(),
    ]);
    assert!(ok);
    insta::assert_snapshot!("corpus_tree", out);
}

#[test]
fn every_field_name_is_documented() {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/json.md"))
        .unwrap();
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../wire/src/fields.rs"
    ))
    .unwrap();
    let mut n = 0;
    for part in src.split('"').skip(1).step_by(2) {
        let looks_like_key = part
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '_')
            && (part.contains('.') || matches!(part, "immdt" | "ieth" | "icrc" | "vcrc" | "lldp"));
        if looks_like_key {
            assert!(
                docs.contains(&format!("`{part}`")),
                "{part} is not documented in docs/json.md"
            );
            n += 1;
        }
    }
    assert!(n > 200, "found only {n} keys");
}

fn single_frame_pcap(name: &str, linktype: u32, data: &[u8]) -> std::path::PathBuf {
    let p = tmp(name);
    let mut w = PcapWriter::new(std::fs::File::create(&p).unwrap(), linktype, 65535).unwrap();
    w.write(0, data.len() as u32, data).unwrap();
    w.flush().unwrap();
    p
}

fn json_of(p: &std::path::Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["show", "--json"];
    args.extend_from_slice(extra);
    args.push(p.to_str().unwrap());
    let (out, err, ok) = run(&args);
    assert!(ok, "{err}");
    serde_json::from_str(out.lines().next().unwrap()).unwrap()
}

#[test]
fn pcapng_simple_packet_blocks() {
    let mut buf = Vec::new();
    let mut w = PcapngWriter::new(&mut buf, None).unwrap();
    w.add_interface(1, 0, None, None).unwrap();
    drop(w);
    let v3 = unhex(FRAMES[1]);
    let pad = (4 - v3.len() % 4) % 4;
    let len = (16 + v3.len() + pad) as u32;
    buf.extend_from_slice(&3u32.to_le_bytes());
    buf.extend_from_slice(&len.to_le_bytes());
    buf.extend_from_slice(&(v3.len() as u32).to_le_bytes());
    buf.extend_from_slice(&v3);
    buf.extend(std::iter::repeat_n(0u8, pad));
    buf.extend_from_slice(&len.to_le_bytes());
    let p = tmp("spb.pcapng");
    std::fs::write(&p, &buf).unwrap();
    let v = json_of(&p, &[]);
    assert_eq!(v["bth.opcode"], 4);
    assert_eq!(v["icrc.status"], "ok");
}

#[test]
fn erf_ethernet_records() {
    let v3 = unhex(FRAMES[1]);
    let mut d = vec![0u8; 16];
    d[8] = 2; // ERF type 2: Ethernet
    d[10..12].copy_from_slice(&((18 + v3.len()) as u16).to_be_bytes());
    d[14..16].copy_from_slice(&(v3.len() as u16).to_be_bytes());
    d.extend_from_slice(&[0, 0]); // offset/pad
    d.extend_from_slice(&v3);
    let v = json_of(&single_frame_pcap("erf-eth.pcap", 197, &d), &[]);
    assert_eq!(v["erf.types.type"], 2);
    assert_eq!(v["bth.opcode"], 4);
    assert_eq!(v["icrc.status"], "ok");
}

#[test]
fn qinq_tags() {
    let v3 = unhex(FRAMES[1]);
    let mut d = v3[..12].to_vec();
    d.extend_from_slice(&[0x88, 0xa8, 0x00, 0x0a, 0x81, 0x00, 0x60, 0x64]);
    d.extend_from_slice(&v3[12..]);
    let v = json_of(&single_frame_pcap("qinq.pcap", 1, &d), &[]);
    assert_eq!(
        (
            v["vlan.id"].as_u64(),
            v["vlan.inner.id"].as_u64(),
            v["vlan.inner.priority"].as_u64()
        ),
        (Some(10), Some(100), Some(3))
    );
    assert_eq!(v["icrc.status"], "ok");
}

#[test]
fn roce_port_option_and_raw_ipv6() {
    // V3 sent to UDP port 5000: not RoCEv2 unless asked; its ICRC recomputed for the new port.
    let mut d = unhex(FRAMES[1]);
    d[36..38].copy_from_slice(&5000u16.to_be_bytes());
    let icrc = rdmascope_wire::icrc::rocev2(&d[14..d.len() - 4], 20, false).unwrap();
    let n = d.len();
    d[n - 4..].copy_from_slice(&icrc.to_le_bytes());
    let p = single_frame_pcap("port5000.pcap", 1, &d);
    assert!(json_of(&p, &[]).get("bth.opcode").is_none());
    let v = json_of(&p, &["--roce-port", "5000"]);
    assert_eq!(v["bth.opcode"], 4);
    assert_eq!(v["icrc.status"], "ok");
    // V11 as LINKTYPE_IPV6 (229).
    let v11 = unhex(FRAMES[6]);
    let v = json_of(&single_frame_pcap("raw6.pcap", 229, &v11[14..]), &[]);
    assert_eq!(v["ipv6.flow"], 0x12345);
    assert_eq!(v["icrc.status"], "ok");
}
