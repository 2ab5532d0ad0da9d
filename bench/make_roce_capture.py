#!/usr/bin/env python3
"""Write a RoCEv2 capture for benchmarks: RC RDMA WRITE First/Middle/Last (path MTU 1024,
4 KiB messages) plus coalesced ACKs over several QPs, valid lengths, IPv4 checksums and ICRCs,
each record cut to SNAPLEN bytes as `tcpdump -s 128` would.

usage: make_roce_capture.py OUT.pcap [PACKETS=2000000] [SNAPLEN=128]
"""
import struct
import sys
import zlib

out = sys.argv[1]
packets = int(sys.argv[2]) if len(sys.argv) > 2 else 2_000_000
snaplen = int(sys.argv[3]) if len(sys.argv) > 3 else 128
MTU = 1024
QPS = 16


def ip_csum(h):
    s = sum(struct.unpack("!10H", h))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def frame(src, dst, sport, opcode, qp, psn, ackreq, ext, payload):
    bth = struct.pack("!BBHBBHB3s", opcode, 0, 0xFFFF, 0, qp >> 16, qp & 0xFFFF, 0x80 if ackreq else 0,
                      psn.to_bytes(3, "big"))
    tlen = 12 + len(ext) + len(payload) + 4
    udp = struct.pack("!HHHH", sport, 4791, 8 + tlen, 0)
    iph = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0x6A, 20 + 8 + tlen, 0, 0x4000, 64, 17, 0, src, dst))
    struct.pack_into("!H", iph, 10, ip_csum(bytes(iph)))
    masked = bytearray(iph)
    masked[1] = 0xFF
    masked[8] = 0xFF
    masked[10:12] = b"\xff\xff"
    mu = bytearray(udp)
    mu[6:8] = b"\xff\xff"
    mb = bytearray(bth)
    mb[4] = 0xFF
    icrc = zlib.crc32(b"\xff" * 8 + masked + mu + mb + ext + payload) & 0xFFFFFFFF
    eth = b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00"
    return eth + bytes(iph) + udp + bth + ext + payload + struct.pack("<I", icrc)


def main():
    a, b = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
    payload = bytes(range(256)) * (MTU // 256)
    psn = [q * 1000 for q in range(QPS)]
    ts = 1_700_000_000_000_000_000
    gap = 85  # ns: 1100-byte frames at 100 Gb/s
    with open(out, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, snaplen, 1))
        n = 0
        q = 0
        while n < packets:
            qp = 0x100 + q
            sport = 0xC000 + q
            frames = []
            for i in range(4):
                op = (0x06, 0x07, 0x07, 0x08)[i]
                ext = struct.pack("!QII", 0x7F0000000000 + psn[q] * MTU, 0x1234, 4 * MTU) if i == 0 else b""
                frames.append(frame(a, b, sport, op, qp, psn[q] & 0xFFFFFF, i == 3, ext, payload))
                psn[q] += 1
            aeth = struct.pack("!I", (0x1F << 24) | (psn[q] // 4 & 0xFFFFFF))
            frames.append(frame(b, a, sport, 0x11, 0x200 + q, (psn[q] - 1) & 0xFFFFFF, False, aeth, b""))
            for fr in frames:
                if n == packets:
                    break
                cap = fr[:snaplen]
                f.write(struct.pack("<IIII", ts // 1_000_000_000, ts % 1_000_000_000, len(cap), len(fr)))
                f.write(cap)
                ts += gap
                n += 1
            q = (q + 1) % QPS


main()
