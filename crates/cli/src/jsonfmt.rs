//! Indented JSON, byte for byte what `serde_json::to_writer_pretty` writes, but each line break
//! and its indent go out in one write: the analysis report of a large capture is megabytes of
//! short lines, and serde_json's formatter writes the indent two spaces at a time. The
//! analysis report's flows, most of it, are written by two threads ([`report_to_writer`]).

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use rdmascope_analyze::report::{Flows, Report};
use serde::Serialize;
use serde_json::ser::{Formatter, Serializer};

/// A line break and the indent of the deepest level written in one piece.
const BREAK: &[u8; 1 + 2 * 32] =
    b"\n                                                                ";

/// serde_json's `PrettyFormatter` with a two-space indent, line breaks written whole.
#[derive(Default)]
struct Indented {
    level: usize,
    has_value: bool,
}

impl Indented {
    fn line<W: ?Sized + Write>(&self, w: &mut W) -> io::Result<()> {
        let n = 1 + 2 * self.level;
        match BREAK.get(..n) {
            Some(b) => w.write_all(b),
            None => {
                w.write_all(b"\n")?;
                (0..self.level).try_for_each(|_| w.write_all(b"  "))
            }
        }
    }

    fn open<W: ?Sized + Write>(&mut self, w: &mut W, c: &[u8]) -> io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(c)
    }

    fn close<W: ?Sized + Write>(&mut self, w: &mut W, c: &[u8]) -> io::Result<()> {
        self.level -= 1;
        if self.has_value {
            self.line(w)?;
        }
        w.write_all(c)
    }

    fn item<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        self.line(w)
    }
}

impl Formatter for Indented {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.item(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.item(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Writes `value` as indented JSON (the same bytes as `serde_json::to_writer_pretty`).
pub fn to_writer<W: Write, T: ?Sized + Serialize>(w: W, value: &T) -> serde_json::Result<()> {
    value.serialize(&mut Serializer::with_formatter(w, Indented::default()))
}

/// [`to_writer`] for `value` inside `level` enclosing objects or arrays.
fn at_level<W: Write, T: ?Sized + Serialize>(
    w: W,
    level: usize,
    value: &T,
) -> serde_json::Result<()> {
    let f = Indented {
        level,
        has_value: false,
    };
    value.serialize(&mut Serializer::with_formatter(w, f))
}

/// Flows a thread renders in one go: a run the helper renders goes into a buffer (about
/// 80 KB), written out in turn and then given back to be filled again.
const FLOWS_A_RUN: usize = 32;

/// [`to_writer`] for the analysis report, the same bytes, but its flows (nine tenths of the
/// report: each flow's report is built as it is written) rendered on two threads. In runs of
/// [`FLOWS_A_RUN`], this thread writes the even runs, and a helper renders the odd ones into
/// buffers this one writes in turn and gives back: the memory stays the same however many
/// flows there are. An odd run the helper has not begun when its turn comes (the helper may
/// start late) this thread writes itself.
pub fn report_to_writer<W: Write>(mut w: W, r: &Report) -> serde_json::Result<()> {
    // Every field by name (no `..`): a field added to `Report` has to be written here too.
    let Report {
        schema,
        capture,
        totals,
        flows,
        connections,
        pfc,
        dcbx,
        findings,
        timeline,
    } = r;
    w.write_all(b"{").map_err(serde_json::Error::io)?;
    field(&mut w, true, "schema", schema)?;
    field(&mut w, false, "capture", capture)?;
    field(&mut w, false, "totals", totals)?;
    key(&mut w, false, "flows").map_err(serde_json::Error::io)?;
    if flows.is_empty() {
        w.write_all(b"[]").map_err(serde_json::Error::io)?;
    } else {
        w.write_all(b"[").map_err(serde_json::Error::io)?;
        flow_runs(&mut w, flows, true)?;
        w.write_all(b"\n  ]").map_err(serde_json::Error::io)?;
    }
    field(&mut w, false, "connections", connections)?;
    field(&mut w, false, "pfc", pfc)?;
    field(&mut w, false, "dcbx", dcbx)?;
    field(&mut w, false, "findings", findings)?;
    field(&mut w, false, "timeline", timeline)?;
    w.write_all(b"\n}").map_err(serde_json::Error::io)
}

/// The flows of [`report_to_writer`], at least one; without `helper`, all by this thread.
fn flow_runs<W: Write>(w: &mut W, flows: &Flows, helper: bool) -> serde_json::Result<()> {
    let runs = flows.len().div_ceil(FLOWS_A_RUN);
    if runs < 2 {
        return render_run(flows, 0, w);
    }
    // Whether each run is taken, by this thread or the helper.
    let taken: Vec<AtomicBool> = (0..runs).map(|k| AtomicBool::new(k % 2 == 0)).collect();
    let take = |k: usize| !taken[k].swap(true, Ordering::Relaxed);
    std::thread::scope(|s| {
        // The helper's runs come in order; one waits at most, one is being rendered, one
        // written, and the buffers written come back.
        let (full_tx, full_rx) = mpsc::sync_channel::<(usize, serde_json::Result<Vec<u8>>)>(1);
        let (empty_tx, empty_rx) = mpsc::channel::<Vec<u8>>();
        // Without a helper (none could be spawned), every odd run is left to take here.
        let _ = helper.then(|| {
            std::thread::Builder::new()
                .name("json".into())
                .spawn_scoped(s, move || {
                    for k in (1..runs).step_by(2).filter(|&k| take(k)) {
                        let mut buf = empty_rx.try_recv().unwrap_or_default();
                        buf.clear();
                        let done = render_run(flows, k, &mut buf).map(|()| buf);
                        // Sending fails only when the writer stopped (a write failed).
                        if full_tx.send((k, done)).is_err() {
                            return;
                        }
                    }
                })
        });
        for k in 0..runs {
            if k % 2 == 0 || take(k) {
                render_run(flows, k, w)?;
                continue;
            }
            let (run, buf) = full_rx
                .recv()
                .map_err(|_| serde_json::Error::io(io::Error::other("the JSON helper stopped")))?;
            debug_assert_eq!(run, k, "the helper's runs come in order");
            let buf = buf?;
            w.write_all(&buf).map_err(serde_json::Error::io)?;
            // The helper may have finished: then the buffer is not needed.
            let _ = empty_tx.send(buf);
        }
        Ok(())
    })
}

/// A key of the top-level object (a Rust name: nothing to escape), after a comma unless first.
fn key<W: Write>(w: &mut W, first: bool, name: &str) -> io::Result<()> {
    w.write_all(&b",\n  \""[usize::from(first)..])?;
    w.write_all(name.as_bytes())?;
    w.write_all(b"\": ")
}

/// A field of the top-level object.
fn field<W: Write, T: ?Sized + Serialize>(
    w: &mut W,
    first: bool,
    name: &str,
    value: &T,
) -> serde_json::Result<()> {
    key(w, first, name).map_err(serde_json::Error::io)?;
    at_level(w, 1, value)
}

/// Run `k` of the flows, each after its comma (but the first flow's) and line break.
fn render_run<O: Write>(flows: &Flows, k: usize, out: &mut O) -> serde_json::Result<()> {
    for i in k * FLOWS_A_RUN..flows.len().min((k + 1) * FLOWS_A_RUN) {
        let Some(f) = flows.get(i) else { break };
        out.write_all(&b",\n    "[usize::from(i == 0)..])
            .map_err(serde_json::Error::io)?;
        at_level(&mut *out, 2, &f)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    fn both(v: &Value) -> (String, String) {
        let mut ours = Vec::new();
        super::to_writer(&mut ours, v).unwrap();
        (
            String::from_utf8(ours).unwrap(),
            serde_json::to_string_pretty(v).unwrap(),
        )
    }

    /// The analysis report written with its flows on two threads is the report serde_json
    /// writes: without flows, with one run of them, a run and one more flow, and many runs.
    #[test]
    fn a_report_with_its_flows_on_two_threads_reads_the_same() {
        use rdmascope_analyze::{Analyzer, Config};
        let files = crate::analyze::samples();
        let run = super::FLOWS_A_RUN;
        let mut flows = Vec::new();
        for max in [Some(1), Some(run), Some(run + 1), Some(2 * run), None] {
            let r = crate::analyze::analyze_files(&files, None, &[], false, max, None).unwrap();
            flows.push(r.flows.len());
            let mut ours = Vec::new();
            super::report_to_writer(&mut ours, &r).unwrap();
            let theirs = serde_json::to_string_pretty(&r).unwrap();
            assert!(
                String::from_utf8(ours).unwrap() == theirs,
                "{} flows",
                r.flows.len()
            );
            // Without the helper, as when it starts too late for any run: the same flows.
            let (mut alone, mut both) = (Vec::new(), Vec::new());
            if !r.flows.is_empty() {
                super::flow_runs(&mut alone, &r.flows, false).unwrap();
                super::flow_runs(&mut both, &r.flows, true).unwrap();
            }
            assert!(alone == both, "{} flows", r.flows.len());
        }
        assert_eq!(flows[..4], [1, run, run + 1, 2 * run]);
        assert!(flows[4] > 3 * run && flows[4] % run != 0, "{flows:?}");
        let empty = Analyzer::new(Config::default()).finish();
        let mut ours = Vec::new();
        super::report_to_writer(&mut ours, &empty).unwrap();
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            serde_json::to_string_pretty(&empty).unwrap()
        );
    }

    #[test]
    fn same_bytes_as_serde_json_pretty() {
        let mut deep = json!(1);
        for i in 0..40 {
            deep = if i % 2 == 0 {
                json!([deep, {}])
            } else {
                json!({ "k": deep, "e": [] })
            };
        }
        for v in [
            json!(null),
            json!([]),
            json!({}),
            json!([[], {}, [[]], [{}]]),
            json!({"a": 1, "b": [1, 2, {"c": "d\n\"e"}], "f": {"g": null}, "h": [], "i": {}}),
            deep,
        ] {
            let (ours, theirs) = both(&v);
            assert_eq!(ours, theirs);
        }
    }
}
