//! Escaping for everything that goes into the page: text and attribute values (file names,
//! SQL, server variables can hold `<`, `&`, `"`), and JSON inside `<script>` elements.

/// Text or an attribute value (double-quoted) as HTML.
pub fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A JSON value as the content of `<script type="application/json">`: no `<` (so neither
/// `</script>` nor `<!--` can end or confuse the element), no `>` or `&`, and no U+2028/2029.
/// `JSON.parse` reads the `\uXXXX` escapes back as the original characters.
pub fn script_json<T: serde::Serialize>(value: &T) -> String {
    let text = serde_json::to_string(value).expect("chart data serializes");
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// A script or style asset as an inline element's content: `</` cannot end it early.
pub fn inline_asset(text: &str) -> String {
    text.replace("</", "<\\/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_escapes_markup() {
        assert_eq!(html("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
        assert_eq!(html("</script><img src=x onerror=alert(1)>"), "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;");
    }

    #[test]
    fn script_json_has_no_angle_brackets() {
        let v = serde_json::json!({ "v": "</script><img src=x onerror=alert(1)> & <!--" });
        let s = script_json(&v);
        assert!(!s.contains('<') && !s.contains('>') && !s.contains('&'), "{s}");
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
    }
}
