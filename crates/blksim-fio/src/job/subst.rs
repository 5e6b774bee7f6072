//! Substitutions fio makes in an option line before parsing it: `${VAR}`
//! from the environment, the keywords `$pagesize`, `$mb_memory` and `$ncpus`,
//! and then integer arithmetic (fio pipes the value through `bc`).

use super::ParseContext;

/// `${VAR}` → the variable's value, or nothing when it is not set; also the
/// names of the variables that were not set.
pub(crate) fn env_vars(line: &str, ctx: &ParseContext) -> (String, Vec<String>) {
    let mut out = String::with_capacity(line.len());
    let mut unset = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find('}') {
            Some(end) => {
                match ctx.env.get(&after[..end]) {
                    Some(v) => out.push_str(v),
                    None => unset.push(after[..end].to_string()),
                }
                rest = &after[end + 1..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    (out, unset)
}

/// The keywords, then arithmetic on the value when a keyword was replaced and
/// the line holds `+ - * /` (as fio's `fio_keyword_replace` and `bc_calc`).
pub(crate) fn keywords(line: &str, ctx: &ParseContext) -> Result<String, String> {
    let mut out = line.to_string();
    let mut replaced = false;
    for (word, value) in [
        ("$pagesize", ctx.pagesize.to_string()),
        ("$mb_memory", ctx.mb_memory.to_string()),
        ("$ncpus", ctx.ncpus.to_string()),
    ] {
        if out.contains(word) {
            out = out.replace(word, &value);
            replaced = true;
        }
    }
    let has_math = out.contains(['+', '-', '*', '/']) && !out.contains('\'');
    if !replaced || !has_math {
        return Ok(out);
    }
    let Some(eq) = out.find('=') else { return Ok(out) };
    let value = eval(&out[eq + 1..]).map_err(|e| format!("cannot evaluate '{}': {e}", &out[eq + 1..]))?;
    Ok(format!("{}{}", &out[..=eq], value))
}

/// Integer arithmetic as `bc` does it with scale 0: `+ - * /`, parentheses,
/// unary minus; division truncates.
pub(crate) fn eval(expr: &str) -> Result<i64, String> {
    // fio hands at most 100 characters to bc; this also bounds the recursion.
    if expr.len() > 100 {
        return Err("the expression is longer than fio's 100 characters".into());
    }
    let tokens: Vec<char> = expr.chars().filter(|c| !c.is_whitespace()).collect();
    let mut p = Expr { t: &tokens, i: 0 };
    let v = p.sum()?;
    if p.i != tokens.len() {
        return Err(format!("unexpected '{}'", tokens[p.i]));
    }
    Ok(v)
}

struct Expr<'a> {
    t: &'a [char],
    i: usize,
}

impl Expr<'_> {
    fn peek(&self) -> Option<char> {
        self.t.get(self.i).copied()
    }
    fn sum(&mut self) -> Result<i64, String> {
        let mut v = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.i += 1;
            let r = self.product()?;
            v = if op == '+' { v.checked_add(r) } else { v.checked_sub(r) }.ok_or("overflow")?;
        }
        Ok(v)
    }
    fn product(&mut self) -> Result<i64, String> {
        let mut v = self.unary()?;
        while let Some(op @ ('*' | '/')) = self.peek() {
            self.i += 1;
            let r = self.unary()?;
            v = if op == '*' {
                v.checked_mul(r).ok_or("overflow")?
            } else {
                v.checked_div(r).ok_or("division by zero")?
            };
        }
        Ok(v)
    }
    fn unary(&mut self) -> Result<i64, String> {
        if self.peek() == Some('-') {
            self.i += 1;
            return Ok(-self.unary()?);
        }
        if self.peek() == Some('(') {
            self.i += 1;
            let v = self.sum()?;
            if self.peek() != Some(')') {
                return Err("missing ')'".into());
            }
            self.i += 1;
            return Ok(v);
        }
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        if start == self.i {
            return Err(match self.peek() {
                Some(c) => format!("unexpected '{c}'"),
                None => "missing a number".into(),
            });
        }
        let s: String = self.t[start..self.i].iter().collect();
        s.parse().map_err(|_| "number too large".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn ctx() -> ParseContext {
        let env = BTreeMap::from([("BS".to_string(), "8k".to_string())]);
        ParseContext {
            ncpus: 4,
            mb_memory: 8192,
            pagesize: 4096,
            env,
            numa_nodes: Vec::new(),
            sections: Vec::new(),
            read_only: false,
            device_bytes: BTreeMap::new(),
        }
    }

    #[test]
    fn env_vars_substitute_or_vanish() {
        let sub = |s| env_vars(s, &ctx()).0;
        assert_eq!(sub("bs=${BS}"), "bs=8k");
        assert_eq!(sub("bs=${NOPE}4k"), "bs=4k");
        assert_eq!(sub("a=${BS},${BS}"), "a=8k,8k");
        assert_eq!(sub("a=${BS"), "a=${BS");
        assert_eq!(env_vars("a=${X}${BS}${Y}", &ctx()).1, ["X", "Y"]);
    }

    #[test]
    fn keywords_and_arithmetic() {
        assert_eq!(keywords("numjobs=$ncpus", &ctx()).unwrap(), "numjobs=4");
        assert_eq!(keywords("bs=$pagesize", &ctx()).unwrap(), "bs=4096");
        assert_eq!(keywords("iodepth=$ncpus*2+1", &ctx()).unwrap(), "iodepth=9");
        assert_eq!(keywords("size=5*1024*1024*$mb_memory/8", &ctx()).unwrap(), "size=5368709120");
        assert_eq!(keywords("size=(1+$ncpus)*2", &ctx()).unwrap(), "size=10");
        assert_eq!(keywords("size=7/$ncpus", &ctx()).unwrap(), "size=1");
        // No keyword: no arithmetic (fio reads `2*1024` as 2).
        assert_eq!(keywords("bs=2*1024", &ctx()).unwrap(), "bs=2*1024");
        assert!(keywords("bs=$ncpus*k", &ctx()).is_err());
        assert!(keywords("bs=$ncpus/0", &ctx()).is_err());
    }
}
