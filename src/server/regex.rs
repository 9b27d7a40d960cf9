//! `PMIx_generate_regex` / `PMIx_generate_ppn` and the parsers that read
//! their output back out of `PMIX_NODE_MAP` / `PMIX_PROC_MAP`.
//!
//! The Standard leaves the format to the implementation: a host stores what
//! these functions return as a plain string and hands it back at namespace
//! registration, so only this module must understand it. Ours is readable
//! and range-compressed (docs/regex.md):
//!
//! - node map: `fastpmix:node[01-04,07],login` = `node01,node02,node03,
//!   node04,node07,login`. A run of names that differ only in their last
//!   number is one bracket; a number keeps its leading zeros (a range is
//!   printed at the width of its first number).
//! - proc map: `fastpmix:0-3;4-7,9` = node 0 holds ranks 0..=3, node 1
//!   holds 4..=7 and 9, in that order.
//!
//! Order and duplicates are kept (the position of a node in the map is its
//! node id). Generation never fails; parsing refuses anything it did not
//! produce with `PMIX_ERR_BAD_PARAM` and never panics, whatever the bytes.
//! A map without the `fastpmix:` prefix is read as the plain list a host
//! may register instead (`node1,node2`; `0,1;2,3`).

use crate::types::Status;

/// What every generated map starts with.
pub const PREFIX: &str = "fastpmix:";

/// Most names or ranks one map may expand to: `n[0-99999999999]` is a few
/// bytes and must not become an allocation of that size.
pub const MAX_ITEMS: usize = 1 << 20;

/// Longest digit run treated as a number (more cannot overflow a `u64`).
const MAX_DIGITS: usize = 18;

/// `PMIx_generate_regex`: the node map of `nodes`, a comma-separated list
/// of node names (empty: no nodes).
pub fn generate_regex(nodes: &str) -> String {
    let names: Vec<&str> = if nodes.is_empty() {
        Vec::new()
    } else {
        nodes.split(',').collect()
    };
    let mut items: Vec<String> = Vec::new();
    let mut i = 0;
    while i < names.len() {
        let Some((pre, digits, suf)) = split_number(names[i]) else {
            items.push(escape(names[i]));
            i += 1;
            continue;
        };
        // The names after this one with the same text around their number.
        let mut j = i + 1;
        let mut nums = vec![digits];
        while let Some((p, d, s)) = names.get(j).and_then(|n| split_number(n)) {
            if p != pre || s != suf {
                break;
            }
            nums.push(d);
            j += 1;
        }
        if nums.len() == 1 {
            items.push(escape(names[i]));
        } else {
            items.push(format!(
                "{}[{}]{}",
                escape(pre),
                compress_digits(&nums),
                escape(suf)
            ));
        }
        i = j;
    }
    format!("{PREFIX}{}", items.join(","))
}

/// `PMIx_generate_ppn`: the proc map of `ppn`, one comma-separated rank
/// list per node, nodes separated by `;` (empty: no nodes). A list that is
/// not made of ranks is kept as given, and refused when parsed; use
/// [`try_generate_ppn`] to learn it at once.
pub fn generate_ppn(ppn: &str) -> String {
    try_generate_ppn(ppn).unwrap_or_else(|_| format!("{PREFIX}{ppn}"))
}

/// [`generate_ppn`], refusing (`PMIX_ERR_BAD_PARAM`) a rank that is not a
/// `u32`.
pub fn try_generate_ppn(ppn: &str) -> Result<String, Status> {
    let mut nodes = Vec::new();
    if !ppn.is_empty() {
        for node in ppn.split(';') {
            let ranks: Vec<u32> = if node.trim().is_empty() {
                Vec::new()
            } else {
                node.split(',')
                    .map(|r| r.trim().parse::<u32>().map_err(|_| Status::ERR_BAD_PARAM))
                    .collect::<Result<_, _>>()?
            };
            nodes.push(compress_ranks(&ranks));
        }
    }
    Ok(format!("{PREFIX}{}", nodes.join(";")))
}

/// The node names of a `PMIX_NODE_MAP`, in order.
pub fn parse_node_map(map: &str) -> Result<Vec<String>, Status> {
    let Some(body) = map.strip_prefix(PREFIX) else {
        return Ok(plain_list(map));
    };
    let mut out = Vec::new();
    if body.is_empty() {
        return Ok(out);
    }
    for item in split_outside_brackets(body)? {
        parse_node_item(item, &mut out)?;
    }
    Ok(out)
}

/// The ranks on each node of a `PMIX_PROC_MAP`, in order.
pub fn parse_proc_map(map: &str) -> Result<Vec<Vec<u32>>, Status> {
    let body = map.strip_prefix(PREFIX).unwrap_or(map);
    let mut out = Vec::new();
    if body.is_empty() {
        return Ok(out);
    }
    let mut total = 0usize;
    for node in body.split(';') {
        // An empty node costs an entry too.
        total += 1;
        if total > MAX_ITEMS {
            return Err(Status::ERR_BAD_PARAM);
        }
        let mut ranks = Vec::new();
        if !node.is_empty() {
            for r in node.split(',') {
                let (lo, hi) = match r.split_once('-') {
                    Some((a, b)) => (rank(a)?, rank(b)?),
                    None => (rank(r)?, rank(r)?),
                };
                if lo > hi {
                    return Err(Status::ERR_BAD_PARAM);
                }
                total += (hi - lo) as usize + 1;
                if total > MAX_ITEMS {
                    return Err(Status::ERR_BAD_PARAM);
                }
                ranks.extend(lo..=hi);
            }
        }
        out.push(ranks);
    }
    Ok(out)
}

fn plain_list(map: &str) -> Vec<String> {
    if map.is_empty() {
        Vec::new()
    } else {
        map.split(',').map(str::to_owned).collect()
    }
}

fn rank(s: &str) -> Result<u32, Status> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Status::ERR_BAD_PARAM);
    }
    s.parse().map_err(|_| Status::ERR_BAD_PARAM)
}

/// `name` as (text before, last run of digits, text after), when it has a
/// run short enough to be a number.
fn split_number(name: &str) -> Option<(&str, &str, &str)> {
    let b = name.as_bytes();
    let end = b.iter().rposition(u8::is_ascii_digit)? + 1;
    let start = b[..end]
        .iter()
        .rposition(|c| !c.is_ascii_digit())
        .map_or(0, |i| i + 1);
    (end - start <= MAX_DIGITS).then(|| (&name[..start], &name[start..end], &name[end..]))
}

/// `01,02,03,07` → `01-03,07`: a run continues while the next number is one
/// more and prints the same at the run's width (so `9,10` is a run, `0,01`
/// is not).
fn compress_digits(nums: &[&str]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < nums.len() {
        let width = nums[i].len();
        let mut last = value(nums[i]);
        let mut j = i + 1;
        while j < nums.len() {
            let v = value(nums[j]);
            if last.checked_add(1) != Some(v) || format!("{v:0width$}") != nums[j] {
                break;
            }
            last = v;
            j += 1;
        }
        if j - i == 1 {
            parts.push(nums[i].to_owned());
        } else {
            parts.push(format!("{}-{}", nums[i], nums[j - 1]));
        }
        i = j;
    }
    parts.join(",")
}

/// A digit run of at most [`MAX_DIGITS`] digits.
fn value(d: &str) -> u64 {
    d.bytes().fold(0, |n, c| n * 10 + u64::from(c - b'0'))
}

/// `0,1,2,3,7` → `0-3,7`.
fn compress_ranks(r: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < r.len() {
        let mut j = i + 1;
        while j < r.len() && r[j - 1].checked_add(1) == Some(r[j]) {
            j += 1;
        }
        if j - i == 1 {
            parts.push(r[i].to_string());
        } else {
            parts.push(format!("{}-{}", r[i], r[j - 1]));
        }
        i = j;
    }
    parts.join(",")
}

/// Percent-escapes the bytes the node-map syntax uses.
fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' => o.push_str("%25"),
            '[' => o.push_str("%5B"),
            ']' => o.push_str("%5D"),
            ',' => o.push_str("%2C"),
            _ => o.push(c),
        }
    }
    o
}

fn unescape(s: &str) -> Result<String, Status> {
    if s.contains(['[', ']']) {
        return Err(Status::ERR_BAD_PARAM);
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b.get(i + 1..i + 3).ok_or(Status::ERR_BAD_PARAM)?;
            let hex = std::str::from_utf8(hex).map_err(|_| Status::ERR_BAD_PARAM)?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| Status::ERR_BAD_PARAM)?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| Status::ERR_BAD_PARAM)
}

/// Splits at the commas that are not inside a bracket.
fn split_outside_brackets(s: &str) -> Result<Vec<&str>, Status> {
    let mut items = Vec::new();
    let (mut depth, mut from) = (0u32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '[' if depth == 0 => depth = 1,
            ']' if depth == 1 => depth = 0,
            '[' | ']' => return Err(Status::ERR_BAD_PARAM),
            ',' if depth == 0 => {
                items.push(&s[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(Status::ERR_BAD_PARAM);
    }
    items.push(&s[from..]);
    Ok(items)
}

/// One item: `text` or `text[ranges]text`, appended to `out`.
fn parse_node_item(item: &str, out: &mut Vec<String>) -> Result<(), Status> {
    if out.len() >= MAX_ITEMS {
        return Err(Status::ERR_BAD_PARAM);
    }
    let Some((pre, rest)) = item.split_once('[') else {
        out.push(unescape(item)?);
        return Ok(());
    };
    let (ranges, suf) = rest.split_once(']').ok_or(Status::ERR_BAD_PARAM)?;
    let (pre, suf) = (unescape(pre)?, unescape(suf)?);
    for r in ranges.split(',') {
        let (a, b) = r.split_once('-').unwrap_or((r, r));
        let (lo, hi) = (digits(a)?, digits(b)?);
        if lo > hi || hi - lo >= MAX_ITEMS.saturating_sub(out.len()) as u64 {
            return Err(Status::ERR_BAD_PARAM);
        }
        let width = a.len();
        for v in lo..=hi {
            out.push(format!("{pre}{v:0width$}{suf}"));
        }
    }
    Ok(())
}

fn digits(s: &str) -> Result<u64, Status> {
    if s.is_empty() || s.len() > MAX_DIGITS || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Status::ERR_BAD_PARAM);
    }
    Ok(value(s))
}
