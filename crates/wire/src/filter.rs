//! Display filters over the field names of [`crate::fields`], in Wireshark's syntax:
//! `bth.destqp == 0x12 && bth.opcode == RC_ACKNOWLEDGE`, `!(icrc.status == ok) || bth.fecn`.
//!
//! Comparisons `== != < <= > >=` (or `eq ne lt le gt ge`), `&&`/`and`, `||`/`or`, `!`/`not`,
//! parentheses; a bare field tests presence. Literals: decimal and `0x` hex integers, IPv4/IPv6
//! addresses, MAC addresses, quoted strings, opcode names (`RC_SEND_FIRST`, `CNP`) and other bare
//! words compared with string fields case-insensitively (`bth.transport == UD`).

use crate::fields::{self, RecordMeta, Value};
use crate::frame::Frame;
use crate::opcode::OpInfo;

/// A filter that did not parse: where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("display filter error at column {}: {msg}", .pos + 1)]
pub struct FilterError {
    pub pos: usize,
    pub msg: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, PartialEq)]
enum Lit {
    Num(u64),
    Mac([u8; 6]),
    Ipv4([u8; 4]),
    Ipv6([u8; 16]),
    Str(String),
}

#[derive(Debug, Clone, PartialEq)]
enum Expr {
    Exists(usize),
    Cmp(usize, Cmp, Lit),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
}

/// A compiled display filter.
#[derive(Debug, Clone)]
pub struct Filter {
    expr: Expr,
    names: Vec<String>,
}

/// Layer prefixes a field name may start with.
const PREFIXES: &[&str] = &[
    "frame",
    "sll",
    "erf",
    "ipoib",
    "gre",
    "erspan",
    "vxlan",
    "eth",
    "vlan",
    "macc",
    "ip",
    "ipv6",
    "udp",
    "tcp",
    "icmp",
    "icmpv6",
    "arp",
    "lldp",
    "llc",
    "rdma",
    "lrh",
    "grh",
    "bth",
    "rdeth",
    "deth",
    "xrceth",
    "feth",
    "reth",
    "atomiceth",
    "aeth",
    "atomicacketh",
    "immdt",
    "ieth",
    "mad",
    "cm",
    "icrc",
    "vcrc",
];

fn canonical(name: &str) -> String {
    let n = name.strip_prefix("infiniband.").unwrap_or(name);
    match n {
        // Wireshark's protocol of every IB and RoCE packet: here, those with a BTH.
        "infiniband" => "bth".to_string(),
        "bth.ackreq" => "bth.a".to_string(),
        "bth.pkey" => "bth.p_key".to_string(),
        "deth.src_qp" => "deth.srcqp".to_string(),
        _ => n.to_string(),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Str(String),
    Op(&'static str),
}

fn lex(s: &str) -> Result<Vec<(usize, Tok)>, FilterError> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let two = s.get(i..i + 2).unwrap_or("");
        let op = match two {
            "==" => Some("=="),
            "!=" => Some("!="),
            "<=" => Some("<="),
            ">=" => Some(">="),
            "&&" => Some("&&"),
            "||" => Some("||"),
            _ => None,
        };
        if let Some(op) = op {
            out.push((i, Tok::Op(op)));
            i += 2;
            continue;
        }
        let one = match c {
            b'<' => Some("<"),
            b'>' => Some(">"),
            b'!' => Some("!"),
            b'(' => Some("("),
            b')' => Some(")"),
            _ => None,
        };
        if let Some(op) = one {
            out.push((i, Tok::Op(op)));
            i += 1;
            continue;
        }
        if c == b'"' {
            let start = i;
            i += 1;
            let mut v = String::new();
            while i < b.len() && b[i] != b'"' {
                v.push(b[i] as char);
                i += 1;
            }
            if i == b.len() {
                return Err(FilterError {
                    pos: start,
                    msg: "unterminated string".into(),
                });
            }
            i += 1;
            out.push((start, Tok::Str(v)));
            continue;
        }
        if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b':' | b'-') {
            let start = i;
            while i < b.len()
                && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'.' | b':' | b'-'))
            {
                i += 1;
            }
            out.push((start, Tok::Word(s[start..i].to_string())));
            continue;
        }
        return Err(FilterError {
            pos: i,
            msg: format!("unexpected character '{}'", c as char),
        });
    }
    Ok(out)
}

fn parse_lit(w: &str) -> Lit {
    if let Some(h) = w.strip_prefix("0x").or_else(|| w.strip_prefix("0X")) {
        if let Ok(v) = u64::from_str_radix(h, 16) {
            return Lit::Num(v);
        }
    }
    if let Ok(v) = w.parse::<u64>() {
        return Lit::Num(v);
    }
    if let Ok(a) = w.parse::<core::net::Ipv4Addr>() {
        return Lit::Ipv4(a.octets());
    }
    let parts: Vec<&str> = w.split(':').collect();
    if parts.len() == 6 && parts.iter().all(|p| p.len() == 2) {
        let mut m = [0u8; 6];
        if parts
            .iter()
            .zip(m.iter_mut())
            .all(|(p, o)| u8::from_str_radix(p, 16).map(|v| *o = v).is_ok())
        {
            return Lit::Mac(m);
        }
    }
    if let Ok(a) = w.parse::<core::net::Ipv6Addr>() {
        return Lit::Ipv6(a.octets());
    }
    if let Some(info) = OpInfo::by_name(w) {
        return Lit::Num(u64::from(info.opcode));
    }
    Lit::Str(w.to_string())
}

/// Deepest nesting of `(` and `!` accepted: the parser and the matcher recurse once per level.
const MAX_DEPTH: usize = 256;
/// Most tokens in a filter: `a && b && ...` nests one level per operator when matched.
const MAX_TOKENS: usize = 4096;

struct Parser {
    toks: Vec<(usize, Tok)>,
    at: usize,
    end: usize,
    names: Vec<String>,
    /// `(` and `!` open around the token being parsed.
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at).map(|t| &t.1)
    }
    fn pos(&self) -> usize {
        self.toks.get(self.at).map_or(self.end, |t| t.0)
    }
    fn err<T>(&self, msg: impl Into<String>) -> Result<T, FilterError> {
        Err(FilterError {
            pos: self.pos(),
            msg: msg.into(),
        })
    }
    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(x)) if x.eq_ignore_ascii_case(w))
    }
    fn or(&mut self) -> Result<Expr, FilterError> {
        let mut e = self.and()?;
        while self.peek() == Some(&Tok::Op("||")) || self.is_word("or") {
            self.at += 1;
            e = Expr::Or(Box::new(e), Box::new(self.and()?));
        }
        Ok(e)
    }
    fn and(&mut self) -> Result<Expr, FilterError> {
        let mut e = self.unary()?;
        while self.peek() == Some(&Tok::Op("&&")) || self.is_word("and") {
            self.at += 1;
            e = Expr::And(Box::new(e), Box::new(self.unary()?));
        }
        Ok(e)
    }
    fn unary(&mut self) -> Result<Expr, FilterError> {
        let not = self.peek() == Some(&Tok::Op("!")) || self.is_word("not");
        let paren = self.peek() == Some(&Tok::Op("("));
        if (not || paren) && self.depth == MAX_DEPTH {
            return self.err(format!("nested more than {MAX_DEPTH} deep"));
        }
        if not {
            self.at += 1;
            self.depth += 1;
            let e = Expr::Not(Box::new(self.unary()?));
            self.depth -= 1;
            return Ok(e);
        }
        if paren {
            self.at += 1;
            self.depth += 1;
            let e = self.or()?;
            self.depth -= 1;
            if self.peek() != Some(&Tok::Op(")")) {
                return self.err("expected ')'");
            }
            self.at += 1;
            return Ok(e);
        }
        let Some(Tok::Word(w)) = self.peek().cloned() else {
            return self.err("expected a field name");
        };
        let name = canonical(&w);
        let prefix = name.split('.').next().unwrap_or("");
        if !PREFIXES.contains(&prefix) {
            return self.err(format!("unknown field '{w}'"));
        }
        self.at += 1;
        let id = match self.names.iter().position(|n| *n == name) {
            Some(i) => i,
            None => {
                self.names.push(name);
                self.names.len() - 1
            }
        };
        let cmp = match self.peek() {
            Some(Tok::Op("==")) => Some(Cmp::Eq),
            Some(Tok::Op("!=")) => Some(Cmp::Ne),
            Some(Tok::Op("<")) => Some(Cmp::Lt),
            Some(Tok::Op("<=")) => Some(Cmp::Le),
            Some(Tok::Op(">")) => Some(Cmp::Gt),
            Some(Tok::Op(">=")) => Some(Cmp::Ge),
            Some(Tok::Word(x)) => match x.to_ascii_lowercase().as_str() {
                "eq" => Some(Cmp::Eq),
                "ne" => Some(Cmp::Ne),
                "lt" => Some(Cmp::Lt),
                "le" => Some(Cmp::Le),
                "gt" => Some(Cmp::Gt),
                "ge" => Some(Cmp::Ge),
                _ => None,
            },
            _ => None,
        };
        let Some(cmp) = cmp else {
            return Ok(Expr::Exists(id));
        };
        self.at += 1;
        let lit = match self.peek().cloned() {
            Some(Tok::Word(w)) => parse_lit(&w),
            Some(Tok::Str(s)) => Lit::Str(s),
            _ => return self.err("expected a value after the comparison"),
        };
        self.at += 1;
        Ok(Expr::Cmp(id, cmp, lit))
    }
}

fn ord<T: PartialOrd>(a: T, b: T, c: Cmp) -> bool {
    match c {
        Cmp::Eq => a == b,
        Cmp::Ne => a != b,
        Cmp::Lt => a < b,
        Cmp::Le => a <= b,
        Cmp::Gt => a > b,
        Cmp::Ge => a >= b,
    }
}

fn compare(v: &Value<'_>, c: Cmp, lit: &Lit) -> bool {
    match (v, lit) {
        (v, Lit::Num(n)) => v.as_u64().is_some_and(|x| ord(x, *n, c)),
        (Value::Mac(m), Lit::Mac(l)) => ord(m, l, c),
        (Value::Ipv4(a), Lit::Ipv4(l)) => ord(a, l, c),
        (Value::Ipv6(a), Lit::Ipv6(l)) => ord(a, l, c),
        (Value::Ipv6(a), Lit::Ipv4(l)) => {
            let mut m = [0u8; 16];
            m[10] = 0xff;
            m[11] = 0xff;
            m[12..].copy_from_slice(l);
            ord(a, &m, c)
        }
        (Value::Str(s), Lit::Str(l)) => ord(s.to_ascii_lowercase(), l.to_ascii_lowercase(), c),
        _ => false,
    }
}

impl Filter {
    /// Compiles a filter expression.
    pub fn new(src: &str) -> Result<Self, FilterError> {
        let toks = lex(src)?;
        if toks.is_empty() {
            return Err(FilterError {
                pos: 0,
                msg: "empty filter".into(),
            });
        }
        if let Some(&(pos, _)) = toks.get(MAX_TOKENS) {
            return Err(FilterError {
                pos,
                msg: format!("longer than {MAX_TOKENS} tokens"),
            });
        }
        let mut p = Parser {
            toks,
            at: 0,
            end: src.len(),
            names: Vec::new(),
            depth: 0,
        };
        let expr = p.or()?;
        if p.at != p.toks.len() {
            return p.err("unexpected text after the expression");
        }
        Ok(Self {
            expr,
            names: p.names,
        })
    }

    /// True when the frame passes the filter.
    pub fn matches(&self, meta: &RecordMeta, frame: &Frame<'_>) -> bool {
        let mut vals: [Option<Value<'_>>; 16] = [None; 16];
        if self.names.len() <= vals.len() {
            fields::visit(meta, frame, &mut |n, v| {
                for (x, val) in self.names.iter().zip(vals.iter_mut()) {
                    if val.is_none() && names(x, n) {
                        *val = Some(v);
                    }
                }
            });
            eval(&self.expr, &|i| vals[i])
        } else {
            eval(&self.expr, &|i| {
                let mut out = None;
                fields::visit(meta, frame, &mut |n, v| {
                    if out.is_none() && names(&self.names[i], n) {
                        out = Some(v);
                    }
                });
                out
            })
        }
    }
}

/// Whether the filter's name `want` names the field `field`: the field itself, or, as in
/// Wireshark, a protocol (`bth`, `ip`, `macc`) every field of that layer.
fn names(want: &str, field: &str) -> bool {
    field
        .strip_prefix(want)
        .is_some_and(|rest| rest.is_empty() || (rest.starts_with('.') && !want.contains('.')))
}

fn eval<'a>(e: &Expr, get: &dyn Fn(usize) -> Option<Value<'a>>) -> bool {
    match e {
        Expr::Exists(i) => get(*i).is_some(),
        Expr::Cmp(i, c, l) => get(*i).is_some_and(|v| compare(&v, *c, l)),
        Expr::Not(x) => !eval(x, get),
        Expr::And(a, b) => eval(a, get) && eval(b, get),
        Expr::Or(a, b) => eval(a, get) || eval(b, get),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        assert!(Filter::new("bth.destqp == 0x12 && bth.opcode == RC_ACKNOWLEDGE").is_ok());
        assert!(Filter::new("!(icrc.status == ok) || bth.fecn").is_ok());
        assert!(Filter::new("ip.src == 10.0.0.1 or eth.src eq 02:00:00:00:00:01").is_ok());
        assert!(Filter::new("grh.sgid == fe80::1").is_ok());
        let e = Filter::new("bogus.field == 1").unwrap_err();
        assert_eq!(e.pos, 0);
        assert!(Filter::new("bth.psn ==").is_err());
        assert!(Filter::new("(bth.psn == 1").is_err());
        assert!(Filter::new("bth.psn == 1 2").is_err());
        assert!(Filter::new("").is_err());
        assert!(Filter::new("\"x").is_err());
        assert_eq!(parse_lit("RC_ACKNOWLEDGE"), Lit::Num(0x11));
        assert_eq!(parse_lit("0x81"), Lit::Num(0x81));
        assert_eq!(parse_lit("UD"), Lit::Str("UD".into()));
        assert_eq!(canonical("infiniband.bth.ackreq"), "bth.a");
        assert_eq!(canonical("infiniband"), "bth");
    }

    #[test]
    fn protocol_names_name_their_fields() {
        assert!(names("bth", "bth.destqp") && names("bth", "bth"));
        assert!(names("bth.destqp", "bth.destqp"));
        assert!(!names("bth.dest", "bth.destqp") && !names("bth.destqp", "bth.destqp.x"));
        assert!(!names("ip", "ipv6.src") && !names("icmp", "icmpv6.type"));
        assert!(names("ipv6", "ipv6.src") && names("icrc", "icrc.status"));
    }

    /// Nesting and length are bounded, so no filter overflows the stack of the parser, the
    /// matcher or the drop of its tree.
    #[test]
    fn deep_or_long_filters_are_refused() {
        let nest = |n: usize| format!("{}bth{}", "(".repeat(n), ")".repeat(n));
        assert!(Filter::new(&nest(MAX_DEPTH)).is_ok());
        let e = Filter::new(&nest(MAX_DEPTH + 1)).unwrap_err();
        assert_eq!(
            (e.pos, e.msg.as_str()),
            (MAX_DEPTH, "nested more than 256 deep")
        );
        assert!(Filter::new(&format!("{}bth", "!".repeat(MAX_DEPTH))).is_ok());
        assert!(Filter::new(&format!("{}bth", "!".repeat(100_000))).is_err());
        assert!(Filter::new(&format!("{}bth", "not ".repeat(MAX_DEPTH + 1))).is_err());
        let chain = |n: usize| vec!["bth"; n].join(" && ");
        assert!(Filter::new(&chain(MAX_TOKENS / 2)).is_ok());
        let e = Filter::new(&chain(MAX_TOKENS)).unwrap_err();
        assert!(e.msg.starts_with("longer than"), "{e:?}");
    }
}
