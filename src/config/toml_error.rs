//! The one rule for a config that TOML or the schema refuses: the message
//! names the key path (`particles[0].count`, arrays of tables numbered from
//! 0) and the line of the fault, says what is wrong in the config's words,
//! and what is allowed.
//!
//! The toml crate reports syntax errors in its parser's terms ("string
//! values must be quoted" for `dt =` and for a missing comma in
//! `[0.0, 0.0 -9.81]`), blames an unclosed `{` or `[` on the line after it,
//! and reports any error inside a `[[particles]]` or `[[wall]]` table (which
//! serde reads through a buffer, the `kind` tag deciding the variant) at the
//! table's header. [`explain`] rewrites those from the error's span and the
//! text around it; what it does not recognise keeps the toml crate's own
//! message, with its line and column.

use super::fixed::{wrong_length_at, WRONG_LENGTH};
use std::ops::Range;
use toml::de::{DeTable, DeValue};

/// The keys that are arrays of tables: a single `[name]` table is refused
/// naming `[[name]]`.
pub(super) const TABLE_ARRAYS: [&str; 4] = ["material", "wall", "particles", "contact.pair"];

/// The message for a TOML or schema error `e` in `text` (without the file,
/// which the caller adds).
pub(super) fn explain(text: &str, e: &toml::de::Error) -> String {
    let fallback = || format!("{e}").trim_end().to_string();
    let msg = e.message().trim_end();
    let Some(span) = e.span() else {
        return fallback();
    };
    // A wrong length ([`super::fixed`]) names its key path and line.
    let got = msg
        .strip_prefix(WRONG_LENGTH)
        .and_then(|m| m.rsplit(' ').next()?.parse().ok());
    if let Some((key, start)) = got.and_then(|n| wrong_length_at(text, span.clone(), n)) {
        return format!("{key} (line {}): {msg}", line_of(text, start));
    }
    syntax(text, span.clone(), msg)
        .or_else(|| schema(text, span, msg))
        .unwrap_or_else(fallback)
}

/// The 1-based line of byte `offset`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The text of the line holding byte `offset`, without its newline.
fn line_at(text: &str, offset: usize) -> &str {
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |k| k + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |k| offset + k);
    &text[start..end]
}

/// A `[name]` or `[[name]]` header line: its name and whether it is `[[...]]`.
fn header(line: &str) -> Option<(&str, bool)> {
    let l = line.split('#').next()?.trim();
    let (inner, double) = match l.strip_prefix("[[").and_then(|s| s.strip_suffix("]]")) {
        Some(s) => (s, true),
        None => (l.strip_prefix('[')?.strip_suffix(']')?, false),
    };
    let inner = inner.trim();
    let ok = inner.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && inner
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-. ".contains(c));
    ok.then_some((inner, double))
}

/// The dotted key path of the `key = value` line holding byte `offset` (or
/// the nearest such line above it, for a value spread over several lines),
/// under its table header; `[[name]]` tables are numbered from 0.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let end = text[offset..].find('\n').map_or(text.len(), |k| offset + k);
    let upto = &text[..end];
    let lines: Vec<&str> = upto.split('\n').collect();
    let mut key = None;
    let mut table = String::new();
    for (k, line) in lines.iter().enumerate().rev() {
        if let Some((name, double)) = header(line) {
            table = if double {
                let n = lines[..k]
                    .iter()
                    .filter(|l| header(l) == Some((name, true)))
                    .count();
                format!("{name}[{n}]")
            } else {
                name.to_string()
            };
            break;
        }
        if key.is_none() {
            if let Some((k, _)) = line.split_once('=') {
                let k = k.trim();
                if !k.is_empty()
                    && k.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
                {
                    key = Some(k.to_string());
                }
            }
        }
    }
    let key = key?;
    Some(if table.is_empty() {
        key
    } else {
        format!("{table}.{key}")
    })
}

/// The innermost `{` or `[` (`want`) still open at byte `offset`, skipping
/// strings and comments.
fn open_bracket(text: &str, offset: usize, want: char) -> Option<usize> {
    let mut stack: Vec<(char, usize)> = Vec::new();
    let mut chars = text[..offset.min(text.len())].char_indices().peekable();
    while let Some((k, c)) = chars.next() {
        match c {
            '#' => {
                for (_, c) in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '"' | '\'' => {
                while let Some((_, d)) = chars.next() {
                    if d == '\\' && c == '"' {
                        chars.next();
                    } else if d == c || d == '\n' {
                        break;
                    }
                }
            }
            '{' | '[' => stack.push((c, k)),
            '}' | ']' => {
                stack.pop();
            }
            _ => {}
        }
    }
    stack
        .iter()
        .rev()
        .find(|(c, _)| *c == want)
        .map(|&(_, k)| k)
}

/// `KEY (line N)`, or `line N` where no key is found.
fn at(text: &str, offset: usize) -> String {
    let line = line_of(text, offset);
    match key_at(text, offset) {
        Some(k) => format!("{k} (line {line})"),
        None => format!("line {line}"),
    }
}

/// Syntax errors, in what the user wrote.
fn syntax(text: &str, span: Range<usize>, msg: &str) -> Option<String> {
    let here = span.start.min(text.len());
    let spanned = text.get(span.clone()).unwrap_or("").trim();
    if msg.starts_with("missing key for inline table element")
        || msg.starts_with("unclosed inline table")
    {
        let open = open_bracket(text, here, '{')?;
        return Some(format!(
            "{}: the inline table `{{` opened on line {} is not closed; end it with `}}`",
            at(text, open),
            line_of(text, open)
        ));
    }
    if msg.starts_with("missing comma between array elements") || msg.starts_with("unclosed array")
    {
        let open = open_bracket(text, here, '[')?;
        // A table header missing its closing bracket.
        let line = line_at(text, open);
        if line.trim_start().starts_with('[')
            && line
                .trim_start()
                .trim_start_matches('[')
                .starts_with(|c: char| c.is_ascii_alphabetic())
        {
            return Some(format!(
                "line {}: the table header `{}` is not closed; write `[name]` or `[[name]]`",
                line_of(text, open),
                line.trim()
            ));
        }
        // The parser stops where the next line starts: the array was never closed.
        let next_line = line_of(text, open) < line_of(text, here)
            && text[..here].trim_end_matches([' ', '\t']).ends_with('\n');
        return Some(if next_line || msg.starts_with("unclosed") {
            format!(
                "{}: the array `[` opened on line {} is not closed; end it with `]`",
                at(text, open),
                line_of(text, open)
            )
        } else {
            format!(
                "{}: a comma is missing between two items of the array; separate them with `,`",
                at(text, here)
            )
        });
    }
    if msg.starts_with("string values must be quoted") {
        let line = line_at(text, here);
        let after_eq = line.split_once('=').map(|(_, v)| v.trim());
        if spanned.is_empty() || after_eq.is_some_and(|v| v.is_empty() || v.starts_with('#')) {
            return Some(format!(
                "{}: no value after `=`; give one (a number, a quoted string, true or false, an array [...] or an inline table {{...}})",
                at(text, here)
            ));
        }
        let words: Vec<&str> = spanned.split_whitespace().collect();
        let is_value = |w: &str| {
            w.parse::<f64>().is_ok() || ["true", "false", "inf", "+inf", "-inf", "nan"].contains(&w)
        };
        if words.len() >= 2 && is_value(words[0]) {
            let inside = match (open_bracket(text, here, '['), open_bracket(text, here, '{')) {
                (Some(a), Some(t)) if t > a => "inline table entries",
                (Some(_), _) => "array items",
                _ => "values",
            };
            return Some(format!(
                "{}: a comma is missing between the {inside} `{}` and `{}`; separate them with `,`",
                at(text, here),
                words[0],
                words[1].trim_end_matches([',', ']', '}'])
            ));
        }
        let word = words.first()?.trim_end_matches([',', ']', '}']);
        return Some(format!(
            "{}: `{word}` is not a TOML value; a string must be quoted (\"{word}\"), a number written as one (1e-5, 10)",
            at(text, here)
        ));
    }
    if msg.starts_with("missing comma between key-value pairs") {
        return Some(format!(
            "{}: a comma is missing between two entries of the inline table; separate them with `,`",
            at(text, here)
        ));
    }
    if msg.starts_with("key with no value") {
        return Some(format!(
            "line {}: `{}` has no `=`; write `key = value`",
            line_of(text, here),
            line_at(text, here).trim()
        ));
    }
    if msg.starts_with("duplicate key") {
        let name = if spanned.is_empty() { "a key" } else { spanned };
        return Some(format!(
            "line {}: `{name}` is given twice in the same table; give each key once",
            line_of(text, here)
        ));
    }
    None
}

/// One node of the parsed document: its key path, span and value.
pub(super) type Node<'a, 'i> = (String, Range<usize>, &'a DeValue<'i>);

fn children<'a, 'i>(path: &str, v: &'a DeValue<'i>) -> Vec<Node<'a, 'i>> {
    match v {
        DeValue::Table(t) => t
            .iter()
            .map(|(k, v)| {
                let path = if path.is_empty() {
                    k.get_ref().to_string()
                } else {
                    format!("{path}.{}", k.get_ref())
                };
                (path, v.span(), v.get_ref())
            })
            .collect(),
        DeValue::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("{path}[{i}]"), v.span(), v.get_ref()))
            .collect(),
        _ => Vec::new(),
    }
}

/// Every node under `v`, depth first.
pub(super) fn all<'a, 'i>(path: &str, v: &'a DeValue<'i>, out: &mut Vec<Node<'a, 'i>>) {
    for (p, s, c) in children(path, v) {
        out.push((p.clone(), s, c));
        all(&p, c, out);
    }
}

/// What serde's `expected` words mean in the config's terms.
fn allowed(expected: &str) -> String {
    match expected {
        "u64" | "u32" | "usize" | "u16" | "u8" => {
            format!("a whole number ≥ 0 (expected {expected})")
        }
        "i64" | "i32" => format!("a whole number (expected {expected})"),
        "f64" | "f32" => format!("a number (expected {expected})"),
        "a boolean" => "true or false (expected a boolean)".into(),
        "a string" | "a borrowed string" => "a quoted string (expected a string)".into(),
        "a sequence" => "an array [...] (expected a sequence)".into(),
        e => e.to_string(),
    }
}

/// The accepted forms of an untagged enum of the schema, by the key it is
/// read for, in the words of docs/config.md.
fn untagged(name: &str) -> Option<(&'static str, &'static str)> {
    Some(match name {
        "RadiusSpec" => (
            "radius",
            "a number > 0, or a distribution: { min, max }, { distribution = \"normal\" or \"lognormal\", mean, sd, min, max } or { values, fractions, basis } (a radius spec; no other keys)",
        ),
        "ListRadius" => (
            "radius",
            "a number > 0, or an array of numbers, one per position",
        ),
        "DtSpec" => ("dt", "a number > 0 (the time step), or \"auto\""),
        "BalanceSpec" => (
            "balance",
            "true, false, or { every = steps ≥ 1, tolerance = a number ≥ 1 } (no other keys)",
        ),
        "CellsSpec" => (
            "bins",
            "a whole number ≥ 1, or an array of them, one per gridded axis",
        ),
        _ => return None,
    })
}

/// Does `v` print as serde's `unexpected` text (`integer `-5``,
/// `string "1mm"`, `floating point `1.5``, `boolean `true``)?
fn is_unexpected(v: &DeValue, unexp: &str) -> bool {
    match v {
        DeValue::Integer(i) => unexp == format!("integer `{}`", i.as_str()),
        DeValue::Float(f) => {
            unexp.starts_with("floating point `")
                && f.as_str()
                    .parse::<f64>()
                    .ok()
                    .map(|x| format!("floating point `{x}`"))
                    == Some(unexp.to_string())
        }
        DeValue::Boolean(b) => unexp == format!("boolean `{b}`"),
        DeValue::String(s) => unexp == format!("string {:?}", &**s),
        DeValue::Array(_) => unexp == "sequence",
        DeValue::Table(_) => unexp == "map",
        DeValue::Datetime(_) => false,
    }
}

/// Errors of the schema (types, values, unknown or missing keys, untagged
/// enums), at the key they are about.
fn schema(text: &str, span: Range<usize>, msg: &str) -> Option<String> {
    let root = DeValue::Table(DeTable::parse(text).ok()?.into_inner());
    let mut nodes = Vec::new();
    all("", &root, &mut nodes);
    // The innermost node with that span: an array of tables and its single
    // table can share one.
    let Some((path, _, node)) = nodes.iter().rev().find(|(_, s, _)| *s == span) else {
        // An unknown key is reported at the key: name its table and line.
        if msg.starts_with("unknown field `") {
            let line = line_at(text, span.start);
            return Some(match header(line) {
                Some(_) => format!(
                    "line {}: unknown table `{}`; {msg}",
                    line_of(text, span.start),
                    line.trim()
                ),
                None => format!("{}: {msg}", at(text, span.start)),
            });
        }
        // A table missing from the whole file is reported at its start.
        let rest = msg.strip_prefix("missing field `")?;
        let field = &rest[..rest.find('`')?];
        return Some(format!(
            "[{field}] is required, but the config has none (missing field `{field}`)"
        ));
    };
    let line = |s: &Range<usize>| line_of(text, s.start);
    let source = |s: &Range<usize>| text.get(s.clone()).unwrap_or("").trim().to_string();
    // A single `[name]` where `[[name]]` is meant.
    if msg.starts_with("invalid type: map, expected a sequence")
        && (TABLE_ARRAYS.contains(&path.as_str())
            || matches!(node, DeValue::Table(_)) && !path.ends_with(']'))
    {
        return Some(format!(
            "{path} (line {}): write `[[{path}]]` (an array of tables), not `[{path}]`",
            line(&span)
        ));
    }
    // A table read through a buffer reports itself: find the key at fault.
    let mut inside = Vec::new();
    if matches!(node, DeValue::Table(_)) {
        all(path, node, &mut inside);
    }
    let own = |name: &str| {
        children(path, node)
            .into_iter()
            .find(|(p, _, _)| p.rsplit('.').next() == Some(name))
    };
    let quoted = |m: &str, prefix: &str| -> Option<String> {
        let rest = m.strip_prefix(prefix)?.strip_prefix('`')?;
        Some(rest[..rest.find('`')?].to_string())
    };
    if let Some(field) = quoted(msg, "unknown field ") {
        if let Some((p, s, _)) = own(&field) {
            return Some(format!("{p} (line {}): {msg}", line(&s)));
        }
        return None;
    }
    if let Some(field) = quoted(msg, "missing field ") {
        return Some(format!(
            "{path}.{field}: required, but missing from the table on line {} ({msg})",
            line(&span)
        ));
    }
    if let Some(variant) = quoted(msg, "unknown variant ") {
        let hit = inside
            .iter()
            .find(|(_, _, v)| v.as_str() == Some(variant.as_str()));
        let (p, s) = hit.map_or((path.clone(), span.clone()), |(p, s, _)| {
            (p.clone(), s.clone())
        });
        return Some(format!("{p} (line {}): {msg}", line(&s)));
    }
    if let Some(name) = msg.strip_prefix("data did not match any variant of untagged enum ") {
        let (key, forms) = untagged(name.trim())?;
        let (p, s) = match own(key) {
            Some((p, s, _)) => (p, s),
            None => (path.clone(), span.clone()),
        };
        return Some(format!(
            "{p} (line {}): must be {forms}, got {}",
            line(&s),
            source(&s)
        ));
    }
    for kind in ["invalid type: ", "invalid value: "] {
        let Some(rest) = msg.strip_prefix(kind) else {
            continue;
        };
        let (unexp, expected) = rest.rsplit_once(", expected ")?;
        let (p, s) = if matches!(node, DeValue::Table(_)) {
            let hit = inside.iter().find(|(_, _, v)| is_unexpected(v, unexp))?;
            (hit.0.clone(), hit.1.clone())
        } else {
            (path.clone(), span.clone())
        };
        return Some(format!(
            "{p} (line {}): must be {}, got {}",
            line(&s),
            allowed(expected),
            source(&s)
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(text: &str, at: &str) -> Option<String> {
        key_at(text, text.find(at).unwrap())
    }

    #[test]
    fn the_key_of_a_line_names_its_table_and_index() {
        let text = "[run]\ndt = 1\n[[particles]]\nx = 1\n[[particles]]\ny = [\n  1,\n  2]\n";
        assert_eq!(key(text, "dt").as_deref(), Some("run.dt"));
        assert_eq!(key(text, "x =").as_deref(), Some("particles[0].x"));
        assert_eq!(key(text, "2]").as_deref(), Some("particles[1].y"));
        assert_eq!(header("[[contact.pair]] # c"), Some(("contact.pair", true)));
        assert_eq!(header("  [0.1, 0.2],"), None);
    }

    #[test]
    fn the_open_bracket_skips_strings_and_comments() {
        let text = "a = { b = \"{\", c = [1, 2] # }\nd = 1";
        assert_eq!(open_bracket(text, text.len(), '{'), Some(4));
        assert_eq!(open_bracket(text, text.len(), '['), None);
    }
}
