//! "Did you mean ...?": the known name closest to a mistyped one.

/// Levenshtein distance: insertions, deletions and substitutions of one character.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

/// The name in `known` nearest to `word`, if one is near enough to be what was meant: at most
/// two edits away, and fewer edits than the word is long.
pub fn closest<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let (distance, name) = known.into_iter().map(|name| (edit_distance(word, name), name)).min()?;
    (distance <= 2 && distance < word.chars().count()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub fn edit_distances() {
        assert_eq!(edit_distance("toools", "tools"), 1);
        assert_eq!(edit_distance("lsten", "listen"), 1);
        assert_eq!(edit_distance("", "ping"), 4);
        assert_eq!(edit_distance("prompts", "prompts"), 0);
    }

    #[test]
    fn the_closest_name_within_two_edits() {
        assert_eq!(closest("tittle", ["title", "edition"]), Some("title"));
        assert_eq!(closest("limt", ["query", "limit"]), Some("limit"));
        assert_eq!(closest("colour", ["title", "edition"]), None);
        assert_eq!(closest("x", ["y"]), None);
    }
}
