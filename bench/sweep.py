#!/usr/bin/env python3
"""Ground-truth sweep: random `gen` cases, each analysed and compared with its truth file.

    python3 bench/sweep.py [--bin target/release/rdmascope] [-n 1000] [--seed 1] [options]

Each case draws a scenario, a seed, a link speed, a length, (for RoCE) IPv6 or a VLAN tag and
a snaplen from `--seed`, so the same arguments give the same cases. The comparison is the one the
ground-truth tests make (crates/cli/tests/analyze.rs): every total and per-flow counter, the
retry measures, the PFC episodes and the set of finding codes. A failing case is printed as
the `gen` options that make it again, with its first differences; its capture and truth stay
in `--work`. The exit status is 1 when any case failed.

`--usec` writes each capture as classic pcap of microseconds (tcpdump's default) and `--split`
cuts it into 2–4 ring files at random records (whose report must also equal the whole file's;
with both, the file in microseconds is cut, as `tcpdump -C` writes rings); both analyse with
the case's `--link-speed`, as classic pcap keeps none, and `--usec` lets the PFC pause time move
by under a microsecond at each end of an episode.

`--doubled LAG_NS` holds every frame of the capture twice, the copy LAG_NS later (as a capture
on two bond members, or a tap and a SPAN port, does), and compares the transport totals only:
the copies must read as the capture's, not as the network's (RoCE at 100 Gb/s, no IB).

The sweeps DESIGN.md §8 quotes since session 45, by their arguments (1–5 minutes each on two
cores):
    -n 3000 --seed 4502 --corrupt 0.001,0.03             0.1–3% damage
    -n 2000 --seed 4503 --corrupt 0.001,0.05             0.1–5%
    -n 3000 --seed 4504                                  no damage
    -n 300  --seed 4505 --corrupt 0.05,0.15              5–15%
    -n 1000 --seed 4506 --corrupt 0.001,0.10 --scenarios ib
    -n 1500 --seed 4507 --corrupt 0.001,0.05 --snaplens
    -n 150  --seed 4508 --corrupt 0.001,0.05 --packets 100000,300000
    -n 3000 --seed 4521 --corrupt 0.001,0.10             0.1–10%
    -n 1500 --seed 4534 --corrupt 0.01,0.08 --links 10G,25G
    -n 300  --seed 4512 --corrupt 0.001,0.05 --doubled 2000   (session 46: 1 failure, and 1
                                                          with 300, 2 with 4000)
Added in session 47 (failures then: 4702 1, 4704 1, 4706 2, the others 0):
    -n 600  --seed 4540 --corrupt 0,0.05 --duration 200,20000
    -n 2000 --seed 4701 --corrupt 0.001,0.10
    -n 1500 --seed 4702 --corrupt 0.01,0.10 --links 10G
    -n 1500 --seed 4703 --corrupt 0.001,0.10 --links 200G,400G
    -n 1000 --seed 4704 --corrupt 0.05,0.15 --snaplens
    -n 60   --seed 4705 --corrupt 0.001,0.03 --packets 300000,600000
    -n 300  --seed 4706 --corrupt 0.001,0.05 --doubled 300
    -n 1000 --seed 4707 --corrupt 0.001,0.10 --scenarios ib --links 10G,25G
Added in session 48 (failures with that session's first binary / its last):
    -n 2000 --seed 4801 --corrupt 0.001,0.10                         0 / 0
    -n 1500 --seed 4802 --corrupt 0.01,0.10 --links 25G,100G         0 / 0
    -n 1000 --seed 4803 --corrupt 0.001,0.08 --snaplens              0 / 0
    -n 800  --seed 4804 --corrupt 0.001,0.10 --scenarios lossy,reorder,mixed,rnr   0 / 0
    -n 600  --seed 4805 --corrupt 0.001,0.05 --duration 500,5000     0 / 0
    -n 1000 --seed 4806 --corrupt 0.001,0.10 --scenarios ib          0 / 0
    -n 300  --seed 4811 --corrupt 0.01,0.10 --doubled 300            1 / 0
    -n 300  --seed 4812 --corrupt 0.01,0.10 --doubled 1000           2 / 0
    -n 300  --seed 4813 --corrupt 0.001,0.05 --doubled 5000          5 / 0
    -n 300  --seed 4814 --doubled 300                                0 / 0
    -n 300  --seed 4815 --corrupt 0.01,0.10 --doubled 2000           1 / 0
    -n 600  --seed 4817 --corrupt 0.001,0.05 --doubled 300           1 / 0
    -n 300  --seed 4816 --corrupt 0.001,0.05 --doubled 10000         300 / 300: copies later
                than `DUP_NS` (8.192 µs) read as resends, even without damage
  and `--seed 4512` (0.1–5%) held twice at 300 ns and 4 µs as well: 1 / 0 and 2 / 0.
Added in session 49, when the capture's lag between copies came to be learnt (failures with
that session's first binary / its last; `--by-time`: records in time order):
    -n 300  --seed 4816 --corrupt 0.001,0.05 --doubled 10000         300 / 0
    -n 200  --seed 4901 --corrupt 0.001,0.05 --doubled 10000 --by-time   - / 0
    -n 200  --seed 4902 --corrupt 0.01,0.10 --doubled 20000 --by-time    - / 0
    -n 200  --seed 4903 --corrupt 0.001,0.05 --doubled 50000             - / 0
    -n 200  --seed 4904 --doubled 12000 --by-time                        - / 0
    -n 300  --seed 4905 --corrupt 0.01,0.10 --doubled 15000 --by-time    - / 0
    -n 300  --seed 4906 --corrupt 0.001,0.05 --doubled 30000             - / 0
    -n 200  --seed 4907 --corrupt 0.001,0.05 --doubled 100000 --by-time  - / 22 (`mixed`: the
                sample of 4,096 packets spans too little of such a lag)
    -n 300  --seed 4908 --corrupt 0.001,0.05 --doubled 2000 --by-time    40 of 40 / 0
    -n 300  --seed 4909 --corrupt 0.001,0.05 --doubled 300 --by-time     32 of 40 / 6 (`reorder`)
    -n 200  --seed 4910 --corrupt 0.01,0.10 --doubled 1000 --by-time     - / 2 (`reorder`)
    -n 200  --seed 4911 --corrupt 0.001,0.05 --doubled 5000 --by-time    - / 0
    -n 200  --seed 4912 --doubled 300 --by-time                          - / 0
Added in session 50, with the floor on a NAK's turn-round (failures with that session's first
binary / its last; the 25 sweeps above that it ran again, 25,100 cases, some with fewer cases
than listed, failed as before, but for 4503's case, now matched):
    -n 600  --seed 4914 --corrupt 0.01,0.10 --snaplens                   1 / 0
    -n 1500 --seed 5001 --corrupt 0.001,0.10                             - / 0
    -n 1000 --seed 5002 --corrupt 0.01,0.10 --links 10G,25G --snaplens   - / 0
  and with the go-back to a READ read again serving the NAK beyond it (4704's case now matched):
    -n 1000 --seed 5003 --corrupt 0.05,0.15 --scenarios lossy,mixed      - / 2 (both as before)
    -n 1000 --seed 5004 --corrupt 0.01,0.10 --links 10G --scenarios mixed,lossy,clean  - / 1 (as before)
  and with the answers' lags tried for copies (`late.rs`), captures held twice:
    -n 300  --seed 4909 --corrupt 0.001,0.05 --doubled 300 --by-time     6 / 0
    -n 200  --seed 4910 --corrupt 0.01,0.10 --doubled 1000 --by-time     2 / 0
    -n 200  --seed 5005 --corrupt 0.001,0.05 --doubled 700 --by-time     - / 0
Added in session 51 (failures with the binary before and after that session's change; the
retry rule of `gen` and 16 losses a flow: 5003 2 -> 0 of its first 600, 5004 1 / 1 as before):
    -n 300  --seed 5101 --corrupt 0.01,0.15 --scenarios lossy,errors,mixed,ib       - / 0
    -n 200  --seed 5102 --corrupt 0.02,0.2 --doubled 2000 --scenarios lossy,mixed,ib  - / 0
    -n 400  --seed 5103 --corrupt 0.05,0.2 --links 400G,200G --scenarios lossy,mixed,errors --snaplens  - / 0
    -n 800  --seed 5104 --corrupt 0.0,0.08 --snaplens                    - / 0
    -n 300  --seed 5105 --corrupt 0.0,0.05 --doubled 5000                - / 0
    -n 300  --seed 5106 --duration 200,3000 --corrupt 0.0,0.1            - / 0
  and with the copies' sample spanning up to 500 µs (4907: 22 / 0):
    -n 200  --seed 5107 --corrupt 0.001,0.05 --doubled 200000 --by-time  25 / 0
    -n 200  --seed 5108 --corrupt 0.001,0.05 --doubled 400000 --by-time  74 / 0
  and with the binary before the late NAK's pass (`Req::late_nak_pass`) / after it:
    -n 1500 --seed 5109 --corrupt 0.001,0.12                             1 / 0 (`lossy --seed
                449319893 --link 10G --ipv6`: the requester behind a queue of about 300 µs; it
                failed so with session 50's first binary too)
    -n 500  --seed 5110 --corrupt 0.05,0.15 --links 10G,25G --snaplens   - / 0
    -n 500  --seed 5111 --corrupt 0.01,0.10 --scenarios ib,errors,rnr    - / 0
    -n 300  --seed 5112 --corrupt 0.01,0.08 --doubled 50000 --by-time    - / 0
    -n 100  --seed 5113 --corrupt 0.001,0.05 --doubled 300000 --by-time  - / 0
    and 4706, 4811, 4812, 4814, 4801, 4901, 4902, 4904, 4906, 4908, 4911, 5005 again: 0
Added in session 52 (failures with that session's first binary / with its last, which reads
timestamps in their unit and spreads packets of one microsecond in file order):
    -n 600  --seed 5202 --corrupt 0.0,0.10 --snaplens --split          0 / 0
    -n 200  --seed 5203 --corrupt 0.0,0.05 --usec                      4 / 1 (failed in ns too;
                0 once a READ response gap's pass past the READ is no timer's retry)
    -n 800  --seed 5204 --corrupt 0.0,0.08 --usec                      19 / 1
    -n 1500 --seed 5205 --corrupt 0.001,0.10 --usec                    - / 1
    -n 800  --seed 5206 --corrupt 0.0,0.08 --snaplens --usec           - / 1
    -n 800  --seed 5207 --corrupt 0.01,0.10 --links 10G,25G --usec     - / 1
    -n 500  --seed 5208 --corrupt 0.001,0.10 --scenarios ib --usec     - / 1
    -n 500  --seed 5209 --corrupt 0.05,0.15 --scenarios lossy,mixed,errors,reorder --usec  - / 1
    -n 100  --seed 5210 --corrupt 0.001,0.05 --doubled 300 --usec      30 / 0
    -n 300  --seed 5211 --corrupt 0.001,0.05 --doubled 2000 --usec     - / 1
    -n 300  --seed 5212 --corrupt 0.01,0.10 --doubled 300 --usec       - / 1
    -n 200  --seed 5213 --corrupt 0.001,0.05 --doubled 20000 --by-time --usec   - / 26 (a resend
                and a copy at the lag in one microsecond: off by 1-7 resends of thousands)
    -n 200  --seed 5214 --corrupt 0.001,0.05 --doubled 100000 --by-time --usec  - / 3
    -n 300  --seed 5215 --doubled 300 --usec                           - / 0
  (of 5203-5209's 7: 4 a PFC episode within a microsecond above the storm bound, 3
  `timeouts_in_a_row` 1 for 0) and 4706, 4811, 4813, 4909, 4910, 5005, 4816, 4907, 5108, 4903
  again with the last binary (the copies' sample now decides at set lengths): 0
  and with a READ response gap's pass past the READ no timer's retry: 5109, 4801, 5003, 5111,
  4534, 4521, 4704, 4707, 4811 (held twice) 0; 5004 and 4702 1 each (the deep-queue cases, as
  before); 5203-5209 --usec as above, but 5203 0
  and with a resend in its NAK's microsecond serving no NAK: 5204 1, 5208 0, 5207 1, 5203 0,
  5209 1 (--usec), 5210 0, 5212 1 (--usec --doubled)
Added in session 53 (no analysis change; the binary of session 52's last commit):
    -n 1500 --seed 5301 --corrupt 0.001,0.10 --snaplens --split        0
    -n 1500 --seed 5302 --corrupt 0.001,0.12 --links 10G,25G,200G,400G 0
    -n 400  --seed 5303 --corrupt 0.001,0.08 --usec --snaplens         0
    -n 300  --seed 5304 --corrupt 0.001,0.06 --doubled 700             0
    -n 600  --seed 5305 --corrupt 0.01,0.15 --scenarios ib --snaplens  0
    -n 200  --seed 5306 --corrupt 0.001,0.05 --doubled 3000 --by-time  0
    -n 300  --seed 5307 --corrupt 0,0.08 --duration 300,8000           0
Added in session 55 (no analysis change; the binary of 97b1e53):
    -n 2000 --seed 5501 --corrupt 0.001,0.10                           0
    -n 1000 --seed 5502 --corrupt 0.001,0.08 --snaplens                0
    -n 1000 --seed 5503 --corrupt 0.001,0.10 --scenarios ib            0
    -n 1000 --seed 5504 --corrupt 0.01,0.08 --links 10G,25G            0
    -n 600  --seed 5505 --corrupt 0.001,0.08 --usec                    1 (`mixed --seed 307738662
                --link 400G --packets 12819 --corrupt-rate 0.0214`: an episode about 240 ns
                above the storm bound in microseconds, about 700 ns above it in the truth)
    -n 300  --seed 5506 --corrupt 0.001,0.05 --doubled 1500            0
    -n 600  --seed 5507 --corrupt 0.0,0.10 --split --snaplens          0
    -n 400  --seed 5508 --corrupt 0.001,0.10 --duration 300,10000      0
  and with opcodes counted at their low five bits (4a4d010):
    -n 800  --seed 5509 --corrupt 0.001,0.10                           0
    -n 400  --seed 5510 --corrupt 0.01,0.15 --scenarios ib,errors,mixed --snaplens  0
    -n 300  --seed 5511 --corrupt 0.001,0.08 --usec                    0
    -n 200  --seed 5512 --corrupt 0.001,0.05 --doubled 2500            0
Added in session 56 (failures with the binary of ba55ed8 / of 90bb568, where a jump onto a
NAK's PSN sooner than the NAK could reach the requester is not its pass / of 2efe726, where
copies at a lag need nine in ten of the answers copied too, and a pending NAK's pass may
begin at the first PSN not acknowledged):
    -n 1500 --seed 5601 --corrupt 0.001,0.10                           1 / 0 / 0 (`mixed --seed
                565941807 --link 25G --packets 34807 --corrupt-rate 0.0427`)
    -n 800  --seed 5602 --corrupt 0.001,0.08 --snaplens                0 / - / -
    -n 300  --seed 5603 --corrupt 0.001,0.05 --doubled 300             0 / - / -
    -n 500  --seed 5604 --corrupt 0.001,0.05 --split                   0 / - / -
    -n 2000 --seed 5605 --corrupt 0.001,0.10                           - / 0 / 0
    -n 1000 --seed 5606 --corrupt 0.001,0.10 --scenarios ib            - / 1 / 0 (`ib --seed
                264314439 --link 400G --packets 23136 --corrupt-rate 0.0770`: go-back-N resends
                of nearly every request, read as copies at a lag)
    -n 1000 --seed 5607 --corrupt 0.01,0.08 --links 10G,25G            - / 1 / 0 (`clean --seed
                814549223 --link 10G --packets 33432 --vlan 7 --pcp 5 --corrupt-rate 0.0528`)
    -n 600  --seed 5608 --corrupt 0.001,0.08 --usec                    - / 1 / - (a PFC episode
                within a microsecond of the storm bound)
    -n 400  --seed 5609 --corrupt 0.001,0.05 --doubled 1500            - / 0 / 0
    -n 600  --seed 5610 --corrupt 0.001,0.10 --duration 300,10000      - / 0 / -
    -n 800  --seed 5611 --corrupt 0.01,0.15 --scenarios lossy,reorder,errors,rnr   - / 1 / -
                (`lossy --seed 612417718 --link 10G --packets 7184 --ipv6 --corrupt-rate
                0.0810`: a requester behind a deep queue, as 4702's)
    -n 1500 --seed 5612 --corrupt 0.001,0.12                           - / - / 0
    -n 800  --seed 5613 --corrupt 0.01,0.15 --links 200G,400G          - / - / 0
    -n 800  --seed 5614 --corrupt 0.001,0.10 --scenarios ib --links 100G,200G,400G  - / - / 0
    -n 300  --seed 5615 --corrupt 0.01,0.10 --doubled 700              - / - / 0
  and again with 90bb568: 5109 0, 4811 0, 4804 0, 4702 1 (its deep-queue case), 5204 1 and 5209
  1 (--usec: the storm bound), 5212 1 (--usec --doubled: one resend of 15,074); with 2efe726:
  4811, 4815 and 4814 (held twice) 0, 4804 0, 5204 1 (the storm bound), 4812, 4813 and 5112
  (held twice) 0, 5212 1 (as before), 4505 0, 4704 0; and with 6e63205 (no analysis change):
    -n 2000 --seed 5616 --corrupt 0.001,0.10                           0
    -n 800  --seed 5617 --corrupt 0.001,0.08 --usec                    2 (`mixed --seed 232521877
                --link 100G --packets 13675 --ipv6 --corrupt-rate 0.0373` and `mixed --seed
                99519812 --link 100G --packets 9673 --corrupt-rate 0.0685`: the storm bound)
    -n 800  --seed 5618 --corrupt 0.0,0.10 --split --snaplens          0
    -n 600  --seed 5619 --corrupt 0.001,0.10 --duration 300,10000      0
    -n 800  --seed 5620 --corrupt 0.01,0.15 --scenarios lossy,mixed,errors,reorder,rnr,misconfig  0
    -n 300  --seed 5621 --corrupt 0.001,0.05 --doubled 4000            0
    -n 200  --seed 5622 --corrupt 0.001,0.05 --doubled 30000 --by-time 0
    -n 1000 --seed 5623 --corrupt 0.001,0.10 --links 10G,25G           0
    -n 1000 --seed 5624 --corrupt 0.001,0.12 --scenarios ib --snaplens 0
    -n 2000 --seed 5625 --corrupt 0.01,0.12 --links 100G,200G,400G     0
    -n 1000 --seed 5626 --corrupt 0.001,0.10 --snaplens                0
    -n 300  --seed 5627 --corrupt 0.01,0.10 --doubled 500              0
    -n 300  --seed 5628 --corrupt 0.01,0.10 --doubled 8000             0
    -n 800  --seed 5629 --corrupt 0.05,0.15 --scenarios ib,lossy,mixed 0
    -n 150  --seed 5630 --corrupt 0.001,0.05 --packets 100000,300000   1 (`lossy --seed 730567299
                --link 10G --packets 178110 --ipv6 --corrupt-rate 0.0416`: 35 timeouts for 34
                on the flow whose NAKs' passes come 0.26–1.9 ms late, a deep queue)
    -n 1500 --seed 5631 --corrupt 0.0,0.08 --scenarios pfc-storm,misconfig,incast,rnr,clean  0
    -n 600  --seed 5632 --corrupt 0.001,0.10 --split                   0
    -n 300  --seed 5633 --corrupt 0.001,0.05 --doubled 200 --by-time   0
    -n 1000 --seed 5634 --corrupt 0.001,0.10 --scenarios errors,rnr,reorder --links 10G,100G,400G  0
    -n 1000 --seed 5636                                                0
  and once `--usec --split` cut the file in microseconds (before, the two options together
  compared the rings in microseconds with the whole file in nanoseconds, and all 400 failed):
    -n 400  --seed 5635 --corrupt 0.001,0.08 --usec --split            0
    -n 400  --seed 5637 --corrupt 0.0,0.10 --usec --split --snaplens   0
Added in session 57 (the binary of 8710017: no change to what the analysis reports):
    -n 2000 --seed 5701 --corrupt 0.001,0.10                           1 (`lossy --seed 428428317
                --link 10G --packets 29531 --ipv6 --corrupt-rate 0.0685`: one timeout more on
                one flow, a deep-queue `lossy` case at 10G by its pattern, as 4702's)
    -n 1000 --seed 5702 --corrupt 0.01,0.10 --links 10G,25G            0
    -n 600  --seed 5703 --corrupt 0.001,0.05 --doubled 2000            0
    -n 600  --seed 5704 --corrupt 0.001,0.08 --usec --split            3 (`mixed`, the storm
                bound in microseconds: `--seed 106671933 --link 100G --packets 16375 --ipv6
                --corrupt-rate 0.0151`, `--seed 877592623 --link 400G --packets 17189
                --corrupt-rate 0.0065`, `--seed 593947621 --link 400G --packets 15123
                --corrupt-rate 0.0157`; each reads right in nanoseconds)
    -n 1000 --seed 5705 --corrupt 0.001,0.10 --scenarios ib            0
    -n 1500 --seed 5706 --corrupt 0.001,0.08 --snaplens                0
    -n 800  --seed 5707 --corrupt 0.001,0.10 --scenarios lossy,reorder,mixed,rnr  0
    -n 300  --seed 5708 --corrupt 0.01,0.10 --doubled 300              0
    -n 600  --seed 5709 --corrupt 0,0.05 --duration 200,20000          0
    -n 1000 --seed 5710 --corrupt 0.001,0.10 --links 200G,400G         0
Added in session 58 (the binary of d4dbaa4: files analysed while the sample for copies at a lag
is taken, read again when it finds them; the reports unchanged):
    -n 150  --seed 5802 --corrupt 0.001,0.05 --doubled 20000 --by-time  0
    -n 400  --seed 5803 --corrupt 0.0,0.08 --snaplens --split          0
    -n 300  --seed 5804 --corrupt 0.001,0.05 --doubled 300             0
    -n 200  --seed 5805 --corrupt 0.001,0.05 --doubled 100000 --by-time  0
    -n 1000 --seed 5806 --corrupt 0.001,0.08                           0
    -n 300  --seed 5807 --corrupt 0.001,0.05 --doubled 2000 --usec     1 (`misconfig --seed
                605690284 --packets 8977 --corrupt-rate 0.0435`: one resend more, held twice
                in microseconds only; the binary of the session's start reads it so too, and
                in nanoseconds it reads right)
Added in session 59 (the binaries of ee8aed1, opcode counts named by rank and the JSON's flows
on two threads, for 5901, and of f8cfd82, a window word's missing PSNs counted at once, for the
others; the reports unchanged):
    -n 600  --seed 5901                                                0
    -n 500  --seed 5902 --corrupt 0.001,0.10 --scenarios lossy,reorder,mixed,rnr  0
    -n 300  --seed 5903 --corrupt 0.001,0.08 --snaplens --split        0
    -n 200  --seed 5904 --corrupt 0.001,0.05 --doubled 300             0
"""
import argparse
import concurrent.futures as cf
import json
import os
import random
import struct
import subprocess
import sys

SCENARIOS = "clean,lossy,rnr,incast,pfc-storm,misconfig,ib,mixed,reorder,errors"
COUNTERS = ["packets", "bytes", "payload_bytes", "opcodes", "retransmitted_packets",
            "gap_filled_packets", "reordered_packets", "missing_packets", "duplicate_acks",
            "naks", "rnr_naks", "timeouts", "cnp", "ecn", "icrc"]
MEASURES = ["reordered_resent", "timeouts_in_a_row", "rnr_naks_in_a_row", "transport"]
TRANSPORT = ["retransmitted_packets", "missing_packets", "duplicate_acks", "timeouts", "naks"]
PFC = ["pause_episodes", "pause_ns_total", "frames", "xoff_frames"]


def cases(a):
    rng = random.Random(a.seed)
    lo_p, hi_p = map(int, a.packets.split(","))
    for i in range(a.n):
        sc = rng.choice(a.scenarios.split(","))
        opts = ["--seed", str(rng.randrange(1, 1 << 30))]
        if not a.doubled:
            opts += ["--link", rng.choice(a.links.split(","))]
        if a.duration:
            lo, hi = map(int, a.duration.split(","))
            opts += ["--duration", f"{rng.randint(lo, hi)}us"]
        else:
            opts += ["--packets", str(rng.randint(lo_p, hi_p))]
        if sc != "ib" and not a.doubled:
            r = rng.random()
            if r < 0.2:
                opts += ["--ipv6"]
            elif r < 0.4:
                opts += ["--vlan", "7", "--pcp", str(rng.randrange(8))]
        if a.snaplens:
            if rng.random() < 0.4:
                opts += ["--snaplen", str(rng.choice([64, 80, 96, 112, 128, 160, 200, 256, 384, 512]))]
        elif not a.doubled and rng.random() < 0.2:
            opts += ["--snaplen", "128"]
        if a.corrupt:
            lo, hi = map(float, a.corrupt.split(","))
            opts += ["--corrupt-rate", "%.4f" % rng.uniform(lo, hi)]
        yield i, sc, opts


def diff(t, r):
    """What the report `r` says differently from the truth `t`."""
    out = []
    for k in COUNTERS:
        if r["totals"].get(k) != t["totals"].get(k):
            out.append(f"totals.{k}: ours {r['totals'].get(k)} truth {t['totals'].get(k)}")
    key = lambda f: (f["src"], f["dst"], f["dest_qp"])
    ours, truth = {key(f): f for f in r["flows"]}, {key(f): f for f in t["flows"]}
    if set(ours) != set(truth):
        out.append(f"flows: ours only {sorted(set(ours) - set(truth))[:3]}, "
                   f"truth only {sorted(set(truth) - set(ours))[:3]}")
    for k, w in truth.items():
        for c in COUNTERS + MEASURES:
            if k in ours and ours[k].get(c) != w.get(c):
                out.append(f"flow {k} {c}: ours {ours[k].get(c)} truth {w.get(c)}")
    got, want = {f["code"] for f in r["findings"]}, set(t["expected_findings"])
    if got != want:
        out.append(f"findings: ours only {sorted(got - want)}, missing {sorted(want - got)}")
    for k in PFC:
        if r["pfc"][k] != t["pfc"][k]:
            out.append(f"pfc.{k}: ours {r['pfc'][k]} truth {t['pfc'][k]}")
    return out


def double(src, dst, lag, by_time=False):
    """Writes classic pcap `src` to `dst` with every record held twice, the copy `lag` ns later:
    each copy right behind its original, or with `by_time` all records in the order of their
    times (as a capture point that receives both copies writes them)."""
    b = open(src, "rb").read()
    hdr, off, out = b[:24], 24, [b[:24]]
    mult = 1 if struct.unpack("<I", hdr[:4])[0] == 0xA1B23C4D else 1000
    while off + 16 <= len(b):
        s, frac, cl, ol = struct.unpack("<IIII", b[off:off + 16])
        data = b[off + 16:off + 16 + cl]
        off += 16 + cl
        for t in (s * 1_000_000_000 + frac * mult, s * 1_000_000_000 + frac * mult + lag):
            out.append((t, len(out), cl, ol, data))
    if by_time:
        out[1:] = sorted(out[1:])
    for i, (t, _, cl, ol, data) in enumerate(out[1:], 1):
        s2, f2 = divmod(t, 1_000_000_000)
        out[i] = struct.pack("<IIII", s2, f2 // mult, cl, ol) + data
    open(dst, "wb").write(b"".join(out))


def records(path):
    """The header and the records of classic pcap file `path` (little-endian)."""
    b = open(path, "rb").read()
    off, out = 24, []
    while off + 16 <= len(b):
        cl = struct.unpack("<I", b[off + 8:off + 12])[0]
        out.append(b[off:off + 16 + cl])
        off += 16 + cl
    return b[:24], out


def in_microseconds(src, dst):
    """Writes classic pcap `src` of nanoseconds to `dst` in microseconds, as `tcpdump` writes
    by default: each record's fraction of a second cut to whole microseconds."""
    hdr, recs = records(src)
    assert struct.unpack("<I", hdr[:4])[0] == 0xA1B23C4D, "a pcap file of nanoseconds"
    out = [struct.pack("<I", 0xA1B2C3D4) + hdr[4:]]
    for r in recs:
        s, ns = struct.unpack("<II", r[:8])
        out.append(struct.pack("<II", s, ns // 1000) + r[8:])
    open(dst, "wb").write(b"".join(out))


def split(src, stem, rng):
    """Cuts classic pcap `src` into 2–4 files at random records (ring files): their paths."""
    hdr, recs = records(src)
    cuts = sorted(rng.sample(range(1, len(recs)), rng.randint(2, 4) - 1))
    paths, prev = [], 0
    for j, c in enumerate(cuts + [len(recs)]):
        paths.append(f"{stem}-{j}.pcap")
        open(paths[-1], "wb").write(hdr + b"".join(recs[prev:c]))
        prev = c
    return paths


def run(a, case):
    i, sc, opts = case
    if (a.usec and not a.doubled) or a.split:
        return run_rewritten(a, case)
    # pcapng keeps the link speed (`if_speed`) that PAUSE quanta are timed at; the doubling
    # rewrites classic pcap records.
    ext = "pcap" if a.doubled else "pcapng"
    cap, truth = os.path.join(a.work, f"c{i}.{ext}"), os.path.join(a.work, f"c{i}.json")
    g = subprocess.run([a.bin, "gen", "--scenario", sc, *opts, "--truth", truth, "-o", cap],
                       capture_output=True)
    if g.returncode:
        return case, ["gen failed: " + g.stderr.decode()[:200]]
    read = cap
    if a.doubled:
        read = os.path.join(a.work, f"c{i}-doubled.pcap")
        double(cap, read, a.doubled, a.by_time)
        if a.usec:
            read_us = os.path.join(a.work, f"c{i}-doubled-us.pcap")
            in_microseconds(read, read_us)
            os.remove(read)
            read = read_us
    r = subprocess.run([a.bin, "analyze", "--json", read], capture_output=True)
    if r.returncode:
        return case, ["analyze failed: " + r.stderr.decode()[:300]]
    t, rep = json.load(open(truth)), json.loads(r.stdout)
    if a.doubled:
        d = [f"totals.{k}: ours {rep['totals'][k]} truth {t['totals'][k]}"
             for k in TRANSPORT if rep["totals"][k] != t["totals"][k]]
    else:
        d = diff(t, rep)
    if not d:
        for f in {cap, truth, read}:
            os.remove(f)
    return case, d


def run_rewritten(a, case):
    """`--usec` or `--split`: the case written as classic pcap, then in microseconds or cut
    into ring files, analysed with its link speed (classic pcap keeps none)."""
    i, sc, opts = case
    cap, truth = os.path.join(a.work, f"c{i}.pcap"), os.path.join(a.work, f"c{i}.json")
    g = subprocess.run([a.bin, "gen", "--scenario", sc, *opts, "--truth", truth, "-o", cap],
                       capture_output=True)
    if g.returncode:
        return case, ["gen failed: " + g.stderr.decode()[:200]]
    link = ["--link-speed", opts[opts.index("--link") + 1]] if "--link" in opts else []
    # The capture as analysed whole: in microseconds with `--usec`; `--split` cuts that one.
    whole_cap = cap
    if a.usec:
        whole_cap = os.path.join(a.work, f"c{i}-us.pcap")
        in_microseconds(cap, whole_cap)
    files = [whole_cap]
    if a.split:
        files = split(whole_cap, os.path.join(a.work, f"c{i}-part"),
                      random.Random(a.seed * 1000003 + i))
    r = subprocess.run([a.bin, "analyze", "--json", *link, *files], capture_output=True)
    if r.returncode:
        return case, ["analyze failed: " + r.stderr.decode()[:300]]
    t, rep = json.load(open(truth)), json.loads(r.stdout)
    if a.usec:
        # An episode's ends move by under a microsecond each.
        p, q = rep["pfc"]["pause_ns_total"], t["pfc"]["pause_ns_total"]
        if abs(p - q) < 2000 * max(1, t["pfc"]["pause_episodes"]):
            t["pfc"]["pause_ns_total"] = p
    d = diff(t, rep)
    if not d and a.split:
        whole = json.loads(subprocess.run([a.bin, "analyze", "--json", *link, whole_cap],
                                          capture_output=True).stdout)
        d = [f"{k} differs from the whole file's report" for k in ("totals", "flows", "connections", "pfc", "findings")
             if whole[k] != rep[k]]
    if not d:
        for f in {cap, truth, whole_cap, *files}:
            os.remove(f)
    return case, d


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", default="target/release/rdmascope")
    p.add_argument("-n", type=int, default=1000, help="cases")
    p.add_argument("--seed", type=int, default=1, help="seed of the case draw")
    p.add_argument("--scenarios", default=SCENARIOS, help="comma-separated scenarios to draw from")
    p.add_argument("--links", default="10G,25G,100G,200G,400G")
    p.add_argument("--packets", help="LO,HI frames a capture (default 2000,40000; doubled: 2000,30000)")
    p.add_argument("--duration", help="LO,HI µs a capture, instead of --packets")
    p.add_argument("--corrupt", help="LO,HI fraction of packets damaged before the capture point")
    p.add_argument("--snaplens", action="store_true", help="cut 40%% of the captures to 64–512 bytes")
    p.add_argument("--doubled", type=int, metavar="LAG_NS", help="hold every frame twice")
    p.add_argument("--by-time", action="store_true",
                   help="with --doubled: records in the order of their times, not each copy "
                        "right behind its original")
    p.add_argument("--usec", action="store_true",
                   help="write each capture as classic pcap of microseconds (tcpdump's default)")
    p.add_argument("--split", action="store_true",
                   help="cut each capture into 2–4 ring files at random records; the report must "
                        "equal the truth and the whole file's report")
    p.add_argument("--work", default="/tmp/rdmascope-sweep", help="where captures are written")
    p.add_argument("-j", type=int, default=os.cpu_count() or 2, help="cases at once")
    a = p.parse_args()
    if a.doubled and a.split:
        p.error("--doubled does not go with --split")
    if a.doubled:
        a.scenarios = ",".join(s for s in a.scenarios.split(",") if s != "ib")
    a.packets = a.packets or ("2000,30000" if a.doubled else "2000,40000")
    os.makedirs(a.work, exist_ok=True)
    fails = 0
    with cf.ThreadPoolExecutor(a.j) as ex:
        for (i, sc, opts), d in ex.map(lambda c: run(a, c), cases(a)):
            if d:
                fails += 1
                held = f" (every frame held twice, {a.doubled} ns apart)" if a.doubled else ""
                print(f"FAIL case {i}: gen --scenario {sc} {' '.join(opts)}{held}")
                for line in d[:6]:
                    print("   ", line)
    print(f"{fails} of {a.n} cases differ from their truth")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
