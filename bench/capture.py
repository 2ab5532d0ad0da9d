#!/usr/bin/env python3
"""Capture benchmark (issue #5): over one veth pair between two network namespaces, find the
highest replay rate at which `rdmascope capture -w` loses no packet, and the same for
`tcpdump -w` (with its default 2 MiB buffer, and with -B 65536 = our 64 MiB ring), in one run.
Also reports each capturer's own CPU time (user + system, from wait4) per million packets.
When the sender cannot go faster (it sends below 90% of the rate asked), the search stops
there and the figure is a lower bound, marked as sender-limited. Needs root, iproute2 and tcpdump.

    sudo bench/capture.py [--packets 200000] [--loops 3]

A trial replays a `gen --scenario mixed` capture (full frames, ~1060 B average) at a fixed
rate with `rdmascope replay --pps`; it passes when the capturer wrote every frame and its
kernel counters report no drop. Output files go to /dev/shm so the disk is not the limit.
"""
import argparse, os, re, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target/release/rdmascope")
OUT = "/dev/shm/rdmascope-bench"
NS = ["rsbench-a", "rsbench-b"]
DEV = ["rsbencha", "rsbenchb"]
RATES = [25e3, 50e3, 100e3, 200e3, 300e3, 400e3, 500e3, 600e3, 800e3, 1.0e6, 1.2e6, 1.5e6, 2.0e6]


def sh(*args, check=True, **kw):
    return subprocess.run(list(args), check=check, **kw)


def setup():
    teardown()
    for n in NS:
        sh("ip", "netns", "add", n)
    sh("ip", "link", "add", DEV[0], "type", "veth", "peer", "name", DEV[1])
    for n, d in zip(NS, DEV):
        sh("ip", "link", "set", d, "netns", n)
        sh("ip", "-n", n, "link", "set", d, "mtu", "9000")
        sh("ip", "-n", n, "link", "set", d, "up")


def teardown():
    for n in NS:
        sh("ip", "netns", "del", n, check=False, stderr=subprocess.DEVNULL)


def trial(tool, rate, sent_file, expected, loops):
    out = os.path.join(OUT, "trial.pcapng" if tool == "rdmascope" else "trial.pcap")
    if os.path.exists(out):
        os.remove(out)
    err_path = os.path.join(OUT, "capture.err")
    err = open(err_path, "w")
    if tool == "rdmascope":
        cmd = [BIN, "capture", "-i", DEV[0], "-w", out]
        ready = "capturing on"
    else:
        cmd = ["tcpdump", "-i", DEV[0], "-w", out, "-n"]
        if tool == "tcpdump-B64M":
            cmd += ["-B", "65536"]
        cmd += ["udp dst port 4791 or ether proto 0x8808 or ether proto 0x8915"]
        ready = "listening on"
    p = subprocess.Popen(["ip", "netns", "exec", NS[0]] + cmd, stdout=subprocess.DEVNULL, stderr=err)
    t0 = time.time()
    while ready not in open(err_path).read():
        if time.time() - t0 > 20:
            p.kill()
            raise SystemExit(f"{tool} did not start: {open(err_path).read()}")
        time.sleep(0.02)
    time.sleep(0.2)
    rp = sh("ip", "netns", "exec", NS[1], BIN, "replay", sent_file, "-i", DEV[1],
            "--pps", str(int(rate)), "--loop", str(loops), capture_output=True, text=True)
    achieved = float(re.search(r"\(([\d.]+) pps", rp.stderr).group(1))
    # Both capturers hand the kernel's last, partly filled ring block over within 1 s.
    time.sleep(2.0)
    p.send_signal(2)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = status
    cpu = ru.ru_utime + ru.ru_stime
    text = open(err_path).read()
    if tool == "rdmascope":
        m = re.search(r"(\d+) packets captured .*?; (\d+) dropped by the kernel", text)
        got, drops = int(m.group(1)), int(m.group(2))
    else:
        m1 = re.search(r"(\d+) packets captured", text)
        m2 = re.search(r"(\d+) packets dropped by kernel", text)
        if not (m1 and m2):
            print(f"{tool}: no summary (exit status {p.returncode}): {text.strip()[-300:]}", flush=True)
            return False, achieved, 0, -1, cpu
        got, drops = int(m1.group(1)), int(m2.group(1))
    ok = got == expected * loops and drops == 0
    return ok, achieved, got, drops, cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--packets", type=int, default=200000)
    ap.add_argument("--loops", type=int, default=3)
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/capture.py needs root (network namespaces, packet sockets)")
    sh("cargo", "build", "--release", "--quiet", cwd=ROOT)
    os.makedirs(OUT, exist_ok=True)
    sent = os.path.join(OUT, "mixed.pcap")
    sh(BIN, "gen", "--scenario", "mixed", "--packets", str(a.packets), "-o", sent,
       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    setup()
    results = {}
    try:
        for tool in ["rdmascope", "tcpdump", "tcpdump-B64M"]:
            best = None
            limited = False
            for rate in RATES:
                ok, achieved, got, drops, cpu = trial(tool, rate, sent, a.packets, a.loops)
                per_m = cpu / max(got, 1) * 1e6
                print(f"{tool:13} asked {rate/1e3:6.0f} kpps, sent {achieved/1e3:6.0f} kpps: "
                      f"{got} captured, {drops} kernel drops, {cpu:.2f} s CPU "
                      f"({per_m:.2f} s per Mpkt) -> {'lossless' if ok else 'LOSS'}", flush=True)
                if not ok:
                    break
                if best is None or achieved > best[0]:
                    best = (achieved, per_m)
                if achieved < 0.9 * rate:
                    limited = True
                    break
            results[tool] = best and (best[0], best[1], limited)
    finally:
        teardown()
    print()
    for tool, best in results.items():
        if best:
            bound = " (sender-limited: at least this)" if best[2] else ""
            print(f"{tool:13} highest lossless rate {best[0]/1e3:.0f} kpps{bound}, CPU {best[1]:.2f} s per million packets")
        else:
            print(f"{tool:13} lost packets even at {RATES[0]/1e3:.0f} kpps")
    if results.get("rdmascope") and results.get("tcpdump"):
        print(f"ratio rdmascope / tcpdump (default buffer): {results['rdmascope'][0] / results['tcpdump'][0]:.2f}")
    if results.get("rdmascope") and results.get("tcpdump-B64M"):
        print(f"ratio rdmascope / tcpdump -B 65536:        {results['rdmascope'][0] / results['tcpdump-B64M'][0]:.2f}")


if __name__ == "__main__":
    main()
