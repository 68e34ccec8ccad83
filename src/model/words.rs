//! Counted nouns in printed text: "1 client", "2 clients".

/// `n` and the word, plural unless `n` is 1 (the words fairbench counts add an `s`).
pub fn plural(n: u64, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(plural(1, "client"), "1 client");
        assert_eq!(plural(0, "table"), "0 tables");
        assert_eq!(plural(16, "finding"), "16 findings");
    }
}
