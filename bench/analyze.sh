#!/usr/bin/env bash
# Benchmarks `gen` and `analyze` (issues #3 and #4), all peers measured in the same run:
#  - gen --scenario mixed --packets 2000000 --snaplen 128 (time);
#  - analyze of that capture vs `tshark -q -z conv,udp` and `cat FILE > /dev/null`, as
#    `cargo build --release` builds it and as bench/pgo.sh does (profile-guided; skipped, and
#    said so, without llvm-profdata or with PGO=0);
#  - analyze of a ~1 GB full-payload capture (ICRC verified) in GB/s, RoCEv2 and InfiniBand;
#  - peak RSS for 2M and 4M packets (memory must grow with flows, not packets).
#  - the cache-line round trip between the two CPUs before and after the analyze/cat pairs
#    (bench/pingpong.rs), which tells the VM's placement of its two vCPUs.
# Times are medians of $N runs (default 5; tshark and gen: one run) and peak RSS medians of
# $RSS_N runs (default 15), all in this one invocation; cat and analyze alternate run by run, as
# do the two captures of each peak RSS pair.
set -euo pipefail
cd "$(dirname "$0")/.."
# tshark is a peer of the benchmark: without it the ratio would be meaningless.
command -v tshark > /dev/null || { echo "bench/analyze.sh: tshark not found (apt-get install -y tshark)" >&2; exit 1; }
mkdir -p bench/out
cargo build --release --quiet
bin=target/release/rdmascope
# The profile-guided build (bench/pgo.sh), measured beside the plain one in the same rounds.
pgo=""
if [ "${PGO:-1}" != 0 ]; then
  if bash bench/pgo.sh > /dev/null; then
    pgo=target/pgo/release/rdmascope
  else
    echo "bench/analyze.sh: no profile-guided build (see bench/pgo.sh); the plain build only" >&2
  fi
fi
# The round trip of a cache line between the two CPUs (bench/pingpong.rs): whether they share
# an L3 moves the two-thread pass more than anything else on this VM.
rustc -O --edition 2021 bench/pingpong.rs -o bench/out/pingpong
# Median wall time of $N runs (the VM's speed drifts; the median of interleaved peers is fairer).
t() {
  local s e
  for _ in $(seq "${N:-5}"); do
    s=$(date +%s.%N); "$@" > /dev/null 2>&1; e=$(date +%s.%N); echo "$e - $s" | bc -l
  done | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'
}
# Peak RSS (KB) of `analyze --json` on two files, $RSS_N runs each (default 15), alternating
# between them: "median-of-A median-of-B min-max-of-A min-max-of-B". A run's peak moves by up
# to 0.6 MB with the two threads' timing and the kernel's approximate RSS counters.
rss_pair() {
  for _ in $(seq "${RSS_N:-15}"); do
    for f in "$1" "$2"; do
      echo "$f $(/usr/bin/time -f %M $bin analyze --json "$f" 2>&1 > /dev/null | tail -1)"
    done
  done | awk -v a="$1" -v b="$2" '
    { v[$1] = v[$1] " " $2 }
    function stats(s,   n, x, i, j, t) {
      n = split(s, x, " ")
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
      return x[int((n + 1) / 2)] " " x[1] "-" x[n]
    }
    END { split(stats(v[a]), p, " "); split(stats(v[b]), q, " "); print p[1], q[1], p[2], q[2] }'
}

# The captures below are kept between runs; they are generated again when the generator's
# sources (synth, wire) changed since they were made.
stamp=$(git log -1 --format=%H -- crates/synth crates/wire 2>/dev/null; git status --porcelain -- crates/synth crates/wire 2>/dev/null)
if [ "$stamp" != "$(cat bench/out/.stamp 2>/dev/null)" ]; then
  rm -f bench/out/*.pcap
  echo "$stamp" > bench/out/.stamp
fi
m2=bench/out/mixed-2m-s128.pcap
m4=bench/out/mixed-4m-s128.pcap
big=bench/out/clean-1g.pcap
ib=bench/out/ib-1g.pcap
i2=bench/out/incast-2m-s128.pcap
i4=bench/out/incast-4m-s128.pcap
gen_s=$(N=1 t $bin gen --scenario mixed --packets 2000000 --snaplen 128 -o $m2)
[ -f $m4 ] || $bin gen --scenario mixed --packets 4000000 --snaplen 128 -o $m4 2>/dev/null
[ -f $i2 ] || $bin gen --scenario incast --packets 2000000 --snaplen 128 -o $i2 2>/dev/null
[ -f $i4 ] || $bin gen --scenario incast --packets 4000000 --snaplen 128 -o $i4 2>/dev/null
[ -f $big ] || $bin gen --scenario clean --packets 1150000 -o $big 2>/dev/null
[ -f $ib ] || $bin gen --scenario ib --packets 850000 -o $ib 2>/dev/null
# Flush the files just written (writeback would compete with the timed runs), then read them
# into the page cache so every peer reads from memory.
sync
cat $m2 $m4 $big > /dev/null

# cat and analyze alternate, run after run, so both see the same phase of the VM's speed
# (which moves analyze, CPU-bound on two cores, more than cat, bound by memory copies).
rt_before=$(bench/out/pingpong)
pairs=$(for _ in $(seq "${N:-5}"); do
  s=$(date +%s.%N); cat $m2 > /dev/null; e=$(date +%s.%N); c=$(echo "$e - $s" | bc -l)
  s=$(date +%s.%N); $bin analyze --json $m2 > /dev/null 2>&1; e=$(date +%s.%N)
  a=$(echo "$e - $s" | bc -l)
  p=$a
  if [ -n "$pgo" ]; then
    s=$(date +%s.%N); $pgo analyze --json $m2 > /dev/null 2>&1; e=$(date +%s.%N)
    p=$(echo "$e - $s" | bc -l)
  fi
  echo "$c $a $p"
done)
rt_after=$(bench/out/pingpong)
cat_s=$(echo "$pairs" | awk '{print $1}' | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
an_s=$(echo "$pairs" | awk '{print $2}' | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
pair_ratio=$(echo "$pairs" | awk '{print $1 / $2}' | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
pgo_s=$(echo "$pairs" | awk '{print $3}' | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
pgo_ratio=$(echo "$pairs" | awk '{print $1 / $3}' | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
ts_s=$(N=1 t tshark -n -q -r $m2 -z conv,udp)
big_bytes=$(stat -c %s $big)
big_s=$(t $bin analyze --json $big)
ib_bytes=$(stat -c %s $ib)
cat $ib > /dev/null
ib_s=$(t $bin analyze --json $ib)
read -r rss2 rss4 rng2 rng4 <<< "$(rss_pair $m2 $m4)"
read -r rssi2 rssi4 rngi2 rngi4 <<< "$(rss_pair $i2 $i4)"

# The machine: the two-thread pass scales with the cores' speed, cat with the memory's, so the
# fraction of cat differs between machine kinds (0.15-0.27 on a Zen 4 EPYC with its vCPUs far or near, 0.12-0.14 on a Zen 1).
cpu=$(awk -F': ' '/^model name/ {m=$2} /^cpu family/ {f=$2} /^model\t/ {o=$2} END {printf "%s, family %s model %s", m, f, o}' /proc/cpuinfo)
printf 'machine: %s; %s CPUs; L2 %s, L3 %s\n' "$cpu" "$(nproc)" \
  "$(lscpu | awk -F': *' '/^L2 cache/ {print $2}')" "$(lscpu | awk -F': *' '/^L3 cache/ {print $2}')"
printf 'gen mixed 2,000,000 packets, snaplen 128:   %.2f s\n' "$gen_s"
printf 'analyze 2,000,000 packets:                  %.3f s = %.1f Mpps\n' "$an_s" "$(echo "2 / $an_s" | bc -l)"
printf 'tshark -q -z conv,udp, same file:           %.2f s = %.2f Mpps\n' "$ts_s" "$(echo "2 / $ts_s" | bc -l)"
printf 'cat FILE > /dev/null, same file:            %.3f s\n' "$cat_s"
printf 'ratio analyze / tshark conv:                %.1fx\n' "$(echo "$ts_s / $an_s" | bc -l)"
printf 'analyze speed as a fraction of cat:         %.3f (median of the run-by-run ratios: %.3f)\n' "$(echo "$cat_s / $an_s" | bc -l)" "$pair_ratio"
if [ -n "$pgo" ]; then
  printf '  profile-guided build (bench/pgo.sh):      %.3f s = %.1f Mpps, %.3f of cat (median of the run-by-run ratios: %.3f)\n' \
    "$pgo_s" "$(echo "2 / $pgo_s" | bc -l)" "$(echo "$cat_s / $pgo_s" | bc -l)" "$pgo_ratio"
fi
printf '  cache-line round trip between the two CPUs: %d ns before these runs, %d ns after\n' "$rt_before" "$rt_after"
printf '  (bench/pingpong.rs: far apart, the two-thread pass slows and cat does not)\n'
printf 'analyze %s bytes full payload + ICRC:   %.3f s = %.2f GB/s\n' "$big_bytes" "$big_s" "$(echo "$big_bytes / $big_s / 1000000000" | bc -l)"
printf 'analyze %s bytes InfiniBand + ICRC + VCRC: %.3f s = %.2f GB/s\n' "$ib_bytes" "$ib_s" "$(echo "$ib_bytes / $ib_s / 1000000000" | bc -l)"
printf 'peak RSS, mixed (new connections keep opening): 2M packets %d KB, 4M packets %d KB (+%.1f%%)\n' "$rss2" "$rss4" "$(echo "($rss4 - $rss2) * 100 / $rss2" | bc -l)"
printf '  medians of %d runs each; ranges %s and %s KB\n' "${RSS_N:-15}" "$rng2" "$rng4"
f2=$($bin analyze --json $m2 | grep -c '"dest_qp"')
f4=$($bin analyze --json $m4 | grep -c '"dest_qp"')
printf '  flows: %d and %d, so about %.2f KB of peak RSS per added flow\n' "$f2" "$f4" "$(echo "($rss4 - $rss2) / ($f4 - $f2)" | bc -l)"
printf 'peak RSS, fixed flows (incast): 2M packets %d KB, 4M packets %d KB (+%.1f%%)\n' "$rssi2" "$rssi4" "$(echo "($rssi4 - $rssi2) * 100 / $rssi2" | bc -l)"
printf '  medians of %d runs each; ranges %s and %s KB\n' "${RSS_N:-15}" "$rngi2" "$rngi4"
