//! The reader never panics on damaged files: random byte flips and truncations of valid pcap
//! and pcapng files end in records or in a clean error.

use proptest::prelude::*;
use rdmascope_capture::{CaptureReader, Chunk, PcapWriter, PcapngWriter, Record};

fn pcap() -> Vec<u8> {
    let mut w = PcapWriter::new(Vec::new(), 1, 65535).unwrap();
    for i in 0..8u8 {
        w.write(
            u64::from(i) * 1000,
            60 + u32::from(i),
            &vec![i; 60 + usize::from(i)],
        )
        .unwrap();
    }
    w.into_inner()
}

fn pcapng() -> Vec<u8> {
    let mut w = PcapngWriter::new(Vec::new(), Some("test")).unwrap();
    let a = w
        .add_interface(1, 0, Some("eth0"), Some(100_000_000_000))
        .unwrap();
    let b = w.add_interface(247, 128, None, None).unwrap();
    for i in 0..8u8 {
        w.write(if i % 2 == 0 { a } else { b }, u64::from(i), 61, &[i; 61])
            .unwrap();
    }
    w.into_inner()
}

/// One pcapng block: type, total length, body padded to 32 bits, total length again.
fn block(be: bool, ty: u32, body: &[u8]) -> Vec<u8> {
    let w = |v: u32| if be { v.to_be_bytes() } else { v.to_le_bytes() };
    let len = 12 + body.len().next_multiple_of(4) as u32;
    let mut b = w(ty).to_vec();
    b.extend(w(len));
    b.extend(body);
    b.resize(len as usize - 4, 0);
    b.extend(w(len));
    b
}

/// A Section Header Block in either byte order (version 1.0, section length unknown).
fn shb(be: bool) -> Vec<u8> {
    let w16 = |v: u16| if be { v.to_be_bytes() } else { v.to_le_bytes() };
    let w32 = |v: u32| if be { v.to_be_bytes() } else { v.to_le_bytes() };
    let mut body = w32(0x1a2b_3c4d).to_vec();
    body.extend(w16(1));
    body.extend(w16(0));
    body.extend([0xff; 8]);
    block(be, 0x0a0d_0d0a, &body)
}

/// A hand-built pcapng: a little-endian section, then a big-endian one, each with an
/// interface, Enhanced Packet Blocks with and without options (a comment, then the end of
/// options), odd captured lengths, and a Simple Packet Block.
fn pcapng_sections() -> Vec<u8> {
    let mut out = Vec::new();
    for be in [false, true] {
        let w16 = |v: u16| if be { v.to_be_bytes() } else { v.to_le_bytes() };
        let w32 = |v: u32| if be { v.to_be_bytes() } else { v.to_le_bytes() };
        out.extend(shb(be));
        let mut idb = w16(1).to_vec();
        idb.extend(w16(0));
        idb.extend(w32(96));
        out.extend(block(be, 1, &idb));
        for i in 0..6u32 {
            let data = vec![i as u8; 61 + i as usize];
            let mut epb = w32(0).to_vec();
            epb.extend(w32(i));
            epb.extend(w32(1000 * i));
            epb.extend(w32(data.len() as u32));
            epb.extend(w32(200));
            epb.extend(&data);
            epb.resize(epb.len().next_multiple_of(4), 0);
            if i % 2 == 1 {
                epb.extend(w16(1));
                epb.extend(w16(5));
                epb.extend(b"hello\0\0\0");
                epb.extend([0; 4]);
            }
            out.extend(block(be, 6, &epb));
        }
        let mut spb = w32(70).to_vec();
        spb.extend([9; 70]);
        out.extend(block(be, 3, &spb));
    }
    out
}

fn read_all(bytes: Vec<u8>) -> Result<usize, String> {
    let mut r = CaptureReader::from_reader("mem", Box::new(std::io::Cursor::new(bytes)))
        .map_err(|e| e.to_string())?;
    let mut n = 0;
    while let Some(rec) = r.next().map_err(|e| e.to_string())? {
        assert!(rec.data.len() <= 1 << 26);
        n += 1;
    }
    Ok(n)
}

/// Every record as (timestamp, wire length, interface, link type, speed, bytes), then the error.
type Records = (
    Vec<(u64, u32, u32, u32, Option<u64>, Vec<u8>)>,
    Option<String>,
);

fn owned(x: Record<'_>) -> (u64, u32, u32, u32, Option<u64>, Vec<u8>) {
    (
        x.ts_ns,
        x.orig_len,
        x.interface,
        x.linktype,
        x.if_speed,
        x.data.to_vec(),
    )
}

/// Every record read one at a time, each framed by pcap-parser (or the classic pcap header
/// alone) when `general`, else as the reader frames it by default.
fn one_by_one_as(bytes: Vec<u8>, general: bool) -> Records {
    let mut out = Vec::new();
    let mut r = match CaptureReader::from_reader("mem", Box::new(std::io::Cursor::new(bytes))) {
        Ok(r) => r,
        Err(e) => return (out, Some(e.to_string())),
    };
    if general {
        r.frame_generally();
    }
    loop {
        match r.next() {
            Ok(Some(x)) => out.push(owned(x)),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e.to_string())),
        }
    }
}

/// The reference: every record framed by pcap-parser (or the classic pcap header alone).
fn one_by_one(bytes: Vec<u8>) -> Records {
    one_by_one_as(bytes, true)
}

fn by_chunks(bytes: Vec<u8>, max: usize, budget: usize) -> Records {
    let mut out = Vec::new();
    let mut r = match CaptureReader::from_reader("mem", Box::new(std::io::Cursor::new(bytes))) {
        Ok(r) => r,
        Err(e) => return (out, Some(e.to_string())),
    };
    let mut chunk = Chunk::default();
    loop {
        match r.next_chunk(&mut chunk, max, budget) {
            Ok(true) => {
                assert!(chunk.len() <= max && !chunk.is_empty());
                out.extend(chunk.records().map(owned))
            }
            Ok(false) => return (out, None),
            Err(e) => return (out, Some(e.to_string())),
        }
    }
}

#[test]
fn chunks_hold_the_same_records_as_single_reads() {
    for (bytes, n) in [(pcap(), 8), (pcapng(), 8), (pcapng_sections(), 14)] {
        let want = one_by_one(bytes.clone());
        assert_eq!((want.0.len(), &want.1), (n, &None));
        assert_eq!(one_by_one_as(bytes.clone(), false), want);
        // Budgets below one record make the buffer grow for it; big ones take the whole file.
        for (max, budget) in [(1, 1), (3, 50), (8, 100), (100, 1 << 20)] {
            assert_eq!(
                by_chunks(bytes.clone(), max, budget),
                want,
                "{max} {budget}"
            );
        }
    }
}

/// A gzip file cut anywhere or damaged: reading in chunks delivers every whole record read
/// before the decompressor's complaint, as single reads do, and then the same error, which
/// names the record and the offset after decompression.
#[test]
fn cut_or_damaged_gzip_reads_alike_in_chunks() {
    use std::io::Write as _;
    for bytes in [pcap(), pcapng(), pcapng_sections()] {
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        for _ in 0..20 {
            z.write_all(&bytes).unwrap();
        }
        let gz = z.finish().unwrap();
        let mut saw_cut = false;
        for cut in (20..gz.len()).step_by(17) {
            for damage in [None, Some(cut / 2)] {
                let mut b = gz[..cut].to_vec();
                if let Some(i) = damage {
                    b[i] ^= 0x55;
                }
                let want = one_by_one_as(b.clone(), false);
                if let (n, Some(e)) = (want.0.len(), &want.1) {
                    if damage.is_none() && n > 0 && e.contains("the gzip data stops") {
                        saw_cut = true;
                        assert!(e.contains(&format!("record {}", n + 1)), "{e}");
                        assert!(e.contains("after decompression"), "{e}");
                    }
                }
                assert_eq!(by_chunks(b.clone(), 3, 90), want, "cut {cut} {damage:?}");
                assert_eq!(by_chunks(b, 1000, 1 << 16), want, "cut {cut} {damage:?}");
            }
        }
        assert!(saw_cut);
    }
}

#[test]
fn valid_files_read_fully() {
    assert_eq!(read_all(pcap()), Ok(8));
    assert_eq!(read_all(pcapng()), Ok(8));
}

#[test]
fn pcapng_snaplen_and_speed() {
    let mut r =
        CaptureReader::from_reader("mem", Box::new(std::io::Cursor::new(pcapng()))).unwrap();
    let rec = r.next().unwrap().unwrap();
    assert_eq!(rec.data.len(), 61);
    let rec = r.next().unwrap().unwrap();
    assert_eq!((rec.data.len(), rec.orig_len, rec.interface), (61, 61, 1));
    assert_eq!(r.interfaces()[0].speed_bps, Some(100_000_000_000));
    assert_eq!(r.interfaces()[0].name.as_deref(), Some("eth0"));
    assert_eq!(r.interfaces()[1].ts_per_sec, 1_000_000_000);
}

/// A block whose total length is below the 12 bytes of its own type and lengths is corrupt,
/// whatever its type (pcapng §3.1): a clean error that names the length, not the underflow
/// pcap-parser 0.17 meets on some block types (found by `cargo fuzz run capture_file`).
#[test]
fn block_shorter_than_its_fields_is_corrupt() {
    for be in [false, true] {
        let w32 = |v: u32| if be { v.to_be_bytes() } else { v.to_le_bytes() };
        for ty in [1u32, 2, 3, 4, 5, 6, 9, 0x0a, 0x8000_0001, 0x0bad] {
            for len in [0u32, 4, 8, 10] {
                let mut b = shb(be);
                b.extend(w32(ty));
                b.extend(w32(len));
                b.extend([0; 16]);
                let err = read_all(b).expect_err("a block shorter than 12 bytes");
                assert!(
                    err.contains(&format!("block length {len}")),
                    "type {ty:#x}, length {len}, big-endian {be}: {err}"
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]
    #[test]
    fn damaged_files_never_panic(kind in 0..3usize, flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..8), cut in any::<usize>()) {
        let mut b = [pcap, pcapng, pcapng_sections][kind]();
        let n = b.len();
        for (i, x) in flips {
            b[i % n] ^= x;
        }
        b.truncate(cut % (n + 1));
        let _ = read_all(b.clone());
        // Reading one by one with the fast framing, and in chunks, delivers the same good
        // records and then the same error as pcap-parser's framing.
        let want = one_by_one(b.clone());
        prop_assert_eq!(one_by_one_as(b.clone(), false), want.clone());
        prop_assert_eq!(by_chunks(b.clone(), 3, 90), want.clone());
        prop_assert_eq!(by_chunks(b, 1000, 1 << 16), want);
    }
}
