//! The CPUs named by `OMP_PLACES` (OpenMP 5.2 §6.5), so that a client's
//! progress thread stays off the cores the process's OpenMP threads use.
//!
//! Only the *union* of the places matters here. Abstract names (`threads`,
//! `cores`, `ll_caches`, `numa_domains`, `sockets`, optionally with a
//! count) build places out of the process's own binding, which the caller
//! counts anyway: they add nothing. Explicit lists are expanded:
//!
//! ```text
//! place-list := place (',' place)*
//! place      := '!'? '{' res (',' res)* '}' (':' count (':' stride)?)?
//! res        := '!'? num (':' len (':' stride)?)?
//! ```
//!
//! `{0:4}` is CPUs 0–3, `{0,1}:4:2` the four places {0,1} {2,3} {4,5}
//! {6,7}; `!` removes a resource from its place, or a place from the list.
//! Anything else is an error: the caller then assumes compute threads may
//! be anywhere (it does not pin), rather than guess.

use std::collections::BTreeSet;

/// Largest CPU index accepted (hwloc's own limit for a bitmap index is far
/// higher; no node has this many PUs). Bounds the work a hostile
/// `OMP_PLACES` can ask for.
const MAX_CPU: i64 = 1 << 20;

/// The CPUs `OMP_PLACES=value` names explicitly, ascending. `Ok(empty)` for
/// an abstract name or an empty value; `Err` (the reason) when it is not
/// valid syntax.
pub fn places_cpus(value: &str) -> Result<Vec<u32>, String> {
    let v: String = value.chars().filter(|c| !c.is_whitespace()).collect();
    if v.is_empty() || is_abstract(&v) {
        return Ok(Vec::new());
    }
    let mut p = Parser {
        s: v.as_bytes(),
        i: 0,
    };
    let mut all = BTreeSet::new();
    loop {
        let (excluded, places) = p.place()?;
        for place in places {
            if excluded {
                for c in &place {
                    all.remove(c);
                }
            } else {
                all.extend(place);
            }
        }
        match p.peek() {
            None => break,
            Some(b',') => p.i += 1,
            Some(c) => return Err(format!("unexpected {:?} at {}", c as char, p.i)),
        }
    }
    Ok(all.into_iter().collect())
}

fn is_abstract(v: &str) -> bool {
    let name = v.split('(').next().unwrap_or(v);
    let known = ["threads", "cores", "ll_caches", "numa_domains", "sockets"];
    known.contains(&name.to_ascii_lowercase().as_str())
        && (name.len() == v.len()
            || (v.ends_with(')')
                && v[name.len() + 1..v.len() - 1]
                    .bytes()
                    .all(|b| b.is_ascii_digit())))
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn num(&mut self) -> Result<i64, String> {
        let start = self.i;
        let neg = self.eat(b'-');
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.i += 1;
        }
        let digits = &self.s[start + usize::from(neg)..self.i];
        if digits.is_empty() || digits.len() > 9 {
            return Err(format!("expected a number at {start}"));
        }
        let n: i64 = std::str::from_utf8(digits)
            .map_err(|e| e.to_string())?
            .parse()
            .map_err(|e| format!("{e} at {start}"))?;
        Ok(if neg { -n } else { n })
    }

    /// `:a` and `:b` after something, defaulting to `(None, 1)`.
    fn interval(&mut self) -> Result<(Option<i64>, i64), String> {
        if !self.eat(b':') {
            return Ok((None, 1));
        }
        let len = self.num()?;
        let stride = if self.eat(b':') { self.num()? } else { 1 };
        Ok((Some(len), stride))
    }

    /// One place (possibly replicated by `:count:stride`): whether it is
    /// excluded, and the places it stands for.
    fn place(&mut self) -> Result<(bool, Vec<Vec<u32>>), String> {
        let excluded = self.eat(b'!');
        if !self.eat(b'{') {
            return Err(format!("expected '{{' at {}", self.i));
        }
        let mut cpus = BTreeSet::new();
        loop {
            let not = self.eat(b'!');
            let first = self.num()?;
            let (len, stride) = self.interval()?;
            for c in expand(first, len.unwrap_or(1), stride)? {
                if not {
                    cpus.remove(&c);
                } else {
                    cpus.insert(c);
                }
            }
            if self.eat(b'}') {
                break;
            }
            if !self.eat(b',') {
                return Err(format!("expected ',' or '}}' at {}", self.i));
            }
        }
        let (count, stride) = self.interval()?;
        let mut places = Vec::new();
        for k in 0..count.unwrap_or(1).max(0) {
            if k > MAX_CPU {
                return Err("too many places".into());
            }
            let shift = k * stride;
            let mut place = Vec::with_capacity(cpus.len());
            for &c in &cpus {
                place.push(cpu(i64::from(c) + shift)?);
            }
            places.push(place);
        }
        Ok((excluded, places))
    }
}

/// `len` CPUs from `first`, `stride` apart.
fn expand(first: i64, len: i64, stride: i64) -> Result<Vec<u32>, String> {
    if !(1..=MAX_CPU).contains(&len) {
        return Err(format!("bad interval length {len}"));
    }
    (0..len).map(|k| cpu(first + k * stride)).collect()
}

fn cpu(n: i64) -> Result<u32, String> {
    if (0..=MAX_CPU).contains(&n) {
        Ok(n as u32)
    } else {
        Err(format!("CPU {n} out of range"))
    }
}

#[cfg(test)]
mod tests {
    use super::places_cpus;

    #[test]
    fn abstract_names_add_nothing() {
        for v in [
            "",
            "threads",
            "cores",
            "sockets(2)",
            "ll_caches",
            "numa_domains",
            " cores ",
        ] {
            assert_eq!(places_cpus(v), Ok(vec![]), "{v}");
        }
    }

    #[test]
    fn explicit_lists_intervals_and_replication_expand() {
        assert_eq!(places_cpus("{0,1},{2,3}"), Ok(vec![0, 1, 2, 3]));
        assert_eq!(places_cpus("{0:4}"), Ok(vec![0, 1, 2, 3]));
        assert_eq!(places_cpus("{0:3:2}"), Ok(vec![0, 2, 4]));
        assert_eq!(places_cpus("{0,1}:3:4"), Ok(vec![0, 1, 4, 5, 8, 9]));
        assert_eq!(places_cpus("{4}:2"), Ok(vec![4, 5]));
        assert_eq!(places_cpus("{ 0:4 , !2 }"), Ok(vec![0, 1, 3]));
        assert_eq!(places_cpus("{0:4},!{2}"), Ok(vec![0, 1, 3]));
        assert_eq!(places_cpus("{8:4:-2}"), Ok(vec![2, 4, 6, 8]));
    }

    #[test]
    fn malformed_values_are_errors_not_guesses() {
        for v in [
            "{",
            "{}",
            "{0",
            "0,1",
            "{0},",
            "{a}",
            "{0:0}",
            "{0:-1}",
            "{-1}",
            "{0}x",
            "cores(x)",
            "{0:2:-1}",
            "{1:99999999999}",
            "{0}:2:1048577",
        ] {
            assert!(
                places_cpus(v).is_err(),
                "{v:?} accepted: {:?}",
                places_cpus(v)
            );
        }
    }
}
