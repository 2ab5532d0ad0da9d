//! Decoding never panics on any bytes, for every link type, and a snaplen cut never turns into
//! a decode error: it is reported as truncation.

use proptest::prelude::*;
use rdmascope_wire::fields::{self, RecordMeta};
use rdmascope_wire::filter::Filter;
use rdmascope_wire::{DecodeOptions, Frame, IcrcStatus};

const LINKTYPES: [u32; 11] = [1, 12, 14, 101, 113, 197, 242, 247, 228, 229, 276];

/// V3 of icrc-vectors.md: RC SEND Only over IPv4.
const V3: &str = "0200000000020200000000010800456a003c12344000401114110a0000010a000002c00012b7002800000400ffff0000001180000100000102030405060708090a0b0c0d0e0f2cd26b04";
/// V6: RDMA WRITE Only with RETH.
const V6: &str = "020000000002020000000001080045680044000140004011263e0a0000010a000002d00112b7003000000a00ffff000000c58000abcd00007f001234500000abcdef000000084142434445464748c5d2e1bd";
/// S1: RoCEv1.
const S1: &str = "02000000000202000000000189156000000000201b01fe800000000000000200000000000001fe8000000000000002000000000000020400ffff0000001180000100000102030405060708090a0b0c0d0e0f02e80e16";

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// `tunnel` then `inner`, behind Ethernet and an IPv4 header of protocol `proto`.
fn behind(proto: u8, tunnel: &[u8], inner: &[u8]) -> Vec<u8> {
    let [hi, lo] = ((20 + tunnel.len() + inner.len()) as u16).to_be_bytes();
    let mut f = unhex("02aa0000000102bb000000020800");
    f.extend_from_slice(&[0x45, 0, hi, lo, 0, 0, 0x40, 0, 64, proto, 0, 0]);
    f.extend_from_slice(&[192, 168, 9, 1, 192, 168, 9, 2]);
    f.extend_from_slice(tunnel);
    f.extend_from_slice(inner);
    f
}

/// `inner` mirrored by a switch: GRE with a sequence number, ERSPAN Type II session 5.
fn mirrored(inner: &[u8]) -> Vec<u8> {
    behind(47, &unhex("100088be000000011064600500000007"), inner)
}

/// `inner` in VXLAN: UDP to port 4789, VXLAN with VNI 0x1234.
fn in_vxlan(inner: &[u8]) -> Vec<u8> {
    let [hi, lo] = ((16 + inner.len()) as u16).to_be_bytes();
    let mut t = vec![0xc3, 0x50, 0x12, 0xb5, hi, lo, 0, 0];
    t.extend_from_slice(&unhex("0800000000123400"));
    behind(17, &t, inner)
}

fn sample(which: usize) -> Vec<u8> {
    match which {
        3 => mirrored(&unhex(V3)),
        4 => in_vxlan(&unhex(V6)),
        w => unhex([V3, V6, S1][w]),
    }
}

fn touch_all(f: &Frame<'_>) {
    let m = RecordMeta::default();
    fields::visit(&m, f, &mut |_, v| {
        let _ = v.to_string();
    });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn random_bytes_never_panic(lt in proptest::sample::select(&LINKTYPES[..]), data in proptest::collection::vec(any::<u8>(), 0..400)) {
        let f = Frame::decode(lt, &data, data.len() as u32, &DecodeOptions::default());
        touch_all(&f);
    }

    #[test]
    fn mutated_rdma_frames_never_panic(which in 0usize..5, flips in proptest::collection::vec((0usize..200, any::<u8>()), 1..6)) {
        let mut data = sample(which);
        for (i, x) in flips {
            let n = data.len();
            data[i % n] ^= x;
        }
        let f = Frame::decode(1, &data, data.len() as u32, &DecodeOptions::default());
        touch_all(&f);
    }

    #[test]
    fn snaplen_cut_is_truncation_not_error(which in 0usize..5, cut in 0usize..170) {
        let data = sample(which);
        let cut = cut.min(data.len());
        let f = Frame::decode(1, &data[..cut], data.len() as u32, &DecodeOptions::default());
        prop_assert!(f.error.is_none(), "cut at {}: {:?}", cut, f.error);
        prop_assert!(f.truncated || cut == data.len());
        if f.bth.is_some() && cut < data.len() {
            prop_assert_eq!(f.icrc, Some(IcrcStatus::Truncated));
            // The opcode fixes the extension headers' length: the payload's length is known
            // wherever after the BTH the cut falls.
            let whole = Frame::decode(1, &data, data.len() as u32, &DecodeOptions::default());
            prop_assert_eq!(f.payload_len, whole.payload_len, "cut at {}", cut);
        }
        touch_all(&f);
    }

    #[test]
    fn filters_never_panic(src in "[a-z._0-9 =!<>&|()\"x]{0,40}") {
        if let Ok(flt) = Filter::new(&src) {
            let data = unhex(V3);
            let f = Frame::decode(1, &data, data.len() as u32, &DecodeOptions::default());
            let _ = flt.matches(&RecordMeta::default(), &f);
        }
    }
}

/// A native IB frame (LINKTYPE_INFINIBAND) cut inside its GRH: no BTH, its VCRC cut too.
#[test]
fn ib_frame_cut_before_its_bth_has_its_vcrc_cut() {
    let s1 = unhex(S1);
    // LRH: VL 0, LNH 3 (GRH follows), DLID 2, PktLen 20 words (LRH, GRH, BTH to ICRC), SLID 1;
    // then S1's GRH onwards and a VCRC.
    let mut data = unhex("0003000200140001");
    data.extend_from_slice(&s1[14..]);
    data.extend_from_slice(&[0, 0]);
    assert_eq!(data.len(), 20 * 4 + 2);
    for cut in [8, 30, 48, 55] {
        let f = Frame::decode(
            247,
            &data[..cut],
            data.len() as u32,
            &DecodeOptions::default(),
        );
        assert!(f.error.is_none(), "cut at {cut}: {:?}", f.error);
        assert!(f.bth.is_none(), "cut at {cut}");
        assert_eq!(f.vcrc, Some(IcrcStatus::Truncated), "cut at {cut}");
    }
    let f = Frame::decode(247, &data, data.len() as u32, &DecodeOptions::default());
    assert!(f.bth.is_some());
    assert!(f.vcrc.is_some_and(|v| v != IcrcStatus::Truncated));
}

#[test]
fn filter_examples() {
    let data = unhex(V6);
    let f = Frame::decode(1, &data, data.len() as u32, &DecodeOptions::default());
    let m = RecordMeta {
        number: 7,
        ..Default::default()
    };
    let t = |s: &str| Filter::new(s).unwrap().matches(&m, &f);
    assert!(t("bth.destqp == 0xc5 && bth.opcode == RC_RDMA_WRITE_ONLY"));
    assert!(t("reth.dmalen == 8 and reth.r_key == 0xabcdef"));
    assert!(t("bth.transport == RC && !aeth"));
    assert!(t("ip.src == 10.0.0.1 && grh.sgid || frame.number >= 7"));
    assert!(t("icrc.status == ok"));
    assert!(t("infiniband.bth.ackreq == 1"));
    assert!(!t("bth.opcode == RC_ACKNOWLEDGE"));
    assert!(!t("bth.psn > 0xabcd"));
    assert!(t("bth.psn == 43981"));
    assert!(t("eth.src == 02:00:00:00:00:01"));
    assert!(t("rdma.encap == RoCEv2"));
}

#[test]
fn padded_zero_length_send_locates_icrc_by_length() {
    // V14: a 58-byte frame padded to 60.
    let data = unhex("02000000000202000000000108004568002c00064000401126510a0000010a000002c00012b7001800000400ffff00000011000001012ea788460000");
    let f = Frame::decode(1, &data, 60, &DecodeOptions::default());
    assert_eq!(f.icrc, Some(IcrcStatus::Ok));
    assert_eq!(f.payload_len, 0);
}

/// The mirrored vector, and a vector in VXLAN, decode as the vectors themselves, inside their
/// tunnels.
#[test]
fn mirrored_frame_decodes_inside_its_tunnel() {
    let data = sample(3);
    let f = Frame::decode(1, &data, data.len() as u32, &DecodeOptions::default());
    let direct = unhex(V3);
    let d = Frame::decode(1, &direct, direct.len() as u32, &DecodeOptions::default());
    let t = f.tunnel.expect("a tunnel");
    assert_eq!((t.erspan.map(|e| e.session), t.inner_at), (Some(5), 50));
    assert_eq!(t.ipv4.map(|ip| ip.src), Some([192, 168, 9, 1]));
    assert_eq!(
        (f.ipv4, f.udp, f.bth, f.icrc),
        (d.ipv4, d.udp, d.bth, d.icrc)
    );
    assert_eq!(f.icrc, Some(IcrcStatus::Ok));
    assert!(f.error.is_none() && !f.truncated);
    let m = RecordMeta::default();
    let hit = |s: &str, f: &Frame<'_>| Filter::new(s).unwrap().matches(&m, f);
    assert!(hit(
        "erspan.spanid == 5 && gre.proto == 0x88be && ip.src == 10.0.0.1",
        &f
    ));
    assert!(!hit("vxlan", &f));
    let data = sample(4);
    let f = Frame::decode(1, &data, data.len() as u32, &DecodeOptions::default());
    let direct = unhex(V6);
    let d = Frame::decode(1, &direct, direct.len() as u32, &DecodeOptions::default());
    let t = f.tunnel.expect("a tunnel");
    assert_eq!(
        (t.vxlan.map(|v| v.vni), t.udp.map(|u| u.dst_port)),
        (Some(0x1234), Some(4789))
    );
    assert_eq!(
        (f.ipv4, f.udp, f.bth, f.ext.reth, f.icrc),
        (d.ipv4, d.udp, d.bth, d.ext.reth, d.icrc)
    );
    assert_eq!(f.icrc, Some(IcrcStatus::Ok));
    assert!(hit(
        "vxlan.vni == 0x1234 && reth.dmalen == 8 && !erspan",
        &f
    ));
}
