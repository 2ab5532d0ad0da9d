//! `--json`: NDJSON, one flat object per packet; keys as in `docs/json.md`.

use std::fmt::{Result, Write};

use rdmascope_wire::fields::{self, RecordMeta, Value};
use rdmascope_wire::Frame;

fn string(o: &mut String, s: &str) {
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
}

pub fn write(o: &mut String, m: &RecordMeta, f: &Frame<'_>) -> Result {
    o.push('{');
    let mut first = true;
    let mut err = Ok(());
    fields::visit(m, f, &mut |name, v| {
        if !first {
            o.push(',');
        }
        first = false;
        o.push('"');
        o.push_str(name);
        o.push_str("\":");
        err = err.and_then(|_| match v {
            Value::U(x) => write!(o, "{x}"),
            Value::Bool(b) => write!(o, "{}", u8::from(b)),
            Value::Time(_) => write!(o, "{v}"),
            Value::Str(s) => {
                string(o, s);
                Ok(())
            }
            _ => {
                let s = v.to_string();
                string(o, &s);
                Ok(())
            }
        });
    });
    err?;
    o.push_str("}\n");
    Ok(())
}
