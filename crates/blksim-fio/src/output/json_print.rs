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
        out.push_str(&string(key));
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
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => out.push_str(&string(s)),
        Value::Array(values) => print_array(out, values, level),
        Value::Object(object) => print_object(out, object, level),
    }
}

fn number(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        i.to_string()
    } else if let Some(u) = n.as_u64() {
        u.to_string()
    } else {
        format!("{:.6}", n.as_f64().unwrap_or(0.0))
    }
}

/// fio escapes only `\` and `"`; serde_json escapes those the same way and
/// control characters too, which keeps odd job names valid JSON.
fn string(s: &str) -> String {
    serde_json::to_string(s).expect("a string always serializes")
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
        assert_eq!(number(float(f64::NAN).as_number().unwrap()), "0.000000");
        assert_eq!(number(float(100.0).as_number().unwrap()), "100.000000");
    }
}
