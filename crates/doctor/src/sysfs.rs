//! Reading a sysfs tree under a root directory without ever leaving it: every path is
//! canonicalised and must stay below the canonical root, so a link that points outside (or a
//! fixture that tries to) is treated as absent.

use std::path::{Path, PathBuf};

/// A sysfs (and /proc) tree rooted at `root` (`/` on a live host, a fixture directory in tests).
#[derive(Debug, Clone)]
pub struct Root {
    root: PathBuf,
}

impl Root {
    pub fn new(root: &Path) -> Self {
        Self {
            root: root.canonicalize().unwrap_or_else(|_| root.to_path_buf()),
        }
    }

    /// The path `rel` under the root, if it exists and resolves inside the root.
    pub fn path(&self, rel: &str) -> Option<PathBuf> {
        let p = self.root.join(rel.trim_start_matches('/'));
        let c = p.canonicalize().ok()?;
        c.starts_with(&self.root).then_some(c)
    }

    /// A file's contents without the trailing newline.
    pub fn read(&self, rel: &str) -> Option<String> {
        let p = self.path(rel)?;
        let s = std::fs::read_to_string(p).ok()?;
        Some(s.trim_end_matches(['\n', '\r']).to_string())
    }

    /// A file holding a decimal or `0x` hex number.
    pub fn read_u64(&self, rel: &str) -> Option<u64> {
        let s = self.read(rel)?;
        let s = s.trim();
        match s.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => s.parse().ok(),
        }
    }

    /// Entry names of a directory, sorted (empty when absent or outside the root).
    pub fn list(&self, rel: &str) -> Vec<String> {
        let Some(p) = self.path(rel) else {
            return Vec::new();
        };
        let rel = rel.trim_end_matches('/');
        let mut v: Vec<String> = std::fs::read_dir(p)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        // Entries that are links leading outside the root do not exist for us.
        v.retain(|n| self.path(&format!("{rel}/{n}")).is_some());
        v.sort_by(|a, b| natural(a, b));
        v
    }
}

/// Orders "2" before "10".
fn natural(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.parse::<u64>(), b.parse::<u64>()) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        _ => a.cmp(b),
    }
}
