//! Words in printed text: counted nouns ("1 client", "2 clients"), and the known name a
//! mistyped one was meant to be.

/// `n` and the word, plural unless `n` is 1 (the words fairbench counts add an `s`).
pub fn plural(n: u64, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// The name among `names` nearest to a mistyped `typed` (case, `-` and `_` alike), when
/// close enough to be a typo of it: at most a quarter of its letters off, 2 for short names.
pub fn nearest<'a>(typed: &str, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let norm = |s: &str| s.to_ascii_lowercase().replace('-', "_");
    let typed = norm(typed);
    names
        .into_iter()
        .map(|n| (strsim::damerau_levenshtein(&typed, &norm(n)), n))
        .filter(|(d, n)| *d <= (n.len() / 4).max(2))
        .min()
        .map(|(_, n)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_finds_its_name_and_an_unrelated_word_none() {
        let names = ["oltp_write_only", "oltp_read_write", "commit", "sync_binlog"];
        assert_eq!(nearest("oltp_write_onyl", names), Some("oltp_write_only"));
        assert_eq!(nearest("comit", names), Some("commit"));
        assert_eq!(nearest("SYNC-BINLG", names), Some("sync_binlog"));
        assert_eq!(nearest("max_connections", names), None);
    }

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(plural(1, "client"), "1 client");
        assert_eq!(plural(0, "table"), "0 tables");
        assert_eq!(plural(16, "finding"), "16 findings");
    }
}
