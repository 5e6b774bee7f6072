//! JSON text laid out as fio's `json.c` prints it: two-space indent per level,
//! `"key" : value`, floats as C's `%f`, integers as integers.

use serde_json::{Map, Number, Value};

/// A float as fio stores it; JSON has no NaN or infinity, so those become 0.
pub fn float(x: f64) -> Value {
    Value::Number(Number::from_f64(if x.is_finite() { x } else { 0.0 }).expect("finite"))
}

/// The whole document, ending with a newline as fio's output does.
pub fn print(root: &Map<String, Value>) -> String {
    let mut out = String::new();
    print_object(&mut out, root, 0);
    out.push('\n');
    out
}

fn indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

/// An object whose closing brace sits at `level`; its pairs sit one level deeper.
fn print_object(out: &mut String, object: &Map<String, Value>, level: usize) {
    out.push_str("{\n");
    for (i, (key, value)) in object.iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        indent(out, level + 1);
        push_string(out, key);
        out.push_str(" : ");
        print_value(out, value, level + 1);
    }
    out.push('\n');
    indent(out, level);
    out.push('}');
}

fn print_array(out: &mut String, values: &[Value], level: usize) {
    out.push_str("[\n");
    for (i, value) in values.iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        indent(out, level + 1);
        print_value(out, value, level + 1);
    }
    out.push('\n');
    indent(out, level);
    out.push(']');
}

fn print_value(out: &mut String, value: &Value, level: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => push_number(out, n),
        Value::String(s) => push_string(out, s),
        Value::Array(values) => print_array(out, values, level),
        Value::Object(object) => print_object(out, object, level),
    }
}

/// A number: integers as integers, floats as C's `%f`, written in place.
fn push_number(out: &mut String, n: &Number) {
    use std::fmt::Write;
    let _ = if let Some(i) = n.as_i64() {
        write!(out, "{i}")
    } else if let Some(u) = n.as_u64() {
        write!(out, "{u}")
    } else {
        write!(out, "{:.6}", n.as_f64().unwrap_or(0.0))
    };
}

/// fio escapes only `\` and `"`; serde_json escapes those the same way and
/// control characters too, which keeps odd job names valid JSON. A string
/// with none of them is written as it is.
fn push_string(out: &mut String, s: &str) {
    if s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        out.push_str(&serde_json::to_string(s).expect("a string always serializes"));
    } else {
        out.push('"');
        out.push_str(s);
        out.push('"');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn layout_matches_fio() {
        let value = json!({"a": 1, "b": {"c": 2.5}, "d": [{"e": "x"}], "f": {}});
        let text = print(value.as_object().unwrap());
        let expected = "{\n  \"a\" : 1,\n  \"b\" : {\n    \"c\" : 2.500000\n  },\n  \"d\" : [\n    {\n      \"e\" : \"x\"\n    }\n  ],\n  \"f\" : {\n\n  }\n}\n";
        assert_eq!(text, expected);
    }

    #[test]
    fn non_finite_floats_become_zero() {
        let number = |n: &Number| {
            let mut s = String::new();
            push_number(&mut s, n);
            s
        };
        assert_eq!(number(float(f64::NAN).as_number().unwrap()), "0.000000");
        assert_eq!(number(float(100.0).as_number().unwrap()), "100.000000");
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        for s in ["plain", "a\"b", "back\\slash", "tab\there", "ünï", ""] {
            let mut out = String::new();
            push_string(&mut out, s);
            assert_eq!(out, serde_json::to_string(s).unwrap(), "{s:?}");
        }
    }
}
