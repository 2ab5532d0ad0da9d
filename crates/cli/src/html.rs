//! `analyze --html`: one self-contained page (inline CSS, SVG and script, nothing fetched) built
//! from the same report model as `--json`. Charts are SVG written here, not by a plotting crate:
//! the timeline is already bucketed (≤ 512 points a series), so a few hundred lines of SVG give
//! labelled axes, a colour-blind-safe palette and small files without another dependency.

use std::fmt::Write;

use rdmascope_analyze::report::{Report, Severity};
use rdmascope_analyze::Node;

/// Okabe–Ito: distinguishable with the common colour-vision deficiencies.
const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
];
const OTHER: &str = "#999999";
const W: f64 = 1180.0;
const H: f64 = 300.0;
const ML: f64 = 80.0;
const MR: f64 = 20.0;
const MT: f64 = 20.0;
const MB: f64 = 50.0;
/// A series to draw: name, values, colour.
type Line<'a> = (String, Vec<f64>, &'a str);

/// Report series as chart lines, each value scaled by `f`; "other flows" in grey.
fn lines(
    series: &[rdmascope_analyze::report::Series],
    f: impl Fn(u64) -> f64,
) -> Vec<Line<'static>> {
    series
        .iter()
        .enumerate()
        .map(|(i, se)| {
            let colour = if se.name.ends_with("other flows") {
                OTHER
            } else {
                PALETTE[i % PALETTE.len()]
            };
            (
                se.name.clone(),
                se.values.iter().map(|v| f(*v)).collect(),
                colour,
            )
        })
        .collect()
}

/// A CDF to draw: name, (x, fraction) points, colour.
type CdfSeries<'a> = (String, Vec<(f64, f64)>, &'a str);

/// Rows shown in each table.
const MAX_ROWS: usize = 500;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// "Nice" axis ticks covering 0..=max.
fn ticks(max: f64) -> Vec<f64> {
    if max <= 0.0 || !max.is_finite() {
        return vec![0.0, 1.0];
    }
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(mag * 10.0);
    let mut v = Vec::new();
    let mut t = 0.0;
    while t <= max + step * 0.5 {
        v.push(t);
        t += step;
    }
    v
}

fn num(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A line chart: `xs` shared by every series; `step` draws each value as a flat bucket.
fn line_chart(
    id: &str,
    title: &str,
    x_label: &str,
    y_label: &str,
    xs: &[f64],
    series: &[(String, Vec<f64>, &str)],
    log_x: bool,
) -> String {
    let mut s = String::new();
    let pw = W - ML - MR;
    let ph = H - MT - MB;
    let x_min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let x_max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (x_min, x_max) = if x_min.is_finite() && x_max > x_min {
        (x_min, x_max)
    } else {
        (0.0, 1.0)
    };
    // A log axis only pays when the values span more than a decade.
    let log_x = log_x && x_min > 0.0 && x_max / x_min > 20.0;
    let y_max = series
        .iter()
        .flat_map(|(_, v, _)| v.iter().copied())
        .fold(0.0, f64::max);
    let yt = ticks(y_max);
    let y_top = *yt.last().unwrap_or(&1.0);
    let lx = |x: f64| if log_x { x.max(1e-9).log10() } else { x };
    let (lx0, lx1) = (lx(x_min.max(if log_x { 1e-3 } else { x_min })), lx(x_max));
    let px = |x: f64| ML + (lx(x) - lx0) / (lx1 - lx0).max(1e-12) * pw;
    let py = |y: f64| MT + ph - y / y_top.max(1e-12) * ph;
    open_chart(&mut s, id, title, &yt);
    let xt: Vec<f64> = if log_x {
        let mut v = Vec::new();
        let mut d = 10f64.powf(lx0.floor());
        while d <= x_max * 1.0001 {
            for m in [1.0, 2.0, 5.0] {
                let t = d * m;
                if t >= x_min * 0.9999 && t <= x_max * 1.0001 {
                    v.push(t);
                }
            }
            d *= 10.0;
        }
        v
    } else {
        let step = ticks(x_max - x_min).get(1).copied().unwrap_or(1.0);
        let mut v = Vec::new();
        let mut t = (x_min / step).ceil() * step;
        while t <= x_max + step * 1e-6 {
            v.push(t);
            t += step;
        }
        v
    };
    for t in &xt {
        let x = px(*t);
        let _ = write!(s, "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{MT}\" y2=\"{}\" stroke=\"#eee\"/><text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\" class=\"tick\">{}</text>", MT + ph, MT + ph + 16.0, num(*t));
    }
    let x_label = if log_x {
        format!("{x_label}, log scale")
    } else {
        x_label.to_string()
    };
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" class=\"axis\">{}</text>",
        ML + pw / 2.0,
        H - 10.0,
        esc(&x_label)
    );
    let _ = write!(s, "<text transform=\"translate(18,{}) rotate(-90)\" text-anchor=\"middle\" class=\"axis\">{}</text>", MT + ph / 2.0, esc(y_label));
    for (name, v, colour) in series {
        let mut pts = String::new();
        for (x, y) in xs.iter().zip(v) {
            let _ = write!(pts, "{:.1},{:.1} ", px(*x), py(*y));
        }
        let _ = write!(s, "<polyline class=\"series\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.6\" points=\"{}\"><title>{}</title></polyline>", pts.trim_end(), esc(name));
    }
    s.push_str("</svg>");
    legend(&mut s, series.iter().map(|(n, _, c)| (n.as_str(), *c)));
    s.push_str("</figure>");
    s
}

fn legend<'a>(s: &mut String, items: impl Iterator<Item = (&'a str, &'a str)>) {
    s.push_str("<ul class=\"legend\">");
    for (n, c) in items {
        let _ = write!(
            s,
            "<li><span style=\"background:{c}\"></span>{}</li>",
            esc(n)
        );
    }
    s.push_str("</ul>");
}

/// Opens a chart: the figure and its caption, the SVG, the plot area, and a grid line with its
/// label at each of the `yt` ticks (the last tick is the top of the plot).
fn open_chart(s: &mut String, id: &str, title: &str, yt: &[f64]) {
    let pw = W - ML - MR;
    let ph = H - MT - MB;
    let y_top = *yt.last().unwrap_or(&1.0);
    let _ = write!(
        s,
        "<figure id=\"{id}\"><figcaption>{}</figcaption>",
        esc(title)
    );
    let _ = write!(s, "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"{}\">", esc(title));
    let _ = write!(s, "<rect x=\"{ML}\" y=\"{MT}\" width=\"{pw}\" height=\"{ph}\" fill=\"#fff\" stroke=\"#ccc\"/>");
    for t in yt {
        let y = MT + ph - t / y_top.max(1e-12) * ph;
        let _ = write!(s, "<line x1=\"{ML}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#eee\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" class=\"tick\">{}</text>", ML + pw, ML - 6.0, y + 4.0, num(*t));
    }
}

fn bar_chart(
    id: &str,
    title: &str,
    x_label: &str,
    y_label: &str,
    bars: &[(String, f64)],
) -> String {
    let mut s = String::new();
    let pw = W - ML - MR;
    let ph = H - MT - MB;
    let y_max = bars.iter().map(|b| b.1).fold(0.0, f64::max);
    let yt = ticks(y_max);
    let y_top = *yt.last().unwrap_or(&1.0);
    open_chart(&mut s, id, title, &yt);
    let n = bars.len().max(1) as f64;
    let bw = pw / n;
    for (i, (label, v)) in bars.iter().enumerate() {
        let h = v / y_top * ph;
        let x = ML + i as f64 * bw;
        let _ = write!(s, "<rect class=\"bar\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"{}\"><title>{}: {}</title></rect>", x + bw * 0.1, MT + ph - h, bw * 0.8, PALETTE[0], esc(label), num(*v));
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" class=\"tick\">{}</text>",
            x + bw / 2.0,
            MT + ph + 16.0,
            esc(label)
        );
    }
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" class=\"axis\">{}</text>",
        ML + pw / 2.0,
        H - 10.0,
        esc(x_label)
    );
    let _ = write!(s, "<text transform=\"translate(18,{}) rotate(-90)\" text-anchor=\"middle\" class=\"axis\">{}</text>", MT + ph / 2.0, esc(y_label));
    s.push_str("</svg></figure>");
    s
}

fn size_label(b: u64) -> String {
    match b {
        b if b >= 1 << 20 => format!("≤{}M", b >> 20),
        b if b >= 1 << 10 => format!("≤{}K", b >> 10),
        b => format!("≤{b}"),
    }
}

const CSS: &str = "body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1240px;padding:16px;color:#222}\
h1{font-size:22px;margin:4px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}\
.summary{display:grid;grid-template-columns:repeat(4,1fr);gap:8px}.summary div{background:#f5f7fa;padding:8px;border-radius:4px}\
.summary b{display:block;font-size:18px}.finding{border-left:6px solid #999;padding:6px 10px;margin:8px 0;background:#fafafa}\
.finding.critical{border-color:#D55E00}.finding.warning{border-color:#E69F00}.finding.info{border-color:#0072B2}\
.sev{font-weight:700;text-transform:uppercase;font-size:12px;margin-right:6px}.code{font-family:monospace}\
.advice{margin-top:4px}figure{margin:12px 0}figcaption{font-weight:600}svg{width:100%;height:auto}\
.tick{font-size:11px;fill:#555}.axis{font-size:12px;fill:#222}.legend{list-style:none;padding:0;margin:4px 0;display:flex;flex-wrap:wrap;gap:12px}\
.legend span{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}\
table{border-collapse:collapse;width:100%;font-size:12px}th,td{border-bottom:1px solid #e3e3e3;padding:3px 6px;text-align:right}\
th{cursor:pointer;background:#f0f3f7;position:sticky;top:0}td:nth-child(-n+4),th:nth-child(-n+4){text-align:left}\
tr:target{background:#fff3c4}.note{color:#666;font-size:12px}";

const JS: &str = "window.onerror=function(m){document.body.setAttribute('data-error',String(m));};\
function sortTable(th){var t=th.closest('table'),i=Array.prototype.indexOf.call(th.parentNode.children,th),b=t.tBodies[0];\
var asc=th.getAttribute('data-dir')!=='asc';th.setAttribute('data-dir',asc?'asc':'desc');\
var rows=Array.prototype.slice.call(b.rows);rows.sort(function(a,c){var x=a.cells[i].getAttribute('data-v')||a.cells[i].textContent,\
y=c.cells[i].getAttribute('data-v')||c.cells[i].textContent,nx=parseFloat(x),ny=parseFloat(y);\
var r=(!isNaN(nx)&&!isNaN(ny))?nx-ny:String(x).localeCompare(String(y));return asc?r:-r;});rows.forEach(function(r){b.appendChild(r);});}\
document.querySelectorAll('th').forEach(function(th){th.addEventListener('click',function(){sortTable(th);});});\
document.body.setAttribute('data-ready','1');";

fn cell(s: &mut String, text: &str, v: Option<f64>) {
    match v {
        Some(v) => {
            let _ = write!(s, "<td data-v=\"{v}\">{}</td>", esc(text));
        }
        None => {
            let _ = write!(s, "<td>{}</td>", esc(text));
        }
    }
}

/// The whole page.
pub fn render(r: &Report) -> String {
    // The page shows the first MAX_ROWS flows, several times: build their reports once.
    let flows: Vec<rdmascope_analyze::report::Flow> = r.flows.iter().take(MAX_ROWS).collect();
    let c = &r.capture;
    let t = &r.totals.counters;
    let mut s = String::with_capacity(256 * 1024);
    s.push_str("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">");
    let _ = write!(
        s,
        "<title>rdmascope report: {}</title><style>{CSS}</style></head><body>",
        esc(&c.files.join(", "))
    );
    let _ = write!(
        s,
        "<h1>rdmascope analyze</h1><p class=\"note\">{}</p>",
        esc(&c.files.join(", "))
    );
    let span = c.last_ts_ns.saturating_sub(c.first_ts_ns);
    s.push_str("<section id=\"summary\"><h2>Capture</h2><div class=\"summary\">");
    let facts = [
        (
            "packets",
            format!("{} ({} RDMA)", c.packets, c.rdma_packets),
        ),
        ("bytes", format!("{:.2} MB", c.bytes as f64 / 1e6)),
        ("duration", format!("{:.3} ms", span as f64 / 1e6)),
        (
            "link",
            format!(
                "{} Gb/s{}",
                c.link_bps / 1_000_000_000,
                if c.link_bps_from == "default" {
                    " (assumed)"
                } else {
                    ""
                }
            ),
        ),
        (
            "retransmitted",
            if t.reordered_packets > 0 {
                format!(
                    "{} (+{} gap-filled, {} of them reordered)",
                    t.retransmitted_packets, t.gap_filled_packets, t.reordered_packets
                )
            } else {
                format!(
                    "{} (+{} gap-filled)",
                    t.retransmitted_packets, t.gap_filled_packets
                )
            },
        ),
        (
            "NAKs / RNR NAKs",
            format!("{} / {}", t.naks.total(), t.rnr_naks),
        ),
        ("CNPs / CE marks", format!("{} / {}", t.cnp, t.ecn.ce)),
        (
            "PFC pause",
            format!(
                "{:.3} ms in {} episodes",
                r.pfc.pause_ns_total as f64 / 1e6,
                r.pfc.pause_episodes
            ),
        ),
    ];
    for (k, v) in facts {
        let _ = write!(s, "<div>{k}<b>{}</b></div>", esc(&v));
    }
    // Integrity: ICRC always, the VCRC of native IB frames when there are any.
    let v = &r.totals.vcrc;
    let mut crc = format!("{} bad of {}", t.icrc.bad, t.icrc.ok + t.icrc.bad);
    if v.ok + v.bad > 0 {
        let _ = write!(crc, "; VCRC {} bad of {}", v.bad, v.ok + v.bad);
    }
    let _ = write!(s, "<div>ICRC<b>{}</b></div>", esc(&crc));
    s.push_str("</div></section>");

    // Flow anchors: findings link to the flows table.
    let anchor = |name: &str| -> Option<usize> {
        flows
            .iter()
            .take(MAX_ROWS)
            .position(|f| format!("{} > {} qp 0x{:06x}", f.src, f.dst, f.dest_qp) == name)
    };
    s.push_str("<section id=\"findings\"><h2>Findings</h2>");
    if r.findings.is_empty() {
        s.push_str("<p>None: the transport looks healthy.</p>");
    }
    for f in &r.findings {
        let sev = match f.severity {
            Severity::Critical => "critical",
            Severity::Warning => "warning",
            Severity::Info => "info",
        };
        let _ = write!(s, "<div class=\"finding {sev}\"><span class=\"sev\">{sev}</span><span class=\"code\">{}</span> {}", esc(&f.code), esc(&f.summary));
        if !f.evidence.is_empty() {
            s.push_str("<ul>");
            for e in &f.evidence {
                let _ = write!(s, "<li>{}</li>", esc(e));
            }
            s.push_str("</ul>");
        }
        if !f.flows.is_empty() {
            s.push_str("<div>Flows: ");
            for (i, fl) in f.flows.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                match anchor(fl) {
                    Some(n) => {
                        let _ = write!(s, "<a href=\"#flow-{n}\">{}</a>", esc(fl));
                    }
                    None => s.push_str(&esc(fl)),
                }
            }
            s.push_str("</div>");
        }
        if !f.frames.is_empty() {
            let fr: Vec<String> = f.frames.iter().map(u64::to_string).collect();
            let _ = write!(s, "<div>Frames: {}</div>", fr.join(", "));
        }
        let _ = write!(
            s,
            "<div class=\"advice\"><b>What to do:</b> {}</div></div>",
            esc(&f.advice)
        );
    }
    s.push_str("</section>");

    // Charts.
    let tl = &r.timeline;
    let xs: Vec<f64> = (0..tl.buckets)
        .map(|i| (i as f64 + 0.5) * tl.bucket_ns as f64 / 1e6)
        .collect();
    s.push_str("<section id=\"charts\"><h2>Over time</h2>");
    let bucket = tl.bucket_ns.max(1) as f64;
    let tput = lines(&tl.throughput_bytes, |b| b as f64 * 8.0 / bucket);
    s.push_str(&line_chart(
        "chart-throughput",
        "Throughput per QP (busiest flows, the rest summed)",
        "time since the first packet (ms)",
        "Gb/s",
        &xs,
        &tput,
        false,
    ));
    let ev = lines(&tl.events, |v| v as f64);
    let per = format!("packets per {:.1} µs", tl.bucket_ns as f64 / 1e3);
    s.push_str(&line_chart(
        "chart-events",
        "Retransmissions, NAKs, RNR NAKs, CNPs and CE marks",
        "time since the first packet (ms)",
        &per,
        &xs,
        &ev,
        false,
    ));
    let pfc = lines(&tl.pfc_pause_ns, |ns| ns as f64 * 100.0 / bucket);
    if pfc.is_empty() {
        s.push_str("<figure id=\"chart-pfc\"><figcaption>PFC pause time per priority</figcaption><p class=\"note\">No PFC or PAUSE frame in this capture.</p></figure>");
    } else {
        s.push_str(&line_chart(
            "chart-pfc",
            "PFC pause time per priority",
            "time since the first packet (ms)",
            "% of time paused",
            &xs,
            &pfc,
            false,
        ));
    }
    if tl.ack_latency_cdf.is_empty() {
        s.push_str("<figure id=\"chart-latency\"><figcaption>ACK latency distribution</figcaption><p class=\"note\">No acknowledged request in this capture.</p></figure>");
    } else {
        // One x axis for every class: interleave their points on a shared, sorted x.
        let series: Vec<CdfSeries<'_>> = tl
            .ack_latency_cdf
            .iter()
            .enumerate()
            .map(|(i, c)| {
                (
                    format!("{} ({} ACKs)", c.name, c.count),
                    c.points
                        .iter()
                        .map(|(v, q)| (*v as f64 / 1e3, *q))
                        .collect(),
                    PALETTE[i % PALETTE.len()],
                )
            })
            .collect();
        s.push_str(&cdf_chart(&series));
    }
    let bars: Vec<(String, f64)> = tl
        .message_sizes
        .iter()
        .map(|(b, n)| (size_label(*b), *n as f64))
        .collect();
    s.push_str(&bar_chart(
        "chart-sizes",
        "Message size distribution",
        "message size (bytes, power-of-two buckets)",
        "messages",
        &bars,
    ));
    s.push_str("</section>");

    // DCB settings from LLDP, when the capture has any.
    if !r.dcbx.senders.is_empty() {
        s.push_str("<section id=\"dcbx\"><h2>DCBX (from LLDP)</h2><table><thead><tr>");
        for h in [
            "sender", "port", "MAC", "frames", "PFC on", "willing", "RoCE on", "CNPV",
        ] {
            let _ = write!(s, "<th>{h}</th>");
        }
        s.push_str("</tr></thead><tbody>");
        let list = |v: &[u8]| v.iter().map(u8::to_string).collect::<Vec<_>>().join(", ");
        for d in &r.dcbx.senders {
            let (pfc, willing) = match &d.pfc {
                Some(p) => (list(&p.enabled), if p.willing { "yes" } else { "no" }),
                None => ("-".to_string(), "-"),
            };
            let cnpv = d.cnpv.as_deref().map_or("-".to_string(), list);
            let _ = write!(
                s,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{willing}</td><td>{}</td><td>{}</td></tr>",
                esc(&d.name),
                esc(&d.port),
                esc(&d.src_mac),
                d.frames,
                esc(&pfc),
                esc(&list(&d.roce_priorities)),
                esc(&cnpv)
            );
        }
        s.push_str("</tbody></table></section>");
    }

    // Tables.
    s.push_str("<section id=\"connections\"><h2>Connections</h2><p class=\"note\">Click a column to sort.</p><table><thead><tr>");
    for h in [
        "A",
        "QPN A",
        "B",
        "QPN B",
        "type",
        "learned",
        "application",
        "MTU",
        "state",
        "packets",
        "bytes",
        "retransmitted",
        "NAKs",
        "RNR",
        "CNPs",
        "CE",
        "ACK p50 (µs)",
        "ACK p99 (µs)",
    ] {
        let _ = write!(s, "<th>{h}</th>");
    }
    s.push_str("</tr></thead><tbody>");
    let flow = |src: &str, dst: &str, qp: u32| {
        let (src, dst) = (src.parse::<Node>().ok()?, dst.parse::<Node>().ok()?);
        r.flows.find(src, dst, qp)
    };
    for cn in r.connections.iter().take(MAX_ROWS) {
        let ab = flow(&cn.a.node, &cn.b.node, cn.b.qpn);
        let ba = flow(&cn.b.node, &cn.a.node, cn.a.qpn);
        let (ab, ba) = (ab.as_ref(), ba.as_ref());
        let sum =
            |g: &dyn Fn(&rdmascope_analyze::report::Flow) -> u64| ab.map_or(0, g) + ba.map_or(0, g);
        let lat = ab.map(|f| f.ack_latency_ns).unwrap_or_default();
        s.push_str("<tr>");
        cell(&mut s, &cn.a.node, None);
        cell(
            &mut s,
            &format!("0x{:06x}", cn.a.qpn),
            Some(f64::from(cn.a.qpn)),
        );
        cell(&mut s, &cn.b.node, None);
        cell(
            &mut s,
            &format!("0x{:06x}", cn.b.qpn),
            Some(f64::from(cn.b.qpn)),
        );
        cell(&mut s, &cn.transport, None);
        cell(&mut s, &cn.learned, None);
        cell(&mut s, cn.application.as_deref().unwrap_or("-"), None);
        let mtu = cn
            .path_mtu
            .or(cn.observed_mtu_a_to_b)
            .or(cn.observed_mtu_b_to_a);
        cell(
            &mut s,
            &mtu.map_or("-".into(), |m| m.to_string()),
            mtu.map(f64::from),
        );
        cell(&mut s, &cn.state, None);
        for v in [
            sum(&|f| f.counters.packets),
            sum(&|f| f.counters.bytes),
            sum(&|f| f.counters.retransmitted_packets),
            sum(&|f| f.counters.naks.total()),
            sum(&|f| f.counters.rnr_naks),
            sum(&|f| f.counters.cnp),
            sum(&|f| f.counters.ecn.ce),
        ] {
            cell(&mut s, &v.to_string(), Some(v as f64));
        }
        for v in [lat.p50, lat.p99] {
            cell(
                &mut s,
                &if lat.count > 0 {
                    format!("{:.2}", v as f64 / 1e3)
                } else {
                    "-".into()
                },
                Some(v as f64 / 1e3),
            );
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table></section>");
    s.push_str("<section id=\"flows\"><h2>Flows</h2><table><thead><tr>");
    for h in [
        "source",
        "destination",
        "dest QP",
        "type",
        "packets",
        "bytes",
        "goodput (Gb/s)",
        "messages",
        "retransmitted",
        "gap-filled",
        "missing",
        "dup ACKs",
        "NAKs",
        "CNPs",
        "CE",
        "ICRC bad",
    ] {
        let _ = write!(s, "<th>{h}</th>");
    }
    s.push_str("</tr></thead><tbody>");
    for (i, f) in flows.iter().take(MAX_ROWS).enumerate() {
        let k = &f.counters;
        let _ = write!(s, "<tr id=\"flow-{i}\">");
        cell(&mut s, &f.src, None);
        cell(&mut s, &f.dst, None);
        cell(
            &mut s,
            &format!("0x{:06x}", f.dest_qp),
            Some(f64::from(f.dest_qp)),
        );
        cell(&mut s, &f.transport, None);
        cell(&mut s, &k.packets.to_string(), Some(k.packets as f64));
        cell(&mut s, &k.bytes.to_string(), Some(k.bytes as f64));
        cell(
            &mut s,
            &format!("{:.2}", f.goodput_bps as f64 / 1e9),
            Some(f.goodput_bps as f64),
        );
        for v in [
            f.messages.count,
            k.retransmitted_packets,
            k.gap_filled_packets,
            k.missing_packets,
            k.duplicate_acks,
            k.naks.total(),
            k.cnp,
            k.ecn.ce,
            k.icrc.bad,
        ] {
            cell(&mut s, &v.to_string(), Some(v as f64));
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>");
    if r.flows.len() > MAX_ROWS {
        let _ = write!(
            s,
            "<p class=\"note\">{} more flows in the JSON report.</p>",
            r.flows.len() - MAX_ROWS
        );
    }
    let _ = writeln!(s, "</section><script>{JS}</script></body></html>");
    s
}

/// CDFs with a logarithmic latency axis.
fn cdf_chart(series: &[CdfSeries<'_>]) -> String {
    // Sample every class at the same x points: the union of their values.
    let mut xs: Vec<f64> = series
        .iter()
        .flat_map(|(_, p, _)| p.iter().map(|x| x.0.max(0.001)))
        .collect();
    xs.sort_by(|a, b| a.total_cmp(b));
    xs.dedup();
    let lines: Vec<(String, Vec<f64>, &str)> = series
        .iter()
        .map(|(n, pts, c)| {
            let ys = xs
                .iter()
                .map(|x| {
                    pts.iter()
                        .filter(|p| p.0.max(0.001) <= *x)
                        .map(|p| p.1)
                        .fold(0.0, f64::max)
                })
                .collect();
            (n.clone(), ys, *c)
        })
        .collect();
    line_chart(
        "chart-latency",
        "ACK latency distribution (CDF) per connection class",
        "ACK latency (µs)",
        "fraction of ACKed requests",
        &xs,
        &lines,
        true,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axis_has_ticks() {
        let s = cdf_chart(&[(
            "a".into(),
            vec![(0.5, 0.0), (2.0, 0.5), (300.0, 1.0)],
            PALETTE[0],
        )]);
        assert!(
            s.contains(">1</text>") && s.contains(">10</text>") && s.contains(">100</text>"),
            "{s}"
        );
        // A narrow range gets a linear axis with ticks.
        let s = cdf_chart(&[("a".into(), vec![(2.7, 0.0), (7.1, 1.0)], PALETTE[0])]);
        assert!(s.contains(">4</text>") || s.contains(">4.0</text>"), "{s}");
    }

    #[test]
    fn linear_ticks_are_nice() {
        assert_eq!(ticks(9.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(ticks(0.0), vec![0.0, 1.0]);
    }
}
