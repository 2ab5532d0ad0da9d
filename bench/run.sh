#!/usr/bin/env bash
# Benchmarks `rdmascope show` against tshark and tcpdump on the same file, in one run.
# usage: bench/run.sh [PACKETS]   (default 2,000,000; the capture is cut to 128 bytes a packet)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000000}
mkdir -p bench/out
cap=bench/out/roce-$n-s128.pcap
[ -f "$cap" ] || python3 bench/make_roce_capture.py "$cap" "$n" 128
cargo build --release --quiet
bin=target/release/rdmascope
cat "$cap" > /dev/null # warm the page cache

secs() { local s e; s=$(date +%s.%N); "$@" > /dev/null 2>&1; e=$(date +%s.%N); echo "$e - $s" | bc -l; }
rss() { /usr/bin/time -f %M "$@" 2>&1 > /dev/null | tail -1; }
pps() { echo "$1 / $2" | bc -l; }

tj=100000 # tshark -T json is slow: time it on the first 100,000 packets and compare rates
ours=$(secs $bin show "$cap")
ours_json=$(secs $bin show --json "$cap")
tshark_line=$(secs tshark -n -r "$cap")
tcpdump_line=$(secs tcpdump -nn -r "$cap")
tshark_json=$(secs tshark -n -r "$cap" -c $tj -T json)
rss_kb=$(rss $bin show "$cap")
rss_json_kb=$(rss $bin show --json "$cap")

printf 'packets: %d (%s, %s bytes)\n' "$n" "$cap" "$(stat -c %s "$cap")"
printf '%-28s %8.2f s  %6.2f Mpps\n' "rdmascope show" "$ours" "$(pps "$n/1000000" "$ours")"
printf '%-28s %8.2f s  %6.2f Mpps\n' "rdmascope show --json" "$ours_json" "$(pps "$n/1000000" "$ours_json")"
printf '%-28s %8.2f s  %6.2f Mpps\n' "tshark -r" "$tshark_line" "$(pps "$n/1000000" "$tshark_line")"
printf '%-28s %8.2f s  %6.2f Mpps\n' "tcpdump -nn -r" "$tcpdump_line" "$(pps "$n/1000000" "$tcpdump_line")"
printf '%-28s %8.2f s  %6.3f Mpps (first %d packets)\n' "tshark -T json" "$tshark_json" "$(pps "$tj/1000000" "$tshark_json")" "$tj"
printf 'ratio show / tshark:           %6.1fx\n' "$(echo "$tshark_line / $ours" | bc -l)"
printf 'ratio show / tcpdump:          %6.1fx\n' "$(echo "$tcpdump_line / $ours" | bc -l)"
printf 'ratio show --json / tshark -T json (per packet): %6.1fx\n' "$(echo "($tshark_json / $tj) / ($ours_json / $n)" | bc -l)"
printf 'peak RSS: show %d KB, show --json %d KB\n' "$rss_kb" "$rss_json_kb"
