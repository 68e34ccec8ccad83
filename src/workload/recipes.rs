//! The recipes of `recipes/`, built into the binary: `fairbench bench ycsb-a` runs one
//! without its file at hand (the file's text is recorded in the result either way).

/// Name and text of each recipe.
pub const RECIPES: [(&str, &str); 12] = [
    ("xfer", include_str!("../../recipes/xfer.toml")),
    ("iibench", include_str!("../../recipes/iibench.toml")),
    ("aurora-2015-write", include_str!("../../recipes/aurora-2015-write.toml")),
    ("aurora-2015-write-fixed", include_str!("../../recipes/aurora-2015-write-fixed.toml")),
    ("tpcb-like", include_str!("../../recipes/tpcb-like.toml")),
    ("tpcc", include_str!("../../recipes/tpcc.toml")),
    ("ycsb-a", include_str!("../../recipes/ycsb-a.toml")),
    ("ycsb-b", include_str!("../../recipes/ycsb-b.toml")),
    ("ycsb-c", include_str!("../../recipes/ycsb-c.toml")),
    ("ycsb-d", include_str!("../../recipes/ycsb-d.toml")),
    ("ycsb-e", include_str!("../../recipes/ycsb-e.toml")),
    ("ycsb-f", include_str!("../../recipes/ycsb-f.toml")),
];

/// The text of recipe `name` (`ycsb-a`, `ycsb_a` or `ycsb-a.toml`).
pub fn find(name: &str) -> Option<&'static str> {
    let name = name.trim_end_matches(".toml").replace('_', "-");
    RECIPES.iter().find(|(n, _)| *n == name).map(|(_, text)| *text)
}

/// A recipe's one-line description (its `[workload] description`).
pub fn description(text: &str) -> String {
    super::spec::parse("recipe", text).map(|s| s.workload.description).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_recipe_file_is_built_in() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/recipes");
        let files = std::fs::read_dir(dir)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "toml"))
            .count();
        assert_eq!(files, super::RECIPES.len(), "add the new recipe to RECIPES");
        for (name, text) in super::RECIPES {
            assert!(!super::description(text).is_empty(), "{name} has a description");
            assert_eq!(super::find(name), Some(text));
        }
    }
}
