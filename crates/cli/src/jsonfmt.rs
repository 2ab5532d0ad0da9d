//! Indented JSON, byte for byte what `serde_json::to_writer_pretty` writes, but each line break
//! and its indent go out in one write: the analysis report of a large capture is megabytes of
//! short lines, and serde_json's formatter writes the indent two spaces at a time.

use std::io::{self, Write};

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
