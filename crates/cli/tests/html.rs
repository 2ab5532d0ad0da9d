//! `analyze --html`: the report's structure, and a real browser rendering it.

mod common;

use std::process::Command;

fn report(name: &str, args: &[&str]) -> (std::path::PathBuf, String) {
    let d = common::tmp_dir("html-test");
    let cap = d.join(format!("{name}.pcapng"));
    let o = common::bin()
        .args(["gen", "--scenario", "mixed", "-o"])
        .arg(&cap)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = d.join(format!("{name}.html"));
    let o = common::bin()
        .arg("analyze")
        .arg(&cap)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&html).unwrap();
    (html, text)
}

#[test]
fn structure() {
    let (_, html) = report("structure", &["--packets", "40000"]);
    for id in [
        "summary",
        "findings",
        "charts",
        "chart-throughput",
        "chart-events",
        "chart-pfc",
        "chart-latency",
        "chart-sizes",
        "dcbx",
        "connections",
        "flows",
    ] {
        assert!(
            html.contains(&format!("id=\"{id}\"")),
            "section {id} missing"
        );
    }
    // Self-contained: every src/href is an in-page anchor; nothing is fetched.
    for attr in ["src=\"", "href=\""] {
        for (i, _) in html.match_indices(attr) {
            let v = &html[i + attr.len()..];
            assert!(
                v.starts_with('#'),
                "external reference: {}",
                &v[..v.find('"').unwrap_or(40).min(80)]
            );
        }
    }
    assert!(
        !html.contains("http://")
            || html.matches("http://").count()
                == html.matches("http://www.w3.org/2000/svg").count(),
        "a URL other than the SVG namespace"
    );
    assert!(!html.contains("https://"));
    // Every chart is well-formed SVG with data in it.
    let mut charts = 0;
    for (i, _) in html.match_indices("<svg") {
        let end = html[i..].find("</svg>").unwrap() + i + "</svg>".len();
        let doc = roxmltree::Document::parse(&html[i..end])
            .unwrap_or_else(|e| panic!("invalid SVG: {e}"));
        let marks = doc
            .descendants()
            .filter(|n| {
                n.has_tag_name("polyline")
                    || (n.has_tag_name("rect") && n.attribute("class") == Some("bar"))
            })
            .count();
        assert!(marks > 0, "chart without data");
        charts += 1;
    }
    assert!(charts >= 5, "{charts} charts");
    // Findings link to flows that exist.
    for (i, _) in html.match_indices("href=\"#flow-") {
        let id = &html[i + 7..i + 7 + html[i + 7..].find('"').unwrap()];
        assert!(html.contains(&format!("id=\"{id}\"")), "dangling link {id}");
    }
    assert!(html.contains("pfc.storm") && html.contains("transport.loss"));
    // The mixed scenario's LLDP senders (its misconfig part) and its IB part's VCRCs.
    assert!(
        html.contains("<td>leaf1</td><td>eth0</td><td>02:00:00:00:ff:02</td>"),
        "DCBX sender row"
    );
    assert!(html.contains("; VCRC 0 bad of "), "VCRC summary");
}

#[test]
fn stays_small_for_two_million_packets() {
    let (_, html) = report("big", &["--packets", "2000000", "--snaplen", "128"]);
    assert!(html.len() < 5 << 20, "{} bytes", html.len());
}

fn chromium() -> Option<&'static str> {
    for c in ["chromium", "chromium-browser"] {
        if Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return Some(c);
        }
    }
    eprintln!("NOTICE: chromium is not installed: skipping the browser test (apt-get install -y chromium; .ci/run does this).");
    None
}

fn headless(bin: &str, profile: &std::path::Path) -> Command {
    let mut c = Command::new(bin);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--virtual-time-budget=3000",
    ]);
    c.arg(format!("--user-data-dir={}", profile.display()));
    c
}

#[test]
fn renders_in_a_real_browser() {
    let Some(bin) = chromium() else { return };
    let (html, _) = report("browser", &["--packets", "40000"]);
    let d = common::tmp_dir("html-browser");
    let url = format!("file://{}", html.display());
    let o = headless(bin, &d.join("p1"))
        .args(["--dump-dom", "--enable-logging=stderr", "--v=0"])
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let dom = String::from_utf8_lossy(&o.stdout);
    let log = String::from_utf8_lossy(&o.stderr);
    // The script ran to its end and threw nothing; the console shows no error.
    assert!(
        dom.contains("data-ready=\"1\""),
        "the page script did not finish"
    );
    assert!(!dom.contains("data-error="), "script error");
    for l in log.lines().filter(|l| l.contains("CONSOLE")) {
        assert!(
            !l.contains("ERROR") && !l.contains("Uncaught"),
            "console: {l}"
        );
    }
    assert!(
        dom.matches("<polyline").count() >= 5,
        "charts missing from the DOM"
    );
    assert!(dom.contains("points=\"") && dom.contains("class=\"bar\""));
    // The screenshot is not blank.
    let png = d.join("shot.png");
    let o = headless(bin, &d.join("p2"))
        .arg("--window-size=1280,1800")
        .arg(format!("--screenshot={}", png.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(o.status.success());
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let mut r = dec.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    let px = &buf[..info.buffer_size()];
    let mut colours = std::collections::HashSet::new();
    for c in px.chunks(info.color_type.samples()) {
        colours.insert(c.to_vec());
        if colours.len() > 50 {
            break;
        }
    }
    assert!(
        colours.len() > 50,
        "the screenshot looks blank ({} colours)",
        colours.len()
    );
    let non_white = px
        .chunks(info.color_type.samples())
        .filter(|c| c.iter().take(3).any(|v| *v < 200))
        .count();
    assert!(
        non_white * 50 > px.len() / info.color_type.samples(),
        "too little drawn"
    );
}
