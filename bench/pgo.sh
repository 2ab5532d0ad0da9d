#!/usr/bin/env bash
# A profile-guided release build of rdmascope: target/pgo/release/rdmascope.
#
#  1. a release build instrumented to count its branches and calls (`-Cprofile-generate`);
#  2. it analyses training captures that `gen` writes: every scenario, IPv4 and IPv6, cut to
#     128 bytes and whole, with seeds and lengths unlike the benchmark's captures;
#  3. llvm-profdata merges the counts;
#  4. the release build is made again with them (`-Cprofile-use`): LLVM lays out the hot paths
#     and allocates registers by the counts (DESIGN §8: 1–5% off a 2M-packet pass since the
#     plain build inlines what the profile inlined; 7% before).
#
# The plain `cargo build --release` needs none of this. llvm-profdata comes from rustup's
# llvm-tools component (its LLVM is rustc's own; `rustup component add llvm-tools`), else from
# Debian's llvm-NN package. Exits 2, saying so, when neither is there.
set -euo pipefail
cd "$(dirname "$0")/.."

host=$(rustc -vV | sed -n 's/^host: //p')
llvm_major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ] && command -v rustup > /dev/null; then
  rustup component add llvm-tools > /dev/null 2>&1 || true
fi
if [ ! -x "$profdata" ]; then
  # Debian's newest: an older llvm-profdata still reads the raw profiles of rustc's LLVM
  # (checked with LLVM 19 against rustc's LLVM 22), and rustc reads what it writes.
  profdata=$(ls /usr/lib/llvm-*/bin/llvm-profdata 2> /dev/null | sort -V | tail -1 || true)
fi
if [ -z "$profdata" ] || [ ! -x "$profdata" ]; then
  echo "bench/pgo.sh: no llvm-profdata (rustup component add llvm-tools, or apt-get install -y llvm-19); rustc's LLVM is $llvm_major" >&2
  exit 2
fi

work=target/pgo-work
rm -rf "$work"
mkdir -p "$work/profiles" "$work/train"
RUSTFLAGS="-Cprofile-generate=$PWD/$work/profiles" \
  cargo build --release --quiet --target-dir target/pgo-instrumented
trainer=target/pgo-instrumented/release/rdmascope
plain=target/release/rdmascope
cargo build --release --quiet
# The training captures are written by the plain build, so only the analysis is profiled.
seed=9001
for scenario in clean lossy rnr incast pfc-storm misconfig ib mixed reorder errors; do
  for variant in "--snaplen 128" "" "--snaplen 128 --ipv6"; do
    seed=$((seed + 1))
    f="$work/train/$scenario-$seed.pcapng"
    # shellcheck disable=SC2086
    $plain gen --scenario "$scenario" --seed "$seed" --packets 150000 $variant -o "$f" \
      > /dev/null 2>&1 || continue
    $trainer analyze --json "$f" > /dev/null
    $trainer analyze "$f" > /dev/null
  done
done
"$profdata" merge -o "$work/merged.profdata" "$work"/profiles/*.profraw
RUSTFLAGS="-Cprofile-use=$PWD/$work/merged.profdata" \
  cargo build --release --quiet --target-dir target/pgo
echo "target/pgo/release/rdmascope (profile-guided; llvm-profdata: $profdata)"
