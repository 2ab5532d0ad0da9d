//! `--json`: NDJSON, one flat object per packet; keys as in `docs/json.md`.

use std::io::Write;

type Result = std::io::Result<()>;

use super::fast::Out;

use rdmascope_wire::fields::{self, RecordMeta, Value};
use rdmascope_wire::Frame;

use super::fast;

fn string(o: &mut Vec<u8>, s: &str) {
    o.pushc('"');
    if !s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        o.push_str(s);
        o.pushc('"');
        return;
    }
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.pushc(c),
        }
    }
    o.pushc('"');
}

pub fn write(o: &mut Vec<u8>, m: &RecordMeta, f: &Frame<'_>) -> Result {
    o.pushc('{');
    let mut first = true;
    fields::visit(m, f, &mut |name, v| {
        if !first {
            o.pushc(',');
        }
        first = false;
        o.pushc('"');
        o.push_str(name);
        o.push_str("\":");
        {
            match v {
                Value::U(x) => fast::dec(o, x),
                Value::Bool(b) => o.pushc(if b { '1' } else { '0' }),
                Value::Time(ns) => fast::epoch(o, ns),
                Value::Str(s) => string(o, s),
                Value::Ipv4(a) => {
                    o.pushc('"');
                    fast::ipv4(o, a);
                    o.pushc('"');
                }
                Value::Mac(m) => {
                    o.pushc('"');
                    fast::mac(o, m);
                    o.pushc('"');
                }
                _ => {
                    let s = v.to_string();
                    string(o, &s);
                }
            }
        }
    });
    o.push_str("}\n");
    Ok(())
}
